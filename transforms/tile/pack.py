"""`tile-pack{machine=NAME}`: matmul operands in the matrix unit's blocked (fractal) layout, for
machines whose matrix unit reads blocked operands.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import AffineMapAttr, ModuleOp, TensorType
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.transforms.dead_code_elimination import dce

from ziggurat.diagnostics import error_at
from ziggurat.dialects.tile import PackOp, UnpackOp, packed_shape
from ziggurat.ir.contraction import contraction_dims, is_contraction
from ziggurat.machine import Machine, load_machine
from ziggurat.transforms.tile.builders import PARALLEL, REDUCTION, scalar_attr
from ziggurat.transforms.tile.decompose_conv import on_tensors

Layout = tuple[list[int], list[int], list[int] | None]


# --------------------------------------------------------------------------- #
# Packing contractions
# --------------------------------------------------------------------------- #


def _positions(indexing: AffineMap) -> list[int]:
    return [e.position for e in indexing.results]


def innermost_matrix_dims(
    op: linalg.GenericOp, maps: list[AffineMap]
) -> tuple[int, int, int] | None:
    """(M, N, K) of the matrix instruction: the innermost M and K loops of the lhs and the innermost
    N loop of the rhs, by `contraction_dims`; None when a role is missing or a map is not a
    projected permutation."""
    dims = contraction_dims(op)
    if dims is None or not all(m.is_projected_permutation() for m in maps):
        return None
    lhs, rhs = _positions(maps[0]), _positions(maps[1])
    m_dims = [d for d in lhs if d in dims.m]
    k_dims = [d for d in lhs if d in dims.k and d in rhs]
    n_dims = [d for d in rhs if d in dims.n]
    if not (m_dims and n_dims and k_dims):
        return None
    return m_dims[-1], n_dims[-1], k_dims[-1]


def _zero(value: SSAValue, rewriter: PatternRewriter) -> SSAValue:
    zero = arith.ConstantOp(scalar_attr(0, value.type.get_element_type()))
    rewriter.insert(zero)
    return zero.result


def pack_value(value: SSAValue, layout: Layout, rewriter: PatternRewriter) -> SSAValue:
    positions, tiles, perm = layout
    shape = packed_shape(value.type.get_shape(), positions, tiles, perm)
    empty = tensor.EmptyOp([], TensorType(value.type.get_element_type(), shape))
    rewriter.insert(empty)
    padded = any(value.type.get_shape()[d] % t for d, t in zip(positions, tiles))
    padding = _zero(value, rewriter) if padded else None
    packed = PackOp(value, empty.tensor, positions, tiles, perm, padding)
    rewriter.insert(packed)
    return packed.result


@dataclass
class PackContraction(RewritePattern):
    """A matmul-like contraction on MxK, KxN and MxN blocks, its result unpacked."""

    machine: Machine

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: linalg.GenericOp, rewriter: PatternRewriter, /):
        if not on_tensors(op) or not is_contraction(op):
            return
        maps = [m.data for m in op.indexing_maps.data]
        roles = innermost_matrix_dims(op, maps)
        if roles is None:
            return
        for value in op.operands:
            if not value.type.has_static_shape():
                raise error_at(op, f"tile-pack: dynamic shape {value.type} is not supported")
        lhs, rhs, init = op.inputs[0], op.inputs[1], op.outputs[0]
        m, n, k = self.machine.matrix.instruction_shape(
            str(lhs.type.get_element_type()), str(init.type.get_element_type())
        )
        if (m, n, k) == (1, 1, 1):
            return
        dim_m, dim_n, dim_k = roles
        tiles = {dim_m: m, dim_n: n, dim_k: k}
        rank = maps[0].num_dims
        inner = {dim_m: rank, dim_n: rank + 1, dim_k: rank + 2}
        operands, new_maps = [], []
        for value, indexing, pair in zip(
            (lhs, rhs, init), maps, ((dim_m, dim_k), (dim_k, dim_n), (dim_m, dim_n))
        ):
            positions = [_positions(indexing).index(d) for d in pair]
            operands.append(
                pack_value(value, (positions, [tiles[d] for d in pair], None), rewriter)
            )
            results = (*indexing.results, *(AffineExpr.dimension(inner[d]) for d in pair))
            new_maps.append(AffineMap(rank + 3, 0, results))
        generic = linalg.GenericOp(
            operands[:2],
            [operands[2]],
            op.body.clone(),
            [AffineMapAttr(mp) for mp in new_maps],
            [*op.iterator_types.data, PARALLEL, PARALLEL, REDUCTION],
            [operands[2].type],
        )
        generic.attributes.update(op.attributes)
        rewriter.insert(generic)
        out_positions = [_positions(maps[2]).index(d) for d in (dim_m, dim_n)]
        empty = tensor.EmptyOp([], init.type)
        unpacked = UnpackOp(generic.results[0], empty.tensor, out_positions, [m, n])
        rewriter.replace(op, [empty, unpacked])


class GeneralizeMatmul(RewritePattern):
    """`linalg.matmul` as its generic, so that it packs like the others."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: linalg.MatmulOp, rewriter: PatternRewriter, /):
        if not on_tensors(op):
            return
        i, j, kk = (AffineExpr.dimension(d) for d in range(3))
        maps = [AffineMap(3, 0, r) for r in ((i, kk), (kk, j), (i, j))]
        generic = linalg.GenericOp(
            list(op.inputs),
            list(op.outputs),
            op.body.clone(),
            [AffineMapAttr(mp) for mp in maps],
            [PARALLEL, PARALLEL, REDUCTION],
            [r.type for r in op.results],
        )
        generic.attributes.update(op.attributes)
        rewriter.replace(op, generic)


# --------------------------------------------------------------------------- #
# Keeping data blocked
# --------------------------------------------------------------------------- #


def _divides(shape, layout: Layout) -> bool:
    positions, tiles, _ = layout
    return all(shape[d] % t == 0 for d, t in zip(positions, tiles))


class CancelUnpackOfPack(RewritePattern):
    """unpack(pack(x)) is x when both use one layout."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: UnpackOp, rewriter: PatternRewriter, /):
        pack = op.source.owner
        if isinstance(pack, PackOp) and pack.layout() == op.layout():
            if pack.source.type == op.result.type:
                rewriter.replace(op, [], [pack.source])


class CancelPackOfUnpack(RewritePattern):
    """pack(unpack(x)) is x when both use one layout and no tile is padded (the
    padding of x may no longer hold the padding value)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PackOp, rewriter: PatternRewriter, /):
        unpack = op.source.owner
        if not isinstance(unpack, UnpackOp) or unpack.layout() != op.layout():
            return
        if unpack.source.type == op.result.type and _divides(
            op.source.type.get_shape(), op.layout()
        ):
            rewriter.replace(op, [], [unpack.source])


def _pads_with(op: PackOp, value: SSAValue) -> bool:
    """Whether `op` pads with `value` (or does not pad)."""
    padding = op.padding_value
    if padding is None or padding == value:
        return True
    constants = [v.owner for v in (padding, value)]
    return all(isinstance(c, arith.ConstantOp) for c in constants) and (
        constants[0].value == constants[1].value
    )


class PackFill(RewritePattern):
    """pack(fill(c)) is a fill of the packed tensor (the padding holds c then, which
    only matters in the padding, which unpack drops)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PackOp, rewriter: PatternRewriter, /):
        fill = op.source.owner
        if isinstance(fill, linalg.FillOp) and _pads_with(op, fill.inputs[0]):
            packed = linalg.FillOp(list(fill.inputs), [op.dest], [op.result.type])
            rewriter.replace(op, packed)
            if not fill.results[0].uses:
                rewriter.erase(fill)


def _is_elementwise_on_unpacked(op: linalg.GenericOp) -> UnpackOp | None:
    """The unpack that the tensor inputs of an identity-mapped elementwise generic
    all come from (one layout), or None."""
    if len(op.outputs) != 1 or any(it != PARALLEL for it in op.iterator_types.data):
        return None
    maps = [m.data for m in op.indexing_maps.data]
    tensors = [(v, mp) for v, mp in zip(op.inputs, maps) if isinstance(v.type, TensorType)]
    scalar_maps = [mp for v, mp in zip(op.inputs, maps) if not isinstance(v.type, TensorType)]
    if not tensors or any(mp.results for mp in scalar_maps) or op.body.block.args[-1].uses:
        return None
    unpacks = [v.owner for v, _ in tensors]
    if not all(isinstance(u, UnpackOp) for u in unpacks):
        return None
    first = unpacks[0]
    same = all(u.layout() == first.layout() and u.source.type == first.source.type for u in unpacks)
    identity = all(
        mp == AffineMap.identity(mp.num_dims) for mp in maps[-1:] + [mp for _, mp in tensors]
    )
    return first if same and identity else None


class SinkUnpack(RewritePattern):
    """elementwise(unpack(x)) -> unpack(elementwise(x)): compute on the blocks."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: linalg.GenericOp, rewriter: PatternRewriter, /):
        unpack = _is_elementwise_on_unpacked(op) if on_tensors(op) else None
        if unpack is None:
            return
        packed_type = unpack.source.type
        rank = packed_type.get_num_dims()
        inputs = [v.owner.source if isinstance(v.type, TensorType) else v for v in op.inputs]
        element_type = op.outputs[0].type.get_element_type()
        empty = tensor.EmptyOp([], TensorType(element_type, packed_type.get_shape()))
        maps = [
            AffineMap.identity(rank) if isinstance(v.type, TensorType) else AffineMap(rank, 0, ())
            for v in inputs
        ]
        generic = linalg.GenericOp(
            inputs,
            [empty.tensor],
            op.body.clone(),
            [AffineMapAttr(mp) for mp in (*maps, AffineMap.identity(rank))],
            [PARALLEL] * rank,
            [empty.tensor.type],
        )
        generic.attributes.update(op.attributes)
        positions, tiles, perm = unpack.layout()
        unpacked = UnpackOp(generic.results[0], op.outputs[0], positions, tiles, perm)
        rewriter.replace(op, [empty, generic, unpacked])


@dataclass(frozen=True)
class TilePackPass(ModulePass):
    """Pack matmul-like contractions' operands into the matrix unit's blocks and keep
    data blocked across the elementwise ops between them.

    Each matmul-like contraction (a generic whose maps are projected permutations,
    or a `linalg.matmul`) gets its operands packed with `tile.pack` into the blocks
    of one matrix instruction, `(m, n, k)` from the machine's matrix unit: the lhs
    in MxK blocks, the rhs in KxN, the accumulator in MxN, each over its innermost
    M, N and K dim (as Ascend's fractal `zZ`/`nZ` layouts). The contraction runs on
    the blocks and its result is unpacked; dims the block does not divide are
    padded with zeros. Then unpacks move below the elementwise generics that read
    them, a pack of a fill becomes a fill of the blocks, and `unpack(pack(x))` and
    (when nothing is padded) `pack(unpack(x))` cancel. A 1x1x1 matrix unit
    (systolic) gets nothing packed; contractions without an M, N or K dim are left
    alone.

        %c = linalg.generic {maps = [(i, j, k) -> (i, k), (i, j, k) -> (k, j), (i, j, k) -> (i, j)]}
               ins(%a, %b : tensor<32x48xf16>, tensor<48x64xf16>) outs(%acc : tensor<32x64xf32>)

    becomes (davinci: 16x16x16)

        %pa = tile.pack %a padding_value(%z : f16) inner_dims_pos = [0, 1] inner_tiles = [16, 16] into ...
              : tensor<32x48xf16> -> tensor<2x3x16x16xf16>
        %pb = tile.pack %b ... inner_dims_pos = [0, 1] inner_tiles = [16, 16] ... -> tensor<3x4x16x16xf16>
        %pc = tile.pack %acc ... -> tensor<2x4x16x16xf32>
        %c' = linalg.generic {maps = [(i, j, k, ii, jj, kk) -> (i, k, ii, kk), (...) -> (k, j, kk, jj),
                                      (...) -> (i, j, ii, jj)]} ins(%pa, %pb) outs(%pc)
        %c = tile.unpack %c' inner_dims_pos = [0, 1] inner_tiles = [16, 16] into ... -> tensor<32x64xf32>
    """

    name = "tile-pack"

    machine: str
    """A preset name (davinci, systolic, tensorcore) or a machine TOML file."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        machine = load_machine(self.machine)
        PatternRewriteWalker(GeneralizeMatmul(), apply_recursively=False).rewrite_module(op)
        PatternRewriteWalker(PackContraction(machine), apply_recursively=False).rewrite_module(op)
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [SinkUnpack(), CancelUnpackOfPack(), CancelPackOfUnpack(), PackFill()]
            )
        ).rewrite_module(op)
        dce(op)  # the unpacked inits and fills the packed ones replaced
