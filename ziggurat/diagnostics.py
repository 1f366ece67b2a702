"""MLIR-style diagnostics: `file:line:col: error: message`, the source line and a caret.

    input.mlir:4:3: error: 'graph.transpose' op perm [0, 0] is not a permutation of ...
      %1 = graph.transpose %0 {perm = array<i64: 0, 0>} : ...
      ^

Passes and tools report a user-facing failure by raising `DiagnosticError`, usually through
`raise error_at(op, "cannot tile ...")`, at the op's source location or that of its closest
enclosing op that has one (an op a pass created has none unless the pass copied it). Warnings
and remarks (`emit_warning`, `emit_remark`) reach the innermost `collect_diagnostics()` block,
or stderr outside any. The text of each parsed source is remembered here, so that a diagnostic
can quote its line.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeVar

from xdsl.dialects.builtin import CallSiteLoc, FileLineColLoc, FusedLoc, NameLoc
from xdsl.ir import Attribute, Operation

SEVERITIES = ("error", "warning", "note", "remark")


@dataclass
class Diagnostic:
    severity: str
    """"error" | "warning" | "note" | "remark"."""
    message: str
    file: str | None = None
    line: int | None = None
    """1-based."""
    col: int | None = None
    """1-based."""
    source_line: str | None = None
    notes: list[Diagnostic] = field(default_factory=list)
    name: str | None = None
    """Where, when there is no file position: the name of a `NameLoc` (an ONNX node's)."""

    def format(self) -> str:
        """MLIR's rendering: `file:line:col: severity: message` (`"name": severity: message` at a
        location that is only a name), the source line, a caret, then the notes."""
        parts = [self.file] if self.file is not None else []
        if self.file is not None and self.line is not None:
            parts.append(str(self.line))
            if self.col is not None:
                parts.append(str(self.col))
        if not parts and self.name is not None:
            parts.append(f'"{self.name}"')
        prefix = ":".join(parts) + ": " if parts else ""
        lines = [f"{prefix}{self.severity}: {self.message}"]
        if self.source_line is not None and self.col is not None:
            lines.append(self.source_line)
            lines.append(" " * (self.col - 1) + "^")
        text = "\n".join(lines)
        for note in self.notes:
            text += "\n" + note.format()
        return text


class DiagnosticError(Exception):
    """A user-facing failure: tools print its diagnostics and exit 1."""

    diagnostics: list[Diagnostic]

    def __init__(self, diagnostics: Diagnostic | list[Diagnostic]):
        self.diagnostics = (
            [diagnostics] if isinstance(diagnostics, Diagnostic) else list(diagnostics)
        )
        super().__init__(self.format())

    def format(self) -> str:
        return "\n".join(d.format() for d in self.diagnostics)


# --------------------------------------------------------------------------- #
# Source lines, so that a diagnostic at a FileLineColLoc can quote its line
# --------------------------------------------------------------------------- #

_SOURCES: dict[str, dict[int, list[str]]] = {}
"""filename -> line offset of a parsed chunk -> the chunk's lines (MLIR's SourceMgr, in small)."""


def remember_source(filename: str, text: str, line_offset: int) -> None:
    """Keep `text` (a chunk starting after `line_offset` lines of `filename`) for `source_line`."""
    _SOURCES.setdefault(filename, {})[line_offset] = text.split("\n")


def source_line(filename: str, line: int) -> str | None:
    """The text of line `line` (1-based) of a source parsed with `parse_source`, if known."""
    for offset, lines in _SOURCES.get(filename, {}).items():
        if 0 <= line - offset - 1 < len(lines):
            return lines[line - offset - 1].rstrip("\r")
    return None


def _file_line_col(location: Attribute) -> FileLineColLoc | None:
    match location:
        case FileLineColLoc():
            return location
        case NameLoc():
            return _file_line_col(location.location)
        case CallSiteLoc():
            return _file_line_col(location.callee)
        case FusedLoc():
            for inner in location.locations.data:
                if (found := _file_line_col(inner)) is not None:
                    return found
    return None


_Found = TypeVar("_Found")


def _closest(op: Operation, found_in: Callable[[Attribute], _Found | None]) -> _Found | None:
    """What `found_in` finds in the location of `op`, or of its closest enclosing op where it finds something."""
    current: Operation | None = op
    while current is not None:
        if (found := found_in(current.location)) is not None:
            return found
        current = current.parent_op()
    return None


def op_location(op: Operation) -> FileLineColLoc | None:
    """The source position of `op`, or of its closest enclosing op that has one.

    Ops created by passes usually carry `loc(unknown)`; pointing at the op that
    contains them beats an error with no position at all.
    """
    return _closest(op, _file_line_col)


def op_name_location(op: Operation) -> str | None:
    """The name of the `NameLoc` of `op`, or of its closest enclosing op that has one."""
    return _closest(
        op, lambda location: location.desc.data if isinstance(location, NameLoc) else None
    )


def diagnostic_at(op: Operation, severity: str, message: str) -> Diagnostic:
    """A diagnostic at `op`'s source location (see `op_location`), or at its name where no op
    around it has a file position (ops imported from ONNX are located at their node's name)."""
    assert severity in SEVERITIES, severity
    loc = op_location(op)
    if loc is None:
        return Diagnostic(severity, message, name=op_name_location(op))
    file, line, col = loc.filename.data, loc.line.data, loc.column.data
    return Diagnostic(severity, message, file, line, col, source_line(file, line))


def error_at(op: Operation, message: str) -> DiagnosticError:
    """The error to raise for a failure at `op`: `raise error_at(op, "cannot tile ...")`."""
    return DiagnosticError(diagnostic_at(op, "error", message))


def note_at(op: Operation, message: str) -> Diagnostic:
    """A note to attach to another diagnostic's `notes`."""
    return diagnostic_at(op, "note", message)


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """`"; did you mean 'x'?"` for the closest candidate to a misspelt name, or `""`."""
    matches = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return f"; did you mean '{matches[0]}'?" if matches else ""


# --------------------------------------------------------------------------- #
# Non-fatal diagnostics
# --------------------------------------------------------------------------- #

_HANDLERS: list[list[Diagnostic]] = []


@contextmanager
def collect_diagnostics() -> Iterator[list[Diagnostic]]:
    """Collect the diagnostics `emit`ted inside the block instead of printing them."""
    collected: list[Diagnostic] = []
    _HANDLERS.append(collected)
    try:
        yield collected
    finally:
        _HANDLERS.remove(collected)


def emit(diagnostic: Diagnostic) -> None:
    """Report a diagnostic without failing: to the innermost `collect_diagnostics`, else to stderr."""
    if _HANDLERS:
        _HANDLERS[-1].append(diagnostic)
    else:
        print(diagnostic.format(), file=sys.stderr)


def emit_warning(op: Operation, message: str) -> None:
    emit(diagnostic_at(op, "warning", message))


def emit_remark(op: Operation, message: str) -> None:
    emit(diagnostic_at(op, "remark", message))


def exception_message(e: BaseException) -> str:
    """An xDSL exception's message on one line, as a diagnostic wants it.

    xDSL splits some messages over lines ("... does not verify:\\n<reason>");
    a dump of the module, if any, is in the exception's notes, not its message.
    """
    return (
        " ".join(line.strip() for line in str(e).splitlines() if line.strip()) or type(e).__name__
    )
