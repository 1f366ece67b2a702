"""Networks end to end on a machine: ResNet-50 and a transformer encoder layer, with TVM and IREE beside them.

    python benchmarks/networks.py                              # or `make bench`
    python benchmarks/networks.py --models transformer         # one network
    python benchmarks/networks.py --models m.onnx --no-peers   # any ONNX model, without the peers

The networks are the light ResNet-50 of the onnx package's backend tests (ResNet-50's
shapes and node graph, constant weights; its nodes are named n0, n1, ...) and the
transformer encoder layer of examples/models (4-head self-attention, LayerNormalization,
a GELU MLP; written by examples/models/transformer_encoder.py). Each goes the way
`ziggurat-compile MODEL --machine M --run --check --report json` takes it, in this
process and through the same functions:

* compile: import and lowering to npu code (`load_model`, `import_loaded_model`,
  `graph-convert-float` where the machine asks for it, `compile{machine=M}`);
* simulate: the npu code on the machine model with its timing;
* the report (`build_report`): simulated cycles, time (cycles / the machine's clock),
  the share of the roofline bound achieved, and the cycles of each ONNX layer;
* the numerics, as `--check` does: against onnxruntime on the same inputs and, where the
  model ships them, its expected outputs, at the tolerance of the type it computed in.

Compile and simulate are each timed in wall and CPU seconds (this process's CPU time,
all threads); unlike benchmarks/compile_speed.py they leave out starting Python,
printing the npu IR and parsing it back. Each network's per-layer cycles are drawn as a
bar chart, the `--layers` longest, into benchmarks/results/layers_<network>.png.

Peers: TVM (Relax's ONNX frontend, `relax.build` for llvm) and IREE
(`iree-import-onnx` at opset 17, `iree-compile` for llvm-cpu) compile the same ONNX
file in a child process of `--peer-python` (default: this Python; `make bench` installs
both), timed from the file's loading to the compiled module, imports left out. A peer
that is not installed there, fails or runs past `--peer-timeout` is skipped with the
reason. Everything goes to benchmarks/results/networks.json; the script exits 1 when a
network does not compile, run or match. See docs/performance.md, "Networks".
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from compile_speed import light_model
from conformance import StageFailed, number, reference_data, stage
from peers import COMPILERS, Peer, measure_peer
from rich.console import Console
from rich.table import Table

import ziggurat  # noqa: F401  first: it sets OPENBLAS_NUM_THREADS=1 before numpy loads (100x faster npu.mma)
from ziggurat import numerics
from ziggurat.cli import parse_command_line, run_main, write_atomically
from ziggurat.context import default_context
from ziggurat.diagnostics import Diagnostic, DiagnosticError
from ziggurat.frontends.onnx import import_loaded_model, load_model
from ziggurat.frontends.onnx.node import location_name
from ziggurat.frontends.onnx.reference_data import graph_inputs
from ziggurat.interpreters.report import build_report
from ziggurat.lowering.precision import PRECISIONS, Precision, choose_precision
from ziggurat.machine import Machine, load_machine
from ziggurat.tools.ziggurat_compile import (
    lower,
    lowering_passes,
    run_at_emitted_level,
    run_onnxruntime,
)
from ziggurat.tools.ziggurat_tune import tune_module, tuning_point
from ziggurat.tuning.tuner import TuneOptions

RESULTS = Path(__file__).parent / "results"
EXAMPLE_MODELS = Path(__file__).parents[1] / "examples" / "models"
DEFAULT_NETWORKS = ("resnet50", "transformer")
CHART_LAYERS = 30
"""Bars in a per-layer chart: the longest layers (ResNet-50 has about 120)."""
PEER_TIMEOUT = 600.0
TUNED_NETWORKS = ("resnet50",)
"""The networks also run with ziggurat-tune's schedules by default (`--tune`)."""
TUNE_BUDGET = 900.0
TUNE_TOP_K = 8
"""Schedules measured per group when tuning a network: beyond the default 4, the estimate, which
does not see what staging a reduction saves, ranks ResNet-50's best schedules lower (its classifier
GEMM staged: 7th; 1,828,306 tuned cycles in all at 8, 1,876,666 at 4, 1,828,001 at 12)."""
"""Seconds of ziggurat-tune's search per network by default: enough for ResNet-50's whole search on 2 cores."""
TUNE_TARGET = 1.3
"""Issue 7: tuned schedules >= 1.3x faster than the heuristic's on the ResNet-50 total."""


# --------------------------------------------------------------------------- #
# The networks
# --------------------------------------------------------------------------- #


def transformer_encoder(folder: Path) -> Path:
    """examples/models' transformer encoder layer, written into `folder`."""
    path = folder / "transformer_encoder.onnx"
    script = EXAMPLE_MODELS / "transformer_encoder.py"
    subprocess.run([sys.executable, str(script), str(path)], check=True, capture_output=True)
    return path


NETWORKS: dict[str, Callable[[Path], Path]] = {
    "resnet50": lambda folder: light_model("resnet50"),
    "transformer": transformer_encoder,
}
"""Each network's ONNX file, written into a scratch folder where it is generated."""


def select_networks(names: str, folder: Path) -> dict[str, Path]:
    """Network name -> ONNX file, for `--models` (known names or .onnx paths)."""
    selected = {}
    for name in filter(None, (n.strip() for n in names.split(","))):
        if name.endswith(".onnx"):
            selected[Path(name).stem] = Path(name)
        elif name in NETWORKS:
            selected[name] = NETWORKS[name](folder)
        else:
            raise DiagnosticError(
                Diagnostic(
                    "error",
                    f"no network '{name}' (known: {', '.join(NETWORKS)}, or a path to an .onnx file)",
                )
            )
    return selected


# --------------------------------------------------------------------------- #
# One network through ziggurat
# --------------------------------------------------------------------------- #


@dataclass
class Timing:
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0


def cpu_seconds() -> float:
    """CPU seconds of this process (all threads) and of the child processes it has waited for
    (ziggurat-tune's measuring processes)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


@contextmanager
def timed(timing: Timing) -> Iterator[None]:
    """Add the wall and CPU seconds of the block to `timing`."""
    wall, cpu = time.perf_counter(), cpu_seconds()
    try:
        yield
    finally:
        timing.wall_seconds += time.perf_counter() - wall
        timing.cpu_seconds += cpu_seconds() - cpu


@dataclass
class Check:
    """The outputs against one reference: the largest errors over the outputs, and the verdict."""

    against: str
    max_abs: float
    max_rel: float
    passed: bool


@dataclass
class Tuning:
    """The same network with ziggurat-tune's tile sizes (tuned where the default is the heuristic's)."""

    budget: float | None
    top_k: int
    jobs: int
    search: Timing = field(default_factory=Timing)
    """ziggurat-tune's search, its measuring processes' CPU included."""
    groups: int = 0
    """Fusion groups with tile sizes to search."""
    measured: int = 0
    """Schedules measured (a layer repeated in the network is measured once)."""
    retiled: int = 0
    """Groups whose winner is not the heuristic's tile."""
    complete: bool = False
    """Every planned schedule was measured within the budget."""
    cycles: float | None = None
    speedup: float | None = None
    """The default's cycles / the tuned cycles."""
    layers: list[dict[str, Any]] = field(default_factory=list)
    """The tuned run's cycles per ONNX layer, as the default run's `NetworkResult.layers`."""
    checks: list[Check] = field(default_factory=list)
    """The tuned outputs against the same references as the default's, and against the default's outputs."""

    @property
    def met(self) -> bool:
        return self.speedup is not None and self.speedup >= TUNE_TARGET


@dataclass
class NetworkResult:
    """A figure is None where the network did not get that far (`failure` says where it stopped)."""

    network: str
    model: str
    machine: str
    compile: Timing = field(default_factory=Timing)
    """Import and lowering to npu code."""
    simulate: Timing = field(default_factory=Timing)
    computed_in: str | None = None
    """The float type the npu code computes in, when not the model's (graph-convert-float)."""
    cycles: float | None = None
    simulated_seconds: float | None = None
    """cycles / the machine's clock."""
    roofline_achieved: float | None = None
    """The roofline bound's cycles / the simulated cycles."""
    bound_by: str | None = None
    expected_from: str | None = None
    """Where `reference_data` took the expected outputs from: "shipped" or "onnxruntime"."""
    checks: list[Check] = field(default_factory=list)
    layers: list[dict[str, Any]] = field(default_factory=list)
    """The report's per-layer table (layer, cycles, busy cycles per pipe, instructions; longest first),
    with the ONNX op type of the node each layer is named after."""
    chart: str | None = None
    peers: list[Peer] = field(default_factory=list)
    tuning: Tuning | None = None
    """With `--tune`: the tuned schedules' figures."""
    failure: str | None = None

    def fail(self, stage: str, reason: str) -> None:
        """The first failure is the one kept (conformance's `stage` calls this)."""
        if self.failure is None:
            self.failure = f"{stage}: {reason}"

    @property
    def passed(self) -> bool:
        checks = [*self.checks, *(self.tuning.checks if self.tuning else [])]
        return self.failure is None and bool(self.checks) and all(c.passed for c in checks)


def evaluate(network: str, path: Path, machine: Machine, args: argparse.Namespace) -> NetworkResult:
    """Compile, simulate and check one network; a failed stage stops it with its reason recorded."""
    result = NetworkResult(network, path.name, machine.name)
    if network in args.tune.split(","):
        result.tuning = Tuning(args.tune_budget, args.tune_top_k, args.tune_jobs)
    with suppress(StageFailed):
        compile_simulate_check(result, path, machine, args)
    return result


def compile_simulate_check(
    result: NetworkResult, path: Path, machine: Machine, args: argparse.Namespace
) -> None:
    with stage(result, "import"), timed(result.compile):
        model, where = load_model(path)
        module = import_loaded_model(model, {}, where)
    with stage(result, "reference"):
        inputs, expected = reference_data(result, path, model, module)
        references = {result.expected_from: expected}
        if result.expected_from == "shipped":  # --check compares with onnxruntime as well
            references["onnxruntime"] = run_onnxruntime(
                model, [v.name for v in graph_inputs(model)], inputs
            )
    with stage(result, "compile"), timed(result.compile):
        precision = choose_precision(args.precision, machine, module, inputs)
        result.computed_in = precision.element_type
        passes = lowering_passes(args.machine, "npu", precision)
        split = tuning_point(passes)
        lower(default_context(), module, passes[:split])
    tuned = (
        module.clone() if result.tuning is not None else None
    )  # the graph IR ziggurat-tune takes
    with stage(result, "compile"), timed(result.compile):
        lower(default_context(), module, passes[split:])
    with stage(result, "simulate"), timed(result.simulate):
        run = run_at_emitted_level(module, inputs, machine, verified=True)
    report = build_report(run.stats, machine, layers=True)
    result.cycles, result.simulated_seconds = report["total_cycles"], report["seconds"]
    result.roofline_achieved, result.bound_by = (
        report["roofline"]["achieved"],
        report["roofline"]["bound_by"],
    )
    op_types = {location_name(node): node.op_type for node in model.graph.node}
    result.layers = [
        layer | {"op_type": op_types.get(layer["layer"])} for layer in report["layers"]
    ]
    computed_in = precision.dtype
    result.checks = [
        check(against, run.outputs, outputs, computed_in) for against, outputs in references.items()
    ]
    if tuned is not None:
        references["default"] = run.outputs
        tune_simulate_check(
            result, result.tuning, tuned, passes[split:], inputs, references, machine, args
        )


def tune_simulate_check(
    result: NetworkResult,
    tuning: Tuning,
    module,
    passes,
    inputs,
    references,
    machine: Machine,
    args,
) -> None:
    """Tune the graph IR `module` (ziggurat-tune's search, from an empty cache unless `--tune-cache`),
    lower it with `passes`, run it and check its outputs against `references`."""
    options = TuneOptions(jobs=tuning.jobs, budget=tuning.budget, top_k=tuning.top_k)
    with stage(result, "tune"), timed(tuning.search):
        choices = tune_module(module, args.machine, options, args.tune_cache, args.cluster)
    tuning.groups = len(choices)
    searched = {
        c.group.key: c for c in choices if not c.cached
    }  # a repeated layer shares its group's choice
    tuning.measured = sum(c.measured for c in searched.values())
    tuning.retiled = sum(c.sizes is not None and c.sizes != c.group.candidates[0] for c in choices)
    tuning.complete = all(c.complete for c in choices)
    with stage(result, "compile tuned"):
        lower(default_context(), module, passes)
    with stage(result, "simulate tuned"):
        run = run_at_emitted_level(module, inputs, machine, verified=True)
    tuning.cycles = run.stats.total_cycles
    tuning.speedup = result.cycles / tuning.cycles
    tuning.layers = build_report(run.stats, machine, layers=True)["layers"]
    computed_in = Precision(result.computed_in, "").dtype
    tuning.checks = [
        check(against, run.outputs, outputs, computed_in) for against, outputs in references.items()
    ]


def check(against: str, actual: list[np.ndarray], expected: list[np.ndarray], computed_in) -> Check:
    pairs = enumerate(zip(actual, expected, strict=True))
    checks = [
        numerics.compare(a, e, name=f"output '#{i}'", computed_in=computed_in)
        for i, (a, e) in pairs
    ]
    return Check(
        against,
        max(c.max_abs for c in checks),
        max(c.max_rel for c in checks),
        all(c.ok for c in checks),
    )


# --------------------------------------------------------------------------- #
# The per-layer chart
# --------------------------------------------------------------------------- #


def layer_label(layer: dict[str, Any]) -> str:
    """A layer's name with its op type where the name does not say it (ResNet-50's n1 is a BatchNormalization)."""
    name, op_type = layer["layer"], layer.get("op_type")
    return name if op_type is None or name.startswith(op_type) else f"{name} {op_type}"


def layer_chart(result: NetworkResult, path: Path, count: int) -> None:
    """A horizontal bar per layer (the `count` longest, 0: all), the longest on top: its span in cycles
    (first instruction's start to last one's end) with its share of the total, and inside it the busy
    cycles of its busiest pipe. A layer fused into another's tiles (a conv's bias, BN or relu epilogue)
    spans that layer's whole run while keeping a pipe busy for a sliver of it."""
    import matplotlib

    matplotlib.use("Agg")  # no display: files only
    import matplotlib.pyplot as plt

    shown = result.layers[:count] if count else result.layers
    names = [layer_label(layer) for layer in reversed(shown)]
    cycles = [layer["cycles"] for layer in reversed(shown)]
    figure, axes = plt.subplots(figsize=(9, 1.5 + 0.22 * len(shown)))
    busiest = [max(layer["busy_cycles"].values(), default=0.0) for layer in reversed(shown)]
    bars = axes.barh(
        names, cycles, color="tab:blue", alpha=0.45, label="span (first start to last end)"
    )
    axes.barh(names, busiest, color="tab:blue", height=0.4, label="busy cycles of its busiest pipe")
    axes.bar_label(bars, labels=[f" {c / result.cycles:.1%}" for c in cycles], fontsize=7)
    axes.legend(loc="lower right", fontsize=8)
    axes.set_xlabel(f"simulated cycles on {result.machine}")
    axes.tick_params(axis="y", labelsize=8)
    which = (
        f"the {len(shown)} longest of {len(result.layers)} layers"
        if len(shown) < len(result.layers)
        else "every layer"
    )
    axes.set_title(
        f"{result.network}: cycles per ONNX layer ({which})\n{result.cycles:,.0f} cycles in all, "
        f"{result.roofline_achieved:.1%} of the roofline bound",
        fontsize=10,
    )
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)


# --------------------------------------------------------------------------- #
# Table and command line
# --------------------------------------------------------------------------- #


def verdict(result: NetworkResult) -> str:
    if not result.checks:
        return "-"
    return ", ".join(
        f"{c.against} {'ok' if c.passed else 'FAIL'} ({c.max_abs:.2g})" for c in result.checks
    )


def peer_seconds(result: NetworkResult, name: str) -> str:
    peer = next((p for p in result.peers if p.name == name), None)
    if peer is None or peer.skipped is not None:
        return "-"
    return f"{peer.wall_seconds:.1f} / {peer.cpu_seconds:.1f}"


def results_table(results: list[NetworkResult], machine: str) -> Table:
    table = Table(title=f"networks on {machine} (seconds: wall / CPU)", title_justify="left")
    columns = (
        "network",
        "cycles",
        "simulated",
        "roofline",
        "compile s",
        "simulate s",
        "check (max abs)",
    )
    for column in (*columns, *(f"{peer} compile s" for peer in COMPILERS)):
        table.add_column(
            column, justify="left" if column in ("network", "check (max abs)") else "right"
        )
    for r in results:
        simulated = "" if r.simulated_seconds is None else f"{r.simulated_seconds * 1e3:.3f} ms"
        roofline = (
            "" if r.roofline_achieved is None else f"{r.roofline_achieved:.1%} ({r.bound_by})"
        )
        table.add_row(
            r.network,
            number(r.cycles, ",.0f"),
            simulated,
            roofline,
            f"{r.compile.wall_seconds:.1f} / {r.compile.cpu_seconds:.1f}",
            f"{r.simulate.wall_seconds:.1f} / {r.simulate.cpu_seconds:.1f}"
            if r.cycles is not None
            else "",
            verdict(r),
            *(peer_seconds(r, peer) for peer in COMPILERS),
        )
    return table


def tuning_table(results: list[NetworkResult]) -> Table:
    """Default (heuristic) against tuned cycles, for the networks run with `--tune`."""
    table = Table(
        title=f"tuned against default tiles (target: >= {TUNE_TARGET}x)", title_justify="left"
    )
    columns = (
        "network",
        "default cycles",
        "tuned cycles",
        "speedup",
        "groups (retiled)",
        "measured",
        "tuning s",
        "check (max abs)",
    )
    for column in columns:
        table.add_column(
            column, justify="left" if column in ("network", "check (max abs)") else "right"
        )
    for r in results:
        t = r.tuning
        if t is None:
            continue
        speedup = "" if t.speedup is None else f"{t.speedup:.3f}x ({'met' if t.met else 'missed'})"
        search = f"{t.search.wall_seconds:.1f} / {t.search.cpu_seconds:.1f}" + (
            "" if t.complete else " (budget)"
        )
        checks = ", ".join(
            f"{c.against} {'ok' if c.passed else 'FAIL'} ({c.max_abs:.2g})" for c in t.checks
        )
        table.add_row(
            r.network,
            number(r.cycles, ",.0f"),
            number(t.cycles, ",.0f"),
            speedup,
            f"{t.groups} ({t.retiled})",
            str(t.measured),
            search,
            checks or "-",
        )
    return table


def print_results(results: list[NetworkResult], machine: str, console: Console) -> None:
    """The table, then the skipped peers and the failures, one line each."""
    console.print(results_table(results, machine))
    if any(r.tuning is not None for r in results):
        console.print(tuning_table(results))
    for r in results:
        for peer in r.peers:
            if peer.skipped is not None:
                console.print(
                    f"{peer.name} ({r.network}): skipped, {peer.skipped}",
                    highlight=False,
                    markup=False,
                    soft_wrap=True,
                )
        if r.failure is not None:
            console.print(
                f"{r.network}: FAILED at {r.failure}", highlight=False, markup=False, soft_wrap=True
            )
        if r.chart is not None:
            console.print(
                f"{r.network}: per-layer chart in {r.chart}",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
        if r.tuning is not None and r.tuning.speedup is not None and not r.tuning.met:
            console.print(
                f"{r.network}: tuned {r.tuning.speedup:.3f}x faster than the heuristic, target {TUNE_TARGET}x missed",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )


def build_argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--models",
        metavar="A,B",
        default=",".join(DEFAULT_NETWORKS),
        help=f"networks by name ({', '.join(NETWORKS)}) or .onnx path (default: %(default)s)",
    )
    parser.add_argument(
        "--machine", default="davinci", help="machine preset or file (default: davinci)"
    )
    parser.add_argument(
        "--precision",
        choices=PRECISIONS,
        default="auto",
        help="as ziggurat-compile's --precision (default: auto)",
    )
    parser.add_argument(
        "--layers",
        type=int,
        default=CHART_LAYERS,
        help=f"bars per chart, the longest layers; 0: all (default: {CHART_LAYERS})",
    )
    parser.add_argument(
        "--results", type=Path, default=RESULTS, help="folder for networks.json and the charts"
    )
    parser.add_argument(
        "--peers",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="time TVM's and IREE's compile too",
    )
    parser.add_argument(
        "--peer-python",
        default=sys.executable,
        help="the Python that has the peers installed (default: this one)",
    )
    parser.add_argument(
        "--peer-timeout",
        type=float,
        default=PEER_TIMEOUT,
        help=f"seconds per peer compile (default: {PEER_TIMEOUT:g})",
    )
    parser.add_argument(
        "--tune",
        metavar="A,B",
        default=",".join(TUNED_NETWORKS),
        help="networks also run with ziggurat-tune's tile sizes, by name or .onnx stem; '' for none (default: %(default)s)",
    )
    parser.add_argument(
        "--tune-budget",
        type=float,
        default=TUNE_BUDGET,
        help=f"ziggurat-tune's --budget in seconds (default: {TUNE_BUDGET:g})",
    )
    parser.add_argument(
        "--tune-top-k",
        type=int,
        default=TUNE_TOP_K,
        help=f"ziggurat-tune's --top-k (default: {TUNE_TOP_K})",
    )
    parser.add_argument(
        "--tune-jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="ziggurat-tune's --jobs (default: every core)",
    )
    parser.add_argument(
        "--tune-cache",
        type=Path,
        help="ziggurat-tune's --cache (default: none, every group is measured)",
    )
    parser.add_argument(
        "--cluster",
        metavar="WHERE",
        help="where ziggurat-tune's measurements run, as its --cluster (local, ray, ray://HOST:PORT; default: local)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = parse_command_line(build_argument_parser(), argv)
    machine = load_machine(args.machine)
    progress = Console(stderr=True)
    results = []
    with tempfile.TemporaryDirectory() as folder:
        for network, path in select_networks(args.models, Path(folder)).items():
            progress.print(
                f"{network}: compiling and simulating on {machine.name}", highlight=False
            )
            result = evaluate(network, path, machine, args)
            if result.layers:
                chart = args.results / f"layers_{network}.png"
                layer_chart(result, chart, args.layers)
                result.chart = str(chart)
            if args.peers:
                result.peers = [
                    measure_peer(name, path, args.peer_python, args.peer_timeout)
                    for name in COMPILERS
                ]
            results.append(result)
    print_results(results, machine.name, Console(width=None if sys.stdout.isatty() else 160))
    report = {
        "machine": machine.name,
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "host": {"cpus": os.cpu_count(), "processor": platform.processor() or platform.machine()},
        "precision": args.precision,
        "networks": [asdict(r) | {"passed": r.passed} for r in results],
    }
    args.results.mkdir(parents=True, exist_ok=True)
    write_atomically(args.results / "networks.json", json.dumps(report, indent=2) + "\n")
    return 0 if all(r.passed and (r.tuning is None or r.tuning.met) for r in results) else 1


if __name__ == "__main__":
    run_main(main)
