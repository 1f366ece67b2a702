"""`tile-vectorize{machine=NAME}`: one `linalg.generic` per vector-unit instruction, in the narrow float
type where the machine's vector unit has lanes for it, so that `loop-to-npu` maps each generic to one
`npu.vec.*` instruction.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, math, tensor
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    ModuleOp,
    TensorType,
)
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from ziggurat.diagnostics import error_at
from ziggurat.dtypes import is_splat, to_numpy_dtype
from ziggurat.interpreters.tensor_interpreter import loop_ranges
from ziggurat.ir.contraction import is_contraction
from ziggurat.locations import Located
from ziggurat.machine import Machine, load_machine
from ziggurat.transforms.tile.builders import PARALLEL, REDUCTION, dims
from ziggurat.transforms.tile.decompose_conv import on_tensors

_SCALAR_DIALECTS = ("arith.", "math.")


def _is_float(value_type: Attribute) -> bool:
    return isinstance(value_type, AnyFloat)


def is_vectorized(op: linalg.GenericOp) -> bool:
    """At most one scalar op in the body, reading block arguments only."""
    ops = list(op.body.block.ops)[:-1]
    return len(ops) == 0 or (
        len(ops) == 1 and all(o.owner is op.body.block for o in ops[0].operands)
    )


def reduces(op: linalg.GenericOp) -> bool:
    """Whether `op` has a reduction iterator."""
    return any(it == REDUCTION for it in op.iterator_types.data)


def _vectorizable(op: linalg.GenericOp) -> bool:
    """A multi-op body on tensors that is no contraction over a reduction dim (the
    matrix unit's); a multiply-accumulate without one (a depthwise window step) is."""
    if len(op.outputs) != 1 or not on_tensors(op) or is_vectorized(op):
        return False
    if is_contraction(op):
        return False
    body = list(op.body.block.ops)[:-1]
    return all(o.name.startswith(_SCALAR_DIALECTS) and len(o.results) == 1 for o in body)


@dataclass
class Plan:
    """How each body value is computed: `alias` maps an elided extf/truncf to the value
    it converts; `narrowed` gives the narrow float type an op computes in."""

    narrow: set[Attribute]
    alias: dict[SSAValue, SSAValue] = field(default_factory=dict)
    narrowed: dict[SSAValue, Attribute] = field(default_factory=dict)

    def resolve(self, value: SSAValue) -> SSAValue:
        while value in self.alias:
            value = self.alias[value]
        return value

    def type_of(self, value: SSAValue) -> Attribute:
        """The element type `value` is computed in."""
        value = self.resolve(value)
        if value in self.narrowed and _is_float(value.type):
            return self.narrowed[value]
        return value.type

    def narrow_type(self, op: Operation) -> Attribute | None:
        """The narrow type `op` can compute in: its float operands (constants aside)
        all come in it, and it is a float op (float in, float or i1 out)."""
        floats = [o for o in op.operands if _is_float(o.type)]
        if not floats or not all(o.type == floats[0].type for o in floats):
            return None
        if not (_is_float(op.results[0].type) or isinstance(op, arith.CmpfOp)):
            return None
        computed = {self.type_of(o) for o in floats if not _is_constant(o)}
        if len(computed) == 1 and (narrow := computed.pop()) in self.narrow:
            return narrow if narrow != floats[0].type else None
        return None


def _is_constant(value: SSAValue) -> bool:
    return isinstance(value.owner, arith.ConstantOp)


def plan_body(op: linalg.GenericOp, machine: Machine) -> Plan:
    block = op.body.block
    narrow = {
        t
        for t in {a.type for a in block.args}
        if _is_float(t) and machine.vector.lanes(to_numpy_dtype(t).itemsize) > 0
    }
    plan = Plan(narrow)
    for body_op in list(block.ops)[:-1]:
        if isinstance(body_op, arith.ConstantOp):
            continue
        result = body_op.results[0]
        if isinstance(body_op, arith.ExtFOp) and plan.type_of(body_op.input) in narrow:
            plan.alias[result] = body_op.input
        elif isinstance(body_op, arith.TruncFOp) and plan.type_of(body_op.input) == result.type:
            plan.alias[result] = body_op.input
        elif (narrow_type := plan.narrow_type(body_op)) is not None:
            plan.narrowed[result] = narrow_type
    return plan


# --------------------------------------------------------------------------- #
# Emitting the chain
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class Instruction:
    """The one op of a generic's body: its class, properties, and for each of its
    operands the generic operand it reads (None: the output, a reduction's accumulator)."""

    op_type: type[Operation]
    properties: dict
    reads: tuple[int | None, ...]

    @staticmethod
    def like(op: Operation, accumulator: SSAValue | None = None) -> Instruction:
        """The instruction `op` is, its other operands read in order."""
        positions = iter(range(len(op.operands)))
        reads = tuple(None if o == accumulator else next(positions) for o in op.operands)
        return Instruction(type(op), dict(op.properties), reads)


@dataclass
class Chain:
    """Emits the single-op generics of one original generic, before it."""

    op: linalg.GenericOp
    plan: Plan
    rewriter: PatternRewriter
    extents: list[int]
    tensors: dict[SSAValue, tuple[SSAValue, AffineMap]] = field(default_factory=dict)
    casts: dict[tuple[SSAValue, Attribute], tuple[SSAValue, AffineMap]] = field(
        default_factory=dict
    )
    written: bool = False
    """Whether the op that yields has been emitted into the original output."""

    @property
    def rank(self) -> int:
        return len(self.extents)

    def scalar(self, constant: arith.ConstantOp, value_type: Attribute) -> SSAValue:
        value = constant.value
        if value_type != constant.result.type:
            value = FloatAttr(value.value.data, value_type)
        scalar = arith.ConstantOp(value, value_type)
        self.rewriter.insert(scalar)
        return scalar.result

    def emit(
        self,
        instruction: Instruction | None,
        operands: list[tuple[SSAValue, AffineMap]],
        result_type: Attribute,
        out: tuple[SSAValue, AffineMap] | None = None,
        iterators=None,
    ) -> tuple[SSAValue, AffineMap]:
        """A generic whose body is `instruction` (a copy if None) on `operands`, with
        result type `result_type`, into `out` or a fresh tensor over the dims it uses."""
        space = list(range(self.rank))
        if out is None:
            # Over the dims its operands use: a row statistic stays one value per row.
            used = sorted(set().union(*(m.used_dims() for _, m in operands)))
            space = used or space
            empty = tensor.EmptyOp([], TensorType(result_type, [self.extents[d] for d in space]))
            self.rewriter.insert(empty)
            out = (empty.tensor, AffineMap(self.rank, 0, tuple(dims(*space))))
        dropped = [d not in space for d in range(self.rank)]
        inputs = list(dict.fromkeys(operands))  # x * x reads x once
        block = _body(instruction, operands, inputs, result_type)
        generic = linalg.GenericOp(
            [v for v, _ in inputs],
            [out[0]],
            Region(block),
            [AffineMapAttr(m.drop_dims(dropped)) for _, m in (*inputs, out)],
            iterators or [PARALLEL] * len(space),
            [out[0].type],
        )
        generic.attributes.update(self.op.attributes)
        self.rewriter.insert(generic)
        return generic.results[0], out[1]

    def operand(self, value: SSAValue, value_type: Attribute) -> tuple[SSAValue, AffineMap]:
        """`value` as a generic operand of element type `value_type` (cast if needed)."""
        value = self.plan.resolve(value)
        if _is_constant(value):
            return self.scalar(value.owner, value_type), AffineMap(self.rank, 0, ())
        computed = self.tensors[value]
        if _element(computed[0].type) == value_type:
            return computed
        key = (value, value_type)
        if key not in self.casts:
            conversion = arith.ExtFOp if _wider(value_type, computed[0].type) else arith.TruncFOp
            cast = Instruction(conversion, {}, (0,))
            self.casts[key] = self.emit(cast, [computed], value_type)
        return self.casts[key]

    def run(self) -> SSAValue:
        block = self.op.body.block
        maps = [m.data for m in self.op.indexing_maps.data]
        # The output too: an elementwise body may read it (acc + x * w, unreduced).
        for arg, value, indexing in zip(block.args, self.op.operands, maps):
            self.tensors[arg] = (value, indexing)
        init, out_map = self.op.outputs[0], maps[-1]
        accumulator = block.args[len(self.op.inputs)]
        yielded = block.last_op.operands[0]
        combines = reduces(self.op) and accumulator in getattr(yielded.owner, "operands", ())
        reduction = yielded.owner if combines else None
        final = None if reduction else self.plan.resolve(yielded)
        for body_op in list(block.ops)[:-1]:
            result = body_op.results[0]
            if body_op is reduction or result in self.plan.alias or _is_constant(result):
                continue
            narrow = self.plan.narrowed.get(result)
            operands = [
                self.operand(o, narrow if narrow and _is_float(o.type) else o.type)
                for o in body_op.operands
            ]
            result_type = self.plan.type_of(result)
            into = (
                (init, out_map) if result is final and result_type == _element(init.type) else None
            )
            self.tensors[result] = self.emit(Instruction.like(body_op), operands, result_type, into)
            self.written |= into is not None
        if reduction is not None:
            (contribution,) = [o for o in reduction.operands if o != accumulator]
            source = self.operand(contribution, accumulator.type)
            return self.emit(
                Instruction.like(reduction, accumulator),
                [source],
                accumulator.type,
                (init, out_map),
                self.op.iterator_types,
            )[0]
        if self.written:
            return self.tensors[final][0]
        element_type = _element(init.type)
        copy = self.operand(final, element_type)
        return self.emit(None, [copy], element_type, (init, out_map))[0]


def _body(
    instruction: Instruction | None,
    operands: list[tuple[SSAValue, AffineMap]],
    inputs: list[tuple[SSAValue, AffineMap]],
    result_type: Attribute,
) -> Block:
    """The block of a single-op generic: `instruction` reading the argument of each of
    its `operands` (`inputs` holds them once each), or a copy if None."""
    block = Block(arg_types=[_element(v.type) for v, _ in inputs] + [result_type])
    if instruction is None:
        block.add_op(linalg.YieldOp(block.args[0]))
        return block
    body_op = instruction.op_type.create(
        operands=[
            block.args[-1] if read is None else block.args[inputs.index(operands[read])]
            for read in instruction.reads
        ],
        result_types=[result_type],
        properties=dict(instruction.properties),
    )
    block.add_ops([body_op, linalg.YieldOp(body_op.results[0])])
    return block


def _element(value_type: Attribute) -> Attribute:
    return value_type.get_element_type() if isinstance(value_type, TensorType) else value_type


def _shape(value: SSAValue) -> tuple[int, ...]:
    return tuple(value.type.get_shape()) if isinstance(value.type, TensorType) else ()


def _wider(target: Attribute, source_type: Attribute) -> bool:
    return to_numpy_dtype(target).itemsize > to_numpy_dtype(_element(source_type)).itemsize


def _splat_operand(value: SSAValue, generic: linalg.GenericOp) -> float | None:
    """The value of a body operand that is one constant everywhere: a body `arith.constant`,
    or a block argument read from a splat `arith.constant` tensor (widened or not)."""
    if isinstance(value.owner, arith.ExtFOp):
        value = value.owner.input
    if isinstance(value.owner, arith.ConstantOp):
        attribute = value.owner.value
    elif value.owner is generic.body.block and value.index < len(generic.inputs):
        constant = generic.inputs[value.index].owner
        if not isinstance(constant, arith.ConstantOp):
            return None
        attribute = constant.value
    else:
        return None
    if isinstance(attribute, FloatAttr):
        return attribute.value.data
    if isinstance(attribute, DenseIntOrFPElementsAttr) and is_splat(attribute):
        return float(next(iter(attribute.iter_values())))
    return None


def _constant_like(value: float, like: SSAValue, rewriter: PatternRewriter) -> SSAValue:
    return rewriter.insert(arith.ConstantOp(FloatAttr(value, like.type))).result


@dataclass
class ExpandForVectorUnit(RewritePattern):
    """Body ops the vector unit has no instruction for, in ops it has: `a / sqrt(b)` is
    `a * rsqrt(b)` (else `sqrt(b) = 1 / rsqrt(b)`), `-x` is `x * -1`,
    `tanh(x) = 2 / (1 + exp(-2x)) - 1` (exact at both infinities) and `erf` a
    rational approximation times `exp(-x^2)`."""

    machine: Machine

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        generic = op.parent_op()
        if not isinstance(generic, linalg.GenericOp) or not on_tensors(generic):
            return
        ops = self.machine.vector.ops
        if isinstance(op, math.SqrtOp) and "rsqrt" in ops:
            self.sqrt(op, rewriter)
        elif isinstance(op, arith.NegfOp) and "mul" in ops:
            minus_one = _constant_like(-1, op.operand, rewriter)
            rewriter.replace(op, arith.MulfOp(op.operand, minus_one))
        elif isinstance(op, math.ErfOp) and "exp" in ops:
            self.erf(op, rewriter)
        elif isinstance(op, math.PowFOp) and {"rsqrt", "mul", "div"} <= set(ops):
            self.pow(op, generic, rewriter)
        elif isinstance(op, math.TanhOp) and "exp" in ops:
            x = op.operand
            scaled = rewriter.insert(arith.MulfOp(x, _constant_like(-2, x, rewriter))).result
            e = rewriter.insert(math.ExpOp(scaled)).result
            denominator = rewriter.insert(arith.AddfOp(e, _constant_like(1, x, rewriter))).result
            quotient = rewriter.insert(
                arith.DivfOp(_constant_like(2, x, rewriter), denominator)
            ).result
            rewriter.replace(op, arith.SubfOp(quotient, _constant_like(1, x, rewriter)))

    @staticmethod
    def erf(op: math.ErfOp, rewriter: PatternRewriter) -> None:
        """Abramowitz and Stegun 7.1.26 (error below 1.5e-7): for t = 1 / (1 + p|x|),
        erf(x) = sign(x) (1 - t (a1 + t (a2 + ... + t a5)) exp(-x^2)). With no compare,
        sign(x) is clamp(x * 2^15, -1, 1): below 2^-15 the error stays under 1e-5, and
        2^15 is still an f16."""
        x = op.operand

        def emit(op_type, *operands: SSAValue | float) -> SSAValue:
            values = [
                _constant_like(v, x, rewriter) if isinstance(v, float) else v for v in operands
            ]
            return rewriter.insert(op_type(*values)).results[0]

        magnitude = emit(arith.MaximumfOp, x, emit(arith.MulfOp, x, -1.0))
        t = emit(
            arith.DivfOp, 1.0, emit(arith.AddfOp, emit(arith.MulfOp, magnitude, 0.3275911), 1.0)
        )
        poly = emit(arith.MulfOp, t, 1.061405429)
        for coefficient in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
            poly = emit(arith.MulfOp, emit(arith.AddfOp, poly, coefficient), t)
        gauss = emit(math.ExpOp, emit(arith.MulfOp, emit(arith.MulfOp, x, x), -1.0))
        tail = emit(arith.AddfOp, emit(arith.MulfOp, emit(arith.MulfOp, poly, gauss), -1.0), 1.0)
        sign = emit(
            arith.MinimumfOp, emit(arith.MaximumfOp, emit(arith.MulfOp, x, 32768.0), -1.0), 1.0
        )
        rewriter.replace(op, arith.MulfOp(tail, sign))

    @staticmethod
    def pow(op: math.PowFOp, generic: linalg.GenericOp, rewriter: PatternRewriter) -> None:
        """`x ** e` for a constant e in quarters up to 4 (LRN's 0.75): x ** floor(e) by
        multiplications (its reciprocal for e < 0) times x ** 0.25 = rsqrt(rsqrt(x)) and
        x ** 0.5 = 1 / rsqrt(x) (0 at 0) for the quarters left."""
        exponent = _splat_operand(op.rhs, generic)
        if exponent is None or exponent * 4 != int(exponent * 4) or abs(exponent) > 4:
            return
        x = op.lhs
        whole, quarters = divmod(int(exponent * 4), 4)
        factors = [x] * abs(whole) if whole >= 0 else []
        if quarters:
            root = rewriter.insert(math.RsqrtOp(x)).result
            if quarters != 2:
                factors.append(rewriter.insert(math.RsqrtOp(root)).result)
            if quarters >= 2:
                factors.append(
                    rewriter.insert(arith.DivfOp(_constant_like(1, x, rewriter), root)).result
                )
        result = factors[0] if factors else _constant_like(1, x, rewriter)
        for factor in factors[1:]:
            result = rewriter.insert(arith.MulfOp(result, factor)).result
        for _ in range(-whole if whole < 0 else 0):
            result = rewriter.insert(arith.DivfOp(result, x)).result
        rewriter.replace(op, [], [result])

    @staticmethod
    def sqrt(op: math.SqrtOp, rewriter: PatternRewriter) -> None:
        reciprocal = rewriter.insert(math.RsqrtOp(op.operand)).result
        divisions = [u.operation for u in op.result.uses]
        if all(
            isinstance(d, arith.DivfOp) and d.rhs == op.result and d.lhs != op.result
            for d in divisions
        ):
            for division in divisions:
                rewriter.replace(division, arith.MulfOp(division.lhs, reciprocal))
            rewriter.erase(op)
            return
        one = _constant_like(1, op.operand, rewriter)
        rewriter.replace(op, arith.DivfOp(one, reciprocal))


@dataclass
class SplitGeneric(RewritePattern):
    machine: Machine

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: linalg.GenericOp, rewriter: PatternRewriter, /):
        if not _vectorizable(op):
            return
        for value in (*op.operands, *op.results):
            if isinstance(value.type, TensorType) and not value.type.has_static_shape():
                raise error_at(op, f"tile-vectorize: dynamic shape {value.type} is not supported")
        block = op.body.block
        accumulator = block.args[len(op.inputs)]
        yielded = block.last_op.operands[0]
        readers = [o for o in block.ops if accumulator in o.operands]
        if reduces(op) and readers and readers != [yielded.owner]:
            return
        extents = loop_ranges(op, [_shape(v) for v in op.operands])
        chain = Chain(op, plan_body(op, self.machine), rewriter, extents)
        rewriter.replace(op, [], [chain.run()])


@dataclass(frozen=True)
class TileVectorizePass(ModulePass):
    """Split elementwise and reduction generics into one generic per vector-unit
    instruction, in the narrow float type where the machine's vector unit has lanes.

    A generic whose body holds several scalar ops becomes a chain of generics over
    the same iteration space, each with a body of exactly one `arith`/`math` op.
    Intermediates cover the dims their operands use (a row's mean stays one value
    per row); the op that yields writes the original output through its original
    map; a reduction's combiner is a last generic with the original iterators and
    init. Constants become scalar operands read with the empty map. Where
    graph-to-tile widened a narrow float (`extf`, compute, `truncf`) and the vector
    unit has lanes for it, the op computes in the narrow type; reductions still
    accumulate in their init's type. Ops no vector unit has are rewritten first
    (`ExpandForVectorUnit`). Contractions over a reduction dim and bodies that need
    more than a vector unit (`linalg.index`, `tensor.extract`, several results) are
    left alone.

        %y = linalg.generic ins(%x : tensor<4x16xf16>) outs(%e : tensor<4x16xf16>) {
          %a = arith.extf %x : f16 to f32
          %z = arith.constant 0.0 : f32
          %m = arith.maximumf %a, %z : f32
          %t = arith.truncf %m : f32 to f16
        }

    becomes (davinci: 128 f16 lanes)

        %z = arith.constant 0.0 : f16
        %y = linalg.generic {maps = [id, (), id]} ins(%x, %z : tensor<4x16xf16>, f16) outs(%e) {
          %m = arith.maximumf %a, %z : f16
        }
    """

    name = "tile-vectorize"

    machine: str
    """A preset name (davinci, systolic, tensorcore) or a machine TOML file."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        machine = load_machine(self.machine)
        PatternRewriteWalker(Located(ExpandForVectorUnit(machine))).rewrite_module(op)
        PatternRewriteWalker(
            Located(SplitGeneric(machine)), apply_recursively=False
        ).rewrite_module(op)
