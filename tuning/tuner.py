"""Measure the best candidates of each fusion group on the machine model and keep the fastest that
computes the right numbers, within a time budget, in parallel, with a JSON cache.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from xdsl.dialects.builtin import AnyFloat, ModuleOp
from xdsl.passes import PassPipeline

from ziggurat.cli import write_atomically
from ziggurat.context import default_context
from ziggurat.diagnostics import Diagnostic, DiagnosticError, collect_diagnostics, exception_message
from ziggurat.dialects import graph
from ziggurat.dtypes import is_splat
from ziggurat.interpreters.interpreter import find_function
from ziggurat.interpreters.npu_interpreter import run_npu
from ziggurat.ir.tensor_constants import element_count
from ziggurat.machine import load_machine, machine_here, machine_sources
from ziggurat.parsing import parse_source
from ziggurat.testing.differential import (
    build_passes,
    compare_outputs,
    input_names,
    level_inputs,
    run_at_level,
)
from ziggurat.tuning.executors import Executor, LocalExecutor
from ziggurat.tuning.space import (
    SMALL_CONSTANT,
    SPACE_VERSION,
    Group,
    loop_orders,
    nhwc_sizes,
    schedule_group,
    stages_reduction,
    with_nhwc_twin,
)

CACHE_FORMAT = 1


@dataclass(frozen=True)
class TuneOptions:
    jobs: int = 1
    """Processes measuring at once (1: in this process)."""
    budget: float | None = None
    """Seconds; past it nothing more is launched and runs in flight are stopped."""
    top_k: int = 4
    """Schedules measured per group: the default and the `top_k - 1` best estimates."""
    seed: int = 0
    """Seed of the random inputs the numerics are checked on."""
    bufferings: tuple[int, ...] = (1, 3)
    """Buffering depths (`tile.buffering`) measured on each group's winning tile sizes, once those
    are decided, besides loop-double-buffer's default of 2; () searches tile sizes only."""
    stage: bool = True
    """Also measure each candidate that tiles its reduction with the reduction staged (`tile.stage_reduction`)."""
    task_timeout: float | None = None
    """Seconds a measurement may take before it is stopped (retried once, then a failed candidate)."""
    executor: Executor | None = field(default=None, compare=False)
    """Where measurements run (`executors.make_executor`); None: a local pool of `jobs` processes."""
    cores: int = 1
    """The cores each group's tiles are divided among, as `lower-to-npu{cores=N}` divides them:
    every candidate is lowered for, and run on, that many."""


@dataclass(frozen=True)
class Task:
    group: int
    candidate: int
    module_text: str
    target: int
    sizes: tuple[int, ...] | None
    """None: the default heuristic (no `tile.sizes`)."""
    machine: str
    seed: int
    buffering: int | None = None
    """None: loop-double-buffer's default depth (no `tile.buffering`)."""
    interchange: tuple[int, ...] | None = None
    """None: tile-and-fuse's loop order (no `tile.interchange`)."""
    stage: bool = False
    """Mark the root `tile.stage_reduction` (loop-stage-reduction loads its reduction's slices at once)."""
    nhwc: bool = False
    """A run of the group's NHWC twin (`module_text` is the twin's, `sizes` for its loops)."""
    machine_files: tuple[tuple[str, str], ...] = ()
    """The machine's files (`machine_sources`), for a worker on a host without them."""
    cores: int = 1
    """Lowered with `lower-to-npu{cores=N}` and run on N cores (`TuneOptions.cores`)."""


@dataclass(frozen=True)
class Measurement:
    group: int
    candidate: int
    cycles: float | None
    """None when the candidate failed (`error` says why)."""
    error: str | None
    seconds: float
    buffering: int | None = None
    """The task's buffering depth (None: the default)."""
    interchange: tuple[int, ...] | None = None
    """The task's loop order (None: the default)."""
    stage: bool = False
    """Whether the task staged its reduction (`tile.stage_reduction`)."""
    nhwc: bool = False
    """A run of the group's NHWC twin."""
    sizes: tuple[int, ...] | None = None
    """The task's `tile.sizes` (None: the heuristic's)."""
    fault: bool = False
    """Not measured: the run raised, its worker was lost or it timed out, on a retry too (`error` says how)."""

    @property
    def variant(self) -> bool:
        """A measurement of a winner with its depth, loop order or layout changed (the second phase)."""
        return self.buffering is not None or self.interchange is not None or self.nhwc


@dataclass
class Choice:
    """What tuning decided for a group."""

    group: Group
    sizes: tuple[int, ...] | None
    """The winning `tile.sizes` (None: keep the heuristic)."""
    cycles: float | None
    default_cycles: float | None
    measured: int = 0
    failed: int = 0
    cached: bool = False
    complete: bool = False
    """Every planned candidate was measured (only then is it cached)."""
    buffering: int | None = None
    """The winning `tile.buffering` (None: keep loop-double-buffer's depth)."""
    interchange: tuple[int, ...] | None = None
    """The winning `tile.interchange` (None: keep tile-and-fuse's loop order)."""
    stage: bool = False
    """Whether the winner stages its reduction (`tile.stage_reduction`)."""
    nhwc_cycles: float | None = None
    """The fastest run of the group's NHWC twin (None: not measured, or it failed)."""
    nhwc_sizes: tuple[int, ...] | None = None
    """The twin's `tile.sizes` in that run (None: its heuristic's)."""
    nhwc_stage: bool = False
    layout: str = "NCHW"
    """The layout the group runs in, decided over the function by `layouts.choose_layouts`."""
    faults: tuple[str, ...] = ()
    """Why each candidate the executor gave up on was not measured (`Measurement.fault`)."""


def measure(task: Task) -> Measurement:
    """Lower the group with the candidate's sizes, run it with timing, check its numerics."""
    start = time.monotonic()
    try:
        with (
            collect_diagnostics()
        ):  # warnings and remarks about the group alone are no news to the user
            return _measure(task, start)
    except DiagnosticError as error:  # the extracted group's positions mean nothing to the user
        reason = "; ".join(d.message for d in error.diagnostics)
        return _failed(task, reason, time.monotonic() - start)
    except Exception as error:  # a candidate that does not lower or run loses, whatever the reason
        return _failed(task, exception_message(error), time.monotonic() - start)


def _failed(task: Task, reason: str, seconds: float) -> Measurement:
    return Measurement(
        task.group,
        task.candidate,
        None,
        reason,
        seconds,
        task.buffering,
        task.interchange,
        task.stage,
        task.nhwc,
        task.sizes,
    )


def _splat_weights(module: ModuleOp) -> list[graph.ConstantOp]:
    """The splat float constants of more than `SMALL_CONSTANT` elements in `main` (a light model's
    weights)."""
    return [
        op
        for op in find_function(module, "main").body.block.ops
        if isinstance(op, graph.ConstantOp)
        and isinstance(op.output.type.get_element_type(), AnyFloat)
        and element_count(op.output.type) > SMALL_CONSTANT
        and is_splat(op.value)
    ]


def _with_dense_weights(module: ModuleOp) -> None:
    """Make every `_splat_weights` constant of `module` an argument instead, in place. The
    constants stay, unused, so that the ops keep their indices in `walk()` (`schedule_group`
    finds its target by them)."""
    block = find_function(module, "main").body.block
    for op in _splat_weights(module):
        argument = block.insert_arg(op.output.type, len(block.args))
        op.output.replace_uses_with_if(argument, lambda use: True)
    find_function(module, "main").update_function_type()


def _lowered_outputs_differ(task: Task, module: ModuleOp, machine) -> tuple[str | None, object]:
    """Schedule and lower `module` (the group) as `task` says, run it on random inputs: why its
    outputs differ from the graph interpreter's (None if they do not), and the run."""
    ctx = default_context()
    function = find_function(module, "main")
    inputs = level_inputs(function, task.seed)
    expected = run_at_level(module, inputs, "main")
    schedule_group(module, task.target, task.sizes, task.buffering, task.interchange, task.stage)
    # xDSL's pipeline, which does not retry a group that does not fit with smaller tiles (apply_pipeline
    # does): the candidate measured is the one asked for, and one that does not fit loses
    spread = f" cores={task.cores}" if task.cores > 1 else ""
    PassPipeline(build_passes(f"lower-to-npu{{machine={json.dumps(machine)}{spread}}}")).apply(
        ctx, module
    )
    lowered = find_function(module, "main")
    result = run_npu(
        module, machine, dict(zip(input_names(lowered), inputs)), "main", cores=task.cores
    )
    bad = [
        c
        for c in compare_outputs(expected, result.outputs, None, None, scale_atol=True)
        if not c.ok
    ]
    return (f"numerics differ: {bad[0]}" if bad else None), result


def _measure(task: Task, start: float) -> Measurement:
    """`measure` without its error handling: the time from `start`, or why the candidate loses.

    A group whose weights are splats (the light models') is timed as it is (graph-to-tile reads a
    splat as a scalar), and its numerics are checked again with dense random weights in their
    place: with every weight equal, a wrong output-channel index would not show."""
    machine = machine_here(task.machine, task.machine_files)
    ctx = default_context()
    module = parse_source(ctx, task.module_text, f"<group {task.group}>")
    dense = module.clone() if _splat_weights(module) else None
    wrong, result = _lowered_outputs_differ(task, module, machine)
    if wrong is None and dense is not None:
        _with_dense_weights(dense)
        wrong, _ = _lowered_outputs_differ(task, dense, machine)
        wrong = None if wrong is None else f"{wrong} (with dense random weights)"
    elapsed = time.monotonic() - start
    if wrong is not None:
        return _failed(task, wrong, elapsed)
    return Measurement(
        task.group,
        task.candidate,
        result.stats.total_cycles,
        None,
        elapsed,
        task.buffering,
        task.interchange,
        task.stage,
        task.nhwc,
        task.sizes,
    )


# --------------------------------------------------------------------------- #
# Cache
# --------------------------------------------------------------------------- #


@dataclass
class TuneCache:
    """Tuned sizes by group key, in a JSON file: {"format", "space_version", "entries": {key: {...}}}."""

    path: Path | None
    entries: dict[str, dict] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path | None) -> TuneCache:
        if path is None or not path.exists():
            return cls(path)
        try:
            data = json.loads(path.read_text())
            entries = data["entries"] if data.get("space_version") == SPACE_VERSION else {}
            if not isinstance(entries, dict):
                raise TypeError("entries is not an object")
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as error:
            raise DiagnosticError(
                Diagnostic("error", f"cannot read tuning cache '{path}': {error}")
            ) from None
        return cls(path, entries)

    def get(self, key: str) -> dict | None:
        entry = self.entries.get(key)
        return entry if isinstance(entry, dict) and "sizes" in entry else None

    def cycles_of(self, key: str) -> float | None:
        """The cycles of something measured alone and cached with `put_cycles` (a transpose)."""
        entry = self.entries.get(key)
        return entry.get("cycles") if isinstance(entry, dict) else None

    def put_cycles(self, key: str, name: str, cycles: float) -> None:
        self.entries[key] = {"group": name, "cycles": cycles}

    def put(self, choice: Choice) -> None:
        self.entries[choice.group.key] = {
            "group": choice.group.name,
            "sizes": None if choice.sizes is None else list(choice.sizes),
            "buffering": choice.buffering,
            "interchange": None if choice.interchange is None else list(choice.interchange),
            "stage_reduction": choice.stage,
            "nhwc": None
            if choice.nhwc_cycles is None
            else {
                "sizes": None if choice.nhwc_sizes is None else list(choice.nhwc_sizes),
                "stage_reduction": choice.nhwc_stage,
                "cycles": choice.nhwc_cycles,
            },
            "cycles": choice.cycles,
            "default_cycles": choice.default_cycles,
            "measured": choice.measured,
        }

    def save(self) -> None:
        if self.path is not None:
            data = {"format": CACHE_FORMAT, "space_version": SPACE_VERSION, "entries": self.entries}
            write_atomically(self.path, json.dumps(data, indent=1, sort_keys=True) + "\n")


# --------------------------------------------------------------------------- #
# The search
# --------------------------------------------------------------------------- #


def plan(groups: Sequence[Group], machine: str, options: TuneOptions) -> list[Task]:
    """Every group's default first, then each group's next-best estimate in turn; then the same
    schedules again with their reduction staged (`tile.stage_reduction`), where they tile it."""
    per_group = [
        [
            Task(
                g,
                c,
                group.module_text,
                group.target,
                None if c == 0 else group.candidates[c],
                machine,
                options.seed,
            )
            for c in range(min(options.top_k, len(group.candidates)))
        ]
        for g, group in enumerate(groups)
    ]
    if options.stage:
        for g, group in enumerate(groups):
            per_group[g] += [
                replace(task, stage=True)
                for task in list(per_group[g])
                if stages_reduction(group, task.candidate)
            ]
    return [
        tasks[rank]
        for rank in range(max(map(len, per_group), default=0))
        for tasks in per_group
        if rank < len(tasks)
    ]


def run_tasks(
    tasks: list[Task],
    options: TuneOptions,
    on_measurement: Callable[[Measurement], list[Task] | None],
) -> None:
    """Measure `tasks` on `options.executor` (None: a local pool of `options.jobs` processes) within
    `options.budget` seconds, reporting each; a task the executor gives up on is a failed candidate.
    The tasks `on_measurement` returns are measured in the same run."""
    deadline = None if options.budget is None else time.monotonic() + options.budget
    sources: dict[str, tuple] = {}

    def with_sources(more: list[Task] | None) -> list[Task]:
        for task in more or ():
            if task.machine not in sources:
                sources[task.machine] = machine_sources(task.machine)
        return [
            replace(task, machine_files=sources[task.machine], cores=options.cores)
            for task in more or ()
        ]

    tasks = with_sources(tasks)
    executor = options.executor or LocalExecutor(options.jobs, options.task_timeout)
    try:
        executor.run(
            measure,
            tasks,
            lambda task, m: with_sources(on_measurement(m)),
            lambda task, reason: with_sources(
                on_measurement(replace(_failed(task, reason, 0.0), fault=True))
            ),
            deadline,
        )
    finally:
        if options.executor is None:
            executor.close()


def tune(
    groups: Sequence[Group],
    machine: str,
    options: TuneOptions,
    cache: TuneCache,
    on_measurement: Callable[[Group, Measurement], None] = lambda group, m: None,
) -> list[Choice]:
    """The schedule of each group: cached, else measured. `machine` is a preset name
    or a machine TOML file, as `lower-to-npu{machine=...}` takes it.

    1. A group whose cache key (`Group.key`) is in the cache takes the cached
       sizes; groups with the same key (a repeated layer) are searched once.
    2. Every other group gets its default schedule (the heuristic) and its
       `top_k - 1` best-estimated candidates measured: the group alone lowered with
       `lower-to-npu{machine=M}`, run on the npu interpreter, its outputs compared
       with the graph interpreter's on the same random inputs (a per-pass check's
       tolerance, `ziggurat.numerics.pass_tolerance`). A candidate that does not
       lower, does not run, or differs is discarded with its reason.
    3. Measurements run on `options.executor`, all groups' defaults first, then the
       next-best candidate of each group in turn; only this process sees the
       results and writes the cache. Past `budget` seconds nothing more is
       launched, runs in flight are stopped, and each group keeps the best it has
       (a group whose default was not measured keeps the heuristic, uncached), so
       tuned is never slower than the default.
    4. As soon as a group's sizes are all measured, its winner is measured again
       with one knob changed at a time: each of `bufferings` (`tile.buffering`) and
       each other loop order (`space.loop_orders`, `tile.interchange`); the fastest
       wins. A group with an NHWC twin has the twin measured with its heuristic and
       with the winner's sizes mapped to its loops (`space.nhwc_sizes`), for
       `layouts.choose_layouts` to weigh. Completed groups go into the cache
       (`TuneCache`); a group with a candidate the executor gave up on is not
       complete.
    """
    choices = [_cached_choice(group, cache.get(group.key)) for group in groups]
    first_of_key: dict[str, int] = {}
    for g, choice in enumerate(choices):
        if choice is None:
            first_of_key.setdefault(groups[g].key, g)
    todo = list(first_of_key.values())  # a layer repeated in the model is measured once
    machine_model = load_machine(machine)
    groups = [
        with_nhwc_twin(group, machine_model) if g in todo else group
        for g, group in enumerate(groups)
    ]
    results: dict[int, list[Measurement]] = {g: [] for g in todo}
    tasks = plan([groups[g] for g in todo], machine, options)
    planned = {g: sum(1 for t in tasks if todo[t.group] == g) for g in todo}
    decided: dict[str, Choice] = {}
    variant_tasks: list[Task] = []

    def record(m: Measurement) -> list[Task]:
        g = todo[m.group]
        results[g].append(m)
        on_measurement(groups[g], m)
        if m.variant or sum(1 for r in results[g] if not r.variant) != planned[g]:
            return []
        # The group's sizes are all measured: its variants start now, while other groups still measure.
        decided[groups[g].key] = _decide(groups[g], results[g], planned[g])
        more = plan_variants([g], groups, decided, results, machine, options, index=m.group)
        variant_tasks.extend(more)
        return more

    run_tasks(tasks, options, record)
    for i, g in enumerate(todo):
        if groups[g].key not in decided:  # the budget ran out before its sizes were all measured
            decided[groups[g].key] = _decide(
                groups[g], [r for r in results[g] if not r.variant], planned[g]
            )
            continue
        planned_variants = sum(1 for t in variant_tasks if t.group == i)
        if planned_variants:
            _decide_variant(
                decided[groups[g].key], [m for m in results[g] if m.variant], planned_variants
            )
    for choice in decided.values():
        if choice.complete:
            cache.put(choice)
    for g, group in enumerate(groups):
        if choices[g] is None:
            choices[g] = replace(decided[group.key], group=group)
    return choices


def plan_variants(
    todo: list[int],
    groups: Sequence[Group],
    decided: dict[str, Choice],
    results: dict[int, list[Measurement]],
    machine: str,
    options: TuneOptions,
    index: int = 0,
) -> list[Task]:
    """Each group's winning tile sizes again at each of `options.bufferings` and in each other loop
    order, and its NHWC twin with its heuristic and with the winner's sizes (a group whose sizes
    search was cut short by the budget is not searched further). The tasks of `todo[k]` are numbered
    as group `index + k`."""
    tasks = []
    for i, g in enumerate(todo, start=index):
        group = groups[g]
        choice = decided[group.key]
        if not choice.complete or choice.cycles is None:
            continue
        winner = _fastest(results[g])
        sizes = None if winner.candidate == 0 else group.candidates[winner.candidate]
        base = Task(
            i,
            winner.candidate,
            group.module_text,
            group.target,
            sizes,
            machine,
            options.seed,
            stage=winner.stage,
        )
        for depth in options.bufferings:
            tasks.append(replace(base, buffering=depth))
        for order in loop_orders(group, sizes):
            tasks.append(replace(base, interchange=order))
        tasks += twin_tasks(i, group, sizes, winner.stage, machine, options)
    return tasks


def twin_tasks(
    index: int,
    group: Group,
    sizes: tuple[int, ...] | None,
    stage: bool,
    machine: str,
    options: TuneOptions,
) -> list[Task]:
    """Runs of `group`'s NHWC twin: its heuristic, and `sizes` (the NCHW winner's) mapped to its loops."""
    twin = group.nhwc
    if twin is None:
        return []
    base = Task(
        index, 0, twin.module_text, twin.target, None, machine, options.seed, stage=stage, nhwc=True
    )
    mapped = nhwc_sizes(group, sizes)
    return [base] + (
        [replace(base, sizes=mapped)] if mapped is not None and mapped != twin.candidates[0] else []
    )


def _decide_variant(choice: Choice, measurements: list[Measurement], planned: int) -> None:
    """A depth or loop order that beats the winner's time at the defaults wins; the NHWC twin's
    fastest run is kept beside it (the layout is decided over the function); all must be
    measured for the choice to be complete (cached)."""
    choice.measured += len(measurements)
    choice.failed += sum(1 for m in measurements if m.cycles is None)
    choice.faults += tuple(m.error or "" for m in measurements if m.fault)
    choice.complete = choice.complete and len(measurements) == planned and not choice.faults
    twin = min(
        (m for m in measurements if m.nhwc and m.cycles is not None),
        key=lambda m: m.cycles,
        default=None,
    )
    if twin is not None:
        choice.nhwc_cycles, choice.nhwc_sizes, choice.nhwc_stage = (
            twin.cycles,
            twin.sizes,
            twin.stage,
        )
    best = min(
        (m for m in measurements if m.cycles is not None and not m.nhwc),
        key=lambda m: (m.cycles, m.buffering or 0, m.interchange or ()),
        default=None,
    )
    if best is not None and choice.cycles is not None and best.cycles < choice.cycles:
        choice.buffering, choice.interchange, choice.cycles = (
            best.buffering,
            best.interchange,
            best.cycles,
        )


def _cached_choice(group: Group, entry: dict | None) -> Choice | None:
    if entry is None:
        return None
    sizes = entry.get("sizes")
    nhwc = entry.get("nhwc") or {}
    return Choice(
        group,
        None if sizes is None else tuple(sizes),
        entry.get("cycles"),
        entry.get("default_cycles"),
        entry.get("measured", 0),
        cached=True,
        complete=True,
        buffering=entry.get("buffering"),
        interchange=None if entry.get("interchange") is None else tuple(entry["interchange"]),
        stage=bool(entry.get("stage_reduction", False)),
        nhwc_cycles=nhwc.get("cycles"),
        nhwc_sizes=None if nhwc.get("sizes") is None else tuple(nhwc["sizes"]),
        nhwc_stage=bool(nhwc.get("stage_reduction", False)),
    )


def _decide(group: Group, measurements: list[Measurement], planned: int) -> Choice:
    ok = [m for m in measurements if m.cycles is not None]
    default = next((m for m in measurements if m.candidate == 0), None)
    choice = Choice(
        group,
        None,
        None,
        None if default is None else default.cycles,
        measured=len(measurements),
        failed=len(measurements) - len(ok),
        complete=len(measurements) == planned and not any(m.fault for m in measurements),
        faults=tuple(m.error or "" for m in measurements if m.fault),
    )
    if default is None or not ok:
        return choice  # the default was never run (budget), or nothing matched: keep the heuristic
    best = _fastest(ok)
    choice.sizes, choice.cycles, choice.stage = (
        group.candidates[best.candidate],
        best.cycles,
        best.stage,
    )
    return choice


def _fastest(measurements: list[Measurement]) -> Measurement | None:
    """The fastest measurement that matched, the earlier candidate on a tie (the winner)."""
    return min(
        (m for m in measurements if m.cycles is not None),
        key=lambda m: (m.cycles, m.candidate, m.stage),
        default=None,
    )


__all__ = ["Choice", "Measurement", "TuneCache", "TuneOptions", "measure", "plan", "tune"]
