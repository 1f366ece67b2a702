"""Running one tool invocation and judging how it ended.

Every fuzz case ends in one of these kinds:

* `success`: exit code 0 (and, where the case checks numbers, they match);
* `diagnostic`: exit code 1 with an `error:` diagnostic on stderr;
* `traceback`: exit code 2, "Traceback" or "internal error" in stderr, any
  other exit code, or an exception escaping the tool;
* `hang`: the case ran past its time limit;
* `mismatch`: the tool succeeded but computed other numbers than the reference;
* `bad-diagnostic`: exit code 1 whose diagnostic lacks the location the case
  requires (`file:line:col:` for IR, `file:line:` for machine files);
* `refused`: a diagnostic for an input that is valid (a valid input changed in
  a way that keeps it valid, category `valid`).

The first two are what a tool may do with any input; the others are bugs.

Tools run in-process (`run_in_process`, a few milliseconds per case) with
captured stdout/stderr, a wall-clock limit and an address-space
limit, so that a case asking for a huge tensor fails like it would on a
small machine instead of swapping; `run_subprocess` runs the console script
itself, to prove that the command-line path behaves the same.
"""

from __future__ import annotations

import _thread
import contextlib
import gc
import io
import os
import re
import resource
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

OK_KINDS = ("success", "diagnostic")
FAILURE_KINDS = ("traceback", "hang", "mismatch", "bad-diagnostic", "refused")

CASE_TIMEOUT_S = 60.0
"""Wall-clock limit of one tool invocation: generous, as the machine may be shared (with a
load of 10 on 2 cores, ziggurat-run on test/graph/invalid.mlir passed 20 s)."""
MEMORY_LIMIT_BYTES = 8 * 2**30
"""Address-space limit while a tool runs in-process (numpy and onnxruntime reserve some)."""

IR_LOCATION = re.compile(r"^[^\s:][^:\n]*:\d+:\d+: error: ", re.MULTILINE)
FILE_LINE = re.compile(r"^[^\s:][^:\n]*:\d+:(\d+:)? error: ", re.MULTILINE)
ANY_ERROR = re.compile(r"(^|: )error: ", re.MULTILINE)


@dataclass
class Outcome:
    kind: str
    code: int | None
    stdout: str
    stderr: str
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.kind in OK_KINDS


class CaseTimeout(BaseException):
    """Raised in the main thread at the time limit; a BaseException so that no
    tool's `except Exception` swallows it."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise `CaseTimeout` in the main thread after `seconds` of wall-clock time.

    The tools own SIGALRM (`ziggurat-run --timeout`): the watchdog is a timer
    thread that delivers SIGUSR1 to the main thread instead.
    """

    def expire(signum, frame):
        raise CaseTimeout()

    previous = signal.signal(signal.SIGUSR1, expire)
    timer = threading.Timer(seconds, _thread.interrupt_main, (signal.SIGUSR1,))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        signal.signal(signal.SIGUSR1, previous)


@contextlib.contextmanager
def memory_limit(limit: int) -> Iterator[None]:
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    wanted = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
    # Never lower an already lower limit, and never try to raise past the hard one.
    if soft != resource.RLIM_INFINITY and soft <= wanted:
        yield
        return
    resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@contextlib.contextmanager
def _without_gc_callbacks() -> Iterator[None]:
    # hypothesis times garbage collection with a gc callback; a tool's timer
    # signal (ziggurat-run --timeout) landing in it is "ignored" with a
    # traceback on stderr, which is the harness's doing, not the tool's.
    saved = gc.callbacks[:]
    gc.callbacks.clear()
    try:
        yield
    finally:
        gc.callbacks[:] = saved


def classify(
    code: int | None, stdout: str, stderr: str, location: re.Pattern[str] | None
) -> Outcome:
    """The kind of an invocation that ended with exit `code`.

    `location` is the pattern a diagnostic of this case must match (None: any `error:`).
    """
    if (
        "Traceback (most recent call last)" in stderr
        or "internal error" in stderr
        or code not in (0, 1)
    ):
        return Outcome("traceback", code, stdout, stderr)
    if code == 0:
        return Outcome("success", code, stdout, stderr)
    if not ANY_ERROR.search(stderr):
        return Outcome("bad-diagnostic", code, stdout, stderr, "exit code 1 without an error: line")
    if location is not None and not location.search(stderr):
        return Outcome(
            "bad-diagnostic", code, stdout, stderr, f"no diagnostic matches {location.pattern}"
        )
    return Outcome("diagnostic", code, stdout, stderr)


def run_in_process(
    main: Callable[[Sequence[str]], None],
    argv: Sequence[str],
    location: re.Pattern[str] | None = IR_LOCATION,
    timeout: float = CASE_TIMEOUT_S,
) -> Outcome:
    """Call a console script's `main(argv)` (which ends in `sys.exit`) with captured output."""
    stdout, stderr = io.StringIO(), io.StringIO()
    code: int | None = None
    # Tools read ZIGGURAT_DEBUG and may set it (`--debug`): keep the caller's value.
    environment = os.environ.get("ZIGGURAT_DEBUG")
    try:
        with (
            contextlib.redirect_stdout(stdout),
            contextlib.redirect_stderr(stderr),
            _without_gc_callbacks(),
        ):
            with memory_limit(MEMORY_LIMIT_BYTES), time_limit(timeout):
                try:
                    main(list(argv))
                    code = 0
                except SystemExit as exit:
                    code = _exit_code(exit.code)
    except CaseTimeout:
        return Outcome("hang", None, stdout.getvalue(), stderr.getvalue(), f"ran past {timeout} s")
    except BaseException as escaped:  # noqa: BLE001 - anything else escaping main is the bug we look for
        return Outcome(
            "traceback",
            None,
            stdout.getvalue(),
            stderr.getvalue(),
            f"{type(escaped).__name__}: {escaped}",
        )
    finally:
        if environment is None:
            os.environ.pop("ZIGGURAT_DEBUG", None)
        else:
            os.environ["ZIGGURAT_DEBUG"] = environment
    return classify(code, stdout.getvalue(), stderr.getvalue(), location)


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    # sys.exit("message") prints the message and exits 1.
    print(code, file=sys.stderr)
    return 1


def run_subprocess(
    command: Sequence[str], location: re.Pattern[str] | None = IR_LOCATION, timeout: float = 60.0
) -> Outcome:
    """Run a console script as a separate process (the CLI path, interpreter start-up included)."""
    environment = {key: value for key, value in os.environ.items() if key != "ZIGGURAT_DEBUG"}
    try:
        completed = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=environment,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as expired:
        return Outcome(
            "hang",
            None,
            str(expired.stdout or ""),
            str(expired.stderr or ""),
            f"ran past {timeout} s",
        )
    return classify(completed.returncode, completed.stdout, completed.stderr, location)
