"""Conformance end to end: the onnx package's light models, compiled to npu code and simulated.

    python benchmarks/conformance.py                      # or `make conformance`
    python benchmarks/conformance.py --models squeezenet,resnet50 --jobs 2 --timeout 600

The onnx package ships real topologies under `onnx/backend/test/data/light/`
(ResNet-50, DenseNet-121, Inception v1/v2, ShuffleNet, SqueezeNet, VGG-19,
AlexNet, ZFNet-512), each with the output onnx's runner expects for its dummy
input (`ziggurat.frontends.onnx.reference_data`). Each model goes the way
`ziggurat-compile MODEL --machine M --run --check` takes it, in process and
through the same functions:

1. import (`load_model`, `import_loaded_model`);
2. graph level: the imported module on the reference interpreter, compared
   with the expected output (column "graph");
3. compile: `graph-convert-float` when the machine's matrix unit has no
   instruction for the model's float type (f32 on davinci: the model computes
   in bf16; `--precision` chooses, as ziggurat-compile's), then the
   `compile{machine=M}` pipeline down to npu code;
4. simulate: the npu code on the machine model, compared with the expected
   output at the tolerance of the type it computed in (column "npu", with the
   max abs and rel error), its simulated cycles, and the wall times of
   compiling (import and lowering) and simulating.

The shipped outputs come from constant weights and give every class the same
score, so they check little arithmetic: `--random-weights` gives each constant
fill seeded random values and compares with onnxruntime on random inputs
instead, as it does for a model without shipped outputs (a path given to
`--models`). Every model runs in its own process,
`--jobs` at a time, and is stopped after `--timeout` seconds, so one that
hangs or is too big still leaves its row in the table; `--cluster ray` runs
the models as tasks on a Ray cluster instead (docs/distributed.md), each
retried once when it times out or its worker is lost. A failed model's row
says at which stage, with the first line of the diagnostic. The results go to
benchmarks/results/conformance.json (`--output`); the script exits 1 when a
model does not pass at the npu level.
"""

from __future__ import annotations

import argparse
import io
import json
import multiprocessing
import os
import platform
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, redirect_stderr, redirect_stdout, suppress
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from multiprocessing.connection import Connection, wait
from pathlib import Path

import numpy as np
import onnx
from rich.console import Console
from rich.table import Table
from xdsl.utils.exceptions import DiagnosticException, ParseError

import ziggurat  # noqa: F401  first: it sets OPENBLAS_NUM_THREADS=1 before numpy loads (100x faster npu.mma)
from ziggurat import numerics
from ziggurat.cli import parse_command_line, run_main, write_atomically
from ziggurat.context import default_context
from ziggurat.diagnostics import Diagnostic, DiagnosticError, did_you_mean, exception_message
from ziggurat.frontends.onnx import import_loaded_model, load_model
from ziggurat.frontends.onnx.reference_data import (
    graph_inputs,
    shipped_reference,
    with_random_weights,
)
from ziggurat.interpreters.interpreter import find_function, random_inputs
from ziggurat.lowering.precision import PRECISIONS, choose_precision
from ziggurat.machine import Machine, load_machine
from ziggurat.npz import restore_element_type
from ziggurat.testing.rounding_ties import (
    check_rounding,
    quantize_outputs,
    quantized_values,
    with_quantized_outputs,
)
from ziggurat.tools.ziggurat_compile import (
    lower,
    lowering_passes,
    run_at_emitted_level,
    run_onnxruntime,
)
from ziggurat.tuning.executors import check_cluster, make_executor

LIGHT_MODELS = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
RESULTS = Path(__file__).parent / "results"
REASON_CHARACTERS = 300
"""A failure's line in the printed table is cut there (a memory-planning error lists every live buffer);
the JSON has it whole."""
GRAPH_STAGES = ("import", "reference", "graph")
"""The stages before lowering: a failure there fails the graph level as well."""
DEFAULT_TIMEOUT = 1200.0
"""Seconds per model: the biggest light models take minutes to simulate on a busy 2-core machine."""


@dataclass
class ModelResult:
    """One model's way through the compiler. A verdict is None when unknown (the model was stopped
    for its time, or its worker died); a figure is None where the model did not get that far."""

    model: str
    graph_passed: bool | None = None
    npu_passed: bool | None = None
    max_abs: float | None = None
    """At the npu level, against the expected outputs (the largest over the outputs)."""
    max_rel: float | None = None
    graph_max_abs: float | None = None
    graph_precision_max_abs: float | None = None
    """The graph level in the type the npu code computes in (after graph-convert-float): the error that
    precision alone accounts for, before any lowering."""
    max_ref: float | None = None
    """The largest |expected output|, the scale of the errors."""
    cycles: float | None = None
    compile_seconds: float | None = None
    """Import and lowering to npu code."""
    graph_seconds: float | None = None
    simulate_seconds: float | None = None
    expected_from: str | None = None
    """"shipped" (the outputs beside the model) or "onnxruntime"."""
    computed_in: str | None = None
    """The float type the npu code computes in, when not the model's (graph-convert-float)."""
    failure: str | None = None
    """The first stage that failed, with the first line of its diagnostic."""
    rounding: str | None = None
    """A quantized model whose npu outputs differ from onnxruntime's: how the npu's integers differ from
    the ONNX definition, layer by layer (`ziggurat.testing.rounding_ties`)."""
    onnxruntime_rounding: str | None = None
    """The same for onnxruntime's integers."""

    def fail(self, stage: str, reason: str) -> None:
        """The model fails at the npu level, and at the graph level too when `stage` is one of
        GRAPH_STAGES; the first failure is the one kept, later stages may fail because of it."""
        if stage in GRAPH_STAGES:
            self.graph_passed = False
        self.npu_passed = False
        if self.failure is None:
            self.failure = f"{stage}: {reason}"


# --------------------------------------------------------------------------- #
# One model (in a worker process)
# --------------------------------------------------------------------------- #


class StageFailed(Exception):
    """A stage failed; its reason is in the model's result."""


def failure_reason(error: BaseException) -> str:
    """The first line of what ziggurat-compile would print for `error`."""
    if isinstance(error, DiagnosticError):
        return error.diagnostics[0].format().splitlines()[0]
    if isinstance(error, (DiagnosticException, ParseError)):
        return f"error: {exception_message(error)}"
    if isinstance(error, MemoryError):
        return "error: out of memory"
    context = "; ".join(note for note in getattr(error, "__notes__", []) if "\n" not in note)
    return f"internal error: {type(error).__name__}: {exception_message(error)}" + (
        f" ({context})" if context else ""
    )


@contextmanager
def stage(result: ModelResult, name: str, seconds: str | None = None) -> Iterator[None]:
    """One stage of `result`'s model: its wall time is added to the field `seconds`; an error is
    recorded as the model's failure and ends the stage with StageFailed."""
    start = time.perf_counter()
    try:
        yield
    except Exception as error:  # noqa: BLE001 - a failure is a row of the table, not a crash of the run
        result.fail(name, failure_reason(error))
        raise StageFailed from None
    finally:
        if seconds is not None:
            setattr(
                result, seconds, (getattr(result, seconds) or 0.0) + time.perf_counter() - start
            )


def compare_all(
    result: ModelResult,
    level: str,
    actual: Sequence[np.ndarray],
    expected: Sequence[np.ndarray],
    computed_in=None,
) -> tuple[bool, float, float]:
    """(passed, max abs, max rel) over the outputs, with ziggurat-compile --check's verdict."""
    pairs = enumerate(zip(actual, expected, strict=True))
    checks = [
        numerics.compare(a, e, name=f"output '#{i}'", computed_in=computed_in)
        for i, (a, e) in pairs
    ]
    if failed := next((c for c in checks if not c.ok), None):
        result.fail(level, f"{failed} (against the {result.expected_from} outputs)")
    return all(c.ok for c in checks), max(c.max_abs for c in checks), max(c.max_rel for c in checks)


def evaluate(path: Path, args: argparse.Namespace) -> ModelResult:
    """Import, run, compile and simulate one model, recording how far it got."""
    result = ModelResult(path.stem)
    with suppress(StageFailed):
        compile_and_simulate(result, path, args)
    return result


def compile_and_simulate(result: ModelResult, path: Path, args: argparse.Namespace) -> None:
    """`evaluate`'s stages in order; a failed stage raises StageFailed, except the graph level's."""
    machine = load_machine(args.machine)
    with stage(result, "import", "compile_seconds"):
        model, where = load_model(path)
        if args.random_weights:
            model = with_random_weights(model)
        module = import_loaded_model(model, {}, where)
    with stage(result, "reference"):
        if getattr(args, "corpus", None) is not None:
            inputs, expected = corpus_reference(result, path, model, module)
        else:
            inputs, expected = reference_data(
                result, None if args.random_weights else path, model, module
            )
        result.max_ref = max(float(np.abs(e).max()) for e in expected)
    # A model wrong at the graph level still goes on: its npu row tells whether lowering adds to it.
    with suppress(StageFailed), stage(result, "graph", "graph_seconds"):
        outputs = run_at_emitted_level(module, inputs, None).outputs
        result.graph_passed, result.graph_max_abs, _ = compare_all(
            result, "graph", outputs, expected
        )
    with stage(result, "compile", "compile_seconds"):
        precision = choose_precision(args.precision, machine, module, inputs)
        result.computed_in = precision.element_type
    if precision.element_type is not None:
        with suppress(StageFailed), stage(result, "graph-" + precision.element_type):
            converted = module.clone()
            lower(default_context(), converted, lowering_passes(args.machine, "graph", precision))
            outputs = run_at_emitted_level(converted, inputs, None).outputs
            pairs = enumerate(zip(outputs, expected, strict=True))
            computed_in = precision.dtype
            checks = [
                numerics.compare(a, e, name=f"output '#{i}'", computed_in=computed_in)
                for i, (a, e) in pairs
            ]
            result.graph_precision_max_abs = max(c.max_abs for c in checks)
    with stage(result, "compile", "compile_seconds"):
        lower(default_context(), module, lowering_passes(args.machine, "npu", precision))
    with stage(result, "simulate", "simulate_seconds"):
        run = run_at_emitted_level(module, inputs, machine, verified=True)
    result.cycles = run.stats.total_cycles
    with stage(result, "npu"):
        computed_in = precision.dtype
        result.npu_passed, result.max_abs, result.max_rel = compare_all(
            result, "npu", run.outputs, expected, computed_in
        )
    if not result.npu_passed and quantize_outputs(model):
        with stage(result, "rounding"):
            check_rounding_ties(result, model, where, inputs, run.outputs, precision, args, machine)


def check_rounding_ties(
    result: ModelResult,
    model,
    where,
    inputs,
    outputs,
    precision,
    args: argparse.Namespace,
    machine: Machine,
) -> None:
    """A quantized model whose npu outputs differ from onnxruntime's passes when its integers differ
    from the ONNX definition only at rounding ties (`ziggurat.testing.rounding_ties`): the model is
    compiled and simulated again with every QuantizeLinear's output an output too, and onnxruntime's
    integers are checked the same way (for the record: they show how the two round apart)."""
    names = [value.name for value in graph_inputs(model)]
    feeds = dict(zip(names, inputs, strict=True))
    # Dequantized: floats out of the npu code, the same layers in between as the model's.
    probe = with_quantized_outputs(model, dequantized=True)
    module = import_loaded_model(probe, {}, where)
    lower(default_context(), module, lowering_passes(args.machine, "npu", precision))
    probed = run_at_emitted_level(module, inputs, machine, verified=True).outputs
    npu = check_rounding(model, feeds, quantized_values(model, probed, dequantized=True), outputs)
    result.rounding = f"npu: {npu}"
    probe = with_quantized_outputs(model)
    reference = run_onnxruntime(probe, names, inputs)
    count = len(model.graph.output)
    onnxruntime = check_rounding(
        model, feeds, quantized_values(model, reference), reference[:count]
    )
    result.onnxruntime_rounding = f"onnxruntime: {onnxruntime}"
    if npu.ok:
        result.npu_passed, result.failure = True, None
    else:
        result.failure = f"rounding: {npu}"


def corpus_reference(
    result: ModelResult, path: Path, model: onnx.ModelProto, module
) -> tuple[list, list]:
    """A corpus model's stored input and onnxruntime's stored outputs (`<stem>.inputs.npz`, `.outputs.npz`)."""
    result.expected_from = "onnxruntime"
    function = find_function(module, "main")
    stored_inputs, stored_outputs = (
        np.load(path.with_suffix(f".{kind}.npz")) for kind in ("inputs", "outputs")
    )
    names = [value.name for value in graph_inputs(model)]
    arg_types = function.function_type.inputs.data
    inputs = [
        restore_element_type(stored_inputs[n], t) for n, t in zip(names, arg_types, strict=True)
    ]
    return inputs, [stored_outputs[output.name] for output in model.graph.output]


def reference_data(
    result: ModelResult, path: Path | None, model: onnx.ModelProto, module
) -> tuple[list, list]:
    """The inputs and expected outputs: shipped beside the model at `path`, else (or without a path)
    onnxruntime's on random inputs."""
    function = find_function(module, "main")
    names = [value.name for value in graph_inputs(model)]
    shipped = None if path is None else shipped_reference(path, model)
    if shipped is None:
        result.expected_from = "onnxruntime"
        inputs = random_inputs(function, seed=0)
        return inputs, run_onnxruntime(model, names, inputs)
    result.expected_from = "shipped"
    arg_types = function.function_type.inputs.data
    return [
        restore_element_type(shipped.inputs[n], t) for n, t in zip(names, arg_types, strict=True)
    ], shipped.outputs


def worker(path: Path, args: argparse.Namespace, connection: Connection) -> None:
    """A worker process's body: evaluate one model, send back its result."""
    # ziggurat-compile's spinners and progress bars would draw over each other from several workers.
    sys.stdout = sys.stderr = io.StringIO()
    connection.send(asdict(evaluate(path, args)))
    connection.close()


# --------------------------------------------------------------------------- #
# Scheduling the workers
# --------------------------------------------------------------------------- #


@dataclass
class Running:
    path: Path
    process: multiprocessing.Process
    connection: Connection
    deadline: float


def run_models(
    paths: Sequence[Path], args: argparse.Namespace, on_result: Callable[[ModelResult], None]
) -> list[ModelResult]:
    """Each model in its own process, `args.jobs` at a time; one past `args.timeout` seconds is killed."""
    # fork: the worker is a function of this script, which spawn could not import by name.
    context = multiprocessing.get_context("fork")
    pending, running, results = list(paths), [], {}
    while pending or running:
        while pending and len(running) < max(1, args.jobs or 1):
            path = pending.pop(0)
            receiving, sending = context.Pipe(duplex=False)
            # daemon: a worker is ended with the script when the script stops on an error
            process = context.Process(
                target=worker,
                args=(path, args, sending),
                name=f"conformance {path.stem}",
                daemon=True,
            )
            process.start()
            sending.close()
            running.append(Running(path, process, receiving, time.monotonic() + args.timeout))
        wait(
            [one.process.sentinel for one in running],
            timeout=max(0.0, min(r.deadline for r in running) - time.monotonic()),
        )
        for one in list(running):
            result = finished(one, args.timeout)
            if result is not None:
                running.remove(one)
                results[one.path] = result
                on_result(result)
    return [results[path] for path in paths]


def evaluate_task(task: tuple[Path, argparse.Namespace]) -> dict:
    """One model as an executor's task (`--cluster ray`): its result as a dict."""
    path, args = task
    # ziggurat-compile's spinners and progress bars would draw over each other from several workers.
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        return asdict(evaluate(path, args))


def run_models_on_cluster(
    paths: Sequence[Path], args: argparse.Namespace, on_result: Callable[[ModelResult], None]
) -> list[ModelResult]:
    """Each model as a task on the executor `args.cluster` names (`tuning/executors.py`),
    `args.jobs` at a time (default: the cluster's CPUs); one past `args.timeout` seconds, or whose
    worker is lost, is retried once, then a failed row."""
    results: dict[Path, ModelResult] = {}

    def done(task: tuple[Path, argparse.Namespace], sent: dict) -> None:
        results[task[0]] = ModelResult(**sent)
        on_result(results[task[0]])

    def failed(task: tuple[Path, argparse.Namespace], reason: str) -> None:
        kind = "timeout" if reason.startswith("timed out") else "crash"
        results[task[0]] = ModelResult(task[0].stem, failure=f"{kind}: {reason}")
        on_result(results[task[0]])

    executor = make_executor(args.cluster, args.jobs, args.timeout)
    try:
        executor.run(evaluate_task, [(path, args) for path in paths], done, failed)
    finally:
        executor.close()
    return [results[path] for path in paths]


def received(connection: Connection) -> dict | None:
    """What a worker sent, None while it has sent nothing (or died without a word: end of file)."""
    try:
        return connection.recv() if connection.poll() else None
    except EOFError:
        return None


def finished(one: Running, timeout: float) -> ModelResult | None:
    """The result of a worker that is done (or was killed for its time), None while it runs."""
    if (sent := received(one.connection)) is not None:
        result = ModelResult(**sent)
    elif one.process.is_alive():
        if time.monotonic() < one.deadline:
            return None
        one.process.kill()
        result = ModelResult(one.path.stem, failure=f"timeout: stopped after {timeout:g} s")
    else:
        status = one.process.exitcode
        ended = (
            f"by signal {signal.Signals(-status).name}" if status < 0 else f"with status {status}"
        )
        result = ModelResult(one.path.stem, failure=f"crash: the worker ended {ended}")
    one.process.join()
    one.connection.close()
    return result


# --------------------------------------------------------------------------- #
# Command line and table
# --------------------------------------------------------------------------- #


def select_models(names: str | None, data: Path) -> list[Path]:
    """Models by name (`squeezenet` or `light_squeezenet`) or path; all of `data`'s when `names` is None."""
    available = {path.stem: path for path in sorted(data.glob("light_*.onnx"))}
    if names is None:
        return list(available.values())
    paths = []
    for name in filter(None, (n.strip() for n in names.split(","))):
        path = (
            Path(name)
            if name.endswith(".onnx")
            else available.get(name, available.get(f"light_{name}"))
        )
        if path is None or not path.is_file():
            short = [stem.removeprefix("light_") for stem in available]
            raise DiagnosticError(
                Diagnostic(
                    "error",
                    f"no model '{name}' in {data}{did_you_mean(name.removeprefix('light_'), short)}",
                )
            )
        paths.append(path)
    return paths


def verdict(passed: bool | None) -> str:
    return "-" if passed is None else "pass" if passed else "FAIL"


def number(value: float | None, spec: str) -> str:
    return "" if value is None else format(value, spec)


def results_table(results: Sequence[ModelResult], machine: str) -> Table:
    table = Table(title=f"light models on {machine}", title_justify="left")
    for column in (
        "model",
        "graph",
        "npu",
        "max abs",
        "max rel",
        "cycles",
        "compile s",
        "simulate s",
    ):
        table.add_column(column, justify="left" if column == "model" else "right")
    for r in results:
        table.add_row(
            r.model.removeprefix("light_"),
            verdict(r.graph_passed),
            verdict(r.npu_passed),
            number(r.max_abs, ".3g"),
            number(r.max_rel, ".3g"),
            number(r.cycles, ",.0f"),
            number(r.compile_seconds, ".2f"),
            number(r.simulate_seconds, ".2f"),
        )
    return table


def shorten(text: str, limit: int = REASON_CHARACTERS) -> str:
    return text if len(text) <= limit else text[: limit - 4] + " ..."


def print_results(results: Sequence[ModelResult], report: dict, console: Console) -> None:
    """The table, the totals and the run's circumstances, then why each failing model failed."""
    machine, host = report["machine"], report["host"]
    console.print(results_table(results, machine))
    graph, npu = (
        sum(bool(getattr(r, level)) for r in results) for level in ("graph_passed", "npu_passed")
    )
    console.print(
        f"{npu} of {len(results)} pass end to end on {machine} ({graph} at the graph level)",
        highlight=False,
    )
    console.print(
        f"run {report['date']} on {host['cpus']} cores ({host['processor']}), --precision {report['precision']}, "
        f"{'--random-weights, ' if report['random_weights'] else ''}--jobs {report['jobs']}, "
        f"{report['total_seconds']:.0f} s in all",
        highlight=False,
    )
    for r in results:
        if r.failure is not None:
            console.print(
                f"{r.model.removeprefix('light_')}: {shorten(r.failure)}",
                highlight=False,
                soft_wrap=True,
            )


def build_argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--models", metavar="A,B", help="models by name (squeezenet) or .onnx path (default: all)"
    )
    parser.add_argument(
        "--data", type=Path, default=LIGHT_MODELS, help="the folder of light_*.onnx models"
    )
    parser.add_argument(
        "--machine", default="davinci", help="machine preset or file (default: davinci)"
    )
    parser.add_argument(
        "--precision",
        choices=PRECISIONS,
        default="auto",
        help="float type to compute in, as ziggurat-compile's --precision (default: auto, bf16 on davinci)",
    )
    parser.add_argument(
        "--random-weights",
        action="store_true",
        help="replace each model's constant weight fills by seeded random values and compare with onnxruntime "
        "on random inputs (checks every layer's arithmetic; the shipped outputs do not)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        help="models run at once, each in its own process (default: 1; with --cluster ray, the cluster's CPUs)",
    )
    parser.add_argument(
        "--cluster",
        metavar="WHERE",
        help="where the models run: local (default: processes of this machine), ray (RAY_ADDRESS, else a local "
        "Ray instance), ray://HOST:PORT; on Ray the model files must be at the same paths on the workers",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT,
        help=f"seconds per model (default: {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=RESULTS / "conformance.json",
        help="the JSON results (default: %(default)s)",
    )
    corpus = parser.add_argument_group("the model corpus (examples/models/corpus.py)")
    corpus.add_argument(
        "--corpus",
        type=Path,
        metavar="DIR",
        help="run the corpus models in DIR (generated there at full size when it has none) on every machine of "
        "--machine A,B, against their stored onnxruntime outputs; writes a markdown table to --table",
    )
    corpus.add_argument(
        "--torch-python",
        default="python3",
        metavar="PY",
        help="a Python with torch, onnxscript and onnxruntime to generate the corpus (default: %(default)s)",
    )
    corpus.add_argument(
        "--table",
        type=Path,
        default=RESULTS / "corpus.md",
        help="the corpus's markdown table, its JSON beside it (default: %(default)s)",
    )
    return parser


CORPUS_GENERATOR = Path(__file__).parent.parent / "examples" / "models" / "corpus.py"


def generates_corpus(python: str) -> bool:
    """Whether `python` has what `CORPUS_GENERATOR` needs: torch, onnxscript and onnxruntime."""
    probe = subprocess.run(
        [python, "-c", "import torch, onnxscript, onnxruntime"], capture_output=True
    )
    return probe.returncode == 0


def corpus_models(args: argparse.Namespace) -> list[Path]:
    """The corpus's models, generated first (full size) when the folder has none."""
    paths = sorted(args.corpus.glob("*.onnx"))
    if not paths:
        if not generates_corpus(args.torch_python):
            raise DiagnosticError(
                Diagnostic(
                    "error",
                    f"no models in {args.corpus}, and {args.torch_python} cannot import torch to generate them; "
                    "make one that can: python3 -m venv /tmp/torchvenv && /tmp/torchvenv/bin/pip install torch==2.13.0 "
                    "onnx onnxruntime onnxscript numpy, then pass --torch-python /tmp/torchvenv/bin/python "
                    "(make conformance TORCH_PYTHON=/tmp/torchvenv/bin/python)",
                )
            )
        print(
            f"generating the corpus into {args.corpus} ({CORPUS_GENERATOR.name} --size full)",
            file=sys.stderr,
        )
        subprocess.run(
            [args.torch_python, str(CORPUS_GENERATOR), str(args.corpus), "--size", "full"],
            check=True,
        )
        paths = sorted(args.corpus.glob("*.onnx"))
    if args.models is None:
        return paths
    by_name = {path.stem: path for path in paths}
    chosen = [n.strip() for n in args.models.split(",") if n.strip()]
    if unknown := [n for n in chosen if n not in by_name]:
        near = did_you_mean(unknown[0], list(by_name))
        raise DiagnosticError(
            Diagnostic("error", f"no model '{unknown[0]}' in {args.corpus}{near}")
        )
    return [by_name[n] for n in chosen]


def corpus_table(rows: Sequence[tuple[str, ModelResult]]) -> str:
    """The markdown table of docs/conformance.md's "Corpus models": one row per model and machine."""
    lines = [
        "| model | machine | graph f32 max abs | computes in | graph max abs at that type | npu "
        "| npu max abs / max abs ref | cycles | compile s | simulate s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for machine, r in rows:
        if r.npu_passed:
            npu = "pass (ties)" if r.rounding else "pass"
        elif r.max_abs is not None:
            npu = "FAIL (beyond the tolerance)"
        elif r.failure is None:
            npu = "-"
        else:
            npu = shorten(r.failure, 160).replace("|", "\\|")
        ratio = "" if r.max_abs is None or not r.max_ref else f"{r.max_abs:.3g} / {r.max_ref:.3g}"
        lines.append(
            f"| {r.model} | {machine} | {number(r.graph_max_abs, '.2g')} | {r.computed_in or 'model'} "
            f"| {number(r.graph_precision_max_abs, '.3g')} | {npu} | {ratio} | {number(r.cycles, ',.0f')} "
            f"| {number(r.compile_seconds, '.1f')} | {number(r.simulate_seconds, '.1f')} |"
        )
    notes = [
        f"- {r.model} on {machine}: {r.rounding}; {r.onnxruntime_rounding}."
        for machine, r in rows
        if r.rounding
    ]
    return "\n".join([*lines, *([""] + notes if notes else [])]) + "\n"


def corpus_main(args: argparse.Namespace) -> int:
    """`--corpus DIR`: every corpus model on every machine of `--machine A,B`; the markdown table to `--table`."""
    paths = corpus_models(args)
    machines = [m.strip() for m in args.machine.split(",") if m.strip()]
    for machine in machines:
        load_machine(machine)
    progress = Console(stderr=True)
    rows, start = [], time.perf_counter()
    for machine in machines:
        machine_args = argparse.Namespace(**{**vars(args), "machine": machine})
        results = run_models(
            paths,
            machine_args,
            lambda r, machine_args=machine_args: progress.print(
                f"{r.model} on {machine_args.machine}: graph {verdict(r.graph_passed)}, "
                f"npu {verdict(r.npu_passed)}",
                highlight=False,
            ),
        )
        rows += [(machine, r) for r in results]
    table = corpus_table(rows)
    print(table)
    report = {
        "machines": machines,
        "corpus": str(args.corpus),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "host": {"cpus": os.cpu_count(), "processor": platform.processor() or platform.machine()},
        "precision": args.precision,
        "timeout_seconds": args.timeout,
        "total_seconds": time.perf_counter() - start,
        "models": [{"machine": machine, **asdict(r)} for machine, r in rows],
    }
    args.table.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(args.table, table)
    write_atomically(args.table.with_suffix(".json"), json.dumps(report, indent=2) + "\n")
    return 0 if all(r.npu_passed for _, r in rows) else 1


def main(argv: list[str] | None = None) -> int:
    args = parse_command_line(build_argument_parser(), argv)
    if args.corpus is not None:
        return corpus_main(args)
    paths = select_models(args.models, args.data)
    load_machine(args.machine)  # a bad machine is one error here, not one per model
    console = Console(width=None if sys.stdout.isatty() else 160)
    progress = Console(stderr=True)
    start = time.perf_counter()
    check_cluster(args.cluster)
    run = run_models if args.cluster in (None, "local") else run_models_on_cluster
    results = run(
        paths,
        args,
        lambda r: progress.print(
            f"{r.model}: graph {verdict(r.graph_passed)}, npu {verdict(r.npu_passed)}",
            highlight=False,
        ),
    )
    report = {
        "machine": args.machine,
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "host": {"cpus": os.cpu_count(), "processor": platform.processor() or platform.machine()},
        "precision": args.precision,
        "random_weights": args.random_weights,
        "jobs": args.jobs or 1,
        "timeout_seconds": args.timeout,
        "total_seconds": time.perf_counter() - start,
        "models": [asdict(r) for r in results],
    }
    print_results(results, report, console)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(args.output, json.dumps(report, indent=2) + "\n")
    return 0 if all(r.npu_passed for r in results) else 1


if __name__ == "__main__":
    run_main(main)
