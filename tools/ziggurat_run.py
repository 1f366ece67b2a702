"""`ziggurat-run FILE`: run the entry function of an IR file on numpy inputs and show its results.

    ziggurat-run model.mlir                          # random inputs (seed 0), summary of each result
    ziggurat-run model.mlir --inputs in.npz --outputs out.npz
    ziggurat-run - --function f --print < model.mlir

Inputs come from an `.npz` whose keys are the function's argument names (`%x`
gives `x`), `arg0`, `arg1`, ... or numpy.savez's positional `arr_0`, ...;
without `--inputs` they are random with a fixed `--seed`. Results are written
to `--outputs` as `result0`, `result1`, ... Every failure (unreadable file or
npz, IR that does not parse or verify, inputs that do not match the
signature, an op the interpreter cannot run) is a diagnostic and exit code 1.
"""

from __future__ import annotations

import argparse
import io
import sys
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from ziggurat.backends.interpreter import (
    argument_names,
    find_function,
    random_inputs,
    run_function,
    value_shape_and_dtype,
)
from ziggurat.context import default_context
from ziggurat.diagnostics import (
    Diagnostic,
    DiagnosticError,
    parse_source,
    run_main,
    verify_module,
    write_atomically,
)

SUMMARY_VALUES = 8
"""How many leading elements the summary of a result shows."""


def build_argument_parser() -> argparse.ArgumentParser:
    """The command line, in groups that later options (machine, report, trace) join."""
    parser = argparse.ArgumentParser(
        prog="ziggurat-run",
        description="Run a function of an IR file with ziggurat's interpreter.",
    )
    parser.add_argument("file", metavar="FILE", help="the IR file, or - for stdin")

    program = parser.add_argument_group("program")
    program.add_argument(
        "--function",
        metavar="NAME",
        help="the function to run (default: @main, else the only public function)",
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

    outputs = parser.add_argument_group("outputs")
    outputs.add_argument(
        "--outputs",
        metavar="NPZ",
        type=Path,
        help="write the results to this .npz as result0, result1, ... instead of summarizing them",
    )
    outputs.add_argument(
        "--print",
        dest="print_values",
        action="store_true",
        help="print every element of every result",
    )
    return parser


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


def load_inputs(path: Path, function: func.FuncOp) -> list[np.ndarray]:
    """The arrays of `path` in argument order, matched by name, argN or arr_N."""

    def error(message: str) -> DiagnosticError:
        return DiagnosticError(Diagnostic("error", message, file=str(path)))

    try:
        with path.open("rb") as stream:
            # np.load takes anything that is neither zip nor .npy for a pickle; say what is expected.
            if not zipfile.is_zipfile(stream):
                raise error("not an .npz archive (a zip of .npy arrays, as numpy.savez writes)")
            stream.seek(0)
            with np.load(stream, allow_pickle=False) as archive:
                arrays = {key: archive[key] for key in archive.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as failure:
        raise error(f"cannot read the inputs: {failure}") from None

    ordered: list[np.ndarray] = []
    used: set[str] = set()
    for index, name in enumerate(argument_names(function)):
        candidates = list(dict.fromkeys([name, f"arg{index}", f"arr_{index}"]))
        found = [key for key in candidates if key in arrays]
        if not found:
            raise error(
                f"no array for argument #{index} of @{function.sym_name.data} "
                f"(looked for {', '.join(candidates)}; the archive has "
                f"{', '.join(sorted(arrays)) or 'no arrays'})"
            )
        if len(found) > 1:
            raise error(
                f"argument #{index} of @{function.sym_name.data} matches several arrays: "
                f"{', '.join(found)}"
            )
        used.add(found[0])
        ordered.append(_restore_narrow_float(arrays[found[0]], function, index))
    if unused := sorted(set(arrays) - used):
        raise error(
            f"no argument of @{function.sym_name.data} is called {', '.join(unused)} "
            f"(arguments: {', '.join(argument_names(function)) or 'none'})"
        )
    return ordered


def _restore_narrow_float(array: np.ndarray, function: func.FuncOp, index: int) -> np.ndarray:
    # .npy has no descriptor for ml_dtypes' bf16/fp8: they are saved as raw bytes (`|V2`, `|V1`).
    arg_type = function.function_type.inputs.data[index]
    _, dtype = value_shape_and_dtype(arg_type, f"argument #{index}", function)
    if array.dtype.kind == "V" and array.dtype.itemsize == dtype.itemsize:
        return array.view(dtype)
    return array


def _format_number(value: float | int | bool) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def summarize(name: str, result_type: object, array: np.ndarray) -> str:
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
    return f"{name}: {result_type}  {stats}\n  {shown}{more}"


def _save_npz(results: Sequence[np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **{f"result{index}": array for index, array in enumerate(results)})
    return buffer.getvalue()


def run(args: argparse.Namespace) -> int:
    text, filename = read_source(args.file)
    module: ModuleOp = parse_source(default_context(), text, filename)
    verify_module(module)
    function = find_function(module, args.function)
    inputs = (
        load_inputs(args.inputs, function)
        if args.inputs is not None
        else random_inputs(function, args.seed)
    )
    results = run_function(module, inputs, function.sym_name.data)

    if args.outputs is not None:
        try:
            write_atomically(args.outputs, _save_npz(results))
        except OSError as error:
            raise DiagnosticError(
                Diagnostic("error", f"cannot write the outputs: {error}", file=str(args.outputs))
            ) from None
    result_types = function.function_type.outputs.data
    for index, (array, result_type) in enumerate(zip(results, result_types)):
        if args.print_values:
            with np.printoptions(threshold=sys.maxsize, precision=6, suppress=True):
                print(f"result{index}: {result_type}\n{array}")
        elif args.outputs is None:
            print(summarize(f"result{index}", result_type, array))
    return 0


def parse_arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    try:
        return build_argument_parser().parse_args(argv)
    except SystemExit as exit:
        # argparse exits 2 on a bad command line; ziggurat tools keep 2 for internal errors.
        raise SystemExit(1 if exit.code == 2 else exit.code) from None


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point."""
    run_main(lambda: run(parse_arguments(argv)))


if __name__ == "__main__":
    main()
