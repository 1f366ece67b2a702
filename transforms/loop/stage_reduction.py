"""`loop-stage-reduction{all=false}`: load a reduction loop's operand slices with one copy before the loop
(two-level tiling along the reduction, as Ascend's matmul's L1 tile holds several L0 tiles along K);
docs/lowering.md, section 5, says when it pays.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    UnitAttr,
)
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from ziggurat.diagnostics import error_at
from ziggurat.dialects.loop import CopyAsyncOp, CopyOp, WaitOp
from ziggurat.dialects.tile import STAGE_REDUCTION_ATTR
from ziggurat.ir.contraction import is_contraction
from ziggurat.locations import locate
from ziggurat.transforms.loop.buffers import (
    alloc_at_top,
    kept_dims,
    root_of,
    subview_lists,
    users_through_views,
)
from ziggurat.transforms.loop.double_buffer import constant_index, drop_dims_like, retype_subview
from ziggurat.transforms.loop.hoist_copies import defined_inside, invariant_definitions


@dataclass(frozen=True)
class _Slice:
    """The view chain of a staged copy's source: `views` from the base outwards, the first one
    offset by the induction variable; `dims[i]` is the dim the loop walks in view i's unreduced
    sizes, and `dims[-1]` that dim in the last view's (possibly rank-reduced) result."""

    views: list[memref.SubviewOp]
    dims: list[int]


def _slice_of(source: SSAValue, loop: scf.ForOp, step: int) -> _Slice | None:
    """The chain of subviews that gives `source` its loop-dependent offset, if it is one this pass stages."""
    views: list[memref.SubviewOp] = []
    value = source
    while defined_inside(loop, value):
        if not isinstance(value.owner, memref.SubviewOp):
            return None
        views.append(value.owner)
        value = value.owner.source
    views.reverse()
    if not views:
        return None
    iv = loop.body.block.args[0]
    offsets, sizes, strides = subview_lists(views[0])
    if strides != [1] * len(strides) or views[0].sizes:
        return None
    walked = [d for d, offset in enumerate(offsets) if offset is iv]
    others = [o for o in offsets if isinstance(o, SSAValue) and o is not iv]
    if (
        len(walked) != 1
        or sizes[walked[0]] != step
        or not all(invariant_definitions(o, loop, []) for o in others)
    ):
        return None
    if any(view.offsets or view.sizes or view.strides for view in views[1:]):
        return None
    dims = walked
    for view in views:
        dims.append(kept_dims(subview_lists(view)[1], view.result.type.get_shape()).index(dims[-1]))
    return _Slice(views, dims)


def _readers_are_copies(buffer: SSAValue, loop: scf.ForOp, copy: Operation) -> bool:
    """Whether, in `loop`, only `copy` writes `buffer` and only other copies read it: every other
    user there (through views, `users_through_views`) must be a copy whose source is that view."""
    for user, view in users_through_views(buffer):
        if not loop.is_ancestor(user) or user is copy:
            continue
        if not isinstance(user, CopyOp | CopyAsyncOp) or user.source is not view:
            return False
    return True


def _widened_type(memref_type: MemRefType, dim: int, factor: int) -> MemRefType:
    shape = list(memref_type.get_shape())
    shape[dim] *= factor
    return MemRefType(memref_type.element_type, shape, memory_space=memref_type.memory_space)


def _insert(op: Operation, at: InsertPoint) -> None:
    """Insert `op` located where the ops around it are (the layer the copy belongs to)."""
    Rewriter.insert_op(op, at)
    anchor = at.insert_before if at.insert_before is not None else at.block.parent_op()
    if anchor is not None:
        locate(op, anchor.location)


def _index(value: int, at: InsertPoint) -> SSAValue:
    constant = arith.ConstantOp(IntegerAttr(value, IndexType()))
    _insert(constant, at)
    return constant.result


def _wide_source(found: _Slice, loop: scf.ForOp, lb: int, trips: int) -> SSAValue:
    """The views of `found` over the loop's whole range, built before the loop."""
    at = InsertPoint.before(loop)
    mapping: dict[SSAValue, SSAValue] = {}
    first = found.views[0]
    offsets, sizes, strides = subview_lists(first)
    definitions: list[Operation] = []
    for offset in offsets:
        if isinstance(offset, SSAValue) and offset is not loop.body.block.args[0]:
            invariant_definitions(offset, loop, definitions)
    for op in definitions:
        clone = op.clone(value_mapper=mapping)
        _insert(clone, at)
        mapping.update(zip(op.results, clone.results))
    iv = loop.body.block.args[0]
    offsets = [
        lb if o is iv else mapping.get(o, o) if isinstance(o, SSAValue) else o for o in offsets
    ]
    value = first.source
    for view, dim, result_dim in zip(found.views, found.dims, found.dims[1:]):
        if view is not first:
            offsets, sizes, strides = subview_lists(view)
        sizes = list(sizes)
        sizes[dim] *= trips
        full = memref.SubviewOp.infer_result_type(value.type, offsets, sizes, strides)
        reduced_shape = list(view.result.type.get_shape())
        reduced_shape[result_dim] *= trips
        reduced = MemRefType(full.element_type, reduced_shape, memory_space=full.memory_space)
        result_type = drop_dims_like(full, reduced)
        dynamic = [o for o in offsets if isinstance(o, SSAValue)]
        static_offsets = [DYNAMIC_INDEX if isinstance(o, SSAValue) else o for o in offsets]
        wide = memref.SubviewOp(value, dynamic, [], [], static_offsets, sizes, strides, result_type)
        _insert(wide, at)
        value = wide.result
    return value


def _stage(copy: CopyOp | CopyAsyncOp, loop: scf.ForOp, function: func.FuncOp) -> None:
    """Stage `copy` before `loop` where the conditions of `StageReductionPass` hold; else leave it."""
    lb, ub, step = (constant_index(v) for v in (loop.lb, loop.ub, loop.step))
    if lb is None or ub is None or step is None or step <= 0 or (ub - lb) % step:
        return
    trips = (ub - lb) // step
    destination = copy.destination
    if (
        trips < 2
        or not isinstance(destination.owner, memref.AllocOp)
        or root_of(destination) is not destination
    ):
        return
    if isinstance(copy, CopyAsyncOp) and not all(
        isinstance(u.operation, WaitOp) for u in copy.token.uses
    ):
        return
    found = _slice_of(copy.source, loop, step)
    if found is None or not _readers_are_copies(destination, loop, copy):
        return
    dim = found.dims[-1]
    pad = (
        copy.pad.get_values()
        if copy.pad is not None
        else [0] * (2 * len(copy.source.type.get_shape()))
    )
    if pad[2 * dim] or pad[2 * dim + 1]:
        return
    wide_source = _wide_source(found, loop, lb, trips)
    wide_type = _widened_type(destination.type, dim, trips)
    wide = alloc_at_top(function, wide_type, destination.owner.location)
    at = InsertPoint.before(loop)
    properties = dict(copy.properties)
    if isinstance(copy, CopyAsyncOp):
        staged = CopyAsyncOp.create(
            operands=[wide_source, wide], result_types=[copy.token.type], properties=properties
        )
        _insert(staged, at)
        _insert(WaitOp(staged.token), at)
        for use in list(copy.token.uses):
            Rewriter.erase_op(use.operation)
    else:
        _insert(CopyOp.create(operands=[wide_source, wide], properties=properties), at)
    # each step reads its slice of the staged buffer where it read the buffer its copy filled
    inside = InsertPoint.before(copy)
    iv = loop.body.block.args[0]
    if lb:
        start = arith.SubiOp(iv, _index(lb, inside))
        _insert(start, inside)
        iv = start.result
    shape = destination.type.get_shape()
    offsets: list[SSAValue | int] = [iv if d == dim else 0 for d in range(len(shape))]
    view_type = memref.SubviewOp.infer_result_type(
        wide_type, offsets, list(shape), [1] * len(shape)
    )
    static_offsets = [DYNAMIC_INDEX if d == dim else 0 for d in range(len(shape))]
    step_view = memref.SubviewOp(
        wide, [iv], [], [], static_offsets, list(shape), [1] * len(shape), view_type
    )
    _insert(step_view, inside)
    Rewriter.erase_op(copy)
    for use in list(destination.uses):
        if loop.is_ancestor(use.operation):
            use.operation.operands[use.index] = step_view.result
            if isinstance(use.operation, memref.SubviewOp):
                _retype_views(use.operation)
    if not destination.uses:
        Rewriter.erase_op(destination.owner)
    for op in found.views[::-1]:
        if not op.result.uses:
            Rewriter.erase_op(op)


def _retype_views(view: memref.SubviewOp) -> None:
    """Give `view`, and the subviews of it, the layout of their new source."""
    retype_subview(view, {})
    for use in list(view.result.uses):
        if isinstance(use.operation, memref.SubviewOp) and use.index == 0:
            _retype_views(use.operation)


def _marked(op: Operation) -> bool:
    mark = op.attributes.get(STAGE_REDUCTION_ATTR)
    if mark is not None and not isinstance(mark, UnitAttr):
        raise error_at(
            op, f"{STAGE_REDUCTION_ATTR} is a unit attribute (present or absent), got {mark}"
        )
    return mark is not None


def _staged_loops(module: ModuleOp, every: bool) -> list[scf.ForOp]:
    loops = []
    for loop in module.walk():
        if not isinstance(loop, scf.ForOp):
            continue
        ops = list(loop.body.block.ops)
        if any(_marked(op) or every and is_contraction(op) for op in ops):
            loops.append(loop)
    return loops


@dataclass(frozen=True)
class StageReductionPass(ModulePass):
    """Copy a reduction loop's operand slices into one local buffer before the loop.

    It applies to the loops that directly hold a linalg op marked
    `tile.stage_reduction` (carried from the group's root graph op; `ziggurat-tune`
    decides), or with `all=true` every loop directly holding a contraction. A copy
    in such a loop is staged when its destination is a whole buffer that nothing
    else in the loop writes and only other copies read (a staging hop); its source
    is a unit-stride `memref.subview` of a buffer defined outside the loop, offset
    by the induction variable in exactly one dim with the loop's step as size there
    (the slices tile the loop's range) and loop-invariant elsewhere; the copy does
    not pad along that dim; and the loop's bounds are constants. The copy then
    moves before the loop into a buffer as long as the loop's range, and each step
    reads its slice of it.

        scf.for %k = %c0 to %c256 step %c128 {
          %a = memref.subview %A[0, %k] [64, 128] [1, 1] : memref<64x256xf16, "gm"> to memref<64x128xf16, ..., "gm">
          %t = loop.copy_async %a -> %l1 : ... -> memref<64x128xf16, "l1">
          loop.wait %t : !loop.token
          %u = loop.copy_async %l1 -> %l0a : ...
          ...
        }

    becomes

        %a = memref.subview %A[0, 0] [64, 256] [1, 1] : memref<64x256xf16, "gm"> to memref<64x256xf16, ..., "gm">
        %t = loop.copy_async %a -> %l1_all : ... -> memref<64x256xf16, "l1">
        loop.wait %t : !loop.token
        scf.for %k = %c0 to %c256 step %c128 {
          %s = memref.subview %l1_all[0, %k] [64, 128] [1, 1] : ... to memref<64x128xf16, ..., "l1">
          %u = loop.copy_async %s -> %l0a : ...
          ...
        }

    Options: `all` (default false): stage in every loop holding a contraction, not only
    those of roots marked `tile.stage_reduction`.
    """

    name = "loop-stage-reduction"

    all: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for loop in _staged_loops(op, self.all):
            function = loop.parent_op()
            while not isinstance(function, func.FuncOp):
                function = function.parent_op()
            for copy in [c for c in loop.body.block.ops if isinstance(c, CopyOp | CopyAsyncOp)]:
                _stage(copy, loop, function)
