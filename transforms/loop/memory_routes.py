"""Routes between memory spaces: the shortest chain of DMA paths from one space to another, read from
the machine's `[dma.*] paths`, never from a chip name (docs/lowering.md, "Memory spaces").

    route(davinci, "gm", "l0a")  == ("gm", "l1", "l0a")
    hops(davinci, ("gm", "l1", "l0a"))  ->  [("gm", "l1", mte2), ("l1", "l0a", mte1)]

Ties between chains of the same length go to the engine declared first in the machine file.
"""

from __future__ import annotations

from collections import deque

from ziggurat.machine import DmaEngine, Machine


def route(machine: Machine, source: str, destination: str) -> tuple[str, ...] | None:
    """The spaces from `source` to `destination` (both included) along the fewest DMA hops.

    `(source,)` when they are the same space, None when no chain of engines connects them.
    """
    previous: dict[str, str | None] = {source: None}
    frontier = deque([source])
    while frontier:
        space = frontier.popleft()
        if space == destination:
            return _chain(previous, destination)
        for dma in machine.dmas.values():
            for src, dst in dma.paths:
                if src == space and dst not in previous:
                    previous[dst] = space
                    frontier.append(dst)
    return None


def _chain(previous: dict[str, str | None], last: str) -> tuple[str, ...]:
    spaces = [last]
    while (before := previous[spaces[-1]]) is not None:
        spaces.append(before)
    return tuple(reversed(spaces))


def hops(machine: Machine, chain: tuple[str, ...]) -> list[tuple[str, str, DmaEngine]]:
    """(source space, destination space, engine) for each step of a chain that `route` returned."""
    steps = []
    for src, dst in zip(chain, chain[1:]):
        engine = machine.dma_for(src, dst)
        assert engine is not None, f"{src} -> {dst} is not a DMA path of {machine.name}"
        steps.append((src, dst, engine))
    return steps


def describe_paths(machine: Machine) -> str:
    """The machine's DMA paths as `a -> b, ...`, for diagnostics about a missing route."""
    return ", ".join(f"{src} -> {dst}" for dma in machine.dmas.values() for src, dst in dma.paths)
