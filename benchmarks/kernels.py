"""Kernels against the roofline: each lowered by lower-to-npu and timed on three presets.

    python benchmarks/kernels.py                          # or `make bench`
    python benchmarks/kernels.py --small --machines davinci   # tiny sizes, a smoke run
    python benchmarks/kernels.py --kernels gemm,attention --machines davinci,tensorcore --jobs 2

Kernels (graph-level IR, f16): square GEMMs 256..4096 and two LLM shapes
(1x4096x4096, 128x4096x11008), ResNet-50's convolutions at batch 1 (the 7x7/2
stem and, per stage, the 3x3, the 1x1 that reduces and the 1x1 that expands), a
MobileNet-style 3x3 depthwise conv, single-head attention (QK^T, softmax, PV;
d = 64) at sequence lengths 128..2048, layer_norm and softmax. Each is lowered
with `lower-to-npu{machine=M}` on `davinci`, `systolic` and `tensorcore`, run
on the npu interpreter with timing (one core, with the chip's global bandwidth
to itself, as `ziggurat-run` does), and its outputs are checked against the
graph interpreter. `build_report` gives the run's roofline bound (compute: the
matrix unit's MACs at peak; global memory: the bytes moved at the global
bandwidth) and the table shows the cycles as a percentage of the binding one.
A kernel that does not lower, run or match is a row with the first line of the
error, not a crash.

`--tune KERNELS` (default: the GEMMs and ResNet-50's convs) also runs those
kernels with ziggurat-tune's schedule on `--tune-machines` (default davinci):
the tuner measures the heuristic and the `--top-k` - 1 best-estimated tile
sizes and keeps the fastest that matches (`tools/ziggurat_tune.tune_module`,
cached in `<results>/tune-cache.json`, so a second run measures nothing), and
the tuned kernel is then measured as the default was: a "tuned" row beside
the "default" one.

Results: benchmarks/results/kernels.json, the table as Markdown in kernels.md
(for docs/performance.md) and one roofline plot per machine,
benchmarks/results/roofline_<machine>.png (log-log; FLOP per byte of global
traffic against FLOP per cycle achieved; each kernel a labelled point). Issue
7's two kernel targets are printed as met or missed, each with the default's
figure and the tuned one's: GEMM 1024^3 f16 at >= 90% of the cube's peak on
davinci, and ResNet-50's conv layers at >= 75% of their bound on average on
davinci. The script exits 1 when a target is missed by both, or a run is over
its bound or computes wrong outputs (bugs); a kernel that does not lower or
run in time is a row of the table, not a failure of the script.
"""

from __future__ import annotations

import argparse
import io
import json
import multiprocessing
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import matplotlib

import ziggurat  # noqa: F401  first: it sets OPENBLAS_NUM_THREADS=1 before numpy loads (100x faster npu.mma)

matplotlib.use("Agg")  # files only, no display

import matplotlib.pyplot as plt  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from ziggurat.cli import run_main, write_atomically  # noqa: E402
from ziggurat.context import default_context  # noqa: E402
from ziggurat.diagnostics import DiagnosticError  # noqa: E402
from ziggurat.interpreters.interpreter import find_function, run_function  # noqa: E402
from ziggurat.interpreters.npu_interpreter import run_npu  # noqa: E402
from ziggurat.interpreters.report import build_report  # noqa: E402
from ziggurat.machine import Machine, load_machine  # noqa: E402
from ziggurat.parsing import parse_source  # noqa: E402
from ziggurat.printing import Printer  # noqa: E402
from ziggurat.testing.differential import apply_pipeline, compare_outputs, level_inputs  # noqa: E402
from ziggurat.tools.ziggurat_tune import tune_module  # noqa: E402
from ziggurat.tuning.tuner import TuneOptions  # noqa: E402

RESULTS = Path(__file__).parent / "results"
MACHINES = ("davinci", "systolic", "tensorcore")
DTYPE = "f16"
ACCUMULATOR = "f32"
TARGET = ("gemm", "1024x1024x1024", "davinci", 0.90)
"""Issue 7: GEMM 1024^3 f16 at >= 90% of the cube's peak on davinci."""
CONV_TARGET = ("resnet50", "davinci", 0.75)
"""Issue 7: ResNet-50's conv layers at >= 75% of their roofline bound on average (davinci)."""
TUNED = "gemm,resnet50"
"""The kernels `--tune` tunes by default: those of the two targets, and the other GEMMs."""
TUNE_TOP_K = 4
"""Schedules measured per kernel: the heuristic's and the 3 best estimates (ziggurat-tune's default)."""
DEFAULT_TIMEOUT = 100.0
"""CPU seconds of simulation per run (GEMM 4096^3 takes about 40). The timing model's hazard
log is never pruned while a pipe never waits on the others (the scalar pipe), so on systolic,
whose loads are many small DMAs, each DMA's check scans every earlier one: its ResNet-50 3x3
convs take 17 to 91 s of CPU (docs/performance.md); this bounds a run that gets worse."""
TABLE_ERROR_CHARACTERS = 100
"""A failure's message in the table (in full in the JSON and in the lines after the table)."""


# --------------------------------------------------------------------------- kernels


@dataclass(frozen=True)
class Kernel:
    """One graph-level function `@main` and the multiply-accumulates it needs (none padded)."""

    name: str
    shape: str
    text: str
    useful_macs: int


def tensor(*dims: int) -> str:
    return f"tensor<{'x'.join(map(str, dims))}x{DTYPE}>"


def gemm(m: int, n: int, k: int) -> Kernel:
    a, b, c = tensor(m, k), tensor(k, n), tensor(m, n)
    text = f"""
func.func @main(%a: {a}, %b: {b}) -> {c} {{
  %c = graph.matmul %a, %b : ({a}, {b}) -> {c}
  func.return %c : {c}
}}"""
    return Kernel("gemm", f"{m}x{n}x{k}", text, m * n * k)


def conv(
    name: str,
    channels: int,
    size: int,
    out_channels: int,
    window: int,
    stride: int = 1,
    groups: int = 1,
) -> Kernel:
    """A batch-1 NCHW convolution padded to keep `size / stride` output rows and columns."""
    pad = window // 2
    out = (size + 2 * pad - window) // stride + 1
    x, w, y = (
        tensor(1, channels, size, size),
        tensor(out_channels, channels // groups, window, window),
        tensor(1, out_channels, out, out),
    )
    attributes = f"pads = array<i64: {pad}, {pad}, {pad}, {pad}>, strides = array<i64: {stride}, {stride}>, groups = {groups} : i64"
    text = f"""
func.func @main(%x: {x}, %w: {w}) -> {y} {{
  %y = graph.conv2d %x, %w {{{attributes}}} : ({x}, {w}) -> {y}
  func.return %y : {y}
}}"""
    shape = f"{channels}x{size}x{size} -> {out_channels}x{out}x{out}, {window}x{window}/{stride}"
    return Kernel(
        name, shape, text, out_channels * out * out * (channels // groups) * window * window
    )


def attention(seq: int, head: int) -> Kernel:
    """One head: softmax(Q K^T / sqrt(d)) V."""
    q, kt, s = tensor(seq, head), tensor(head, seq), tensor(seq, seq)
    text = f"""
func.func @main(%q: {q}, %k: {q}, %v: {q}) -> {q} {{
  %kt = graph.transpose %k {{perm = array<i64: 1, 0>}} : {q} -> {kt}
  %s = graph.matmul %q, %kt : ({q}, {kt}) -> {s}
  %scale = graph.constant dense<{head**-0.5}> : tensor<{DTYPE}>
  %t = graph.mul %s, %scale : ({s}, tensor<{DTYPE}>) -> {s}
  %p = graph.softmax %t : {s}
  %o = graph.matmul %p, %v : ({s}, {q}) -> {q}
  func.return %o : {q}
}}"""
    return Kernel("attention", f"seq {seq}, d {head}", text, 2 * seq * seq * head)


def layer_norm(rows: int, columns: int) -> Kernel:
    x, v = tensor(rows, columns), tensor(columns)
    text = f"""
func.func @main(%x: {x}, %g: {v}, %b: {v}) -> {x} {{
  %y = graph.layer_norm %x, %g, %b : ({x}, {v}, {v}) -> {x}
  func.return %y : {x}
}}"""
    return Kernel("layer_norm", f"{rows}x{columns}", text, 0)


def softmax(rows: int, columns: int) -> Kernel:
    x = tensor(rows, columns)
    text = f"""
func.func @main(%x: {x}) -> {x} {{
  %y = graph.softmax %x : {x}
  func.return %y : {x}
}}"""
    return Kernel("softmax", f"{rows}x{columns}", text, 0)


def resnet50_convs() -> list[Kernel]:
    """ResNet-50 (v1.5, 224x224) at batch 1: the stem, and per stage (width C, feature map S)
    the 3x3 C -> C, the 1x1 4C -> C that opens a block and the 1x1 C -> 4C that closes it.
    Left out: the strided 3x3 and the projection 1x1 that open stages 2-4."""
    kernels = [conv("resnet50 stem 7x7", 3, 224, 64, 7, stride=2)]
    for stage, (width, size) in enumerate([(64, 56), (128, 28), (256, 14), (512, 7)], start=1):
        kernels += [
            conv(f"resnet50 s{stage} 3x3", width, size, width, 3),
            conv(f"resnet50 s{stage} 1x1 reduce", 4 * width, size, width, 1),
            conv(f"resnet50 s{stage} 1x1 expand", width, size, 4 * width, 1),
        ]
    return kernels


def full_kernels() -> list[Kernel]:
    return [
        *(gemm(n, n, n) for n in (256, 512, 1024, 2048, 4096)),
        gemm(1, 4096, 4096),
        gemm(128, 11008, 4096),
        *resnet50_convs(),
        conv("depthwise 3x3", 256, 28, 256, 3, groups=256),
        *(attention(seq, 64) for seq in (128, 512, 1024, 2048)),
        layer_norm(512, 1024),
        softmax(512, 1024),
    ]


def small_kernels() -> list[Kernel]:
    """One of each kind, tiny: a smoke run of every code path in seconds."""
    return [
        gemm(64, 64, 64),
        conv("conv 3x3", 16, 8, 32, 3),
        conv("depthwise 3x3", 16, 8, 16, 3, groups=16),
        attention(32, 16),
        layer_norm(16, 64),
        softmax(16, 64),
    ]


def select(kernels: Iterable[Kernel], names: str | None) -> list[Kernel]:
    """The kernels whose name starts with one of the comma-separated `names` (all without)."""
    if not names:
        return list(kernels)
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    return [k for k in kernels if any(k.name.startswith(w) for w in wanted)]


# --------------------------------------------------------------------------- runs


@dataclass
class Row:
    """One kernel on one machine: the run's figures, or the first line of why it failed."""

    kernel: str
    shape: str
    machine: str
    dtype: str
    schedule: str = "default"
    """"default" (lower-to-npu's heuristic tiles) or "tuned" (ziggurat-tune's, `--tune`)."""
    tile_sizes: list[int] | None = None
    """The tuned root's `tile.sizes` (None: the heuristic's, also when tuning kept them)."""
    staged: bool = False
    """Whether the tuned root stages its reduction (`tile.stage_reduction`)."""
    cycles: float | None = None
    bound_by: str | None = None
    bound_cycles: float | None = None
    of_bound: float | None = None
    """The binding roofline bound over the cycles taken (1.0: on the roof)."""
    of_peak: float | None = None
    """The kernel's own multiply-accumulates (no padding) at the matrix unit's peak, over the cycles."""
    of_useful_bound: float | None = None
    """The useful roofline bound (the kernel's own MACs; its arguments moved once) over the cycles."""
    flops: int | None = None
    """Operations the units ran (padded matrix blocks included), as the bound counts them."""
    global_bytes_read: int | None = None
    global_bytes_written: int | None = None
    intensity: float | None = None
    """FLOP per byte of global traffic in its busier direction (see `intensity`)."""
    flops_per_cycle: float | None = None
    busiest_pipe: str | None = None
    """The pipe busy longest: the unit that limits a kernel the bound does not (the vector unit's
    softmax counts in neither roof)."""
    busiest_share: float | None = None
    """Its busy cycles over the run's."""
    compile_seconds: float | None = None
    """Parsing, the graph interpreter's reference run and lower-to-npu."""
    wall_seconds: float = 0.0
    """The above and the simulation."""
    cpu_seconds: float = 0.0
    """The process's CPU time for it (what a busy machine does not stretch)."""
    error: str | None = None

    @property
    def over_bound(self) -> bool:
        """Faster than the roofline allows: a bug in the bound or in the timing."""
        return self.of_bound is not None and self.of_bound > 1.0


def first_line(error: BaseException) -> str:
    """The first line of a diagnostic; other exceptions (internal errors) with their type."""
    lines = str(error).strip().splitlines() or [""]
    expected = isinstance(error, (DiagnosticError, SimulationTimeout))
    return lines[0] if expected else f"{type(error).__name__}: {lines[0]}"


def global_bandwidth(machine: Machine) -> tuple[float, float]:
    """(read, write) bytes per cycle of the machine's global space."""
    space = machine.global_memory()
    return space.read_bytes_per_cycle, space.write_bytes_per_cycle


def core_read_bandwidth(machine: Machine) -> float:
    """Bytes per cycle one core's DMA engines can read from the global space: below the global
    bandwidth (davinci: MTE2's 128 of HBM's 1,200), a ceiling that `build_report`'s bound, one
    core with the chip's bandwidth to itself, does not count."""
    space = machine.global_memory().name
    return sum(
        dma.bytes_per_cycle
        for dma in machine.dmas.values()
        if any(src == space for src, _ in dma.paths)
    )


def intensity(flops: int, read: int, written: int, machine: Machine) -> float:
    """FLOP per byte of global traffic, the bytes counted as `build_report`'s memory bound counts
    them: reads and writes stream side by side, so the busier direction (writes scaled to the
    read bandwidth) is what takes time. On the plot, a memory-bound point then lies below the
    roof `intensity * read bandwidth` by exactly its fraction of the bound."""
    read_rate, write_rate = global_bandwidth(machine)
    busier = max(read, written * read_rate / write_rate)
    return flops / busier if busier else float("inf")


class SimulationTimeout(Exception):
    pass


def deadline_watch(seconds: float) -> Callable[[object, object], None]:
    """A `run_npu` watch that stops the run after `seconds` of this process's CPU time (wall
    time would stop runs on a busy machine that an idle one finishes)."""
    deadline = time.process_time() + seconds

    def watch(timeline, op) -> None:
        if time.process_time() > deadline:
            raise SimulationTimeout(
                f"simulation stopped after {seconds:g} s of CPU at cycle {timeline.cycles:,.0f} (--timeout)"
            )

    return watch


def measure(
    kernel: Kernel, machine_name: str, seed: int = 0, timeout: float = DEFAULT_TIMEOUT
) -> Row:
    """Lower `kernel` for the machine, run it (at most `timeout` seconds of simulation), check it
    against the graph interpreter."""
    row = Row(kernel.name, kernel.shape, machine_name, DTYPE)
    start, cpu = time.perf_counter(), time.process_time()
    try:
        machine = load_machine(machine_name)
        module = parse_source(default_context(), kernel.text, f"{kernel.name}.mlir")
        inputs = level_inputs(find_function(module), seed)
        expected = run_function(module, inputs)
        apply_pipeline(module, f"lower-to-npu{{machine={machine_name}}}")
        row.compile_seconds = time.perf_counter() - start
        result = run_npu(module, machine, inputs, watch=deadline_watch(timeout))
    except Exception as error:  # recorded in the row: one kernel's failure must not stop the others
        row.error = first_line(error)
        return row
    finally:
        row.wall_seconds, row.cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    wrong = [
        str(c)
        for c in compare_outputs(expected, result.outputs, None, None, scale_atol=True)
        if not c.ok
    ]
    if wrong:
        row.error = f"outputs differ from the graph interpreter: {'; '.join(wrong)}"
    fill_figures(row, kernel, result.stats, machine)
    return row


def fill_figures(row: Row, kernel: Kernel, stats, machine: Machine) -> None:
    report = build_report(stats, machine)
    roofline = report["roofline"]
    spaces = [name for name, space in machine.memories.items() if space.level == "global"]
    row.cycles = stats.total_cycles
    row.bound_by = roofline["bound_by"]
    row.bound_cycles = roofline["bound_cycles"]
    row.of_bound = roofline["achieved"]
    useful = report.get("useful_roofline")
    row.of_useful_bound = None if useful is None else useful["achieved"]
    peak = machine.peak_macs_per_cycle(DTYPE, ACCUMULATOR)
    row.of_peak = (
        kernel.useful_macs / peak / stats.total_cycles if kernel.useful_macs and peak else None
    )
    row.flops = stats.flops
    row.global_bytes_read = sum(stats.bytes_read.get(s, 0) for s in spaces)
    row.global_bytes_written = sum(stats.bytes_written.get(s, 0) for s in spaces)
    row.intensity = intensity(stats.flops, row.global_bytes_read, row.global_bytes_written, machine)
    row.flops_per_cycle = stats.flops / stats.total_cycles
    row.busiest_pipe, busy = max(report["busy_cycles"].items(), key=lambda item: item[1])
    row.busiest_share = busy / stats.total_cycles


def _measure_task(task: tuple[Kernel, str, float]) -> Row:
    kernel, machine, timeout = task
    return measure(kernel, machine, timeout=timeout)


def run_all(
    kernels: Sequence[Kernel],
    machines: Sequence[str],
    jobs: int,
    timeout: float,
    progress: Callable[[Row], None],
) -> list[Row]:
    """Every kernel on every machine, `jobs` runs at a time (each in its own process when > 1);
    rows in the order of `kernels`, then `machines`."""
    tasks = [(kernel, machine, timeout) for kernel in kernels for machine in machines]
    if jobs <= 1:
        rows = []
        for task in tasks:
            rows.append(_measure_task(task))
            progress(rows[-1])
        return rows
    with multiprocessing.get_context("fork").Pool(jobs, maxtasksperchild=1) as pool:
        rows = []
        # the largest runs first, so that a long one does not start last
        order = sorted(range(len(tasks)), key=lambda i: -tasks[i][0].useful_macs)
        for index, row in pool.imap_unordered(_indexed_task, [(i, tasks[i]) for i in order]):
            rows.append((index, row))
            progress(row)
    return [row for _, row in sorted(rows, key=lambda pair: pair[0])]


def _indexed_task(item: tuple[int, tuple[Kernel, str, float]]) -> tuple[int, Row]:
    index, task = item
    return index, _measure_task(task)


def tune_kernel(
    kernel: Kernel,
    machine: str,
    jobs: int,
    top_k: int,
    cache: Path,
    seed: int = 0,
    cluster: str | None = None,
) -> tuple[Kernel, list[int] | None, bool] | None:
    """`kernel` with ziggurat-tune's schedule (its `tile.sizes` on the root), as `ziggurat-tune
    --cache` makes it: measured on `jobs` processes (or where `cluster` says, as ziggurat-tune's
    `--cluster`), or taken from the cache file; with the tile
    sizes and whether the schedule stages its reduction. None when it has no group to tune."""
    module = parse_source(default_context(), kernel.text, f"{kernel.name}.mlir")
    choices = tune_module(
        module, machine, TuneOptions(jobs=jobs, top_k=top_k, seed=seed), cache, cluster
    )
    if not choices:
        return None
    sizes = next((list(c.sizes) for c in choices if c.sizes is not None), None)
    stream = io.StringIO()
    Printer(stream=stream).print_op(module)
    return replace(kernel, text=stream.getvalue()), sizes, any(c.stage for c in choices)


def tune_all(
    kernels: Sequence[Kernel],
    machines: Sequence[str],
    jobs: int,
    top_k: int,
    timeout: float,
    cache: Path,
    progress: Callable[[Row], None],
    cluster: str | None = None,
) -> list[Row]:
    """A "tuned" row per kernel and machine: tuned (`tune_kernel`), then measured as the default
    is; a kernel without a group to tune is left out."""
    rows = []
    for kernel in kernels:
        for machine in machines:
            start, cpu = time.perf_counter(), time.process_time()
            try:
                schedule = tune_kernel(kernel, machine, jobs, top_k, cache, cluster=cluster)
            except DiagnosticError as error:
                row = Row(
                    kernel.name,
                    kernel.shape,
                    machine,
                    DTYPE,
                    schedule="tuned",
                    error=first_line(error),
                )
            else:
                if schedule is None:
                    continue
                tuned, sizes, staged = schedule
                row = replace(
                    measure(tuned, machine, timeout=timeout),
                    schedule="tuned",
                    tile_sizes=sizes,
                    staged=staged,
                )
            row.wall_seconds, row.cpu_seconds = (
                time.perf_counter() - start,
                time.process_time() - cpu,
            )
            rows.append(row)
            progress(row)
    return rows


# --------------------------------------------------------------------------- output


def percent(value: float | None) -> str:
    return "" if value is None else f"{value:.1%}"


def number(value: float | None, spec: str) -> str:
    return "" if value is None else format(value, spec)


def shorten(text: str, limit: int = TABLE_ERROR_CHARACTERS) -> str:
    return text if len(text) <= limit else text[: limit - 4] + " ..."


def results_table(rows: Sequence[Row]) -> Table:
    table = Table(
        title=f"kernels against the roofline (one core, {DTYPE} in, {ACCUMULATOR} accumulators)",
        title_justify="left",
    )
    columns = (
        "kernel",
        "machine",
        "shape",
        "schedule",
        "cycles",
        "bound",
        "bound cycles",
        "% of bound",
        "% of useful bound",
        "% of peak",
        "busiest pipe",
        "wall s",
    )
    for column in columns:
        table.add_column(
            column,
            justify="left"
            if column in ("kernel", "machine", "shape", "schedule", "bound")
            else "right",
        )
    for r in rows:
        if r.error is not None and r.cycles is None:
            failed = f"FAILED: {shorten(r.error)}"
            table.add_row(
                r.kernel, r.machine, r.shape, r.schedule, failed, *[""] * 6, f"{r.wall_seconds:.1f}"
            )
            continue
        of_bound = percent(r.of_bound) + (" > 100%: bug" if r.over_bound else "")
        if r.error is not None:
            of_bound += " (WRONG OUTPUT)"
        table.add_row(
            r.kernel,
            r.machine,
            r.shape,
            schedule_name(r),
            number(r.cycles, ",.0f"),
            r.bound_by or "",
            number(r.bound_cycles, ",.0f"),
            of_bound,
            percent(r.of_useful_bound),
            percent(r.of_peak),
            f"{r.busiest_pipe} {percent(r.busiest_share)}",
            f"{r.wall_seconds:.1f}",
        )
    return table


def schedule_name(row: Row) -> str:
    """ "default", or "tuned" with its tile sizes ("tuned (heuristic)" where the heuristic won)."""
    if row.schedule != "tuned" or row.error is not None and row.cycles is None:
        return row.schedule
    staged = " staged" if row.staged else ""
    return (
        f"tuned {'x'.join(map(str, row.tile_sizes))}{staged}"
        if row.tile_sizes
        else f"tuned (heuristic){staged}"
    )


def markdown_table(rows: Sequence[Row]) -> str:
    """The table for docs/performance.md (a failure's message shortened)."""
    lines = [
        "| kernel | machine | shape | schedule | cycles | bound | bound cycles | % of bound | % of useful bound | % of peak | busiest pipe |",
        "|---|---|---|---|---:|---|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        if r.cycles is None:
            lines.append(
                f"| {r.kernel} | {r.machine} | {r.shape} | {r.schedule} | failed: {shorten(r.error)} | | | | | | |"
            )
            continue
        of_bound = (
            percent(r.of_bound)
            + (" (over the bound)" if r.over_bound else "")
            + (" (wrong output)" if r.error else "")
        )
        lines.append(
            f"| {r.kernel} | {r.machine} | {r.shape} | {schedule_name(r)} | {r.cycles:,.0f} | {r.bound_by} | {r.bound_cycles:,.0f} "
            f"| {of_bound} | {percent(r.of_useful_bound)} | {percent(r.of_peak)} | {r.busiest_pipe} {percent(r.busiest_share)} |"
        )
    return "\n".join(lines)


def targets(rows: Sequence[Row]) -> list[dict]:
    """Issue 7's two kernel targets, each with the default schedule's figure and, where `--tune`
    ran, the tuned one's: met when the better reaches the goal (the tuner is how ziggurat gets
    there; the heuristic is what an untuned run gets). A target whose rows did not run is left out."""
    found = []
    name, shape, machine, goal = TARGET
    gemm = {
        r.schedule: r.of_peak
        for r in rows
        if (r.kernel, r.shape, r.machine) == (name, shape, machine)
        and r.of_peak is not None
        and r.error is None
    }
    if gemm:
        found.append(
            {
                "target": f"{name} {shape} {DTYPE} on {machine}, % of the matrix unit's peak",
                "goal": goal,
                **gemm,
            }
        )
    prefix, machine, goal = CONV_TARGET
    convs: dict[str, list[float]] = {}
    useful: dict[str, list[float]] = {}
    for r in rows:
        if r.kernel.startswith(prefix) and r.machine == machine:
            ok = r.error is None
            convs.setdefault(r.schedule, []).append(r.of_bound if ok and r.of_bound else 0.0)
            useful.setdefault(r.schedule, []).append(
                r.of_useful_bound if ok and r.of_useful_bound else 0.0
            )
    if convs:
        averages = {schedule: sum(values) / len(values) for schedule, values in convs.items()}
        count = len(convs["default"]) if "default" in convs else len(next(iter(convs.values())))
        found.append(
            {
                "target": f"{prefix} conv layers ({count}) on {machine}, average % of their bound",
                "goal": goal,
                **averages,
                # the same layers against what they must do (their own MACs, arguments moved
                # once): the executed bound rises with padding, this one does not
                "useful": {
                    schedule: sum(values) / len(values) for schedule, values in useful.items()
                },
            }
        )
    for target in found:
        target["met"] = max(target.get("default", 0.0), target.get("tuned", 0.0)) >= target["goal"]
    return found


def plot_roofline(rows: Sequence[Row], machine: Machine, path: Path) -> None:
    """Log-log roofline: the roofs from the matrix unit's peak and the global read bandwidth,
    each kernel that ran a labelled point."""
    ran = [r for r in rows if r.flops_per_cycle and r.intensity and r.intensity != float("inf")]
    peak = 2 * machine.peak_macs_per_cycle(DTYPE, ACCUMULATOR)
    bandwidth, _ = global_bandwidth(machine)
    ridge = peak / bandwidth
    xs = [r.intensity for r in ran] + [ridge]
    low, high = min(xs) / 4, max(xs) * 4
    figure, axes = plt.subplots(figsize=(10, 7))
    axes.loglog(
        [low, ridge, high],
        [low * bandwidth, peak, peak],
        color="black",
        linewidth=1.5,
        label=f"roof: {peak:,.0f} FLOP/cycle ({DTYPE} matrix peak), {bandwidth:,.0f} B/cycle global",
    )
    engines = core_read_bandwidth(machine)
    if engines < bandwidth:
        axes.loglog(
            [low, peak / engines, high],
            [low * engines, peak, peak],
            color="gray",
            linestyle="--",
            linewidth=1,
            label=f"one core's DMA engines: {engines:,.0f} B/cycle from global memory",
        )
    repeated = Counter(r.kernel for r in ran)
    for r in ran:
        label = (f"{r.kernel} {r.shape}" if repeated[r.kernel] > 1 else r.kernel) + (
            " tuned" if r.schedule == "tuned" else ""
        )
        marker = "x" if r.over_bound or r.error else "o"
        axes.loglog(r.intensity, r.flops_per_cycle, marker, markersize=5)
        axes.annotate(
            f"{label} ({percent(r.of_bound)})",
            (r.intensity, r.flops_per_cycle),
            fontsize=6,
            xytext=(3, 3),
            textcoords="offset points",
        )
    axes.set_xlabel("FLOP per byte of global traffic (busier direction)")
    axes.set_ylabel("FLOP per cycle achieved")
    axes.set_title(f"{machine.name}: kernels lowered by lower-to-npu, one core")
    axes.grid(True, which="both", linewidth=0.3)
    axes.legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def machine_figures(machine: Machine) -> dict[str, float]:
    """The roofs of the plot."""
    read, write = global_bandwidth(machine)
    return {
        "peak_flops_per_cycle": 2 * machine.peak_macs_per_cycle(DTYPE, ACCUMULATOR),
        "global_read_bytes_per_cycle": read,
        "global_write_bytes_per_cycle": write,
        "core_read_bytes_per_cycle": core_read_bandwidth(machine),
    }


def write_results(rows: Sequence[Row], machines: Sequence[str], folder: Path, report: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    document = report | {
        "machines": {name: machine_figures(load_machine(name)) for name in machines},
        "rows": [asdict(r) | {"over_bound": r.over_bound} for r in rows],
    }
    write_atomically(folder / "kernels.json", json.dumps(document, indent=2) + "\n")
    write_atomically(folder / "kernels.md", markdown_table(rows) + "\n")
    for name in machines:
        plot_roofline(
            [r for r in rows if r.machine == name],
            load_machine(name),
            folder / f"roofline_{name}.png",
        )


def target_line(target: dict) -> str:
    figures = ", ".join(
        f"{schedule} {target[schedule]:.1%}"
        for schedule in ("default", "tuned")
        if schedule in target
    )
    line = f"target: {target['target']}: {figures} (goal >= {target['goal']:.0%}): {'met' if target['met'] else 'MISSED'}"
    useful = target.get("useful")
    if useful:
        against = ", ".join(
            f"{schedule} {useful[schedule]:.1%}"
            for schedule in ("default", "tuned")
            if schedule in useful
        )
        line += f"; against their useful bound: {against}"
    return line


def print_summary(rows: Sequence[Row], found: Sequence[dict], console: Console) -> None:
    console.print(results_table(rows))
    for target in found:
        console.print(target_line(target), highlight=False)
    for r in rows:
        if r.over_bound:
            console.print(
                f"OVER THE BOUND: {r.kernel} {r.shape} on {r.machine} at {r.of_bound:.1%}",
                highlight=False,
            )
    failed = [r for r in rows if r.error is not None]
    console.print(
        f"{len(rows) - len(failed)} of {len(rows)} runs lowered, ran and matched the graph interpreter",
        highlight=False,
    )
    for r in failed:
        console.print(
            f"FAILED {r.kernel} {r.shape} on {r.machine}: {r.error}",
            highlight=False,
            soft_wrap=True,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--small", action="store_true", help="tiny sizes, one kernel of each kind (a smoke run)"
    )
    parser.add_argument(
        "--machines",
        default=",".join(MACHINES),
        help="comma-separated presets (default: %(default)s)",
    )
    parser.add_argument(
        "--kernels",
        help="comma-separated kernel name prefixes: gemm, resnet50, depthwise, attention, ...",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="runs at once, each in its own process (default: every core)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help="CPU seconds of simulation per run (default: %(default)g)",
    )
    parser.add_argument(
        "--results",
        type=Path,
        default=RESULTS,
        help="folder for kernels.json, the plots and tune-cache.json",
    )
    parser.add_argument(
        "--tune",
        default=TUNED,
        metavar="KERNELS",
        help="kernel name prefixes to also run with ziggurat-tune's schedules ('' for none; default: %(default)s)",
    )
    parser.add_argument(
        "--tune-machines", default="davinci", help="presets to tune on (default: %(default)s)"
    )
    parser.add_argument(
        "--top-k",
        type=int,
        default=TUNE_TOP_K,
        help="schedules measured per tuned kernel (default: %(default)s)",
    )
    parser.add_argument(
        "--cluster",
        metavar="WHERE",
        help="where ziggurat-tune's measurements run, as its --cluster (local, ray, ray://HOST:PORT; default: local)",
    )
    args = parser.parse_args(argv)
    machines = [m.strip() for m in args.machines.split(",") if m.strip()]
    for name in machines:
        load_machine(name)  # a bad name is one error here, not one per kernel
    kernels = select(small_kernels() if args.small else full_kernels(), args.kernels)
    if not kernels:
        raise SystemExit(f"no kernel matches --kernels {args.kernels}")
    console = Console(width=None if sys.stdout.isatty() else 200)
    progress = Console(stderr=True)
    start = time.perf_counter()
    rows = run_all(
        kernels,
        machines,
        args.jobs,
        args.timeout,
        lambda r: progress.print(
            f"{r.kernel} {r.shape} on {r.machine}: {'FAILED' if r.error else percent(r.of_bound) + ' of bound'} "
            f"({r.wall_seconds:.1f} s)",
            highlight=False,
        ),
    )
    if args.tune:
        args.results.mkdir(parents=True, exist_ok=True)
        tuned = select(kernels, args.tune)
        tune_machines = [m for m in machines if m in args.tune_machines.split(",")]
        rows += tune_all(
            tuned,
            tune_machines,
            args.jobs,
            args.top_k,
            args.timeout,
            args.results / "tune-cache.json",
            lambda r: progress.print(
                f"{r.kernel} {r.shape} on {r.machine}, tuned: "
                f"{'FAILED' if r.error else percent(r.of_bound) + ' of bound'} ({r.wall_seconds:.1f} s)",
                highlight=False,
            ),
            args.cluster,
        )
        order = {
            (r.kernel, r.shape, r.machine): i for i, r in enumerate(rows) if r.schedule == "default"
        }
        rows.sort(key=lambda r: (order.get((r.kernel, r.shape, r.machine), len(order)), r.schedule))
    found = targets(rows)
    report = {
        "small": args.small,
        "jobs": args.jobs,
        "timeout_seconds": args.timeout,
        "targets": found,
        "total_seconds": time.perf_counter() - start,
        "cpu_seconds": sum(r.cpu_seconds for r in rows),
    }
    write_results(rows, machines, args.results, report)
    print_summary(rows, found, console)
    console.print(
        f"{len(rows)} runs in {report['total_seconds']:.0f} s ({report['cpu_seconds']:.0f} s of CPU in this process, --jobs {args.jobs}); "
        f"results in {args.results}",
        highlight=False,
    )
    return 1 if bugs_or_missed(rows, found) else 0


def bugs_or_missed(rows: Sequence[Row], found: Sequence[dict]) -> list[str]:
    """What makes the script exit 1, each also printed to stderr."""
    problems = [f"missed: {target_line(t).removeprefix('target: ')}" for t in found if not t["met"]]
    problems += [
        f"over its bound: {r.kernel} {r.shape} on {r.machine}" for r in rows if r.over_bound
    ]
    problems += [
        f"wrong outputs: {r.kernel} {r.shape} on {r.machine}"
        for r in rows
        if r.error and r.cycles is not None
    ]
    for problem in problems:
        print(f"FAIL: {problem}", file=sys.stderr)
    return problems


if __name__ == "__main__":
    run_main(main)
