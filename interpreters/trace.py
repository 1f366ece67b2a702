"""A run's instructions as a Chrome trace (JSON), viewable in Perfetto (ui.perfetto.dev) or chrome://tracing.

One process per core and one track per pipe in it; each instruction is a slice from its start to
its end, with its source location and cycles in its arguments; flags are instant events. Times are
in microseconds at the machine's clock.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ziggurat.cli import write_atomically
from ziggurat.diagnostics import op_location
from ziggurat.interpreters.timing import TimingStats


def trace_events(stats: TimingStats) -> dict[str, Any]:
    """The Chrome trace-event JSON object of a run."""
    microseconds = 1e6 / stats.clock_hz
    pipes = list(stats.busy_cycles)
    events: list[dict[str, Any]] = []
    for core in sorted({event.core for event in stats.events} or {0}):
        events.append(
            {
                "ph": "M",
                "name": "process_name",
                "pid": core,
                "args": {"name": f"{stats.machine} core {core}"},
            }
        )
        for tid, pipe in enumerate(pipes):
            events.append(
                {"ph": "M", "name": "thread_name", "pid": core, "tid": tid, "args": {"name": pipe}}
            )
            events.append(
                {
                    "ph": "M",
                    "name": "thread_sort_index",
                    "pid": core,
                    "tid": tid,
                    "args": {"sort_index": tid},
                }
            )
    for event in stats.events:
        loc = op_location(event.op)
        args: dict[str, Any] = {"start_cycle": event.start, "end_cycle": event.end}
        if loc is not None:
            args["loc"] = f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
        entry: dict[str, Any] = {
            "name": event.name,
            "cat": event.pipe,
            "pid": event.core,
            "tid": pipes.index(event.pipe),
            "ts": event.start * microseconds,
            "args": args,
        }
        if event.end > event.start:
            entry.update(ph="X", dur=(event.end - event.start) * microseconds)
        else:
            entry.update(ph="i", s="t")
        events.append(entry)
    return {"traceEvents": events, "displayTimeUnit": "ns"}


def write_trace(stats: TimingStats, path: str | Path) -> None:
    write_atomically(path, json.dumps(trace_events(stats)))
