"""`npu-insert-sync{machine=NAME}`: flags between pipes for every dependence of an npu program, so that
an instruction that needs another pipe's result waits for it (docs/lowering.md, section 7).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import VerifyException

from ziggurat.diagnostics import emit_remark, error_at
from ziggurat.dialects import npu
from ziggurat.machine import Machine
from ziggurat.transforms.npu import defined_functions, pass_machine

Clock = dict[str, int]
"""Per pipe P: the last step of P known to have finished (step numbers of one block)."""

_ANYWHERE = "anywhere"
"""The storage of an instruction that declares no windows: it conflicts with every access."""


@dataclass(frozen=True)
class _SomewhereIn:
    """The storage of a buffer whose bytes are unknown but whose space is not (a view the pass
    cannot trace): it conflicts with every access to that space, and with none elsewhere, since
    spaces are disjoint memories (a gm weight read never waits for an l0b write)."""

    space: str


@dataclass(frozen=True)
class _Access:
    """Bytes [start, end) of a buffer's storage in `space`, read or written."""

    storage: object
    start: int
    end: int
    write: bool
    space: str | None = None

    def conflicts(self, other: _Access) -> bool:
        if not (self.write or other.write):
            return False
        if _ANYWHERE in (self.storage, other.storage):
            return True
        if isinstance(self.storage, _SomewhereIn) or isinstance(other.storage, _SomewhereIn):
            return self.space == other.space
        return self.storage == other.storage and self.start < other.end and other.start < self.end


_EVERYTHING = (_Access(_ANYWHERE, 0, 0, False), _Access(_ANYWHERE, 0, 0, True))


class _Addresses:
    """The byte ranges an instruction's windows may touch, over every value its indices take."""

    def __init__(self, machine: Machine):
        self.machine = machine
        self.bounds: dict[SSAValue, tuple[int, int] | None] = {}
        self.known: dict[Operation, tuple[_Access, ...]] = {}
        """Per instruction, its accesses: a block's steps ask again for every loop around it."""

    def accesses(self, op: npu.NpuOperation) -> tuple[_Access, ...]:
        found = self.known.get(op)
        if found is None:
            windows = op.buffer_windows(self.machine)
            found = _EVERYTHING if windows is None else tuple(self._access(w) for w in windows)
            self.known[op] = found
        return found

    def _access(self, window: npu.BufferWindow) -> _Access:
        storage, offset = self._storage(window.buffer)
        shape = window.buffer.type.get_shape()
        low = high = 0
        for index, size, stride in zip(window.indices, shape, npu.row_major_strides(shape)):
            first, last = (index, index) if isinstance(index, int) else self._bound(index, size)
            low, high = low + first * stride, high + last * stride
        itemsize = npu.element_bytes(window.buffer.type.get_element_type())
        # an instruction stays inside its buffer (the interpreter checks every window), so index
        # bounds that overshoot its end must not reach into the buffer after it in the space
        end = min(high + npu.window_extent(window.shape, window.strides), math.prod(shape))
        return _Access(
            storage,
            offset + low * itemsize,
            offset + end * itemsize,
            window.write,
            npu.space_of(window.buffer),
        )

    @staticmethod
    def _storage(buffer: SSAValue) -> tuple[object, int]:
        """What holds the buffer's bytes, and where in it they start.

        npu.buffers of one space may share bytes, so their storage is the space; an alloc or
        an argument holds bytes of its own, a global (`memref.get_global`, e.g. a weight) those
        of its symbol; any other buffer value may be anywhere in its space.
        """
        owner = buffer.owner
        if isinstance(owner, npu.BufferOp):
            return ("space", npu.space_of(buffer)), owner.byte_offset
        if isinstance(owner, memref.AllocOp) or (
            isinstance(buffer, BlockArgument) and isinstance(buffer.block.parent_op(), func.FuncOp)
        ):
            return buffer, 0
        if isinstance(owner, memref.GetGlobalOp):
            return ("global", owner.name_.string_value()), 0
        return _SomewhereIn(npu.space_of(buffer)), 0

    def runs_once(self, loop: scf.ForOp) -> bool:
        """Whether the loop's bounds say it runs at least one iteration."""
        lb, ub = self._range(loop.lb), self._range(loop.ub)
        return lb is not None and ub is not None and lb[1] < ub[0]

    def _bound(self, value: SSAValue, size: int) -> tuple[int, int]:
        """The range of an index into a dimension of `size`: from its definition, else the whole dimension."""
        bound = self._range(value)
        if bound is None:
            return 0, size - 1
        return max(0, bound[0]), min(size - 1, bound[1])

    def _range(self, value: SSAValue) -> tuple[int, int] | None:
        if value not in self.bounds:
            self.bounds[value] = None  # a cycle through loop-carried values stays unbounded
            self.bounds[value] = self._compute_range(value)
        return self.bounds[value]

    def _compute_range(self, value: SSAValue) -> tuple[int, int] | None:
        owner = value.owner
        if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
            return owner.value.value.data, owner.value.value.data
        if isinstance(owner, arith.IndexCastOp):
            return self._range(owner.input)
        if isinstance(owner, arith.AddiOp | arith.SubiOp | arith.MuliOp):
            lhs, rhs = self._range(owner.lhs), self._range(owner.rhs)
            if lhs is None or rhs is None:
                return None
            if isinstance(owner, arith.AddiOp):
                return lhs[0] + rhs[0], lhs[1] + rhs[1]
            if isinstance(owner, arith.SubiOp):
                return lhs[0] - rhs[1], lhs[1] - rhs[0]
            products = [a * b for a in lhs for b in rhs]
            return min(products), max(products)
        if (
            isinstance(value, BlockArgument)
            and value.index == 0
            and isinstance(value.block.parent_op(), scf.ForOp)
        ):
            loop = value.block.parent_op()
            lb, ub, step = (self._range(v) for v in (loop.lb, loop.ub, loop.step))
            if lb is None or ub is None or step is None or step[0] != step[1] or step[0] <= 0:
                return None
            last = lb[1] + (ub[1] - 1 - lb[1]) // step[0] * step[0] if lb[0] == lb[1] else ub[1] - 1
            return lb[0], max(lb[1], last)
        return None


@dataclass
class _Step:
    """Consecutive ops of a block, synchronized as one: their instructions per pipe, with what they access."""

    ops: list[Operation]
    accesses: dict[str, tuple[_Access, ...]]
    drains: tuple[str, ...] = ()
    """For an `npu.barrier` of the input: the pipes it drains."""
    members: list[dict[str, tuple[_Access, ...]]] = field(default_factory=list)
    """What each op of the step accesses, per pipe."""
    _envelopes: dict[str, dict[object, tuple[int, int, bool]]] = field(default_factory=dict)

    @property
    def first(self) -> Operation:
        return self.ops[0]

    @property
    def last(self) -> Operation:
        return self.ops[-1]

    def conflicts(self, pipe: str, other: _Step, other_pipe: str) -> bool:
        if not _envelopes_meet(self.envelopes(pipe), other.envelopes(other_pipe)):
            return False
        return any(a.conflicts(b) for a in self.accesses[pipe] for b in other.accesses[other_pipe])

    def envelopes(self, pipe: str) -> dict[object, tuple[int, int, bool]]:
        """Per storage, the bytes [start, end) spanning all of the step's accesses on `pipe` to it,
        and whether any writes. Computed once the steps are built (`steps` extends `accesses`)."""
        if pipe not in self._envelopes:
            spans: dict[object, tuple[int, int, bool]] = {}
            for access in self.accesses[pipe]:
                start, end, write = spans.get(
                    access.storage, (access.start, access.end, access.write)
                )
                spans[access.storage] = (
                    min(start, access.start),
                    max(end, access.end),
                    write or access.write,
                )
            self._envelopes[pipe] = spans
        return self._envelopes[pipe]

    def first_needing(self, pipe: str, producers: Sequence[_Step], src: str) -> int:
        """The first op of the step whose accesses on `pipe` conflict with those of `producers` on `src`:
        a wait for them need come no earlier."""
        # The last op is the answer when no earlier one conflicts, so it needs no scan; the
        # nearest producers come first, since a conflict is most often found with them.
        for index, member in enumerate(self.members[:-1]):
            mine = member.get(pipe, ())
            if any(
                a.conflicts(b)
                for step in reversed(producers)
                for a in mine
                for b in step.accesses.get(src, ())
            ):
                return index
        return len(self.members) - 1


def _envelopes_meet(
    mine: dict[object, tuple[int, int, bool]], theirs: dict[object, tuple[int, int, bool]]
) -> bool:
    """Whether two steps' accesses may conflict, from their envelopes (a necessary condition:
    a conflicting pair lies in one storage, inside both envelopes, one of them a write).
    Scanning a block's steps for producers compares most pairs of steps; this spares most
    of them the comparison of every access with every other."""
    if any(
        storage == _ANYWHERE or isinstance(storage, _SomewhereIn) for storage in (*mine, *theirs)
    ):
        return True
    for storage, (start, end, write) in mine.items():
        other = theirs.get(storage)
        if other is not None and (write or other[2]) and start < other[1] and other[0] < end:
            return True
    return False


@dataclass
class _Flag:
    """The flag ops of one dependence, given one event id; `wait` is the one before the consumer."""

    src: str
    dst: str
    ops: list[npu.FlagOperation]
    wait: npu.WaitFlagOp
    consumer: Operation
    span: tuple[int, int] = (0, 0)


@dataclass
class _Dependence:
    """Step `consumer` on pipe `dst` waits for step `producer` on pipe `src`, before its op number `before`."""

    src: str
    producer: int
    dst: str
    consumer: int
    before: int = 0


@dataclass
class _Function:
    """Inserts the flags of one function; `flags` collects them for event ids."""

    machine: Machine
    addresses: _Addresses
    flags: list[_Flag] = field(default_factory=list)
    learned: dict[Operation, dict[str, dict[str, bool]]] = field(default_factory=dict)
    """Per loop that runs at least once: what each pipe knows at its end about each other pipe's
    instructions in its body, all of them (True) or some (False), so the steps after it need not ask again."""

    # -- steps -------------------------------------------------------------- #

    def accesses_within(self, op: Operation) -> dict[str, tuple[_Access, ...]]:
        """Per pipe, what the instructions in `op` (itself included) access."""
        per_pipe: dict[str, list[_Access]] = defaultdict(list)
        for inner in op.walk():
            if not isinstance(inner, npu.NpuOperation) or isinstance(inner, npu.BarrierOp):
                continue
            try:
                pipe = inner.pipe(self.machine)
            except (VerifyException, KeyError) as error:
                raise error_at(
                    inner, f"npu-insert-sync cannot place {inner.name}: {error}"
                ) from None
            if pipe is not None:
                per_pipe[pipe] += self.addresses.accesses(inner)
        return {pipe: tuple(accesses) for pipe, accesses in per_pipe.items()}

    def steps(self, block: Block) -> list[_Step]:
        steps: list[_Step] = []
        for op in block.ops:
            if isinstance(op, npu.BarrierOp):
                steps.append(
                    _Step([op], {}, (op.pipe.data,) if op.pipe is not None else self.machine.pipes)
                )
                continue
            accesses = self.accesses_within(op)
            if not accesses:
                continue
            previous = steps[-1] if steps else None
            if (
                previous is not None
                and len(accesses) == 1
                and previous.accesses.keys() == accesses.keys()
            ):
                (pipe,) = accesses
                previous.ops.append(op)
                previous.accesses[pipe] += accesses[pipe]
                previous.members.append(accesses)
            else:
                steps.append(_Step([op], dict(accesses), members=[accesses]))
        return steps

    # -- blocks ------------------------------------------------------------- #

    def synchronize(self, block: Block, loop: scf.ForOp | None = None) -> None:
        for op in list(block.ops):
            if isinstance(op, scf.ForOp):
                self.synchronize(op.body.block, op)
            elif isinstance(op, scf.IfOp):
                for region in op.regions:
                    for inner in region.blocks:
                        self.synchronize(inner)
            elif op.regions and self.accesses_within(op):
                self.barrier_everywhere(op)
        steps = self.steps(block)
        forward, snapshots, known = self.forward(steps)
        carried = [] if loop is None else self.carried(steps, forward, snapshots, known)
        for dependence in forward:
            self.add_flag(steps, dependence)
        for dependence in carried:
            self.add_token(steps, dependence, loop)
        if loop is not None and self.addresses.runs_once(loop):
            self.learned[loop] = _learned_in_body(steps, known)

    def forward(
        self, steps: list[_Step]
    ) -> tuple[list[_Dependence], list[dict[str, Clock]], dict[str, Clock]]:
        """The dependences to flag within one pass over `steps`, each pipe's clock after each step, and at the end."""
        known: dict[str, Clock] = defaultdict(dict)
        snapshots: list[dict[str, Clock]] = []
        needed: list[_Dependence] = []
        seen: set[str] = set()
        """The pipes of the steps before step j."""
        for j, step in enumerate(steps):
            _drain(known, step, j, self.machine.pipes)
            for dst in step.accesses:
                # Steps that `dst` already knows every other pipe finished need no flag (`_to_flag`
                # drops them): scanning back to them made the pass quadratic in a long block.
                ordered = min(
                    (known[dst].get(src, _NEVER) for src in seen if src != dst), default=j - 1
                )
                producers = self.producers(steps, j, dst, range(j - 1, max(ordered, -1), -1))
                for src, i, covered in _to_flag(
                    known[dst], producers, lambda src, i: snapshots[i][src], 0
                ):
                    before = min(step.first_needing(dst, steps[:j], other) for other in covered)
                    needed.append(_Dependence(src, i, dst, j, before))
            if len(step.ops) == 1 and step.first in self.learned:
                _learn_from_loop(known, steps, j, self.learned[step.first])
            snapshots.append({pipe: {**known[pipe], pipe: j} for pipe in step.accesses})
            seen.update(step.accesses)
        return needed, snapshots, known

    def carried(
        self,
        steps: list[_Step],
        forward: list[_Dependence],
        snapshots: list[dict[str, Clock]],
        end: dict[str, Clock],
    ) -> list[_Dependence]:
        """The dependences of a step on a step at or after it in the previous iteration not already ordered.

        Steps of the previous iteration count from -len(steps); a pipe starts the
        iteration knowing what it knew at the end of the previous one.
        """
        count = len(steps)
        known: dict[str, Clock] = defaultdict(
            dict, {pipe: _shift(clock, -count) for pipe, clock in end.items()}
        )
        waits: dict[tuple[int, str], list[_Dependence]] = defaultdict(list)
        for dependence in forward:
            waits[dependence.consumer, dependence.dst].append(dependence)
        needed: list[_Dependence] = []
        later: list[set[str]] = [set() for _ in range(count + 1)]
        """Per j, the pipes of steps j and after: the only producers step j scans for."""
        for j in range(count - 1, -1, -1):
            later[j] = later[j + 1] | steps[j].accesses.keys()
        for j, step in enumerate(steps):
            _drain(known, step, j, self.machine.pipes)
            for dst in step.accesses:
                # As in `forward`: steps that `dst` knows every other pipe finished in the previous
                # iteration need no flag, so the scan stops before them (it was quadratic in the body).
                ordered = min(
                    (known[dst].get(src, _NEVER) for src in later[j] if src != dst), default=-1
                )
                candidates = range(count - 1, max(j, ordered + count + 1) - 1, -1)
                producers = self.producers(steps, j, dst, candidates)
                needing = {src: step.first_needing(dst, steps[j:], src) for src in producers}
                for dependence in waits[j, dst]:
                    clock = snapshots[dependence.producer][dependence.src]
                    for src, i in producers.items():
                        if known[dst].get(src, _NEVER) < i - count <= clock.get(src, _NEVER):
                            dependence.before = min(dependence.before, needing[src])
                    _learn(known[dst], clock)
                previous = lambda src, i: _shift(snapshots[i][src], -count)  # noqa: E731
                for src, i, covered in _to_flag(known[dst], producers, previous, -count):
                    needed.append(
                        _Dependence(src, i, dst, j, min(needing[other] for other in covered))
                    )
        return needed

    @staticmethod
    def producers(
        steps: list[_Step], j: int, dst: str, candidates: Iterable[int]
    ) -> dict[str, int]:
        """Per other pipe, the first step of `candidates` whose instructions on it conflict with step j's on `dst`."""
        found: dict[str, int] = {}
        for i in candidates:
            for src in steps[i].accesses:
                if src != dst and src not in found and steps[i].conflicts(src, steps[j], dst):
                    found[src] = i
        return found

    # -- flags -------------------------------------------------------------- #

    def add_flag(self, steps: list[_Step], dependence: _Dependence) -> None:
        src, dst = dependence.src, dependence.dst
        setter, waiter = npu.SetFlagOp(src, dst, 0), npu.WaitFlagOp(src, dst, 0)
        Rewriter.insert_op(setter, InsertPoint.after(steps[dependence.producer].last))
        consumer = steps[dependence.consumer].ops[dependence.before]
        setter.location, waiter.location = (
            steps[dependence.producer].last.location,
            consumer.location,
        )
        Rewriter.insert_op(waiter, InsertPoint.before(consumer))
        self.flags.append(_Flag(src, dst, [setter, waiter], waiter, consumer))

    def add_token(self, steps: list[_Step], dependence: _Dependence, loop: scf.ForOp) -> None:
        """A flag carried around `loop`: set before it, waited after it, so every wait in the body has its set."""
        src, dst = dependence.src, dependence.dst
        ops = [
            npu.SetFlagOp(src, dst, 0),
            npu.WaitFlagOp(src, dst, 0),
            npu.SetFlagOp(src, dst, 0),
            npu.WaitFlagOp(src, dst, 0),
        ]
        before, waiter, setter, after = ops
        consumer = steps[dependence.consumer].ops[dependence.before]
        before.location = after.location = loop.location
        setter.location, waiter.location = (
            steps[dependence.producer].last.location,
            consumer.location,
        )
        Rewriter.insert_op(before, InsertPoint.before(loop))
        Rewriter.insert_op(waiter, InsertPoint.before(consumer))
        Rewriter.insert_op(setter, InsertPoint.after(steps[dependence.producer].last))
        Rewriter.insert_op(after, InsertPoint.after(loop))
        self.flags.append(_Flag(src, dst, ops, waiter, consumer))

    def barrier_everywhere(self, op: Operation) -> None:
        """Control flow the pass does not follow: a barrier before each step inside it."""
        emit_remark(
            op,
            f"npu-insert-sync: {op.name} is not scf.for or scf.if; a barrier orders every instruction in it",
        )
        for region in op.regions:
            for block in region.blocks:
                for step in self.steps(block):
                    Rewriter.insert_op(npu.BarrierOp(), InsertPoint.before(step.first))
                for inner in block.ops:
                    if inner.regions and self.accesses_within(inner):
                        self.barrier_everywhere(inner)

    def assign_events(self, function: func.FuncOp) -> None:
        """Per pipe pair, the lowest event id no flag pending at the same time holds; a barrier when none is left."""
        position = {op: index for index, op in enumerate(function.walk())}
        for flag in self.flags:
            places = [position[op] for op in flag.ops]
            flag.span = (min(places), max(places))
        given: dict[tuple[str, str], list[tuple[_Flag, int]]] = defaultdict(list)
        for flag in sorted(self.flags, key=lambda f: f.span):
            # Flags come by start: one that ended before this one starts ends before every later one.
            live = [
                (other, event)
                for other, event in given[flag.src, flag.dst]
                if other.span[1] >= flag.span[0]
            ]
            pair = given[flag.src, flag.dst] = live
            taken = {event for _, event in pair}
            event = min(set(range(len(taken) + 1)) - taken)
            if event < self.machine.flag_ids:
                pair.append((flag, event))
                for op in flag.ops:
                    op.event = event
            else:
                self.fall_back(flag)

    def fall_back(self, flag: _Flag) -> None:
        Rewriter.replace_op(flag.wait, npu.BarrierOp(flag.src))
        for op in flag.ops:
            if op is not flag.wait:
                Rewriter.erase_op(op)
        emit_remark(
            flag.consumer,
            f'npu-insert-sync: no event id left for "{flag.src}" -> "{flag.dst}" (machine \'{self.machine.name}\' '
            f'has {self.machine.flag_ids}); npu.barrier "{flag.src}" orders this instead',
        )


def _learn(clock: Clock, other: Clock) -> None:
    for pipe, step in other.items():
        if step > clock.get(pipe, _NEVER):
            clock[pipe] = step


def _shift(clock: Clock, by: int) -> Clock:
    return {pipe: step + by for pipe, step in clock.items()}


_NEVER = -(1 << 60)


def _to_flag(
    known: Clock, producers: dict[str, int], clock_of: Callable[[str, int], Clock], shift: int
) -> list[tuple[str, int, list[str]]]:
    """The producers (pipe, step) a consumer must wait for that `known` does not order already,
    each with the producers its wait orders (itself and those it orders transitively).

    The latest producer goes first, and among equals the one whose clock orders most of the
    others, since waiting for it may order the rest; each wait teaches `known` its producer's
    clock. Steps are compared shifted by `shift` (the previous iteration's count from -len).
    """
    chosen: list[tuple[str, int, list[str]]] = []
    waiting = {src: i for src, i in producers.items() if known.get(src, _NEVER) < i + shift}
    while True:
        if chosen:
            still = {src: i for src, i in waiting.items() if known.get(src, _NEVER) < i + shift}
            chosen[-1][2].extend(src for src in waiting if src not in still)
            waiting = still
        if not waiting:
            return chosen

        def reach(src: str, waiting: dict[str, int] = waiting) -> tuple[int, int]:
            clock = clock_of(src, waiting[src])
            return waiting[src], sum(
                clock.get(other, _NEVER) >= i + shift for other, i in waiting.items()
            )

        src = max(waiting, key=reach)
        chosen.append((src, waiting[src], []))
        _learn(known, clock_of(src, waiting[src]))


def _learned_in_body(steps: list[_Step], known: dict[str, Clock]) -> dict[str, dict[str, bool]]:
    last = {pipe: j for j, step in enumerate(steps) for pipe in step.accesses}
    return {
        dst: {
            src: step >= last[src]
            for src, step in clock.items()
            if src != dst and src in last and step >= 0
        }
        for dst, clock in known.items()
    }


def _learn_from_loop(
    known: dict[str, Clock], steps: list[_Step], j: int, learned: dict[str, dict[str, bool]]
) -> None:
    """After loop step j: a pipe that knew all of another's instructions in the body finished knows the
    whole step did; one that knew some knows, as pipes run in order, that the steps before the loop did."""
    for dst, sources in learned.items():
        for src, everything in sources.items():
            before = next((i for i in range(j - 1, -1, -1) if src in steps[i].accesses), None)
            step = j if everything else before
            if step is not None and known[dst].get(src, -1) < step:
                known[dst][src] = step


def _drain(known: dict[str, Clock], step: _Step, j: int, pipes: Iterable[str]) -> None:
    """After a barrier (step j) every pipe knows the drained pipes finished everything before it."""
    for pipe in pipes:
        for drained in step.drains:
            known[pipe][drained] = j


def synchronize_function(function: func.FuncOp, machine: Machine) -> None:
    """Insert the flags of `function` (see `NpuInsertSyncPass`)."""
    if any(isinstance(op, npu.SetFlagOp | npu.WaitFlagOp) for op in function.walk()):
        emit_remark(
            function, "npu-insert-sync: this function already has flags; it is left as it is"
        )
        return
    inserter = _Function(machine, _Addresses(machine))
    inserter.synchronize(function.body.block)
    inserter.assign_events(function)


@dataclass(frozen=True)
class NpuInsertSyncPass(ModulePass):
    """Insert `npu.set_flag`/`npu.wait_flag` for every dependence between instructions of different pipes.

    Two instructions of one pipe are ordered already (`NpuOperation.pipe`); one
    that reads or writes bytes another pipe wrote, or writes bytes another pipe
    read (`buffer_windows`), gets `npu.set_flag "P" -> "Q", id` after the producer
    and `npu.wait_flag "P" -> "Q", id` before it. The pass works one block at a
    time on steps: runs of consecutive instructions of one pipe (a flag is set
    after the whole run, as hand-written kernels do), and `scf.for`/`scf.if` ops,
    which stand for every instruction inside them. A step that depends on a later
    step of the previous loop iteration gets a loop-carried flag (set before the
    loop, waited after it, as in `examples/npu/gemm_double_buffered.mlir`). A
    dependence is skipped when the consumer's pipe already knows the producer has
    finished, transitively through the flags placed (as the hazard checker of
    `interpreters/timing.py` reasons). Accesses are byte ranges; dynamic indices
    are bounded by constants and loop bounds, and a window ends at its buffer's end
    at the latest; an instruction that does not declare its windows reads and
    writes every buffer. Event ids are chosen per pipe pair so that no two flags
    that may be pending at once share one; where the machine's `flag_ids` run out,
    or inside other control flow, the dependence falls back to `npu.barrier` (with
    a remark). Run it after `npu-plan-memory`, so that buffers sharing bytes are
    seen to; a function that already has flags is left as it is (with a remark).

        npu.dma "mte2" %A[0, 0] -> %a1[0, 0] ...
        npu.dma "mte1" %a1[0, 0] -> %a0[0, 0] ...

    becomes

        npu.dma "mte2" %A[0, 0] -> %a1[0, 0] ...
        npu.set_flag "mte2" -> "mte1", 0
        npu.wait_flag "mte2" -> "mte1", 0
        npu.dma "mte1" %a1[0, 0] -> %a0[0, 0] ...

    Option: `machine` (a preset or a machine TOML file; default: the module's `npu.machine`).
    """

    name = "npu-insert-sync"

    machine: str | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        machine = pass_machine(op, self.machine, self.name)
        for function in defined_functions(op):
            synchronize_function(function, machine)
