"""Plumbing shared by ziggurat's console scripts: exit codes, `--debug`, crash context, output files.

`run_main` wraps a script's `main`: a `DiagnosticError` is printed and exits 1; any other exception
is an internal error ("internal error, please report: ...", exit 2; a traceback only with `--debug`
or `ZIGGURAT_DEBUG=1`), except xDSL's own `ParseError`/`DiagnosticException`, which state a problem
with the input, and `MemoryError`, an input too large for the machine (exit 1); it also makes the
garbage collector look at young objects less often. `running_pass(name)`
attaches the crashed pass and the op it was rewriting to an internal error as a note, and
`write_atomically` writes an output file so that a failed run leaves no partial file.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.utils.exceptions import DiagnosticException, ParseError

from ziggurat.diagnostics import Diagnostic, DiagnosticError, exception_message, op_location


def debug_enabled() -> bool:
    return os.environ.get("ZIGGURAT_DEBUG", "") not in ("", "0")


class _EnableDebug(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None) -> None:
        # Set while the command line is parsed, so that it holds for everything run_main runs after.
        os.environ["ZIGGURAT_DEBUG"] = "1"
        setattr(namespace, self.dest, True)


def add_debug_option(parser: argparse.ArgumentParser) -> None:
    """The `--debug` switch of every console script: tracebacks for internal errors, as `ZIGGURAT_DEBUG=1`."""
    parser.add_argument(
        "--debug",
        action=_EnableDebug,
        nargs=0,
        default=False,
        help="print the Python traceback of an internal error (the same as ZIGGURAT_DEBUG=1)",
    )


def while_running_pass(pass_name: str, e: BaseException) -> str:
    """The note for an exception raised inside a pass: the pass, and the op it was rewriting when known."""
    op = _op_being_rewritten(e)
    if op is None:
        return f"while running pass '{pass_name}'"
    loc = op_location(op)
    at = f" at {loc.filename.data}:{loc.line.data}:{loc.column.data}" if loc is not None else ""
    return f"while running pass '{pass_name}' on op '{op.name}'{at}"


def _op_being_rewritten(e: BaseException) -> Operation | None:
    """The `op` of the innermost `match_and_rewrite` on the traceback, else the innermost `op` of any
    frame (a pass's own walk). The module every pass's `apply` gets says nothing, so it does not count."""
    frames = [frame for frame, _ in traceback.walk_tb(e.__traceback__)]
    candidates = [
        (frame.f_code.co_name, op)
        for frame in reversed(frames)
        if isinstance(op := frame.f_locals.get("op"), Operation) and not isinstance(op, ModuleOp)
    ]
    for function, op in candidates:
        if function == "match_and_rewrite":
            return op
    return candidates[0][1] if candidates else None


@contextmanager
def running_pass(pass_name: str) -> Iterator[None]:
    """Mark an unexpected exception raised inside as a crash of pass `pass_name` (see `while_running_pass`);
    diagnostics go through untouched."""
    try:
        yield
    except (DiagnosticError, DiagnosticException, ParseError):
        raise
    except Exception as e:
        e.add_note(while_running_pass(pass_name, e))
        raise


def parse_command_line(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None = None
) -> argparse.Namespace:
    """`parser.parse_args(argv)`, exiting 1 on a bad command line: argparse exits 2, which
    ziggurat's tools keep for internal errors."""
    try:
        return parser.parse_args(argv)
    except SystemExit as exit:
        raise SystemExit(1 if exit.code == 2 else exit.code) from None


YOUNG_OBJECTS_PER_COLLECTION = 20_000
"""The cyclic garbage collector's first threshold in the tools (Python's default: 700)."""


def run_main(main: Callable[[], int | None]) -> NoReturn:
    """Run a console script's `main`; user errors exit 1 with diagnostics, internal errors exit 2."""
    # A tool builds IR of millions of objects that live to its end: at the default thresholds the
    # collector walks all of them again and again (a fifth of a large model's compile), for
    # little garbage.
    gc.set_threshold(YOUNG_OBJECTS_PER_COLLECTION, *gc.get_threshold()[1:])
    try:
        code = main()
        # Output still buffered would meet a closed stdout at exit, where it cannot be handled.
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly, as other command-line tools do. Python
        # flushes stdout again at exit; point it at devnull so that flush cannot fail.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(141)  # 128 + SIGPIPE, the status of a tool that SIGPIPE ended
    except DiagnosticError as e:
        print(e.format(), file=sys.stderr)
        sys.exit(1)
    except ParseError as e:
        # Text parsed without parse_source: xDSL's span still knows where.
        print(f"{e.span.get_location()}: error: {e.msg}", file=sys.stderr)
        sys.exit(1)
    except DiagnosticException as e:
        # An xDSL exception that escaped conversion still states a problem with the input.
        print(f"error: {exception_message(e)}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
    except MemoryError as e:
        # The input asked for more than the machine has (a huge tensor): a limit, not a bug.
        context = "; ".join(getattr(e, "__notes__", []))
        detail = f": {e}" if str(e) else ""
        print(
            f"error: out of memory{detail}{f' ({context})' if context else ''}; "
            "the input needs more memory than this machine has",
            file=sys.stderr,
        )
        sys.exit(1)
    except Exception as e:
        if debug_enabled():
            traceback.print_exc()
        # One-line notes are context (the pass, the op); xDSL's pattern walker adds a dump of the
        # whole module, which belongs in the --debug traceback only.
        context = "; ".join(note for note in getattr(e, "__notes__", []) if "\n" not in note)
        suffix = f" ({context})" if context else ""
        print(f"internal error, please report: {type(e).__name__}: {e}{suffix}", file=sys.stderr)
        if not debug_enabled():
            print("(run with --debug or ZIGGURAT_DEBUG=1 for a traceback)", file=sys.stderr)
        sys.exit(2)
    sys.exit(code or 0)


def check_cores_option(cores: int, machine: str, machine_cores: int) -> None:
    """`--cores N` of a tool: a count of the cores of the machine named `machine`, which has
    `machine_cores`, else one diagnostic saying the range (before any work, not from deep in the
    lowering)."""
    if not 1 <= cores <= machine_cores:
        plural = "s" if machine_cores != 1 else ""
        raise DiagnosticError(
            Diagnostic(
                "error",
                f"--cores {cores}: machine '{machine}' has {machine_cores} core{plural} "
                f"(give 1 to {machine_cores})",
            )
        )


def write_atomically(path: str | Path, data: str | bytes) -> None:
    """Write `data` to `path` through a temporary file in the same directory and `os.replace`.

    A reader never sees a partial file, and a failure leaves an existing file untouched.
    """
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
        if path.exists():
            os.chmod(temporary, path.stat().st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
