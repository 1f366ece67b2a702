"""The valid inputs the generators start from: the repository's own IR files and machine presets."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path

from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
IR_SEED_DIRS = ("test/graph", "test/run", "examples/graph", "test/npu")
PRESET_DIR = ROOT / "backends" / "presets"
SPLIT_MARKER = "// -----"
FUNCTION_NAME = re.compile(r"func\.func\s+(?:private\s+|public\s+)?@([\w$.]+)")


@functools.cache
def ir_seeds() -> tuple[tuple[str, str], ...]:
    """(path relative to the repository, text) of every seed `.mlir` file."""
    return tuple(
        (str(path.relative_to(ROOT)), path.read_text())
        for directory in IR_SEED_DIRS
        for path in sorted((ROOT / directory).glob("*.mlir"))
    )


@functools.cache
def machine_seeds() -> tuple[tuple[str, str], ...]:
    """(preset file name, TOML text) of every machine preset."""
    return tuple((path.name, path.read_text()) for path in sorted(PRESET_DIR.glob("*.toml")))


def function_names(text: str) -> list[str]:
    return FUNCTION_NAME.findall(text)


def mutated(
    draw: Callable, seeds: tuple[tuple[str, str], ...], mutate: Callable[[str], st.SearchStrategy]
) -> tuple[str, list[str], str]:
    """A seed drawn from `seeds` with one to three of `mutate`'s mutations: (seed name,
    the mutations in words, the mutated text)."""
    seed, text = draw(st.sampled_from(seeds))
    mutations: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        text, mutation = draw(mutate(text))
        mutations.append(mutation)
    return seed, mutations, text
