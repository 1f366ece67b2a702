"""Timing and ordering model of npu cores: in-order pipes, flags between them, and the hazards a
program's ordering leaves, as `Timeline` (one core) and `TimingStats` (what a run cost).
"""

from __future__ import annotations

import bisect
import math
import operator
from collections import defaultdict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from xdsl.ir import Operation

from ziggurat.diagnostics import emit_warning, error_at, note_at
from ziggurat.ir.useful_work import UsefulWork, pair_key

if TYPE_CHECKING:
    from ziggurat.machine import DmaEngine, Machine

# Vector operations the unit iterates over several passes (the machine's `transcendental_cost`).
TRANSCENDENTAL = frozenset({"exp", "rsqrt", "div"})


# --------------------------------------------------------------------------- #
# Cost of one instruction, in cycles
# --------------------------------------------------------------------------- #


def dma_bandwidth(
    machine: Machine, engine: DmaEngine, src: str, dst: str, active_cores: int = 1
) -> float:
    """Bytes per cycle one transfer on `engine` from `src` to `dst` gets on one core."""
    bandwidth = engine.bytes_per_cycle
    shared = engine.shared_bandwidth
    if shared is not None and shared in (src, dst):
        memory = machine.memories[shared]
        side = memory.read_bytes_per_cycle if shared == src else memory.write_bytes_per_cycle
        bandwidth = min(bandwidth, side / max(1, active_cores))
    return bandwidth


def dma_cycles(
    machine: Machine,
    engine: DmaEngine,
    src: str,
    dst: str,
    src_bytes: int,
    dst_bytes: int,
    active_cores: int = 1,
) -> float:
    """`setup + bytes / bandwidth`; a casting transfer costs the wider of its two sides."""
    return engine.setup_latency + max(src_bytes, dst_bytes) / dma_bandwidth(
        machine, engine, src, dst, active_cores
    )


def shared_side(engine: DmaEngine, src: str, dst: str) -> tuple[str, str] | None:
    """The memory whose bandwidth a transfer on `engine` shares with the other cores, and
    the side it uses ("read" from it or "write" to it); None if it shares none."""
    shared = engine.shared_bandwidth
    if shared is None or shared not in (src, dst):
        return None
    return shared, "read" if shared == src else "write"


class GlobalTraffic:
    """Which cores move bytes through a shared memory's read or write side, and when: the
    bandwidth a transfer gets is the side's bandwidth divided among the cores transferring on
    it at the moment it starts (the cores run their phases interleaved by the start time of
    their transfers, `run_npu`). A core alone gets the whole bandwidth (up to its engine's
    rate); two cores that start at once get half each. A transfer keeps the rate it started
    with: one that starts while another is in flight takes its share, and the earlier one is
    not slowed down after the fact."""

    def __init__(self, cores: int):
        self.cores = cores
        self.in_flight: dict[tuple[str, str], list[list[tuple[float, float]]]] = {}
        self.last_end: dict[tuple[str, str], np.ndarray] = {}
        """Per side, when each core's last transfer there ends: only a core whose last one ends
        after a start can have one in flight then (a numpy test over all cores at once)."""

    def sharing(self, side: tuple[str, str], core: int, start: float, starting: int) -> int:
        """How many cores share `side` for a transfer of `core` starting at `start`: itself,
        the cores with a transfer on it in flight then, and `starting` others that start one
        at the same moment."""
        per_core = self.in_flight.get(side)
        if per_core is None:
            return 1 + starting
        busy = 0
        for other in np.flatnonzero(self.last_end[side] > start).tolist():
            if other != core:
                for s, e in per_core[other]:
                    if s <= start < e:
                        busy += 1
                        break
        return 1 + busy + starting

    def add(self, side: tuple[str, str], core: int, start: float, end: float) -> None:
        per_core = self.in_flight.get(side)
        if per_core is None:
            per_core = self.in_flight[side] = [[] for _ in range(self.cores)]
            self.last_end[side] = np.full(self.cores, -np.inf)
        # the core's transfers that ended before this one starts no longer overlap the others'
        per_core[core] = [(s, e) for s, e in per_core[core] if e > start]
        per_core[core].append((start, end))
        last = self.last_end[side]
        last[core] = max(last[core], end)


def load_cycles(machine: Machine, space: str) -> float:
    """A scalar load: the latency of the memory space it reads (at least a cycle)."""
    return max(1, machine.memories[space].latency)


def mma_cycles(machine: Machine, m: int, n: int, k: int, in_dtype: str, acc_dtype: str) -> float:
    """`latency + M*N*K / MACs per cycle` for the unit's rate on that dtype pair; folds on a systolic array."""
    unit = machine.matrix
    rate = unit.dtypes[(in_dtype, acc_dtype)]
    if unit.dataflow is not None and unit.rows is not None and unit.cols is not None:
        # a pair the PEs run below one MAC per cycle each stretches every fold alike
        return (
            systolic_cycles(unit.dataflow, unit.rows, unit.cols, m, n, k)
            * unit.rows
            * unit.cols
            / rate
        )
    return unit.latency + m * n * k / rate


def systolic_cycles(dataflow: str, rows: int, cols: int, m: int, n: int, k: int) -> int:
    """Cycles of C (MxN) = A (MxK) x B (KxN) on a rows x cols array, stall-free, as SCALE-Sim counts them.

    The dataflow decides which two of M, N, K are laid out on the array (each
    cut into folds of `rows` and `cols`) and which one streams through it in
    time. A fold pre-loads the stationary operand (`rows` cycles, for ws and
    is), streams the temporal dimension, and fills and drains the skewed
    wavefront (`rows + cols - 2`); a partial fold costs a whole one:

        os (outputs stay):  ceil(M/R) * ceil(N/C) folds of      R + C + K - 2
        ws (weights stay):  ceil(K/R) * ceil(N/C) folds of  2 * R + C + M - 2
        is (inputs stay):   ceil(K/R) * ceil(M/C) folds of  2 * R + C + N - 2

    SCALE-Sim 3.0 reports one cycle less per layer (its count starts at
    cycle 0); an instruction here is a layer, or a tile of one, so the
    difference stays within a cycle per instruction.
    """
    if dataflow == "os":
        folds, per_fold = math.ceil(m / rows) * math.ceil(n / cols), rows + cols + k - 2
    elif dataflow == "ws":
        folds, per_fold = math.ceil(k / rows) * math.ceil(n / cols), 2 * rows + cols + m - 2
    elif dataflow == "is":
        folds, per_fold = math.ceil(k / rows) * math.ceil(m / cols), 2 * rows + cols + n - 2
    else:
        raise ValueError(f"unknown dataflow '{dataflow}' (os, ws or is)")
    return folds * per_fold


def vector_cycles(machine: Machine, kind: str, repeat: int, block_bytes: int) -> float:
    """`latency + repeat * ceil(block bytes / bytes per cycle)`, slower for transcendentals."""
    unit = machine.vector
    per_repeat = max(1, math.ceil(block_bytes / unit.bytes_per_cycle))
    if kind in TRANSCENDENTAL:
        per_repeat *= unit.transcendental_cost
    return unit.latency + repeat * per_repeat


# --------------------------------------------------------------------------- #
# The timeline
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class Access:
    """An instruction's access to bytes [start, end) of a memory space, of which it moves `bytes`."""

    space: str
    start: int
    end: int
    bytes: int
    window: tuple[tuple[int, ...], tuple[int, ...], int] | None = field(default=None, compare=False)
    """The strided window inside [start, end), when known: its shape, its strides in elements
    and the element size; the check across cores compares windows, not only their bounds."""


def _runs(access: Access) -> tuple[np.ndarray, np.ndarray]:
    """The contiguous byte runs an access touches, sorted: (starts, ends)."""
    if access.window is None:
        return np.array([access.start]), np.array([access.end])
    shape, strides, itemsize = access.window
    if shape and strides[-1] == 1:
        length, shape, strides = shape[-1] * itemsize, shape[:-1], strides[:-1]
    else:
        length = itemsize
    offsets = np.zeros((), np.int64)
    for size, stride in zip(shape, strides):
        offsets = np.add.outer(offsets, np.arange(size, dtype=np.int64) * stride * itemsize)
    starts = np.sort(offsets.ravel()) + access.start
    return starts, starts + length


def windows_overlap(a: Access, b: Access) -> bool:
    """Whether two accesses to one space touch a common byte (their strided windows, not only
    their bounding ranges: two cores' row tiles of an NCHW tensor interleave)."""
    if a.space != b.space or a.end <= b.start or b.end <= a.start:
        return False
    a_starts, a_ends = _runs(a)
    b_starts, b_ends = _runs(b)
    # the last run of `a` starting before each run of `b` ends; runs of one window are disjoint
    before = np.searchsorted(a_starts, b_ends, side="left") - 1
    valid = before >= 0
    return bool(np.any(a_ends[before[valid]] > b_starts[valid]))


@dataclass(frozen=True)
class PipeEvent:
    """One instruction on one pipe, for traces."""

    pipe: str
    name: str
    start: float
    end: float
    op: Operation
    core: int = 0
    call: Operation | None = None
    """The `func.call` (a kernel launch) the instruction ran in, if any: its layer."""


@dataclass
class TimingStats:
    """What one run of a program cost on the machine."""

    machine: str
    clock_hz: float
    total_cycles: float
    busy_cycles: dict[str, float]
    """Per pipe: cycles it spent executing instructions (the average core's, for several)."""
    instructions: dict[str, int]
    """Per pipe: instructions it executed (flags included)."""
    bytes_read: dict[str, int]
    """Per memory space."""
    bytes_written: dict[str, int]
    flops: int
    """2 per multiply-accumulate of the matrix unit, 1 per active lane of a vector instruction."""
    macs: dict[tuple[str, str], int]
    """Multiply-accumulates of the matrix unit per (input, accumulator) dtype pair."""
    active_cores: int
    """Cores assumed to run at once, sharing global-memory bandwidth."""
    cores: int = 1
    """Cores whose runs these statistics cover (see `combine`)."""
    events: list[PipeEvent] = field(default_factory=list, repr=False)
    useful: UsefulWork | None = None
    """What the model asked for (`ziggurat.ir.useful_work`), when the program records it."""

    @property
    def seconds(self) -> float:
        return self.total_cycles / self.clock_hz

    def utilization(self, pipe: str) -> float:
        """Fraction of the run the pipe was busy."""
        return self.busy_cycles.get(pipe, 0.0) / self.total_cycles if self.total_cycles else 0.0

    def to_dict(self) -> dict[str, object]:
        return {
            "machine": self.machine,
            "total_cycles": self.total_cycles,
            "seconds": self.seconds,
            "busy_cycles": dict(self.busy_cycles),
            "utilization": {pipe: self.utilization(pipe) for pipe in self.busy_cycles},
            "instructions": dict(self.instructions),
            "bytes_read": dict(self.bytes_read),
            "bytes_written": dict(self.bytes_written),
            "flops": self.flops,
            "macs": {pair_key(*pair): n for pair, n in self.macs.items()},
            "active_cores": self.active_cores,
            "cores": self.cores,
            **({} if self.useful is None else {"useful": self.useful.to_dict()}),
        }

    @classmethod
    def combine(cls, per_core: Sequence[TimingStats]) -> TimingStats:
        """The statistics of cores running side by side.

        The run lasts as long as its slowest core; work (instructions, bytes,
        FLOPs) adds up; busy cycles are the cores' average, so `utilization` is
        the average core's.
        """
        first = per_core[0]
        cores = len(per_core)

        def total(counts: str) -> dict:
            sums: dict = defaultdict(int)
            for stats in per_core:
                for key, value in getattr(stats, counts).items():
                    sums[key] += value
            return dict(sums)

        return cls(
            machine=first.machine,
            clock_hz=first.clock_hz,
            total_cycles=max(stats.total_cycles for stats in per_core),
            busy_cycles={pipe: busy / cores for pipe, busy in total("busy_cycles").items()},
            instructions=total("instructions"),
            bytes_read=total("bytes_read"),
            bytes_written=total("bytes_written"),
            flops=sum(stats.flops for stats in per_core),
            macs=total("macs"),
            active_cores=first.active_cores,
            cores=sum(stats.cores for stats in per_core),
            events=[event for stats in per_core for event in stats.events],
        )


@dataclass(eq=False)
class _Record:
    """One access an instruction made; records are compared by identity (each is one access)."""

    access: Access
    pipe: str
    seq: int
    write: bool
    op: Operation
    arrival: int = 0
    """When the log took it: records starting at the same byte are listed in this order."""


def _length_class(access: Access) -> int:
    """k such that the access's length is below `4**k` and at least `4**(k-1)`: few classes per
    space (each costs a lookup), each looking back at most 4 times its records' lengths."""
    return ((access.end - access.start).bit_length() + 1) // 2


class _LengthClass:
    """A log's records of one memory space whose lengths are in one `_length_class` k, sorted by
    (start byte, arrival)."""

    def __init__(self, k: int) -> None:
        self.reach = (1 << 2 * k) - 1
        """The longest a record of this class can be: how far before an access a record overlapping it may start."""
        self.keys: list[tuple[int, int]] = []
        self.records: list[_Record] = []

    def overlapping(self, access: Access) -> list[_Record]:
        first = bisect.bisect_left(self.keys, (access.start - self.reach + 1,))
        last = bisect.bisect_left(self.keys, (access.end,))
        return [r for r in self.records[first:last] if r.access.end > access.start]


class _AccessLog:
    """The accesses some pipe may not yet be ordered after, per memory space, kind (read or
    write) and pipe, as an interval index: a read races only with writes, so it looks up only
    those, and an access looks up only the pipes with a record it is not yet ordered after.

    Records are grouped by length class (below 4**k bytes), each class sorted by start byte, so a
    lookup looks back from an access's start only as far as the records of each class can reach:
    a few long accesses (a whole padded input) do not make every lookup scan every shorter record,
    which, with a pipe that never syncs (nothing is pruned), made a run quadratic in its DMAs.
    Which record a diagnostic names does not depend on the classes: `first` picks by (start
    byte, arrival), as one sorted list would."""

    def __init__(self) -> None:
        self.classes: dict[tuple[str, bool], dict[str, dict[int, _LengthClass]]] = defaultdict(dict)
        """By (memory space, whether the records are writes), then by pipe, then by length class."""
        self.latest: dict[tuple[str, bool, str], int] = {}
        """The highest `seq` ever logged per (space, kind, pipe): a pipe known to be ordered after
        it is ordered after all of that pipe's records there, which then need no lookup."""
        self.starts: dict[str, tuple[list[tuple[int, int]], list[_Record]]] = {}
        """Every record of a space, of any kind, pipe and length, sorted by (start byte, arrival):
        the records an access contains start inside it, so `inside` needs one range of it."""
        self.size = 0
        self._arrivals = 0

    def overlapping(self, access: Access, reads: bool = True, writes: bool = True) -> list[_Record]:
        """The records overlapping `access` (of reads, writes or both), in no particular order
        (`first` picks as one sorted list would)."""
        kinds = [kind for kind, wanted in ((False, reads), (True, writes)) if wanted]
        return [
            r
            for kind in kinds
            for by_length in self.classes[(access.space, kind)].values()
            for c in by_length.values()
            for r in c.overlapping(access)
        ]

    def racing(
        self, access: Access, pipe: str, known: dict[str, int], write: bool
    ) -> list[_Record]:
        """The records of other pipes overlapping `access` that `pipe`, knowing `known` (its vector
        clock), is not yet ordered after: writes, and with `write` reads too."""
        races = []
        for kind in (False, True) if write else (True,):
            for other, by_length in self.classes[(access.space, kind)].items():
                if other == pipe:
                    continue
                seen = known.get(other, 0)
                if self.latest[(access.space, kind, other)] <= seen:
                    continue
                for c in by_length.values():
                    races += [r for r in c.overlapping(access) if r.seq > seen]
        return races

    def inside(self, access: Access, writes: bool, pipe: str | None = None) -> list[_Record]:
        """The records of reads (only `pipe`'s, when given), and with `writes` of writes too,
        overlapping `access` and contained in it."""
        starts = self.starts.get(access.space)
        if starts is None:
            return []
        keys, records = starts
        first = bisect.bisect_left(keys, (access.start,))
        last = bisect.bisect_left(keys, (access.end,), first)
        return [
            r
            for r in records[first:last]
            if access.start < r.access.end <= access.end
            and (writes if r.write else pipe is None or r.pipe == pipe)
        ]

    @staticmethod
    def first(records: Sequence[_Record]) -> _Record:
        """The record a list sorted by (start byte, arrival) holds first: the one a diagnostic names."""
        return min(records, key=operator.attrgetter("access.start", "arrival"))

    def add(self, record: _Record) -> None:
        self._arrivals += 1
        record.arrival = self._arrivals
        access = record.access
        k = _length_class(access)
        classes = self.classes[(access.space, record.write)].setdefault(record.pipe, {})
        if k not in classes:
            classes[k] = _LengthClass(k)
        length_class = classes[k]
        key = (access.start, record.arrival)
        index = bisect.bisect_right(length_class.keys, key)
        length_class.keys.insert(index, key)
        length_class.records.insert(index, record)
        latest = (access.space, record.write, record.pipe)
        if record.seq > self.latest.get(latest, 0):
            self.latest[latest] = record.seq
        keys, records = self.starts.setdefault(access.space, ([], []))
        index = bisect.bisect_right(keys, key)
        keys.insert(index, key)
        records.insert(index, record)
        self.size += 1

    def remove(self, record: _Record) -> None:
        by_pipe = self.classes[(record.access.space, record.write)]
        classes = by_pipe[record.pipe]
        k = _length_class(record.access)
        length_class = classes[k]
        key = (record.access.start, record.arrival)
        index = bisect.bisect_left(length_class.keys, key)
        del length_class.keys[index], length_class.records[index]
        keys, records = self.starts[record.access.space]
        index = bisect.bisect_left(keys, key)
        del keys[index], records[index]
        if not length_class.records:  # an empty class would still cost every lookup a bisect
            del classes[k]
            if not classes:
                del by_pipe[record.pipe]
        self.size -= 1

    def keep(self, predicate: Callable[[_Record], bool]) -> None:
        dropped: set[int] = set()
        for by_pipe in self.classes.values():
            for pipe, classes in list(by_pipe.items()):
                for k, length_class in list(classes.items()):
                    kept = []
                    for r in length_class.records:
                        if predicate(r):
                            kept.append(r)
                        else:
                            dropped.add(id(r))
                    self.size -= len(length_class.records) - len(kept)
                    length_class.records = kept
                    length_class.keys = [(r.access.start, r.arrival) for r in kept]
                    if not kept:
                        del classes[k]
                if not classes:
                    del by_pipe[pipe]
        for space, (_, records) in self.starts.items():
            kept = [r for r in records if id(r) not in dropped]
            self.starts[space] = ([(r.access.start, r.arrival) for r in kept], kept)


@dataclass(frozen=True)
class _Mark:
    now: float
    busy: dict
    count: dict
    bytes_read: dict
    bytes_written: dict
    flops: int
    macs: dict
    events: int


@dataclass(frozen=True)
class LaunchCost:
    """What a kernel launch added to a quiet timeline, relative to where it started: `Timeline.replay`
    adds it again for a launch of the same kernel on arguments that alias alike."""

    now: float
    free: dict[str, float]
    busy: dict[str, float]
    count: dict[str, int]
    bytes_read: dict[str, int]
    bytes_written: dict[str, int]
    flops: int
    macs: dict
    events: list[PipeEvent]
    """The launch's events as the first launch recorded them, from `since`."""
    since: float


def _minus(after: dict, before: dict) -> dict:
    return {k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)}


class NumericsOnly:
    """A timeline that times nothing: the interpreter runs a launch whose timing it already has
    (`LaunchCost`) on it, computing the numbers only."""

    def __init__(self, timeline: Timeline):
        self.call: Operation | None = timeline.call
        self.macs: dict = defaultdict(int)
        self.timed = timeline
        """The core's timeline, which takes the launch's timing when it ends."""

    @property
    def core(self) -> int:
        return self.timed.core

    @property
    def cycles(self) -> float:
        """The core's cycles where the launch started (what a progress display shows)."""
        return self.timed.cycles

    def scalar(self, cycles: float = 1) -> None:
        pass

    def issue(self, op, pipe, cycles, reads=(), writes=(), flops=0) -> None:
        pass

    def start_of(self, pipe: str) -> float:
        return 0.0

    def set_flag(self, op, src, dst, event) -> None:
        pass

    def wait_flag(self, op, src, dst, event) -> None:
        pass

    def barrier(self, op, pipe=None) -> None:
        pass


class Timeline:
    """Issues instructions of one core in program order, timing them and checking their ordering.

    The scalar unit walks the program (one cycle per op) and issues each
    instruction to the in-order queue of its pipe. An instruction starts when it
    has been issued, its pipe has finished the one before, and every flag its pipe
    waited on has been set; it then occupies the pipe for its cost:

    * DMA: `setup_latency + bytes / bandwidth`, the bandwidth being the engine's,
      capped by this core's share of a memory whose bandwidth all cores share
      (`DmaEngine.shared_bandwidth`);
    * MMA: `latency + M*N*K / (MACs per cycle of the dtype pair)`; on a systolic
      array (a matrix unit with `dataflow`, `rows` and `cols`) the array's folds
      instead, as SCALE-Sim counts them (`systolic_cycles`, docs/timing-validation.md);
    * vector: `latency + repeat * ceil(block bytes / bytes per cycle)`, times the
      unit's transcendental cost for exp, rsqrt and div;
    * scalar load (`npu.load`, on the scalar pipe): the latency of the space it
      reads, during which the scalar unit issues nothing (what follows may
      address data by the value).

    `npu.set_flag P -> Q` runs on P once P's earlier instructions are done and
    stamps the flag; `npu.wait_flag P -> Q` holds Q until the oldest such stamp
    (flags are counted; a wait on the scalar pipe stalls the scalar unit). Each wait
    is matched with a set issued before it in program order: a wait with no pending
    set is a deadlock, and a set never waited for is a warning at the end of the run. `npu.barrier` stalls the scalar unit
    until the pipe (default: all pipes) has drained.

    Hazards come from the program's ordering, not its timing (a race the timing
    happens to win is still a race): each pipe keeps a vector clock of which
    instructions of the other pipes are known to have finished before its next one
    starts (a wait_flag teaches it what the matching set_flag's pipe knew; a
    barrier teaches everyone). An access that conflicts with a write (or a write
    that conflicts with a read) by another pipe not yet known to have finished is
    a hazard, reported at the later instruction with a note at the earlier one.
    Ranges are each strided window's bounding byte range. Cores synchronize only
    at `npu.sync_cores` (`sync_cores`: every pipe drains and the core resumes when the
    last core has arrived, plus the machine's `sync_cores_latency`);
    `check_cores_disjoint` reports global-memory bytes one core writes and another
    touches between two of them.
    """

    def __init__(
        self,
        machine: Machine,
        active_cores: int = 1,
        core: int = 0,
        record_events: bool = True,
        record_global: bool = False,
    ):
        self.machine = machine
        self.active_cores = active_cores
        self.core = core
        self.global_spaces = {
            name for name, space in machine.memories.items() if space.level == "global"
        }
        self.global_accesses: list[tuple[Access, bool, Operation]] | None = (
            [] if record_global else None
        )
        """With `record_global`: every (access, is a write, op) to global memory, for checks across cores."""
        self.pipes = machine.pipes
        self.now = 0.0
        """The scalar unit's clock: when the next instruction is issued."""
        self.free: dict[str, float] = dict.fromkeys(self.pipes, 0.0)
        self.busy: dict[str, float] = dict.fromkeys(self.pipes, 0.0)
        self.count: dict[str, int] = dict.fromkeys(self.pipes, 0)
        self.known: dict[str, dict[str, int]] = {pipe: {} for pipe in self.pipes}
        self.flags: dict[tuple[str, str, int], deque[tuple[float, dict[str, int], Operation]]] = (
            defaultdict(deque)
        )
        self.log = _AccessLog()
        self._prune_at = (
            64  # pruning is linear in the records: grow the threshold with what survives
        )
        self.bytes_read: dict[str, int] = defaultdict(int)
        self.bytes_written: dict[str, int] = defaultdict(int)
        self.flops = 0
        self.macs: dict[tuple[str, str], int] = defaultdict(int)
        self.events: list[PipeEvent] | None = [] if record_events else None
        self.call: Operation | None = None
        """The kernel launch (`func.call`) running now, which events record as their layer."""

    @property
    def cycles(self) -> float:
        """How long the run has lasted so far: until its last issued instruction ends."""
        return max(self.now, *self.free.values())

    def scalar(self, cycles: float = 1) -> None:
        """The scalar unit runs one instruction of `cycles` (an op it walks, a loop's back edge)."""
        self.now += cycles
        self.busy[self.machine.scalar_pipe] += cycles
        self.count[self.machine.scalar_pipe] += 1

    def issue(
        self,
        op: Operation,
        pipe: str,
        cycles: float,
        reads: Sequence[Access] = (),
        writes: Sequence[Access] = (),
        flops: int = 0,
    ) -> None:
        """Issue `op` to `pipe`, where it runs for `cycles` after its pipe and flags allow."""
        seq = self.count[pipe] + 1
        for access in reads:
            self._check(op, pipe, access, write=False)
        for access in writes:
            self._check(op, pipe, access, write=True)
        start = max(self.now, self.free[pipe])
        self._run(op, pipe, start, start + cycles)
        if pipe == self.machine.scalar_pipe:
            self.now = start + cycles  # the scalar unit itself waits for its load
        for access in reads:
            self.bytes_read[access.space] += access.bytes
            self._record(_Record(access, pipe, seq, False, op))
        for access in writes:
            self.bytes_written[access.space] += access.bytes
            self._record(_Record(access, pipe, seq, True, op))
        if self.global_accesses is not None:
            self.global_accesses += [(a, False, op) for a in reads if a.space in self.global_spaces]
            self.global_accesses += [(a, True, op) for a in writes if a.space in self.global_spaces]
        self.flops += flops

    def start_of(self, pipe: str) -> float:
        """When an instruction issued to `pipe` now would start (its flags already waited for)."""
        return max(self.now, self.free[pipe])

    def set_flag(self, op: Operation, src: str, dst: str, event: int) -> None:
        time = max(self.now, self.free[src])
        clock = dict(self.known[src])
        clock[src] = self.count[src]
        self._run(op, src, time, time)
        self.flags[(src, dst, event)].append((time, clock, op))

    def wait_flag(self, op: Operation, src: str, dst: str, event: int) -> None:
        pending = self.flags[(src, dst, event)]
        if not pending:
            raise error_at(
                op,
                f'npu.wait_flag "{src}" -> "{dst}", {event} can never be satisfied: no npu.set_flag '
                f'"{src}" -> "{dst}", {event} is pending when it is issued (deadlock)',
            )
        time, clock, _ = pending.popleft()
        self._learn(dst, clock)
        start = max(self.now, self.free[dst], time)
        self._run(op, dst, start, start)
        if dst == self.machine.scalar_pipe:
            self.now = start  # what the scalar unit issues after the wait is issued after it

    def barrier(self, op: Operation, pipe: str | None = None) -> None:
        drained = self.pipes if pipe is None else (pipe,)
        self.now = max(self.now, *(self.free[p] for p in drained))
        clock = {p: self.count[p] for p in drained}
        for other in self.pipes:
            self._learn(other, clock)

    def drained(self) -> float:
        """When the scalar unit, having issued everything so far, sees every pipe drained."""
        return max(self.now, *self.free.values())

    def sync_cores(self, op: Operation, release: float) -> None:
        """`npu.sync_cores`: every pipe drains, and the core resumes at `release`, when all
        cores have arrived (the run of the cores decides it)."""
        clock = {p: self.count[p] for p in self.pipes}
        for other in self.pipes:
            self._learn(other, clock)
        self.now = max(self.drained(), release)

    # -- kernel launches timed once -------------------------------------- #

    def quiet(self) -> bool:
        """Whether nothing issued so far can delay what is issued next beyond `now`: every pipe
        drained, every flag waited for, and (`sync_cores` having run) every record ordered."""
        return all(f <= self.now for f in self.free.values()) and not any(self.flags.values())

    def mark(self) -> _Mark:
        """Where the timeline stands, to measure a launch from (`launch_since`)."""
        return _Mark(
            self.now,
            dict(self.busy),
            dict(self.count),
            dict(self.bytes_read),
            dict(self.bytes_written),
            self.flops,
            dict(self.macs),
            len(self.events) if self.events is not None else 0,
        )

    def launch_since(self, mark: _Mark) -> LaunchCost:
        """What ran since `mark` (taken on a quiet timeline), relative to it."""
        return LaunchCost(
            self.now - mark.now,
            {p: f - mark.now for p, f in self.free.items() if self.count[p] != mark.count[p]},
            _minus(self.busy, mark.busy),
            _minus(self.count, mark.count),
            _minus(self.bytes_read, mark.bytes_read),
            _minus(self.bytes_written, mark.bytes_written),
            self.flops - mark.flops,
            _minus(self.macs, mark.macs),
            self.events[mark.events :] if self.events is not None else [],
            mark.now,
        )

    def replay(self, cost: LaunchCost, call: Operation) -> None:
        """Add `cost` (a launch of the same instructions, measured from a quiet timeline) from
        `now`, on a quiet timeline: its events are the launch `call`'s."""
        start = self.now
        self.now = start + cost.now
        for pipe, end in cost.free.items():
            self.free[pipe] = start + end
        for mine, more in (
            (self.busy, cost.busy),
            (self.count, cost.count),
            (self.bytes_read, cost.bytes_read),
            (self.bytes_written, cost.bytes_written),
            (self.macs, cost.macs),
        ):
            for key, value in more.items():
                mine[key] += value
        self.flops += cost.flops
        if self.events is not None:
            shift = start - cost.since
            self.events += [
                PipeEvent(e.pipe, e.name, e.start + shift, e.end + shift, e.op, e.core, call)
                for e in cost.events
            ]

    def finish(self) -> TimingStats:
        """The run's statistics; a warning for each flag still set, which the next program would inherit."""
        for (src, dst, event), pending in self.flags.items():
            for _, _, op in pending:
                emit_warning(
                    op,
                    f'npu.set_flag "{src}" -> "{dst}", {event} is never waited for: the flag is still set at the end',
                )
        return TimingStats(
            machine=self.machine.name,
            clock_hz=self.machine.clock_hz,
            total_cycles=self.cycles,
            busy_cycles=dict(self.busy),
            instructions=dict(self.count),
            bytes_read=dict(self.bytes_read),
            bytes_written=dict(self.bytes_written),
            flops=self.flops,
            macs=dict(self.macs),
            active_cores=self.active_cores,
            events=self.events or [],
        )

    # ------------------------------------------------------------------ #

    def _run(self, op: Operation, pipe: str, start: float, end: float) -> None:
        self.free[pipe] = end
        self.busy[pipe] += end - start
        self.count[pipe] += 1
        if self.events is not None:
            self.events.append(PipeEvent(pipe, op.name, start, end, op, self.core, self.call))

    def _learn(self, pipe: str, clock: dict[str, int]) -> None:
        known = self.known[pipe]
        for other, seq in clock.items():
            if seq > known.get(other, 0):
                known[other] = seq

    def _ordered(self, pipe: str, record: _Record) -> bool:
        """Whether `record`'s instruction finishes before the next instruction of `pipe` starts."""
        return record.pipe == pipe or self.known[pipe].get(record.pipe, 0) >= record.seq

    def _check(self, op: Operation, pipe: str, access: Access, write: bool) -> None:
        races = self.log.racing(access, pipe, self.known[pipe], write)
        if races:
            record = self.log.first(races)
            other = record.access
            doing = "writes" if write else "reads"
            still = "writing" if record.write else "reading"
            error = error_at(
                op,
                f"{op.name} on pipe '{pipe}' {doing} '{access.space}' bytes [{access.start}, {access.end}) "
                f"while {record.op.name} on pipe '{record.pipe}' may still be {still} bytes "
                f'[{other.start}, {other.end}): nothing orders them (add npu.set_flag "{record.pipe}" -> '
                f'"{pipe}" after it and npu.wait_flag "{record.pipe}" -> "{pipe}" before this)',
            )
            error.diagnostics[0].notes.append(
                note_at(record.op, f"the earlier access on pipe '{record.pipe}'")
            )
            raise error

    def _record(self, new: _Record) -> None:
        # An older access inside the new one needs no record of its own when whatever must be
        # ordered after it must also be ordered after the new one, which (checked already) is
        # ordered after it: a write supersedes every access it covers; a read, its own pipe's reads.
        for old in self.log.inside(
            new.access, writes=new.write, pipe=None if new.write else new.pipe
        ):
            self.log.remove(old)
        self.log.add(new)
        if self.log.size >= self._prune_at:
            self.log.keep(lambda r: not all(self._ordered(p, r) for p in self.pipes))
            self._prune_at = max(64, 2 * self.log.size)


def check_cores_disjoint(per_core: Sequence[Sequence[tuple[Access, bool, Operation]]]) -> None:
    """Raise at the first access to global memory that another core writes.

    Between two `npu.sync_cores` (the accesses given are one such phase's) cores do
    not synchronize, so whichever order they run in, bytes one core writes and
    another reads or writes are a race: each core must keep to its own part of
    global memory (typically chosen by `npu.core_id`).
    """
    if not _cores_may_race(per_core):
        return
    # One log of every core's writes, each record knowing its core: an access is looked up once,
    # not once per other core.
    log = _AccessLog()
    core_of: dict[int, int] = {}
    for core, accesses in enumerate(per_core):
        for access, write, op in accesses:
            if write:
                record = _Record(access, f"core {core}", 0, True, op)
                core_of[id(record)] = core
                log.add(record)
    for core, accesses in enumerate(per_core):
        for access, write, op in accesses:
            races = [
                r
                for r in log.overlapping(access)
                if core_of[id(r)] != core and windows_overlap(access, r.access)
            ]
            if races:
                # the lowest-numbered other core's earliest write, as a scan core by core finds it
                other = min(core_of[id(r)] for r in races)
                record = log.first([r for r in races if core_of[id(r)] == other])
                error = error_at(
                    op,
                    f"{op.name} on core {core} {'writes' if write else 'reads'} '{access.space}' bytes "
                    f"[{access.start}, {access.end}) that {record.op.name} on core {other} writes "
                    f"[{record.access.start}, {record.access.end}): cores do not synchronize, so each must "
                    "keep to its own part of global memory (or an npu.sync_cores must separate them)",
                )
                error.diagnostics[0].notes.append(note_at(record.op, f"the write on core {other}"))
                raise error


def _cores_may_race(per_core: Sequence[Sequence[tuple[Access, bool, Operation]]]) -> bool:
    """Whether an access of one core touches a byte another core writes (what
    `check_cores_disjoint` reports), decided with numpy over byte ranges: the writes are few
    (a phase's output tiles), the reads many (every operand of every DMA).

    Per memory space, each core's write runs are merged and cut at every run boundary into
    segments; a segment two cores write is a race. Otherwise each segment has at most one owner,
    and a read races where a segment it overlaps has another owner: its bounding range first,
    for all reads at once (the sum of (owner - core)^2 over the written segments it overlaps is
    zero only if every one is its own core's), then, for a read whose range does meet another
    core's segment (rows of an NCHW tensor interleave), its strided runs. It may say True
    where there is no race (the caller then looks, exactly), never False where there is one."""
    spaces: dict[str, list[tuple[Access, int, bool]]] = defaultdict(list)
    for core, accesses in enumerate(per_core):
        for access, write, _ in accesses:
            spaces[access.space].append((access, core, write))
    for accesses in spaces.values():
        written: dict[int, list[tuple[np.ndarray, np.ndarray]]] = defaultdict(list)
        for access, core, write in accesses:
            if write:
                written[core].append(_runs(access))
        if not written:
            continue
        starts, ends, owners = [], [], []
        for core, runs in written.items():
            s, e = _merged(
                np.concatenate([r[0] for r in runs]), np.concatenate([r[1] for r in runs])
            )
            starts.append(s)
            ends.append(e)
            owners.append(np.full(len(s), core, np.int64))
        s, e, o = np.concatenate(starts), np.concatenate(ends), np.concatenate(owners)
        bounds = np.unique(np.concatenate([s, e]))
        first, last = np.searchsorted(bounds, s), np.searchsorted(bounds, e)
        count, owner, square = (np.zeros(len(bounds) + 1, np.int64) for _ in range(3))
        for total, value in ((count, 1), (owner, o), (square, o * o)):
            np.add.at(total, first, value)
            np.add.at(total, last, -value)
        count, owner, square = (np.cumsum(t[:-1]) for t in (count, owner, square))
        if np.any(count > 1):
            return True
        # prefix sums over the segments [bounds[k], bounds[k + 1])
        prefix = [np.concatenate([[0], np.cumsum(t[:-1])]) for t in (count, owner, square)]
        reads = [(a, core) for a, core, write in accesses if not write]
        if not reads:
            continue
        read_starts = np.array([a.start for a, _ in reads], np.int64)
        read_ends = np.array([a.end for a, _ in reads], np.int64)
        read_cores = np.array([core for _, core in reads], np.int64)
        suspects = np.flatnonzero(_meets_other(bounds, prefix, read_starts, read_ends, read_cores))
        for index in suspects:
            access, core = reads[index]
            run_starts, run_ends = _runs(access)
            if np.any(
                _meets_other(bounds, prefix, run_starts, run_ends, np.full(len(run_starts), core))
            ):
                return True
    return False


def _merged(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Byte runs, sorted and with the overlapping or touching ones joined."""
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], ends[order]
    reach = np.maximum.accumulate(ends)
    begins = np.concatenate([[True], starts[1:] > reach[:-1]])
    closing = np.concatenate([begins[1:], [True]])
    return starts[begins], reach[closing]


def _meets_other(
    bounds: np.ndarray,
    prefix: list[np.ndarray],
    starts: np.ndarray,
    ends: np.ndarray,
    cores: np.ndarray,
) -> np.ndarray:
    """For each byte range [start, end) of a core: whether a written segment it overlaps has
    another owner (the segments [bounds[k], bounds[k + 1]) with their prefix sums of count,
    owner and owner squared)."""
    segments = len(bounds) - 1
    low = np.clip(np.searchsorted(bounds, starts, side="right") - 1, 0, segments)
    high = np.clip(np.searchsorted(bounds, ends, side="left"), 0, segments)
    high = np.maximum(high, low)
    count, owner, square = ((p[high] - p[low]) for p in prefix)
    return square - 2 * cores * owner + cores * cores * count > 0
