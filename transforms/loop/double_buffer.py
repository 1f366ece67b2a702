"""`loop-double-buffer{depth=2, machine=NAME?}`: one buffer slot per stage for the copies inside loops, so
that the copies of one iteration overlap the compute of the previous one (docs/lowering.md, section 5).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, ModuleOp, StridedLayoutAttr
from xdsl.dialects.func import FuncOp
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from ziggurat.diagnostics import error_at
from ziggurat.dialects.loop import CopyAsyncOp, CopyOp
from ziggurat.dialects.tile import BUFFERING_ATTR
from ziggurat.locations import locate
from ziggurat.machine import Machine, load_machine
from ziggurat.transforms.loop.buffers import (
    byte_size,
    kept_dims,
    root_of,
    slot_view_type,
    space_of,
    subview_lists,
    users_through_views,
)


def constant_index(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def trip_count(loop: scf.ForOp) -> int | None:
    bounds = [constant_index(v) for v in (loop.lb, loop.ub, loop.step)]
    if None in bounds or bounds[2] <= 0:
        return None
    lb, ub, step = bounds
    return max(0, -(-(ub - lb) // step))


def _index(value: int) -> arith.ConstantOp:
    return arith.ConstantOp(IntegerAttr(value, IndexType()))


def retype_subview(view: memref.SubviewOp, mapping: dict[SSAValue, SSAValue]) -> None:
    """Give a cloned subview the layout of its (possibly new, slotted) source; `mapping`
    (original value -> clone) follows the retyped result."""
    source_type = view.source.type
    assert isinstance(source_type, MemRefType)
    full_type = memref.SubviewOp.infer_result_type(source_type, *subview_lists(view))
    new_type = drop_dims_like(full_type, view.result.type)
    if new_type != view.result.type:
        old = view.result
        new = Rewriter.replace_value_with_new_type(old, new_type)
        for original, clone in mapping.items():
            if clone is old:
                mapping[original] = new


def drop_dims_like(full_type: MemRefType, reduced_type: MemRefType) -> MemRefType:
    """`full_type` (a subview's unreduced result) less the unit dims that `reduced_type`
    (the view's own, possibly rank-reduced, result) dropped; not every unit dim."""
    strides = full_type.get_strides()
    assert strides is not None
    kept = kept_dims(full_type.get_shape(), reduced_type.get_shape())
    shape = [full_type.get_shape()[d] for d in kept]
    layout = StridedLayoutAttr([strides[d] for d in kept], full_type.get_offset())
    return MemRefType(full_type.element_type, shape, layout, full_type.memory_space)


def _ops_between(first: Operation | None, end: Operation | None) -> Iterator[Operation]:
    """The ops from `first` up to `end` (excluded; None: the end of the block)."""
    while first is not None and first is not end:
        yield first
        first = first.next_op


class LiveBytes:
    """Per memory space, the bytes of the allocs live at each top-level op of a function: an
    alloc is live from the first to the last top-level op that uses it or a view of it, which
    holds npu-plan-memory's live range of it (a superset: what fits here fits there, fragmentation
    aside)."""

    def __init__(self, func: FuncOp):
        self.block = func.body.block
        self.position = {op: i for i, op in enumerate(self.block.ops)}
        self.bytes: dict[str | None, list[int]] = {}
        for op in func.walk():
            if isinstance(op, memref.AllocOp):
                self._add(op.memref)

    def _add(self, buffer: SSAValue) -> None:
        positions = [self.at(user) for user, _ in users_through_views(buffer)]
        if not positions:
            return
        live = self.bytes.setdefault(space_of(buffer), [0] * len(self.position))
        size = byte_size(buffer.type)
        for position in range(min(positions), max(positions) + 1):
            live[position] += size

    def at(self, op: Operation) -> int:
        """The position of the top-level op that is or holds `op`."""
        top = self.block.find_ancestor_op_in_block(op)
        assert top is not None
        return self.position[top]

    def live(self, space: str | None, position: int) -> int:
        live = self.bytes.get(space)
        return live[position] if live else 0

    def grow(self, buffer: SSAValue, position: int, extra: int) -> None:
        self.bytes.setdefault(space_of(buffer), [0] * len(self.position))[position] += extra

    def replaced(self, position: int, ops: Sequence[Operation]) -> None:
        """`ops` now stand at `position` (a top-level loop unrolled into them)."""
        for op in ops:
            self.position[op] = position


def loop_depth(loop: scf.ForOp, default: int) -> int:
    """`tile.buffering` of the root ops in `loop` (the largest, should groups differ), else `default`."""
    depths = []
    for op in loop.body.walk():
        attribute = op.attributes.get(BUFFERING_ATTR)
        if attribute is None:
            continue
        if not isinstance(attribute, IntegerAttr) or attribute.value.data < 1:
            raise error_at(op, f"{BUFFERING_ATTR} must be an integer >= 1, got {attribute}")
        depths.append(attribute.value.data)
    return max(depths, default=default)


class _DoubleBuffer:
    def __init__(self, depth: int, machine: Machine | None):
        self.default_depth = depth
        self.depth = depth
        """The slots of the loop being transformed (`loop_depth`)."""
        self.machine = machine
        self.multi: set[SSAValue] = set()
        """Allocs that already have their slots."""
        self.live: LiveBytes | None = None
        """The function's live bytes, kept up to date (`account`) rather than walked
        again for every loop."""

    def run(self, func: FuncOp) -> None:
        for loop in [op for op in func.walk(region_first=True) if isinstance(op, scf.ForOp)]:
            self.depth = loop_depth(loop, self.default_depth)
            trips = trip_count(loop)
            if trips is None or trips < self.depth or self.depth < 2:
                continue
            buffers = self.candidates(loop, func)
            if buffers:
                cloned_allocs = any(isinstance(op, memref.AllocOp) for op in loop.body.walk())
                position = None if self.live is None else self.live.at(loop)
                top_level = loop.parent_block() is func.body.block
                before, after = loop.prev_op, loop.next_op
                slots = {b: self.split(b) for b in buffers}
                self.unroll(loop, trips, slots)
                if top_level and self.live is not None and position is not None:
                    first = func.body.block.first_op if before is None else before.next_op
                    self.live.replaced(position, list(_ops_between(first, after)))
                self.account(buffers, cloned_allocs, position)

    def account(
        self, buffers: Sequence[SSAValue], cloned_allocs: bool, position: int | None
    ) -> None:
        """Bring `live` up to date after a loop's `buffers` got their slots: each alloc now has
        `depth` times its bytes at the loop's `position`; allocs in the unrolled body were
        cloned, so then walk again."""
        if cloned_allocs or self.live is None or position is None:
            self.live = None
            return
        for buffer in buffers:
            self.live.grow(buffer, position, byte_size(buffer.type) * (self.depth - 1))

    def candidates(self, loop: scf.ForOp, func: FuncOp) -> list[SSAValue]:
        """Allocs filled by a copy in `loop`, or zeroed whole at the start of each iteration (an
        accumulator, which a copy then drains: its slots let the drain of one output tile overlap
        the next tile's instructions), used only inside it, that can take `depth` slots."""
        found: list[SSAValue] = []
        for op in loop.body.walk():
            if isinstance(op, CopyOp | CopyAsyncOp):
                buffer = root_of(op.destination)
            elif isinstance(op, linalg.FillOp) and self.starts_iterations(loop, op):
                buffer = op.outputs[0]
            else:
                continue
            if (
                buffer in found
                or buffer in self.multi
                or not isinstance(buffer.owner, memref.AllocOp)
                or buffer.owner.operands
                or not all(loop.is_ancestor(use.operation) for use in buffer.uses)
            ):
                continue
            if self.live is None:
                self.live = LiveBytes(func)
            if self.fits(buffer, self.live.live(space_of(buffer), self.live.at(loop)), found):
                found.append(buffer)
        return found

    @staticmethod
    def starts_iterations(loop: scf.ForOp, fill: linalg.FillOp) -> bool:
        """Whether `fill` overwrites its whole buffer (an alloc, not a view) in every iteration of
        `loop` before anything else uses it, so no value is carried from one iteration to the next."""
        buffer = fill.outputs[0]
        body = loop.body.block
        if fill.parent_block() is not body or not isinstance(buffer.owner, memref.AllocOp):
            return False
        order = {op: i for i, op in enumerate(body.ops)}
        for use in buffer.uses:
            user = body.find_ancestor_op_in_block(use.operation)
            if user is None or order[user] < order[fill]:
                return False
        return True

    def fits(self, buffer: SSAValue, live: int, chosen: Sequence[SSAValue]) -> bool:
        """Whether the `live` bytes of the buffer's space, where it lives, still fit with `depth`
        slots for it (and for the allocs `chosen` in the same space)."""
        if self.machine is None or space_of(buffer) not in self.machine.memories:
            return True
        space = space_of(buffer)
        if byte_size(buffer.type) % self.machine.memories[space].alignment:
            return False  # slot 1 would start at a misaligned byte
        growing = [buffer, *(alloc for alloc in chosen if space_of(alloc) == space)]
        extra = sum(byte_size(alloc.type) for alloc in growing) * (self.depth - 1)
        return live + extra <= self.machine.memories[space].capacity

    def split(self, buffer: SSAValue) -> list[SSAValue]:
        """Replace the alloc by one with `depth` slots; return the slot views (not yet used)."""
        old = buffer.owner
        assert isinstance(old, memref.AllocOp) and isinstance(buffer.type, MemRefType)
        shape = list(buffer.type.get_shape())
        slotted = MemRefType(
            buffer.type.element_type, [self.depth, *shape], memory_space=buffer.type.memory_space
        )
        alloc = memref.AllocOp([], [], slotted)
        locate(alloc, old.location)
        Rewriter.insert_op(alloc, InsertPoint.before(old))
        views = []
        point = InsertPoint.after(old)
        for slot in range(self.depth):
            view = memref.SubviewOp.get(
                alloc.memref,
                [slot] + [0] * len(shape),
                [1, *shape],
                [1] * (len(shape) + 1),
                slot_view_type(slotted, slot),
            )
            locate(view, old.location)
            Rewriter.insert_op(view, point)
            point = InsertPoint.after(view)
            views.append(view.result)
        self.multi.add(alloc.memref)
        return views

    def unroll(self, loop: scf.ForOp, trips: int, slots: dict[SSAValue, list[SSAValue]]) -> None:
        """Unroll `loop` by `depth`, stage `s` on slot `s`; iterations past the last multiple of
        `depth` are peeled after it, and a loop left with one iteration becomes straight-line code."""
        lb, step = constant_index(loop.lb), constant_index(loop.step)
        main = trips // self.depth * self.depth
        results: Sequence[SSAValue] = loop.iter_args
        point = InsertPoint.before(loop)
        peeled = range(trips)
        if main > self.depth:
            new_loop = self.unrolled_loop(loop, lb + main * step, step, slots)
            results, point, peeled = (
                new_loop.results,
                InsertPoint.after(new_loop),
                range(main, trips),
            )
        for iteration in peeled:
            iv = _index(lb + iteration * step)
            locate(iv, loop.location)
            Rewriter.insert_op(iv, point)
            stage = (iteration - peeled.start) % self.depth
            results, point = self.clone_body(
                loop, iv.result, results, stage, slots, InsertPoint.after(iv)
            )
        for old, new in zip(loop.results, results):
            old.replace_all_uses_with(new)
        Rewriter.erase_op(loop)
        for buffer in slots:
            Rewriter.erase_op(buffer.owner)

    def unrolled_loop(
        self, loop: scf.ForOp, ub: int, step: int, slots: dict[SSAValue, list[SSAValue]]
    ) -> scf.ForOp:
        """The loop from `loop`'s lower bound to `ub` by `depth * step`, one cloned body per stage."""
        new_step, new_ub = _index(step * self.depth), _index(ub)
        body = loop.body.block
        new_loop = scf.ForOp(
            loop.lb, new_ub, new_step, list(loop.iter_args), [Block(arg_types=body.arg_types)]
        )
        for created in (new_step, new_ub, new_loop):
            locate(created, loop.location)
        Rewriter.insert_op([new_step, new_ub, new_loop], InsertPoint.before(loop))
        new_body = new_loop.body.block
        carried: Sequence[SSAValue] = new_body.args[1:]
        point = InsertPoint.at_end(new_body)
        for stage in range(self.depth):
            iv, point = self.iteration_index(new_body.args[0], stage * step, point)
            carried, point = self.clone_body(loop, iv, carried, stage, slots, point)
        yield_op = scf.YieldOp(*carried)
        locate(yield_op, loop.location)
        Rewriter.insert_op(yield_op, point)
        return new_loop

    @staticmethod
    def iteration_index(
        iv: SSAValue, offset: int, point: InsertPoint
    ) -> tuple[SSAValue, InsertPoint]:
        if offset == 0:
            return iv, point
        constant = _index(offset)
        add = arith.AddiOp(iv, constant.result)
        loop = iv.owner.parent_op()
        for created in (constant, add):
            locate(created, loop.location)
        Rewriter.insert_op([constant, add], point)
        return add.result, InsertPoint.after(add)

    @staticmethod
    def clone_body(
        loop: scf.ForOp,
        iv: SSAValue,
        carried: Sequence[SSAValue],
        stage: int,
        slots: dict[SSAValue, list[SSAValue]],
        point: InsertPoint,
    ) -> tuple[Sequence[SSAValue], InsertPoint]:
        """Clone one iteration of `loop` at `point` on slot `stage`; return its yielded values."""
        body = loop.body.block
        mapping: dict[SSAValue, SSAValue] = {body.args[0]: iv, **dict(zip(body.args[1:], carried))}
        mapping.update({buffer: views[stage] for buffer, views in slots.items()})
        yielded: Sequence[SSAValue] = ()
        for op in body.ops:
            if isinstance(op, scf.YieldOp):
                yielded = [mapping.get(v, v) for v in op.operands]
                continue
            clone = op.clone(value_mapper=mapping)
            Rewriter.insert_op(clone, point)
            for original, nested in zip(op.walk(), clone.walk(), strict=True):
                # a subview's type changes only with its source's (a buffer given slots)
                if (
                    isinstance(nested, memref.SubviewOp)
                    and nested.source.type != original.operands[0].type
                ):
                    retype_subview(nested, mapping)
            point = InsertPoint.after(clone)
        return yielded, point


@dataclass(frozen=True)
class DoubleBufferPass(ModulePass):
    """Give buffers filled by copies (or zeroed whole) inside loops `depth` slots and unroll those loops by `depth`.

    In an `scf.for` with static bounds and at least `depth` iterations, each local
    `memref.alloc` used only inside the loop that a copy in the loop fills, or that
    a `linalg.fill` zeroes whole at the top of the body before any other use,
    becomes `memref<depth x ...>`, and the loop is unrolled by `depth`: the copy of
    stage `s` fills slot `s` (a rank-reduced `memref.subview`) while the compute of
    the other stage reads its own slot; once `npu-insert-sync` has placed the flags
    the two overlap. Iterations left over are peeled after the loop. Loops are
    visited innermost first; a buffer gets its slots once. A fusion group whose
    root carries `tile.buffering = N` (what `ziggurat-tune` chose) gets N slots
    instead of `depth`.

    With `machine`, a buffer stays single when its slots would not start at the
    space's alignment, or would make the allocs of its space live there exceed the
    capacity. An alloc counts as live from the first to the last top-level op of
    the function that uses it, which assumes that `npu-plan-memory` shares bytes
    between buffers never live together, i.e. runs before `npu-insert-sync` as in
    `lower-to-npu`.

        %l1 = memref.alloc() : memref<32x32xf16, "l1">
        scf.for %k = %c0 to %c128 step %c32 {
          %t = loop.copy_async %a -> %l1 : ...
          loop.wait %t : !loop.token
          linalg.generic ... ins(%l1, ...) ...
        }

    becomes

        %l1 = memref.alloc() : memref<2x32x32xf16, "l1">
        %s0 = memref.subview %l1[0, 0, 0] [1, 32, 32] [1, 1, 1] : ... to memref<32x32xf16, strided<[32, 1]>, "l1">
        %s1 = memref.subview %l1[1, 0, 0] [1, 32, 32] [1, 1, 1] : ... to memref<32x32xf16, ..., "l1">
        scf.for %k = %c0 to %c128 step %c64 {
          %t = loop.copy_async %a -> %s0 : ...              // stage 0, iteration %k
          ...
          %k1 = arith.addi %k, %c32 : index
          %t1 = loop.copy_async %a1 -> %s1 : ...            // stage 1, iteration %k + 32
          ...
        }
    """

    name = "loop-double-buffer"

    depth: int = 2
    """Slots per buffer (2: double buffering); the loop is unrolled by as much."""

    machine: str | None = None
    """With a machine, buffers whose slots would not fit their space are left single."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.depth < 1:
            raise error_at(op, f"loop-double-buffer needs depth >= 1, got {self.depth}")
        machine = load_machine(self.machine) if self.machine else None
        for func in [f for f in op.walk() if isinstance(f, FuncOp) and f.body.blocks]:
            _DoubleBuffer(self.depth, machine).run(func)
