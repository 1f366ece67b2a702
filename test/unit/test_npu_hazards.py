"""The hazard detector against a brute-force oracle, on random programs of three pipes sharing three buffers.

The oracle builds the happens-before graph directly (program order within a pipe,
each set_flag before the wait_flag it satisfies, barriers between everything
before and after them) and looks for two conflicting accesses on different pipes
that no path orders. The interpreter must stop with a hazard exactly when one exists.
"""

from __future__ import annotations

import numpy as np
from hypothesis import event, given, settings
from hypothesis import strategies as st
from test_npu_interpreter import run

from ziggurat.diagnostics import DiagnosticError, collect_diagnostics

PIPES = ("mte2", "mte3", "vector")
REGIONS = 3  # UB buffers %u0..%u2


@st.composite
def programs(draw):
    """(kind, args) steps; a wait is only drawn while a matching set is pending, so none deadlocks."""
    pending: dict[tuple[str, str], int] = {}
    steps = []
    for _ in range(draw(st.integers(2, 14))):
        choices = ["load", "store", "vector", "set", "barrier"]
        waitable = [pair for pair, count in pending.items() if count]
        if waitable:
            choices.append("wait")
        kind = draw(st.sampled_from(choices))
        if kind in ("load", "store"):
            steps.append((kind, (draw(st.integers(0, REGIONS - 1)),)))
        elif kind == "vector":
            steps.append(
                (kind, (draw(st.integers(0, REGIONS - 1)), draw(st.integers(0, REGIONS - 1))))
            )
        elif kind == "set":
            src = draw(st.sampled_from(PIPES))
            dst = draw(st.sampled_from([p for p in PIPES if p != src]))
            pending[(src, dst)] = pending.get((src, dst), 0) + 1
            steps.append((kind, (src, dst)))
        elif kind == "wait":
            pair = draw(st.sampled_from(waitable))
            pending[pair] -= 1
            steps.append((kind, pair))
        else:
            steps.append((kind, ()))
    return steps


def to_mlir(steps) -> str:
    t = 'memref<64xf32, "ub">'
    lines = [f"  %u{r} = npu.buffer offset {256 * r} : {t}" for r in range(REGIONS)]
    for kind, args in steps:
        if kind == "load":
            lines.append(
                f'  npu.dma "mte2" %x[0] -> %u{args[0]}[0] {{shape = array<i64: 64>}} : memref<64xf32, "gm"> -> {t}'
            )
        elif kind == "store":
            lines.append(
                f'  npu.dma "mte3" %u{args[0]}[0] -> %y[0] {{shape = array<i64: 64>}} : {t} -> memref<64xf32, "gm">'
            )
        elif kind == "vector":
            lines.append(f"  npu.vec.relu %u{args[0]}[0] -> %u{args[1]}[0] : {t} -> {t}")
        elif kind in ("set", "wait"):
            lines.append(f'  npu.{kind}_flag "{args[0]}" -> "{args[1]}", 0')
        else:
            lines.append("  npu.barrier")
    body = "\n".join(lines)
    return f'func.func @main(%x: memref<64xf32, "gm">, %y: memref<64xf32, "gm">) {{\n{body}\n  func.return\n}}\n'


def has_race(steps) -> bool:
    pipe_of = {"load": "mte2", "store": "mte3", "vector": "vector"}
    count = len(steps)
    edges: list[set[int]] = [set() for _ in range(count)]
    last_on: dict[str, int] = {}
    sets: dict[tuple[str, str], list[int]] = {}
    for i, (kind, args) in enumerate(steps):
        if kind == "barrier":
            edges[i].update(range(i + 1, count))
            for j in range(i):
                edges[j].add(i)
            continue
        pipe = pipe_of.get(kind) or (args[0] if kind == "set" else args[1])
        if pipe in last_on:
            edges[last_on[pipe]].add(i)
        last_on[pipe] = i
        if kind == "set":
            sets.setdefault(args, []).append(i)
        elif kind == "wait":
            edges[sets[args].pop(0)].add(i)

    def reaches(i: int, j: int) -> bool:
        seen, stack = set(), [i]
        while stack:
            node = stack.pop()
            if node == j:
                return True
            for nxt in edges[node] - seen:
                seen.add(nxt)
                stack.append(nxt)
        return False

    def accesses(kind, args):  # (region, is a write)
        return {"load": [(args[0], True)], "store": [(args[0], False)]}.get(
            kind, [(args[0], False), (args[1], True)] if kind == "vector" else []
        )

    for j, (kind_j, args_j) in enumerate(steps):
        for i in range(j):
            kind_i, args_i = steps[i]
            if pipe_of.get(kind_i) in (None, pipe_of.get(kind_j)) or kind_j not in pipe_of:
                continue
            for region_i, write_i in accesses(kind_i, args_i):
                for region_j, write_j in accesses(kind_j, args_j):
                    if region_i == region_j and (write_i or write_j) and not reaches(i, j):
                        return True
    return False


@settings(max_examples=150, deadline=None)
@given(programs())
def test_hazard_reported_exactly_when_the_oracle_finds_a_race(steps):
    try:
        with collect_diagnostics():  # sets never waited for are warnings, not the point here
            run(to_mlir(steps), [np.zeros(64, np.float32)])
        reported = False
    except DiagnosticError as error:
        assert "may still be" in error.format(), error.format()
        reported = True
    race = has_race(steps)
    event(f"race: {race}")
    assert reported == race
