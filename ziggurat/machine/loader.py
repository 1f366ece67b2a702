"""Reading a machine file into a `Machine`: presets, `extends`, validation and diagnostics at TOML lines.

`load_machine` takes a preset name (those in `presets/`, those `register_preset` adds,
those of plugins' `ziggurat.machines` entry points) or a path, and reports every problem
of a file at once, each at the line of the key it is about: tomllib keeps no positions,
so `_TomlFile` finds the line of each table header and key by scanning the text. A file
may `extends = "davinci"` (a preset or a path relative to it): tables merge key by key,
any other value (lists included) replaces the base's, and a problem is reported in
whichever file the offending key comes from.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ziggurat.diagnostics import Diagnostic, DiagnosticError, did_you_mean
from ziggurat.machine.model import DmaEngine, Machine, MatrixUnit, MemorySpace, VectorUnit
from ziggurat.machine.schema import (
    DMA_KEYS,
    KEY_HINTS,
    MATRIX_KEYS,
    MEMORY_KEYS,
    SYNC_KEYS,
    TABLES,
    TOP_KEYS,
    VECTOR_KEYS,
    InvalidValue,
    Key,
    describe,
    dtype_pair,
)
from ziggurat.plugins import loaded_entry_points

PRESET_DIR = Path(__file__).parent / "presets"
ENTRY_POINT_GROUP = "ziggurat.machines"


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
                Diagnostic(
                    "error",
                    f"{where} must load to the path of a TOML file, got {type(target).__name__}",
                )
            )
        _PRESETS.setdefault(name, Path(target))


def list_presets() -> list[str]:
    """The names `load_machine` takes for a preset, sorted."""
    _load_entry_points()
    return sorted(_PRESETS)


def preset_file(name: str) -> Path:
    """The TOML file of a preset listed by `list_presets`."""
    _load_entry_points()
    return _PRESETS[name]


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
    return tuple(
        (str(path.resolve()), text) for path, text in sources if path.resolve() not in presets
    )


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


def split_toml_key(dotted: str) -> tuple[str, ...]:
    """The parts of a dotted TOML key, quotes taken off: `matrix.macs_per_cycle."f16->f32"`."""
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
                table = split_toml_key(header.group(1))
                for end in range(1, len(table) + 1):
                    lines.setdefault(table[:end], number)
            elif key_value := _KEY_VALUE.match(line):
                key = table + split_toml_key(key_value.group(1))
                for end in range(len(table) + 1, len(key) + 1):
                    lines.setdefault(key[:end], number)
                value = key_value.group(2)
                if value.startswith("{"):
                    for inner in _INLINE_KEY.finditer(value):
                        lines.setdefault(key + split_toml_key(inner.group(1)), number)
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
                    self._add(
                        Diagnostic("error", message, str(candidate.path), candidate.lines[prefix])
                    )
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
            raise MachineError(
                sorted(self.diagnostics, key=lambda d: (order.get(d.file or "", -1), d.line or 0))
            )
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
            line = (
                int(where.group(1)) if where and where.group(1) else max(len(text.splitlines()), 1)
            )
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

    def _table(
        self, data: Any, path: tuple[str, ...], keys: Mapping[str, Key]
    ) -> dict[str, Any] | None:
        """The values of a table read by `keys`, defaults filled in and None for each wrong one.

        None for the whole table if `data` is not a table.
        """
        if not isinstance(data, dict):
            self.error(path, f"{_table_name(path)} must be a table, not {describe(data)}")
            return None
        values: dict[str, Any] = {}
        for key, value in data.items():
            spec = keys.get(key)
            if spec is None:
                self._unknown_key(path, key, keys)
                continue
            try:
                values[key] = spec.read(value, self)
            except InvalidValue as e:
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

    def _unknown_key(self, path: tuple[str, ...], key: str, keys: Mapping[str, Key]) -> None:
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
                entries[dtype_pair(key)] = read(value, self)
            except InvalidValue as e:
                self.error(path + (key,), f"{_key_name(path, key)} {e}")
        return entries if len(entries) == len(data) else None

    def _named_tables(
        self, data: Any, path: tuple[str, ...], keys: Mapping[str, Key]
    ) -> dict[str, dict[str, Any]]:
        """A table of named tables, e.g. [memory.l1], [memory.ub]."""
        if not isinstance(data, dict):
            self.error(
                path,
                f"{_table_name(path)} must hold tables like [{path[0]}.NAME], not {describe(data)}",
            )
            return {}
        tables = {}
        for name, table in data.items():
            values = self._table(table, path + (name,), keys)
            if values is not None:
                tables[name] = values
        return tables

    def _check_space(
        self, path: tuple[str, ...], key: str, space: str | None, defined: Mapping[str, Any]
    ) -> None:
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
            data,
            (),
            {**TOP_KEYS, **{name: Key(any_table, required) for name, required in TABLES.items()}},
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
            word_bytes=top["word_bytes"],
            sync_cores_latency=sync["sync_cores_latency"],
        )

    def _memories(self, data: Any) -> dict[str, MemorySpace]:
        memories: dict[str, MemorySpace] = {}
        for name, values in self._named_tables(data, ("memory",), MEMORY_KEYS).items():
            path = ("memory", name)
            given = data[name]
            one_sided = [key for key in ("read_bandwidth", "write_bandwidth") if key not in given]
            if "bandwidth" not in given and one_sided:
                self._missing(
                    path, "bandwidth", f" (or '{one_sided[0]}')" if len(one_sided) == 1 else ""
                )
            alignment = values["alignment"]
            if alignment is not None and alignment & (alignment - 1):
                self.error(
                    path + ("alignment",),
                    f"'alignment' in {_table_name(path)} must be a power of two, got {alignment}",
                )
                continue
            read = values["read_bandwidth"] if "read_bandwidth" in given else values["bandwidth"]
            write = values["write_bandwidth"] if "write_bandwidth" in given else values["bandwidth"]
            required = [
                values[key] for key in ("level", "capacity", "latency", "banks", "alignment")
            ]
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
                name
                for name, table in data.items()
                if isinstance(table, dict) and table.get("level") == "global"
            ]
            if not global_spaces:
                self.error(
                    ("memory",),
                    'no memory space has level = "global" (the memory all cores share, e.g. HBM)',
                )
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
            if (
                shared in defined
                and values["paths"]
                and not any(shared in pair for pair in values["paths"])
            ):
                self.error(
                    path + ("shared_bandwidth",),
                    f"'shared_bandwidth' in {_table_name(path)} is '{shared}', "
                    f"but none of its paths reads or writes '{shared}'",
                )
            if any(
                values[key] is None for key in DMA_KEYS if key not in ("pipe", "shared_bandwidth")
            ):
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
            self.error(
                path + ("macs_per_cycle",),
                "[matrix.macs_per_cycle] must list at least one dtype pair",
            )
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
            self.error(
                path,
                f"[matrix] describes a systolic array ({', '.join(given)}) but is missing {missing}",
            )
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
        units += [
            (dma.pipe, "dma", f"DMA engine '{dma.name}'", ("dma", dma.name))
            for dma in dmas.values()
        ]
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
                self.error(
                    path,
                    f"{unit} issues on pipe '{pipe}', which is already the pipe of {owners[pipe][1]}",
                )
                ok = False
            owners.setdefault(pipe, (kind, unit))
        listed = sync["pipes"]
        if listed is None:
            return tuple(owners) if ok else None
        for pipe, (_, unit) in owners.items():
            if pipe not in listed:
                self.error(
                    ("sync", "pipes"), f"[sync] pipes does not list '{pipe}', the pipe of {unit}"
                )
                ok = False
        for pipe in listed:
            if pipe not in owners:
                self.error(
                    ("sync", "pipes"),
                    f"[sync] pipes lists '{pipe}', which no unit issues on{did_you_mean(pipe, owners)}",
                )
                ok = False
        return tuple(listed) if ok else None
