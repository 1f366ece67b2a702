"""Buffers at the loop level: memory spaces of memref types, views and their roots, reads and writes.

Shared by `loop-promote-to-memory-space`, `loop-hoist-copies` and `loop-double-buffer`. A
memref's memory space is a plain string attribute (`memref<4x4xf16, "ub">`);
one without a space is *unplaced* (docs/lowering.md, "Memory spaces").
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    MemRefType,
    NoneAttr,
    StridedLayoutAttr,
    StringAttr,
)
from xdsl.dialects.func import FuncOp
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from ziggurat.dialects.loop import CopyAsyncOp, CopyOp

VIEW_OPS = (
    memref.SubviewOp,
    memref.CollapseShapeOp,
    memref.ExpandShapeOp,
    memref.ReinterpretCastOp,
    memref.CastOp,
)
"""Ops whose memref result aliases their first operand."""


def space_of(value: SSAValue) -> str | None:
    """The memory space of a memref value, None when it is unplaced (or not a memref)."""
    memref_type = value.type
    if isinstance(memref_type, MemRefType) and isinstance(memref_type.memory_space, StringAttr):
        return memref_type.memory_space.data
    return None


def in_space(memref_type: MemRefType, space: str) -> MemRefType:
    """`memref_type` with its memory space replaced by `space`."""
    return MemRefType(
        memref_type.element_type, memref_type.get_shape(), memref_type.layout, StringAttr(space)
    )


def contiguous(element_type: Attribute, shape: Sequence[int], space: str | None) -> MemRefType:
    """A row-major memref type, the type of a local buffer."""
    return MemRefType(
        element_type, shape, NoneAttr(), StringAttr(space) if space is not None else NoneAttr()
    )


def byte_size(memref_type: MemRefType) -> int:
    bits = memref_type.element_type.bitwidth
    return math.prod(memref_type.get_shape()) * ((bits + 7) // 8)


def root_of(value: SSAValue) -> SSAValue:
    """The buffer a view looks into: the alloc result or function argument under every view op."""
    while isinstance(value.owner, VIEW_OPS):
        value = value.owner.operands[0]
    return value


def views_of(value: SSAValue) -> Iterator[SSAValue]:
    """Every view derived from `value` (transitively), `value` first."""
    yield value
    for use in list(value.uses):
        if isinstance(use.operation, VIEW_OPS) and use.index == 0:
            yield from views_of(use.operation.results[0])


def users_through_views(value: SSAValue) -> Iterator[tuple[Operation, SSAValue]]:
    """(user, the view it uses) for every non-view op that uses `value` or a view of it."""
    for view in views_of(value):
        for use in list(view.uses):
            if not (isinstance(use.operation, VIEW_OPS) and use.index == 0):
                yield use.operation, view


def move_to_space(value: SSAValue, space: str) -> None:
    """Retype `value` (a buffer) and all its views into `space`, keeping shapes and layouts."""
    for view in list(views_of(value)):
        assert isinstance(view.type, MemRefType)
        Rewriter.replace_value_with_new_type(view, in_space(view.type, space))


def valid_region(
    buffer: SSAValue, shape: Sequence[int], offsets: Sequence[int] | None = None
) -> memref.SubviewOp:
    """A subview of `shape` at `offsets` (default the origin) of a (padded) buffer, not inserted."""
    assert isinstance(buffer.type, MemRefType)
    return memref.SubviewOp.from_static_parameters(
        buffer, buffer.type, list(offsets or [0] * len(shape)), list(shape), [1] * len(shape)
    )


def written_buffers(op: Operation) -> list[SSAValue]:
    """The memref values `op` writes (linalg outputs, copy destinations, stores)."""
    if isinstance(op, LinalgStructuredOperation):
        return [v for v in op.outputs if isinstance(v.type, MemRefType)]
    if isinstance(op, CopyOp | CopyAsyncOp):
        return [op.destination]
    if isinstance(op, memref.StoreOp):
        return [op.memref]
    if isinstance(op, memref.CopyOp):
        return [op.destination]
    return []


def read_buffers(op: Operation) -> list[SSAValue]:
    """The memref values `op` reads."""
    if isinstance(op, LinalgStructuredOperation):
        return [v for v in op.operands if isinstance(v.type, MemRefType)]
    if isinstance(op, CopyOp | CopyAsyncOp):
        return [op.source]
    if isinstance(op, memref.LoadOp):
        return [op.memref]
    if isinstance(op, memref.CopyOp):
        return [op.source]
    return []


def alloc_at_top(
    func: FuncOp,
    memref_type: MemRefType,
    location: Attribute | None = None,
    among: Operation | None = None,
) -> SSAValue:
    """A new `memref.alloc` of `memref_type` after the allocs already at the top of `func`
    (located at its first user, `location`); `among`, one of those allocs, is where the scan for
    their end starts (`TopAllocs`)."""
    alloc = memref.AllocOp([], [], memref_type)
    if location is not None:
        alloc.location = location
    Rewriter.insert_op(alloc, _after_leading_allocs(func.body.block, among))
    return alloc.memref


@dataclass
class TopAllocs:
    """`alloc_at_top` for a pass that adds many allocs to `func`: the scan for the end of the
    allocs at its top resumes at the last alloc this inserted, so a function's thousands of allocs
    are walked once rather than once per new alloc. For a pass that inserts no other ops among
    those allocs (static views of them may follow them)."""

    func: FuncOp
    last: Operation | None = None

    def alloc(self, memref_type: MemRefType, location: Attribute | None = None) -> SSAValue:
        buffer = alloc_at_top(self.func, memref_type, location, self.last)
        self.last = buffer.owner
        return buffer


def hoist_allocs(func: FuncOp) -> None:
    """Move every static `memref.alloc` of `func` to its top, in program order (they have no operands)."""
    allocs = [op for op in func.walk() if isinstance(op, memref.AllocOp) and not op.operands]
    block = func.body.block
    for alloc in allocs:
        alloc.detach()
    first = block.first_op
    Rewriter.insert_op(allocs, InsertPoint.before(first) if first else InsertPoint.at_end(block))


def _after_leading_allocs(block: Block, among: Operation | None = None) -> InsertPoint:
    def leading(op: Operation) -> bool:
        return isinstance(op, memref.AllocOp) or _is_static_view_of_alloc(op)

    # `among` may have been erased or moved since it was inserted: then scan from the start
    if among is not None and among.parent_block() is block and leading(among):
        last, op = among, among.next_op
    else:
        last, op = None, block.first_op
    while op is not None and leading(op):
        last, op = op, op.next_op
    return InsertPoint.after(last) if last is not None else InsertPoint.at_start(block)


def _is_static_view_of_alloc(op: Operation) -> bool:
    # operands[0] is the source; a lone operand means no dynamic offsets. Both spare xDSL's
    # variadic-operand accessors, which are slow enough to dominate alloc_at_top's scan.
    if not isinstance(op, memref.SubviewOp):
        return False
    operands = op.operands
    return isinstance(operands[0].owner, memref.AllocOp) and (len(operands) == 1 or not op.offsets)


def strided_row_major(shape: Sequence[int]) -> list[int]:
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    return strides


def slot_view_type(memref_type: MemRefType, slot: int) -> MemRefType:
    """The type of slot `slot` of a `memref<N x shape>` buffer, as a rank-reduced subview."""
    shape = list(memref_type.get_shape())
    strides = strided_row_major(shape)
    return MemRefType(
        memref_type.element_type,
        shape[1:],
        StridedLayoutAttr(strides[1:], slot * strides[0]),
        memref_type.memory_space,
    )


def subview_lists(
    view: memref.SubviewOp,
) -> tuple[list[SSAValue | int], list[SSAValue | int], list[SSAValue | int]]:
    """A subview's offsets, sizes and strides, each a static int or its dynamic value (MLIR's mixed form)."""
    dynamic = (iter(view.offsets), iter(view.sizes), iter(view.strides))
    statics = (view.static_offsets, view.static_sizes, view.static_strides)
    offsets, sizes, strides = (
        [next(values) if v == DYNAMIC_INDEX else v for v in static.get_values()]
        for values, static in zip(dynamic, statics)
    )
    return offsets, sizes, strides


def kept_dims(sizes: Sequence[int], result_shape: Sequence[int]) -> list[int]:
    """The dims of a subview (of `sizes`) that its possibly rank-reduced result (of
    `result_shape`) keeps, matched left to right as MLIR does; the others are unit dims.
    A `1x128x1x1` view reduced to `1x128` keeps dims 0 and 1, not 1 and 3."""
    kept: list[int] = []
    for dim, size in enumerate(sizes):
        if len(kept) < len(result_shape) and size == result_shape[len(kept)]:
            kept.append(dim)
    return kept
