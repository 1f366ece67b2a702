"""MLIR-style diagnostics: source locations on parsed ops, `file:line:col: error:` messages.

xDSL parses ops with `loc(unknown)` and reports problems as Python exceptions
(often with a dump of the whole module). ziggurat tools report them the way
MLIR does instead:

    input.mlir:4:3: error: 'graph.transpose' op perm [0, 0] is not a permutation of ...
      %1 = graph.transpose %0 {perm = array<i64: 0, 0>} : ...
      ^

* `parse_source` parses MLIR text and gives every op a `FileLineColLoc` from
  its position in the source (lines count from the start of the whole file,
  `line_offset` shifts them for a chunk of a split file). It remembers the
  source text, so diagnostics at those locations quote the line.
* `verify_module` verifies op by op and reports each failing op at its own
  location.
* Passes and tools report a user-facing failure by raising `DiagnosticError`,
  usually through `raise error_at(op, "cannot tile ...")`. Notes go in
  `Diagnostic.notes` (`note_at(op, ...)` builds one). An op a pass created
  has no location of its own: it is reported at its closest enclosing op
  that has one (copy `op.location` onto replacements to keep precise ones).
  `did_you_mean(name, candidates)` phrases the suggestion for a misspelt name.
* Non-fatal diagnostics (warnings, remarks, notes on their own) go through
  `emit_warning(op, msg)`, `emit_remark(op, msg)` or `emit(diagnostic)`. They
  reach the innermost `collect_diagnostics()` block, which `ziggurat-opt`
  opens around each input chunk (so `--verify-diagnostics` can match
  `expected-warning` annotations); outside any such block they are printed to
  stderr at once.
* `run_main` wraps a console script's `main`: a `DiagnosticError` is printed
  and exits 1; any other exception is an internal error ("internal error,
  please report: ...", exit 2; traceback only with `ZIGGURAT_DEBUG=1`), except
  xDSL's own `ParseError`/`DiagnosticException`, which state a problem with
  the input, and `MemoryError`, an input too large for the machine (exit 1).
  Context for an internal error is attached to the exception as a note
  (`exc.add_note(...)`); `running_pass(name)` adds the crashed pass and the op
  it was rewriting: "internal error, please report: KeyError: 'x' (while
  running pass 'cse' on op 'graph.add' at in.mlir:3:8)". `add_debug_option`
  gives a tool the `--debug` switch (the same as `ZIGGURAT_DEBUG=1`).
* `write_atomically` writes an output file so that a failed run leaves no
  partial file and an existing one untouched.
* `parse_expected_diagnostics` / `check_expected_diagnostics` implement
  MLIR's `-verify-diagnostics`: `// expected-error {{msg}}`, `@+N`, `@-N`,
  `@above`, `@below`, and `expected-warning`/`-note`/`-remark`.
"""

from __future__ import annotations

import argparse
import bisect
import difflib
import math
import os
import re
import struct
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn, TypeVar

from xdsl.context import Context
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    AnyFloat,
    ArrayAttr,
    CallSiteLoc,
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    FusedLoc,
    IntAttr,
    MemRefType,
    ModuleOp,
    NameLoc,
    StringAttr,
    UnknownLoc,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.irdl.dominance import DominanceInfo
from xdsl.irdl import AttributeInvT
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.parser.core import ForwardDeclaredValue
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind
from xdsl.utils.lexer import Span
from xdsl.traits import NoTerminator
from xdsl.utils.exceptions import (
    DiagnosticException,
    MultipleSpansParseError,
    ParseError,
    VerifyException,
)

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
        self.diagnostics = [diagnostics] if isinstance(diagnostics, Diagnostic) else list(diagnostics)
        super().__init__(self.format())

    def format(self) -> str:
        return "\n".join(d.format() for d in self.diagnostics)


# --------------------------------------------------------------------------- #
# Source lines, so that a diagnostic at a FileLineColLoc can quote its line
# --------------------------------------------------------------------------- #

_SOURCES: dict[str, dict[int, list[str]]] = {}
"""filename -> line offset of a parsed chunk -> the chunk's lines (MLIR's SourceMgr, in small)."""


def _remember_source(filename: str, text: str, line_offset: int) -> None:
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
    return _closest(op, lambda location: location.desc.data if isinstance(location, NameLoc) else None)


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


# --------------------------------------------------------------------------- #
# Parsing with locations
# --------------------------------------------------------------------------- #


class _LineIndex:
    """Offset -> (line, column) by binary search: `Span.get_location` counts newlines from the start each time."""

    def __init__(self, text: str, line_offset: int):
        self.starts = [0, *(m.end() for m in re.finditer("\n", text))]
        self.line_offset = line_offset

    def line_col(self, position: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.starts, position) - 1
        return index + 1 + self.line_offset, position - self.starts[index] + 1


class _HexTensorLiteralElement(Parser._TensorLiteralElement):
    """A hexadecimal element of a dense literal: for a float element type, its bit pattern.

    xDSL prints NaN and infinities in dense literals as hex (`dense<0x7FC00000>`),
    as MLIR does, but 0.74 reads the hex back as the integer 2143289344
    (xDSL issue #3370). MLIR reads it as the element type's bits.
    """

    def to_type(self, parser, type):  # pyright: ignore[reportIncompatibleMethodOverride]
        if not isinstance(type, AnyFloat):
            return super().to_type(parser, type)
        assert isinstance(self.value, int)
        width = type.bitwidth
        if self.value >= 1 << width:
            parser.raise_error(
                f"hexadecimal float literal {self.span.text} does not fit the {width} bits of {type}",
                self.span,
            )
        return next(type.iter_unpack(self.value.to_bytes(type.compile_time_size, "little")))


MAX_SPLAT_ELEMENTS = 1 << 24
"""The most elements a splat `dense<v> : tensor<...>` may have.

The parser repeats the element's bytes once per element (xDSL alone expanded
it into one Python value per element, about 90 bytes each at the peak): a few
characters must not exhaust the machine's memory.
"""


# xDSL's string-literal pattern nests `+` inside `*` (`"(?:[^"\\...]+|\\...)*"`): on a quote with no
# closing one on its line, the regex engine backtracks through every split of the line's characters,
# 2^n tries (a stray `"` before a 40-character line hung the parser for minutes; ir fuzzer find).
# The same language with one character per repetition fails in linear time. The lexer is built
# inside xDSL's Parser.__init__, which already lexes the first token, hence the class attribute.
MLIRLexer._unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')


_ANGLES = re.compile(r"->|[<>]")
_MEMOIZED_TYPE = re.compile(r"(?:memref|tensor|vector)<")
_MEMOIZED_ATTRIBUTE = re.compile(r"array<")
_TYPE_COLON = re.compile(r"\s*:\s*")


def _after_closing_angle(text: str, start: int) -> int | None:
    """The position after the `>` closing the first `<` from `start` (an arrow's `>` closes
    nothing), by counting: a guess the parser confirms before it trusts it."""
    depth = 0
    for match in _ANGLES.finditer(text, start):
        if match.group() != "->":
            depth += 1 if match.group() == "<" else -1
            if depth == 0:
                return match.end()
    return None


class _LocatingParser(Parser):
    """xDSL's parser, giving each op without an explicit `loc(...)` its source position
    (and reading hexadecimal float elements of dense literals as bit patterns,
    refusing splats too large to expand)."""

    def __init__(self, ctx: Context, text: str, filename: str, lines: _LineIndex):
        super().__init__(ctx, text, filename)
        self._lines = lines
        self._filename_attr = StringAttr(filename)
        self._first_uses: dict[str, Span] = {}
        self._forward_names: dict[ForwardDeclaredValue, str] = {}
        self._memoized: dict[str, Attribute] = {}

    def parse_optional_type(self):
        return self._memoize(_MEMOIZED_TYPE, super().parse_optional_type)

    def parse_optional_attribute(self):
        return self._memoize(_MEMOIZED_ATTRIBUTE, super().parse_optional_attribute)

    def _memoize(self, starts: re.Pattern[str], parse: Callable[[], Attribute | None]) -> Attribute | None:
        """`parse()`, or what it gave for the same text before: an npu file spells a few hundred
        distinct memref types 20,000 times, and parsing each again was a fifth of parsing the file.
        A text is remembered only when the parse consumed exactly it (up to the `>` closing its
        first `<`), so the same characters elsewhere parse to the same attribute."""
        text, start = self.lexer.input.content, self._current_token.span.start
        if not starts.match(text, start) or (end := _after_closing_angle(text, start)) is None:
            return parse()
        key = text[start:end]
        if (known := self._memoized.get(key)) is not None:
            self._resume_from(end)
            return known
        parsed = parse()
        after = self._current_token.span.start
        if parsed is not None and after >= end and not text[end:after].strip():
            self._memoized[key] = parsed
        return parsed

    def parse_dense_int_or_fp_elements_attr(self, type):
        """A splat `dense<v> : T` is `v` packed once, its bytes repeated (xDSL builds a list of
        every element and packs each in Python: 11.4 M for ResNet-50's weights, half of parsing
        its npu file). `DenseIntOrFPElementsAttr.from_list` of one value repeats its bytes, as
        xDSL's parser does for a hex splat: the same attribute. Other literals go to xDSL."""
        start = self._current_token.span.start
        self.parse_punctuation("<", " in dense attribute")
        if self._current_token.kind in (MLIRTokenKind.L_SQUARE, MLIRTokenKind.STRING_LIT, MLIRTokenKind.GREATER):
            self._resume_from(start)
            try:
                return super().parse_dense_int_or_fp_elements_attr(type)
            except ParseError as error:
                raise self._at_literal(error, start) from None
        element = self._parse_tensor_literal_element()
        self.parse_punctuation(">", " in dense attribute")
        type_start = self._current_token.span.start
        if type is None:
            self.parse_punctuation(":", " in dense attribute")
            type_start = self._current_token.span.start
            type = self._parse_dense_literal_type()
        elements = math.prod(type.get_shape())
        if elements > MAX_SPLAT_ELEMENTS:
            self.raise_error(
                f"splat dense literal of {type} has {elements} elements, more than the "
                f"{MAX_SPLAT_ELEMENTS} the parser can expand",
                Span(type_start, self._current_token.span.start, self.lexer.input),
            )
        value = element.to_type(self, type.element_type)
        return DenseIntOrFPElementsAttr.from_list(type, [value] if elements else [])

    def _at_literal(self, error: ParseError, start: int) -> ParseError:
        """xDSL checks a dense literal against its type once it has read both, and reports a
        mismatch at the token after them, on the next op's line: point at the literal instead."""
        text = self.lexer.input.content
        literal_end = _after_closing_angle(text, start)
        colon = None if literal_end is None else _TYPE_COLON.match(text, literal_end)
        type_end = None if colon is None else _after_closing_angle(text, colon.end())
        if type(error) is not ParseError or type_end is None or error.span.start < type_end:
            return error  # an error inside the literal or its type is where it is
        return ParseError(Span(start, type_end, self.lexer.input), error.msg)

    def parse_operation(self) -> Operation:
        start = self._current_token.span.start
        line, col = self._lines.line_col(start)
        try:
            op = super().parse_operation()
        except (struct.error, OverflowError) as e:
            # xDSL packs array<i64: ...> and other literals without a range check first.
            raise ParseError(
                Span(start, self._current_token.span.start, self.lexer.input),
                f"a value of this op is out of range for its type ({e})",
            ) from None
        except ValueError as e:
            # Custom op parsers convert words to values unchecked (linalg.generic's iterator
            # types: "'par5llel' is not a valid IteratorType").
            raise ParseError(
                Span(start, self._current_token.span.start, self.lexer.input), f"invalid value in this op: {e}"
            ) from None
        if isinstance(op.location, UnknownLoc):
            op.location = FileLineColLoc(self._filename_attr, IntAttr(line), IntAttr(col))
        return op

    def _parse_tensor_literal_element(self) -> Parser._TensorLiteralElement:
        token = self._current_token
        if token.kind == MLIRTokenKind.INTEGER_LIT and token.text[:2] in ("0x", "0X"):
            self._consume_token(MLIRTokenKind.INTEGER_LIT)
            return _HexTensorLiteralElement(False, int(token.text, 16), token.span)
        return super()._parse_tensor_literal_element()

    def resolve_operand(self, operand: UnresolvedOperand, type: AttributeInvT) -> SSAValue[AttributeInvT]:
        if operand.operand_name not in self.ssa_values:
            self._first_uses.setdefault(operand.operand_name, operand.span)
        value = super().resolve_operand(operand, type)
        if isinstance(value, ForwardDeclaredValue):
            self._forward_names[value] = operand.operand_name
        return value

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        try:
            module = super().parse_module(allow_implicit_module)
        except ParseError as e:
            # xDSL reports values never defined at the end of the input; MLIR points at the use.
            undefined = [name for name in self.forward_ssa_references if name in self._first_uses]
            if e.msg.startswith("values used but not defined") and undefined:
                raise ParseError(self._first_uses[undefined[0]], f"use of undefined value '%{undefined[0]}'") from None
            raise
        self._check_no_forward_references_left(module)
        return module

    def _check_no_forward_references_left(self, module: ModuleOp) -> None:
        # A value used before its name is defined in a nested region (lines swapped) can stay a
        # placeholder that xDSL does not report; the verifiers then crash on it.
        for op in module.walk():
            for operand in op.operands:
                if isinstance(operand, ForwardDeclaredValue):
                    name = self._forward_names.get(operand, "?")
                    if (span := self._first_uses.get(name)) is None:
                        raise error_at(op, f"use of undefined value '%{name}'")
                    raise ParseError(span, f"use of undefined value '%{name}'")

    def _get_op_by_name(self, name: str) -> type[Operation]:
        if op_type := self.ctx.get_optional_op(name, dialect_stack=self._parser_state.dialect_stack):
            return op_type
        # The name token is already consumed: point back at it rather than past it.
        start = self.lexer.input.content.rfind(name, 0, self._current_token.span.start)
        where = Span(start, start + len(name), self.lexer.input) if start >= 0 else None
        dialect_name = name.split(".", 1)[0] if "." in name else None
        dialect = self.ctx.get_optional_dialect(dialect_name) if dialect_name else None
        if dialect is not None:
            ops = [op.name for op in dialect.operations]
            self.raise_error(f"unknown operation '{name}' in dialect '{dialect_name}'{did_you_mean(name, ops)}", where)
        if dialect_name is not None:
            dialects = self.ctx.registered_dialect_names
            self.raise_error(
                f"unknown dialect '{dialect_name}' (in operation '{name}'){did_you_mean(dialect_name, dialects)}",
                where,
            )
        # A bare name inside e.g. a func.func body may be a misspelt `func.` op.
        nearby = [
            op.name.split(".", 1)[1]
            for d in self._parser_state.dialect_stack
            if (enclosing := self.ctx.get_optional_dialect(d)) is not None
            for op in enclosing.operations
        ]
        self.raise_error(f"unknown operation '{name}'{did_you_mean(name, nearby)}", where)


def parse_source(
    ctx: Context, text: str, filename: str, line_offset: int = 0, *, allow_implicit_module: bool = True
) -> ModuleOp:
    """Parse MLIR text, attaching a `FileLineColLoc` to every op that has no explicit `loc(...)`.

    `line_offset` is the number of lines before `text` in `filename` (for a
    chunk of a split file). Text with no ops (only comments, say) is an empty
    module, as in MLIR. Parse errors raise `DiagnosticError`.
    """
    _remember_source(filename, text, line_offset)
    lines = _LineIndex(text, line_offset)
    parser = _LocatingParser(ctx, text, filename, lines)
    try:
        if allow_implicit_module and parser._current_token.kind == MLIRTokenKind.EOF:
            module = ModuleOp([])
        else:
            module = parser.parse_module(allow_implicit_module)
    except ParseError as e:
        raise DiagnosticError(_parse_error_diagnostic(e, filename, lines)) from None
    except VerifyException as e:
        # Attribute and op builders verify their parameters while the parser runs.
        span = parser._current_token.span
        raise DiagnosticError(_span_diagnostic(str(e), span.start, filename, lines)) from None
    if isinstance(module.location, UnknownLoc):
        # An implicit module starts where the text does, so that an error about
        # the module as a whole ("no function to run") still names the file.
        module.location = FileLineColLoc(StringAttr(filename), IntAttr(line_offset + 1), IntAttr(1))
    return module


def _span_diagnostic(message: str, position: int, filename: str, lines: _LineIndex, severity: str = "error"):
    line, col = lines.line_col(position)
    return Diagnostic(severity, message, filename, line, col, source_line(filename, line))


def _parse_error_diagnostic(e: ParseError, filename: str, lines: _LineIndex) -> Diagnostic:
    diagnostic = _span_diagnostic(e.msg, e.span.start, filename, lines)
    if isinstance(e, MultipleSpansParseError):
        for span, msg in e.refs:
            note = msg if msg is not None else (e.ref_text or "see here").rstrip(":")
            diagnostic.notes.append(_span_diagnostic(note, span.start, filename, lines, "note"))
    return diagnostic


# --------------------------------------------------------------------------- #
# Verification
# --------------------------------------------------------------------------- #


def verify_module(module: Operation) -> None:
    """Verify every op of `module`; `DiagnosticError` with one diagnostic per failing op, at that op."""
    diagnostics: list[Diagnostic] = []
    dominance = _Dominance()
    for op in module.walk():
        try:
            _verify_affine_divisors(op)
            with _without_module_dump():
                op.verify(verify_nested_ops=False)
            _verify_regions_not_empty(op)
            _verify_linalg_index(op)
            _verify_scf_for_step(op)
            _verify_subview_layout(op)
        except DiagnosticException as e:
            diagnostics.append(diagnostic_at(op, "error", f"'{op.name}' op {exception_message(e)}"))
            continue
        for index, operand in enumerate(op.operands):
            if not dominance.dominates_use(operand, op):
                diagnostic = diagnostic_at(op, "error", f"'{op.name}' op operand #{index} does not dominate this use")
                if isinstance(operand, OpResult):
                    diagnostic.notes.append(note_at(operand.op, "operand defined here"))
                diagnostics.append(diagnostic)
                break
    if diagnostics:
        raise DiagnosticError(diagnostics)


def _raise_without_dump(self: Operation, message: str, underlying_error: Exception) -> NoReturn:
    raise underlying_error


@contextmanager
def _without_module_dump() -> Iterator[None]:
    """xDSL's `Operation.verify` reports a failing custom verifier through `emit_error`, which
    prints the whole module into the exception's notes. `verify_module` reports the op at its
    own location and never shows that dump; printing it once per failing op made verifying a
    large file with many errors quadratic (most of the fuzzer's time on test/graph/invalid.mlir)."""
    emit_error = Operation.emit_error
    Operation.emit_error = _raise_without_dump  # type: ignore[method-assign]
    try:
        yield
    finally:
        Operation.emit_error = emit_error  # type: ignore[method-assign]


class _Dominance:
    """MLIR's SSA dominance rule, which xDSL's verifier does not check.

    A value must be defined before its use: earlier in the same block, or in a
    block that dominates the use's block, or in an enclosing region. Without
    this check a swapped pair of lines verifies, and fails later wherever the
    value is read (the interpreter, a pass). The body of a `builtin.module` is
    a graph region, where order does not matter.
    """

    def __init__(self):
        self._positions: dict[Block, dict[Operation, int]] = {}
        self._regions: dict[Region, DominanceInfo] = {}

    def dominates_use(self, value: SSAValue, user: Operation) -> bool:
        if isinstance(value, OpResult):
            definer: Operation | None = value.op
            block = definer.parent_block()
        elif isinstance(value, BlockArgument):
            definer, block = None, value.block
        else:
            return True
        if block is None or block.parent is None or isinstance(block.parent_op(), ModuleOp):
            return True
        # The user, or its ancestor, that sits in the defining region.
        ancestor: Operation | None = user
        while ancestor is not None and (ancestor.parent_block() is None or ancestor.parent_block().parent is not block.parent):
            ancestor = ancestor.parent_op()
        if ancestor is None:
            return False
        use_block = ancestor.parent_block()
        assert use_block is not None
        if use_block is not block:
            region = block.parent
            if region not in self._regions:
                self._regions[region] = DominanceInfo(region)
            return self._regions[region].dominates(block, use_block)
        if definer is None:
            return True
        positions = self._positions.get(block)
        if positions is None:
            positions = self._positions[block] = {op: i for i, op in enumerate(block.ops)}
        return positions[definer] < positions[ancestor]


def _verify_regions_not_empty(op: Operation) -> None:
    # Block.verify makes this check, but `verify_nested_ops=False` skips it.
    if op.has_trait(NoTerminator):
        return
    for region in op.regions:
        if len(region.blocks) == 1 and region.block.first_op is None:
            raise VerifyException("contains an empty block in a single-block region that expects a terminator")


def _verify_linalg_index(op: Operation) -> None:
    # MLIR's linalg.index verifier, which xDSL lacks: an index past the loops crashed the interpreter.
    from xdsl.dialects.linalg.ops import GenericOp, IndexOp

    if not isinstance(op, IndexOp):
        return
    parent = op.parent_op()
    if not isinstance(parent, GenericOp):
        raise VerifyException("expected parent op with LinalgOp interface")
    dim, loops = op.dim.value.data, len(parent.iterator_types)
    if dim >= loops:
        raise VerifyException(f"expected dim ({dim}) to be lower than the number of loops ({loops}) of the enclosing LinalgOp")


def _verify_scf_for_step(op: Operation) -> None:
    # MLIR's scf.for verifier, which xDSL lacks: a zero step crashed the interpreters.
    from xdsl.dialects.arith import ConstantOp
    from xdsl.dialects.builtin import IntegerAttr
    from xdsl.dialects.scf import ForOp

    if not isinstance(op, ForOp) or not isinstance(step := op.step.owner, ConstantOp):
        return
    if isinstance(step.value, IntegerAttr) and step.value.value.data <= 0:
        raise VerifyException("constant step operand must be positive")


def _affine_maps(attribute: Attribute) -> Iterator[AffineMap]:
    if isinstance(attribute, AffineMapAttr):
        yield attribute.data
    elif isinstance(attribute, ArrayAttr):
        for element in attribute.data:
            yield from _affine_maps(element)


def _verify_affine_divisors(op: Operation) -> None:
    # MLIR's rule for affine expressions: mod, floordiv and ceildiv take a positive constant. xDSL
    # accepts `mod 0`, and evaluating the map (linalg.generic's verifier does) divides by zero.
    from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineConstantExpr

    divisions = (AffineBinaryOpKind.Mod, AffineBinaryOpKind.FloorDiv, AffineBinaryOpKind.CeilDiv)
    for attribute in (*op.attributes.values(), *op.properties.values()):
        for affine_map in _affine_maps(attribute):
            for result in affine_map.results:
                for expr in result.dfs():
                    if (
                        isinstance(expr, AffineBinaryOpExpr)
                        and expr.kind in divisions
                        and isinstance(expr.rhs, AffineConstantExpr)
                        and expr.rhs.value <= 0
                    ):
                        raise VerifyException(f"affine map {affine_map} divides by {expr.rhs.value}: mod, floordiv and ceildiv take a positive constant")


def _verify_subview_layout(op: Operation) -> None:
    # MLIR's memref.subview verifier, which xDSL lacks: the result's layout is the source's strides
    # times the subview's, at the source's offset plus the offsets along them (a zero stride the
    # result type did not say crashed the interpreters).
    from xdsl.dialects.memref import SubviewOp

    if not isinstance(op, SubviewOp):
        return
    source, result = op.source.type, op.result.type
    if not isinstance(source, MemRefType) or not isinstance(result, MemRefType):
        return
    offsets, strides = op.static_offsets.get_values(), op.static_strides.get_values()
    source_strides, source_offset = source.get_strides(), source.get_offset()
    if source.get_num_dims() != result.get_num_dims() or source_strides is None or DYNAMIC_INDEX in source_strides:
        return
    strides_have = result.get_strides()
    if DYNAMIC_INDEX not in strides and strides_have is not None and DYNAMIC_INDEX not in strides_have:
        expected_strides = [s * t for s, t in zip(source_strides, strides)]
        if list(strides_have) != expected_strides:
            raise VerifyException(
                f"expected result type {result} to have strides {expected_strides} (the source's times the subview's)"
            )
    offset_have = result.get_offset()
    if DYNAMIC_INDEX not in offsets and DYNAMIC_INDEX not in (source_offset, offset_have) and None not in (source_offset, offset_have):
        expected_offset = source_offset + sum(o * s for o, s in zip(offsets, source_strides))
        if offset_have != expected_offset:
            raise VerifyException(f"expected result type {result} to have offset {expected_offset}")


def exception_message(e: BaseException) -> str:
    """An xDSL exception's message on one line, as a diagnostic wants it.

    xDSL splits some messages over lines ("... does not verify:\\n<reason>");
    a dump of the module, if any, is in the exception's notes, not its message.
    """
    return " ".join(line.strip() for line in str(e).splitlines() if line.strip()) or type(e).__name__


# --------------------------------------------------------------------------- #
# Console scripts
# --------------------------------------------------------------------------- #


def debug_enabled() -> bool:
    return os.environ.get("ZIGGURAT_DEBUG", "") not in ("", "0")


class _EnableDebug(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None) -> None:
        # Set while the command line is parsed, so that it holds for everything run_main runs after.
        os.environ["ZIGGURAT_DEBUG"] = "1"
        setattr(namespace, self.dest, True)


def add_debug_option(parser: argparse.ArgumentParser) -> None:
    """The `--debug` switch of every console script: tracebacks for internal errors, as `ZIGGURAT_DEBUG=1`."""
    parser.add_argument(
        "--debug",
        action=_EnableDebug,
        nargs=0,
        default=False,
        help="print the Python traceback of an internal error (the same as ZIGGURAT_DEBUG=1)",
    )


def while_running_pass(pass_name: str, e: BaseException) -> str:
    """The note for an exception raised inside a pass: the pass, and the op it was rewriting when known."""
    op = _op_being_rewritten(e)
    if op is None:
        return f"while running pass '{pass_name}'"
    loc = op_location(op)
    at = f" at {loc.filename.data}:{loc.line.data}:{loc.column.data}" if loc is not None else ""
    return f"while running pass '{pass_name}' on op '{op.name}'{at}"


def _op_being_rewritten(e: BaseException) -> Operation | None:
    """The `op` of the innermost `match_and_rewrite` on the traceback, else the innermost `op` of any
    frame (a pass's own walk). The module every pass's `apply` gets says nothing, so it does not count."""
    frames = [frame for frame, _ in traceback.walk_tb(e.__traceback__)]
    candidates = [
        (frame.f_code.co_name, op)
        for frame in reversed(frames)
        if isinstance(op := frame.f_locals.get("op"), Operation) and not isinstance(op, ModuleOp)
    ]
    for function, op in candidates:
        if function == "match_and_rewrite":
            return op
    return candidates[0][1] if candidates else None


@contextmanager
def running_pass(pass_name: str) -> Iterator[None]:
    """Mark an unexpected exception raised inside as a crash of pass `pass_name` (see `while_running_pass`);
    diagnostics go through untouched."""
    try:
        yield
    except (DiagnosticError, DiagnosticException, ParseError):
        raise
    except Exception as e:
        e.add_note(while_running_pass(pass_name, e))
        raise


def parse_command_line(parser: argparse.ArgumentParser, argv: Sequence[str] | None = None) -> argparse.Namespace:
    """`parser.parse_args(argv)`, exiting 1 on a bad command line: argparse exits 2, which
    ziggurat's tools keep for internal errors."""
    try:
        return parser.parse_args(argv)
    except SystemExit as exit:
        raise SystemExit(1 if exit.code == 2 else exit.code) from None


def run_main(main: Callable[[], int | None]) -> NoReturn:
    """Run a console script's `main`; user errors exit 1 with diagnostics, internal errors exit 2."""
    try:
        code = main()
        # Output still buffered would meet a closed stdout at exit, where it cannot be handled.
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly, as other command-line tools do. Python
        # flushes stdout again at exit; point it at devnull so that flush cannot fail.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(141)  # 128 + SIGPIPE, the status of a tool that SIGPIPE ended
    except DiagnosticError as e:
        print(e.format(), file=sys.stderr)
        sys.exit(1)
    except ParseError as e:
        # Text parsed without parse_source: xDSL's span still knows where.
        print(f"{e.span.get_location()}: error: {e.msg}", file=sys.stderr)
        sys.exit(1)
    except DiagnosticException as e:
        # An xDSL exception that escaped conversion still states a problem with the input.
        print(f"error: {exception_message(e)}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
    except MemoryError as e:
        # The input asked for more than the machine has (a huge tensor): a limit, not a bug.
        context = "; ".join(getattr(e, "__notes__", []))
        detail = f": {e}" if str(e) else ""
        print(
            f"error: out of memory{detail}{f' ({context})' if context else ''}; "
            "the input needs more memory than this machine has",
            file=sys.stderr,
        )
        sys.exit(1)
    except Exception as e:
        if debug_enabled():
            traceback.print_exc()
        # One-line notes are context (the pass, the op); xDSL's pattern walker adds a dump of the
        # whole module, which belongs in the --debug traceback only.
        context = "; ".join(note for note in getattr(e, "__notes__", []) if "\n" not in note)
        suffix = f" ({context})" if context else ""
        print(f"internal error, please report: {type(e).__name__}: {e}{suffix}", file=sys.stderr)
        if not debug_enabled():
            print("(run with --debug or ZIGGURAT_DEBUG=1 for a traceback)", file=sys.stderr)
        sys.exit(2)
    sys.exit(code or 0)


def write_atomically(path: str | Path, data: str | bytes) -> None:
    """Write `data` to `path` through a temporary file in the same directory and `os.replace`.

    A reader never sees a partial file, and a failure leaves an existing file untouched.
    """
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
        if path.exists():
            os.chmod(temporary, path.stat().st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


# --------------------------------------------------------------------------- #
# --verify-diagnostics
# --------------------------------------------------------------------------- #

_EXPECTED = re.compile(
    r"(?<![\w-])expected-(?P<severity>error|warning|note|remark)"
    r"(?:@(?P<where>[+-]\d+|above|below))?"
    r"\s*\{\{(?P<message>.*?)\}\}"
)


@dataclass
class ExpectedDiagnostic:
    """One `// expected-<severity>[@where] {{message}}` annotation, resolved to the line it refers to."""

    severity: str
    message: str
    line: int
    """The line the diagnostic must be reported on."""
    annotation_line: int
    annotation_col: int
    file: str


def parse_expected_diagnostics(text: str, filename: str, line_offset: int = 0) -> list[ExpectedDiagnostic]:
    """The annotations in `text` (a chunk starting after `line_offset` lines of `filename`).

    `@+N`/`@-N` are relative to the annotation's line; `@above`/`@below` mean the
    closest line above/below that holds no annotation (as in MLIR).
    """
    lines = text.split("\n")
    annotated = [_EXPECTED.search(line) is not None for line in lines]
    expected: list[ExpectedDiagnostic] = []
    for index, line_text in enumerate(lines):
        for match in _EXPECTED.finditer(line_text):
            where = match["where"]
            target = index
            if where == "above":
                target = index - 1
                while target >= 0 and annotated[target]:
                    target -= 1
            elif where == "below":
                target = index + 1
                while target < len(lines) and annotated[target]:
                    target += 1
            elif where is not None:
                target = index + int(where)
            expected.append(
                ExpectedDiagnostic(
                    match["severity"],
                    match["message"],
                    target + 1 + line_offset,
                    index + 1 + line_offset,
                    match.start() + 1,
                    filename,
                )
            )
    return expected


def _flatten(diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
    flat: list[Diagnostic] = []
    for diagnostic in diagnostics:
        flat.append(diagnostic)
        flat.extend(_flatten(diagnostic.notes))
    return flat


def check_expected_diagnostics(
    expected: Sequence[ExpectedDiagnostic], produced: Sequence[Diagnostic]
) -> list[Diagnostic]:
    """Match produced diagnostics (and their notes) against annotations; the errors for mismatches.

    Each annotation consumes one diagnostic of its severity on its line (of its
    file) whose message contains the annotation's text. Notes with no location (context
    such as "in pass X") cannot be annotated and are not checked. An empty
    result means success.
    """
    remaining = [d for d in _flatten(produced) if d.severity != "note" or d.line is not None]
    errors: list[Diagnostic] = []
    for annotation in expected:
        for candidate in remaining:
            if (
                candidate.severity == annotation.severity
                and (candidate.file, candidate.line) == (annotation.file, annotation.line)
                and annotation.message in candidate.message
            ):
                remaining.remove(candidate)
                break
        else:
            errors.append(
                Diagnostic(
                    "error",
                    f'expected {annotation.severity} "{annotation.message}" was not produced',
                    annotation.file,
                    annotation.annotation_line,
                    annotation.annotation_col,
                    source_line(annotation.file, annotation.annotation_line),
                )
            )
    for unexpected in remaining:
        errors.append(
            Diagnostic(
                "error",
                f"unexpected {unexpected.severity}: {unexpected.message}",
                unexpected.file,
                unexpected.line,
                unexpected.col,
                unexpected.source_line,
            )
        )
    return errors
