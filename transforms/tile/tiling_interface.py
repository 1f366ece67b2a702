"""The tiling interface: what a pass needs to know to tile a structured op on tensors, with the
implementations for `linalg` (generic, fill, matmul, transpose, broadcast, conv_2d_nchw_fchw) and
`tensor.pad`; `register_tiling(op_type, impl)` adds others.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    IndexType,
    IntegerAttr,
    LocationAttr,
    ShapedType,
    TensorType,
)
from xdsl.dialects.linalg import attrs as linalg_attrs
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)
from xdsl.rewriter import InsertPoint, Rewriter

from ziggurat.locations import locate

# --------------------------------------------------------------------------- #
# Index arithmetic
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class Linear:
    """`sum(coefficient * value) + constant` over `index` values (loop induction variables)."""

    terms: tuple[tuple[SSAValue, int], ...] = ()
    constant: int = 0

    @staticmethod
    def of(value: int | SSAValue) -> Linear:
        return Linear((), value) if isinstance(value, int) else Linear(((value, 1),), 0)

    @property
    def static(self) -> int | None:
        """The value when it has no terms, else None."""
        return None if self.terms else self.constant

    def __add__(self, other: Linear | int) -> Linear:
        other = other if isinstance(other, Linear) else Linear((), other)
        coefficients: dict[SSAValue, int] = {}
        for value, coefficient in (*self.terms, *other.terms):
            coefficients[value] = coefficients.get(value, 0) + coefficient
        terms = tuple((v, c) for v, c in coefficients.items() if c)
        return Linear(terms, self.constant + other.constant)

    def __mul__(self, factor: int) -> Linear:
        return Linear(
            tuple((v, c * factor) for v, c in self.terms if c * factor), self.constant * factor
        )

    def __sub__(self, other: Linear | int) -> Linear:
        other = other if isinstance(other, Linear) else Linear((), other)
        return self + other * -1

    def bounds(self, ranges: Mapping[SSAValue, tuple[int, int]]) -> tuple[int, int] | None:
        """(min, max) when each term's value lies in `ranges` (inclusive), else None."""
        low = high = self.constant
        for value, coefficient in self.terms:
            if value not in ranges:
                return None
            first, last = ranges[value]
            low += min(coefficient * first, coefficient * last)
            high += max(coefficient * first, coefficient * last)
        return low, high


@dataclass(frozen=True)
class Tile:
    """A box: one offset and one static size per dimension."""

    offsets: tuple[Linear, ...]
    sizes: tuple[int, ...]

    @staticmethod
    def whole(shape: Sequence[int]) -> Tile:
        return Tile(tuple(Linear() for _ in shape), tuple(shape))

    def covers(self, shape: Sequence[int]) -> bool:
        """Whether the box is all of a tensor of `shape` (no slice needed)."""
        return tuple(self.sizes) == tuple(shape) and all(o.static == 0 for o in self.offsets)


@dataclass(frozen=True)
class LoopDim:
    extent: int
    reduction: bool


class NotTileable(Exception):
    """An indexing map the interval arithmetic cannot follow (mod, floordiv, symbols)."""


def linear_form(expr: AffineExpr) -> tuple[dict[int, int], int]:
    """({dim: coefficient}, constant) of an affine expression that is a sum of
    dims times constants plus a constant."""
    if isinstance(expr, AffineDimExpr):
        return {expr.position: 1}, 0
    if isinstance(expr, AffineConstantExpr):
        return {}, expr.value
    if isinstance(expr, AffineBinaryOpExpr):
        lhs, lc = linear_form(expr.lhs)
        rhs, rc = linear_form(expr.rhs)
        if expr.kind == AffineBinaryOpKind.Add:
            merged = dict(lhs)
            for d, c in rhs.items():
                merged[d] = merged.get(d, 0) + c
            return merged, lc + rc
        if expr.kind == AffineBinaryOpKind.Mul and (not lhs or not rhs):
            factor, form, constant = (lc, rhs, rc) if not lhs else (rc, lhs, lc)
            return {d: c * factor for d, c in form.items()}, constant * factor
    raise NotTileable(f"the affine expression {expr} is not a sum of scaled dims")


def _expr(coefficients: Mapping[int, int], constant: int) -> AffineExpr:
    terms = [AffineExpr.dimension(d) * c for d, c in sorted(coefficients.items()) if c]
    if constant or not terms:
        terms.append(AffineExpr.constant(constant))
    expr = terms[0]
    for term in terms[1:]:
        expr = expr + term
    return expr


def access_slice(indexing: AffineMap, tile: Tile) -> tuple[Tile, AffineMap]:
    """The box `indexing` reads over the domain tile, and the map that reads it from
    the slice with the tile's local indices (a shifted copy of `indexing`)."""
    offsets, sizes, local = [], [], []
    for result in indexing.results:
        coefficients, constant = linear_form(result)
        offset, extent, shift = Linear((), constant), 0, 0
        for d, c in coefficients.items():
            offset = offset + tile.offsets[d] * c
            extent += abs(c) * (tile.sizes[d] - 1)
            if c < 0:
                shift -= c * (tile.sizes[d] - 1)
        offsets.append(offset - shift)
        sizes.append(extent + 1)
        local.append(_expr(coefficients, shift))
    return Tile(tuple(offsets), tuple(sizes)), AffineMap(indexing.num_dims, 0, tuple(local))


# --------------------------------------------------------------------------- #
# Building
# --------------------------------------------------------------------------- #


class TileBuilder:
    """Inserts ops at a point, each with `location` where it has none (the location of
    the op being tiled); turns `Linear` offsets into `index` values."""

    def __init__(self, point: InsertPoint, location: LocationAttr | None = None):
        self.point = point
        self.location = location

    def at(self, point: InsertPoint) -> TileBuilder:
        """A builder at another point, with this one's location."""
        return TileBuilder(point, self.location)

    @contextmanager
    def located(self, location: LocationAttr):
        """Emit with `location` inside the `with` block."""
        outer, self.location = self.location, location
        try:
            yield self
        finally:
            self.location = outer

    def emit(self, op: Operation) -> Operation:
        if self.location is not None:
            locate(op, self.location)
        Rewriter.insert_op(op, self.point)
        return op

    def constant(self, value: int) -> SSAValue:
        return self.emit(arith.ConstantOp(IntegerAttr(value, IndexType()))).results[0]

    def index(self, value: Linear) -> SSAValue | int:
        """The offset as an int when static, else as arith on index values."""
        if value.static is not None:
            return value.static
        total: SSAValue | None = None
        for term, coefficient in value.terms:
            if coefficient != 1:
                term = self.emit(arith.MuliOp(term, self.constant(coefficient))).results[0]
            total = term if total is None else self.emit(arith.AddiOp(total, term)).results[0]
        if value.constant:
            total = self.emit(arith.AddiOp(total, self.constant(value.constant))).results[0]
        return total

    def index_value(self, value: Linear) -> SSAValue:
        index = self.index(value)
        return self.constant(index) if isinstance(index, int) else index

    def extract(self, source: SSAValue, box: Tile) -> SSAValue:
        """`tensor.extract_slice` of `box` (the source itself when the box covers it)."""
        if box.covers(source.type.get_shape()):
            return source
        result_type = TensorType(source.type.get_element_type(), box.sizes)
        offsets = [self.index(o) for o in box.offsets]
        return self.emit(
            tensor.ExtractSliceOp(
                source, offsets, list(box.sizes), [1] * len(box.sizes), result_type
            )
        ).results[0]

    def insert(self, value: SSAValue, dest: SSAValue, box: Tile) -> SSAValue:
        """`tensor.insert_slice` of `value` into `box` of `dest` (`value` when it is all of it)."""
        if box.covers(dest.type.get_shape()):
            return value
        offsets = [self.index(o) for o in box.offsets]
        static = [o if isinstance(o, int) else tensor.DYNAMIC_INDEX for o in offsets]
        dynamic = [o for o in offsets if not isinstance(o, int)]
        return self.emit(
            tensor.InsertSliceOp.get(
                value, dest, list(box.sizes), static, [1] * len(box.sizes), dynamic
            )
        ).results[0]

    def empty(self, shape: Sequence[int], element_type) -> SSAValue:
        return self.emit(tensor.EmptyOp([], TensorType(element_type, shape))).results[0]


# --------------------------------------------------------------------------- #
# The interface
# --------------------------------------------------------------------------- #


class TilingInterface:
    """Tiling of ops described by indexing maps; subclasses give the maps and the domain.

    * `domain(op)`: the iteration domain, one `LoopDim(extent, reduction)` per loop;
    * `indexing_maps(op)`: per operand (inputs, then outputs) the affine map from
      the domain to the operand's indices, `None` for an operand that is not
      sliced (a fill's scalar);
    * `operand_slices(op, tile)` / `result_slice(op, tile, index)`: the slice of
      each operand a tile of the domain reads, and of the result it writes;
    * `tile(op, b, operands, tile)`: builds the op on the operand slices at `b`'s
      insertion point and returns its results, the result slices;
    * `domain_tile_for_result(op, index, result_slice)`: the domain tile that
      produces a slice of a result (reduction loops whole), to fuse the op as a
      producer;
    * `can_tile(op, tile, bounds)`: whether `tile` can be built with static shapes
      (only `tensor.pad` says no: see `PadTiling`).

    Slices follow the indexing maps by interval arithmetic: an access `d2 * 2 + d5`
    over the tile `d2 in [o2, o2 + s2)`, `d5 in [o5, o5 + s5)` reads
    `[2 * o2 + o5, 2 * (o2 + s2 - 1) + o5 + s5 - 1]`, the halo a convolution tile
    needs. Strides of slices are 1.
    """

    def indexing_maps(self, op: Operation) -> list[AffineMap | None]:
        raise NotImplementedError

    def iterator_reductions(self, op: Operation) -> list[bool]:
        return [False] * self.indexing_maps(op)[-1].num_dims

    def domain(self, op: Operation) -> list[LoopDim]:
        """Extents read off the operands whose maps name a dim directly (outputs first)."""
        maps = self.indexing_maps(op)
        extents: list[int | None] = [None] * maps[-1].num_dims
        pairs = list(zip(op.operands, maps))
        for operand, indexing in reversed(pairs):
            # a scalar operand (tile-vectorize's splat operands) names no dim
            if indexing is None or not isinstance(operand.type, ShapedType):
                continue
            for result, size in zip(indexing.results, operand.type.get_shape()):
                if isinstance(result, AffineDimExpr) and extents[result.position] is None:
                    extents[result.position] = size
        if None in extents:
            raise NotTileable(f"'{op.name}': no operand gives the extent of every loop")
        return [LoopDim(e, r) for e, r in zip(extents, self.iterator_reductions(op))]

    def operand_slices(self, op: Operation, tile: Tile) -> list[Tile | None]:
        return [
            None if indexing is None else access_slice(indexing, tile)[0]
            for indexing in self.indexing_maps(op)
        ]

    def result_slice(self, op: Operation, tile: Tile, index: int = 0) -> Tile:
        outputs = self.indexing_maps(op)[len(op.operands) - len(op.results) :]
        return access_slice(outputs[index], tile)[0]

    def domain_tile_for_result(self, op: Operation, index: int, box: Tile) -> Tile:
        outputs = self.indexing_maps(op)[len(op.operands) - len(op.results) :]
        whole = Tile.whole([d.extent for d in self.domain(op)])
        offsets, sizes = list(whole.offsets), list(whole.sizes)
        for result, offset, size in zip(outputs[index].results, box.offsets, box.sizes):
            if not isinstance(result, AffineDimExpr):
                raise NotTileable(f"'{op.name}': output map {outputs[index]} is not a permutation")
            offsets[result.position], sizes[result.position] = offset, size
        return Tile(tuple(offsets), tuple(sizes))

    def can_tile(
        self, op: Operation, tile: Tile, bounds: Mapping[SSAValue, tuple[int, int]]
    ) -> bool:
        return True

    def tile(
        self, op: Operation, b: TileBuilder, operands: Sequence[SSAValue], tile: Tile
    ) -> list[SSAValue]:
        """The op on `operands` (the operand slices), cloned with its properties."""
        result_types = [
            TensorType(r.type.get_element_type(), self.result_slice(op, tile, i).sizes)
            for i, r in enumerate(op.results)
        ]
        tiled = type(op).create(
            operands=list(operands),
            result_types=result_types,
            properties=dict(op.properties),
            attributes=dict(op.attributes),
            regions=[r.clone() for r in op.regions],
        )
        return list(b.emit(tiled).results)


class NamedOpTiling(TilingInterface):
    """linalg named ops (fill, matmul, transpose): xDSL knows their maps."""

    def indexing_maps(self, op: Operation) -> list[AffineMap | None]:
        maps = [m.data for m in op.get_indexing_maps().data]
        return [
            None if not m.results and not isinstance(v.type, TensorType) else m
            for m, v in zip(maps, op.operands)
        ]

    def iterator_reductions(self, op: Operation) -> list[bool]:
        return [
            it.data == linalg_attrs.IteratorType.REDUCTION for it in op.get_iterator_types().data
        ]


class TransposeTiling(NamedOpTiling):
    def indexing_maps(self, op: linalg.TransposeOp) -> list[AffineMap | None]:
        perm = op.permutation.get_values()
        rank = len(perm)
        source = [AffineExpr.dimension(0)] * rank
        for j, p in enumerate(perm):
            source[p] = AffineExpr.dimension(j)
        return [AffineMap(rank, 0, tuple(source)), AffineMap.identity(rank)]


class BroadcastTiling(TilingInterface):
    def indexing_maps(self, op: linalg.BroadcastOp) -> list[AffineMap | None]:
        rank = len(op.init.type.get_shape())
        added = set(op.dimensions.get_values())
        kept = tuple(AffineExpr.dimension(d) for d in range(rank) if d not in added)
        return [AffineMap(rank, 0, kept), AffineMap.identity(rank)]


class ConvTiling(NamedOpTiling):
    """conv_2d_nchw_fchw over (n, f, oh, ow | c, kh, kw), windows with strides and dilations."""

    def indexing_maps(self, op: linalg.Conv2DNchwFchwOp) -> list[AffineMap | None]:
        s = [int(v) for v in op.strides.get_values()]
        dl = [int(v) for v in op.dilations.get_values()]
        d = [AffineExpr.dimension(i) for i in range(7)]
        x = (d[0], d[4], d[2] * s[0] + d[5] * dl[0], d[3] * s[1] + d[6] * dl[1])
        return [
            AffineMap(7, 0, x),
            AffineMap(7, 0, (d[1], d[4], d[5], d[6])),
            AffineMap(7, 0, tuple(d[:4])),
        ]


class GenericTiling(TilingInterface):
    """linalg.generic: maps from the op; the tiled op reads its slices through shifted
    maps, and `linalg.index` in its body is moved by the tile's offset."""

    def indexing_maps(self, op: linalg.GenericOp) -> list[AffineMap | None]:
        return [m.data for m in op.indexing_maps.data]

    def iterator_reductions(self, op: linalg.GenericOp) -> list[bool]:
        return [it.data == linalg_attrs.IteratorType.REDUCTION for it in op.iterator_types.data]

    def tile(
        self, op: linalg.GenericOp, b: TileBuilder, operands: Sequence[SSAValue], tile: Tile
    ) -> list[SSAValue]:
        maps = [access_slice(m, tile)[1] for m in self.indexing_maps(op)]
        offsets = {
            i.dim.value.data: b.index_value(tile.offsets[i.dim.value.data])
            for i in op.body.walk()
            if isinstance(i, linalg.IndexOp) and tile.offsets[i.dim.value.data].static != 0
        }
        results = super().tile(op, b, operands, tile)
        tiled = results[0].owner
        tiled.properties["indexing_maps"] = ArrayAttr([AffineMapAttr(m) for m in maps])
        for index in [i for i in tiled.body.walk() if isinstance(i, linalg.IndexOp)]:
            if index.dim.value.data in offsets:
                moved = arith.AddiOp(index.result, offsets[index.dim.value.data])
                moved.location = index.location
                Rewriter.insert_op(moved, InsertPoint.after(index))
                index.result.replace_uses_with_if(
                    moved.result, lambda use, moved=moved: use.operation is not moved
                )
        return results


class PadTiling(TilingInterface):
    """tensor.pad with static amounts, tiled over its result. A tile whose offset in a
    padded dim is an index value is built only when it lies inside the source
    (`can_tile` with the values' ranges): it is then a plain slice of the source; tiles
    at the border must have static offsets, so their pad amounts are static."""

    def indexing_maps(self, op: tensor.PadOp) -> list[AffineMap | None]:
        rank = len(op.result.type.get_shape())
        return [AffineMap.identity(rank), AffineMap.identity(rank)]

    def domain(self, op: tensor.PadOp) -> list[LoopDim]:
        return [LoopDim(e, False) for e in op.result.type.get_shape()]

    def result_slice(self, op: Operation, tile: Tile, index: int = 0) -> Tile:
        return tile

    def domain_tile_for_result(self, op: Operation, index: int, box: Tile) -> Tile:
        return box

    def _dims(self, op: tensor.PadOp):
        return zip(
            op.static_low.get_values(), op.static_high.get_values(), op.source.type.get_shape()
        )

    def _source_box(self, op: tensor.PadOp, tile: Tile) -> tuple[Tile, list[int], list[int]]:
        """(the source box, low and high pads of the tile) for a tile that `can_tile`."""
        offsets, sizes, lows, highs = [], [], [], []
        for (low, _high, extent), offset, size in zip(self._dims(op), tile.offsets, tile.sizes):
            if offset.static is None:
                offsets.append(offset - low)
                sizes.append(size)
                lows.append(0)
                highs.append(0)
                continue
            start = min(max(offset.static - low, 0), extent)
            end = max(min(offset.static + size - low, extent), start)
            offsets.append(Linear((), start))
            sizes.append(end - start)
            lows.append(min(max(low - offset.static, 0), size))
            highs.append(size - lows[-1] - sizes[-1])
        return Tile(tuple(offsets), tuple(sizes)), lows, highs

    def operand_slices(self, op: tensor.PadOp, tile: Tile) -> list[Tile | None]:
        return [self._source_box(op, tile)[0]]

    def can_tile(
        self, op: tensor.PadOp, tile: Tile, bounds: Mapping[SSAValue, tuple[int, int]]
    ) -> bool:
        for (low, high, extent), offset, size in zip(self._dims(op), tile.offsets, tile.sizes):
            if offset.static is not None or (low == 0 and high == 0):
                continue
            span = offset.bounds(bounds)
            if span is None or span[0] - low < 0 or span[1] + size - low > extent:
                return False
        return True

    def tile(
        self, op: tensor.PadOp, b: TileBuilder, operands: Sequence[SSAValue], tile: Tile
    ) -> list[SSAValue]:
        _, lows, highs = self._source_box(op, tile)
        if not any(lows) and not any(highs):
            return [operands[0]]
        result_type = TensorType(op.result.type.get_element_type(), tile.sizes)
        padded = tensor.PadOp(operands[0], [], [], op.region.clone(), lows, highs, result_type)
        return [b.emit(padded).results[0]]


TILINGS: dict[type[Operation], TilingInterface] = {}


def register_tiling(op_type: type[Operation], impl: TilingInterface) -> None:
    """Make ops of `op_type` tileable (and fusable as producers) with `impl`."""
    TILINGS[op_type] = impl


def tiling_of(op: Operation) -> TilingInterface | None:
    return TILINGS.get(type(op))


register_tiling(linalg.GenericOp, GenericTiling())
register_tiling(linalg.FillOp, NamedOpTiling())
register_tiling(linalg.MatmulOp, NamedOpTiling())
register_tiling(linalg.TransposeOp, TransposeTiling())
register_tiling(linalg.BroadcastOp, BroadcastTiling())
register_tiling(linalg.Conv2DNchwFchwOp, ConvTiling())
register_tiling(tensor.PadOp, PadTiling())


__all__ = [
    "Linear",
    "LoopDim",
    "NotTileable",
    "Tile",
    "TileBuilder",
    "TilingInterface",
    "access_slice",
    "register_tiling",
    "tiling_of",
]
