"""DMA selection for `loop-to-npu`: a copy between two views becomes `npu.dma`s on the engine serving
the two spaces.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, SSAValue

from ziggurat.diagnostics import error_at
from ziggurat.dialects.npu import DmaOp, row_major_strides
from ziggurat.lowering.loop_to_npu_views import (
    Emitter,
    View,
    group_extent,
    loop_over,
    merged_groups,
    squeezed,
)
from ziggurat.machine import DmaEngine, Machine


def engine_for(op: Operation, machine: Machine, src: View, dst: View, pad: bool) -> DmaEngine:
    """The engine moving `src` to `dst`, or an error at `op` saying what the machine lacks."""
    engine = machine.dma_for(src.space, dst.space)
    if engine is None:
        paths = ", ".join(f"{a}->{b}" for e in machine.dmas.values() for a, b in e.paths)
        raise error_at(
            op,
            f"{op.name}: machine '{machine.name}' has no DMA engine from '{src.space}' to '{dst.space}' "
            f"(its paths: {paths})",
        )
    src_type, dst_type = src.base_type.get_element_type(), dst.base_type.get_element_type()
    for needed, able, what in (
        (src_type != dst_type, engine.cast, f"cast {src_type} to {dst_type}"),
        (pad, engine.pad, "pad"),
    ):
        if needed and not able:
            raise error_at(
                op,
                f"{op.name}: engine '{engine.name}' of machine '{machine.name}' cannot {what} in flight "
                f"from '{src.space}' to '{dst.space}'",
            )
    return engine


def emit_dma(
    emitter: Emitter,
    op: Operation,
    machine: Machine,
    src: View,
    dst: View,
    pad: Sequence[tuple[int, int]] | None = None,
    pad_value: float | None = None,
) -> None:
    """DMAs copying view `src` to view `dst` (`dst` has `src`'s shape plus `pad`).

    Unit dimensions are dropped and, when the engine moves fewer dimensions than
    remain, dimensions that both views walk contiguously are merged (a 4-d copy of
    whole rows is one 2-d DMA); what still has more dimensions than the engine
    moves is split into `scf.for` loops of DMAs over the outer dimensions.
    """
    pad = list(pad) if pad is not None else [(0, 0)] * len(src.dims)
    padded = [lo > 0 or hi > 0 for lo, hi in pad]
    engine = engine_for(op, machine, src, dst, any(padded))
    kept = [size != 1 or p for size, p in zip(src.shape, padded)]
    views = squeezed([src, dst], keep=padded)
    pad = [p for p, k in zip(pad, kept) if k]
    padded = [p for p, k in zip(padded, kept) if k]
    groups = [[dim] for dim in range(len(views[0].dims))]
    if (
        len(groups) > engine.max_dims
    ):  # merge only when needed: unmerged windows read like their views
        groups = merged_groups(views, fixed=padded)
    looped = loop_groups(views, groups, padded, engine.max_dims)
    if looped is None:
        raise error_at(
            op,
            f"{op.name}: engine '{engine.name}' of machine '{machine.name}' moves at most "
            f"{engine.max_dims}-d windows and cannot pad the dimensions split into loops",
        )
    emitter, (src, dst) = loop_over(emitter, views, [dim for group in looped for dim in group])
    moved = [group for group in groups if group not in looped]
    extents = [group_extent([src, dst], group) for group in moved] or [(1, [1, 1])]
    shape = [size for size, _ in extents]
    src_strides = [strides[0] for _, strides in extents]
    dst_strides = [strides[1] for _, strides in extents]
    inner_pad = [pad[group[0]] for group in moved]
    src_indices, dst_indices = emitter.indices(src), emitter.indices(dst)
    dst_shape = [size + lo + hi for size, (lo, hi) in zip(shape, inner_pad)] if inner_pad else shape
    emitter.insert(
        DmaOp(
            engine.name,
            src.base,
            src_indices,
            dst.base,
            dst_indices,
            shape,
            src_strides=explicit_strides(src.base_type, src_indices, shape, src_strides),
            dst_strides=explicit_strides(dst.base_type, dst_indices, dst_shape, dst_strides),
            pad=[p for pair in inner_pad for p in pair] if any(map(any, inner_pad)) else None,
            pad_value=pad_value if any(map(any, inner_pad)) else None,
        )
    )


def loop_groups(
    views: Sequence[View], groups: list[list[int]], padded: Sequence[bool], max_dims: int
) -> list[list[int]] | None:
    """The groups to split into loops so that at most `max_dims` remain for one DMA: the
    unpadded ones whose extents multiply to the fewest DMAs (each costs the engine's setup),
    the outermost on a tie; None when too few groups are unpadded. An l0c tile of 128
    channels x 9 rows x 32 (28 valid) columns leaves for global memory in 9 DMAs (one per
    row, all channels), not 128 (one per channel)."""
    count = max(0, len(groups) - max_dims)
    candidates = [
        list(chosen)
        for chosen in itertools.combinations(groups, count)
        if not any(padded[dim] for group in chosen for dim in group)
    ]
    if not candidates:
        return None
    return min(
        candidates, key=lambda chosen: math.prod(group_extent(views, group)[0] for group in chosen)
    )


def explicit_strides(
    buffer: MemRefType,
    indices: Sequence[int | SSAValue],
    shape: Sequence[int],
    strides: Sequence[int],
) -> list[int] | None:
    """`strides`, or None where the npu.dma default (a tile of the buffer's innermost dims) means the same."""
    dims = buffer.get_shape()
    rank = len(shape)
    if rank > len(dims) or list(strides) != row_major_strides(dims)[-rank:]:
        return list(strides)
    for index, size, extent in zip(list(indices)[-rank:], shape, dims[-rank:]):
        if size > extent or isinstance(index, int) and index + size > extent:
            return list(strides)
    return None
