"""The valid inputs the generators start from: the repository's own IR files and machine presets."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path

from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
IR_SEED_DIRS = (
    "test/graph",
    "test/tile",
    "test/loop",
    "test/run",
    "examples/graph",
    "test/npu",
    "examples/npu",
)
PRESET_DIR = ROOT / "ziggurat" / "machine" / "presets"
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


LINE_MUTATIONS = ("delete-line", "duplicate-line", "swap-lines")


def text_mutation(draw: Callable, text: str, kind: str, flip_characters: str) -> tuple[str, str]:
    """The mutations of any text format: a line deleted, duplicated or swapped
    (`LINE_MUTATIONS`), a character replaced by one of `flip_characters` (`flip-char`),
    and otherwise a truncation. Returns (mutated text, the mutation in words)."""
    if kind in LINE_MUTATIONS:
        lines = text.split("\n")
        i = draw(st.integers(0, len(lines) - 1))
        if kind == "delete-line":
            del lines[i]
        elif kind == "duplicate-line":
            lines.insert(i, lines[i])
        else:
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        return "\n".join(lines), f"{kind} {i + 1}"
    if kind == "flip-char" and text:
        i = draw(st.integers(0, len(text) - 1))
        c = draw(st.sampled_from(flip_characters))
        return text[:i] + c + text[i + 1 :], f"flip-char {i} to {c!r}"
    i = draw(st.integers(0, len(text)))
    return text[:i], f"truncate at {i}"
