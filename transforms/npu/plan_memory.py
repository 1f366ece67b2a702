"""`npu-plan-memory{machine=NAME}`: give every `memref.alloc` a static offset in its memory space, sharing
bytes between buffers that are never live at once where the space is short (docs/lowering.md, section 7).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func, memref, scf
from xdsl.dialects.builtin import MemRefType, ModuleOp, NoneAttr, StringAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from ziggurat.diagnostics import error_at
from ziggurat.dialects import npu
from ziggurat.machine import Machine
from ziggurat.transforms.npu import defined_functions, has_sync, pass_machine
from ziggurat.transforms.tile.fit import DoesNotFit, does_not_fit

_LOOPS = (scf.ForOp, scf.WhileOp)
_NOT_LOWERED_DIALECTS = ("graph", "tensor", "linalg", "loop")
"""Dialects of the levels above npu: an op of theirs reading an `npu.buffer` would run on no interpreter."""


@dataclass
class _Buffer:
    """A buffer to place: its op (alloc, or an npu.buffer already placed), space, size and live range."""

    op: Operation
    space: str
    size: int
    ranges: list[tuple[int, int]]
    """Live ranges: program positions [start, end], both included, in order (none: never used)."""
    offset: int | None = None
    conflicts: list[_Buffer] = field(default_factory=list)

    @property
    def name(self) -> str:
        hint = self.op.results[0].name_hint
        return f"%{hint}" if hint else str(self.op.results[0].type)

    @property
    def start(self) -> int:
        return self.ranges[0][0] if self.ranges else -1

    def lives_with(self, other: _Buffer) -> bool:
        """Whether a range of each overlaps (both lists are in order: one merge-like walk)."""
        mine, theirs = iter(self.ranges), iter(other.ranges)
        a, b = next(mine, None), next(theirs, None)
        while a is not None and b is not None:
            if a[0] <= b[1] and b[0] <= a[1]:
                return True
            a, b = (next(mine, None), b) if a[1] < b[1] else (a, next(theirs, None))
        return False

    def spans_with(self, other: _Buffer) -> bool:
        """Whether the spans from first use to last use of the two overlap (live ranges or not)."""
        if not self.ranges or not other.ranges:
            return False
        return self.ranges[0][0] <= other.ranges[-1][1] and other.ranges[0][0] <= self.ranges[-1][1]

    def describe(self) -> str:
        where = "" if self.offset is None else f" at [{self.offset}, {self.offset + self.size})"
        return f"{self.name} ({self.size} bytes{where})"


class _Positions:
    """Program order of a function's ops: each op's position and the last position inside it."""

    def __init__(self, function: func.FuncOp):
        self.first: dict[Operation, int] = {}
        self.last: dict[Operation, int] = {}
        self._windows: dict[Operation, list[npu.BufferWindow] | None] = {}
        self._number(function)

    def windows(self, user: Operation, machine: Machine) -> list[npu.BufferWindow] | None:
        """`user`'s buffer windows (None for an op that is no npu instruction), computed once: the
        planner asks for them once per buffer the op uses and per later use of that buffer."""
        if user not in self._windows:
            self._windows[user] = (
                user.buffer_windows(machine) if isinstance(user, npu.NpuOperation) else None
            )
        return self._windows[user]

    def _number(self, op: Operation) -> None:
        self.first[op] = len(self.first)
        for region in op.regions:
            for block in region.blocks:
                for inner in block.ops:
                    self._number(inner)
        self.last[op] = len(self.first) - 1

    def live_ranges(self, alloc: Operation, machine: Machine) -> list[tuple[int, int]]:
        """From the first use to the last, split where the buffer is overwritten whole before it is
        read again (a step's temporary, reused by the next step, holds nothing across the gap); a
        use inside a loop the alloc is outside of covers the loop, unless each iteration starts by
        overwriting the whole buffer (nothing is carried around)."""
        buffer = alloc.results[0]
        users = sorted(set(_users(buffer)), key=lambda user: self.first[user])
        ranges: list[tuple[int, int]] = []
        fresh_each_iteration: dict[Operation, bool] = {}
        for index, user in enumerate(users):
            low, high = self._extent(user, users, alloc, machine, fresh_each_iteration)
            if (
                ranges
                and low > ranges[-1][1]
                and _unconditional(user, alloc)
                and _overwrites_whole(users[index:], buffer, machine, user.parent_block(), self)
            ):
                ranges.append((low, high))
                continue
            if ranges:  # it continues the last range, and joins those its loop overlaps
                low = min(low, ranges[-1][0])
                high = max(high, ranges.pop()[1])
            while ranges and ranges[-1][1] >= low:
                low = min(low, ranges[-1][0])
                high = max(high, ranges.pop()[1])
            ranges.append((low, high))
        return ranges

    def _extent(
        self,
        user: Operation,
        users: list[Operation],
        alloc: Operation,
        machine: Machine,
        fresh: dict[Operation, bool],
    ) -> tuple[int, int]:
        """The positions `user` keeps the buffer live: its own, or the loops around it that carry it
        (`fresh` remembers, per loop, whether each iteration overwrites the buffer first)."""
        low, high = self.first[user], self.first[user]
        parent = user.parent_op()
        while parent is not None and not parent.is_ancestor(alloc):
            if isinstance(parent, _LOOPS):
                if parent not in fresh:
                    fresh[parent] = _overwritten_first(parent, users, alloc, machine, self)
                if not fresh[parent]:
                    low, high = self.first[parent], self.last[parent]
            parent = parent.parent_op()
        return low, high


def _unconditional(user: Operation, alloc: Operation) -> bool:
    """Whether `user` runs whenever the code around the alloc reaches it: no `scf.if` holds it (a
    first-iteration `npu.mma` that overwrites an accumulator may not run; the other branch reads it)."""
    parent = user.parent_op()
    while parent is not None and not parent.is_ancestor(alloc):
        if isinstance(parent, scf.IfOp):
            return False
        parent = parent.parent_op()
    return True


def _overwritten_first(
    loop: Operation,
    users: list[Operation],
    alloc: Operation,
    machine: Machine,
    positions: _Positions,
) -> bool:
    """Whether each iteration of `loop` writes every element of the buffer before it reads any."""
    inside = sorted((u for u in users if loop.is_ancestor(u)), key=lambda u: positions.first[u])
    return _overwrites_whole(
        inside, alloc.results[0], machine, loop.regions[-1].blocks[0], positions
    )


def _overwrites_whole(
    users: list[Operation],
    buffer: SSAValue,
    machine: Machine,
    block: Block | None,
    positions: _Positions,
) -> bool:
    """Whether the first of `users` (in program order) and those after it, instructions directly in
    `block`, only write `buffer`, at static indices, until together they have covered all of it."""
    covered = np.zeros(math.prod(buffer.type.get_shape()), bool)
    for user in users:
        windows = positions.windows(user, machine)
        if user.parent_block() is not block or windows is None:
            return False
        mine = [w for w in windows if w.buffer is buffer]
        if (
            not mine
            or any(not w.write for w in mine)
            or any(not isinstance(i, int) for w in mine for i in w.indices)
        ):
            return False
        for window in mine:
            base = sum(
                i * s
                for i, s in zip(window.indices, npu.row_major_strides(buffer.type.get_shape()))
            )
            offsets = np.zeros(1, np.int64)
            for size, stride in zip(window.shape, window.strides):
                offsets = (offsets[:, None] + np.arange(size) * stride).ravel()
            covered[np.minimum(base + offsets, covered.size - 1)] = True
        if covered.all():
            return True
    return False


def _users(value: SSAValue) -> Iterator[Operation]:
    """The ops that use `value`, directly or through views of it (subviews, casts) and loop-carried copies."""
    for use in value.uses:
        user = use.operation
        if isinstance(user, memref.DeallocOp):
            continue
        yield user
        for result in user.results:
            if isinstance(result.type, MemRefType):
                yield from _users(result)


def _space_of_alloc(alloc: memref.AllocOp, machine: Machine) -> str:
    memref_type = alloc.memref.type
    space = memref_type.memory_space
    if not isinstance(space, StringAttr):
        raise error_at(
            alloc,
            f"cannot plan {memref_type}: it has no memory space (run loop-promote-to-memory-space first)",
        )
    if space.data not in machine.memories:
        raise error_at(
            alloc,
            f"cannot plan {memref_type}: machine '{machine.name}' has no memory space '{space.data}' "
            f"(it has {', '.join(machine.memories)})",
        )
    if any(dim < 0 for dim in memref_type.get_shape()) or not isinstance(
        memref_type.layout, NoneAttr
    ):
        raise error_at(
            alloc,
            f"cannot plan {memref_type}: a buffer has a static shape and the row-major layout",
        )
    return space.data


def _collect(function: func.FuncOp, machine: Machine) -> list[_Buffer]:
    positions = _Positions(function)
    everywhere = [(0, len(positions.first))]
    buffers = []
    for op in function.walk():
        if isinstance(op, memref.AllocOp):
            space = _space_of_alloc(op, machine)
            ranges = positions.live_ranges(op, machine)
            buffers.append(_Buffer(op, space, npu.type_bytes(op.memref.type), ranges))
        elif isinstance(
            op, npu.BufferOp
        ):  # placed already: its bytes are taken for the whole function
            size = npu.type_bytes(op.result.type)
            buffers.append(
                _Buffer(op, npu.space_of(op.result), size, everywhere, offset=op.byte_offset)
            )
    return buffers


def _spanning(buffer: _Buffer, placed: list[_Buffer]) -> list[_Buffer]:
    """The buffers of `placed` used between `buffer`'s first use and its last, or live with it."""
    conflicting = {id(other) for other in buffer.conflicts}
    return [other for other in placed if id(other) in conflicting or other.spans_with(buffer)]


def _clear_of(buffer: _Buffer, placed: list[_Buffer]) -> Iterator[list[_Buffer]]:
    """The buffers of `placed` that `buffer` may overlap none of: all of them, else those used
    while it is (`_spanning`), else those live with it; each in order of offset."""
    yield placed
    yield _spanning(buffer, placed)
    conflicting = {id(other) for other in buffer.conflicts}
    yield [other for other in placed if id(other) in conflicting]


def _place(buffer: _Buffer, placed: Iterable[_Buffer], alignment: int) -> int:
    """The lowest aligned offset where `buffer` overlaps none of `placed` (in order of offset)."""
    offset = 0
    for other in placed:
        if offset + buffer.size <= other.offset:
            break
        offset = max(offset, -(-(other.offset + other.size) // alignment) * alignment)
    return offset


def _peak_bytes(group: list[_Buffer]) -> int:
    """The most bytes of `group` (one space) live at one program position: what any plan needs at
    least, whatever the buffers that happened to be placed before the one that did not fit."""
    events = sorted(
        (position, size)
        for buffer in group
        for start, end in buffer.ranges
        for position, size in ((start, buffer.size), (end + 1, -buffer.size))
    )
    live = peak = 0
    for _, size in events:  # at one position, frees (negative) sort before allocations
        live += size
        peak = max(peak, live)
    return peak


def _overflow(buffer: _Buffer, group: list[_Buffer], machine: Machine) -> DoesNotFit:
    """The error for `buffer`, placed past the end of its space, naming what is live with it."""
    capacity = machine.memories[buffer.space].capacity
    live = [b for b in buffer.conflicts if b.offset is not None]
    others = ", ".join(b.describe() for b in live) or "nothing else"
    total = buffer.size + sum(b.size for b in live)
    return does_not_fit(
        buffer.op,
        f"buffer {buffer.name} of {buffer.size} bytes does not fit in '{buffer.space}' (capacity {capacity} bytes "
        f"on machine '{machine.name}'): live with it are {others}; {total} bytes in all",
        buffer.space,
        max(total, _peak_bytes(group)),
        capacity,
        buffer.op.results[0].type.get_shape(),
    )


def _check_lowered(function: func.FuncOp) -> None:
    """Refuse a function still holding ops of a higher level: its buffers are not npu buffers yet."""
    for op in function.walk():
        if op.name.split(".", 1)[0] in _NOT_LOWERED_DIALECTS:
            raise error_at(
                op,
                f"npu-plan-memory places the buffers of npu code, and {op.name} is not lowered "
                "to npu instructions yet (run loop-to-npu first)",
            )


def _find_conflicts(group: list[_Buffer], reuse: bool) -> None:
    """Set each buffer's `conflicts`: the others of `group` (one space) live with it, in the order
    of `group`; all the others when space is not reused."""
    if not reuse:
        for buffer in group:
            buffer.conflicts = [other for other in group if other is not buffer]
        return
    # Buffers live at once have overlapping spans: a sweep over the spans in order of their start
    # compares only those pairs, not every pair of a function's thousands of buffers.
    found: list[list[int]] = [[] for _ in group]
    spans = sorted(
        (min(low for low, _ in b.ranges), max(high for _, high in b.ranges), index)
        for index, b in enumerate(group)
        if b.ranges
    )
    active: list[tuple[int, int, int]] = []
    for low, high, index in spans:
        active = [span for span in active if span[1] >= low]
        buffer = group[index]
        for _, _, other in active:
            if buffer.lives_with(group[other]):
                found[index].append(other)
            if group[other].lives_with(buffer):
                found[other].append(index)
        active.append((low, high, index))
    for buffer, others in zip(group, found):
        buffer.conflicts = [group[other] for other in sorted(others)]


def _place_space(
    group: list[_Buffer],
    capacity: int,
    alignment: int,
    order: dict[int, int],
    own_bytes_first: bool,
) -> _Buffer | None:
    """Give each unplaced buffer of `group` (one space) an offset, largest first.

    With `own_bytes_first`, bytes of its own if the space allows; else clear of every buffer used
    between this one's first and last use (a layer's buffers, which its pipes use at once, ping and
    pong included, whose live ranges interleave in program order without overlapping); only then
    bytes of any buffer that is dead whenever this one is live. Without it, that last rule for every
    buffer (TFLite's greedy-by-size arena). Returns the first buffer that does not fit (placed past
    the end), or None."""
    by_offset = lambda b: (b.offset, order[id(b)])  # noqa: E731
    # The buffers placed so far by offset, kept in order as buffers are placed.
    placed = sorted((b for b in group if b.offset is not None), key=by_offset)
    for buffer in sorted(group, key=lambda b: (-b.size, b.start)):
        if buffer.offset is not None:
            continue
        if own_bytes_first:
            for avoid in _clear_of(buffer, placed):
                buffer.offset = _place(buffer, avoid, alignment)
                if buffer.offset + buffer.size <= capacity:
                    break
        else:
            conflicting = {id(other) for other in buffer.conflicts}
            avoid = [other for other in placed if id(other) in conflicting]
            buffer.offset = _place(buffer, avoid, alignment)
        bisect.insort(placed, buffer, key=by_offset)
        if buffer.offset + buffer.size > capacity:
            return buffer
    return None


def _interfering_sets(group: list[_Buffer]) -> list[list[_Buffer]]:
    """`group` split into sets of buffers never live with a buffer of another set (connected
    components of the conflicts: in a network, mostly one layer's local buffers each)."""
    parent = {id(b): id(b) for b in group}

    def root(key: int) -> int:
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    for buffer in group:
        for other in buffer.conflicts:
            parent[root(id(other))] = root(id(buffer))
    sets: dict[int, list[_Buffer]] = {}
    for buffer in group:
        sets.setdefault(root(id(buffer)), []).append(buffer)
    return list(sets.values())


def _plan_apart(
    group: list[_Buffer], capacity: int, alignment: int, order: dict[int, int], machine: Machine
) -> None:
    """After the space's plan left a buffer no room: plan each set of interfering buffers on its
    own (sets never live at once may share every byte). Where every set fits, that is the plan;
    else `DoesNotFit` at the first set that does not, naming every other that does not either
    (`DoesNotFit.others`), so that one retry gives each of their groups a smaller tile."""
    failures = []
    for members in _interfering_sets(group):
        overflow = _plan_space(members, capacity, alignment, order)
        if overflow is not None:
            failures.append(_overflow(overflow, members, machine))
    if failures:
        first, *others = failures
        first.others = others
        raise first


def _plan_space(
    group: list[_Buffer], capacity: int, alignment: int, order: dict[int, int]
) -> _Buffer | None:
    """Place the allocs of `group` (one space): bytes of their own first, and where that leaves a
    buffer no room (the first buffers took bytes of their own that a buffer live across them all
    needed), again sharing bytes between any buffers never live at once. Returns the buffer that
    does not fit then, or None."""
    _unplace(group)
    if _place_space(group, capacity, alignment, order, own_bytes_first=True) is None:
        return None
    _unplace(group)
    return _place_space(group, capacity, alignment, order, own_bytes_first=False)


def _unplace(group: list[_Buffer]) -> None:
    for buffer in group:
        if isinstance(buffer.op, memref.AllocOp):
            buffer.offset = None


def plan_function(function: func.FuncOp, machine: Machine, reuse: bool = True) -> None:
    """Replace the allocs of `function` by `npu.buffer`s at planned offsets."""
    buffers = _collect(function, machine)
    if any(isinstance(buffer.op, memref.AllocOp) for buffer in buffers):
        _check_lowered(function)
    reuse = reuse and not has_sync(function)
    by_space: dict[str, list[_Buffer]] = {}
    for buffer in buffers:
        by_space.setdefault(buffer.space, []).append(buffer)
    for group in by_space.values():
        _find_conflicts(group, reuse)
    # Ties in the order of `buffers`.
    order = {id(buffer): index for index, buffer in enumerate(buffers)}
    for group in by_space.values():
        space = machine.memories[group[0].space]
        if _plan_space(group, space.capacity, space.alignment, order) is not None:
            _plan_apart(group, space.capacity, space.alignment, order, machine)
    for buffer in buffers:
        if isinstance(buffer.op, memref.AllocOp):
            _replace_alloc(buffer.op, buffer.offset)


def _replace_alloc(alloc: memref.AllocOp, offset: int) -> None:
    for use in list(alloc.memref.uses):
        if isinstance(use.operation, memref.DeallocOp):
            Rewriter.erase_op(use.operation)
    placed = npu.BufferOp(alloc.memref.type, offset)
    placed.result.name_hint = alloc.memref.name_hint
    Rewriter.replace_op(alloc, placed)


@dataclass(frozen=True)
class NpuPlanMemoryPass(ModulePass):
    """Turn each `memref.alloc` into an `npu.buffer` at a static, aligned offset, sharing space between
    buffers that are never live at once where the space is short; error at a buffer that does not fit.

    A buffer lives from its first use to its last in program order; a use inside a
    loop the alloc is outside of keeps it alive for the whole loop, unless each
    iteration starts by overwriting all of it. Largest buffer first (TFLite's
    greedy-by-size arena planner), each takes the lowest aligned offset clear of
    every buffer already placed in its space; only where that would overflow does
    it take bytes of other buffers (whose accesses `npu-insert-sync` must then
    order): first of buffers used only before its first use or after its last,
    then of any buffer dead whenever it is live. Where that leaves a buffer no room
    (the first buffers took bytes of their own that a buffer live across them all
    needed), the space is planned again sharing bytes between any buffers never live
    at once, largest first. A buffer that does not fit then is a
    `DoesNotFit` at its alloc naming its size, the space, its capacity and what
    else is live then (`transforms/tile/fit.py` then lowers its group again with a
    smaller tile). A function with allocs that still holds `linalg`, `loop`,
    `tensor` or `graph` ops is refused. Run it before `npu-insert-sync`; on a
    function that already has flags or barriers space is not reused.

        %a = memref.alloc() : memref<64x64xf16, "ub">
        %b = memref.alloc() : memref<64x64xf16, "ub">
        ... uses of %a, then of %b ...

    becomes

        %a = npu.buffer offset 0 : memref<64x64xf16, "ub">
        %b = npu.buffer offset 8192 : memref<64x64xf16, "ub">
        ... (%b at offset 0 if "ub" were full and %a dead by then) ...

    Options: `machine` (a preset or a machine TOML file; default: the module's `npu.machine`),
    `reuse` (default true; false gives every buffer its own bytes).
    """

    name = "npu-plan-memory"

    machine: str | None = None
    reuse: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        machine = pass_machine(op, self.machine, self.name)
        for function in defined_functions(op):
            plan_function(function, machine, self.reuse)
