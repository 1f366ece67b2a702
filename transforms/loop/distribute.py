"""`loop-distribute{machine=NAME cores=N}`: each fusion group's tiles divided among the cores of
the chip by `npu.core_id`, with `npu.sync_cores` between groups (docs/lowering.md, section 5).
"""

from __future__ import annotations

from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnitAttr,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import is_side_effect_free

from ziggurat.diagnostics import error_at
from ziggurat.dialects import npu
from ziggurat.dialects.loop import SHARED_BY_CORES_ATTR
from ziggurat.dialects.tile import GROUP_ATTR
from ziggurat.locations import locate
from ziggurat.machine import load_machine
from ziggurat.transforms.loop.buffers import VIEW_OPS, read_buffers, root_of, written_buffers
from ziggurat.transforms.loop.double_buffer import constant_index, trip_count
from ziggurat.transforms.loop.hoist_copies import defined_inside

_DEFINITIONS = (memref.AllocOp, memref.GetGlobalOp, *VIEW_OPS)
"""Ops that only define a buffer or a view: they stay where they are, before what uses them."""


def _index(value: int) -> arith.ConstantOp:
    return arith.ConstantOp(IntegerAttr(value, IndexType()))


def _group_of(op: Operation) -> str | None:
    for inner in op.walk():
        group = inner.attributes.get(GROUP_ATTR)
        if isinstance(group, StringAttr):
            return group.data
    return None


def _depends_on(value: SSAValue, target: SSAValue, scope: Operation) -> bool:
    """Whether `value` is computed from `target` by ops inside `scope`."""
    stack, seen = [value], set()
    while stack:
        value = stack.pop()
        if value is target:
            return True
        if value in seen or not isinstance(value.owner, Operation):
            continue
        seen.add(value)
        if defined_inside(scope, value):
            stack.extend(value.owner.operands)
    return False


def _accesses(op: Operation) -> Iterator[tuple[Operation, SSAValue, bool]]:
    """(op, buffer value, is a write) for every op in `op` (itself included) that touches memory;
    an op that reads the view it writes (a linalg op's `outs`) reads only what it writes."""
    for inner in op.walk():
        written = written_buffers(inner)
        for value in written:
            yield inner, value, True
        for value in read_buffers(inner):
            if value not in written:
                yield inner, value, False


def is_parallel(loop: scf.ForOp) -> bool:
    """Whether the iterations of `loop` write disjoint buffers: every buffer written in it is
    either made inside it or written through a view that the induction variable moves (a tile
    loop; a reduction loop accumulates into one buffer and is not)."""
    if loop.iter_args or trip_count(loop) is None:
        return False
    iv = loop.body.block.args[0]
    for _, value, write in _accesses(loop):
        if not write or defined_inside(loop, root_of(value)):
            continue
        moved = False
        while isinstance(value.owner, VIEW_OPS):
            if any(_depends_on(operand, iv, loop) for operand in value.owner.operands[1:]):
                moved = True
            value = value.owner.operands[0]
        if not moved:
            return False
    return True


def _nested_parallel(loop: scf.ForOp) -> scf.ForOp | None:
    """The parallel loop (static bounds) that is all `loop`'s body does, besides computing
    values without side effects; None if there is none."""
    inner = [op for op in loop.body.block.ops if not isinstance(op, scf.YieldOp)]
    loops = [op for op in inner if isinstance(op, scf.ForOp)]
    if len(loops) != 1 or not all(op is loops[0] or is_side_effect_free(op) for op in inner):
        return None
    nested = loops[0]
    bounds = (nested.lb, nested.ub, nested.step)
    if any(defined_inside(loop, value) for value in bounds) or not is_parallel(nested):
        return None
    return nested


def _collapsed(outer: scf.ForOp, inner: scf.ForOp) -> scf.ForOp:
    """One loop from 0 step 1 over the iterations of `outer` and the `inner` loop nested in
    it, in place of `outer`: iteration f runs `outer`'s iteration f / n and `inner`'s f % n."""
    inner_n = trip_count(inner)
    outer_n = trip_count(outer)
    lbs = [constant_index(v) for v in (outer.lb, outer.step, inner.lb, inner.step)]
    assert inner_n is not None and outer_n is not None and None not in lbs
    outer_lb, outer_step, inner_lb, inner_step = lbs
    zero, total, one, width = _index(0), _index(outer_n * inner_n), _index(1), _index(inner_n)
    body = Block(arg_types=[IndexType()])
    flat = body.args[0]
    row, column = arith.DivUIOp(flat, width.result), arith.RemUIOp(flat, width.result)
    ivs: list[SSAValue] = []
    ops: list[Operation] = [row, column]
    constants = [zero, total, one, width]
    for index, lb, step in ((row, outer_lb, outer_step), (column, inner_lb, inner_step)):
        scale, origin = _index(step), _index(lb)
        scaled = arith.MuliOp(index.result, scale.result)
        iv = arith.AddiOp(scaled.result, origin.result)
        constants += [scale, origin]
        ops += [scaled, iv]
        ivs.append(iv.result)
    body.add_ops(ops)
    for source, iv in ((outer, ivs[0]), (inner, ivs[1])):
        for op in list(source.body.block.ops):
            if op is inner or isinstance(op, scf.YieldOp):
                continue
            op.detach()
            body.add_op(op)
        source.body.block.args[0].replace_all_uses_with(iv)
    body.add_op(scf.YieldOp())
    loop = scf.ForOp(zero.result, total.result, one.result, [], Region(body))
    for op in (*constants, loop):
        locate(op, outer.location)
    Rewriter.insert_op([*constants, loop], InsertPoint.before(outer))
    outer.detach()
    outer.erase()
    return loop


def _replicated(units: list[_Unit]) -> set[Operation] | None:
    """The ops every core runs for itself: those of the group's straight-line code that fill a
    buffer a later part of the group reads (a conv's padded copy of its whole input), each from
    buffers no earlier part of the group writes (the group's inputs, whole since the cores met
    before it). `npu-private-scratch` gives each core its own copy of such a buffer, so each
    core must fill its own. None when a later part reads what another op wrote (one core then
    runs the group)."""
    written: dict[SSAValue, list[Operation]] = {}
    divided: set[Operation] = set()
    """The parallel loops, which the cores divide: what they write no core has whole."""
    replicated: set[Operation] = set()
    for unit in units:
        for root in unit.roots(write=False) & written.keys():
            writers = written[root]
            if (
                not isinstance(root.owner, memref.AllocOp)
                or any(op in divided for op in writers)
                or any(
                    root_of(v) in written
                    for op in writers
                    for _, v, write in _accesses(op)
                    if not write
                )
            ):
                return None
            replicated.update(writers)
        if unit.parallel:
            divided.update(unit.ops)
        for op in unit.ops:
            for _, value, write in _accesses(op):
                if write:
                    written.setdefault(root_of(value), []).append(op)
    return replicated


def _independent_tiles(
    ops: list[Operation], private: AbstractSet[SSAValue] = frozenset()
) -> list[list[Operation]]:
    """Straight-line code as the tiles it computes, each to run on a core of its own: ops that
    share a buffer the function allocates (a tile's staging and accumulators) are one tile, and
    tiles touch other buffers (arguments, weights) only to read them or to write each its own
    part (peeled tiles of a padded input, which tile-and-fuse writes as straight-line code).
    Buffers in `private` every core has filled for itself, so they join no tiles. One tile, all
    `ops`, where some tile reads a buffer another writes."""
    parent: dict[Operation, Operation] = {op: op for op in ops}

    def find(op: Operation) -> Operation:
        while parent[op] is not op:
            parent[op] = parent[parent[op]]
            op = parent[op]
        return op

    owner: dict[SSAValue, Operation] = {}
    for op in ops:
        for _, value, _ in _accesses(op):
            root = root_of(value)
            if not isinstance(root.owner, memref.AllocOp) or root in private:
                continue
            if root in owner:
                parent[find(op)] = find(owner[root])
            else:
                owner[root] = op
    tiles: dict[Operation, list[Operation]] = {}
    for op in ops:
        tiles.setdefault(find(op), []).append(op)
    found = list(tiles.values())
    if len(found) == 1:
        return found
    local = owner.keys()
    shared = [
        (
            _Unit(tile, False).roots(write=False) - local,
            _Unit(tile, False).roots(write=True) - local,
        )
        for tile in found
    ]
    for i, (_, written) in enumerate(shared):
        if any(read & written for j, (read, _) in enumerate(shared) if j != i):
            return [ops]
    return found


def _barrier_before(op: Operation) -> None:
    """An `npu.sync_cores` before `op`, located at it."""
    sync = npu.SyncCoresOp()
    locate(sync, op.location)
    Rewriter.insert_op(sync, InsertPoint.before(op))


@dataclass
class _Unit:
    """Top-level ops of one group that run on the same cores: a parallel tile loop, or a run
    of straight-line code (peeled tiles) that one core runs."""

    ops: list[Operation]
    parallel: bool

    def roots(self, write: bool) -> set[SSAValue]:
        return {
            root_of(value)
            for op in self.ops
            for _, value, is_write in _accesses(op)
            if is_write == write
        }


@dataclass
class _Group:
    name: str | None
    ops: list[Operation] = field(default_factory=list)


class _Distribute:
    def __init__(self, func: FuncOp, cores: int):
        self.func = func
        self.cores = cores
        self.next_core = 0
        """The core the next tile that not every core runs goes to: such tiles (straight-line
        parts, a loop's iterations past a multiple of the cores) take the cores in turn across
        the function, so that a group of several tile loops fills every core (a convolution
        peeled into its top, middle and bottom rows put the top's and the bottom's tiles on the
        same first cores)."""
        self.core: SSAValue | None = None
        self.place: dict[Operation, object] = {}
        """Which cores run each top-level op that touches memory: `EVERY_CORE` (an op every core
        runs, on its own copy), `("core", c)` (core c alone) or `("loop", id)` (the cores a
        split loop and its leftover iterations share)."""

    def run(self) -> None:
        groups = self.groups()
        if groups is None or not groups:
            return
        block = self.func.body.block
        core = npu.CoreIdOp.create(result_types=[IndexType()])
        Rewriter.insert_op(core, InsertPoint.at_start(block))
        self.core = core.result
        for index, group in enumerate(groups):
            if index:
                _barrier_before(group.ops[0])
            self.distribute(group)
        self.mark_shared()

    def mark_shared(self) -> None:
        """Mark each buffer that crosses cores (`SHARED_BY_CORES_ATTR`): its bytes are written by
        ops not every core runs, and touched by ops on other cores than theirs. A core's own
        memories cannot hold it: another core would read its own, stale copy (a group on one
        core reading what the previous group wrote on another, or one split otherwise)."""
        places: dict[SSAValue, set[object]] = {}
        writers: dict[SSAValue, set[object]] = {}
        for top in self.func.body.block.ops:
            place = self.place.get(top)
            if place is None:
                continue
            for _, value, write in _accesses(top):
                root = root_of(value)
                if isinstance(root.owner, memref.AllocOp) and not _inside(root, top):
                    places.setdefault(root, set()).add(place)
                    if write:
                        writers.setdefault(root, set()).add(place)
        for root, where in places.items():
            written = writers.get(root, set())
            if not written - {EVERY_CORE}:
                continue  # every core writes its own whole copy
            if len(where) > 1:
                root.owner.attributes[SHARED_BY_CORES_ATTR] = UnitAttr()

    def groups(self) -> list[_Group] | None:
        """The function's top-level ops that touch memory, in groups of consecutive ops of one
        fusion group (an op of none, a convolution's padding copy, joins the next group); None
        when an op that reads memory has results (moving ops past it could change them)."""
        groups: list[_Group] = []
        pending: list[Operation] = []
        for op in self.func.body.block.ops:
            if is_side_effect_free(op) or isinstance(op, _DEFINITIONS):
                continue
            if op.results:
                return None
            if op is self.func.body.block.last_op:
                continue
            name = _group_of(op)
            if name is None:
                pending.append(op)
                continue
            if not groups or groups[-1].name != name:
                groups.append(_Group(name))
            groups[-1].ops += [*pending, op]
            pending = []
        if pending:
            if groups:
                groups[-1].ops += pending
            else:
                groups.append(_Group(None, pending))
        return groups

    def units(self, group: _Group) -> list[_Unit]:
        units: list[_Unit] = []
        for op in group.ops:
            if isinstance(op, scf.ForOp) and is_parallel(op):
                units.append(_Unit([op], True))
            elif units and not units[-1].parallel:
                units[-1].ops.append(op)
            else:
                units.append(_Unit([op], False))
        return units

    def distribute(self, group: _Group) -> None:
        units = self.units(group)
        replicated = _replicated(units)
        if replicated is None:
            # a later part of the group reads what an earlier one wrote
            self.in_phases(units)
            return
        shared = _Unit(list(replicated), False).roots(write=True)
        for unit in units:
            self.divide(unit, replicated, shared)

    def divide(
        self,
        unit: _Unit,
        replicated: AbstractSet[Operation] = frozenset(),
        shared: AbstractSet[SSAValue] = frozenset(),
    ) -> None:
        """Give each core its share of `unit`: a parallel loop's iterations, or each tile of its
        straight-line code but the ops every core runs (`replicated`, which fill the buffers in
        `shared`) to the next core in turn."""
        for op in replicated:
            self.place[op] = EVERY_CORE
        if unit.parallel:
            (loop,) = unit.ops
            assert isinstance(loop, scf.ForOp)
            self.split_loop(loop)
            return
        ops = [op for op in unit.ops if op not in replicated]
        for tile in _independent_tiles(ops, shared) if ops else ():
            self.on_one_core(tile)

    def in_phases(self, units: list[_Unit]) -> None:
        """Each part of a group divided among the cores on its own, with `npu.sync_cores` before a
        part that reads what an earlier part of its phase wrote, or writes what one read or
        wrote (the stem's space-to-depth casts its input into a scratch buffer, then rearranges
        it: both halves spread over the cores, a barrier between them, where one core ran both).
        A buffer written in one phase and read in the next stays one buffer for all cores
        (`npu-private-scratch` privatizes only what one phase alone uses)."""
        read: set[SSAValue] = set()
        written: set[SSAValue] = set()
        for unit in units:
            reads, writes = unit.roots(write=False), unit.roots(write=True)
            if reads & written or writes & (read | written):
                _barrier_before(unit.ops[0])
                read, written = set(), set()
            self.divide(unit)
            read |= reads
            written |= writes

    def on_one_core(self, ops: list[Operation]) -> None:
        """Move `ops` into an `scf.if` on the next core in turn, where the last of them stood
        (the side-effect-free ops between them, which they may use, stay before it)."""
        assert self.core is not None
        last = ops[-1]
        owner = _index(self.next_core)
        place = ("core", self.next_core)
        self.next_core = (self.next_core + 1) % self.cores
        is_owner = arith.CmpiOp(self.core, owner.result, "eq")
        body = Block()
        branch = scf.IfOp(is_owner.result, [], Region(body))
        for created in (owner, is_owner, branch):
            locate(created, ops[0].location)
        Rewriter.insert_op([owner, is_owner, branch], InsertPoint.after(last))
        self.place[branch] = place
        for op in ops:
            op.detach()
            body.add_op(op)
        body.add_op(scf.YieldOp())

    def collapse(self, loop: scf.ForOp) -> scf.ForOp:
        """`loop` and the parallel loop nested perfectly in it as one loop over both index
        spaces, row-major (iteration f runs tile f / n2 of the outer loop and f % n2 of the
        inner), while that shares the tiles among the cores more evenly; else `loop`."""
        while (inner := _nested_parallel(loop)) is not None:
            outer_n, inner_n = trip_count(loop), trip_count(inner)
            assert outer_n is not None and inner_n is not None
            if -(-outer_n * inner_n // self.cores) >= -(-outer_n // self.cores) * inner_n:
                break
            loop = _collapsed(loop, inner)
        return loop

    def split_loop(self, loop: scf.ForOp) -> None:
        """Core c runs iterations [c q, (c + 1) q) of the loop's n (q = n // cores), and the
        n % cores left one each on the cores next in turn: at most ceil(n / cores) each, the
        main loop keeping static bounds for loop-double-buffer."""
        assert self.core is not None
        loop = self.collapse(loop)
        lb, step = constant_index(loop.lb), constant_index(loop.step)
        n = trip_count(loop)
        assert lb is not None and step is not None and n is not None
        per_core, ragged = divmod(n, self.cores)
        created: list[Operation] = []
        place = ("loop", id(loop))
        self.place[loop] = place
        if ragged:
            created += self.remainder(loop, lb + self.cores * per_core * step, step, ragged)
            self.place[created[-1]] = place  # the scf.if of the leftover iterations
        if per_core == 0:
            loop.detach()
            loop.erase()
        else:
            block_size, origin = _index(per_core * step), _index(lb)
            start = arith.MuliOp(self.core, block_size.result)
            first = arith.AddiOp(start.result, origin.result)
            zero, end = _index(0), _index(per_core * step)
            ops = [block_size, origin, start, first, zero, end]
            Rewriter.insert_op(ops, InsertPoint.before(loop))
            loop.operands[0] = zero.result
            loop.operands[1] = end.result
            body = loop.body.block
            iv = body.args[0]
            shifted = arith.AddiOp(iv, first.result)
            Rewriter.insert_op(shifted, InsertPoint.at_start(body))
            iv.replace_uses_with_if(shifted.result, lambda use: use.operation is not shifted)
            created += ops + [shifted]
        for op in created:
            locate(op, loop.location)

    def remainder(self, loop: scf.ForOp, base: int, step: int, ragged: int) -> list[Operation]:
        """Iteration `base + r step` of `loop` on the core r places after the next one in turn
        (`next_core`), for r < `ragged`, as an `scf.if` after it."""
        assert self.core is not None
        clone = loop.clone()
        turn: list[Operation] = []
        rank = self.core
        if self.next_core:
            # r = (core - next_core) mod cores
            back, cores = _index(self.cores - self.next_core), _index(self.cores)
            shifted = arith.AddiOp(self.core, back.result)
            wrapped = arith.RemUIOp(shifted.result, cores.result)
            turn, rank = [back, cores, shifted, wrapped], wrapped.result
        self.next_core = (self.next_core + ragged) % self.cores
        limit, stride, offset = _index(ragged), _index(step), _index(base)
        takes = arith.CmpiOp(rank, limit.result, "ult")
        scaled = arith.MuliOp(rank, stride.result)
        iv = arith.AddiOp(scaled.result, offset.result)
        body = clone.body.block
        inner = Block()
        for op in list(body.ops):
            op.detach()
            inner.add_op(scf.YieldOp() if isinstance(op, scf.YieldOp) else op)
        body.args[0].replace_all_uses_with(iv.result)
        clone.erase()
        branch = scf.IfOp(takes.result, [], Region(inner))
        ops = [*turn, limit, stride, offset, takes, scaled, iv, branch]
        Rewriter.insert_op(ops, InsertPoint.after(loop))
        return ops


EVERY_CORE = "every core"
"""The place of an op every core runs (`_Distribute.place`)."""


def _inside(value: SSAValue, op: Operation) -> bool:
    """Whether `value` is defined inside `op` (a buffer private to one loop's tiles)."""
    owner = value.owner
    return isinstance(owner, Operation) and owner is not op and op.is_ancestor(owner)


@dataclass(frozen=True)
class DistributePass(ModulePass):
    """Divide each fusion group's tile loops among `cores` cores of the chip.

    At the loop level, right after `tile-to-loop`: each top-level `scf.for` of a group
    whose iterations write disjoint buffers (a tile loop over batch, output rows or
    channels; never a reduction loop, which accumulates into one buffer) is split by
    `npu.core_id`: core c runs iterations [c q, (c + 1) q), q = n // cores, in a loop
    with static bounds, and the n % cores iterations left one each on the cores next in
    turn. The group's other top-level code (the peeled first and last tiles, a loop that is
    not parallel) runs on one core, under `scf.if`, the cores taking such parts in turn (the
    turn runs on across the function, past the iterations left over), one tile each where
    the tiles share no buffer (a peeled tile's staging and accumulators are its own). An
    op that fills a buffer a later part of the group reads (a conv's padded copy of its
    input) runs on every core, each filling its own copy; a group whose later part reads
    what any other earlier part wrote runs in phases, each part divided on its own and
    `npu.sync_cores` between them where one reads what another wrote. Between two
    groups stands an `npu.sync_cores`: a group reads what the others wrote in global
    memory only once they are done. A buffer of the function that ops on different cores
    touch (unless every core writes its own whole copy) is marked `loop.shared_by_cores`,
    which keeps it in global memory. The module records the count (`npu.cores = N`), which
    `npu-private-scratch` and the interpreter read. With `cores=1` nothing changes.

        scf.for %i = %c0 to %c256 step %c64 { ... tile %i ... }        // 4 tiles

    on 2 cores becomes

        %core = npu.core_id
        %start = arith.muli %core, %c128 : index
        scf.for %j = %c0 to %c128 step %c64 {
          %i = arith.addi %j, %start : index
          ... tile %i ...
        }
        npu.sync_cores                                                 // before the next group
    """

    name = "loop-distribute"

    cores: int = 1
    """How many cores run the program."""

    machine: str | None = None
    """With a machine, `cores` must not exceed its cores."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.cores < 1:
            raise error_at(op, f"loop-distribute needs cores >= 1, got {self.cores}")
        if self.machine:
            machine = load_machine(self.machine)
            if self.cores > machine.cores:
                raise error_at(
                    op,
                    f"loop-distribute: machine '{machine.name}' has {machine.cores} cores, "
                    f"not {self.cores}",
                )
        # Only loop-level functions (memref arguments) have tile loops to divide; a module above
        # that level is left as it is, unmarked, so that a one-core lowering of it stays one core.
        functions = [
            f
            for f in op.walk()
            if isinstance(f, FuncOp)
            and f.body.blocks
            and any(isinstance(t, MemRefType) for t in f.function_type.inputs)
        ]
        if self.cores == 1 or not functions:
            return
        op.attributes[npu.CORES_ATTR] = IntegerAttr(self.cores, 64)
        for func in functions:
            if any(isinstance(inner, npu.CoreIdOp) for inner in func.walk()):
                raise error_at(func, "loop-distribute: the function already uses npu.core_id")
            _Distribute(func, self.cores).run()
