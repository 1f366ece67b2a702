"""The tools' `--timing`: the wall and CPU time of each stage of a run (parsing, each pass,
verification, printing, the interpreter), as a table on stderr in the style of MLIR's `-mlir-timing`.

    with timing(args.timing):      # around a tool's work: a `StageTimer` while it runs
        with timed("parse"):       # anywhere below: does nothing when no timer is active
            ...

A stage met again (a pass that runs several times) accumulates, and its row counts the calls;
a stage met inside another is a row indented under it. Stages are listed in the order first met.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TextIO

RULE = "===" + "-" * 73 + "==="
TITLE = "... Execution time report ..."


class _Stage:
    """A named stage's accumulated time, its calls and the stages met inside it."""

    __slots__ = ("name", "wall", "cpu", "count", "children")

    def __init__(self, name: str):
        self.name = name
        self.wall = 0.0
        self.cpu = 0.0
        self.count = 0
        self.children: dict[str, _Stage] = {}


class StageTimer:
    """Wall (`time.perf_counter`) and CPU (`time.process_time`) seconds of named stages, from the
    timer's creation to its `report`."""

    enabled = True

    def __init__(self, start: tuple[float, float] | None = None) -> None:
        """`start`: the `clock()` the total counts from (default: now)."""
        self._root = _Stage("Total")
        self._current = self._root
        self._wall_start, self._cpu_start = start if start is not None else clock()

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        parent = self._current
        node = parent.children.get(name)
        if node is None:
            node = parent.children[name] = _Stage(name)
        self._current = node
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            node.wall += time.perf_counter() - wall
            node.cpu += time.process_time() - cpu
            node.count += 1
            self._current = parent

    def record(self, name: str, since: tuple[float, float]) -> None:
        """Add the time from `since` (a `clock()`) to now to stage `name`: a stage that ran before
        the timer existed."""
        wall, cpu = clock()
        node = self._current.children.get(name)
        if node is None:
            node = self._current.children[name] = _Stage(name)
        node.wall += wall - since[0]
        node.cpu += cpu - since[1]
        node.count += 1

    def report(self) -> str:
        """The table: a row per stage, then `Rest` (time outside every stage) and `Total`."""
        total_wall = time.perf_counter() - self._wall_start
        total_cpu = time.process_time() - self._cpu_start

        def row(wall: float, cpu: float, count: int, name: str) -> str:
            calls = str(count) if count > 1 else ""
            return (
                f"{wall:10.4f} ({_percent(wall, total_wall):5.1f}%)  "
                f"{cpu:10.4f} ({_percent(cpu, total_cpu):5.1f}%)  {calls:>7}  {name}"
            )

        lines = [
            RULE,
            TITLE.center(len(RULE)).rstrip(),
            RULE,
            f"  Total Execution Time: {total_wall:.4f} seconds",
            "",
            f"{'----Wall Time----':>19}  {'----CPU Time----':>19}  {'-Calls-':>7}  ----Name----",
        ]

        def add(node: _Stage, depth: int) -> None:
            for child in node.children.values():
                lines.append(row(child.wall, child.cpu, child.count, "  " * depth + child.name))
                add(child, depth + 1)

        add(self._root, 0)
        if self._root.children:
            rest_wall = total_wall - sum(c.wall for c in self._root.children.values())
            rest_cpu = total_cpu - sum(c.cpu for c in self._root.children.values())
            lines.append(row(max(rest_wall, 0.0), max(rest_cpu, 0.0), 1, "Rest"))
        lines.append(row(total_wall, total_cpu, 1, "Total"))
        return "\n".join(lines) + "\n"


def clock() -> tuple[float, float]:
    """Now, as (wall, CPU) seconds."""
    return time.perf_counter(), time.process_time()


def _percent(part: float, whole: float) -> float:
    return 100.0 * part / whole if whole > 0 else 0.0


class NullTimer:
    """The timer when `--timing` is off: a stage costs one call that returns a shared no-op."""

    enabled = False
    _NOTHING = nullcontext()

    def stage(self, name: str) -> AbstractContextManager[None]:
        return self._NOTHING

    def record(self, name: str, since: tuple[float, float]) -> None:
        pass


NULL_TIMER = NullTimer()
_active: StageTimer | NullTimer = NULL_TIMER


def active_timer() -> StageTimer | NullTimer:
    """The timer of the innermost `timing(True)` block, else `NULL_TIMER`."""
    return _active


def timed(name: str) -> AbstractContextManager[None]:
    """Time the block as stage `name` of the active timer (nothing when none is active)."""
    return _active.stage(name)


def add_timing_option(parser: argparse.ArgumentParser) -> None:
    """The `--timing` switch of every console script."""
    parser.add_argument(
        "--timing",
        action="store_true",
        help="print the wall and CPU time of each stage (parsing, each pass, verifying, printing, "
        "running) as a table on stderr, as MLIR's -mlir-timing does; the output is unchanged",
    )


@contextmanager
def timing(
    enabled: bool, stream: TextIO | None = None, start: tuple[float, float] | None = None
) -> Iterator[StageTimer | NullTimer]:
    """With `enabled`, a `StageTimer` (its total from `start`, default now) active for the block,
    whose report goes to `stream` (default: stderr) when the block ends, also when it raises; else
    `NULL_TIMER`."""
    global _active
    if not enabled:
        yield NULL_TIMER
        return
    timer, outer = StageTimer(start), _active
    _active = timer
    try:
        yield timer
    finally:
        _active = outer
        out = stream if stream is not None else sys.stderr
        out.write(timer.report())
        out.flush()


__all__ = [
    "NULL_TIMER",
    "NullTimer",
    "StageTimer",
    "active_timer",
    "add_timing_option",
    "clock",
    "timed",
    "timing",
]
