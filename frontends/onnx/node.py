"""`NodeContext`: what a converter sees of the ONNX node it converts and of the IR being built."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import onnx
from onnx import numpy_helper
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, SSAValue

from ziggurat.diagnostics import Diagnostic, DiagnosticError
from ziggurat.dialects.graph import ConstantOp, DequantizeOp, GraphOp, ResultTypedOp
from ziggurat.dtypes import from_numpy_dtype, to_numpy_dtype
from ziggurat.ir.tensor_constants import element_count

if TYPE_CHECKING:
    from ziggurat.frontends.onnx.importer import Importer

FOLD_AT_IMPORT_MAX_ELEMENTS = 1024
"""Results of constant operands up to this size are computed during the import."""


class NotConstantError(DiagnosticError):
    """A node needs the value of `value_name` at import time (a shape, axes, a count), and it is not known.

    Static shapes need these values while compiling; when `value_name` is a graph input, binding it
    to a value (`import_model(..., bound_inputs=...)`, `ziggurat-compile --bind`) makes it a constant,
    as TensorRT's optimization profiles give its shape tensors values at build time.
    """

    def __init__(self, diagnostic: Diagnostic, value_name: str, inputs: Sequence[str] = ()):
        super().__init__(diagnostic)
        self.value_name = value_name
        self.inputs = tuple(inputs)
        """The graph inputs `value_name` is computed from (itself, if it is one)."""


def element_type_of(onnx_type: int, what: str) -> Attribute:
    """The builtin element type of an ONNX TensorProto data type, or an error naming `what`."""
    try:
        return from_numpy_dtype(onnx.helper.tensor_dtype_to_np_dtype(onnx_type))
    except (KeyError, ValueError, TypeError):
        known = onnx_type in onnx.TensorProto.DataType.values()
        name = onnx.TensorProto.DataType.Name(onnx_type) if known else str(onnx_type)
        raise DiagnosticError(
            Diagnostic("error", f"{what} has element type {name}, which ziggurat cannot represent")
        ) from None


def location_name(node: onnx.NodeProto) -> str:
    """The name an op imported from `node` is located at (and reported under, per layer):
    the node's name, else its op type and first output, as model viewers show unnamed nodes."""
    if node.name:
        return node.name
    return f"{node.op_type} {node.output[0]}" if node.output and node.output[0] else node.op_type


def node_label(node: onnx.NodeProto, index: int) -> str:
    """How diagnostics name a node: `node 'conv1'`, or `node #7` when it has no name."""
    return f"node '{node.name}'" if node.name else f"node #{index}"


class NodeContext:
    """One ONNX node being converted: its inputs as SSA values or constants, its attributes, and builders.

    Converters return one SSA value per node output (None for an output they
    do not produce, such as BatchNormalization's running statistics).
    """

    def __init__(self, importer: Importer, node: onnx.NodeProto, index: int, scope: str = ""):
        self.importer = importer
        self.node = node
        self.opset = importer.opset
        self.label = node_label(node, index) + scope
        """How diagnostics name the node; `scope` places a subgraph's node (" in the body of node #3 (Loop)")."""
        self.described = f"{node_label(node, index)} ({node.op_type}){scope}"
        """The label with the operator: `node #4 (Expand) in the then_branch of node #1 (If)`."""
        self._attributes = {attribute.name: attribute for attribute in node.attribute}

    # ---- diagnostics ----

    def diagnostic(self, severity: str, message: str) -> Diagnostic:
        return Diagnostic(severity, f"{self.described}: {message}", file=self.importer.where)

    def error(self, message: str) -> DiagnosticError:
        return DiagnosticError(self.diagnostic("error", message))

    # ---- inputs ----

    @property
    def input_count(self) -> int:
        return len(self.node.input)

    def has_input(self, index: int) -> bool:
        return index < len(self.node.input) and self.node.input[index] != ""

    def input(self, index: int) -> SSAValue:
        if not self.has_input(index):
            raise self.error(f"input #{index} is required")
        return self.importer.value(self.node.input[index], self.label)

    def optional_input(self, index: int) -> SSAValue | None:
        return self.input(index) if self.has_input(index) else None

    def type(self, index: int) -> TensorType:
        value_type = self.input(index).type
        assert isinstance(value_type, TensorType)
        return value_type

    def shape(self, index: int) -> tuple[int, ...]:
        return tuple(self.type(index).get_shape())

    def dtype(self, index: int) -> np.dtype:
        return to_numpy_dtype(self.type(index).get_element_type())

    def constant(self, index: int, what: str) -> np.ndarray:
        """Input `index` as an array known at import time, or an error saying that `what` must be constant."""
        array = self.importer.constant_array(self.input(index))
        if array is None:
            name = self.node.input[index]
            raise self.not_constant(
                index,
                f"{what} (input #{index} '{name}') must be a constant or computable from shapes at import time",
            )
        return array

    def not_constant(self, index: int, message: str) -> NotConstantError:
        """The error for input `index`, whose value is needed now: `message`, and which graph inputs to bind."""
        name = self.node.input[index]
        inputs = self.importer.inputs_feeding(name)
        if inputs == [name]:
            message += f"; it is a graph input: give its value with --bind {name}=VALUES"
        elif inputs:
            listed = ", ".join(f"'{n}'" for n in inputs)
            message += (
                f"; it is computed from the graph input(s) {listed}: give their values with --bind"
            )
        return NotConstantError(self.diagnostic("error", message), name, inputs)

    def optional_constant(self, index: int, what: str) -> np.ndarray | None:
        return self.constant(index, what) if self.has_input(index) else None

    def ints_from_input_or_attribute(
        self, index: int, attribute: str, since_opset: int, what: str
    ) -> list[int] | None:
        """Operands that moved from an attribute to an input at `since_opset` (Slice, Squeeze, ReduceSum...)."""
        if self.opset >= since_opset:
            array = self.optional_constant(index, what)
            return None if array is None else [int(v) for v in array.reshape(-1)]
        value = self.attribute(attribute)
        return None if value is None else [int(v) for v in value]

    # ---- attributes ----

    def attribute(self, name: str, default: Any = None) -> Any:
        """An attribute's Python value (strings decoded, tensors as numpy arrays)."""
        if name not in self._attributes:
            return default
        value = onnx.helper.get_attribute_value(self._attributes[name])
        if isinstance(value, bytes):
            return value.decode()
        if isinstance(value, onnx.TensorProto):
            return numpy_helper.to_array(value)
        if isinstance(value, list) and value and isinstance(value[0], bytes):
            return [v.decode() for v in value]
        return value

    def has_attribute(self, name: str) -> bool:
        return name in self._attributes

    # ---- building ----

    def emit(
        self,
        op_type: type[GraphOp],
        operands: Sequence[SSAValue | None],
        properties: Mapping[str, Attribute | None] | None = None,
    ) -> SSAValue:
        """Build `op_type` with inferred result types after the ops built so far; its single result."""
        return self._fold_or_insert(op_type.build_inferred(operands, properties))

    def emit_typed(
        self, op_type: type[ResultTypedOp], operand: SSAValue, result_type: TensorType
    ) -> SSAValue:
        """Build a reshape, cast or broadcast_to, whose result type is its target."""
        op = op_type(operand, result_type)
        op.verify_()
        return self._fold_or_insert(op)

    def _fold_or_insert(self, op: GraphOp) -> SSAValue:
        """MLIR's createOrFold: a small result of constant operands becomes a constant right away.

        Shape arithmetic (Shape -> Gather -> Cast -> Mul ...) then leaves no ops behind; larger
        constant computations (weight transposes, say) are left to graph-fold-constants. A
        DequantizeLinear stays, whatever its size: `graph-integer-qdq` computes on its integers.
        """
        (result,) = op.results
        if (
            op.operands
            and not isinstance(op, DequantizeOp)
            and element_count(result.type) <= FOLD_AT_IMPORT_MAX_ELEMENTS
        ):
            if all(isinstance(operand.owner, ConstantOp) for operand in op.operands):
                arrays = [self.importer.constant_array(operand) for operand in op.operands]
                with np.errstate(all="ignore"):
                    (array,) = op.evaluate(*arrays)
                return self.importer.constant(array)
        self.importer.insert(op, location_name(self.node))
        return result

    def constant_value(self, array: np.ndarray) -> SSAValue:
        """A `graph.constant` holding `array`."""
        return self.importer.constant(array)

    def scalar_like(self, value: float, like: SSAValue) -> SSAValue:
        """A 0-d constant of `like`'s element type."""
        assert isinstance(like.type, TensorType)
        return self.constant_value(
            np.asarray(value, dtype=to_numpy_dtype(like.type.get_element_type()))
        )
