"""`tile-decompose-conv`: a convolution or pool (or a tile of one) as a chain of generics over the
window's points, so that every contraction left is matmul-like and every operand a strided slice
with static offsets.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import AffineMapAttr, ArrayAttr, MemRefType, ModuleOp, TensorType
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from ziggurat.diagnostics import error_at
from ziggurat.dtypes import is_float
from ziggurat.interpreters.tensor_interpreter import loop_ranges
from ziggurat.ir.contraction import is_contraction
from ziggurat.locations import Located
from ziggurat.transforms.tile.builders import PARALLEL, REDUCTION, expand_shape

PASS = "tile-decompose-conv"


# --------------------------------------------------------------------------- #
# Contractions
# --------------------------------------------------------------------------- #


def on_tensors(op: Operation) -> bool:
    """Whether `op` works on tensors (results, no memref operands): the tile-level
    passes leave loop-level (memref) ops alone."""
    return bool(op.results) and not any(isinstance(v.type, MemRefType) for v in op.operands)


def _conv_maps(op: linalg.Conv2DNchwFchwOp) -> list[AffineMap]:
    """The maps of `linalg.conv_2d_nchw_fchw` over (n, f, oh, ow, c, kh, kw)."""
    (sh, sw), (dh, dw) = (
        [int(v) for v in attr.get_values()] for attr in (op.strides, op.dilations)
    )
    n, f, oh, ow, c, kh, kw = (AffineExpr.dimension(i) for i in range(7))
    return [
        AffineMap(7, 0, (n, c, oh * sh + kh * dh, ow * sw + kw * dw)),
        AffineMap(7, 0, (f, c, kh, kw)),
        AffineMap(7, 0, (n, f, oh, ow)),
    ]


def _multiply_add_body(element_type) -> Region:
    block = Block(arg_types=[element_type] * 3)
    x, y, acc = block.args
    float_type = is_float(element_type)
    product = (arith.MulfOp if float_type else arith.MuliOp)(x, y)
    total = (arith.AddfOp if float_type else arith.AddiOp)(acc, product)
    block.add_ops([product, total, linalg.YieldOp(total)])
    return Region(block)


class GeneralizeConv2D(RewritePattern):
    """`linalg.conv_2d_nchw_fchw` as the generic contraction it stands for."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: linalg.Conv2DNchwFchwOp, rewriter: PatternRewriter, /):
        if not on_tensors(op):
            return
        _require_static(op)
        init = op.outputs[0]
        generic = linalg.GenericOp(
            list(op.inputs),
            [init],
            _multiply_add_body(init.type.get_element_type()),
            [AffineMapAttr(m) for m in _conv_maps(op)],
            [PARALLEL] * 4 + [REDUCTION] * 3,
            [init.type],
        )
        generic.attributes.update(op.attributes)
        rewriter.replace(op, generic)


def _require_static(op: Operation) -> None:
    for value in (*op.operands, *op.results):
        if isinstance(value.type, TensorType) and not value.type.has_static_shape():
            raise error_at(op, f"{PASS}: dynamic shape {value.type} is not supported")


# --------------------------------------------------------------------------- #
# Reading the maps
# --------------------------------------------------------------------------- #


def _used_dims(indexing: AffineMap) -> set[int]:
    """The dims that the results of `indexing` read."""
    return {d for expr in indexing.results for d in (_linear_terms(expr) or {})}


def _linear_terms(expr: AffineExpr) -> dict[int, int] | None:
    """`expr` as {dim: coefficient} when it is a sum of dims times constants."""
    if isinstance(expr, AffineDimExpr):
        return {expr.position: 1}
    if not isinstance(expr, AffineBinaryOpExpr):
        return None
    if expr.kind == AffineBinaryOpKind.Mul:
        dim, factor = expr.lhs, expr.rhs
        if isinstance(dim, AffineConstantExpr):
            dim, factor = factor, dim
        if isinstance(dim, AffineDimExpr) and isinstance(factor, AffineConstantExpr):
            return {dim.position: factor.value}
        return None
    if expr.kind == AffineBinaryOpKind.Add:
        lhs, rhs = _linear_terms(expr.lhs), _linear_terms(expr.rhs)
        if lhs is None or rhs is None or lhs.keys() & rhs.keys():
            return None
        return lhs | rhs
    return None


@dataclass(frozen=True)
class Access:
    """How one operand dimension is read: `outer * stride + window * dilation`, a
    plain dim (`window` None, `stride` 1), or the constant index `constant` (`outer` None)."""

    outer: int | None
    stride: int = 1
    window: int | None = None
    dilation: int = 1
    constant: int = 0


@dataclass
class Contraction:
    """The generic being decomposed: its loop extents and iterator kinds."""

    op: linalg.GenericOp
    extents: list[int]
    reductions: set[int]
    shared: frozenset[int] = frozenset()
    """The dims that every input reads (a group of a grouped conv: a batch dim)."""

    def fail(self, message: str):
        return error_at(self.op, f"{PASS}: {message}")

    def is_block(self, terms: dict[int, int], size: int) -> tuple[int, int] | None:
        """(outer, inner) when the sum is `outer * extent(inner) + inner` over the
        whole dimension: a split of it, not a window. A sum of a reduction and a
        parallel dim, one of them a unit dim, is still a window: `oh + kh` of a
        one-row tile is unrolled as in the other tiles, and so is the unit `kh`
        of a 1x1 conv (either split would make the unit dim one more K dim than
        the tile sizes planned for, which loop-promote-to-memory-space may then pad
        to round K up, leaving B no row-major tile). So is a window that tiles its
        input (a 2x2 stride-2 conv, `oh * 2 + kh`): its outer dim is an output row,
        which the weights do not read, and split, the input's K dims (c, kh, kw)
        would interleave with its rows and columns, no row-major tile either."""
        for outer, inner in itertools.permutations(terms, 2):
            if (
                outer in self.shared
                and not (
                    self.extents[inner] == 1
                    and (outer in self.reductions) != (inner in self.reductions)
                )
                and terms[inner] == 1
                and terms[outer] == self.extents[inner]
                and size == self.extents[outer] * self.extents[inner]
            ):
                return outer, inner
        return None

    def access(self, expr: AffineExpr) -> Access:
        if isinstance(expr, AffineConstantExpr):  # a unit dim read at 0
            return Access(None, constant=expr.value)
        terms = _linear_terms(expr)
        if terms is None or len(terms) > 2:
            raise self.fail(f"cannot read the map result {expr} as a window")
        if len(terms) == 1:
            ((dim, factor),) = terms.items()
            if dim in self.reductions and factor != 1:
                raise self.fail(f"cannot read the map result {expr} as a window")
            return Access(dim, stride=factor)
        windows = [d for d in terms if d in self.reductions]
        outers = [d for d in terms if d not in self.reductions]
        if len(windows) != 1 or len(outers) != 1:
            raise self.fail(f"{expr} sums two {'reduction' if windows else 'parallel'} dims")
        outer, window = outers[0], windows[0]
        return Access(outer, terms[outer], window, terms[window])


# --------------------------------------------------------------------------- #
# Rewriting
# --------------------------------------------------------------------------- #


def _split_blocks(
    contraction: Contraction, value: SSAValue, indexing: AffineMap, rewriter: PatternRewriter
) -> tuple[SSAValue, AffineMap]:
    """`value` with each `outer * b + inner` dimension expanded into (outer, inner)."""
    shape = value.type.get_shape()
    groups, results, sizes = [], [], []
    for expr, size in zip(indexing.results, shape):
        terms = _linear_terms(expr)
        block = None if terms is None or len(terms) != 2 else contraction.is_block(terms, size)
        if block is None:
            groups.append([len(sizes)])
            results.append(expr)
            sizes.append(size)
            continue
        groups.append([len(sizes), len(sizes) + 1])
        results.extend(AffineExpr.dimension(d) for d in block)
        sizes.extend(contraction.extents[d] for d in block)
    if len(sizes) == len(shape):
        return value, indexing
    expanded = expand_shape(value, groups, sizes)
    rewriter.insert(expanded)
    return expanded.results[0], AffineMap(indexing.num_dims, 0, tuple(results))


def _window_slice(
    contraction: Contraction,
    value: SSAValue,
    accesses: Sequence[Access],
    point: dict[int, int],
    renumber: dict[int, int],
    rewriter: PatternRewriter,
) -> tuple[SSAValue, AffineMap]:
    """The slice of `value` one window point reads, and its map over the kept dims."""
    offsets, sizes, strides, results, kept_shape = [], [], [], [], []
    for access, _size in zip(accesses, value.type.get_shape()):
        if access.outer is None or access.outer in point:  # one index, dropped
            offsets.append(point.get(access.outer, access.constant))
            sizes.append(1)
            strides.append(1)
            continue
        window_offset = point[access.window] * access.dilation if access.window is not None else 0
        extent = contraction.extents[access.outer]
        offsets.append(window_offset)
        sizes.append(extent)
        strides.append(access.stride)
        results.append(AffineExpr.dimension(renumber[access.outer]))
        kept_shape.append(extent)
    indexing = AffineMap(len(renumber), 0, tuple(results))
    whole = list(value.type.get_shape())
    if kept_shape == whole and set(strides) <= {1} and not any(offsets):
        return value, indexing
    result_type = TensorType(value.type.get_element_type(), kept_shape)
    sliced = tensor.ExtractSliceOp(value, offsets, sizes, strides, result_type)
    rewriter.insert(sliced)
    return sliced.result, indexing


def _is_windowed(op: linalg.GenericOp) -> bool:
    return not all(m.data.is_projected_permutation() for m in op.indexing_maps.data)


class DecomposeConvolution(RewritePattern):
    """One step per window point (a matmul-like contraction for a convolution, an
    elementwise op for a pool), chained through the accumulator."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: linalg.GenericOp, rewriter: PatternRewriter, /):
        if not on_tensors(op) or len(op.outputs) != 1 or not _is_windowed(op):
            return
        _require_static(op)
        contraction = Contraction(
            op,
            loop_ranges(op, [v.type.get_shape() for v in op.operands]),
            {d for d, it in enumerate(op.iterator_types.data) if it.data == REDUCTION.data},
        )
        maps = [m.data for m in op.indexing_maps.data]
        contraction.shared = frozenset.intersection(
            *(frozenset(_used_dims(m)) for m in maps[: len(op.inputs)])
        )
        if not maps[-1].is_projected_permutation():
            raise contraction.fail(f"output map {maps[-1]} is not a projected permutation")
        # A pool keeps its windows even where they tile the input: split into blocks
        # it would still reduce two dims at once, which vector units do not.
        inputs = [
            _split_blocks(contraction, v, m, rewriter) if is_contraction(op) else (v, m)
            for v, m in zip(op.inputs, maps[: len(op.inputs)])
        ]
        accesses = [[contraction.access(e) for e in m.results] for _, m in inputs]
        windows = sorted({a.window for row in accesses for a in row if a.window is not None})
        kept = [d for d in range(len(contraction.extents)) if d not in windows]
        renumber = {d: i for i, d in enumerate(kept)}
        out_map = AffineMap(
            len(kept),
            0,
            tuple(AffineExpr.dimension(renumber[e.position]) for e in maps[-1].results),
        )
        iterators = [op.iterator_types.data[d] for d in kept]
        accumulator = op.outputs[0]
        # A pool's window-shape operand only gives the window dims their extent.
        read = [i for i, arg in enumerate(op.body.block.args[: len(inputs)]) if arg.uses]
        for values in itertools.product(*(range(contraction.extents[w]) for w in windows)):
            point = dict(zip(windows, values))
            sliced = [
                _window_slice(contraction, inputs[i][0], accesses[i], point, renumber, rewriter)
                for i in read
            ]
            body = op.body.clone()
            for i in reversed(range(len(inputs))):
                if i not in read:
                    body.block.erase_arg(body.block.args[i])
            step = linalg.GenericOp(
                [v for v, _ in sliced],
                [accumulator],
                body,
                [AffineMapAttr(m) for _, m in sliced] + [AffineMapAttr(out_map)],
                ArrayAttr(iterators),
                [accumulator.type],
            )
            step.attributes.update(op.attributes)
            rewriter.insert(step)
            accumulator = step.results[0]
        rewriter.replace(op, [], [accumulator])


@dataclass(frozen=True)
class TileDecomposeConvPass(ModulePass):
    """Every windowed generic (convolutions, pools and their tiles) as a chain, over
    the window's points, of generics on strided slices: matmul-like contractions
    for a convolution, elementwise ops for a pool.

    A generic whose input maps hold window sums, `d3 * s + d6 * r` (output position
    times stride plus window position times dilation), becomes one generic per
    point of the window, unrolled, chained through the accumulator in row-major
    window order; each operand is a `tensor.extract_slice` with static offsets and
    strides `[.., s, s]`. `linalg.conv_2d_nchw_fchw` is read as the generic it
    stands for. A sum `d1 * b + d5` whose second dim spans exactly `b` and whose
    first every input reads (a group times its channels) is a split, not a window:
    `tensor.expand_shape` splits the operand's dim. Afterwards every map of these
    contractions is a projected permutation, so each dim is batch, M, N or K.

        %y = linalg.generic {maps = [(n, g, o, oh, ow, c, kh, kw) -> (n, g * 4 + c, oh * 2 + kh, ow * 2 + kw),
                                     (n, g, o, oh, ow, c, kh, kw) -> (g * 6 + o, c, kh, kw), ...]}
               ins(%x, %w : tensor<1x4x10x10xf16>, tensor<6x4x3x3xf16>) outs(%acc : tensor<1x1x6x4x4xf32>)

    becomes, for each (kh, kw) in 3x3,

        %xe = tensor.expand_shape %x [[0], [1, 2], [3], [4]] : ... into tensor<1x1x4x10x10xf16>
        %we = tensor.expand_shape %w [[0, 1], [2], [3], [4]] : ... into tensor<1x6x4x3x3xf16>
        %xs = tensor.extract_slice %xe[0, 0, 0, kh, kw] [1, 1, 4, 4, 4] [1, 1, 1, 2, 2]
        %ws = tensor.extract_slice %we[0, 0, 0, kh, kw] [1, 6, 4, 1, 1] [1, 1, 1, 1, 1] : ... to tensor<1x6x4xf16>
        %acc1 = linalg.generic {maps = [(n, g, o, oh, ow, c) -> (n, g, c, oh, ow),
                                        (n, g, o, oh, ow, c) -> (g, o, c), ...]} ins(%xs, %ws) outs(%acc)

    Refused at the op: dynamic shapes, and maps with sums it cannot read (three
    terms, constants, `mod`, ...).
    """

    name = "tile-decompose-conv"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(Located(GeneralizeConv2D()), apply_recursively=False).rewrite_module(
            op
        )
        PatternRewriteWalker(
            Located(DecomposeConvolution()), apply_recursively=False
        ).rewrite_module(op)
