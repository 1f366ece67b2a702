"""`--precision`: the float type a model computes in on a machine, and for `auto` why.

On a machine whose matrix unit has no instruction for the float type of the model's convolutions
and matrix products (f32 on davinci and tensorcore; a QDQ model's, once `graph-integer-qdq` has
made them integer, are none), `auto` computes in f16 when the model's values stay well inside f16's range and in
bf16 when they would not. f16 keeps 11 significant bits to bf16's 8, an 8x smaller rounding
error, but its largest value is 65504; bf16 has f32's range. How large the values get is
measured, as calibration does in TensorRT's and onnxruntime's quantizers: the graph interpreter
runs the model in its own type on the inputs it is compiled for, and the largest magnitude of
any finite value (constants included) must be at most f16's largest value over `F16_HEADROOM`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import AnyFloat, BFloat16Type, ModuleOp, TensorType
from xdsl.interpreter import Interpreter, PythonValues
from xdsl.ir import Operation

from ziggurat.context import default_context
from ziggurat.diagnostics import op_location, op_name_location
from ziggurat.dialects import graph
from ziggurat.interpreters.interpreter import find_function, run_function
from ziggurat.lowering.kernels import KernelCache, update_with_arrays
from ziggurat.machine import Machine
from ziggurat.transforms.graph.convert_float import PRECISION_ATTR
from ziggurat.transforms.graph.integer_qdq import GraphIntegerQDQPass, has_integer_matrix

PRECISIONS = ("auto", "model", "f16", "bf16")
"""What `--precision` takes: `auto`, `model` (as the model says), or a type to compute in."""

F16_HEADROOM = 16.0
"""How far below f16's largest value (65504) the calibration run's values must stay for `auto` to
choose f16: other inputs than the calibration's reach further, and the lowering may hold
intermediate values (a sum before its division) that the graph level does not show."""

F16_LARGEST = float(np.finfo(np.float16).max)


MIXED_SHARE = 0.5
"""`auto` computes in f16 with the ops that f16 cannot hold in bf16 while they are at most this
share of the model's float ops and none of them is a convolution or matrix product; else all in
bf16 (each boundary between the two types costs a cast)."""

NUMPY_TYPES = {"f16": np.dtype(np.float16), "bf16": np.dtype(ml_dtypes.bfloat16)}


@dataclass(frozen=True)
class Precision:
    """The float type to compute in (None: as the model says), why, and how many ops compute in
    bf16 instead (each marked with `graph.precision`)."""

    element_type: str | None
    reason: str
    in_bf16: int = 0

    @property
    def dtype(self) -> np.dtype | None:
        """The numpy dtype of the coarsest type computed in (the type `--check`'s tolerance is for)."""
        if self.element_type is None:
            return None
        return NUMPY_TYPES["bf16" if self.in_bf16 else self.element_type]


def _largest_finite(value) -> float:
    """The largest magnitude of a float array's finite elements (0 for anything else): an
    infinity or NaN is one in f16 as well (a causal mask's -inf), only finite values overflow."""
    if not isinstance(value, np.ndarray) or value.dtype.kind != "f" or not value.size:
        return 0.0
    largest = max(float(value.max()), -float(value.min()))  # two passes, no copies
    if np.isfinite(largest):
        return largest
    finite = np.abs(value[np.isfinite(value)])
    return float(finite.max()) if finite.size else 0.0


@dataclass
class _Magnitudes(Interpreter.Listener):
    """The largest finite magnitude of each op's results."""

    of: dict[Operation, float] = field(default_factory=dict)

    def did_interpret_op(self, op: Operation, results: PythonValues) -> None:
        self.of[op] = max((_largest_finite(r) for r in results), default=0.0)


@dataclass
class Magnitudes:
    """How large the values of `main` get on calibration inputs: per graph op, the largest finite
    magnitude among its operands and results; and the op with the largest."""

    of: dict[Operation, float]
    largest: float
    where: Operation | None


def calibrate(module: ModuleOp, inputs: Sequence[np.ndarray]) -> Magnitudes:
    """Run `main` of `module` on `inputs` on the graph interpreter and measure its values."""
    listener = _Magnitudes()
    run_function(module, inputs, "main", listeners=(listener,))
    function = find_function(module, "main")
    argument = dict(zip(function.body.block.args, (_largest_finite(np.asarray(a)) for a in inputs)))

    def magnitude(value) -> float:
        owner = value.owner
        return (
            listener.of.get(owner, 0.0)
            if isinstance(owner, Operation)
            else argument.get(value, 0.0)
        )

    of = {
        op: max([listener.of.get(op, 0.0), *(magnitude(v) for v in op.operands)])
        for op in function.body.block.ops
        if isinstance(op, graph.GraphOp)
    }
    where = max(of, key=of.__getitem__, default=None)
    return Magnitudes(of, 0.0 if where is None else of[where], where)


def _has_floats(op: Operation) -> bool:
    return any(
        isinstance(t, TensorType) and isinstance(t.get_element_type(), AnyFloat)
        for t in (*op.operand_types, *op.result_types)
    )


def _where(op: Operation) -> str:
    name = op_name_location(op)
    if name is not None:
        return f"'{name}'"
    location = op_location(op)
    return op.name if location is None else f"{location.filename.data}:{location.line.data}"


CONTRACTIONS = (graph.Conv2dOp, graph.MatMulOp, graph.GemmOp)
"""The graph ops the matrix unit computes."""


def matrix_float_types(module: ModuleOp, machine: Machine) -> set[str]:
    """The float element types of the convolutions and matrix products in `module` that remain
    after `graph-integer-qdq` has moved a QDQ model's onto the machine's integer instructions."""
    if has_integer_matrix(machine):
        module = module.clone()
        GraphIntegerQDQPass().apply(default_context(), module)
    return {
        str(t.get_element_type())
        for op in module.walk()
        if isinstance(op, CONTRACTIONS)
        for t in op.operand_types
        if isinstance(t, TensorType) and isinstance(t.get_element_type(), AnyFloat)
    }


def choose_precision(
    requested: str, machine: Machine, module: ModuleOp, inputs: Sequence[np.ndarray] = ()
) -> Precision:
    """The float type `module` computes in on `machine` for `--precision requested`; `auto`
    calibrates on `inputs` (the graph level's `main` arguments)."""
    if requested in ("f16", "bf16"):
        return Precision(requested, "as --precision asks")
    if requested == "model":
        return Precision(None, "as the model says (--precision model)")
    floats = matrix_float_types(module, machine)
    available = {pair[0] for pair in machine.matrix.dtypes}
    if not floats:
        # The vector unit computes in f32 (a QDQ model's requantization must, to be exact).
        return Precision(None, "the model has no float convolution or matrix product")
    if floats <= available:
        return Precision(None, f"the matrix unit of {machine.name} takes the model's floats")
    narrow = [t for t in ("f16", "bf16") if t in available]
    if not narrow:
        return Precision(None, f"the matrix unit of {machine.name} has no f16 or bf16 instruction")
    if narrow == ["bf16"]:
        return Precision("bf16", f"the matrix unit of {machine.name} has bf16, not f16")
    magnitudes = calibrate(module, inputs)
    largest, where = magnitudes.largest, magnitudes.where
    at = "" if where is None else f" (at {_where(where)})"
    limit = F16_LARGEST / F16_HEADROOM
    if largest <= limit:
        return Precision(
            "f16",
            f"the largest value on the calibration inputs is {largest:.4g}{at}, "
            f"within f16's range (65504) by {F16_HEADROOM:g}x",
        )
    if "bf16" in narrow:
        beyond = [op for op, m in magnitudes.of.items() if m > limit]
        floats = [op for op in magnitudes.of if _has_floats(op)]
        # Where a convolution's or matrix product's own values are beyond f16, the network's
        # activations are: bf16 throughout saves casting between the types at every layer.
        matrix = sum(isinstance(op, CONTRACTIONS) for op in beyond)
        if matrix or len(beyond) > MIXED_SHARE * len(floats):
            among = f", {matrix} convolutions or matrix products among them" if matrix else ""
            return Precision(
                "bf16",
                f"the largest value on the calibration inputs is {largest:.4g}{at}; "
                f"{len(beyond)} of {len(floats)} float ops read or make values beyond f16's "
                f"65504 / {F16_HEADROOM:g}{among}; bf16 keeps f32's range",
            )
        for op in beyond:
            op.attributes[PRECISION_ATTR] = BFloat16Type()
        return Precision(
            "f16",
            f"{len(beyond)} of {len(floats)} float ops read or make values beyond f16's "
            f"65504 / {F16_HEADROOM:g} (the largest {largest:.4g}{at}) and compute in bf16, "
            "which keeps f32's range; the others in f16",
            in_bf16=len(beyond),
        )
    return Precision(
        "f16",
        f"the largest value on the calibration inputs is {largest:.4g}{at}, beyond f16's range, "
        f"but the matrix unit of {machine.name} has no bf16",
    )


def cached_precision(
    requested: str,
    machine: Machine,
    module: ModuleOp,
    inputs: Sequence[np.ndarray],
    cache: KernelCache,
    model_digest: str,
) -> Precision:
    """`choose_precision`, read from the compile `cache` where it decided for the same model
    (`model_digest`: a hash of the file and of how it was imported), calibration inputs, machine and
    `requested`, and written there otherwise. The ops it marks to compute in bf16 are marked again
    (by their place in `module.walk()`)."""
    digest = hashlib.sha256(f"precision|{requested}|{model_digest}|{machine!r}".encode())
    update_with_arrays(digest, inputs)
    key = digest.hexdigest()
    text = cache.read(key)
    if text is not None:
        try:
            data = json.loads(text)
            ops = list(module.walk())
            for index in data["marked"]:
                ops[index].attributes[PRECISION_ATTR] = BFloat16Type()
            return Precision(data["element_type"], data["reason"], data["in_bf16"])
        except (ValueError, KeyError, TypeError, IndexError):
            pass  # a damaged entry: decide again
    precision = choose_precision(requested, machine, module, inputs)
    marked = [i for i, op in enumerate(module.walk()) if PRECISION_ATTR in op.attributes]
    cache.write(
        key,
        json.dumps(
            {
                "element_type": precision.element_type,
                "reason": precision.reason,
                "in_bf16": precision.in_bf16,
                "marked": marked,
            }
        ),
    )
    return precision
