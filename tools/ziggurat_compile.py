"""`ziggurat-compile MODEL.onnx`: import an ONNX model, optimize it, and run or check it.

    ziggurat-compile model.onnx                           # graph-level IR on stdout
    ziggurat-compile model.onnx --opt -o model.mlir       # after graph-fold-constants, graph-canonicalize, cse, dce
    ziggurat-compile model.onnx --input-shape x=1x3x224x224 --run
    ziggurat-compile model.onnx --check                   # against onnxruntime, exit 1 on a mismatch

The stages run in one process on in-memory IR (no text between them):
import (`ziggurat.frontends.onnx`), the optional graph optimizations, then
the IR is printed (or written atomically with `-o`) unless `--run`/`--check`
asked for results instead. `--emit` names the level to stop at; only `graph`
exists until the lowering pipeline lands, and asking for another level is a
diagnostic rather than a silent fallback.

`--run` runs `@main` on the graph interpreter; `--check` also runs the model
with onnxruntime on the same inputs and reports, per output, the max absolute
and relative error against a tolerance that depends on the element type.
Inputs come from `--inputs` (an .npz keyed by ONNX input name, argN or
arr_N) or are random with a fixed `--seed`; `--outputs` saves ziggurat's
results keyed by ONNX output name. Progress is shown on stderr when it is a
terminal.

Problems with the model or the command line are diagnostics (exit 1); a pass
that crashes is an internal error naming the pass and the op (exit 2, the
traceback under `--debug` or `ZIGGURAT_DEBUG=1`).
"""

from __future__ import annotations

import argparse
import io
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
from xdsl.printer import Printer

from ziggurat.backends.interpreter import find_function, random_inputs, run_function
from ziggurat.context import default_context, multiverse
from ziggurat.diagnostics import (
    Diagnostic,
    DiagnosticError,
    add_debug_option,
    run_main,
    running_pass,
    verify_module,
    write_atomically,
)
from ziggurat.frontends.onnx import import_loaded_model, load_model, parse_input_shape
from ziggurat.npz import candidate_keys, npz_bytes, npz_error, read_npz, restore_element_type
from ziggurat.tools.ziggurat_run import summarize

GRAPH_PIPELINE = ("graph-fold-constants", "graph-canonicalize", "cse", "dce")
"""`--opt`: the graph-level passes, in order."""

EMIT_LEVELS = ("graph", "tile", "loop", "npu")
AVAILABLE_LEVELS = ("graph",)


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float


def tolerance_for(dtype: np.dtype) -> Tolerance:
    """How close ziggurat's result must be to onnxruntime's for an output of this element type."""
    if dtype.kind in "iub":
        return Tolerance(0, 0)
    bits = dtype.itemsize * 8
    if bits >= 64:
        return Tolerance(1e-10, 1e-7)
    if bits == 32:
        return Tolerance(1e-4, 1e-3)
    if bits == 16:
        return Tolerance(1e-2, 1e-2)
    return Tolerance(1e-1, 1e-1)


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

    compilation = parser.add_argument_group("compilation")
    compilation.add_argument(
        "--emit",
        choices=EMIT_LEVELS,
        default="graph",
        help="the IR level to produce (default: graph; the lower levels are not available yet)",
    )
    compilation.add_argument(
        "--opt", action="store_true", help=f"run the graph optimizations: {','.join(GRAPH_PIPELINE)}"
    )
    compilation.add_argument("-o", "--output", metavar="FILE", type=Path, help="write the IR to FILE")

    running = parser.add_argument_group("running")
    running.add_argument("--run", action="store_true", help="run @main on the graph interpreter")
    running.add_argument(
        "--check",
        action="store_true",
        help="run on the graph interpreter and onnxruntime and compare each output (exit 1 on a mismatch)",
    )
    running.add_argument(
        "--inputs", metavar="NPZ", type=Path, help="inputs keyed by ONNX input name, argN or arr_N"
    )
    running.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default: 0)")
    running.add_argument(
        "--outputs", metavar="NPZ", type=Path, help="write ziggurat's results, keyed by ONNX output name"
    )
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
        with running_pass(name):
            available[name]()().apply(ctx, module)
    verify_module(module)


def load_inputs(path: Path, names: Sequence[str], function: func.FuncOp) -> list[np.ndarray]:
    """The arrays of an .npz in input order, each found under its ONNX name, argN or arr_N."""
    arrays = read_npz(path)
    ordered, used = [], set()
    for index, (name, arg_type) in enumerate(zip(names, function.function_type.inputs.data, strict=True)):
        found = [key for key in candidate_keys(name, index) if key in arrays]
        if len(found) != 1:
            problem = "no array" if not found else f"several arrays ({', '.join(found)})"
            raise npz_error(
                path,
                f"{problem} for input '{name}' (looked for '{name}', arg{index}, arr_{index}; the archive has "
                f"{', '.join(sorted(arrays)) or 'no arrays'})",
            )
        used.add(found[0])
        ordered.append(restore_element_type(arrays[found[0]], arg_type))
    if unused := sorted(set(arrays) - used):
        raise npz_error(path, f"the model has no input called {', '.join(unused)} (inputs: {', '.join(names) or 'none'})")
    return ordered


def run_onnxruntime(model, names: Sequence[str], inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    import onnxruntime

    def run(serialized: bytes) -> list[np.ndarray]:
        session = onnxruntime.InferenceSession(serialized, providers=["CPUExecutionProvider"])
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
            Diagnostic("error", f"onnxruntime cannot run the model: {str(error).strip().splitlines()[0]}")
        ) from None


def compare(names: Sequence[str], ours: Sequence[np.ndarray], reference: Sequence[np.ndarray]) -> bool:
    """Print one line per output (max abs and rel error, tolerance, verdict); True if all pass."""
    passed = True
    for name, actual, expected in zip(names, ours, reference):
        tolerance = tolerance_for(expected.dtype)
        if actual.shape != expected.shape:
            print(f"output '{name}': shape {list(actual.shape)}, onnxruntime {list(expected.shape)}  FAIL")
            passed = False
            continue
        a, e = actual.astype(np.float64), expected.astype(np.float64)
        both_nan = np.isnan(a) & np.isnan(e)
        difference = np.where(both_nan, 0.0, np.abs(a - e))
        difference = np.where(np.isnan(difference), np.inf, difference)
        relative = difference / np.maximum(np.abs(e), np.finfo(np.float64).tiny)
        max_abs = float(difference.max()) if difference.size else 0.0
        max_rel = float(np.where(difference == 0, 0.0, relative).max()) if difference.size else 0.0
        ok = bool(np.all(difference <= tolerance.atol + tolerance.rtol * np.abs(np.nan_to_num(e))))
        passed &= ok
        print(
            f"output '{name}': {expected.dtype}{list(expected.shape)}  max abs {max_abs:.3g}  "
            f"max rel {max_rel:.3g}  (atol {tolerance.atol:g}, rtol {tolerance.rtol:g})  "
            f"{'ok' if ok else 'FAIL'}"
        )
    return passed


def _write(path: Path, data: str | bytes, what: str) -> None:
    try:
        write_atomically(path, data)
    except OSError as error:
        raise DiagnosticError(Diagnostic("error", f"cannot write the {what}: {error}", file=str(path))) from None


# --------------------------------------------------------------------------- #
# Driver
# --------------------------------------------------------------------------- #


def compile_model(args: argparse.Namespace) -> int:
    if args.emit not in AVAILABLE_LEVELS:
        raise DiagnosticError(
            Diagnostic(
                "error",
                f"--emit {args.emit} is not available yet: ziggurat-compile stops at the graph level "
                "until the lowering pipeline (graph-to-tile, tile-to-loop, loop-to-npu) lands",
            )
        )
    input_shapes = dict(parse_input_shape(text) for text in args.input_shape)
    with stage(f"loading {Path(args.model).name}"):
        model, where = load_model(args.model)
    with counted_stage(f"importing {Path(args.model).name}") as on_node:
        module = import_loaded_model(model, input_shapes, where, on_node)
    ctx = default_context()
    if args.opt:
        with stage("optimizing"):
            optimize(ctx, module)

    if args.output is not None:
        text = io.StringIO()
        Printer(stream=text).print_op(module)
        _write(args.output, text.getvalue() + "\n", "IR")
    elif not (args.run or args.check):
        Printer(stream=sys.stdout).print_op(module)
        print()
    if not (args.run or args.check):
        return 0

    function: func.FuncOp = find_function(module, "main")
    initializers = {tensor.name for tensor in model.graph.initializer}
    input_names = [value.name for value in model.graph.input if value.name not in initializers]
    output_names = [value.name for value in model.graph.output]
    inputs = load_inputs(args.inputs, input_names, function) if args.inputs else random_inputs(function, args.seed)
    with stage("running on the graph interpreter"):
        results = run_function(module, inputs, "main")
    if args.outputs is not None:
        _write(args.outputs, npz_bytes(dict(zip(output_names, results))), "outputs")

    if not args.check:
        if args.outputs is None:
            for name, array, result_type in zip(output_names, results, function.function_type.outputs.data):
                print(summarize(name, result_type, array))
        return 0
    with stage("running onnxruntime"):
        reference = run_onnxruntime(model, input_names, inputs)
    if compare(output_names, results, reference):
        print(f"check passed: {len(results)} output(s) match onnxruntime")
        return 0
    print("error: check failed: ziggurat and onnxruntime differ beyond the tolerance", file=sys.stderr)
    return 1


def parse_arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    try:
        return build_argument_parser().parse_args(argv)
    except SystemExit as exit:
        # argparse exits 2 on a bad command line; ziggurat tools keep 2 for internal errors.
        raise SystemExit(1 if exit.code == 2 else exit.code) from None


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point."""
    run_main(lambda: compile_model(parse_arguments(argv)))


if __name__ == "__main__":
    main()
