"""The `tile` dialect: the tensor-level ops that the upstream dialects xDSL ships lack.

The tensor level is upstream MLIR first (`linalg`, `tensor`, `arith`, `math`); `tile` adds
`tile.bitcast` (MLIR's `tensor.bitcast`) and `tile.pack`/`tile.unpack` (MLIR's
`tensor.pack`/`tensor.unpack`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import DenseArrayBase, FixedBitwidthType, IntegerType, TensorType, i64
from xdsl.ir import Attribute, Dialect, SSAValue
from xdsl.irdl import (
    AnyAttr,
    BaseAttr,
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

# The discardable attributes that schedule a fusion group. Set on graph ops (by graph-to-tile's
# grouping, by ziggurat-tune, which searches sizes, interchange, buffering and staging, or by hand),
# they are carried by every op a graph op lowers to, down to the loop level.
ATTR_PREFIX = "tile."
"""What the names of the attributes below start with."""
GROUP_ATTR = "tile.group"
"""The name of the fusion group an op belongs to (a string; docs/lowering.md, section 1)."""
ROOT_ATTR = "tile.root"
"""Unit: the op whose tiling schedules its group."""
SIZES_ATTR = "tile.sizes"
"""The group root's tile size per loop of its domain (an i64 array)."""
INTERCHANGE_ATTR = "tile.interchange"
"""The root's parallel loops that the group's tile loops follow, outermost first (an i64 array)."""
BUFFERING_ATTR = "tile.buffering"
"""The slots per buffer of a group (an integer >= 1 on its root): overrides loop-double-buffer's
`depth` for the loops around it."""
STAGE_REDUCTION_ATTR = "tile.stage_reduction"
"""Unit, on a group's root: loop-stage-reduction stages the slices of its reduction loop's operands
at once."""
LAYOUT_ATTR = "tile.layout"
"""A spatial op's requested layout (a string, NHWC or NCHW), which `graph-layout{marked=true}` gives it."""
TUNE_ID_ATTR = "tile.tune_id"
"""ziggurat-tune's mark on each graph op of a private copy: its index in the input's `walk()`, so
that a group's root leads back to its graph op."""


def _bit_width(element_type: Attribute) -> int | None:
    if isinstance(element_type, IntegerType):
        return element_type.width.data
    if isinstance(element_type, FixedBitwidthType):
        return element_type.bitwidth
    return None


@irdl_op_definition
class BitcastOp(IRDLOperation):
    """`%r = tile.bitcast %t : tensor<4xui8> to tensor<4xi8>` (MLIR's tensor.bitcast).

    A tensor's bits as another element type of the same width. `arith` takes
    signless integers only and its `arith.bitcast` rejects unsigned element types,
    so graph-to-tile reads a `ui8` tensor as `i8` (and writes it back) with it.
    """

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


def packed_shape(
    shape: Sequence[int],
    inner_dims_pos: Sequence[int],
    inner_tiles: Sequence[int],
    outer_dims_perm: Sequence[int] | None = None,
) -> list[int]:
    """The shape of `shape` packed: outer dims (tiled ones rounded up to whole tiles,
    in `outer_dims_perm` order), then the tiles."""
    outer = list(shape)
    for dim, tile in zip(inner_dims_pos, inner_tiles):
        outer[dim] = -(-shape[dim] // tile)
    if outer_dims_perm is not None:
        outer = [outer[d] for d in outer_dims_perm]
    return outer + list(inner_tiles)


def _is_permutation(values: Sequence[int], rank: int) -> bool:
    return sorted(values) == list(range(rank))


class _PackingOp(IRDLOperation):
    """What `tile.pack` and `tile.unpack` share: the layout and its verifier."""

    inner_dims_pos = prop_def(DenseArrayBase.constr(i64))
    inner_tiles = prop_def(DenseArrayBase.constr(i64))
    outer_dims_perm = opt_prop_def(DenseArrayBase.constr(i64))

    def layout(self) -> tuple[list[int], list[int], list[int] | None]:
        """(inner_dims_pos, inner_tiles, outer_dims_perm or None)."""
        perm = self.outer_dims_perm
        return (
            list(self.inner_dims_pos.get_values()),
            list(self.inner_tiles.get_values()),
            None if perm is None else list(perm.get_values()),
        )

    def verify_layout(self, unpacked: TensorType, packed: TensorType) -> None:
        positions, tiles, perm = self.layout()
        rank = unpacked.get_num_dims()
        if unpacked.get_element_type() != packed.get_element_type():
            raise VerifyException(f"element types differ: {unpacked} and {packed}")
        if not unpacked.has_static_shape() or not packed.has_static_shape():
            raise VerifyException(f"shapes must be static, got {unpacked} and {packed}")
        if len(positions) != len(tiles):
            raise VerifyException(
                f"inner_dims_pos has {len(positions)} dims but inner_tiles {len(tiles)} sizes"
            )
        if len(set(positions)) != len(positions) or not all(0 <= d < rank for d in positions):
            raise VerifyException(
                f"inner_dims_pos {positions} must be distinct dims of a rank-{rank} tensor"
            )
        if any(t <= 0 for t in tiles):
            raise VerifyException(f"inner_tiles {tiles} must be positive")
        if perm is not None and not _is_permutation(perm, rank):
            raise VerifyException(f"outer_dims_perm {perm} is not a permutation of {rank} dims")
        expected = packed_shape(unpacked.get_shape(), positions, tiles, perm)
        if list(packed.get_shape()) != expected:
            raise VerifyException(
                f"packed type {packed} does not match the layout: expected shape {expected}"
            )


_LAYOUT_FORMAT = (
    "(`outer_dims_perm` `=` $outer_dims_perm^)? `inner_dims_pos` `=` $inner_dims_pos "
    "`inner_tiles` `=` $inner_tiles `into` $dest attr-dict"
)


@irdl_op_definition
class PackOp(_PackingOp):
    """`%p = tile.pack %t [padding_value(%v : f16)] [outer_dims_perm = ...] inner_dims_pos = ...
    inner_tiles = ... into %dest : tensor<...> -> tensor<...>` (MLIR's tensor.pack).

    A tensor in a blocked layout: `inner_dims_pos` names the dims cut into tiles of
    `inner_tiles` (appended as the innermost dims), `outer_dims_perm` permutes the
    outer dims. A tile that does not divide its dim needs a `padding_value`, which
    fills the last tile. `tile-pack` uses it for the matrix unit's fractal blocks:

        %p = tile.pack %a padding_value(%z : f16) inner_dims_pos = [0, 1]
               inner_tiles = [16, 16] into %e : tensor<40x64xf16> -> tensor<3x4x16x16xf16>
    """

    name = "tile.pack"
    traits = traits_def(Pure())

    T: ClassVar = VarConstraint("T", BaseAttr(TensorType))
    source = operand_def(TensorType)
    dest = operand_def(T)
    padding_value = opt_operand_def(AnyAttr())
    result = result_def(T)

    assembly_format = (
        "$source (`padding_value` `(` $padding_value^ `:` type($padding_value) `)`)? "
        + _LAYOUT_FORMAT
        + " `:` type($source) `->` type($dest)"
    )

    def __init__(
        self,
        source: SSAValue,
        dest: SSAValue,
        inner_dims_pos: Sequence[int],
        inner_tiles: Sequence[int],
        outer_dims_perm: Sequence[int] | None = None,
        padding_value: SSAValue | None = None,
    ):
        properties = {
            "inner_dims_pos": DenseArrayBase.from_list(i64, list(inner_dims_pos)),
            "inner_tiles": DenseArrayBase.from_list(i64, list(inner_tiles)),
        }
        if outer_dims_perm is not None:
            properties["outer_dims_perm"] = DenseArrayBase.from_list(i64, list(outer_dims_perm))
        super().__init__(
            operands=[source, dest, [] if padding_value is None else [padding_value]],
            result_types=[dest.type],
            properties=properties,
        )

    def verify_(self) -> None:
        source, dest = self.source.type, self.dest.type
        self.verify_layout(source, dest)
        if self.padding_value is not None:
            if self.padding_value.type != source.get_element_type():
                raise VerifyException(
                    f"padding_value is {self.padding_value.type}, the element type is "
                    f"{source.get_element_type()}"
                )
            return
        positions, tiles, _ = self.layout()
        for dim, tile in zip(positions, tiles):
            if source.get_shape()[dim] % tile:
                raise VerifyException(
                    f"needs a padding_value: tile {tile} does not divide dim {dim} of size "
                    f"{source.get_shape()[dim]}"
                )


@irdl_op_definition
class UnpackOp(_PackingOp):
    """`%t = tile.unpack %p [outer_dims_perm = ...] inner_dims_pos = ... inner_tiles = ...
    into %dest : tensor<...> -> tensor<...>` (MLIR's tensor.unpack): drops the padding."""

    name = "tile.unpack"
    traits = traits_def(Pure())

    T: ClassVar = VarConstraint("T", BaseAttr(TensorType))
    source = operand_def(TensorType)
    dest = operand_def(T)
    result = result_def(T)

    assembly_format = "$source " + _LAYOUT_FORMAT + " `:` type($source) `->` type($dest)"

    def __init__(
        self,
        source: SSAValue,
        dest: SSAValue,
        inner_dims_pos: Sequence[int],
        inner_tiles: Sequence[int],
        outer_dims_perm: Sequence[int] | None = None,
    ):
        properties = {
            "inner_dims_pos": DenseArrayBase.from_list(i64, list(inner_dims_pos)),
            "inner_tiles": DenseArrayBase.from_list(i64, list(inner_tiles)),
        }
        if outer_dims_perm is not None:
            properties["outer_dims_perm"] = DenseArrayBase.from_list(i64, list(outer_dims_perm))
        super().__init__(operands=[source, dest], result_types=[dest.type], properties=properties)

    def verify_(self) -> None:
        self.verify_layout(self.dest.type, self.source.type)


Tile = Dialect("tile", [BitcastOp, PackOp, UnpackOp])
