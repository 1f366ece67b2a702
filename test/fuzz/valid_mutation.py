"""Category `valid`: valid IR changed so that it stays valid, through `ziggurat-opt` and `ziggurat-run`.

A case takes a chunk of a seed file (`seeds.IR_SEED_DIRS`, split at `// -----`)
that `ziggurat-opt` accepts (`valid_chunks`) and applies one to three of these
mutations, none of which changes what the IR means:

* `rename`: every SSA value and block label renamed, consistently, to fresh
  names in one of MLIR's spellings (`%v3`, `%3`, `%a.b_3`, `%$x-3`, long ones)
  or to a permutation of the names already there;
* `reorder`: two adjacent ops of a block swapped, both free of side effects
  (xDSL's `is_side_effect_free`), neither a terminator nor holding a region,
  the later not using the earlier's results;
* `whitespace`: a run of whitespace between tokens replaced by another
  (newlines, tabs, several spaces), or whitespace put after `(`, `[`, `{`, `<`,
  `,` or before `)`, `]`, `}`, `>` (not inside `->`), or on either side of `=` or `:`;
* `comment`: a `//` comment added at the end of a line or on a line of its own.

Strings and comments are never touched. `ziggurat-opt` (sometimes with a pass)
and `ziggurat-run` (on one of the chunk's functions) must end as they did on
the unmutated chunk: where that succeeded, a diagnostic is `refused` (a valid
input refused) and other printed results are a `mismatch`. ziggurat-opt's output
is compared parsed and printed again without value names (after a reorder, as a
multiset of lines), ziggurat-run's with the result labels (argument names at the
npu level) left out.
"""

from __future__ import annotations

import functools
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from .ir_mutation import OPT_PIPELINES, RUN_TIMEOUT_S, TIMED_OUT
from .outcome import IR_LOCATION, Outcome, run_in_process
from .seeds import SPLIT_MARKER, function_names, ir_seeds

SEGMENT = re.compile(
    r'(?P<comment>//[^\n]*)|(?P<string>"(?:[^"\\\n]|\\.)*"?)|(?P<space>\s+)|(?P<code>[^\s"/]+|/)'
)
VALUE_NAME = re.compile(r"[%^](?:[0-9]+|[a-zA-Z$._-][a-zA-Z0-9$._-]*)")
"""An SSA value (`%`) or block label (`^`) as MLIR's lexer reads it."""
AFTER, BEFORE = "([{<,=:", ")]}>=:"
"""Whitespace may go after and before these characters (but never inside `->`)."""
WHITESPACE = (" ", "  ", "\n", "\n\n", "\t", "\n    ", " \n\t ", "\n  \n")
COMMENTS = (
    "note",
    "}",
    "%x = graph.relu %y : tensor<2xf32>",
    '"unterminated',
    "expected-error {{bad}}",
    "ünïcödé ∀x",
    "",
    "// nested",
    "{ ( [ <",
)
NAME_SPELLINGS = {
    "v": "v{}",
    "digits": "{}",
    "dotted": "a.b_{}",
    "dollar": "$x-{}",
    "long": "n" * 40 + "{}",
}
"""Fresh names by style (`{}` is the value's number); the other style, `permute`, shuffles the names there are."""
RESULT_LABEL = re.compile(r"^[^\s:]+: ", re.MULTILINE)
OUTPUT_ARGUMENT = re.compile(r"%result\d+")
"""The loop level's out-params, found by name (`ziggurat.interpreters.loop_interpreter`): never renamed."""


@dataclass
class ValidCase:
    seed: str
    chunk_line: int
    original: str
    mutations: list[str]
    text: str
    reordered: bool
    pipeline: str | None
    function: str | None

    def describe(self) -> str:
        pipeline = f", -p '{self.pipeline}'" if self.pipeline else ""
        return f"{self.seed} (chunk at line {self.chunk_line + 1}): {'; '.join(self.mutations)}{pipeline}"


# --------------------------------------------------------------------------- #
# The inputs
# --------------------------------------------------------------------------- #


@functools.cache
def valid_chunks() -> tuple[tuple[str, int, str], ...]:
    """(seed, line offset, text) of each seed chunk that `ziggurat-opt` accepts as it is."""
    from ziggurat.tools.ziggurat_opt import split_input

    chunks = []
    for seed, text in ir_seeds():
        for chunk, offset in split_input(text) if SPLIT_MARKER in text else [(text, 0)]:
            if _baseline_opt(chunk, None).kind == "success":
                chunks.append((seed, offset, chunk))
    return tuple(chunks)


# --------------------------------------------------------------------------- #
# The mutations
# --------------------------------------------------------------------------- #


def segments(text: str) -> list[tuple[str, int, int]]:
    """(kind, start, end) of each comment, string, whitespace run and run of other characters."""
    return [(m.lastgroup or "code", m.start(), m.end()) for m in SEGMENT.finditer(text)]


def _code_matches(text: str, pattern: re.Pattern[str]) -> list[re.Match[str]]:
    return [
        m
        for kind, start, end in segments(text)
        if kind == "code"
        for m in pattern.finditer(text, start, end)
    ]


def rename(text: str, names: dict[str, str]) -> str:
    """`text` with each value name (sigil included) of `names` replaced, outside strings and comments."""
    pieces, last = [], 0
    for match in _code_matches(text, VALUE_NAME):
        pieces += [text[last : match.start()], names.get(match[0], match[0])]
        last = match.end()
    return "".join(pieces) + text[last:]


@st.composite
def _renaming(draw, text: str) -> tuple[str, str]:
    names = [
        name
        for name in dict.fromkeys(m[0] for m in _code_matches(text, VALUE_NAME))
        if not OUTPUT_ARGUMENT.fullmatch(name)
    ]
    style = draw(st.sampled_from((*NAME_SPELLINGS, "permute")))
    mapping: dict[str, str] = {}
    for sigil in "%^":
        old = [name for name in names if name[0] == sigil]
        if style == "permute":
            new = draw(st.permutations(old))
        else:
            new = [sigil + NAME_SPELLINGS[style].format(i) for i in range(len(old))]
        mapping.update(zip(old, new))
    return rename(text, mapping), f"rename ({style}, {len(mapping)} names)"


def swappable_ops(text: str) -> list[tuple[int, int, int]]:
    """(first, second, end) line indices of each pair of adjacent side-effect-free ops that may swap:
    the first takes lines [first, second), the second [second, end)."""
    from xdsl.traits import IsTerminator, is_side_effect_free

    from ziggurat.context import default_context
    from ziggurat.diagnostics import DiagnosticError, collect_diagnostics, op_location
    from ziggurat.parsing import parse_source

    try:
        with collect_diagnostics():
            module = parse_source(default_context(), text, "input.mlir")
    except DiagnosticError:
        return []
    lines = text.split("\n")

    def starts_line(op) -> int | None:
        """The 0-based line the op starts, if only its results come before it there."""
        location = op_location(op)
        if location is None:
            return None
        line, column = location.line.data - 1, location.column.data - 1
        return line if re.fullmatch(r"\s*", lines[line][:column]) else None

    def movable(op) -> bool:
        return not op.regions and not op.has_trait(IsTerminator) and is_side_effect_free(op)

    pairs = []
    for op in module.walk():
        following = op.next_op
        if (
            following is None
            or following.next_op is None
            or not (movable(op) and movable(following))
        ):
            continue
        if any(operand.owner is op for operand in following.operands):
            continue
        first, second, end = starts_line(op), starts_line(following), starts_line(following.next_op)
        if first is not None and second is not None and end is not None and first < second < end:
            pairs.append((first, second, end))
    return pairs


@st.composite
def _reordering(draw, text: str) -> tuple[str, str] | None:
    pairs = swappable_ops(text)
    if not pairs:
        return None
    first, second, end = draw(st.sampled_from(pairs))
    lines = text.split("\n")
    lines[first:end] = lines[second:end] + lines[first:second]
    return "\n".join(lines), f"reorder lines {first + 1}-{second} and {second + 1}-{end}"


@st.composite
def _reformatting(draw, text: str) -> tuple[str, str] | None:
    parts = segments(text)
    # A whitespace run next to a comment ends the comment or starts the next line: left alone.
    runs = [
        (start, end)
        for i, (kind, start, end) in enumerate(parts)
        if kind == "space"
        and all(parts[j][0] != "comment" for j in (i - 1, i + 1) if 0 <= j < len(parts))
    ]
    gaps = [
        position
        for kind, start, end in parts
        if kind == "code"
        for position in range(start, end + 1)
        if (
            (position > start and text[position - 1] in AFTER)
            or (position < end and text[position] in BEFORE)
        )
        and text[position - 1 : position + 1] != "->"
    ]
    spots = [*runs, *((p, p) for p in gaps)]
    if not spots:
        return None
    start, end = draw(st.sampled_from(spots))
    space = draw(st.sampled_from(WHITESPACE))
    verb = "replace whitespace" if end > start else "insert whitespace"
    return text[:start] + space + text[end:], f"{verb} at {start} with {space!r}"


@st.composite
def _commenting(draw, text: str) -> tuple[str, str]:
    lines = text.split("\n")
    i = draw(st.integers(0, len(lines) - 1))
    comment = "// " + draw(st.sampled_from(COMMENTS))
    # A string never spans lines, so the end of a line is outside one.
    if draw(st.booleans()):
        lines[i] += "  " + comment
        where = f"after line {i + 1}"
    else:
        lines.insert(i, comment)
        where = f"before line {i + 1}"
    return "\n".join(lines), f"comment {comment!r} {where}"


MUTATIONS: dict[str, Callable[[str], st.SearchStrategy]] = {
    "rename": _renaming,
    "reorder": _reordering,
    "whitespace": _reformatting,
    "comment": _commenting,
}


@st.composite
def valid_cases(draw) -> ValidCase:
    seed, offset, original = draw(st.sampled_from(valid_chunks()))
    text, mutations, reordered = original, [], False
    for kind in draw(st.lists(st.sampled_from(sorted(MUTATIONS)), min_size=1, max_size=3)):
        mutated = draw(MUTATIONS[kind](text))
        if mutated is None:
            continue  # nothing of that kind to change in this chunk
        text, mutation = mutated
        mutations.append(mutation)
        reordered |= kind == "reorder"
    names = function_names(original)
    function = draw(st.sampled_from([None, *names])) if names else None
    pipeline = draw(st.sampled_from(OPT_PIPELINES))
    return ValidCase(
        seed, offset, original, mutations or ["none"], text, reordered, pipeline, function
    )


# --------------------------------------------------------------------------- #
# Running and judging
# --------------------------------------------------------------------------- #


def _opt_argv(path: Path, pipeline: str | None) -> list[str]:
    return [str(path)] + (["-p", pipeline] if pipeline else [])


def _run_argv(path: Path, function: str | None) -> list[str]:
    return [str(path), "--timeout", RUN_TIMEOUT_S] + (["--function", function] if function else [])


def _in_process(tool: str, text: str, argv: Callable[[Path], list[str]]) -> Outcome:
    from ziggurat.tools import ziggurat_opt, ziggurat_run

    main = {"ziggurat-opt": ziggurat_opt.main, "ziggurat-run": ziggurat_run.main}[tool]
    with tempfile.TemporaryDirectory(prefix="ziggurat-fuzz-") as workdir:
        path = Path(workdir) / "input.mlir"
        path.write_text(text)
        return run_in_process(main, argv(path), IR_LOCATION)


@functools.lru_cache(maxsize=4096)
def _baseline_opt(text: str, pipeline: str | None) -> Outcome:
    return _in_process("ziggurat-opt", text, lambda path: _opt_argv(path, pipeline))


@functools.lru_cache(maxsize=4096)
def _baseline_run(text: str, function: str | None) -> Outcome:
    return _in_process("ziggurat-run", text, lambda path: _run_argv(path, function))


def without_names(text: str) -> str:
    """`text` (printed IR) parsed and printed again without value names and block labels, so that
    the printer numbers them (`%0`, `^bb0`); `text` itself if it does not parse."""
    from ziggurat.context import default_context
    from ziggurat.diagnostics import DiagnosticError, collect_diagnostics
    from ziggurat.parsing import parse_source

    try:
        with collect_diagnostics():
            module = parse_source(default_context(), text, "output.mlir")
    except DiagnosticError:
        return text
    for op in module.walk():
        for result in op.results:
            result.name_hint = None
        for region in op.regions:
            for block in region.blocks:
                block.name_hint = None
                for argument in block.args:
                    argument.name_hint = None
    return str(module)


def unordered_lines(text: str) -> str:
    """The lines of `text` without value names, sorted: the same for two orders of the same ops."""
    return "\n".join(
        sorted(VALUE_NAME.sub(lambda match: match[0][0], line) for line in text.splitlines())
    )


def _first_difference(expected: str, actual: str) -> str:
    for number, (e, a) in enumerate(zip(expected.splitlines(), actual.splitlines()), 1):
        if e != a:
            return f"line {number}: expected {e.strip()!r}, got {a.strip()!r}"
    return f"{len(expected.splitlines())} lines expected, {len(actual.splitlines())} printed"


def judge(outcome: Outcome, baseline: Outcome, same: Callable[[str], str]) -> Outcome:
    """`outcome` of the mutated input, failed if the unmutated input succeeded and this did not,
    or printed something else once both outputs went through `same`."""
    if baseline.kind != "success" or not outcome.ok:
        return outcome
    if any(TIMED_OUT in o.stderr for o in (outcome, baseline)):
        return outcome  # --timeout measures wall-clock time: on a busy machine one run may pass it and not the other
    if outcome.kind == "diagnostic":
        outcome.kind, outcome.detail = "refused", "the unmutated input succeeded"
    elif (expected := same(baseline.stdout)) != (actual := same(outcome.stdout)):
        outcome.kind = "mismatch"
        outcome.detail = (
            f"other output than the unmutated input's: {_first_difference(expected, actual)}"
        )
    return outcome


def check_valid_case(case: ValidCase, workdir: Path) -> dict[str, Outcome]:
    from ziggurat.tools import ziggurat_opt, ziggurat_run

    path = workdir / "input.mlir"
    path.write_text(case.text)
    opt_same: Callable[[str], str] = without_names
    if case.reordered:
        opt_same = lambda text: unordered_lines(without_names(text))  # noqa: E731
    opt = run_in_process(ziggurat_opt.main, _opt_argv(path, case.pipeline), IR_LOCATION)
    run = run_in_process(ziggurat_run.main, _run_argv(path, case.function), IR_LOCATION)
    return {
        "ziggurat-opt": judge(opt, _baseline_opt(case.original, case.pipeline), opt_same),
        "ziggurat-run": judge(
            run, _baseline_run(case.original, case.function), lambda t: RESULT_LABEL.sub("", t)
        ),
    }
