"""The `tile` dialect: what the tensor level needs and the upstream dialects xDSL ships lack.

The tensor level is upstream MLIR first (`linalg`, `tensor`, `arith`, `math`;
see `ziggurat.lowering.graph_to_tile` for the structured form of each graph
op); `tile` holds only the ops those dialects do not have in xDSL 0.74:

* `tile.bitcast`: a tensor's bits as another element type of the same width,
  MLIR's `tensor.bitcast`. `arith` takes signless integers only, so
  graph-to-tile reads a `ui8` tensor as `i8` (and writes it back) with it;
  upstream's `arith.bitcast` rejects unsigned element types.
"""

from __future__ import annotations

from xdsl.dialects.builtin import FixedBitwidthType, IntegerType, TensorType
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException


def _bit_width(element_type: Attribute) -> int | None:
    if isinstance(element_type, IntegerType):
        return element_type.width.data
    if isinstance(element_type, FixedBitwidthType):
        return element_type.bitwidth
    return None


@irdl_op_definition
class BitcastOp(IRDLOperation):
    """`%r = tile.bitcast %t : tensor<4xui8> to tensor<4xi8>` (MLIR's tensor.bitcast)."""

    name = "tile.bitcast"
    traits = traits_def(Pure())

    source = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = "$source attr-dict `:` type($source) `to` type($result)"

    def __init__(self, source: SSAValue, result_type: TensorType):
        super().__init__(operands=[source], result_types=[result_type])

    def verify_(self) -> None:
        source, result = self.source.type, self.result.type
        if source.get_shape() != result.get_shape():
            raise VerifyException(
                f"source and result must have the same shape, got {source} and {result}"
            )
        widths = [_bit_width(t.get_element_type()) for t in (source, result)]
        if None in widths or widths[0] != widths[1]:
            raise VerifyException(
                f"element types must be integers or floats of the same bit width, "
                f"got {source.get_element_type()} and {result.get_element_type()}"
            )


Tile = Dialect("tile", [BitcastOp])
