"""MLIR's `-verify-diagnostics`: `// expected-error {{message}}` annotations in a test's source,
checked against the diagnostics a run produced.

`parse_expected_diagnostics` reads the annotations (`expected-error`, `-warning`, `-note`, `-remark`,
on their own line or `@+N`, `@-N`, `@above`, `@below` it) and `check_expected_diagnostics` gives an
error for each annotation no diagnostic matched and for each diagnostic no annotation expected.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ziggurat.diagnostics import Diagnostic, source_line

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


def parse_expected_diagnostics(
    text: str, filename: str, line_offset: int = 0
) -> list[ExpectedDiagnostic]:
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
