"""`ziggurat-run FILE`: run the entry function of an IR file on the interpreter of its level, and show
its results or, on the machine model, what the run cost.

    ziggurat-run model.mlir                          # random inputs (seed 0), summary of each result
    ziggurat-run model.mlir --inputs in.npz --outputs out.npz
    ziggurat-run kernel.mlir --machine davinci --report text --trace trace.json

A module holding an `npu` op runs on the machine model (`run_npu`), loop-level IR on the loop
interpreter, anything else on the reference interpreter (`run_function`). `--save-inputs` and
`--expect` check lowered IR against the graph level (docs/testing.md):

    ziggurat-run model.mlir --save-inputs in.npz --outputs ref.npz
    ziggurat-opt model.mlir -p 'lower-to-npu{machine=davinci}' | ziggurat-run - --inputs in.npz --expect ref.npz
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp, StringAttr, TensorType
from xdsl.ir import Operation

from ziggurat import numerics
from ziggurat.cli import add_debug_option, parse_command_line, run_main, write_atomically
from ziggurat.context import default_context
from ziggurat.diagnostics import Diagnostic, DiagnosticError, error_at
from ziggurat.interpreters.interpreter import (
    argument_names,
    find_function,
    random_inputs,
    run_function,
)
from ziggurat.npz import npz_bytes, npz_error, read_npz, restore_element_type
from ziggurat.parsing import parse_source
from ziggurat.timing_report import add_timing_option, timed, timing
from ziggurat.verifier import verify_module

if TYPE_CHECKING:
    from ziggurat.interpreters.timing import Timeline
    from ziggurat.machine import Machine

SUMMARY_VALUES = 8
"""How many leading elements the summary of a result shows."""

TICK_SECONDS = 0.1
"""How often a run with limits or progress is checked."""

PROGRESS_AFTER_SECONDS = 1.0
"""Runs shorter than this show no progress."""

NPU_DIALECT = "npu"

NPU_ONLY_OPTIONS = ("machine", "cores", "report", "trace", "max_cycles")
"""Options (argparse destinations) that only npu-level IR has a use for."""


def build_argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ziggurat-run",
        description="Run a function of an IR file with ziggurat's interpreter.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "levels:\n"
            "  A module with any op of the npu dialect is npu-level: it runs on the machine\n"
            "  model of --machine (or of the module's npu.machine attribute) and can report\n"
            "  its cost. Any other module (graph or tensor level) runs on the reference\n"
            "  interpreter.\n"
            "\n"
            "inputs and outputs:\n"
            "  graph and tensor levels: every argument comes from --inputs (else random); the outputs\n"
            "  are the function's results, saved as result0, result1, ...\n"
            "  npu level: --inputs fills some of the memref arguments, the others start\n"
            "  zeroed and are the outputs (all are, when --inputs fills every one); without\n"
            "  --inputs every argument is random and an output. Outputs are saved under\n"
            "  their argument names."
        ),
    )
    parser.add_argument("file", metavar="FILE", help="the IR file, or - for stdin")

    program = parser.add_argument_group("program")
    program.add_argument(
        "--function",
        metavar="NAME",
        help="the function to run (default: @main, else the only public function)",
    )

    machine = parser.add_argument_group("machine (npu level)")
    machine.add_argument(
        "--machine",
        metavar="M",
        help="a machine preset (davinci, systolic, tensorcore, ...) or a machine TOML file "
        "(default: the module's npu.machine attribute)",
    )
    machine.add_argument(
        "--cores",
        type=_positive(int),
        metavar="N",
        help="run the kernel on N cores of the machine, told apart by npu.core_id (default: "
        "the count the module was compiled for, its npu.cores attribute, else 1)",
    )

    inputs = parser.add_argument_group("inputs")
    inputs.add_argument(
        "--inputs",
        metavar="NPZ",
        type=Path,
        help="an .npz with one array per argument, keyed by argument name, argN or arr_N",
    )
    inputs.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the random inputs used without --inputs (default: 0)",
    )
    inputs.add_argument(
        "--save-inputs",
        metavar="NPZ",
        type=Path,
        help="write the inputs the run used (random or given) to this .npz, keyed by argument name",
    )

    outputs = parser.add_argument_group("outputs")
    outputs.add_argument(
        "--outputs",
        metavar="NPZ",
        type=Path,
        help="write the outputs to this .npz instead of summarizing them",
    )
    outputs.add_argument(
        "--print",
        dest="print_values",
        action="store_true",
        help="print every element of every output",
    )

    checking = parser.add_argument_group("checking")
    checking.add_argument(
        "--expect",
        metavar="NPZ",
        type=Path,
        help="compare each output with the array of the same name in this .npz (e.g. the --outputs of "
        "the graph-level run: result0, result1, ...) and exit 1 if one differs; prints the error per output",
    )
    checking.add_argument(
        "--rtol",
        type=_non_negative,
        metavar="R",
        help="relative tolerance of each element for --expect, which then checks |ours - ref| <= atol + rtol * |ref| "
        "alone (default: a bound scaled to the output's magnitude by element type, and a per-element one)",
    )
    checking.add_argument(
        "--atol",
        type=_non_negative,
        metavar="A",
        help="absolute tolerance of each element for --expect, as --rtol (default: the element type's, at least "
        "rtol times the expected output's root mean square, as a lowered program rounds partial sums)",
    )

    report = parser.add_argument_group("report (npu level)")
    report.add_argument(
        "--report",
        choices=("text", "json"),
        help="print what the run cost on the machine instead of the outputs",
    )
    report.add_argument(
        "--trace",
        metavar="JSON",
        type=Path,
        help="write the run as Chrome trace events, one track per pipe per core "
        "(open it in ui.perfetto.dev)",
    )

    limits = parser.add_argument_group("limits")
    limits.add_argument(
        "--max-cycles",
        type=_positive(int),
        metavar="N",
        help="stop an npu-level run that passes N cycles of the machine",
    )
    limits.add_argument(
        "--timeout",
        type=_positive(float),
        metavar="SECONDS",
        help="stop a run that takes longer than this",
    )
    add_timing_option(parser)
    add_debug_option(parser)
    return parser


def _positive(kind: type[int] | type[float]) -> Callable[[str], int | float]:
    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid {kind.__name__} value: '{text}'") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be positive, got {text}")
        return value

    return parse


def _non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid float value: '{text}'") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be a number >= 0, got {text}")
    return value


def read_source(file: str) -> tuple[str, str]:
    """The text of FILE and the name diagnostics use for it."""
    if file == "-":
        return sys.stdin.read(), "<stdin>"
    try:
        return Path(file).read_text(), file
    except (OSError, UnicodeDecodeError) as error:
        raise DiagnosticError(
            Diagnostic("error", f"cannot read the IR file: {error}", file=file)
        ) from None


def is_npu_level(module: ModuleOp) -> bool:
    """Whether the module holds npu ops and so runs on a machine model.

    `npu_interpreter.is_npu_program`'s rule, by dialect name: importing it would load the
    machine model for the other levels too.
    """
    return any(op.dialect_name() == NPU_DIALECT for op in module.walk())


# --------------------------------------------------------------------------- #
# Inputs and outputs
# --------------------------------------------------------------------------- #


def load_arguments(
    path: Path, function: func.FuncOp, every_argument: bool
) -> dict[str, np.ndarray]:
    """`ziggurat.numerics.load_inputs` for the arguments of `function`: the arrays of `path` by argument
    name, in argument order. With `every_argument`, each argument must have an array."""
    return numerics.load_inputs(
        path,
        argument_names(function),
        function.function_type.inputs.data,
        function=function.sym_name.data,
        every_argument=every_argument,
    )


def random_memref_inputs(function: func.FuncOp, seed: int) -> dict[str, np.ndarray]:
    """Random contents for every argument; memrefs are drawn as `random_inputs` draws tensors."""
    arg_types = function.function_type.inputs.data
    as_tensors = [
        TensorType(arg_type.get_element_type(), arg_type.get_shape())
        if isinstance(arg_type, MemRefType)
        else arg_type
        for arg_type in arg_types
    ]
    signature = func.FuncOp.external(function.sym_name.data, as_tensors, [])
    signature.location = function.location
    return dict(zip(argument_names(function), random_inputs(signature, seed)))


def _format_number(value: float | int | bool) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def summarize(name: str, value_type: object, array: np.ndarray) -> str:
    """Two lines: the type with min/max/mean, then the first few elements."""
    flat = array.reshape(-1)
    wide = flat.astype(np.float64)
    stats = (
        f"min {_format_number(float(wide.min()))} max {_format_number(float(wide.max()))} "
        f"mean {_format_number(float(wide.mean()))}"
        if flat.size
        else "empty"
    )
    shown = " ".join(_format_number(value) for value in flat[:SUMMARY_VALUES].tolist())
    more = " ..." if flat.size > SUMMARY_VALUES else ""
    return f"{name}: {value_type}  {stats}\n  {shown}{more}"


def show_outputs(
    args: argparse.Namespace, outputs: Mapping[str, tuple[object, np.ndarray]]
) -> None:
    """Save `outputs` (name -> (type, array)) to --outputs, print them with --print, else summarize."""
    if args.outputs is not None:
        data = npz_bytes({name: array for name, (_, array) in outputs.items()})
        try:
            write_atomically(args.outputs, data)
        except OSError as error:
            raise cannot_write(args.outputs, "outputs", error) from None
    for name, (value_type, array) in outputs.items():
        if args.print_values:
            with np.printoptions(threshold=sys.maxsize, precision=6, suppress=True):
                print(f"{name}: {value_type}\n{array}")
        elif args.outputs is None and args.report is None and args.expect is None:
            print(summarize(name, value_type, array))
    if args.expect is not None:
        check_expected(args.expect, outputs, args.rtol, args.atol)


def save_inputs(path: Path | None, inputs: Mapping[str, np.ndarray]) -> None:
    """--save-inputs: the arrays a run used, by argument name (what --inputs reads back)."""
    if path is None:
        return
    try:
        write_atomically(path, npz_bytes(dict(inputs)))
    except OSError as error:
        raise cannot_write(path, "inputs", error) from None


def check_expected(
    path: Path,
    outputs: Mapping[str, tuple[object, np.ndarray]],
    rtol: float | None,
    atol: float | None,
) -> None:
    """--expect: each output against the array of its name in `path`, one line per output; a
    diagnostic if a name is missing on either side or an output differs beyond the tolerance."""
    from ziggurat.testing.differential import compare_outputs

    reference = read_npz(path)
    if missing := [name for name in outputs if name not in reference]:
        raise npz_error(
            path,
            f"no expected array for output {', '.join(missing)} (the archive has "
            f"{', '.join(sorted(reference)) or 'no arrays'})",
        )
    if extra := sorted(set(reference) - set(outputs)):
        raise npz_error(
            path,
            f"expected array {', '.join(extra)} names no output (outputs: {', '.join(outputs)})",
        )
    names = list(outputs)
    expected = [restore_element_type(reference[name], outputs[name][0]) for name in names]
    actual = [outputs[name][1] for name in names]
    comparisons = compare_outputs(expected, actual, rtol, atol, scale_atol=True)
    for name, comparison in zip(names, comparisons):
        print(replace(comparison, name=name))
    if failed := [name for name, comparison in zip(names, comparisons) if not comparison.ok]:
        sys.stdout.flush()  # the lines above come before the diagnostic in `2>&1`
        raise npz_error(
            path, f"output {', '.join(failed)} differs from the expected array beyond the tolerance"
        )


def cannot_write(path: Path, what: str, error: OSError) -> DiagnosticError:
    return DiagnosticError(Diagnostic("error", f"cannot write the {what}: {error}", file=str(path)))


# --------------------------------------------------------------------------- #
# Limits and progress
# --------------------------------------------------------------------------- #


class ProgressLine:
    """A transient line on stderr, when it is a terminal, saying how far a long run is."""

    def __init__(self, what: str):
        self.what = what
        self.enabled = sys.stderr.isatty()
        self.display: Any = None
        self.task: Any = None
        self.shown_at = 0.0

    def show(self, elapsed: float, detail: str = "") -> None:
        """Refresh the line (at most every TICK_SECONDS) once the run has lasted PROGRESS_AFTER_SECONDS."""
        if (
            not self.enabled
            or elapsed < PROGRESS_AFTER_SECONDS
            or elapsed - self.shown_at < TICK_SECONDS
        ):
            return
        self.shown_at = elapsed
        if self.display is None:
            from rich.console import Console
            from rich.progress import Progress, SpinnerColumn, TextColumn

            self.display = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                console=Console(stderr=True),
                transient=True,
                auto_refresh=False,
                redirect_stdout=False,
            )
            self.display.start()
            self.task = self.display.add_task(self.what)
        self.display.update(self.task, description=f"{self.what}  {elapsed:.0f} s{detail}")
        self.display.refresh()

    def close(self) -> None:
        if self.display is not None:
            self.display.stop()
            self.display = None


class _Stopped(BaseException):
    """Raised from the timer signal to end a reference run at --timeout.

    Not an `Exception`: interpreters that report any failure of an op at that op
    (`except Exception`) must let it through.
    """

    def __init__(self, message: str, op: Operation | None):
        super().__init__(message)
        self.message = message
        self.op = op


def run_reference_watched(
    run: Callable[[], Any], where: Operation, what: str, timeout: float | None
) -> Any:
    """`run()` stopped at `timeout` seconds, with progress on a terminal.

    The reference interpreter has no hook into its run, so a timer signal checks it
    every TICK_SECONDS; the innermost frame with an `op` local is the op it was at,
    where a stop is reported (else at `where`). Signals reach only the main thread:
    elsewhere progress is off and --timeout is an error.
    """
    progress = ProgressLine(what)
    if (
        not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        if timeout is not None:
            raise DiagnosticError(
                Diagnostic("error", "--timeout needs POSIX interval timers, in the main thread")
            )
        progress.enabled = False
    if timeout is None and not progress.enabled:
        return run()
    started = time.monotonic()
    in_tick = False

    def tick(signum: int, frame: FrameType | None) -> None:
        nonlocal in_tick
        if in_tick:  # a slow refresh must not let the next tick run inside this one
            return
        in_tick = True
        try:
            elapsed = time.monotonic() - started
            if timeout is not None and elapsed > timeout:
                raise _Stopped(f"the run exceeded --timeout {timeout:g} s", _op_at(frame))
            progress.show(elapsed)
        finally:
            in_tick = False

    previous = signal.signal(signal.SIGALRM, tick)
    signal.setitimer(signal.ITIMER_REAL, TICK_SECONDS, TICK_SECONDS)
    try:
        return run()
    except _Stopped as stopped:
        raise error_at(stopped.op or where, stopped.message) from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        progress.close()


def _op_at(frame: FrameType | None) -> Operation | None:
    while frame is not None:
        if isinstance(op := frame.f_locals.get("op"), Operation):
            return op
        frame = frame.f_back
    return None


class NpuWatch:
    """run_npu's `watch`: stops the run at --timeout, at the op it reached, and shows its
    core and cycle on a terminal (--max-cycles is run_npu's own `max_cycles`)."""

    def __init__(self, what: str, timeout: float | None, max_cycles: int | None):
        self.timeout = timeout
        self.max_cycles = max_cycles
        self.progress = ProgressLine(what)
        self.started = time.monotonic()

    def __call__(self, timeline: Timeline, op: Operation) -> None:
        elapsed = time.monotonic() - self.started
        if self.timeout is not None and elapsed > self.timeout:
            raise error_at(
                op,
                f"the run exceeded --timeout {self.timeout:g} s: stopped at cycle {timeline.cycles:,.0f}",
            )
        limit = "" if self.max_cycles is None else f" of at most {self.max_cycles:,}"
        self.progress.show(elapsed, f"  core {timeline.core}, cycle {timeline.cycles:,.0f}{limit}")


# --------------------------------------------------------------------------- #
# Running
# --------------------------------------------------------------------------- #


def run(args: argparse.Namespace) -> int:
    if args.print_values and args.report is not None:
        raise DiagnosticError(
            Diagnostic("error", "--print and --report both write to stdout: choose one")
        )
    with timed("read"):
        text, filename = read_source(args.file)
    with timed("parse"):
        module: ModuleOp = parse_source(default_context(), text, filename)
    with timed("verify"):
        verify_module(module)
    function = find_function(module, args.function)
    if is_npu_level(module):
        return run_npu_level(args, module, function)
    if given := [name for name in NPU_ONLY_OPTIONS if getattr(args, name) is not None]:
        options = ", ".join("--" + name.replace("_", "-") for name in given)
        raise DiagnosticError(
            Diagnostic(
                "error",
                f"{options} only apply to npu-level IR, which runs on a machine model; this module "
                "has no npu ops and runs on the reference interpreter",
                file=filename,
            )
        )
    return run_reference(args, module, function)


def run_loop_level(args: argparse.Namespace, module: ModuleOp, function: func.FuncOp) -> int:
    """Run a loop-level (memref, destination-passing) function: the `%resultN` arguments are the outputs."""
    from ziggurat.interpreters.loop_interpreter import run_loop_function
    from ziggurat.testing.differential import input_names, level_inputs

    names = input_names(function)
    if args.inputs is None:
        inputs = level_inputs(function, args.seed)
    else:
        given = load_arguments(args.inputs, function, every_argument=False)
        if missing := [name for name in names if name not in given]:
            raise npz_error(
                args.inputs,
                f"no array for the input argument(s) {', '.join(missing)} of @{function.sym_name.data}",
            )
        inputs = [given[name] for name in names]
    save_inputs(args.save_inputs, dict(zip(names, inputs)))
    name = function.sym_name.data
    with timed("run"):
        outputs = run_reference_watched(
            lambda: run_loop_function(module, inputs, name),
            function,
            f"running @{name}",
            args.timeout,
        )
    if not outputs:
        from ziggurat.diagnostics import emit_warning

        emit_warning(
            function,
            f"@{name} has no %result0, %result1, ... arguments: there are no outputs to show",
        )
    types = dict(zip(argument_names(function), function.function_type.inputs.data))
    with timed("outputs"):
        show_outputs(args, {key: (types[key], array) for key, array in outputs.items()})
    return 0


def run_reference(args: argparse.Namespace, module: ModuleOp, function: func.FuncOp) -> int:
    """Run `function` on the reference interpreter; its results are the outputs."""
    if any(isinstance(t, MemRefType) for t in function.function_type.inputs.data):
        return run_loop_level(args, module, function)
    with timed("inputs"):
        inputs = (
            list(load_arguments(args.inputs, function, every_argument=True).values())
            if args.inputs is not None
            else random_inputs(function, args.seed)
        )
        save_inputs(args.save_inputs, dict(zip(argument_names(function), inputs)))
    name = function.sym_name.data
    with timed("run"):
        results = run_reference_watched(
            lambda: run_function(module, inputs, name), function, f"running @{name}", args.timeout
        )
    result_types = function.function_type.outputs.data
    with timed("outputs"):
        show_outputs(
            args,
            {
                f"result{index}": (t, array)
                for index, (t, array) in enumerate(zip(result_types, results))
            },
        )
    return 0


def resolve_machine(module: ModuleOp, requested: str | None) -> Machine:
    """--machine, else the module's npu.machine; an error when they name different machines."""
    from ziggurat.dialects.npu import MACHINE_ATTR
    from ziggurat.machine import list_presets, load_machine

    attribute = module.attributes.get(MACHINE_ATTR)
    named = attribute.data if isinstance(attribute, StringAttr) else None
    if requested is None and named is None:
        raise error_at(
            module,
            f"no machine to run on: pass --machine (presets: {', '.join(list_presets())}) "
            f"or set {MACHINE_ATTR} on the module",
        )
    machine = load_machine(requested if requested is not None else named)
    if requested is not None and named is not None and load_machine(named).name != machine.name:
        raise error_at(
            module,
            f"--machine {requested} is machine '{machine.name}', but the module is written for "
            f'{MACHINE_ATTR} = "{named}"',
        )
    return machine


def npu_inputs_and_outputs(
    args: argparse.Namespace, function: func.FuncOp
) -> tuple[dict[str, np.ndarray], list[str]]:
    """The arrays an npu run starts from, by argument name, and the names of its outputs.

    A lowered kernel's outputs are its `%resultN` memrefs (docs/lowering.md): the other
    arguments are its inputs, read from --inputs (all of them) or drawn as the graph level
    draws them, and the outputs start zeroed. A hand-written kernel without `%resultN`
    arguments outputs the arguments --inputs does not fill, or all of them.
    """
    from ziggurat.testing.differential import input_names, level_inputs

    names = argument_names(function)
    inputs = input_names(function)
    if len(inputs) < len(names):
        outputs = [name for name in names if name not in inputs]
        if args.inputs is None:
            return dict(zip(inputs, level_inputs(function, args.seed))), outputs
        given = load_arguments(args.inputs, function, every_argument=False)
        if missing := [name for name in inputs if name not in given]:
            raise npz_error(
                args.inputs,
                f"no array for the input argument(s) {', '.join(missing)} of @{function.sym_name.data}",
            )
        return given, outputs
    if args.inputs is None:
        return random_memref_inputs(function, args.seed), names
    given = load_arguments(args.inputs, function, every_argument=False)
    return given, [name for name in names if name not in given] or names


def run_npu_level(args: argparse.Namespace, module: ModuleOp, function: func.FuncOp) -> int:
    """Run `function` on the machine model; the memref arguments it writes are the outputs."""
    from ziggurat.interpreters.npu_interpreter import run_npu
    from ziggurat.interpreters.report import build_report, format_report
    from ziggurat.interpreters.trace import write_trace

    machine = resolve_machine(module, args.machine)
    with timed("inputs"):
        given, output_names = npu_inputs_and_outputs(args, function)
        save_inputs(args.save_inputs, given)
    name = function.sym_name.data
    watch = NpuWatch(f"running @{name} on {machine.name}", args.timeout, args.max_cycles)
    try:
        with timed("run"):
            result = run_npu(
                module,
                machine,
                given,
                name,
                cores=args.cores,
                max_cycles=args.max_cycles,
                watch=watch,
                verify=False,  # `run` verified it
            )
    finally:
        watch.progress.close()

    if args.trace is not None:
        try:
            with timed("trace"):
                write_trace(result.stats, args.trace)
        except OSError as error:
            raise cannot_write(args.trace, "trace", error) from None
    arg_types = dict(zip(argument_names(function), function.function_type.inputs.data))
    with timed("outputs"):
        show_outputs(args, {n: (arg_types[n], result.arguments[n]) for n in output_names})
    if args.report is not None:
        with timed("report"):
            report = build_report(result.stats, machine)
            print(format_report(report) if args.report == "text" else json.dumps(report, indent=2))
    return 0


def parse_arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    return parse_command_line(build_argument_parser(), argv)


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point."""

    def run_timed() -> int:
        args = parse_arguments(argv)
        with timing(args.timing):
            return run(args)

    run_main(run_timed)


if __name__ == "__main__":
    main()
