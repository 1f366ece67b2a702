"""Parsing MLIR text into a module whose ops carry their source positions.

`parse_source` gives every op without an explicit `loc(...)` a `FileLineColLoc` from where it
starts in the text (lines count from the start of the whole file; `line_offset` shifts them for a
chunk of a split file), remembers the text so that diagnostics at those locations quote the line,
and turns parse errors into `DiagnosticError`s at `file:line:col`. Its parser is xDSL's with the
workarounds of `ziggurat.xdsl_workarounds`, MLIR's wording and positions for unknown ops and
mismatched dense literals, and speed-ups for large files: common tokens lexed by one regular
expression (`FastLexer`), types parsed once per distinct text, splat dense literals packed once.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Callable

from xdsl.context import Context
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    IntAttr,
    ModuleOp,
    StringAttr,
    UnknownLoc,
)
from xdsl.ir import Attribute, Operation
from xdsl.parser.generic_parser import ParserState
from xdsl.utils.exceptions import MultipleSpansParseError, ParseError, VerifyException
from xdsl.utils.lexer import Span, Token
from xdsl.utils.mlir_lexer import (
    KIND_BY_PUNCTUATION_SPELLING,
    MLIRLexer,
    MLIRToken,
    MLIRTokenKind,
    StringLiteral,
)

from ziggurat.diagnostics import (
    Diagnostic,
    DiagnosticError,
    did_you_mean,
    remember_source,
    source_line,
)
from ziggurat.xdsl_workarounds import (
    WorkaroundParser,
    accept_numeric_block_labels,
    keep_dense_array_values,
    lex_string_literals_in_linear_time,
    reuse_integer_dense_arrays,
    reuse_isa_constraints,
)

lex_string_literals_in_linear_time()
accept_numeric_block_labels()
reuse_isa_constraints()
keep_dense_array_values()
reuse_integer_dense_arrays()

MAX_SPLAT_ELEMENTS = 1 << 24
"""The most elements a splat `dense<v> : tensor<...>` may have.

The parser repeats the element's bytes once per element (xDSL alone expanded
it into one Python value per element, about 90 bytes each at the peak): a few
characters must not exhaust the machine's memory.
"""


class _LineIndex:
    """Offset -> (line, column) by binary search: `Span.get_location` counts newlines from the start each time."""

    def __init__(self, text: str, line_offset: int):
        self.starts = [0, *(m.end() for m in re.finditer("\n", text))]
        self.line_offset = line_offset

    def line_col(self, position: int) -> tuple[int, int]:
        index = bisect.bisect_right(self.starts, position) - 1
        return index + 1 + self.line_offset, position - self.starts[index] + 1


_PREFIXED = {
    "%": MLIRTokenKind.PERCENT_IDENT,
    "^": MLIRTokenKind.CARET_IDENT,
    "!": MLIRTokenKind.EXCLAMATION_IDENT,
    "#": MLIRTokenKind.HASH_IDENT,
}
_COMMON_TOKEN = re.compile(
    r"""(?://[^\n]*\n?|\s+)*+  # whitespace and comments, as xDSL skips them
    (?:
      (?P<bare>[a-zA-Z_][a-zA-Z0-9_$.]*+)
    | (?P<prefixed>(?:[%^!]|\#(?!-\}))(?:[0-9]++|[a-zA-Z$._-][a-zA-Z0-9$._-]*+))
    | (?P<integer>(?!0x[0-9a-fA-F])[0-9]++(?!\.))
    | (?P<punctuation>->|[:,()}\[\]<>=+/*?|]|\{(?!-\#)|-)
    | (?P<string>"[^"\\\n\v\f]*+")
    | (?P<at>@[a-zA-Z_][a-zA-Z0-9_$.]*+)
    )""",
    re.ASCII | re.VERBOSE,
)
"""The tokens that make up nearly all of a module's text, with MLIR's (and xDSL's) rules for
each: identifiers, decimal integers, punctuation, strings without escapes."""


class FastLexer(MLIRLexer):
    """xDSL's lexer, lexing the common tokens with one regular expression match each (xDSL's
    `lex` takes several Python steps per character class; it was 0.9 s of the 2.3 s that parsing
    the light ResNet-50's npu program took). Anything else (floats, hex, escaped strings,
    `...`, file metadata, non-ASCII letters, the end of the input, errors) is lexed by xDSL's own
    `lex` from the same position, so tokens and errors are xDSL's."""

    def lex(self) -> MLIRToken:
        match = _COMMON_TOKEN.match(self.input.content, self.pos)
        if match is None:
            return super().lex()
        group = match.lastgroup
        start, end = match.span(group)
        self.pos = end
        if group == "bare":
            return Token(MLIRTokenKind.BARE_IDENT, Span(start, end, self.input))
        if group == "prefixed":
            kind = _PREFIXED[self.input.content[start]]
            return Token(kind, Span(start, end, self.input))
        if group == "integer":
            return Token(MLIRTokenKind.INTEGER_LIT, Span(start, end, self.input))
        if group == "punctuation":
            return Token(
                KIND_BY_PUNCTUATION_SPELLING[match.group(group)], Span(start, end, self.input)
            )
        if group == "string":
            return Token(MLIRTokenKind.STRING_LIT, StringLiteral(start, end, self.input))
        return Token(MLIRTokenKind.AT_IDENT, Span(start, end, self.input))


_ANGLES = re.compile(r"->|[<>]")
_MEMOIZED_TYPE = re.compile(r"(?:memref|tensor|vector)<")
_MEMOIZED_ATTRIBUTE = re.compile(r"array<")
_TYPE_COLON = re.compile(r"\s*:\s*")
_SCALAR_TYPES: dict[str, Attribute] = {}
"""The integer, index and float types parsed so far, by name (they are immutable values)."""


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


class _LocatingParser(WorkaroundParser):
    """xDSL's parser (with ziggurat's workarounds), giving each op without an explicit `loc(...)`
    its source position and refusing splats too large to expand."""

    def __init__(self, ctx: Context, text: str, filename: str, lines: _LineIndex):
        super().__init__(ctx, text, filename)
        self._parser_state = ParserState(FastLexer(self.lexer.input))
        self._lines = lines
        self._filename_attr = StringAttr(filename)
        self._memoized: dict[str, Attribute] = {}

    def parse_optional_type(self):
        return self._memoize(_MEMOIZED_TYPE, super().parse_optional_type)

    def parse_optional_attribute(self):
        return self._memoize(_MEMOIZED_ATTRIBUTE, super().parse_optional_attribute)

    def _parse_optional_integer_or_float_type(self):
        # `i64`, `index`, `f32`: a few names spelt on every other line of npu IR (each integer
        # attribute's type); building and verifying the type again each time is most of
        # parsing `{m = 64 : i64, ...}`
        if self._current_token.kind != MLIRTokenKind.BARE_IDENT:
            return None
        name = self._current_token.text
        if (known := _SCALAR_TYPES.get(name)) is not None:
            self._consume_token()
            return known
        parsed = super()._parse_optional_integer_or_float_type()
        if parsed is not None:
            _SCALAR_TYPES[name] = parsed
        return parsed

    def _memoize(
        self, starts: re.Pattern[str], parse: Callable[[], Attribute | None]
    ) -> Attribute | None:
        """`parse()`, or what it gave for the same text before: an npu file spells a few hundred
        distinct memref types thousands of times each, and parsing them again would cost much of parsing
        the file.
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
        every element and packs each in Python, which for a large model's weights is much of parsing
        its file). `DenseIntOrFPElementsAttr.from_list` of one value repeats its bytes, as
        xDSL's parser does for a hex splat: the same attribute. Other literals go to xDSL."""
        start = self._current_token.span.start
        self.parse_punctuation("<", " in dense attribute")
        if self._current_token.kind in (
            MLIRTokenKind.L_SQUARE,
            MLIRTokenKind.STRING_LIT,
            MLIRTokenKind.GREATER,
        ):
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
        line, col = self._lines.line_col(self._current_token.span.start)
        op = super().parse_operation()
        if isinstance(op.location, UnknownLoc):
            op.location = FileLineColLoc(self._filename_attr, IntAttr(line), IntAttr(col))
        return op

    def _get_op_by_name(self, name: str) -> type[Operation]:
        if op_type := self.ctx.get_optional_op(
            name, dialect_stack=self._parser_state.dialect_stack
        ):
            return op_type
        # The name token is already consumed: point back at it rather than past it.
        start = self.lexer.input.content.rfind(name, 0, self._current_token.span.start)
        where = Span(start, start + len(name), self.lexer.input) if start >= 0 else None
        dialect_name = name.split(".", 1)[0] if "." in name else None
        dialect = self.ctx.get_optional_dialect(dialect_name) if dialect_name else None
        if dialect is not None:
            ops = [op.name for op in dialect.operations]
            self.raise_error(
                f"unknown operation '{name}' in dialect '{dialect_name}'{did_you_mean(name, ops)}",
                where,
            )
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
    ctx: Context,
    text: str,
    filename: str,
    line_offset: int = 0,
    *,
    allow_implicit_module: bool = True,
) -> ModuleOp:
    """Parse MLIR text, attaching a `FileLineColLoc` to every op that has no explicit `loc(...)`.

    `line_offset` is the number of lines before `text` in `filename` (for a
    chunk of a split file). Text with no ops (only comments, say) is an empty
    module, as in MLIR. Parse errors raise `DiagnosticError`.
    """
    remember_source(filename, text, line_offset)
    lines = _LineIndex(text, line_offset)
    try:
        # Building the parser lexes the first token, which can fail already (an unclosed `"`).
        parser = _LocatingParser(ctx, text, filename, lines)
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


def _span_diagnostic(
    message: str, position: int, filename: str, lines: _LineIndex, severity: str = "error"
):
    line, col = lines.line_col(position)
    return Diagnostic(severity, message, filename, line, col, source_line(filename, line))


def _parse_error_diagnostic(e: ParseError, filename: str, lines: _LineIndex) -> Diagnostic:
    diagnostic = _span_diagnostic(e.msg, e.span.start, filename, lines)
    if isinstance(e, MultipleSpansParseError):
        for span, msg in e.refs:
            note = msg if msg is not None else (e.ref_text or "see here").rstrip(":")
            diagnostic.notes.append(_span_diagnostic(note, span.start, filename, lines, "note"))
    return diagnostic
