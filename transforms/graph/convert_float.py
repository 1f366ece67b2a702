"""`graph-convert-float`: compute a function in a narrower float type while keeping its signature,
for machines whose matrix unit has no instruction for the model's type.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import AnyFloat, ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.parser import Parser
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from ziggurat.diagnostics import Diagnostic, DiagnosticError, error_at
from ziggurat.dialects import graph
from ziggurat.dtypes import to_numpy_dtype


def _float_type(name: str) -> AnyFloat:
    parsed = Parser(Context(), name).parse_optional_type()
    if not isinstance(parsed, AnyFloat):
        # An option value given on the command line: a diagnostic, with no place in the IR to point at.
        raise DiagnosticError(
            Diagnostic("error", f"graph-convert-float: '{name}' is not a float type")
        )
    return parsed


def saturated(array: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """`array` in `dtype`, a finite value beyond its range clamped to its largest finite one.

    Models write "minus infinity" as f32's lowest value (a mask's `finfo(f32).min`), which would
    round to -inf in f16 or bf16, and 0 times it to NaN; clamped, it stays the lowest the type
    holds, as TensorRT and onnxruntime's float16 converter clamp weights.
    """
    largest = float(ml_dtypes.finfo(dtype).max)
    finite = np.isfinite(array)
    return np.where(finite, np.clip(array, -largest, largest), array).astype(dtype)


PRECISION_ATTR = "graph.precision"
"""A graph op's own float type to compute in under `graph-convert-float` (a type attribute)."""


@dataclass
class _Conversion:
    source: Attribute
    target: Attribute
    narrowed: set[SSAValue] = field(default_factory=set)
    """The values the conversion made: `source` values now in a narrower type."""
    casts: dict[tuple[SSAValue, Attribute], SSAValue] = field(default_factory=dict)
    """The cast of a value to a type, made once."""

    def target_of(self, op: Operation) -> Attribute:
        own = op.attributes.get(PRECISION_ATTR)
        if own is None:
            return self.target
        if not isinstance(own, AnyFloat):
            raise error_at(op, f"{PRECISION_ATTR} must be a float type, got {own}")
        return own

    def converted(self, value_type: Attribute, target: Attribute) -> Attribute:
        if isinstance(value_type, TensorType) and value_type.get_element_type() == self.source:
            return TensorType(target, value_type.get_shape())
        return value_type

    def function(self, function: func.FuncOp) -> None:
        if not function.body.blocks:
            return
        for op in list(function.body.block.ops):
            if isinstance(op, func.ReturnOp):
                self.returned(op, function)
            elif isinstance(op, graph.GraphOp):
                self.rebuild(op)

    def operand_in(self, op: Operation, index: int, target: Attribute) -> bool:
        """Cast operand `index` of `op` to `target` if it is a `source` value (an argument, or one
        the conversion narrowed to another type); whether it did."""
        value = op.operands[index]
        value_type = value.type
        if not isinstance(value_type, TensorType):
            return False
        element = value_type.get_element_type()
        if element == target or (element != self.source and value not in self.narrowed):
            return False
        key = (value, target)
        if key not in self.casts:
            cast = graph.CastOp(value, TensorType(target, value_type.get_shape()))
            # Reported with the layer that first reads it; one cast per value and type, where the
            # value is defined.
            cast.location = op.location
            owner = value.owner
            where = (
                InsertPoint.after(owner)
                if isinstance(owner, Operation)
                else InsertPoint.at_start(owner)
            )
            Rewriter.insert_op(cast, where)
            self.narrowed.add(cast.output)
            self.casts[key] = cast.output
        op.operands[index] = self.casts[key]
        return True

    def rebuild(self, op: graph.GraphOp) -> None:
        target = self.target_of(op)
        if isinstance(op, graph.ConstantOp):
            if op.output.type == self.converted(op.output.type, target):
                return
            new = graph.ConstantOp.from_array(saturated(op.to_array(), to_numpy_dtype(target)))
        elif isinstance(op, graph.ResultTypedOp):
            # A cast reads any type: its input stays as it is.
            if op.output.type == self.converted(op.output.type, target):
                return
            new = type(op)(op.input, self.converted(op.output.type, target))
        else:
            cast = [self.operand_in(op, i, target) for i in range(len(op.operands))]
            if not any(cast) and not any(v in self.narrowed for v in op.operands):
                if any(r.type != self.converted(r.type, target) for r in op.results):
                    raise error_at(
                        op, f"{op.name} makes {self.source} from narrower inputs; cannot convert it"
                    )
                return
            if op.regions:
                raise error_at(
                    op, f"graph-convert-float runs before graph-fuse; it cannot convert {op.name}"
                )
            new = type(op).build_inferred(list(op.operands), dict(op.properties))
        new.location = op.location
        for old_result, new_result in zip(op.results, new.results):
            new_result.name_hint = old_result.name_hint
            if new_result.type != old_result.type:
                self.narrowed.add(new_result)
        Rewriter.replace_op(op, new)

    def returned(self, op: func.ReturnOp, function: func.FuncOp) -> None:
        for index, (value, declared) in enumerate(
            zip(op.operands, function.function_type.outputs.data)
        ):
            if value.type != declared:
                cast = graph.CastOp(value, declared)
                cast.location = (
                    value.owner.location if isinstance(value.owner, Operation) else op.location
                )
                Rewriter.insert_op(cast, InsertPoint.before(op))
                op.operands[index] = cast.output


@dataclass(frozen=True)
class GraphConvertFloat(ModulePass):
    """Compute in `target` instead of `source` inside every function, casting at its arguments and results.

    Every `source` tensor inside each function becomes a `target` tensor (mixed
    precision, as the toolchains of f16/bf16 matrix units do): constants are
    converted, each `source` argument is cast to `target` where the function
    starts, each `source` result cast back before it returns, and every graph op in
    between is rebuilt with its result types inferred anew (a `graph.cast` to
    `source` now casts to `target`). The function's signature is unchanged. A finite
    constant beyond `target`'s range becomes its largest finite value of that sign. An op
    with a `graph.precision` attribute (a float type) computes in that type instead, its
    operands cast to it (`--precision auto` puts it on the ops whose values f16 cannot hold).

        func.func @scale(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
          %c = graph.constant dense<2.0> : tensor<8xf32>
          %y = graph.mul %x, %c : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
          func.return %y : tensor<4x8xf32>
        }

    becomes, with the default `source=f32 target=f16`,

        func.func @scale(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
          %0 = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xf16>
          %c = graph.constant dense<2.0> : tensor<8xf16>
          %y = graph.mul %0, %c : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
          %1 = graph.cast %y : tensor<4x8xf16> -> tensor<4x8xf32>
          func.return %1 : tensor<4x8xf32>
        }
    """

    name = "graph-convert-float"

    source: str = "f32"
    """The float type to replace."""
    target: str = "f16"
    """The float type to compute in."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        conversion = _Conversion(_float_type(self.source), _float_type(self.target))
        for function in op.walk():
            if isinstance(function, func.FuncOp):
                conversion.function(function)
