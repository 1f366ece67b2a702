"""Runs `npu` programs on a machine model: the numbers they compute and what it costs.

`run_npu(module, machine, inputs)` executes the entry function instruction by instruction as
vectorized numpy calls on byte-addressed memories of the machine's capacities, timing each on
`interpreters/timing.py`'s model; `interpreters/report.py` and `interpreters/trace.py` turn its
statistics into a report and a Perfetto trace. Every failure (an index outside its buffer, a
misaligned address, a hazard, a race between cores, a deadlock, an op the machine has no instruction
for) is a `DiagnosticError` at the op's location.
"""

from __future__ import annotations

import copy
import functools
import heapq
import itertools
import math
import operator
from collections import Counter
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum, auto

import numpy as np
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
)
from xdsl.dialects.utils.dynamic_index_list import get_dynamic_index_list
from xdsl.ir import Block, Operation, SSAValue
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import VerifyException

from ziggurat.diagnostics import Diagnostic, DiagnosticError, error_at
from ziggurat.dialects import graph, loop, npu
from ziggurat.dtypes import to_numpy_dtype
from ziggurat.interpreters.interpreter import argument_names, find_function
from ziggurat.interpreters.timing import (
    Access,
    GlobalTraffic,
    LaunchCost,
    NumericsOnly,
    Timeline,
    TimingStats,
    check_cores_disjoint,
    dma_cycles,
    load_cycles,
    mma_cycles,
    shared_side,
    vector_cycles,
)
from ziggurat.ir.useful_work import UsefulWork, recorded_macs
from ziggurat.machine import Machine, load_machine
from ziggurat.plugins import loaded_entry_points
from ziggurat.verifier import verify_module


@dataclass
class NpuRunResult:
    outputs: list[np.ndarray]
    """Final contents of the entry function's arguments that were not given as inputs, in order
    (of all arguments when every one was given)."""
    stats: TimingStats
    arguments: dict[str, np.ndarray]
    """Final contents of every argument, by name."""
    core_stats: list[TimingStats]
    """Each core's statistics (`stats` is their combination)."""


InstructionImplementation = Callable[["InstructionContext", Operation], None]
"""Runs one instruction: its numerics on the views `ctx.window` gives, its cost with `ctx.issue`."""

INSTRUCTIONS_ENTRY_POINT_GROUP = "ziggurat.npu_instructions"
_instructions: dict[type[Operation], InstructionImplementation] = {}


def register_instruction(
    op_type: type[Operation], implementation: InstructionImplementation, *, override: bool = False
) -> None:
    """Let the npu interpreter run `op_type` with `implementation`.

    This is how a plugin's hardware dialect runs here: its ops subclass
    `npu.NpuOperation` (so they verify against the machine and mark the module as
    npu-level), and each op class gets an implementation, registered here or listed
    in a dict `{OpClass: run}` under the entry point group `ziggurat.npu_instructions`.
    `run(ctx, op)` gets an `InstructionContext`: index values (`ctx.index`), checked
    views of buffer windows with the access each makes (`ctx.window`), and
    `ctx.issue(op, pipe, cycles, reads, writes)`, which queues the instruction on a
    pipe of the timing model, so that it gets the same hazard checks, flags, trace
    and report as the built-in instructions.
    """
    if op_type in _instructions and not override:
        raise ValueError(f"an implementation of '{op_type.name}' is already registered")
    _instructions[op_type] = implementation


@functools.cache
def _load_instruction_plugins() -> None:
    for _, instructions, where in loaded_entry_points(INSTRUCTIONS_ENTRY_POINT_GROUP):
        if not isinstance(instructions, Mapping):
            raise DiagnosticError(
                Diagnostic("error", f"{where} must load to a dict {{op class: implementation}}")
            )
        for op_type, implementation in instructions.items():
            register_instruction(op_type, implementation)


def run_npu(
    module: ModuleOp,
    machine: Machine | str | None = None,
    inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray] = (),
    function: str | None = None,
    *,
    cores: int | None = None,
    active_cores: int | None = None,
    max_cycles: float | None = None,
    watch: Callable[[Timeline, Operation], None] | None = None,
    verify: bool = True,
    time_each_launch: bool = False,
) -> NpuRunResult:
    """Run the entry function of an npu program on `machine` (default: the module's `npu.machine`).

        result = run_npu(module, "davinci", [a, b])      # or inputs={"a": a, "b": b}
        result.outputs          # final contents of the arguments not given as inputs
        result.arguments        # final contents of every argument, by name
        result.stats            # TimingStats: total cycles, busy cycles per pipe, bytes per space, FLOPs

    The entry function (`function`, else "main", else the only public one) takes
    memrefs in global memory. `inputs` fill them in order (a list, a prefix of the
    arguments) or by name (the argument's `%name`, else `arg<i>`); the rest start
    zeroed and are the outputs. Arrays are converted to the argument's element
    type; their shape must match. Memory is one byte array per space, of the
    space's capacity (global memory sized to what the program uses); a buffer is a
    typed view at its offset, so buffers that share bytes alias as on the machine.
    The matrix unit accumulates f16/bf16/f8 in f32 and i8 in i32. The scalar
    program (`scf.for`, `scf.if`, integer `arith`) is walked directly, one scalar
    cycle per op, rather than through xDSL's interpreter, so that each instruction's
    properties are decoded once.

    The module is verified first (`verify=False`: the caller just did; seconds for a network);
    ops are checked against `machine`'s rules, and also against the module's own `npu.machine`
    when it names one.

    `cores` (default: the count the module was compiled for, its `npu.cores`, else 1; a
    module compiled for N cores runs on N only) cores run the function, each with its own
    local memories and its `npu.core_id`,
    all sharing global memory. They run phase by phase: each core up to its next
    `npu.sync_cores`, then every clock moves to the last core's drained clock plus the
    machine's `sync_cores_latency`, and the next phase starts. Within a phase the cores do
    not synchronize, so global bytes one core writes and another touches are reported as a
    race; a core that ends while another waits at `npu.sync_cores` is a deadlock. `stats` combines the cores (`TimingStats.combine`),
    `core_stats` has each. `active_cores` (default: `cores`) is how many cores share the
    global-memory bandwidth, e.g. to time one core of a kernel that runs on all of them.

    A kernel launched again (a `func.call` of `ziggurat-compile --kernels`' program) on arguments
    that share bytes as they did before is timed once: its numbers are computed again, its
    timing (cycles, busy time, traffic, events) is the first launch's, from where it starts,
    each core's own on several (`time_each_launch=True`, or `max_cycles`, times every launch;
    the report is the same, on several cores but for float rounding).

    Long runs can be bounded and observed: every `WATCH_EVERY` ops the scalar unit walks
    (and at the end), a run past `max_cycles` stops with an error at the op it reached,
    and `watch(timeline, op)` is called (`timeline.core`, `timeline.cycles`; raise to stop).
    """
    _load_instruction_plugins()
    machine = _resolve_machine(module, machine)
    compiled = compiled_cores(module)
    if cores is None:
        cores = compiled or 1
    elif compiled is not None and cores != compiled:
        raise error_at(
            module,
            f"cannot run on {cores} cores: the program was compiled for {compiled} "
            f"({npu.CORES_ATTR} = {compiled}); each core runs its share of the work by "
            "npu.core_id, so another count would skip work or repeat it",
        )
    if not 1 <= cores <= machine.cores:
        raise error_at(
            module, f"cannot run on {cores} cores: machine '{machine.name}' has {machine.cores}"
        )
    # without a given count, the cores share global bandwidth as they transfer (GlobalTraffic)
    traffic = GlobalTraffic(cores) if active_cores is None and cores > 1 else None
    active_cores = cores if active_cores is None else active_cores
    if verify:
        verify_module(module)
    if _named_machine(module) != machine:
        # verifying checked each op against the machine the module names, not this one
        npu.verify_for_machine(module, machine)
    entry = _entry_function(module, function)
    memory = _Memory.for_function(machine, entry)
    names = argument_names(entry)
    given = _bind_inputs(entry, names, inputs)
    for arg, name in zip(entry.args, names):
        if name in given:
            buffer = memory.arguments[arg]
            memory.view(buffer, 0, buffer.shape, npu.row_major_strides(buffer.shape))[...] = given[
                name
            ]
    timelines = [
        Timeline(machine, active_cores, core, record_global=cores > 1) for core in range(cores)
    ]
    runs = []
    plans: dict[Operation, object] = {}
    launch = _LaunchState()
    for core, timeline in enumerate(timelines):
        limits = None if max_cycles is None and watch is None else _Limits(max_cycles, watch)
        local = memory if core == 0 else memory.for_core()
        executor = _Executor(
            machine,
            local,
            timeline,
            1 if traffic else active_cores,
            core,
            cores,
            limits,
            traffic,
            plans,
            time_each_launch,
            launch,
        )
        runs.append(executor.run_block(entry.body.block, dict(memory.arguments)))
    _run_phases(runs, timelines, machine, launch)
    for timeline in timelines:
        if max_cycles is not None and timeline.cycles > max_cycles:
            raise _past_max_cycles(entry, max_cycles, timeline)
    arguments = {
        name: loop.as_declared(
            memory.view(buffer, 0, buffer.shape, npu.row_major_strides(buffer.shape)).copy(),
            declared,
        )
        for name, buffer, declared in zip(
            names, memory.arguments.values(), loop.declared_element_types(entry)
        )
    }
    outputs = [arguments[name] for name in names if name not in given] or list(arguments.values())
    core_stats = [timeline.finish() for timeline in timelines]
    stats = core_stats[0] if cores == 1 else TimingStats.combine(core_stats)
    macs = recorded_macs(module)
    if macs is not None:
        stats.useful = _useful_work(macs, entry, names, set(given), machine)
    return NpuRunResult(outputs, stats, arguments, core_stats)


def _useful_work(
    macs: dict[tuple[str, str], int],
    entry: func.FuncOp,
    names: Sequence[str],
    given: set[str],
    machine: Machine,
) -> UsefulWork:
    """The recorded MACs, with the compulsory global traffic of the entry function: each
    argument given as an input and each global it reads (a weight) read once, each other
    argument (an output) written once."""
    outer = machine.global_memory().name

    def global_bytes(value: SSAValue) -> int:
        if not isinstance(value.type, MemRefType) or npu.space_of(value) != outer:
            return 0
        return npu.type_bytes(value.type)

    read = written = 0
    for arg, name in zip(entry.args, names):
        if name in given:
            read += global_bytes(arg)
        else:
            written += global_bytes(arg)
    weights = {
        op.name_.string_value(): op.memref
        for op in entry.walk()
        if isinstance(op, memref.GetGlobalOp)
    }
    read += sum(global_bytes(value) for value in weights.values())
    return UsefulWork(macs, read, written)


def compiled_cores(module: ModuleOp) -> int | None:
    """The core count the module was compiled for (its `npu.cores`), if it names one."""
    attribute = module.attributes.get(npu.CORES_ATTR)
    return attribute.value.data if isinstance(attribute, IntegerAttr) else None


@dataclass
class _LaunchState:
    """What the cores of a run share about the kernel launch they are in (`_Executor._call`)."""

    quiet: bool = False
    """At the last launch, every core's timeline was quiet once the cores met: a launch of a
    kernel timed before may take that timing (each core its own part of it)."""
    replaying: bool = False
    """The cores are in a launch whose timing they take from an earlier one: its barriers
    order the numbers only, and nothing is timed until the next launch."""


def _run_phases(
    runs: list[Generator[Operation | float, int, object]],
    timelines: list[Timeline],
    machine: Machine,
    launch: _LaunchState | None = None,
) -> None:
    """Run the cores phase by phase: each to its next `npu.sync_cores`, then all clocks align there.

    Within a phase the cores do not synchronize, so global bytes one core writes and
    another touches in the same phase are a race; a barrier orders what is before it
    on every core before what is after it on every core. A core whose transfers share
    global bandwidth (`GlobalTraffic`) stops before each, at the time it would start: the
    core with the earliest such time goes on first, so that each transfer sees the ones
    the other cores started before it.
    """

    def resume(core: int, value: int | None) -> Operation | float | None:
        try:
            return next(runs[core]) if value is None else runs[core].send(value)
        except StopIteration:
            return None

    arrived: list[Operation | float | None] = [resume(core, None) for core in range(len(runs))]
    while True:
        waiting = [(t, core) for core, t in enumerate(arrived) if isinstance(t, float)]
        heapq.heapify(waiting)
        # how many waiting cores start a transfer at each time (a count, not a scan of the heap:
        # at a phase's start all the cores wait at one time)
        at = Counter(t for t, _ in waiting)
        while waiting:
            start, core = heapq.heappop(waiting)
            at[start] -= 1
            arrived[core] = resume(core, at[start])
            if isinstance(arrived[core], float):
                heapq.heappush(waiting, (arrived[core], core))
                at[arrived[core]] += 1
        if None in arrived and any(op is not None for op in arrived):
            ended = arrived.index(None)
            waiting_core = next(core for core, op in enumerate(arrived) if op is not None)
            op = arrived[waiting_core]
            assert isinstance(op, Operation)
            raise error_at(
                op,
                f"npu.sync_cores on core {waiting_core} waits for core {ended}, which ended "
                "without reaching it (deadlock): every core must pass as many npu.sync_cores",
            )
        if (
            launch is not None
            and launch.replaying
            and not isinstance(arrived[0], func.CallOp | None)
        ):
            # a barrier inside a launch whose timing is an earlier launch's: it orders the
            # cores' numbers; their timelines take the launch's timing as they leave it
            arrived = [resume(core, None) for core in range(len(runs))]
            continue
        if len(runs) > 1:
            check_cores_disjoint([timeline.global_accesses or [] for timeline in timelines])
            for timeline in timelines:
                timeline.global_accesses = []
        if arrived[0] is None:
            return
        release = max(timeline.drained() for timeline in timelines) + machine.sync_cores_latency
        for timeline, op in zip(timelines, arrived):
            assert isinstance(op, Operation)
            timeline.sync_cores(op, release)
        if launch is not None:
            launch.replaying = False
            launch.quiet = all(timeline.quiet() for timeline in timelines)
        arrived = [resume(core, None) for core in range(len(runs))]


WATCH_EVERY = 256
"""Ops the scalar unit walks between two checks of `max_cycles` and calls of `watch`."""


@dataclass
class _Limits:
    max_cycles: float | None
    watch: Callable[[Timeline, Operation], None] | None
    countdown: int = WATCH_EVERY


def _past_max_cycles(op: Operation, max_cycles: float, timeline: Timeline) -> DiagnosticError:
    return error_at(
        op,
        f"the run passed its limit of {max_cycles:,.0f} cycles: stopped at cycle {timeline.cycles:,.0f} "
        f"on core {timeline.core}",
    )


def is_npu_program(module: ModuleOp) -> bool:
    """Whether `module` holds npu instructions, i.e. runs on a machine model with `run_npu`."""
    return any(isinstance(op, npu.NpuOperation) for op in module.walk())


# --------------------------------------------------------------------------- #
# Setting up a run
# --------------------------------------------------------------------------- #


def _resolve_machine(module: ModuleOp, machine: Machine | str | None) -> Machine:
    if isinstance(machine, str):
        return load_machine(machine)
    if machine is not None:
        return machine
    name = module.attributes.get(npu.MACHINE_ATTR)
    if not isinstance(name, StringAttr):
        raise error_at(
            module,
            f'no machine given: pass one or set {npu.MACHINE_ATTR} = "davinci" on the module',
        )
    return load_machine(name.data)


def _named_machine(module: ModuleOp) -> Machine | None:
    """The machine the module's `npu.machine` names, when it loads."""
    name = module.attributes.get(npu.MACHINE_ATTR)
    if not isinstance(name, StringAttr):
        return None
    try:
        return load_machine(name.data)
    except DiagnosticError:
        return None


def _entry_function(module: ModuleOp, name: str | None) -> func.FuncOp:
    entry = find_function(module, name)
    if not entry.body.blocks:
        raise error_at(entry, f"@{entry.sym_name.data} is a declaration: there is no body to run")
    return entry


def _bind_inputs(
    entry: func.FuncOp, names: list[str], inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    if isinstance(inputs, Mapping):
        unknown = set(inputs) - set(names)
        if unknown:
            raise error_at(
                entry,
                f"no argument named {', '.join(sorted(unknown))} (arguments: {', '.join(names)})",
            )
        given = dict(inputs)
    else:
        if len(inputs) > len(names):
            raise error_at(
                entry, f"{len(inputs)} inputs given to a function of {len(names)} arguments"
            )
        given = dict(zip(names, inputs))
    converted = {}
    declared = loop.declared_element_types(entry)
    for arg, name, element_type in zip(entry.args, names, declared):
        if name not in given:
            continue
        arg_type = arg.type
        assert isinstance(arg_type, MemRefType)
        array = np.asarray(given[name])
        if array.shape != arg_type.get_shape():
            raise error_at(
                entry, f"input '{name}' has shape {array.shape}, the argument is {arg_type}"
            )
        converted[name] = loop.as_buffer(array, element_type, arg_type)
    return converted


@dataclass(frozen=True)
class _Buffer:
    space: str
    offset: int
    """Byte offset in the space."""
    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def elements(self) -> int:
        return math.prod(self.shape)


def _global_constant(machine: Machine, op: memref.GetGlobalOp) -> tuple[str, np.ndarray]:
    """The global space and the initial contents of the `memref.global` that `op` reads."""
    symbol = SymbolTable.lookup_symbol(op, op.name_)
    if not isinstance(symbol, memref.GlobalOp) or not isinstance(
        symbol.initial_value, DenseIntOrFPElementsAttr
    ):
        raise error_at(op, f"{op.name_} is not a memref.global with a dense initial value")
    space = npu.space_of(op.memref)
    if space not in machine.memories or machine.memories[space].level != "global":
        raise error_at(op, f"constant {op.name_} must be in a global memory space, got '{space}'")
    return space, graph.ConstantOp(symbol.initial_value).to_array()


def called_functions(entry: func.FuncOp) -> list[func.FuncOp]:
    """`entry` and the functions it calls (kernels), directly or not, each once."""
    found = [entry]
    for function in found:
        for op in function.walk():
            if isinstance(op, func.CallOp):
                callee = SymbolTable.lookup_symbol(op, op.callee)
                if not isinstance(callee, func.FuncOp) or not callee.body.blocks:
                    raise error_at(op, f"{op.callee} is not a function with a body to run")
                if callee not in found:
                    found.append(callee)
    return found


def _buffer_of(value: SSAValue, offset: int) -> _Buffer:
    memref_type = value.type
    assert isinstance(memref_type, MemRefType)
    return _Buffer(
        npu.space_of(value),
        offset,
        memref_type.get_shape(),
        to_numpy_dtype(memref_type.get_element_type()),
    )


class _Memory:
    """One byte array per memory space; buffers are typed strided views into them."""

    def __init__(
        self,
        machine: Machine,
        sizes: dict[str, int],
        arguments: dict[SSAValue, _Buffer],
        globals_: dict[str, _Buffer] | None = None,
    ):
        self.machine = machine
        self.bytes = {space: np.zeros(size, np.uint8) for space, size in sizes.items()}
        self.arguments = arguments
        self.globals = globals_ or {}

    @classmethod
    def for_function(cls, machine: Machine, entry: func.FuncOp) -> _Memory:
        """Local spaces at their capacity; global spaces hold their buffers, then the constants
        (`memref.global`s the function reads), then the arguments."""
        used: dict[str, int] = {}
        functions = called_functions(entry)
        for op in (op for function in functions for op in function.walk()):
            if isinstance(op, npu.BufferOp):
                space = npu.space_of(op.result)
                used[space] = max(
                    used.get(space, 0), op.byte_offset + npu.type_bytes(op.result.type)
                )
        constants: dict[str, tuple[_Buffer, np.ndarray]] = {}
        for op in (op for function in functions for op in function.walk()):
            if isinstance(op, memref.GetGlobalOp) and op.name_.root_reference.data not in constants:
                name = op.name_.root_reference.data
                space, data = _global_constant(machine, op)
                alignment = machine.memories[space].alignment
                offset = -(-used.get(space, 0) // alignment) * alignment
                constants[name] = (_buffer_of(op.memref, offset), data)
                used[space] = offset + npu.type_bytes(op.memref.type)
        arguments: dict[SSAValue, _Buffer] = {}
        for arg, name in zip(entry.args, argument_names(entry)):
            try:
                npu.buffer_type(arg, f"argument %{name}")
            except VerifyException as error:
                raise error_at(entry, str(error)) from None
            space = npu.space_of(arg)
            if space not in machine.memories or machine.memories[space].level != "global":
                raise error_at(
                    entry, f"argument %{name} must be in a global memory space, got '{space}'"
                )
            alignment = machine.memories[space].alignment
            offset = -(-used.get(space, 0) // alignment) * alignment
            arguments[arg] = _buffer_of(arg, offset)
            used[space] = offset + npu.type_bytes(arg.type)
        sizes = {}
        for name, memory in machine.memories.items():
            if memory.level == "global":
                if used.get(name, 0) > memory.capacity:
                    raise error_at(
                        entry,
                        f"the arguments need {used[name]} bytes of '{name}', which has {memory.capacity}",
                    )
                sizes[name] = used.get(name, 0)
            else:
                sizes[name] = memory.capacity
        memory = cls(
            machine, sizes, arguments, {name: buffer for name, (buffer, _) in constants.items()}
        )
        for buffer, data in constants.values():
            memory.view(buffer, 0, buffer.shape, npu.row_major_strides(buffer.shape))[...] = data
        return memory

    def for_core(self) -> _Memory:
        """The memory another core sees: the same global spaces, its own (zeroed) local ones."""
        core = copy.copy(self)
        core.bytes = {
            space: array if self.machine.memories[space].level == "global" else np.zeros_like(array)
            for space, array in self.bytes.items()
        }
        return core

    def view(
        self, buffer: _Buffer, base: int, shape: Sequence[int], strides: Sequence[int]
    ) -> np.ndarray:
        """The elements `base + strides . j` of `buffer` for `j` in `shape`, as a writable numpy view."""
        itemsize = buffer.dtype.itemsize
        return np.ndarray(
            tuple(shape),
            buffer.dtype,
            buffer=self.bytes[buffer.space],
            offset=buffer.offset + base * itemsize,
            strides=tuple(s * itemsize for s in strides),
        )


def convert(array: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """`array` in `dtype` as the hardware converts: floats round to nearest even; integers are rounded and saturated."""
    if array.dtype == dtype:
        return array
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        wide = (
            np.rint(array.astype(np.float64))
            if array.dtype.kind not in "iu"
            else array.astype(np.int64)
        )
        return np.clip(wide, info.min, info.max).astype(dtype)
    # A float too large for `dtype` becomes an infinity, as IEEE conversion does.
    with np.errstate(over="ignore"):
        return array.astype(dtype)


# --------------------------------------------------------------------------- #
# Execution
# --------------------------------------------------------------------------- #


@functools.cache
def _row_major_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(npu.row_major_strides(shape))


@functools.cache
def _elements(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


@dataclass(frozen=True)
class _Window:
    """A buffer operand of an instruction: the window it names, with its indices still symbolic."""

    buffer: SSAValue
    indices: tuple[SSAValue | int, ...]
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    what: str
    tile: bool
    """Whether the window is a tile of the buffer's innermost dimensions, which it must not wrap around."""
    aligned: bool = True
    """Whether it must start at a multiple of its space's alignment: compute units read aligned
    blocks; DMA engines move bytes and start anywhere."""
    extent: int = field(init=False)
    """Elements from the window's first element to one past its last (`npu.window_extent`)."""
    elements: int = field(init=False)

    def __post_init__(self) -> None:
        # what every run of the instruction needs, computed once (`_Executor._window` runs per access)
        object.__setattr__(self, "extent", npu.window_extent(self.shape, self.strides))
        object.__setattr__(self, "elements", math.prod(self.shape))

    @staticmethod
    def of(
        buffer: SSAValue, static: DenseArrayBase, dynamic: Sequence[SSAValue], shape: Sequence[int],
        strides: Sequence[int] | None, what: str, aligned: bool = True,
    ) -> _Window:  # fmt: skip
        """The window; without `strides` it is a tile, strided as the buffer is."""
        indices = get_dynamic_index_list(static.get_values(), dynamic, DYNAMIC_INDEX)
        tile = strides is None
        if strides is None:
            strides = npu.row_major_strides(buffer.type.get_shape())[-len(shape) :]
        return _Window(buffer, tuple(indices), tuple(shape), tuple(strides), what, tile, aligned)

    @property
    def bytes(self) -> int:
        return math.prod(self.shape) * npu.element_bytes(self.buffer.type.get_element_type())


@dataclass(frozen=True)
class _DmaPlan:
    src: _Window
    dst: _Window
    pad: list[tuple[int, int]] | None
    pad_value: np.ndarray
    """In the source's element type."""
    transpose: bool
    pipe: str
    cycles: float
    shared: tuple[str, str] | None
    """The shared memory side the transfer uses (`shared_side`), if any."""
    shared_cycles: Callable[[int], float]
    """Its cycles when that many cores share the side's bandwidth."""


@dataclass(frozen=True)
class _MmaPlan:
    operands: list[_Window]
    accumulate: bool
    cycles: float
    macs: int
    dtypes: tuple[str, str]


@dataclass(frozen=True)
class _VectorPlan:
    operands: list[_Window]
    cycles: float
    flops: int


class _Route(Enum):
    """How `_Executor.run_block` runs an op: a handler, a nested region (a generator), the block's
    end, a meeting of the cores, an integer binary op, a plugin's instruction, or an error."""

    CALL = auto()
    NESTED = auto()
    RETURN = auto()
    SYNC = auto()
    INTEGER = auto()
    PLUGIN = auto()
    UNKNOWN = auto()


# Scalars are Python integers: address arithmetic neither wraps nor depends on signedness
# (indices stay small and non-negative), so the signed and unsigned forms agree.
_INTEGER_BINARY: dict[type[Operation], Callable[[int, int], int]] = {
    arith.AddiOp: operator.add,
    arith.SubiOp: operator.sub,
    arith.MuliOp: operator.mul,
    arith.FloorDivSIOp: operator.floordiv,
    arith.CeilDivSIOp: lambda a, b: -(-a // b),
    arith.CeilDivUIOp: lambda a, b: -(-a // b),
    arith.DivUIOp: operator.floordiv,
    arith.DivSIOp: lambda a, b: abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1),
    arith.RemUIOp: operator.mod,
    arith.RemSIOp: lambda a, b: a - b * (abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)),
    arith.MinSIOp: min,
    arith.MaxSIOp: max,
    arith.MinUIOp: min,
    arith.MaxUIOp: max,
    arith.AndIOp: operator.and_,
    arith.OrIOp: operator.or_,
    arith.XOrIOp: operator.xor,
    arith.ShLIOp: operator.lshift,
    arith.ShRSIOp: operator.rshift,
    arith.ShRUIOp: operator.rshift,
}
_DIVISIONS = (
    arith.FloorDivSIOp,
    arith.CeilDivSIOp,
    arith.CeilDivUIOp,
    arith.DivUIOp,
    arith.DivSIOp,
    arith.RemUIOp,
    arith.RemSIOp,
)

# arith.cmpi predicates by number: eq, ne, slt, sle, sgt, sge, ult, ule, ugt, uge
_COMPARISONS: tuple[Callable[[int, int], bool], ...] = (
    operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge,
    operator.lt, operator.le, operator.gt, operator.ge,
)  # fmt: skip


class _Executor:
    def __init__(
        self,
        machine: Machine,
        memory: _Memory,
        timeline: Timeline,
        active_cores: int,
        core: int,
        cores: int,
        limits: _Limits | None,
        traffic: GlobalTraffic | None = None,
        plans: dict[Operation, object] | None = None,
        time_each_launch: bool = False,
        launch: _LaunchState | None = None,
    ):
        self.machine = machine
        self.traffic = traffic
        self.memory = memory
        self.timeline = timeline
        self.active_cores = active_cores
        self.core = core
        self.cores = cores
        self.limits = limits
        self.time_each_launch = time_each_launch
        self.launches: dict[tuple, LaunchCost] = {}
        """The timing of each kernel launched so far on this core, by `_launch_key`."""
        self.launch = _LaunchState() if launch is None else launch
        """What the cores share about the launch they are in (one core: its own)."""
        self.plans: dict[Operation, object] = {} if plans is None else plans
        """Each instruction's decoded properties (`_plan`): the cores of one run share them."""
        self.handlers: dict[
            type[Operation], Callable[[Operation, dict[SSAValue, object]], None]
        ] = {
            arith.ConstantOp: self._constant,
            arith.IndexCastOp: self._index_cast,
            arith.CmpiOp: self._cmpi,
            arith.SelectOp: self._select,
            npu.BufferOp: self._buffer,
            npu.DmaOp: self._dma,
            npu.LoadOp: self._load,
            npu.MmaOp: self._mma,
            npu.SetFlagOp: self._set_flag,
            npu.WaitFlagOp: self._wait_flag,
            npu.BarrierOp: self._barrier,
            npu.CoreIdOp: self._core_id,
            npu.NumCoresOp: self._num_cores,
            memref.GetGlobalOp: self._get_global,
        }
        if traffic is not None:
            del self.handlers[npu.DmaOp]  # a generator: it waits for the other cores' transfers
        self.routes: dict[type[Operation], tuple[_Route, Callable | None]] = {}
        """How each op type runs (`_route`)."""

    def run_block(
        self, block: Block, env: dict[SSAValue, object]
    ) -> Generator[Operation, None, list[object]]:
        """Run the ops of `block`, yielding at each `npu.sync_cores` until the other cores
        reach theirs; returns the values its terminator yields or returns."""
        for op in block.ops:
            self.timeline.scalar(1)
            if self.limits is not None:
                self._check_limits(op, self.limits)
            route = self.routes.get(type(op))
            if route is None:
                route = self.routes[type(op)] = self._route(type(op))
            how, handler = route
            if how is _Route.CALL:
                handler(op, env)
            elif how is _Route.NESTED:
                yield from handler(op, env)
            elif how is _Route.RETURN:
                return [env[v] for v in op.operands]
            elif how is _Route.SYNC:
                yield op
            elif how is _Route.INTEGER:
                lhs, rhs = env[op.operands[0]], env[op.operands[1]]
                if isinstance(op, _DIVISIONS) and rhs == 0:
                    raise error_at(op, f"{op.name} divides by zero")
                env[op.results[0]] = handler(lhs, rhs)
            elif how is _Route.PLUGIN:
                handler(InstructionContext(self, env), op)
            else:
                raise error_at(
                    op,
                    f"the npu interpreter cannot run '{op.name}' (it runs npu, scf and integer arith ops)",
                )
        return []

    def _route(self, kind: type[Operation]) -> tuple[_Route, Callable | None]:
        """How `run_block` runs an op of type `kind`, found once per type (an `isinstance` of
        xDSL's op classes goes through `ABCMeta`: it cost a tenth of a run when done per op)."""
        if issubclass(kind, scf.YieldOp | func.ReturnOp):
            return _Route.RETURN, None
        handler = self.handlers.get(kind)
        if handler is not None:
            return _Route.CALL, handler
        if issubclass(kind, npu.SyncCoresOp):
            return _Route.SYNC, None
        for op_type, nested in (
            (scf.ForOp, self._for),
            (scf.IfOp, self._if),
            (func.CallOp, self._call),
            (npu.DmaOp, self._shared_dma),
        ):
            if issubclass(kind, op_type):
                return _Route.NESTED, nested
        if kind in _INTEGER_BINARY:
            return _Route.INTEGER, _INTEGER_BINARY[kind]
        if issubclass(kind, npu.VectorOperation):
            return _Route.CALL, self._vector
        if kind in _instructions:
            return _Route.PLUGIN, _instructions[kind]
        return _Route.UNKNOWN, None

    def _check_limits(self, op: Operation, limits: _Limits) -> None:
        limits.countdown -= 1
        if limits.countdown:
            return
        limits.countdown = WATCH_EVERY
        if limits.max_cycles is not None and self.timeline.cycles > limits.max_cycles:
            raise _past_max_cycles(op, limits.max_cycles, self.timeline)
        if limits.watch is not None:
            limits.watch(self.timeline, op)

    # -- scalar unit ------------------------------------------------------ #

    def _constant(self, op: arith.ConstantOp, env: dict[SSAValue, object]) -> None:
        if not isinstance(op.value, IntegerAttr):
            raise error_at(op, f"the scalar unit computes on integers and indices, got {op.value}")
        env[op.result] = op.value.value.data

    def _index_cast(self, op: arith.IndexCastOp, env: dict[SSAValue, object]) -> None:
        env[op.result] = env[op.input]

    def _cmpi(self, op: arith.CmpiOp, env: dict[SSAValue, object]) -> None:
        env[op.result] = _COMPARISONS[op.predicate.value.data](env[op.lhs], env[op.rhs])

    def _select(self, op: arith.SelectOp, env: dict[SSAValue, object]) -> None:
        env[op.result] = env[op.lhs] if env[op.cond] else env[op.rhs]

    def _core_id(self, op: npu.CoreIdOp, env: dict[SSAValue, object]) -> None:
        env[op.result] = self.core

    def _num_cores(self, op: npu.NumCoresOp, env: dict[SSAValue, object]) -> None:
        env[op.result] = self.cores

    def _for(self, op: scf.ForOp, env: dict[SSAValue, object]) -> Generator[Operation, None, None]:
        lb, ub, step = env[op.lb], env[op.ub], env[op.step]
        if step <= 0:
            raise error_at(op, f"scf.for step must be positive, got {step}")
        carried = [env[v] for v in op.iter_args]
        block = op.body.block
        for iv in range(lb, ub, step):
            env[block.args[0]] = iv
            for arg, value in zip(block.args[1:], carried):
                env[arg] = value
            carried = yield from self.run_block(block, env)
            self.timeline.scalar(1)
        for result, value in zip(op.results, carried):
            env[result] = value

    def _call(
        self, op: func.CallOp, env: dict[SSAValue, object]
    ) -> Generator[Operation, None, None]:
        """A kernel launch: it starts when every pipe has drained, on every core (the cores meet
        as at `npu.sync_cores`; one core only drains), and runs the callee's body."""
        callee = self._plan(op, lambda call: SymbolTable.lookup_symbol(call, call.callee))
        assert isinstance(callee, func.FuncOp)
        if self.cores > 1:
            yield op
        else:
            self.timeline.sync_cores(op, 0.0)
        arguments = [env[v] for v in op.arguments]
        inner = dict(zip(callee.args, arguments))
        key = self._launch_key(callee, arguments)
        timeline = self.timeline
        launching, timeline.call = timeline.call, op
        cost = self.launches.get(key) if key is not None else None
        mark = timeline.mark() if key is not None and cost is None else None
        if cost is not None:
            self.timeline = NumericsOnly(timeline)
            self.launch.replaying = True  # every core decides alike: the key and `quiet` are shared
        try:
            yield from self.run_block(callee.body.block, inner)
        finally:
            self.timeline = timeline
            timeline.call = launching
        if cost is not None:
            timeline.replay(cost, op)
        elif mark is not None:
            self.launches[key] = timeline.launch_since(mark)

    def _launch_key(self, callee: func.FuncOp, arguments: list[object]) -> tuple | None:
        """What decides a launch's timing, where it is timed once (`LaunchCost`): the kernel, and
        which of its arguments share bytes (its hazards, and so its flags' waits, follow from
        that; no instruction's cycles depend on an address). On several cores a launch starts
        when they meet, every one at the same cycle with its pipes drained and no transfer of
        another core in flight, so each core's part of it takes the same time again: each core
        keeps its own. None where a launch is timed each time: a run bounded by `max_cycles`
        (it stops at the op that passes the bound), or a timeline not quiet at the launch (on
        several cores, any core's). A watched run (`ziggurat-run`'s progress and --timeout)
        replays: its watch sees the cycle the launch started at."""
        if self.time_each_launch or (
            self.limits is not None and self.limits.max_cycles is not None
        ):
            return None
        quiet = self.launch.quiet if self.cores > 1 else self.timeline.quiet()
        if not quiet:
            return None
        buffers = [a for a in arguments if isinstance(a, _Buffer)]
        if len(buffers) != len(arguments):
            return None
        spans = [(b.space, b.offset, b.offset + b.elements * b.dtype.itemsize) for b in buffers]
        shared = tuple(
            i
            for i, (x, y) in enumerate(itertools.combinations(spans, 2))
            if x[0] == y[0] and x[1] < y[2] and y[1] < x[2]
        )
        return (callee, shared)

    def _if(self, op: scf.IfOp, env: dict[SSAValue, object]) -> Generator[Operation, None, None]:
        region = op.true_region if env[op.cond] else op.false_region
        values = (yield from self.run_block(region.block, env)) if region.blocks else []
        for result, value in zip(op.results, values):
            env[result] = value

    # -- buffers and addresses ------------------------------------------- #

    def _get_global(self, op: memref.GetGlobalOp, env: dict[SSAValue, object]) -> None:
        env[op.memref] = self.memory.globals[op.name_.root_reference.data]

    def _buffer(self, op: npu.BufferOp, env: dict[SSAValue, object]) -> None:
        env[op.result] = _buffer_of(op.result, op.byte_offset)

    def _plan(self, op: Operation, decode: Callable[[Operation], object]) -> object:
        """What `decode` reads from an instruction's properties, read once per op rather than per run of it."""
        plan = self.plans.get(op)
        if plan is None:
            plan = self.plans[op] = decode(op)
        return plan

    def _window(
        self, op: Operation, env: dict[SSAValue, object], window: _Window
    ) -> tuple[np.ndarray, Access]:
        """A checked view of `window` at the current index values, and the access it makes."""
        buffer = env[window.buffer]
        assert isinstance(buffer, _Buffer)
        shape = buffer.shape
        strides = _row_major_strides(shape)
        # indices are ints or SSA values: `type(...) is int` is much cheaper than an ABC isinstance
        values = [index if type(index) is int else env[index] for index in window.indices]
        base = 0
        for dim, value in enumerate(values):
            if not 0 <= value < shape[dim]:
                raise error_at(
                    op,
                    f"index {value} of the {window.what} is out of bounds: dimension {dim} has size {shape[dim]}",
                )
            base += value * strides[dim]
        if window.tile:
            rank = len(window.shape)
            for dim, (start, size, extent) in enumerate(
                zip(values[-rank:], window.shape, shape[-rank:])
            ):
                if start + size > extent:
                    raise error_at(
                        op,
                        f"the {window.what} tile of shape {list(window.shape)} is out of bounds: it does not fit "
                        f"dimension {len(shape) - rank + dim}: {start} + {size} > {extent}",
                    )
        end = base + window.extent
        if end > _elements(shape):
            raise error_at(
                op,
                f"the {window.what} window of shape {list(window.shape)} with strides {list(window.strides)} at "
                f"element {base} is out of bounds: it ends at element {end}, the buffer has {buffer.elements}",
            )
        itemsize = buffer.dtype.itemsize
        start = buffer.offset + base * itemsize
        alignment = self.machine.memories[buffer.space].alignment
        if window.aligned and start % alignment:
            raise error_at(
                op,
                f"the {window.what} starts at byte {start} of '{buffer.space}', which is misaligned: "
                f"addresses must be multiples of {alignment}",
            )
        access = Access(
            buffer.space,
            start,
            buffer.offset + end * itemsize,
            window.elements * itemsize,
            (window.shape, window.strides, itemsize),
        )
        return self.memory.view(buffer, base, window.shape, window.strides), access

    # -- instructions ----------------------------------------------------- #

    def _shared_dma(
        self, op: npu.DmaOp, env: dict[SSAValue, object]
    ) -> Generator[float, int, None]:
        """A DMA whose bandwidth is shared with the other cores (`GlobalTraffic`): it yields
        when it would start, and runs once every core has reached that time, told how many
        other cores start a transfer at the same moment."""
        plan = self._plan(op, self._decode_dma)
        assert isinstance(plan, _DmaPlan) and self.traffic is not None
        if plan.shared is None or isinstance(self.timeline, NumericsOnly):
            self._dma(op, env)  # no global traffic, or none timed (a launch timed before)
            return
        start = self.timeline.start_of(plan.pipe)
        starting = yield start
        sharing = self.traffic.sharing(plan.shared, self.core, start, starting)
        cycles = plan.cycles if sharing == 1 else plan.shared_cycles(sharing)
        self._dma(op, env, cycles)
        self.traffic.add(plan.shared, self.core, start, start + cycles)

    def _dma(self, op: npu.DmaOp, env: dict[SSAValue, object], cycles: float | None = None) -> None:
        plan = self._plan(op, self._decode_dma)
        assert isinstance(plan, _DmaPlan)
        source, read = self._window(op, env, plan.src)
        target, write = self._window(op, env, plan.dst)
        data = (
            source if plan.pad is None else np.pad(source, plan.pad, constant_values=plan.pad_value)
        )
        if plan.transpose:
            data = np.swapaxes(data, -1, -2)
        target[...] = convert(np.array(data), target.dtype)
        self.timeline.issue(
            op, plan.pipe, plan.cycles if cycles is None else cycles, [read], [write]
        )

    def _decode_dma(self, op: npu.DmaOp) -> _DmaPlan:
        src_strides = None if op.src_strides is None else op.src_strides.get_values()
        dst_strides = None if op.dst_strides is None else op.dst_strides.get_values()
        src = _Window.of(
            op.src,
            op.static_src_indices,
            op.src_indices,
            op.src_shape,
            src_strides,
            "source",
            False,
        )
        dst = _Window.of(
            op.dst,
            op.static_dst_indices,
            op.dst_indices,
            op.dst_shape,
            dst_strides,
            "destination",
            False,
        )
        pads = None if op.pad is None else op.pad.get_values()
        source_dtype = to_numpy_dtype(op.src.type.get_element_type())
        engine = self.machine.dmas[op.engine.data]
        # the cycles for a given number of cores sharing global memory
        cycles_when_shared = functools.partial(
            dma_cycles,
            self.machine,
            engine,
            npu.space_of(op.src),
            npu.space_of(op.dst),
            src.bytes,
            dst.bytes,
        )
        return _DmaPlan(
            src,
            dst,
            None
            if pads is None
            else [(pads[2 * d], pads[2 * d + 1]) for d in range(len(src.shape))],
            convert(
                np.asarray(0.0 if op.pad_value is None else op.pad_value.value.data), source_dtype
            ),
            op.transpose is not None,
            engine.pipe,
            cycles_when_shared(self.active_cores),
            shared_side(engine, npu.space_of(op.src), npu.space_of(op.dst)),
            cycles_when_shared,
        )

    def _load(self, op: npu.LoadOp, env: dict[SSAValue, object]) -> None:
        window = self._plan(op, self._decode_load)
        assert isinstance(window, _Window)
        element, read = self._window(op, env, window)
        env[op.result] = int(element[0])
        space = npu.space_of(op.buffer)
        self.timeline.issue(op, self.machine.scalar_pipe, load_cycles(self.machine, space), [read])

    def _decode_load(self, op: npu.LoadOp) -> _Window:
        return _Window.of(
            op.buffer, op.static_indices, op.indices, (1,), (1,), "loaded element", False
        )

    def _mma(self, op: npu.MmaOp, env: dict[SSAValue, object]) -> None:
        plan = self._plan(op, self._decode_mma)
        assert isinstance(plan, _MmaPlan)
        (a, read_a), (b, read_b), (c, write) = (self._window(op, env, w) for w in plan.operands)
        product = _matmul(a, b, c.dtype)
        reads = [read_a, read_b]
        if plan.accumulate:
            product += c
            reads.append(write)
        c[...] = product.astype(c.dtype)
        self.timeline.issue(
            op, self.machine.matrix.pipe, plan.cycles, reads, [write], flops=2 * plan.macs
        )
        self.timeline.macs[plan.dtypes] += plan.macs

    def _decode_mma(self, op: npu.MmaOp) -> _MmaPlan:
        operands = []
        for key, tile in zip("abc", op.tiles()):
            static, dynamic = getattr(op, f"static_{key}_indices"), getattr(op, f"{key}_indices")
            operands.append(
                _Window.of(getattr(op, key), static, dynamic, tile, None, f"operand {key.upper()}")
            )
        m, n, k = op.mnk
        in_dtype, acc_dtype = (str(getattr(op, key).type.get_element_type()) for key in "ac")
        cycles = mma_cycles(self.machine, m, n, k, in_dtype, acc_dtype)
        return _MmaPlan(
            operands, op.accumulate is not None, cycles, m * n * k, (in_dtype, acc_dtype)
        )

    def _vector(self, op: npu.VectorOperation, env: dict[SSAValue, object]) -> None:
        plan = self._plan(op, self._decode_vector)
        assert isinstance(plan, _VectorPlan)
        views, accesses = zip(*(self._window(op, env, w) for w in plan.operands))
        *sources, target = views
        if isinstance(op, npu.VecCastOp) and op.unsigned is not None:
            _unsigned_cast(op.unsigned.data, sources[0], target)
        else:
            target[...] = convert(_vector_result(op, sources, target.dtype), target.dtype)
        self.timeline.issue(
            op, self.machine.vector.pipe, plan.cycles, accesses[:-1], accesses[-1:], plan.flops
        )

    def _decode_vector(self, op: npu.VectorOperation) -> _VectorPlan:
        repeat, active = op.repeats, op.active_lanes(self.machine)
        operands = [
            _Window.of(value, static, dynamic, (repeat, length), (stride, 1), f"operand #{index}")
            for index, ((value, static, dynamic), length, stride) in enumerate(
                zip(op.buffers(), op.block_lengths(active), op.strides(self.machine))
            )
        ]
        widest = max(
            npu.element_bytes(value.type.get_element_type()) for value, _, _ in op.buffers()
        )
        cycles = vector_cycles(
            self.machine, op.kind, repeat, widest * max(op.block_lengths(active))
        )
        return _VectorPlan(operands, cycles, repeat * active)

    def _set_flag(self, op: npu.SetFlagOp, env: dict[SSAValue, object]) -> None:
        self.timeline.set_flag(op, op.src_pipe.data, op.dst_pipe.data, op.event)

    def _wait_flag(self, op: npu.WaitFlagOp, env: dict[SSAValue, object]) -> None:
        self.timeline.wait_flag(op, op.src_pipe.data, op.dst_pipe.data, op.event)

    def _barrier(self, op: npu.BarrierOp, env: dict[SSAValue, object]) -> None:
        self.timeline.barrier(op, None if op.pipe is None else op.pipe.data)


class InstructionContext:
    """What a registered instruction implementation sees of the core running it."""

    def __init__(self, executor: _Executor, env: dict[SSAValue, object]):
        self._executor = executor
        self._env = env

    @property
    def machine(self) -> Machine:
        return self._executor.machine

    def index(self, value: SSAValue | int) -> int:
        """The current value of an index operand (or the static index itself)."""
        return value if isinstance(value, int) else self._env[value]

    def window(
        self,
        op: Operation,
        buffer: SSAValue,
        indices: Sequence[SSAValue | int],
        shape: Sequence[int],
        strides: Sequence[int] | None = None,
        what: str = "operand",
        aligned: bool = True,
    ) -> tuple[np.ndarray, Access]:
        """A writable view of `shape` at `indices` of `buffer` (strided as the buffer, or by
        `strides`), checked for bounds and (unless `aligned=False`, as for DMA windows) for
        starting at a multiple of the space's alignment, and the access to pass to `issue`."""
        if strides is None:
            strides = npu.row_major_strides(buffer.type.get_shape())[-len(shape) :]
        window = _Window(
            buffer, tuple(indices), tuple(shape), tuple(strides), what, tile=False, aligned=aligned
        )
        return self._executor._window(op, self._env, window)

    def issue(
        self,
        op: Operation,
        pipe: str,
        cycles: float,
        reads: Sequence[Access] = (),
        writes: Sequence[Access] = (),
        flops: int = 0,
    ) -> None:
        """Queue `op` on `pipe` for `cycles`: it waits for its pipe and flags, and its accesses
        are checked against the other pipes' for hazards."""
        if pipe not in self._executor.timeline.pipes:
            raise error_at(op, f"machine '{self.machine.name}' has no pipe '{pipe}'")
        self._executor.timeline.issue(op, pipe, cycles, reads, writes, flops)


def _matmul(a: np.ndarray, b: np.ndarray, accumulator: np.dtype) -> np.ndarray:
    """A @ B as the matrix unit computes it: in i32 (wrapping) into signed integer accumulators, else in f32.

    numpy has no BLAS for integers: its i32 matmul is ~20x slower than f64's. Operands of at
    most 16 bits give products below 2**32, so with K < 2**21 every partial sum is an integer
    below 2**53, which f64 holds exactly in any summation order; reduced modulo 2**32 (int64
    to int32) that is the i32 result, wrapping included.
    """
    if accumulator.kind != "i":
        return np.matmul(a.astype(np.float32), b.astype(np.float32))
    narrow = all(x.dtype.kind in "iu" and x.dtype.itemsize <= 2 for x in (a, b))
    if narrow and a.shape[-1] < 2**21:
        return (
            np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.int64).astype(np.int32)
        )
    return np.matmul(a.astype(np.int32), b.astype(np.int32))


def _compute_dtype(dtype: np.dtype) -> np.dtype:
    """Floats narrower than f32 compute in f32 and round once at the end; integers compute as they are."""
    return np.dtype(np.float32) if dtype.kind not in "iub" and dtype.itemsize < 4 else dtype


_ELEMENTWISE: dict[str, Callable[..., np.ndarray]] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "max": np.maximum,
    "min": np.minimum,
    "exp": np.exp,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "relu": lambda x: np.maximum(x, 0),
}


def _unsigned_cast(side: str, source: np.ndarray, target: np.ndarray) -> None:
    """`npu.vec.cast` with `unsigned`: the source's integers read as unsigned ("src"), or the
    result converted to unsigned integers whose bits are stored ("dst")."""
    if side == "src":
        target[...] = convert(source.view(source.dtype.str.replace("i", "u")), target.dtype)
    else:
        unsigned = np.dtype(target.dtype.str.replace("i", "u"))
        target[...] = convert(source, unsigned).view(target.dtype)


def _vector_result(
    op: npu.VectorOperation, sources: list[np.ndarray], dtype: np.dtype
) -> np.ndarray:
    """What the active lanes of the destination receive, shaped like the destination view."""
    kind = op.kind
    if kind in (
        "cast",
        "broadcast",
    ):  # a broadcast source block is one element, spread over the lanes
        return sources[0]
    if kind == "select":
        cond, lhs, rhs = sources
        return np.where(cond != 0, lhs, rhs)
    if kind == "dup":
        return np.asarray(op.scalar.value.data)
    wide = [s.astype(_compute_dtype(s.dtype)) for s in sources]
    if kind in ("adds", "muls"):
        (x,) = wide
        scalar = convert(np.asarray(op.scalar.value.data), np.dtype(dtype)).astype(x.dtype)
        return x + scalar if kind == "adds" else x * scalar
    if kind == "reduce":
        (x,) = wide
        if op.combiner.data == "sum":
            accumulator = np.float32 if x.dtype.kind == "f" else np.int32
            return x.sum(axis=1, keepdims=True, dtype=accumulator)
        return x.max(axis=1, keepdims=True)
    with np.errstate(all="ignore"):  # inf and nan are results, as on the hardware
        return _ELEMENTWISE[kind](*wide)
