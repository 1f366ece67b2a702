"""`graph-convert-float`: compute a function in a narrower float type while keeping its signature,
for machines whose matrix unit has no instruction for the model's type.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import AnyFloat, ModuleOp, TensorType
from xdsl.ir import Attribute, Operation
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


@dataclass
class _Conversion:
    source: Attribute
    target: Attribute

    def converted(self, value_type: Attribute) -> Attribute:
        if isinstance(value_type, TensorType) and value_type.get_element_type() == self.source:
            return TensorType(self.target, value_type.get_shape())
        return value_type

    def function(self, function: func.FuncOp) -> None:
        if not function.body.blocks:
            return
        block = function.body.block
        for arg in block.args:
            narrow = self.converted(arg.type)
            if narrow != arg.type:
                cast = graph.CastOp(arg, narrow)
                # Reported with the layer that first reads the input.
                cast.location = next(
                    (use.operation.location for use in arg.uses), function.location
                )
                Rewriter.insert_op(cast, InsertPoint.at_start(block))
                arg.replace_uses_with_if(
                    cast.output, lambda use, cast=cast: use.operation is not cast
                )
        for op in list(block.ops):
            if isinstance(op, func.ReturnOp):
                self.returned(op, function)
            elif isinstance(op, graph.GraphOp):
                self.rebuild(op)

    def rebuild(self, op: graph.GraphOp) -> None:
        if isinstance(op, graph.ConstantOp):
            if op.output.type == self.converted(op.output.type):
                return
            new = graph.ConstantOp.from_array(op.to_array().astype(to_numpy_dtype(self.target)))
        elif isinstance(op, graph.ResultTypedOp):
            new = type(op)(op.input, self.converted(op.output.type))
        elif (
            all(operand.type == self.converted(operand.type) for operand in op.operands)
            and op.regions == []
        ):
            if any(result.type != self.converted(result.type) for result in op.results):
                raise error_at(
                    op, f"{op.name} makes {self.source} from narrower inputs; cannot convert it"
                )
            return
        else:
            if op.regions:
                raise error_at(
                    op, f"graph-convert-float runs before graph-fuse; it cannot convert {op.name}"
                )
            new = type(op).build_inferred(list(op.operands), dict(op.properties))
        new.location = op.location
        for old_result, new_result in zip(op.results, new.results):
            new_result.name_hint = old_result.name_hint
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
    `source` now casts to `target`). The function's signature is unchanged.

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
