"""The schema of a machine file: each table's keys, how each value is read and checked, and defaults.

A key's reader turns the TOML value into the model's (sizes to bytes, clocks to Hz,
bandwidths to bytes per cycle; a string may carry a unit: "512 KiB", "1.8 GHz",
"1.6 TB/s", "64 B/cycle") or raises `InvalidValue`, which the loader reports at the
key's line. docs/machine-file.md is the reference of the same schema.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields
from typing import Any, Protocol

from ziggurat.diagnostics import did_you_mean
from ziggurat.machine.model import VECTOR_OPS, DmaEngine, Machine, MatrixUnit, MemorySpace

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


class InvalidValue(Exception):
    """A value that breaks the schema; the loader turns it into a diagnostic at the key's line."""


def _show(value: Any) -> str:
    """A value as it is written in TOML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value) if isinstance(value, str) else repr(value)


def describe(value: Any) -> str:
    """What a value is, in words: `an integer (3)`, `an array`."""
    names = {
        bool: "a boolean",
        int: "an integer",
        float: "a float",
        str: "a string",
        list: "an array",
        dict: "a table",
    }
    described = names.get(type(value), type(value).__name__)
    return (
        f"{described} ({_show(value)})" if isinstance(value, (bool, int, float, str)) else described
    )


class ReadContext(Protocol):
    """What a reader may need of the file being read: its clock and word size, None while unknown."""

    clock_hz: float | None
    word_bytes: int | None
    word_bytes_given: bool


@dataclass(frozen=True)
class Key:
    """One key of a table: how to read its value, and its default when it is optional."""

    read: Callable[[Any, ReadContext], Any]
    required: bool = False
    default: Any = None
    entries: Callable[[Any, ReadContext], Any] | None = None
    """For a table keyed by "in->acc" dtype pairs: how to read each entry (each on its own line)."""


def _model_default(unit: type, name: str) -> Any:
    """The default the model gives a field of `unit`: a machine file that leaves the key out gets it."""
    (found,) = [f for f in fields(unit) if f.name == name]
    return found.default_factory() if found.default is MISSING else found.default  # type: ignore[misc]


def _integer(minimum: int) -> Callable[[Any, ReadContext], int]:
    def read(value: Any, context: ReadContext) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidValue(f"must be an integer, not {describe(value)}")
        if value < minimum:
            raise InvalidValue(f"must be at least {minimum}, got {value}")
        return value

    return read


def _positive_number(value: Any, context: ReadContext) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidValue(f"must be a number, not {describe(value)}")
    if not (value > 0 and math.isfinite(value)):
        raise InvalidValue(f"must be positive and finite, got {value}")
    return float(value)


def _string(value: Any, context: ReadContext) -> str:
    if not isinstance(value, str):
        raise InvalidValue(f"must be a string, not {describe(value)}")
    if not value.strip():
        raise InvalidValue("must not be empty")
    return value


def _boolean(value: Any, context: ReadContext) -> bool:
    if not isinstance(value, bool):
        raise InvalidValue(f"must be true or false, not {describe(value)}")
    return value


def _one_of(choices: tuple[str, ...]) -> Callable[[Any, ReadContext], str]:
    def read(value: Any, context: ReadContext) -> str:
        text = _string(value, context)
        if text not in choices:
            raise InvalidValue(
                f"must be one of {', '.join(map(_show, choices))}, got {_show(text)}{did_you_mean(text, choices)}"
            )
        return text

    return read


def _strings(value: Any, context: ReadContext) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise InvalidValue(f"must be an array of strings, not {describe(value)}")
    if not value:
        raise InvalidValue("must not be empty")
    items = tuple(_string(item, context) for item in value)
    duplicates = sorted({item for item in items if items.count(item) > 1})
    if duplicates:
        raise InvalidValue(f"lists {', '.join(map(_show, duplicates))} more than once")
    return items


_QUANTITY = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z/]+)\s*$")


def _quantity(value: str, kind: str, example: str, units: list[str]) -> tuple[float, str]:
    match = _QUANTITY.match(value)
    if match is None:
        raise InvalidValue(
            f"must be {kind} like {_show(example)}, got {_show(value)} (accepted units: {', '.join(units)})"
        )
    number, unit = float(match.group(1)), match.group(2)
    if unit not in units:
        raise InvalidValue(
            f"has unknown unit '{unit}' in {_show(value)}{did_you_mean(unit, units)} "
            f"(accepted units: {', '.join(units)})"
        )
    if not (number > 0 and math.isfinite(number)):
        raise InvalidValue(f"must be positive and finite, got {_show(value)}")
    return number, unit


def _size(value: Any, context: ReadContext) -> int:
    """Bytes: an integer, or a string with a unit ("512 KiB"; KB is 1000 bytes, KiB 1024)."""
    if isinstance(value, str):
        number, unit = _quantity(value, "a size", "512 KiB", list(SIZE_UNITS))
        size = number * SIZE_UNITS[unit]
        if size != int(size):
            raise InvalidValue(f"must be a whole number of bytes, got {_show(value)}")
        return int(size)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidValue(
            f'must be a size like "512 KiB" or an integer number of bytes, not {describe(value)}'
        )
    if value <= 0:
        raise InvalidValue(f"must be positive, got {value}")
    return value


def _clock(value: Any, context: ReadContext) -> float:
    """Hz: a number, or a string with a unit ("1.8 GHz")."""
    if isinstance(value, str):
        number, unit = _quantity(value, "a frequency", "1.8 GHz", list(CLOCK_UNITS))
        return number * CLOCK_UNITS[unit]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidValue(
            f'must be a frequency like "1.8 GHz" or a number of Hz, not {describe(value)}'
        )
    return _positive_number(value, context)


def _bandwidth(value: Any, context: ReadContext) -> float | None:
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
            if not context.word_bytes_given:
                raise InvalidValue(
                    f"is in words/cycle ({_show(value)}), "
                    "which needs 'word_bytes' (the bytes in a word) at the top level"
                )
            return None if context.word_bytes is None else number * context.word_bytes
        return None if context.clock_hz is None else number * RATE_UNITS[unit] / context.clock_hz
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidValue(
            f'must be a bandwidth like "1.6 TB/s" or a number of bytes per cycle, not {describe(value)}'
        )
    return _positive_number(value, context)


def _vector_ops(value: Any, context: ReadContext) -> tuple[str, ...]:
    """Kinds of `npu.vec` instruction."""
    ops = _strings(value, context)
    for op in ops:
        if op not in VECTOR_OPS:
            raise InvalidValue(
                f"names unknown operation '{op}'{did_you_mean(op, VECTOR_OPS)} (known: {', '.join(VECTOR_OPS)})"
            )
    return ops


def _paths(value: Any, context: ReadContext) -> tuple[tuple[str, str], ...]:
    """["gm -> l1", ...]: the (source, destination) space pairs of a DMA engine."""
    pairs: list[tuple[str, str]] = []
    for item in _strings(value, context):
        parts = [part.strip() for part in item.split("->")]
        if len(parts) != 2 or not all(parts):
            raise InvalidValue(f'must list paths like "gm -> l1", got {_show(item)}')
        if parts[0] == parts[1]:
            raise InvalidValue(f"path {_show(item)} copies a space onto itself")
        pairs.append((parts[0], parts[1]))
    return tuple(pairs)


def _shape(value: Any, context: ReadContext) -> tuple[int, int, int]:
    if (
        not isinstance(value, list)
        or len(value) != 3
        or not all(isinstance(dim, int) and not isinstance(dim, bool) and dim > 0 for dim in value)
    ):
        raise InvalidValue(f"must be [m, n, k], three positive integers, not {describe(value)}")
    return (value[0], value[1], value[2])


def dtype_pair(key: str) -> tuple[str, str]:
    parts = [part.strip() for part in key.split("->")]
    if len(parts) != 2:
        raise InvalidValue('must name a dtype pair like "f16->f32" (input -> accumulator)')
    for part in parts:
        if part not in DTYPES:
            raise InvalidValue(
                f"names unknown element type '{part}'{did_you_mean(part, DTYPES)} (known: {', '.join(DTYPES)})"
            )
    return (parts[0], parts[1])


def _dtype_table(value: Any, context: ReadContext) -> dict:
    if not isinstance(value, dict):
        raise InvalidValue(
            f'must be a table keyed by dtype pairs like "f16->f32", not {describe(value)}'
        )
    return value


MEMORY_KEYS = {
    "level": Key(_one_of(LEVELS), required=True),
    "capacity": Key(_size, required=True),
    "bandwidth": Key(_bandwidth),
    "read_bandwidth": Key(_bandwidth),
    "write_bandwidth": Key(_bandwidth),
    "latency": Key(_integer(0), default=1),
    "banks": Key(_integer(1), default=_model_default(MemorySpace, "banks")),
    "alignment": Key(_integer(1), default=_model_default(MemorySpace, "alignment")),
    "shared_by_cores": Key(_boolean),
}
DMA_KEYS = {
    "pipe": Key(_string),
    "paths": Key(_paths, required=True),
    "bandwidth": Key(_bandwidth, required=True),
    "setup_latency": Key(_integer(0), default=0),
    "max_dims": Key(_integer(1), default=2),
    "transpose": Key(_boolean, default=_model_default(DmaEngine, "transpose")),
    "pad": Key(_boolean, default=_model_default(DmaEngine, "pad")),
    "cast": Key(_boolean, default=_model_default(DmaEngine, "cast")),
    "shared_bandwidth": Key(_string),
}
MATRIX_KEYS = {
    "name": Key(_string, default="matrix"),
    "pipe": Key(_string),
    "shape": Key(_shape, required=True),
    "macs_per_cycle": Key(_dtype_table, required=True, entries=_positive_number),
    "shapes": Key(_dtype_table, default=_model_default(MatrixUnit, "shapes"), entries=_shape),
    "a_space": Key(_string, required=True),
    "b_space": Key(_string, required=True),
    "c_space": Key(_string, required=True),
    "dataflow": Key(_one_of(DATAFLOWS)),
    "rows": Key(_integer(1)),
    "cols": Key(_integer(1)),
    "latency": Key(_integer(0), default=_model_default(MatrixUnit, "latency")),
}
VECTOR_KEYS = {
    "name": Key(_string, default="vector"),
    "pipe": Key(_string),
    "bandwidth": Key(_bandwidth, required=True),
    "spaces": Key(_strings, required=True),
    "ops": Key(_vector_ops, required=True),
    "latency": Key(_integer(0), default=1),
    "transcendental_cost": Key(_positive_number, default=1.0),
}
SYNC_KEYS = {
    "scalar_pipe": Key(_string, default="scalar"),
    "flag_ids": Key(_integer(1), default=8),
    "sync_cores_latency": Key(_integer(0), default=_model_default(Machine, "sync_cores_latency")),
    "pipes": Key(_strings),
}
TOP_KEYS = {
    "name": Key(_string),
    "description": Key(_string, default=""),
    "extends": Key(_string),
    "clock": Key(_clock, required=True),
    "cores": Key(_integer(1), required=True),
    "word_bytes": Key(_integer(1), default=_model_default(Machine, "word_bytes")),
}
TABLES = {"memory": True, "dma": False, "matrix": True, "vector": True, "sync": False}
"""The top-level tables, and whether each is required."""

KEY_HINTS = {
    "bytes_per_cycle": "write 'bandwidth = N' (a plain number is bytes per cycle)",
    "size": "the size of a memory space is 'capacity'",
    "frequency": "the clock frequency is 'clock'",
}
