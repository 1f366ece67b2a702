"""Converters for ONNX's recurrent layers (RNN, GRU, LSTM), unrolled over their static sequence length
with the semantics of the ONNX definition as onnxruntime implements it.

Each direction projects the whole input sequence through W in one matmul, then unrolls the steps into
matmuls of the hidden state with R, gate slices, activations and elementwise updates. `sequence_lens`
masks the steps past each sequence's length: the state stops changing there and Y is zero.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.ir import SSAValue

from ziggurat.dialects import graph
from ziggurat.dialects.graph import f32_attr, i64_attr, int_array
from ziggurat.frontends.onnx.node import NodeContext
from ziggurat.frontends.onnx.ops import converts, reshape, tensor_type

Activation = Callable[[SSAValue], SSAValue]

ACTIVATION_PARAMETERS: dict[str, tuple[bool, bool, float | None, float | None]] = {
    # lower-case name -> (takes alpha, takes beta, default alpha, default beta)
    "relu": (False, False, None, None),
    "tanh": (False, False, None, None),
    "sigmoid": (False, False, None, None),
    "softsign": (False, False, None, None),
    "softplus": (False, False, None, None),
    "leakyrelu": (True, False, 0.01, None),
    "elu": (True, False, 1.0, None),
    "hardsigmoid": (True, True, 0.2, 0.5),
    # No default: ONNX's operators and onnxruntime's RNN kernels disagree on these.
    "affine": (True, True, None, None),
    "scaledtanh": (True, True, None, None),
    "thresholdedrelu": (True, False, None, None),
}


def activation(ctx: NodeContext, name: str, alpha: float | None, beta: float | None) -> Activation:
    """The activation function `name` of a recurrent node as graph ops."""

    def scalar(value: float, like: SSAValue) -> SSAValue:
        return ctx.scalar_like(value, like)

    functions: dict[str, Activation] = {
        "relu": lambda x: ctx.emit(graph.ReluOp, [x]),
        "tanh": lambda x: ctx.emit(graph.TanhOp, [x]),
        "sigmoid": lambda x: ctx.emit(graph.SigmoidOp, [x]),
        "softplus": lambda x: ctx.emit(graph.SoftplusOp, [x]),
        "softsign": lambda x: ctx.emit(
            graph.DivOp, [x, ctx.emit(graph.AddOp, [ctx.emit(graph.AbsOp, [x]), scalar(1, x)])]
        ),
        "leakyrelu": lambda x: ctx.emit(graph.LeakyReluOp, [x], {"alpha": f32_attr(alpha)}),
        "elu": lambda x: ctx.emit(graph.EluOp, [x], {"alpha": f32_attr(alpha)}),
        "hardsigmoid": lambda x: ctx.emit(
            graph.HardSigmoidOp, [x], {"alpha": f32_attr(alpha), "beta": f32_attr(beta)}
        ),
        "affine": lambda x: ctx.emit(
            graph.AddOp, [ctx.emit(graph.MulOp, [x, scalar(alpha, x)]), scalar(beta, x)]
        ),
        "scaledtanh": lambda x: ctx.emit(
            graph.MulOp,
            [
                ctx.emit(graph.TanhOp, [ctx.emit(graph.MulOp, [x, scalar(beta, x)])]),
                scalar(alpha, x),
            ],
        ),
        # x where x > alpha, else 0 (as onnxruntime's kernels compare).
        "thresholdedrelu": lambda x: ctx.emit(
            graph.WhereOp, [ctx.emit(graph.GreaterOp, [x, scalar(alpha, x)]), x, scalar(0, x)]
        ),
    }
    return functions[name]


def activations(
    ctx: NodeContext, defaults: Sequence[str], directions: int
) -> list[list[Activation]]:
    """The activation functions of each direction (f, g, h as the operator names them)."""
    names = ctx.attribute("activations") or list(defaults) * directions
    if len(names) != len(defaults) * directions:
        raise ctx.error(
            f"activations {names} must name {len(defaults)} function(s) per direction ({directions} direction(s))"
        )
    alphas = list(ctx.attribute("activation_alpha", []))
    betas = list(ctx.attribute("activation_beta", []))
    functions = []
    for name in names:
        key = name.lower()
        if key not in ACTIVATION_PARAMETERS:
            raise ctx.error(
                f"activation '{name}' is not one of {', '.join(ACTIVATION_PARAMETERS)} (case-insensitive)"
            )
        takes_alpha, takes_beta, default_alpha, default_beta = ACTIVATION_PARAMETERS[key]
        alpha = alphas.pop(0) if takes_alpha and alphas else default_alpha
        beta = betas.pop(0) if takes_beta and betas else default_beta
        if (takes_alpha and alpha is None) or (takes_beta and beta is None):
            raise ctx.error(
                f"activation '{name}' needs its values in activation_alpha / activation_beta"
            )
        functions.append(activation(ctx, key, alpha, beta))
    return [functions[d * len(defaults) : (d + 1) * len(defaults)] for d in range(directions)]


class Recurrence:
    """What RNN, GRU and LSTM share: operands per direction, the step masks and the output assembly."""

    def __init__(self, ctx: NodeContext, gates: int, states: int):
        self.ctx = ctx
        direction = ctx.attribute("direction", "forward")
        if direction not in ("forward", "reverse", "bidirectional"):
            raise ctx.error(
                f"direction '{direction}' is not one of forward, reverse, bidirectional"
            )
        self.directions = 2 if direction == "bidirectional" else 1
        self.reverse = [direction == "reverse", True][: self.directions]
        self.layout = ctx.attribute("layout", 0)
        x = ctx.input(0)
        if len(ctx.shape(0)) != 3:
            raise ctx.error(f"X must be 3-D, got shape {list(ctx.shape(0))}")
        if self.layout:
            x = ctx.emit(graph.TransposeOp, [x], {"perm": int_array([1, 0, 2])})
        self.x = x
        self.steps, self.batch, _ = tensor_type(x).get_shape()
        w_shape, r_shape = ctx.shape(1), ctx.shape(2)
        self.hidden = r_shape[-1]
        if ctx.attribute("hidden_size", self.hidden) != self.hidden:
            raise ctx.error(
                f"hidden_size {ctx.attribute('hidden_size')} differs from R's {list(r_shape)}"
            )
        if w_shape[0] != self.directions or w_shape[1] != gates * self.hidden:
            raise ctx.error(
                f"W has shape {list(w_shape)}, expected [{self.directions}, {gates * self.hidden}, input_size]"
            )
        self.gates = gates
        clip = ctx.attribute("clip")
        self.clip = None if clip is None else float(clip)
        self.nonempty: SSAValue | None = None
        """[batch, 1] true where the sequence is not empty, when one may be: an empty one's final
        states are zero (as onnxruntime gives them), not the initial ones."""
        self.masks = self.step_masks()
        # Initial states: [directions, batch, hidden] (batch first with layout 1).
        self.initial = []
        for index in range(5, 5 + states):
            state = ctx.optional_input(index)
            if state is not None and self.layout:
                state = ctx.emit(graph.TransposeOp, [state], {"perm": int_array([1, 0, 2])})
            self.initial.append(state)

    # ---- operands ----

    def take(self, value: SSAValue, index: int, axis: int = 0) -> SSAValue:
        """`value[index]` along `axis`, that axis dropped."""
        indices = self.ctx.constant_value(np.asarray(index, dtype=np.int64))
        return self.ctx.emit(graph.GatherOp, [value, indices], {"axis": i64_attr(axis)})

    def columns(self, value: SSAValue, gate: int, count: int = 1) -> SSAValue:
        """Gates `gate` .. `gate + count - 1` of a [..., gates * hidden] value (the last axis)."""
        begin = gate * self.hidden
        end = begin + count * self.hidden
        properties = {
            "starts": int_array([begin]),
            "ends": int_array([end]),
            "axes": int_array([-1]),
        }
        return self.ctx.emit(graph.SliceOp, [value], properties)

    def weights(self, direction: int) -> tuple[SSAValue, SSAValue]:
        """W and R of `direction` transposed, [input, gates * hidden] and [hidden, gates * hidden]."""
        transpose = {"perm": int_array([1, 0])}
        w = self.ctx.emit(graph.TransposeOp, [self.take(self.ctx.input(1), direction)], transpose)
        r = self.ctx.emit(graph.TransposeOp, [self.take(self.ctx.input(2), direction)], transpose)
        return w, r

    def biases(self, direction: int) -> tuple[SSAValue, SSAValue] | None:
        """Wb and Rb of `direction`, [gates * hidden] each; None without B."""
        if not self.ctx.has_input(3):
            return None
        b = self.take(self.ctx.input(3), direction)
        size = self.gates * self.hidden
        halves = [
            {"starts": int_array([s]), "ends": int_array([s + size]), "axes": int_array([0])}
            for s in (0, size)
        ]
        return self.ctx.emit(graph.SliceOp, [b], halves[0]), self.ctx.emit(
            graph.SliceOp, [b], halves[1]
        )

    def initial_state(self, index: int, direction: int) -> SSAValue | None:
        """Initial state `index` (h, then c) of `direction` as [batch, hidden]; None for zeros."""
        state = self.initial[index]
        return None if state is None else self.take(state, direction)

    def zeros(self) -> SSAValue:
        return self.ctx.constant_value(np.zeros((self.batch, self.hidden), dtype=self.ctx.dtype(0)))

    def projected(self, w: SSAValue, bias: SSAValue | None) -> list[SSAValue]:
        """X_t * W^T (+ bias) of every step t, [batch, gates * hidden] each."""
        projection = self.ctx.emit(graph.MatMulOp, [self.x, w])
        if bias is not None:
            projection = self.ctx.emit(graph.AddOp, [projection, bias])
        return [self.take(projection, t) for t in range(self.steps)]

    def recurrent(self, h: SSAValue | None, r: SSAValue) -> SSAValue | None:
        """H_{t-1} * R^T; None while the state is still the zero initial state."""
        return None if h is None else self.ctx.emit(graph.MatMulOp, [h, r])

    # ---- elementwise helpers (None stands for a zero term) ----

    def add(self, *terms: SSAValue | None) -> SSAValue | None:
        present = [term for term in terms if term is not None]
        if not present:
            return None
        result = present[0]
        for term in present[1:]:
            result = self.ctx.emit(graph.AddOp, [result, term])
        return result

    def mul(self, a: SSAValue | None, b: SSAValue | None) -> SSAValue | None:
        return None if a is None or b is None else self.ctx.emit(graph.MulOp, [a, b])

    def activate(self, function: Activation, x: SSAValue) -> SSAValue:
        if self.clip is not None:
            x = self.ctx.emit(
                graph.ClipOp, [x], {"min": f32_attr(-self.clip), "max": f32_attr(self.clip)}
            )
        return function(x)

    # ---- sequence lengths ----

    def step_masks(self) -> list[SSAValue] | None:
        """Per step, [batch, 1] true where the step is inside the sequence; None when all are (sets `nonempty`)."""
        if not self.ctx.has_input(4):
            return None
        lengths = self.ctx.importer.constant_array(self.ctx.input(4))
        if lengths is not None:
            lengths = lengths.reshape(-1)
            if lengths.shape != (self.batch,):
                raise self.ctx.error(
                    f"sequence_lens has {lengths.size} entries for a batch of {self.batch}"
                )
            if np.all(lengths == self.steps):
                return None
            if not np.all(lengths > 0):
                self.nonempty = self.ctx.constant_value((lengths > 0).reshape(self.batch, 1))
            return [
                self.ctx.constant_value((t < lengths).reshape(self.batch, 1))
                for t in range(self.steps)
            ]
        lengths = reshape(self.ctx, self.ctx.input(4), [self.batch, 1])
        masks = [
            self.ctx.emit(
                graph.LessOp,
                [self.ctx.constant_value(np.asarray(t, dtype=self.ctx.dtype(4))), lengths],
            )
            for t in range(self.steps)
        ]
        self.nonempty = masks[0] if masks else None
        return masks

    def masked(self, t: int, new: SSAValue, old: SSAValue | None) -> SSAValue:
        """The state after step t: `new` inside the sequence, `old` (None: zeros) past its end."""
        if self.masks is None:
            return new
        return self.ctx.emit(
            graph.WhereOp, [self.masks[t], new, self.zeros() if old is None else old]
        )

    def output(self, t: int, h: SSAValue) -> SSAValue:
        """Y at step t: the new hidden state, zero past the sequence's end."""
        if self.masks is None:
            return h
        return self.ctx.emit(graph.WhereOp, [self.masks[t], h, self.ctx.scalar_like(0, h)])

    def order(self, direction: int) -> range:
        return range(self.steps - 1, -1, -1) if self.reverse[direction] else range(self.steps)

    # ---- outputs ----

    def results(
        self, sequences: list[list[SSAValue]], finals: list[list[SSAValue | None]]
    ) -> list[SSAValue]:
        """Y [steps, directions, batch, hidden] and the final states [directions, batch, hidden] (batch
        first with layout 1) from each direction's per-step outputs and final states."""
        ctx = self.ctx
        per_direction = []
        for outputs in sequences:
            stacked = [
                ctx.emit(graph.UnsqueezeOp, [h], {"axes": int_array([0, 1])}) for h in outputs
            ]
            per_direction.append(self.concat(stacked, 0))
        y = self.concat(per_direction, 1)
        states = []
        for index in range(len(finals[0])):
            values = [self.zeros() if f[index] is None else f[index] for f in finals]
            if self.nonempty is not None:
                values = [
                    ctx.emit(graph.WhereOp, [self.nonempty, v, ctx.scalar_like(0, v)])
                    for v in values
                ]
            state = self.concat(
                [ctx.emit(graph.UnsqueezeOp, [v], {"axes": int_array([0])}) for v in values], 0
            )
            if self.layout:
                state = ctx.emit(graph.TransposeOp, [state], {"perm": int_array([1, 0, 2])})
            states.append(state)
        if self.layout:
            y = ctx.emit(graph.TransposeOp, [y], {"perm": int_array([2, 0, 1, 3])})
        return [y, *states]

    def concat(self, values: list[SSAValue], axis: int) -> SSAValue:
        return (
            values[0]
            if len(values) == 1
            else self.ctx.emit(graph.ConcatOp, values, {"axis": i64_attr(axis)})
        )


@converts("RNN", newest=22)
def convert_rnn(ctx: NodeContext):
    recurrence = Recurrence(ctx, gates=1, states=1)
    functions = activations(ctx, ["Tanh"], recurrence.directions)
    sequences, finals = [], []
    for direction in range(recurrence.directions):
        (f,) = functions[direction]
        w, r = recurrence.weights(direction)
        biases = recurrence.biases(direction)
        bias = None if biases is None else recurrence.add(*biases)
        projected = recurrence.projected(w, bias)
        h = recurrence.initial_state(0, direction)
        outputs: list[SSAValue | None] = [None] * recurrence.steps
        for t in recurrence.order(direction):
            new = recurrence.activate(f, recurrence.add(projected[t], recurrence.recurrent(h, r)))
            outputs[t] = recurrence.output(t, new)
            h = recurrence.masked(t, new, h)
        sequences.append(outputs)
        finals.append([h])
    return recurrence.results(sequences, finals)


@converts("GRU", newest=22)
def convert_gru(ctx: NodeContext):
    # Gates z, r, h. linear_before_reset applies r after the recurrent matmul (and its bias).
    recurrence = Recurrence(ctx, gates=3, states=1)
    functions = activations(ctx, ["Sigmoid", "Tanh"], recurrence.directions)
    linear_before_reset = bool(ctx.attribute("linear_before_reset", 0))
    sequences, finals = [], []
    for direction in range(recurrence.directions):
        f, g = functions[direction]
        w, r = recurrence.weights(direction)
        r_zr, r_h = recurrence.columns(r, 0, 2), recurrence.columns(r, 2)
        biases = recurrence.biases(direction)
        bias = rb_h = None
        if biases is not None:
            wb, rb = biases
            rb_h = recurrence.columns(rb, 2)
            # The biases that do not depend on the state: Wb + Rb for z and r, Wb for h (with Rb's
            # part too unless linear_before_reset puts it under r).
            if linear_before_reset:
                zr = ctx.emit(
                    graph.AddOp, [recurrence.columns(wb, 0, 2), recurrence.columns(rb, 0, 2)]
                )
                bias = ctx.emit(
                    graph.ConcatOp, [zr, recurrence.columns(wb, 2)], {"axis": i64_attr(0)}
                )
            else:
                bias = ctx.emit(graph.AddOp, [wb, rb])
        projected = recurrence.projected(w, bias)
        h = recurrence.initial_state(0, direction)
        outputs: list[SSAValue | None] = [None] * recurrence.steps
        for t in recurrence.order(direction):
            x_t = projected[t]
            zr = recurrence.activate(
                f, recurrence.add(recurrence.columns(x_t, 0, 2), recurrence.recurrent(h, r_zr))
            )
            z, reset = recurrence.columns(zr, 0), recurrence.columns(zr, 1)
            if linear_before_reset:
                state_term = recurrence.mul(
                    reset, recurrence.add(recurrence.recurrent(h, r_h), rb_h)
                )
            else:
                state_term = recurrence.recurrent(recurrence.mul(reset, h), r_h)
            candidate = recurrence.activate(
                g, recurrence.add(recurrence.columns(x_t, 2), state_term)
            )
            # H = (1 - z) * candidate + z * H_{t-1}
            one_minus_z = ctx.emit(graph.SubOp, [ctx.scalar_like(1, z), z])
            new = recurrence.add(
                ctx.emit(graph.MulOp, [one_minus_z, candidate]), recurrence.mul(z, h)
            )
            outputs[t] = recurrence.output(t, new)
            h = recurrence.masked(t, new, h)
        sequences.append(outputs)
        finals.append([h])
    return recurrence.results(sequences, finals)


@converts("LSTM", newest=22)
def convert_lstm(ctx: NodeContext):
    # Gates i, o, f, c; peepholes P are [i, o, f].
    recurrence = Recurrence(ctx, gates=4, states=2)
    functions = activations(ctx, ["Sigmoid", "Tanh", "Tanh"], recurrence.directions)
    input_forget = bool(ctx.attribute("input_forget", 0))
    peepholes = ctx.optional_input(7)
    sequences, finals = [], []
    for direction in range(recurrence.directions):
        f, g, h_activation = functions[direction]
        w, r = recurrence.weights(direction)
        biases = recurrence.biases(direction)
        bias = None if biases is None else recurrence.add(*biases)
        projected = recurrence.projected(w, bias)
        p_i = p_o = p_f = None
        if peepholes is not None:
            p = recurrence.take(peepholes, direction)
            p_i, p_o, p_f = (recurrence.columns(p, gate) for gate in range(3))
        h = recurrence.initial_state(0, direction)
        c = recurrence.initial_state(1, direction)
        outputs: list[SSAValue | None] = [None] * recurrence.steps
        for t in recurrence.order(direction):
            gates = recurrence.add(projected[t], recurrence.recurrent(h, r))
            i = recurrence.activate(
                f, recurrence.add(recurrence.columns(gates, 0), recurrence.mul(p_i, c))
            )
            if input_forget:
                forget = ctx.emit(graph.SubOp, [ctx.scalar_like(1, i), i])
            else:
                forget = recurrence.activate(
                    f, recurrence.add(recurrence.columns(gates, 2), recurrence.mul(p_f, c))
                )
            cell = recurrence.activate(g, recurrence.columns(gates, 3))
            new_c = recurrence.add(recurrence.mul(forget, c), ctx.emit(graph.MulOp, [i, cell]))
            o = recurrence.activate(
                f, recurrence.add(recurrence.columns(gates, 1), recurrence.mul(p_o, new_c))
            )
            new_h = ctx.emit(graph.MulOp, [o, h_activation(new_c)])
            outputs[t] = recurrence.output(t, new_h)
            h = recurrence.masked(t, new_h, h)
            c = recurrence.masked(t, new_c, c)
        sequences.append(outputs)
        finals.append([h, c])
    return recurrence.results(sequences, finals)
