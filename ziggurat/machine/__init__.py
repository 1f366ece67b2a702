"""The machine model: one TOML schema for an accelerator, loaded into frozen dataclasses.

API (what the npu dialect, lowering, interpreter and timing model use):

    load_machine(name_or_path) -> Machine   # a preset name ("davinci", "systolic", "tensorcore") or a TOML path
    list_presets() -> list[str]
    register_preset(name, path)             # plugins; also the entry-point group `ziggurat.machines`
    machine_sources(name_or_path), machine_here(name_or_path, sources)
                                            # the files a machine is read from; the same machine on another host
    Machine: name, description, clock_hz, cores, memories, dmas, matrix, vector,
             scalar_pipe, pipes, flag_ids, source, word_bytes
             dma_for(src, dst), peak_macs_per_cycle(in, acc), peak_flops(in, acc),
             global_memory(), global_bandwidth()
    MemorySpace, DmaEngine, MatrixUnit (m, n, k, dtypes, shapes, shape_for(in, acc)), VectorUnit
    MachineError(DiagnosticError)           # every problem of a file at once, each at its TOML line

Quantities are in bytes and cycles once loaded; the file may give them with units
("512 KiB", "1.8 GHz", "1.6 TB/s", "64 B/cycle"). docs/machine-file.md is the
schema reference; `python -m ziggurat.machine check FILE` validates a file.

tomllib keeps no positions, so each diagnostic finds its line by scanning the
text for the table header or key it is about (`_TomlFile`). A file may
`extends = "davinci"` (a preset or a path relative to it): tables merge key by
key, any other value (lists included) replaces the base's; a problem is
reported in whichever file the offending key comes from.
"""

from __future__ import annotations

import argparse
import difflib
import json
import math
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ziggurat.diagnostics import Diagnostic, DiagnosticError, did_you_mean, run_main
from ziggurat.plugins import loaded_entry_points

PRESET_DIR = Path(__file__).parent / "presets"

# The operations an `npu.vec.*` op can name; a machine file lists the subset its vector unit has.
VECTOR_OPS = (
    "add", "mul", "max", "min", "exp", "rsqrt", "relu", "cast", "reduce", "broadcast", "select",
    "sub", "div", "adds", "muls", "dup",
)  # fmt: skip
ENTRY_POINT_GROUP = "ziggurat.machines"

LEVELS = ("global", "local")
DATAFLOWS = ("os", "ws", "is")
DTYPES = ("f16", "bf16", "f32", "f64", "f8E4M3FN", "f8E5M2", "i4", "i8", "i16", "i32", "i64", "ui8")
"""Element types a matrix unit may name (MLIR spellings)."""

SIZE_UNITS = {
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
    "TiB": 2**40,
}
CLOCK_UNITS = {"Hz": 1.0, "kHz": 1e3, "MHz": 1e6, "GHz": 1e9}
RATE_UNITS = {f"{unit}/s": float(factor) for unit, factor in SIZE_UNITS.items()}
"""Bandwidth per second, converted to bytes per cycle at the machine's clock."""
CYCLE_UNITS = ("B/cycle", "words/cycle")


# --------------------------------------------------------------------------- #
# The model
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class MemorySpace:
    name: str
    capacity: int
    """Bytes: per core for local spaces, the whole device for global ones."""
    level: str
    """"global" (shared by all cores, e.g. HBM/DRAM) or "local"."""
    read_bytes_per_cycle: float
    """For a global space: what all cores together can read."""
    write_bytes_per_cycle: float
    latency: int
    """Cycles."""
    banks: int = 1
    alignment: int = 32
    """Bytes; buffer offsets must be multiples of it."""
    shared_by_cores: bool = False


@dataclass(frozen=True)
class DmaEngine:
    name: str
    pipe: str
    """The in-order queue the engine issues on."""
    paths: tuple[tuple[str, str], ...]
    """(source space, destination space) pairs it serves."""
    bytes_per_cycle: float
    setup_latency: int
    """Cycles per transfer, before the first byte moves."""
    max_dims: int
    """Dimensions of a strided (N-d) transfer in one instruction."""
    transpose: bool = False
    pad: bool = False
    cast: bool = False
    shared_bandwidth: str | None = None
    """A memory space whose bandwidth this engine shares with every core and engine using it."""


@dataclass(frozen=True)
class MatrixUnit:
    name: str
    pipe: str
    m: int
    n: int
    k: int
    """The instruction shape (of the first dtype pair; see `shapes` for the others)."""
    dtypes: dict[tuple[str, str], float]
    """(input dtype, accumulator dtype) -> MACs per cycle per core."""
    a_space: str
    b_space: str
    c_space: str
    """Where the operands A (MxK), B (KxN) and the accumulator C (MxN) must live."""
    shapes: dict[tuple[str, str], tuple[int, int, int]] = field(default_factory=dict)
    """(input dtype, accumulator dtype) -> (m, n, k) of one instruction."""
    dataflow: str | None = None
    """"os" | "ws" | "is" for a systolic array."""
    rows: int | None = None
    cols: int | None = None
    latency: int = 1

    def shape_for(self, in_dtype: str, acc_dtype: str) -> tuple[int, int, int] | None:
        """The (m, n, k) of one instruction on this dtype pair, or None if the unit lacks the pair."""
        return self.shapes.get((in_dtype, acc_dtype))

    def instruction_shape(self, in_dtype: str, acc_dtype: str) -> tuple[int, int, int]:
        """The (m, n, k) of one instruction on this dtype pair: its own shape, else the unit's `shape`."""
        return self.shape_for(in_dtype, acc_dtype) or (self.m, self.n, self.k)


@dataclass(frozen=True)
class VectorUnit:
    name: str
    pipe: str
    bytes_per_cycle: float
    """Lanes times element bytes: 256 means 128 f16 or 64 f32 lanes."""
    spaces: tuple[str, ...]
    ops: tuple[str, ...]
    latency: int
    transcendental_cost: float
    """Cycle multiplier of exp, rsqrt, ... relative to an add."""

    def lanes(self, element_bytes: int) -> int:
        return int(self.bytes_per_cycle // element_bytes)


@dataclass(frozen=True)
class Machine:
    name: str
    description: str
    clock_hz: float
    cores: int
    memories: dict[str, MemorySpace]
    dmas: dict[str, DmaEngine]
    matrix: MatrixUnit
    vector: VectorUnit
    scalar_pipe: str
    pipes: tuple[str, ...]
    """The scalar pipe, each DMA engine's pipe, the matrix pipe and the vector pipe."""
    flag_ids: int
    """Event ids per (source pipe, destination pipe) pair for set_flag/wait_flag."""
    source: str
    """The TOML file it was loaded from."""
    word_bytes: int = 1
    """The size of a "word" in `words/cycle` bandwidths (SCALE-Sim counts words)."""

    def dma_for(self, src: str, dst: str) -> DmaEngine | None:
        for dma in self.dmas.values():
            if (src, dst) in dma.paths:
                return dma
        return None

    def peak_macs_per_cycle(self, in_dtype: str, acc_dtype: str) -> float:
        """MACs per cycle of one core's matrix unit on the dtype pair (0 if the unit lacks it)."""
        return self.matrix.dtypes.get((in_dtype, acc_dtype), 0.0)

    def peak_flops(self, in_dtype: str, acc_dtype: str) -> float:
        """FLOP/s of the whole device (all cores; a MAC is 2 FLOPs)."""
        return 2 * self.peak_macs_per_cycle(in_dtype, acc_dtype) * self.cores * self.clock_hz

    def global_memory(self) -> MemorySpace:
        return next(space for space in self.memories.values() if space.level == "global")

    def global_bandwidth(self) -> float:
        """Bytes per cycle the global memory reads, all cores together."""
        return self.global_memory().read_bytes_per_cycle


class MachineError(DiagnosticError):
    """A machine file (or name) that cannot be loaded; one diagnostic per problem."""


# --------------------------------------------------------------------------- #
# Presets
# --------------------------------------------------------------------------- #

_PRESETS: dict[str, Path] = {path.stem: path for path in sorted(PRESET_DIR.glob("*.toml"))}
_entry_points_loaded = False


def register_preset(name: str, path: Path | str) -> None:
    """Make `load_machine(name)` (and `extends = name`) load the TOML file at `path`."""
    _PRESETS[name] = Path(path)


def _load_entry_points() -> None:
    """Presets of installed plugins: entry points in `ziggurat.machines` that load to a TOML path."""
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for name, target, where in loaded_entry_points(ENTRY_POINT_GROUP, MachineError):
        if not isinstance(target, (str, Path)):
            raise MachineError(
                Diagnostic("error", f"{where} must load to the path of a TOML file, got {type(target).__name__}")
            )
        _PRESETS.setdefault(name, Path(target))


def list_presets() -> list[str]:
    _load_entry_points()
    return sorted(_PRESETS)


def _resolve(name_or_path: str, relative_to: Path | None = None) -> Path | None:
    """The file a machine name means: a preset unless it looks like a path, else a path."""
    _load_entry_points()
    looks_like_path = "/" in name_or_path or name_or_path.endswith(".toml")
    if not looks_like_path and name_or_path in _PRESETS:
        return _PRESETS[name_or_path]
    path = Path(name_or_path)
    if relative_to is not None and not path.is_absolute():
        path = relative_to / path
    return path if path.is_file() else None


def _unknown_machine(name: str) -> str:
    if "/" in name or name.endswith(".toml"):
        return f"machine file '{name}' does not exist"
    presets = list_presets()
    return (
        f"unknown machine '{name}': neither a preset ({', '.join(presets)}) nor a TOML file"
        f"{did_you_mean(name, presets)}"
    )


_CACHE: dict[Path, tuple[tuple[tuple[Path, str], ...], Machine]] = {}
"""Resolved path -> (the text of each file it was read from, the machine)."""


def _unchanged(sources: tuple[tuple[Path, str], ...]) -> bool:
    try:
        return all(path.read_text(encoding="utf-8") == text for path, text in sources)
    except (OSError, UnicodeDecodeError):
        return False


def load_machine(name_or_path: str | Path) -> Machine:
    """Load a preset by name or a machine TOML file; MachineError lists every problem found.

    Verifiers call this for every op, so machines are cached, for as long as the text of
    the file and of what it extends stays the same.
    """
    path = _resolve(str(name_or_path))
    if path is None:
        raise MachineError(Diagnostic("error", _unknown_machine(str(name_or_path))))
    key = path.resolve()
    if key in _CACHE and _unchanged(_CACHE[key][0]):
        return _CACHE[key][1]
    loader = _Loader(path)
    machine = loader.load()
    _CACHE[key] = (tuple((file.path, file.text) for file in loader.files), machine)
    return machine


def machine_sources(name_or_path: str | Path) -> tuple[tuple[str, str], ...]:
    """The (absolute path, text) of each file a machine is read from, the presets left out (another
    host has those): what `machine_here` needs to read the same machine on a host without the files."""
    load_machine(name_or_path)
    sources = _CACHE[_resolve(str(name_or_path)).resolve()][0]  # type: ignore[union-attr]
    presets = {path.resolve() for path in _PRESETS.values()}
    return tuple((str(path.resolve()), text) for path, text in sources if path.resolve() not in presets)


_MIRRORS: dict[tuple[tuple[str, str], ...], Path] = {}


def machine_here(name_or_path: str, sources: tuple[tuple[str, str], ...]) -> str:
    """`name_or_path` as this host can load it: itself where each file of `sources` is here with the
    same text, else its copy in a private folder that mirrors the files' absolute paths (so an
    `extends` by relative path still finds its base)."""
    if all(_unchanged(((Path(path), text),)) for path, text in sources):
        return name_or_path
    if sources not in _MIRRORS:
        import tempfile

        root = Path(tempfile.mkdtemp(prefix="ziggurat-machine-"))
        for path, text in sources:
            copy = root / Path(path).relative_to(Path(path).anchor)
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_text(text, encoding="utf-8")
        _MIRRORS[sources] = root
    path = Path(name_or_path).resolve()
    return str(_MIRRORS[sources] / path.relative_to(path.anchor))


# --------------------------------------------------------------------------- #
# Finding lines in TOML text
# --------------------------------------------------------------------------- #

_KEY_PART = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')"""
_DOTTED_KEY = rf"{_KEY_PART}(?:\s*\.\s*{_KEY_PART})*"
_HEADER = re.compile(rf"^\s*\[\[?\s*({_DOTTED_KEY})\s*\]\]?")
_KEY_VALUE = re.compile(rf"^\s*({_DOTTED_KEY})\s*=\s*(.*)$")
_INLINE_KEY = re.compile(rf"[{{,]\s*({_DOTTED_KEY})\s*=")


def _split_key(dotted: str) -> tuple[str, ...]:
    return tuple(part[1:-1] if part[0] in "\"'" else part for part in re.findall(_KEY_PART, dotted))


@dataclass
class _TomlFile:
    """One parsed file with the line of each table header and key in it."""

    path: Path
    text: str
    data: dict[str, Any]
    lines: dict[tuple[str, ...], int]

    @staticmethod
    def index(text: str) -> dict[tuple[str, ...], int]:
        lines: dict[tuple[str, ...], int] = {}
        table: tuple[str, ...] = ()
        in_multiline_string = False
        for number, line in enumerate(text.splitlines(), start=1):
            quotes = line.count('"""') + line.count("'''")
            if in_multiline_string:
                in_multiline_string = quotes % 2 == 0
                continue
            if header := _HEADER.match(line):
                table = _split_key(header.group(1))
                for end in range(1, len(table) + 1):
                    lines.setdefault(table[:end], number)
            elif key_value := _KEY_VALUE.match(line):
                key = table + _split_key(key_value.group(1))
                for end in range(len(table) + 1, len(key) + 1):
                    lines.setdefault(key[:end], number)
                value = key_value.group(2)
                if value.startswith("{"):
                    for inner in _INLINE_KEY.finditer(value):
                        lines.setdefault(key + _split_key(inner.group(1)), number)
            in_multiline_string = quotes % 2 == 1
        return lines


def _contains(data: Any, path: tuple[str, ...]) -> bool:
    for part in path:
        if not isinstance(data, dict) or part not in data:
            return False
        data = data[part]
    return True


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


# --------------------------------------------------------------------------- #
# The schema
# --------------------------------------------------------------------------- #


class _Invalid(Exception):
    """A value that breaks the schema; the loader turns it into a diagnostic at the key's line."""


def _show(value: Any) -> str:
    """A value as it is written in TOML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value) if isinstance(value, str) else repr(value)


def _describe(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a float", str: "a string", list: "an array", dict: "a table"}
    described = names.get(type(value), type(value).__name__)
    return f"{described} ({_show(value)})" if isinstance(value, (bool, int, float, str)) else described


@dataclass(frozen=True)
class _Key:
    """One key of a table: how to read its value, and its default when it is optional."""

    read: Callable[[Any, _Loader], Any]
    required: bool = False
    default: Any = None
    entries: Callable[[Any, _Loader], Any] | None = None
    """For a table keyed by "in->acc" dtype pairs: how to read each entry (each on its own line)."""


def _integer(minimum: int) -> Callable[[Any, _Loader], int]:
    def read(value: Any, loader: _Loader) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _Invalid(f"must be an integer, not {_describe(value)}")
        if value < minimum:
            raise _Invalid(f"must be at least {minimum}, got {value}")
        return value

    return read


def _positive_number(value: Any, loader: _Loader) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Invalid(f"must be a number, not {_describe(value)}")
    if not (value > 0 and math.isfinite(value)):
        raise _Invalid(f"must be positive and finite, got {value}")
    return float(value)


def _string(value: Any, loader: _Loader) -> str:
    if not isinstance(value, str):
        raise _Invalid(f"must be a string, not {_describe(value)}")
    if not value.strip():
        raise _Invalid("must not be empty")
    return value


def _boolean(value: Any, loader: _Loader) -> bool:
    if not isinstance(value, bool):
        raise _Invalid(f"must be true or false, not {_describe(value)}")
    return value


def _one_of(choices: tuple[str, ...]) -> Callable[[Any, _Loader], str]:
    def read(value: Any, loader: _Loader) -> str:
        text = _string(value, loader)
        if text not in choices:
            raise _Invalid(
                f"must be one of {', '.join(map(_show, choices))}, got {_show(text)}{did_you_mean(text, choices)}"
            )
        return text

    return read


def _strings(value: Any, loader: _Loader) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise _Invalid(f"must be an array of strings, not {_describe(value)}")
    if not value:
        raise _Invalid("must not be empty")
    items = tuple(_string(item, loader) for item in value)
    duplicates = sorted({item for item in items if items.count(item) > 1})
    if duplicates:
        raise _Invalid(f"lists {', '.join(map(_show, duplicates))} more than once")
    return items


_QUANTITY = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z/]+)\s*$")


def _quantity(value: str, kind: str, example: str, units: list[str]) -> tuple[float, str]:
    match = _QUANTITY.match(value)
    if match is None:
        raise _Invalid(f"must be {kind} like {_show(example)}, got {_show(value)} (accepted units: {', '.join(units)})")
    number, unit = float(match.group(1)), match.group(2)
    if unit not in units:
        raise _Invalid(
            f"has unknown unit '{unit}' in {_show(value)}{did_you_mean(unit, units)} "
            f"(accepted units: {', '.join(units)})"
        )
    if not (number > 0 and math.isfinite(number)):
        raise _Invalid(f"must be positive and finite, got {_show(value)}")
    return number, unit


def _size(value: Any, loader: _Loader) -> int:
    """Bytes: an integer, or a string with a unit ("512 KiB"; KB is 1000 bytes, KiB 1024)."""
    if isinstance(value, str):
        number, unit = _quantity(value, "a size", "512 KiB", list(SIZE_UNITS))
        size = number * SIZE_UNITS[unit]
        if size != int(size):
            raise _Invalid(f"must be a whole number of bytes, got {_show(value)}")
        return int(size)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Invalid(f'must be a size like "512 KiB" or an integer number of bytes, not {_describe(value)}')
    if value <= 0:
        raise _Invalid(f"must be positive, got {value}")
    return value


def _clock(value: Any, loader: _Loader) -> float:
    """Hz: a number, or a string with a unit ("1.8 GHz")."""
    if isinstance(value, str):
        number, unit = _quantity(value, "a frequency", "1.8 GHz", list(CLOCK_UNITS))
        return number * CLOCK_UNITS[unit]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Invalid(f'must be a frequency like "1.8 GHz" or a number of Hz, not {_describe(value)}')
    return _positive_number(value, loader)


def _bandwidth(value: Any, loader: _Loader) -> float | None:
    """Bytes per cycle: a number, or a string in B/cycle, words/cycle or bytes per second.

    None when it cannot be converted because the clock or the word size is itself wrong
    (that mistake has its own diagnostic).
    """
    if isinstance(value, str):
        units = [*CYCLE_UNITS, *RATE_UNITS]
        number, unit = _quantity(value, "a bandwidth", "1.6 TB/s", units)
        if unit == "B/cycle":
            return number
        if unit == "words/cycle":
            if not loader.word_bytes_given:
                raise _Invalid(
                    f"is in words/cycle ({_show(value)}), "
                    "which needs 'word_bytes' (the bytes in a word) at the top level"
                )
            return None if loader.word_bytes is None else number * loader.word_bytes
        return None if loader.clock_hz is None else number * RATE_UNITS[unit] / loader.clock_hz
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Invalid(f'must be a bandwidth like "1.6 TB/s" or a number of bytes per cycle, not {_describe(value)}')
    return _positive_number(value, loader)


def _vector_ops(value: Any, loader: _Loader) -> tuple[str, ...]:
    """Kinds of `npu.vec` instruction."""
    ops = _strings(value, loader)
    for op in ops:
        if op not in VECTOR_OPS:
            raise _Invalid(
                f"names unknown operation '{op}'{did_you_mean(op, VECTOR_OPS)} (known: {', '.join(VECTOR_OPS)})"
            )
    return ops


def _paths(value: Any, loader: _Loader) -> tuple[tuple[str, str], ...]:
    """["gm -> l1", ...]: the (source, destination) space pairs of a DMA engine."""
    pairs: list[tuple[str, str]] = []
    for item in _strings(value, loader):
        parts = [part.strip() for part in item.split("->")]
        if len(parts) != 2 or not all(parts):
            raise _Invalid(f'must list paths like "gm -> l1", got {_show(item)}')
        if parts[0] == parts[1]:
            raise _Invalid(f"path {_show(item)} copies a space onto itself")
        pairs.append((parts[0], parts[1]))
    return tuple(pairs)


def _shape(value: Any, loader: _Loader) -> tuple[int, int, int]:
    if (
        not isinstance(value, list)
        or len(value) != 3
        or not all(isinstance(dim, int) and not isinstance(dim, bool) and dim > 0 for dim in value)
    ):
        raise _Invalid(f"must be [m, n, k], three positive integers, not {_describe(value)}")
    return (value[0], value[1], value[2])


def _dtype_pair(key: str) -> tuple[str, str]:
    parts = [part.strip() for part in key.split("->")]
    if len(parts) != 2:
        raise _Invalid('must name a dtype pair like "f16->f32" (input -> accumulator)')
    for part in parts:
        if part not in DTYPES:
            raise _Invalid(
                f"names unknown element type '{part}'{did_you_mean(part, DTYPES)} (known: {', '.join(DTYPES)})"
            )
    return (parts[0], parts[1])


def _dtype_table(value: Any, loader: _Loader) -> dict:
    if not isinstance(value, dict):
        raise _Invalid(f'must be a table keyed by dtype pairs like "f16->f32", not {_describe(value)}')
    return value


MEMORY_KEYS = {
    "level": _Key(_one_of(LEVELS), required=True),
    "capacity": _Key(_size, required=True),
    "bandwidth": _Key(_bandwidth),
    "read_bandwidth": _Key(_bandwidth),
    "write_bandwidth": _Key(_bandwidth),
    "latency": _Key(_integer(0), default=1),
    "banks": _Key(_integer(1), default=1),
    "alignment": _Key(_integer(1), default=32),
    "shared_by_cores": _Key(_boolean),
}
DMA_KEYS = {
    "pipe": _Key(_string),
    "paths": _Key(_paths, required=True),
    "bandwidth": _Key(_bandwidth, required=True),
    "setup_latency": _Key(_integer(0), default=0),
    "max_dims": _Key(_integer(1), default=2),
    "transpose": _Key(_boolean, default=False),
    "pad": _Key(_boolean, default=False),
    "cast": _Key(_boolean, default=False),
    "shared_bandwidth": _Key(_string),
}
MATRIX_KEYS = {
    "name": _Key(_string, default="matrix"),
    "pipe": _Key(_string),
    "shape": _Key(_shape, required=True),
    "macs_per_cycle": _Key(_dtype_table, required=True, entries=_positive_number),
    "shapes": _Key(_dtype_table, default={}, entries=_shape),
    "a_space": _Key(_string, required=True),
    "b_space": _Key(_string, required=True),
    "c_space": _Key(_string, required=True),
    "dataflow": _Key(_one_of(DATAFLOWS)),
    "rows": _Key(_integer(1)),
    "cols": _Key(_integer(1)),
    "latency": _Key(_integer(0), default=1),
}
VECTOR_KEYS = {
    "name": _Key(_string, default="vector"),
    "pipe": _Key(_string),
    "bandwidth": _Key(_bandwidth, required=True),
    "spaces": _Key(_strings, required=True),
    "ops": _Key(_vector_ops, required=True),
    "latency": _Key(_integer(0), default=1),
    "transcendental_cost": _Key(_positive_number, default=1.0),
}
SYNC_KEYS = {
    "scalar_pipe": _Key(_string, default="scalar"),
    "flag_ids": _Key(_integer(1), default=8),
    "pipes": _Key(_strings),
}
TOP_KEYS = {
    "name": _Key(_string),
    "description": _Key(_string, default=""),
    "extends": _Key(_string),
    "clock": _Key(_clock, required=True),
    "cores": _Key(_integer(1), required=True),
    "word_bytes": _Key(_integer(1)),
}
TABLES = {"memory": True, "dma": False, "matrix": True, "vector": True, "sync": False}
"""The top-level tables, and whether each is required."""

KEY_HINTS = {
    "bytes_per_cycle": "write 'bandwidth = N' (a plain number is bytes per cycle)",
    "size": "the size of a memory space is 'capacity'",
    "frequency": "the clock frequency is 'clock'",
}


# --------------------------------------------------------------------------- #
# The loader
# --------------------------------------------------------------------------- #


def _table_name(path: tuple[str, ...]) -> str:
    return "the machine" if not path else f"[{'.'.join(path)}]"


def _key_name(path: tuple[str, ...], key: str) -> str:
    return f"'{key}'" if not path else f"'{key}' in {_table_name(path)}"


def _pair_name(pair: tuple[str, str]) -> str:
    return "->".join(pair)


class _Loader:
    """Reads one machine file (and what it extends) into a Machine, collecting every problem."""

    def __init__(self, path: Path):
        self.path = path
        self.files: list[_TomlFile] = []
        """The file, then the file it extends, and so on."""
        self.diagnostics: list[Diagnostic] = []
        self.clock_hz: float | None = None
        """None while unknown (missing or wrong): bandwidths per second then cannot be converted."""
        self.word_bytes: int | None = None
        self.word_bytes_given = False
        self.misspelt: set[tuple[str, ...]] = set()
        """Keys an unknown key was reported as a misspelling of: not reported missing as well."""

    # -- diagnostics ------------------------------------------------------- #

    def error(self, path: tuple[str, ...], message: str, file: _TomlFile | None = None) -> None:
        """Report a problem with the value at `path`, at its line in the file it comes from
        (or in `file`, for a problem of that file alone).

        Without a line for `path` itself (a missing key), the closest enclosing
        table that has one is used.
        """
        candidates = self.files if file is None else [file]
        for end in range(len(path), -1, -1):
            prefix = path[:end]
            for candidate in candidates:
                if prefix in candidate.lines and _contains(candidate.data, prefix):
                    self._add(Diagnostic("error", message, str(candidate.path), candidate.lines[prefix]))
                    return
        self._add(Diagnostic("error", message, str(candidates[0].path)))

    def _add(self, diagnostic: Diagnostic) -> None:
        if diagnostic not in self.diagnostics:
            self.diagnostics.append(diagnostic)

    # -- reading files ----------------------------------------------------- #

    def load(self) -> Machine:
        data = self._read_chain(self.path)
        machine = None if data is None else self._build(data)
        if machine is None:
            assert self.diagnostics, "a machine file was refused without a diagnostic"
            order = {str(file.path): index for index, file in enumerate(self.files)}
            raise MachineError(sorted(self.diagnostics, key=lambda d: (order.get(d.file or "", -1), d.line or 0)))
        return machine

    def _read_chain(self, path: Path) -> dict[str, Any] | None:
        """The merged data of `path` and the files it extends, or None if one cannot be read."""
        try:
            text = path.read_text(encoding="utf-8")
            data = tomllib.loads(text)
        except (OSError, UnicodeDecodeError) as e:
            self._add(Diagnostic("error", f"cannot read machine file: {e}", str(path)))
            return None
        except tomllib.TOMLDecodeError as e:
            # tomllib's messages end in "(at line L, column C)" or "(at end of document)".
            where = re.search(r"\(at line (\d+), column \d+\)|\(at end of document\)", str(e))
            message = str(e)[: where.start()].rstrip() if where else str(e)
            line = int(where.group(1)) if where and where.group(1) else max(len(text.splitlines()), 1)
            self._add(Diagnostic("error", f"invalid TOML: {message}", str(path), line))
            return None
        file = _TomlFile(path, text, data, _TomlFile.index(text))
        self.files.append(file)
        base_name = data.get("extends")
        if not isinstance(base_name, str):
            return data  # no base, or one of the wrong type that _build reports
        base_path = _resolve(base_name, relative_to=path.parent)
        if base_path is None:
            self.error(("extends",), _unknown_machine(base_name), file)
            return None
        if any(read.path.resolve() == base_path.resolve() for read in self.files):
            chain = " -> ".join(str(read.path) for read in self.files)
            self.error(("extends",), f"'extends' makes a cycle: {chain} -> {base_path}", file)
            return None
        base = self._read_chain(base_path)
        if base is None:
            return None
        merged = _merge(base, data)
        del merged["extends"]
        if "name" not in data:
            # A variant of davinci is not davinci: without a name of its own it is named after its file.
            merged.pop("name", None)
        return merged

    # -- checking tables --------------------------------------------------- #

    def _table(self, data: Any, path: tuple[str, ...], keys: Mapping[str, _Key]) -> dict[str, Any] | None:
        """The values of a table read by `keys`, defaults filled in and None for each wrong one.

        None for the whole table if `data` is not a table.
        """
        if not isinstance(data, dict):
            self.error(path, f"{_table_name(path)} must be a table, not {_describe(data)}")
            return None
        values: dict[str, Any] = {}
        for key, value in data.items():
            spec = keys.get(key)
            if spec is None:
                self._unknown_key(path, key, keys)
                continue
            try:
                values[key] = spec.read(value, self)
            except _Invalid as e:
                values[key] = None
                self.error(path + (key,), f"{_key_name(path, key)} {e}")
                continue
            if spec.entries is not None:
                values[key] = self._dtype_entries(value, path + (key,), spec.entries)
        for key, spec in keys.items():
            if key in data:
                continue
            if spec.required:
                self._missing(path, key)
            values[key] = spec.default
        return values

    def _unknown_key(self, path: tuple[str, ...], key: str, keys: Mapping[str, _Key]) -> None:
        hint = did_you_mean(key, keys) or (f"; {KEY_HINTS[key]}" if key in KEY_HINTS else "")
        for meant in difflib.get_close_matches(key, list(keys), n=1, cutoff=0.6):
            self.misspelt.add(path + (meant,))
        where = f" in {_table_name(path)}" if path else ""
        self.error(path + (key,), f"unknown key '{key}'{where}{hint}")

    def _missing(self, path: tuple[str, ...], key: str, alternative: str = "") -> None:
        """Report a missing key, unless a misspelling of it was already reported."""
        if path + (key,) in self.misspelt:
            return
        if not path and key in TABLES:
            what = "[memory.NAME] tables" if key == "memory" else f"[{key}] table"
            self.error(path, f"the machine has no {what}")
        else:
            self.error(path, f"{_table_name(path)} is missing '{key}'{alternative}")

    def _dtype_entries(
        self, data: dict, path: tuple[str, ...], read: Callable[[Any, _Loader], Any]
    ) -> dict[tuple[str, str], Any] | None:
        entries: dict[tuple[str, str], Any] = {}
        for key, value in data.items():
            try:
                entries[_dtype_pair(key)] = read(value, self)
            except _Invalid as e:
                self.error(path + (key,), f"{_key_name(path, key)} {e}")
        return entries if len(entries) == len(data) else None

    def _named_tables(self, data: Any, path: tuple[str, ...], keys: Mapping[str, _Key]) -> dict[str, dict[str, Any]]:
        """A table of named tables, e.g. [memory.l1], [memory.ub]."""
        if not isinstance(data, dict):
            self.error(path, f"{_table_name(path)} must hold tables like [{path[0]}.NAME], not {_describe(data)}")
            return {}
        tables = {}
        for name, table in data.items():
            values = self._table(table, path + (name,), keys)
            if values is not None:
                tables[name] = values
        return tables

    def _check_space(self, path: tuple[str, ...], key: str, space: str | None, defined: Mapping[str, Any]) -> None:
        if space is not None and space not in defined:
            self.error(
                path + (key,),
                f"'{key}' in {_table_name(path)} names memory space '{space}', which is not defined"
                f"{did_you_mean(space, defined)} (defined: {', '.join(defined) or 'none'})",
            )

    # -- building the machine ---------------------------------------------- #

    def _build(self, data: dict[str, Any]) -> Machine | None:
        def any_table(value: Any, loader: _Loader) -> Any:
            return value  # each table is checked by its own reader below

        top = self._table(
            data, (), {**TOP_KEYS, **{name: _Key(any_table, required) for name, required in TABLES.items()}}
        )
        assert top is not None
        self.clock_hz = top["clock"]
        self.word_bytes, self.word_bytes_given = top["word_bytes"], "word_bytes" in data
        # Spaces defined by name, even those with mistakes: a DMA path naming one is then not a second error.
        defined = data["memory"] if isinstance(data.get("memory"), dict) else {}
        memories = self._memories(top["memory"]) if top["memory"] is not None else {}
        dmas = self._dmas(top["dma"] if top["dma"] is not None else {}, defined)
        matrix = self._matrix(top["matrix"], defined) if top["matrix"] is not None else None
        vector = self._vector(top["vector"], defined) if top["vector"] is not None else None
        sync = self._table(top["sync"] if top["sync"] is not None else {}, ("sync",), SYNC_KEYS)
        pipes = self._pipes(sync, dmas, matrix, vector) if sync is not None else None
        if self.diagnostics or matrix is None or vector is None or sync is None or pipes is None:
            return None
        return Machine(
            name=top["name"] or self.path.stem,
            description=top["description"],
            clock_hz=top["clock"],
            cores=top["cores"],
            memories=memories,
            dmas=dmas,
            matrix=matrix,
            vector=vector,
            scalar_pipe=sync["scalar_pipe"],
            pipes=pipes,
            flag_ids=sync["flag_ids"],
            source=str(self.path),
            word_bytes=self.word_bytes or 1,
        )

    def _memories(self, data: Any) -> dict[str, MemorySpace]:
        memories: dict[str, MemorySpace] = {}
        for name, values in self._named_tables(data, ("memory",), MEMORY_KEYS).items():
            path = ("memory", name)
            given = data[name]
            one_sided = [key for key in ("read_bandwidth", "write_bandwidth") if key not in given]
            if "bandwidth" not in given and one_sided:
                self._missing(path, "bandwidth", f" (or '{one_sided[0]}')" if len(one_sided) == 1 else "")
            alignment = values["alignment"]
            if alignment is not None and alignment & (alignment - 1):
                self.error(
                    path + ("alignment",), f"'alignment' in {_table_name(path)} must be a power of two, got {alignment}"
                )
                continue
            read = values["read_bandwidth"] if "read_bandwidth" in given else values["bandwidth"]
            write = values["write_bandwidth"] if "write_bandwidth" in given else values["bandwidth"]
            required = [values[key] for key in ("level", "capacity", "latency", "banks", "alignment")]
            if None in (*required, read, write):
                continue
            shared = values["shared_by_cores"]
            memories[name] = MemorySpace(
                name=name,
                capacity=values["capacity"],
                level=values["level"],
                read_bytes_per_cycle=read,
                write_bytes_per_cycle=write,
                latency=values["latency"],
                banks=values["banks"],
                alignment=alignment,
                shared_by_cores=values["level"] == "global" if shared is None else shared,
            )
        if isinstance(data, dict) and data:
            global_spaces = [
                name for name, table in data.items() if isinstance(table, dict) and table.get("level") == "global"
            ]
            if not global_spaces:
                self.error(("memory",), 'no memory space has level = "global" (the memory all cores share, e.g. HBM)')
            for extra in global_spaces[1:]:
                self.error(
                    ("memory", extra, "level"),
                    f"[memory.{extra}] is global, but [memory.{global_spaces[0]}] already is; "
                    "a machine has one global memory",
                )
        return memories

    def _dmas(self, data: Any, defined: Mapping[str, Any]) -> dict[str, DmaEngine]:
        dmas: dict[str, DmaEngine] = {}
        served: dict[tuple[str, str], str] = {}
        for name, values in self._named_tables(data, ("dma",), DMA_KEYS).items():
            path = ("dma", name)
            for src, dst in values["paths"] or ():
                self._check_space(path, "paths", src, defined)
                self._check_space(path, "paths", dst, defined)
                if (src, dst) in served:
                    self.error(
                        path + ("paths",),
                        f"path {src} -> {dst} of {_table_name(path)} is already served by [dma.{served[src, dst]}]",
                    )
                served.setdefault((src, dst), name)
            shared = values["shared_bandwidth"]
            self._check_space(path, "shared_bandwidth", shared, defined)
            if shared in defined and values["paths"] and not any(shared in pair for pair in values["paths"]):
                self.error(
                    path + ("shared_bandwidth",),
                    f"'shared_bandwidth' in {_table_name(path)} is '{shared}', "
                    f"but none of its paths reads or writes '{shared}'",
                )
            if any(values[key] is None for key in DMA_KEYS if key not in ("pipe", "shared_bandwidth")):
                continue
            dmas[name] = DmaEngine(
                name=name,
                pipe=values["pipe"] or name,
                paths=values["paths"],
                bytes_per_cycle=values["bandwidth"],
                setup_latency=values["setup_latency"],
                max_dims=values["max_dims"],
                transpose=values["transpose"],
                pad=values["pad"],
                cast=values["cast"],
                shared_bandwidth=values["shared_bandwidth"],
            )
        return dmas

    def _matrix(self, data: Any, defined: Mapping[str, Any]) -> MatrixUnit | None:
        path = ("matrix",)
        values = self._table(data, path, MATRIX_KEYS)
        if values is None:
            return None
        for key in ("a_space", "b_space", "c_space"):
            self._check_space(path, key, values[key], defined)
        rates, shapes = values["macs_per_cycle"], values["shapes"]
        if rates is not None and not rates:
            self.error(path + ("macs_per_cycle",), "[matrix.macs_per_cycle] must list at least one dtype pair")
        if rates is not None and shapes is not None:
            for pair in shapes:
                if pair not in rates:
                    self.error(
                        path + ("shapes", _pair_name(pair)),
                        f"[matrix.shapes] gives a shape for {_pair_name(pair)}, which [matrix.macs_per_cycle] lacks",
                    )
        systolic = ("dataflow", "rows", "cols")
        given = [key for key in systolic if key in data]
        if given and len(given) < len(systolic):
            missing = ", ".join(f"'{key}'" for key in systolic if key not in data)
            self.error(path, f"[matrix] describes a systolic array ({', '.join(given)}) but is missing {missing}")
        elif given and rates and values["rows"] is not None and values["cols"] is not None:
            elements = values["rows"] * values["cols"]
            for pair, rate in rates.items():
                if rate > elements:
                    self.error(
                        path + ("macs_per_cycle", _pair_name(pair)),
                        f"'{_pair_name(pair)}' in [matrix.macs_per_cycle] is {rate:g} MACs per cycle, more than the "
                        f"{values['rows']}x{values['cols']} array's {elements} processing elements can do",
                    )
        if any(values[key] is None for key in MATRIX_KEYS if key not in ("pipe", *systolic)):
            return None
        m, n, k = values["shape"]
        return MatrixUnit(
            name=values["name"],
            pipe=values["pipe"] or values["name"],
            m=m,
            n=n,
            k=k,
            dtypes=dict(rates),
            a_space=values["a_space"],
            b_space=values["b_space"],
            c_space=values["c_space"],
            shapes={pair: shapes.get(pair, (m, n, k)) for pair in rates},
            dataflow=values["dataflow"],
            rows=values["rows"],
            cols=values["cols"],
            latency=values["latency"],
        )

    def _vector(self, data: Any, defined: Mapping[str, Any]) -> VectorUnit | None:
        path = ("vector",)
        values = self._table(data, path, VECTOR_KEYS)
        if values is None:
            return None
        for space in values["spaces"] or ():
            self._check_space(path, "spaces", space, defined)
        if any(values[key] is None for key in VECTOR_KEYS if key != "pipe"):
            return None
        return VectorUnit(
            name=values["name"],
            pipe=values["pipe"] or values["name"],
            bytes_per_cycle=values["bandwidth"],
            spaces=values["spaces"],
            ops=values["ops"],
            latency=values["latency"],
            transcendental_cost=values["transcendental_cost"],
        )

    def _pipes(
        self,
        sync: dict[str, Any],
        dmas: Mapping[str, DmaEngine],
        matrix: MatrixUnit | None,
        vector: VectorUnit | None,
    ) -> tuple[str, ...] | None:
        """Every unit's pipe, in issue order. Two units may not share a pipe, except DMA engines."""
        units: list[tuple[str | None, str, str, tuple[str, ...]]] = [
            (sync["scalar_pipe"], "scalar", "the scalar unit", ("sync", "scalar_pipe"))
        ]
        units += [(dma.pipe, "dma", f"DMA engine '{dma.name}'", ("dma", dma.name)) for dma in dmas.values()]
        if matrix is not None:
            units.append((matrix.pipe, "matrix", f"matrix unit '{matrix.name}'", ("matrix",)))
        if vector is not None:
            units.append((vector.pipe, "vector", f"vector unit '{vector.name}'", ("vector",)))
        owners: dict[str, tuple[str, str]] = {}
        ok = True
        for pipe, kind, unit, path in units:
            if pipe is None:
                ok = False
                continue
            if pipe in owners and not (kind == "dma" and owners[pipe][0] == "dma"):
                self.error(path, f"{unit} issues on pipe '{pipe}', which is already the pipe of {owners[pipe][1]}")
                ok = False
            owners.setdefault(pipe, (kind, unit))
        listed = sync["pipes"]
        if listed is None:
            return tuple(owners) if ok else None
        for pipe, (_, unit) in owners.items():
            if pipe not in listed:
                self.error(("sync", "pipes"), f"[sync] pipes does not list '{pipe}', the pipe of {unit}")
                ok = False
        for pipe in listed:
            if pipe not in owners:
                self.error(
                    ("sync", "pipes"),
                    f"[sync] pipes lists '{pipe}', which no unit issues on{did_you_mean(pipe, owners)}",
                )
                ok = False
        return tuple(listed) if ok else None


# --------------------------------------------------------------------------- #
# `python -m ziggurat.machine check FILE`
# --------------------------------------------------------------------------- #


def summary(machine: Machine) -> str:
    """A few lines a person can check a machine file against."""
    lines = [
        f"{machine.name}: {machine.description}".rstrip(": "),
        f"  {machine.cores} core(s) at {machine.clock_hz / 1e9:g} GHz; pipes: {', '.join(machine.pipes)}",
    ]
    for space in machine.memories.values():
        lines.append(
            f"  memory {space.name}: {space.level}, {space.capacity} B, "
            f"{space.read_bytes_per_cycle:g}/{space.write_bytes_per_cycle:g} B/cycle read/write, "
            f"latency {space.latency}"
        )
    for dma in machine.dmas.values():
        paths = ", ".join(f"{src}->{dst}" for src, dst in dma.paths)
        lines.append(f"  dma {dma.name} (pipe {dma.pipe}): {paths}; {dma.bytes_per_cycle:g} B/cycle")
    for (in_dtype, acc_dtype), rate in machine.matrix.dtypes.items():
        m, n, k = machine.matrix.shapes[in_dtype, acc_dtype]
        tflops = machine.peak_flops(in_dtype, acc_dtype) / 1e12
        lines.append(
            f"  matrix {machine.matrix.name} {in_dtype}->{acc_dtype}: {m}x{n}x{k}, "
            f"{rate:g} MACs/cycle/core, {tflops:g} TFLOP/s peak"
        )
    lines.append(f"  vector {machine.vector.name}: {machine.vector.bytes_per_cycle:g} B/cycle")
    global_memory = machine.global_memory()
    lines.append(
        f"  global bandwidth: {machine.global_bandwidth():g} B/cycle "
        f"({machine.global_bandwidth() * machine.clock_hz / 1e9:g} GB/s) in {global_memory.name}"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ziggurat.machine", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="validate machine files (or preset names) and summarize them")
    check.add_argument("machines", nargs="+", metavar="FILE")
    commands.add_parser("list", help="list the preset names")
    scalesim = commands.add_parser("scalesim", help="print the SCALE-Sim configuration of a systolic machine")
    scalesim.add_argument("machine", metavar="FILE")
    args = parser.parse_args(argv)
    if args.command == "list":
        for name in list_presets():
            print(f"{name}\t{_PRESETS[name]}")
        return 0
    if args.command == "scalesim":
        from ziggurat.machine.scalesim import to_scalesim_config  # it imports this module

        print(to_scalesim_config(load_machine(args.machine)), end="")
        return 0
    problems: list[Diagnostic] = []
    for name in args.machines:
        try:
            print(summary(load_machine(name)))
        except MachineError as e:
            problems += e.diagnostics
    if problems:
        raise MachineError(problems)
    return 0


if __name__ == "__main__":
    run_main(main)
