"""`ziggurat-compile MODEL.onnx`: import an ONNX model, optimize it, lower it for a machine, and run it or
check it against onnxruntime, all in one process on in-memory IR.

    ziggurat-compile model.onnx                           # graph-level IR on stdout
    ziggurat-compile model.onnx --check                   # against onnxruntime, exit 1 on a mismatch
    ziggurat-compile model.onnx --machine davinci -o model.npu.mlir       # down to npu instructions
    ziggurat-compile model.onnx --machine davinci --run --check --report text --trace t.json

With `--machine` the `compile{machine=M}` pipeline (docs/lowering.md) runs down to the `--emit` level,
in a narrower float type where the machine's matrix unit lacks the model's
(`ziggurat.lowering.precision.choose_precision`).
`--check` compares each output with onnxruntime's and with the outputs the model ships, under
`ziggurat.numerics.tolerance_for` (docs/onnx.md, "Checking against the ONNX definition").
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from rich.console import Console
from rich.progress import Progress
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ziggurat import numerics
from ziggurat.cli import (
    add_debug_option,
    check_cores_option,
    parse_command_line,
    run_main,
    running_pass,
    write_atomically,
)
from ziggurat.context import default_context, multiverse
from ziggurat.diagnostics import Diagnostic, DiagnosticError
from ziggurat.frontends.onnx import import_loaded_model, load_model, parse_input_shape
from ziggurat.frontends.onnx.reference_data import shipped_reference
from ziggurat.interpreters.interpreter import find_function, random_inputs
from ziggurat.interpreters.npu_interpreter import run_npu
from ziggurat.interpreters.report import build_report, format_report
from ziggurat.interpreters.timing import TimingStats
from ziggurat.interpreters.trace import trace_events
from ziggurat.lowering.kernels import KernelCache, NotKernels, lower_to_kernels, printed
from ziggurat.lowering.precision import (
    PRECISIONS,
    Precision,
    cached_precision,
    choose_precision,
)
from ziggurat.machine import Machine, load_machine
from ziggurat.npz import candidate_keys, npz_bytes, read_npz, restore_element_type
from ziggurat.testing.differential import build_passes, input_names, level_of, run_at_level
from ziggurat.timing_report import add_timing_option, timed, timing
from ziggurat.tools.ziggurat_run import summarize
from ziggurat.tools.ziggurat_tune import tune_module, tuning_point
from ziggurat.transforms.tile.fit import apply_passes
from ziggurat.tuning.executors import check_cluster
from ziggurat.tuning.tuner import TuneOptions
from ziggurat.verifier import verify_module

GRAPH_PIPELINE = ("graph-fold-constants", "graph-canonicalize", "cse", "dce")
"""`--opt`: the graph-level passes, in order."""

EMIT_LEVELS = ("graph", "tile", "loop", "npu")
NEXT_LEVEL_STARTS = {"graph": "graph-to-tile", "tile": "tile-to-loop", "loop": "loop-to-npu"}
"""`--emit L` runs the compile pipeline up to (not including) the first pass of the level after L."""


def parse_binding(text: str) -> tuple[str, np.ndarray]:
    """`name=1,2,3` (a 1-D array; `name=` is empty) or `name=value.npy` as (name, array)."""
    name, sep, values = text.partition("=")
    if not sep or not name:
        raise DiagnosticError(
            Diagnostic(
                "error",
                f"invalid --bind '{text}': expected NAME=VALUES, e.g. axes=0,2 or shape=shape.npy",
            )
        )
    if values.endswith(".npy"):
        try:
            return name, np.load(values, allow_pickle=False)
        except (OSError, ValueError) as error:
            raise DiagnosticError(
                Diagnostic("error", f"cannot read --bind {name}: {error}", file=values)
            ) from None
    items = [item.strip() for item in values.split(",")] if values.strip() else []
    try:
        return name, np.array([int(item) for item in items], dtype=np.int64)
    except ValueError:
        pass
    try:
        return name, np.array([float(item) for item in items])
    except ValueError:
        raise DiagnosticError(
            Diagnostic(
                "error",
                f"invalid --bind '{text}': VALUES must be comma-separated numbers or a .npy file",
            )
        ) from None


def build_argument_parser() -> argparse.ArgumentParser:
    """The command line, in groups that the lowering options (--machine, --report, --trace) will join."""
    parser = argparse.ArgumentParser(
        prog="ziggurat-compile",
        description="Import an ONNX model into ziggurat's graph dialect, optimize it, run it or check it.",
    )
    parser.add_argument("model", metavar="MODEL.onnx", help="the ONNX model")

    model = parser.add_argument_group("model")
    model.add_argument(
        "--input-shape",
        metavar="NAME=DIMS",
        action="append",
        default=[],
        help="static shape of an input, e.g. x=1x3x224x224 (repeatable; needed for dynamic dimensions)",
    )
    model.add_argument(
        "--bind",
        metavar="NAME=VALUES",
        action="append",
        default=[],
        help="give input NAME a fixed value, comma-separated (e.g. axes=0,2) or from a .npy file: it becomes "
        "a constant, as inputs that decide shapes (a Reshape's target, a Slice's starts) must be (repeatable)",
    )

    compilation = parser.add_argument_group("compilation")
    compilation.add_argument(
        "--machine",
        metavar="NAME|FILE",
        help="lower for this machine (a preset such as davinci, or a machine TOML file)",
    )
    compilation.add_argument(
        "--emit",
        choices=EMIT_LEVELS,
        help="the IR level to produce (default: npu with --machine, else graph; tile, loop and npu need --machine)",
    )
    compilation.add_argument(
        "--precision",
        choices=PRECISIONS,
        default="auto",
        help="float type to compute in with --machine: auto (when the matrix unit has no instruction "
        "for the model's float convolutions and matrix products: f16, and bf16 for the ops whose "
        "values in a calibration run on the inputs come near f16's largest), model (as the model "
        "says), f16 or bf16",
    )
    compilation.add_argument(
        "--cores",
        type=int,
        default=None,
        metavar="N",
        help="with --machine: divide each layer's tiles among N cores of the machine "
        "(loop-distribute) and run on N cores (default: every core the machine has for --emit "
        "npu, else 1); --tune measures each schedule on as many",
    )
    compilation.add_argument(
        "--kernels",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="npu code as kernels (the default with --emit npu): each fusion group lowered on its "
        "own, as a kernel that @main calls, groups that differ only in their weights sharing one "
        "(docs/lowering.md, Kernels); --no-kernels lowers @main whole, as `compile{machine=M}` does",
    )
    compilation.add_argument(
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="lower the distinct kernels of npu code in N processes (default: one per CPU); "
        "the IR does not depend on N",
    )
    compilation.add_argument(
        "--kernel-cache",
        metavar="DIR",
        type=Path,
        help="read the kernels of npu code from DIR and write new ones there, so that "
        "compiling the model again, or another with the same layers, lowers only what is new",
    )
    compilation.add_argument(
        "--opt",
        action="store_true",
        help=f"run the graph optimizations: {','.join(GRAPH_PIPELINE)}",
    )
    compilation.add_argument(
        "--tune",
        nargs="?",
        const="",
        metavar="CACHE.json",
        help="with --machine: tune each fusion group's tile sizes on the machine model first (ziggurat-tune), "
        "keeping the results in CACHE.json if given",
    )
    compilation.add_argument(
        "--cluster",
        metavar="WHERE",
        help="with --tune: where the measurements run, as ziggurat-tune's --cluster (local, ray, ray://HOST:PORT)",
    )
    compilation.add_argument(
        "-o", "--output", metavar="FILE", type=Path, help="write the IR to FILE"
    )

    running = parser.add_argument_group("running")
    running.add_argument("--run", action="store_true", help="run @main at the emitted level")
    running.add_argument(
        "--check",
        action="store_true",
        help="run at the emitted level and on onnxruntime and compare each output (exit 1 on a mismatch)",
    )
    running.add_argument(
        "--report",
        choices=("text", "json"),
        help="with npu code: print what the run cost on the machine, with the cycles of each layer",
    )
    running.add_argument(
        "--trace", metavar="FILE", type=Path, help="with npu code: write a Perfetto trace"
    )
    running.add_argument(
        "--inputs", metavar="NPZ", type=Path, help="inputs keyed by ONNX input name, argN or arr_N"
    )
    running.add_argument(
        "--seed", type=int, default=0, help="seed of the random inputs (default: 0)"
    )
    running.add_argument(
        "--outputs",
        metavar="NPZ",
        type=Path,
        help="write ziggurat's results, keyed by ONNX output name",
    )
    add_timing_option(parser)
    add_debug_option(parser)
    return parser


# --------------------------------------------------------------------------- #
# Progress
# --------------------------------------------------------------------------- #

_STDERR = Console(stderr=True)


@contextmanager
def stage(message: str) -> Iterator[None]:
    """A spinner with `message` while the stage runs, only when stderr is a terminal."""
    with _STDERR.status(message) if _STDERR.is_terminal else nullcontext():
        yield


@contextmanager
def counted_stage(message: str) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar fed by the yielded `update(done, total)`, or None when stderr is not a terminal."""
    if not _STDERR.is_terminal:
        yield None
        return
    with Progress(*Progress.get_default_columns(), console=_STDERR, transient=True) as progress:
        task = progress.add_task(message, total=None)
        yield lambda done, total: progress.update(task, completed=done, total=total)


# --------------------------------------------------------------------------- #
# Stages
# --------------------------------------------------------------------------- #


def optimize(ctx: Context, module: ModuleOp) -> None:
    """The graph-level optimization pipeline, in process."""
    available = multiverse().all_passes
    for name in GRAPH_PIPELINE:
        with running_pass(name), timed(name):
            available[name]()().apply(ctx, module)
    with timed("verify"):
        verify_module(module)


ONNXRUNTIME_REFERENCE = "onnxruntime (graph optimizations off: the ONNX definition)"


def run_onnxruntime(model, names: Sequence[str], inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The model's outputs on onnxruntime with its graph optimizations disabled.

    With them on, onnxruntime rewrites QDQ patterns into its fused integer kernels, which
    saturate intermediate values and so differ from the ONNX definition; with them off it
    computes each node as the specification says.
    """
    try:
        import onnxruntime
    except ImportError:
        raise DiagnosticError(
            Diagnostic(
                "error",
                "onnxruntime is not installed (pip install onnxruntime): it is needed to check against it",
            )
        ) from None

    def run(serialized: bytes) -> list[np.ndarray]:
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
        session = onnxruntime.InferenceSession(
            serialized, options, providers=["CPUExecutionProvider"]
        )
        return list(session.run(None, dict(zip(names, inputs))))

    try:
        try:
            return run(model.SerializeToString())
        except Exception as error:  # noqa: BLE001 - onnxruntime raises its own untyped failures
            # The onnx package writes the newest IR version, which onnxruntime may not read yet;
            # the model only needs the IR version its opsets came with.
            oldest = onnx.helper.find_min_ir_version_for(list(model.opset_import))
            if "Unsupported model IR version" not in str(error) or oldest >= model.ir_version:
                raise
            declared = model.ir_version
            model.ir_version = oldest
            try:
                return run(model.SerializeToString())
            finally:
                model.ir_version = declared
    except Exception as error:  # noqa: BLE001
        raise DiagnosticError(
            Diagnostic(
                "error", f"onnxruntime cannot run the model: {str(error).strip().splitlines()[0]}"
            )
        ) from None


def print_checks(
    names: Sequence[str],
    ours: Sequence[np.ndarray],
    reference: Sequence[np.ndarray],
    computed_in: np.dtype | None = None,
) -> bool:
    """`ziggurat.numerics.compare` each output, print one line per output (max abs error, bound,
    verdict); True if all pass."""
    checks = [
        numerics.compare(actual, expected, name=f"output '{name}'", computed_in=computed_in)
        for name, actual, expected in zip(names, ours, reference)
    ]
    for check in checks:
        print(check)
    return all(check.ok for check in checks)


def _write(path: Path, data: str | bytes, what: str) -> None:
    try:
        write_atomically(path, data)
    except OSError as error:
        raise DiagnosticError(
            Diagnostic("error", f"cannot write the {what}: {error}", file=str(path))
        ) from None


# --------------------------------------------------------------------------- #
# Driver
# --------------------------------------------------------------------------- #


def lowering_passes(
    machine: str, emit: str, precision: Precision | str | None, cores: int = 1
) -> tuple[ModulePass, ...]:
    """The passes from the graph level down to `emit` for `machine` (its work divided among
    `cores` cores), in order."""
    spread = "" if cores == 1 else f" cores={cores}"
    passes = build_passes(f"compile{{machine={json.dumps(machine)}{spread}}}")
    if isinstance(precision, Precision):
        precision = precision.element_type
    if precision is not None:
        # A QDQ model's convolutions become integer first, so that narrowing leaves their
        # requantization to the type it computes in (`graph-opt`'s own run then finds none).
        passes = (
            *build_passes(
                f"graph-integer-qdq{{machine={json.dumps(machine)}}},"
                f"graph-convert-float{{target={precision}}}"
            ),
            *passes,
        )
    stop = NEXT_LEVEL_STARTS.get(emit)
    if stop is not None:
        passes = passes[: next(i for i, one in enumerate(passes) if one.name == stop)]
    return passes


def lower(ctx: Context, module: ModuleOp, passes: Sequence[ModulePass]) -> None:
    """Apply `passes` in process, with a progress bar naming the pass that runs."""
    with counted_stage("lowering") as progress:

        def run(index: int, one: ModulePass) -> None:
            if progress is not None:
                progress(index, len(passes))
            with running_pass(one.name), timed(one.name):
                one.apply(ctx, module)

        apply_passes(
            ctx, module, passes, run
        )  # retries a group whose buffers do not fit with smaller tiles
    with timed("verify"):
        verify_module(module)


@dataclass
class RunResult:
    outputs: list[np.ndarray]
    stats: TimingStats | None = None
    """What the run cost on the machine, for npu code."""


def run_at_emitted_level(
    module: ModuleOp,
    inputs: list[np.ndarray],
    machine: Machine | None,
    cores: int = 1,
    verified: bool = False,
) -> RunResult:
    """Run @main at the level the module is at; `verified`: the caller just verified the module
    (`lower` does), so npu code is not verified again (seconds for a network)."""
    function = find_function(module, "main")
    level = level_of(module, function)
    if level == "npu":
        with stage(f"running on {machine.name}"), timed("run"):
            result = run_npu(
                module,
                machine,
                dict(zip(input_names(function), inputs)),
                "main",
                cores=cores,
                verify=not verified,
            )
        return RunResult(result.outputs, result.stats)
    with stage(f"running at the {level} level"), timed("run"):
        return RunResult(run_at_level(module, inputs, "main"))


def report_run(args: argparse.Namespace, stats: TimingStats, machine: Machine) -> None:
    if args.trace is not None:
        with timed("trace"):
            _write(args.trace, json.dumps(trace_events(stats)), "trace")
    if args.report is None:
        return
    with timed("report"):
        report = build_report(stats, machine, layers=True)
        print(json.dumps(report, indent=2) if args.report == "json" else format_report(report))


def runs_model(args: argparse.Namespace) -> bool:
    """Whether the command runs the compiled model (`--run`, `--check`, `--report`, `--trace`)."""
    return args.run or args.check or args.report is not None or args.trace is not None


def check_options(args: argparse.Namespace, emit: str) -> None:
    if args.tune is not None and args.machine is None:
        raise DiagnosticError(
            Diagnostic("error", "--tune tunes for a machine: give --machine NAME")
        )
    check_cluster(args.cluster)
    if args.cluster is not None and args.tune is None:
        raise DiagnosticError(
            Diagnostic("error", "--cluster says where --tune measures: give --tune")
        )
    if emit != "graph" and args.machine is None:
        raise DiagnosticError(
            Diagnostic("error", f"--emit {emit} lowers for a machine: give --machine NAME")
        )
    if args.kernels and emit != "npu":
        raise DiagnosticError(
            Diagnostic("error", "--kernels lowers to npu kernels: give --machine (and --emit npu)")
        )
    if (args.jobs is not None or args.kernel_cache is not None) and (
        args.kernels is False or emit != "npu"
    ):
        raise DiagnosticError(
            Diagnostic(
                "error",
                "--jobs and --kernel-cache say how npu kernels are lowered: give --machine, "
                "without --no-kernels",
            )
        )
    if args.jobs is not None and args.jobs < 1:
        raise DiagnosticError(Diagnostic("error", f"--jobs takes a count >= 1, got {args.jobs}"))
    if (args.report or args.trace) and emit != "npu":
        raise DiagnosticError(
            Diagnostic(
                "error",
                "--report and --trace describe a run on the machine: give --machine (and --emit npu)",
            )
        )
    running = runs_model(args)
    if args.cores is not None and args.cores > 1 and emit != "npu" and running:
        raise DiagnosticError(
            Diagnostic(
                "error",
                f"--cores {args.cores} runs npu code on {args.cores} cores; the {emit} level runs "
                "as one program: give --emit npu (or --cores 1)",
            )
        )


def compile_model(args: argparse.Namespace) -> int:
    emit = args.emit or ("npu" if args.machine else "graph")
    check_options(args, emit)
    running = runs_model(args)
    machine = load_machine(args.machine) if args.machine else None
    if args.cores is not None and machine is not None:
        check_cores_option(args.cores, machine.name, machine.cores)
    if args.cores is None:
        # npu code fills the chip, as a GPU compiler fills its grid; the levels above it run as
        # one program on their interpreters
        whole_chip = machine is not None and emit == "npu"
        args.cores = machine.cores if whole_chip else 1
    input_shapes = dict(parse_input_shape(text) for text in args.input_shape)
    bound = dict(parse_binding(text) for text in args.bind)
    with stage(f"loading {Path(args.model).name}"), timed("load"):
        model, where = load_model(args.model)
    if args.inputs is not None:
        input_shapes = shapes_from_inputs(model, args.inputs, input_shapes, bound)
    with counted_stage(f"importing {Path(args.model).name}") as on_node, timed("import"):
        module = import_loaded_model(model, input_shapes, where, on_node, bound_inputs=bound)
    ctx = default_context()
    if args.opt:
        with stage("optimizing"):
            optimize(ctx, module)

    initializers = {tensor.name for tensor in model.graph.initializer}
    all_inputs = [value.name for value in model.graph.input if value.name not in initializers]
    onnx_inputs = [name for name in all_inputs if name not in bound]
    output_names = [value.name for value in model.graph.output]
    graph_function: func.FuncOp = find_function(module, "main")
    result_types = list(graph_function.function_type.outputs.data)
    inputs = []
    shipped = shipped_reference(Path(args.model), model) if running and not args.inputs else None
    # `--precision auto` calibrates on the inputs the model runs on, or on --run's random ones.
    if running or (machine is not None and args.precision == "auto"):
        arg_types = graph_function.function_type.inputs.data
        with timed("inputs"):
            if args.inputs:
                inputs = list(numerics.load_inputs(args.inputs, onnx_inputs, arg_types).values())
            elif shipped is not None:
                inputs = [
                    restore_element_type(shipped.inputs[n], t)
                    for n, t in zip(onnx_inputs, arg_types, strict=True)
                ]
            else:
                inputs = random_inputs(graph_function, args.seed)
    precision = Precision(None, "no machine")
    program = None
    if machine is not None:
        with stage("choosing the precision"), timed("choose-precision"):
            if args.kernel_cache is not None:
                precision = cached_precision(
                    args.precision,
                    machine,
                    module,
                    inputs,
                    KernelCache(args.kernel_cache),
                    model_digest(Path(args.model), input_shapes, bound),
                )
            else:
                precision = choose_precision(args.precision, machine, module, inputs)
        if args.precision == "auto" and precision.element_type is not None:
            print(
                f"note: computing in {precision.element_type}: {precision.reason}", file=sys.stderr
            )
        with timed("pipeline"):
            passes = lowering_passes(args.machine, emit, precision, args.cores)
        if args.tune is not None:
            split = tuning_point(passes)
            lower(ctx, module, passes[:split])
            options = TuneOptions(jobs=os.cpu_count() or 1, task_timeout=600.0, cores=args.cores)
            with timed("tune"):
                tune_module(
                    module,
                    args.machine,
                    options,
                    Path(args.tune) if args.tune else None,
                    args.cluster,
                )
            passes = passes[split:]
        if args.kernels is not False and emit == "npu":
            at = next(i for i, one in enumerate(passes) if one.name == "graph-to-tile")
            lower(ctx, module, passes[:at])
            try:
                with counted_stage("lowering kernels"), timed("kernels"):
                    program = lower_to_kernels(
                        module,
                        passes[at:],
                        machine,
                        jobs=args.jobs or os.cpu_count() or 1,
                        cache=KernelCache(args.kernel_cache),
                    )
            except NotKernels as error:
                if args.kernels:
                    raise
                # the default: a model kernels cannot express is lowered whole
                print(
                    f"note: {error.diagnostics[0].message}; lowering @main whole", file=sys.stderr
                )
                lower(ctx, module, passes[at:])
        else:
            lower(ctx, module, passes)

    if args.output is not None or not running:
        with timed("print"):
            text = program.text() if program is not None else printed(module)
        if args.output is not None:
            with timed("write"):
                _write(args.output, text + "\n", "IR")
        else:
            print(text)
    if not running:
        return 0
    if program is not None:
        with timed("assemble"):
            module = program.module(ctx)

    run = run_at_emitted_level(module, inputs, machine, args.cores, verified=True)  # by `lower`
    results = run.outputs
    if args.outputs is not None:
        with timed("write"):
            _write(args.outputs, npz_bytes(dict(zip(output_names, results))), "outputs")
    if run.stats is not None:
        report_run(args, run.stats, machine)

    if not args.check:
        if args.outputs is None and args.report is None:
            for name, array, result_type in zip(output_names, results, result_types):
                print(summarize(name, result_type, array))
        return 0
    references = []
    with stage("running onnxruntime"), timed("onnxruntime"):
        bound_values = [
            bound_value(model, name, bound[name]) for name in all_inputs if name in bound
        ]
        ordered = dict(zip(onnx_inputs, inputs)) | dict(
            zip([n for n in all_inputs if n in bound], bound_values)
        )
        try:
            references.append(
                (
                    ONNXRUNTIME_REFERENCE,
                    run_onnxruntime(model, all_inputs, [ordered[n] for n in all_inputs]),
                )
            )
        except DiagnosticError as error:
            if shipped is None:
                raise
            # The shipped outputs are a reference of their own: say why onnxruntime is missing and go on.
            print(
                f"note: {error.diagnostics[0].message}; comparing with the shipped outputs only",
                file=sys.stderr,
            )
    computed_in = precision.dtype
    if shipped is not None:
        references.append(
            (f"the expected outputs shipped with the model ({shipped.source})", shipped.outputs)
        )
    failed = []
    with timed("compare"):
        for against, expected in references:
            print(f"against {against}:")
            if not print_checks(output_names, results, expected, computed_in):
                failed.append(against)
    if not failed:
        print(
            f"check passed: {len(results)} output(s) match {' and '.join(a for a, _ in references)}"
        )
        return 0
    print(
        f"error: check failed: ziggurat and {' and '.join(failed)} differ beyond the tolerance",
        file=sys.stderr,
    )
    return 1


def model_digest(
    path: Path, input_shapes: dict[str, tuple[int, ...]], bound: dict[str, np.ndarray]
) -> str:
    """A hash of the model file and of how it is imported (input shapes, bound inputs): the
    compile cache's key for what is decided on the whole model."""
    digest = hashlib.sha256(path.read_bytes())
    digest.update(repr(sorted(input_shapes.items())).encode())
    for name, array in sorted(bound.items()):
        digest.update(f"{name}{array.dtype}{array.shape}".encode())
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def shapes_from_inputs(
    model: onnx.ModelProto,
    path: Path,
    input_shapes: dict[str, tuple[int, ...]],
    bound: dict[str, np.ndarray],
) -> dict[str, tuple[int, ...]]:
    """`input_shapes` completed with the shapes of the `--inputs` arrays for inputs with dynamic dimensions
    (an explicit --input-shape wins; a wrong rank or size is reported by the import or by
    `ziggurat.numerics.load_inputs`)."""
    arrays = read_npz(path)
    initializers = {tensor.name for tensor in model.graph.initializer}
    inputs = [v for v in model.graph.input if v.name not in initializers and v.name not in bound]
    shapes = dict(input_shapes)
    for index, value in enumerate(inputs):
        dims = (
            value.type.tensor_type.shape.dim if value.type.tensor_type.HasField("shape") else None
        )
        if value.name in shapes or (
            dims is not None and all(d.HasField("dim_value") for d in dims)
        ):
            continue
        found = [key for key in candidate_keys(value.name, index) if key in arrays]
        if len(found) == 1:
            shapes[value.name] = tuple(arrays[found[0]].shape)
    return shapes


def bound_value(model: onnx.ModelProto, name: str, array: np.ndarray) -> np.ndarray:
    """A `--bind` value in the input's declared element type (as the importer made it), for onnxruntime."""
    (value,) = [v for v in model.graph.input if v.name == name]
    return array.astype(onnx.helper.tensor_dtype_to_np_dtype(value.type.tensor_type.elem_type))


def parse_arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    return parse_command_line(build_argument_parser(), argv)


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point."""

    def compile_timed() -> int:
        args = parse_arguments(argv)
        with timing(args.timing):
            return compile_model(args)

    run_main(compile_timed)


if __name__ == "__main__":
    main()
