"""ziggurat.diagnostics, .parsing, .verifier, .cli and .expected_diagnostics: source locations, located verifier
errors, run_main, atomic writes, annotations."""

import os
import stat
import sys

import pytest
from xdsl.dialects.builtin import FileLineColLoc, ModuleOp, UnknownLoc
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from ziggurat.cli import run_main, write_atomically
from ziggurat.context import default_context
from ziggurat.diagnostics import (
    Diagnostic,
    DiagnosticError,
    collect_diagnostics,
    did_you_mean,
    emit_warning,
    error_at,
    note_at,
)
from ziggurat.dialects.graph import ReluOp
from ziggurat.expected_diagnostics import check_expected_diagnostics, parse_expected_diagnostics
from ziggurat.parsing import parse_source
from ziggurat.verifier import verify_module

SOURCE = """\
func.func @f(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = graph.relu %a : tensor<2x3xf32>
    %1 = graph.transpose %0 {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return %1 : tensor<3x2xf32>
}
"""

BAD_PERM = SOURCE.replace("1, 0", "0, 0")


@pytest.fixture(scope="module")
def ctx():
    return default_context()


def location(op):
    assert isinstance(op.location, FileLineColLoc)
    return op.location.filename.data, op.location.line.data, op.location.column.data


def ops_by_name(module):
    return {op.name: op for op in module.walk()}


# --------------------------------------------------------------------------- #
# parse_source
# --------------------------------------------------------------------------- #


def test_every_op_gets_its_source_position(ctx):
    ops = ops_by_name(parse_source(ctx, SOURCE, "in.mlir"))
    assert location(ops["func.func"]) == ("in.mlir", 1, 1)
    assert location(ops["graph.relu"]) == ("in.mlir", 2, 3)
    assert location(ops["graph.transpose"]) == ("in.mlir", 3, 5)
    assert location(ops["func.return"]) == ("in.mlir", 4, 3)


def test_line_offset_shifts_lines_not_columns(ctx):
    ops = ops_by_name(parse_source(ctx, SOURCE, "in.mlir", line_offset=40))
    assert location(ops["graph.transpose"]) == ("in.mlir", 43, 5)


def test_explicit_location_is_kept(ctx):
    text = 'func.func @f() {\n  func.return loc("gen.py":7:9)\n}\n'
    ops = ops_by_name(parse_source(ctx, text, "in.mlir"))
    assert location(ops["func.return"]) == ("gen.py", 7, 9)


def test_text_without_ops_is_an_empty_module(ctx):
    module = parse_source(ctx, "// only a comment\n\n", "in.mlir")
    assert isinstance(module, ModuleOp) and module.body.block.first_op is None


def test_parse_error_is_located_with_source_line(ctx):
    text = SOURCE.replace("%a : tensor<2x3xf32>", "%a tensor<2x3xf32>")
    with pytest.raises(DiagnosticError) as info:
        parse_source(ctx, text, "in.mlir", line_offset=10)
    (d,) = info.value.diagnostics
    assert (d.severity, d.file, d.line, d.col) == ("error", "in.mlir", 12, 22)
    assert d.source_line == "  %0 = graph.relu %a tensor<2x3xf32>"
    assert "':'" in d.message


def test_unknown_op_suggests_a_registered_one(ctx):
    with pytest.raises(DiagnosticError) as info:
        parse_source(ctx, SOURCE.replace("graph.relu", "graph.rleu"), "in.mlir")
    (d,) = info.value.diagnostics
    assert (d.line, d.col) == (2, 8)
    assert (
        d.message == "unknown operation 'graph.rleu' in dialect 'graph'; did you mean 'graph.relu'?"
    )


def test_unknown_dialect_is_named(ctx):
    with pytest.raises(DiagnosticError, match=r"unknown dialect 'qqq' \(in operation 'qqq.relu'\)"):
        parse_source(ctx, SOURCE.replace("graph.relu", "qqq.relu"), "in.mlir")


def test_undefined_value_is_reported_at_its_use(ctx):
    with pytest.raises(DiagnosticError) as info:
        parse_source(ctx, SOURCE.replace("graph.relu %a", "graph.relu %b"), "in.mlir")
    (d,) = info.value.diagnostics
    assert (d.line, d.col, d.message) == (2, 19, "use of undefined value '%b'")


# --------------------------------------------------------------------------- #
# verify_module, error_at, Diagnostic.format
# --------------------------------------------------------------------------- #


def test_verify_module_accepts_valid_ir(ctx):
    verify_module(parse_source(ctx, SOURCE, "in.mlir"))


def test_verify_module_reports_the_failing_op_at_its_location(ctx):
    with pytest.raises(DiagnosticError) as info:
        verify_module(parse_source(ctx, BAD_PERM, "bad.mlir"))
    (d,) = info.value.diagnostics
    assert (d.file, d.line, d.col) == ("bad.mlir", 3, 5)
    assert d.message.startswith("'graph.transpose' op perm [0, 0] is not a permutation")
    # No whole-module dump, unlike xDSL's verify().
    assert "func.func" not in str(info.value)


def test_verify_module_reports_every_failing_op(ctx):
    text = BAD_PERM.replace("-> tensor<3x2xf32> {", "-> tensor<4xf32> {")
    with pytest.raises(DiagnosticError) as info:
        verify_module(parse_source(ctx, text, "bad.mlir"))
    assert [(d.line, d.message.split(" op")[0]) for d in info.value.diagnostics] == [
        (3, "'graph.transpose'"),
        (4, "'func.return'"),
    ]


def test_multi_line_xdsl_messages_become_one_line(ctx):
    text = 'func.func @f(%a: i32) {\n  %0 = "graph.relu"(%a) : (i32) -> i32\n  func.return\n}\n'
    with pytest.raises(DiagnosticError) as info:
        verify_module(parse_source(ctx, text, "in.mlir"))
    (d,) = info.value.diagnostics
    assert (
        d.message
        == "'graph.relu' op operand 'input' at position 0 does not verify: i32 should be of base attribute tensor"
    )


def test_format_is_mlir_style_with_caret(ctx):
    with pytest.raises(DiagnosticError) as info:
        verify_module(parse_source(ctx, BAD_PERM, "bad.mlir"))
    lines = info.value.format().split("\n")
    assert lines[0].startswith("bad.mlir:3:5: error: 'graph.transpose' op perm")
    assert lines[1] == BAD_PERM.split("\n")[2]
    assert lines[2] == "    ^"


def test_format_without_location_and_with_notes():
    d = Diagnostic(
        "error", "no machine", notes=[Diagnostic("note", "see here", "m.toml", 3, 1, "x = 1")]
    )
    assert d.format() == "error: no machine\nm.toml:3:1: note: see here\nx = 1\n^"


def test_error_at_falls_back_to_the_enclosing_op(ctx):
    module = parse_source(ctx, SOURCE, "in.mlir")
    ops = ops_by_name(module)
    created = ReluOp(ops["graph.relu"])
    ops["func.func"].body.block.insert_op_before(created, ops["func.return"])
    assert isinstance(created.location, UnknownLoc)
    d = error_at(created, "cannot tile").diagnostics[0]
    assert (d.file, d.line, d.message) == ("in.mlir", 1, "cannot tile")
    assert note_at(ops["graph.relu"], "here").format().startswith("in.mlir:2:3: note: here")


def test_error_at_unlocated_op_has_no_position():
    func = FuncOp("f", ((), ()))
    func.body.block.add_op(ReturnOp())
    assert error_at(func, "boom").format() == "error: boom"


def test_did_you_mean():
    assert did_you_mean("csee", ["cse", "dce"]) == "; did you mean 'cse'?"
    assert did_you_mean("zzzzzz", ["cse", "dce"]) == ""


# --------------------------------------------------------------------------- #
# Non-fatal diagnostics
# --------------------------------------------------------------------------- #


def test_warnings_reach_the_innermost_collector(ctx):
    op = ops_by_name(parse_source(ctx, SOURCE, "in.mlir"))["graph.relu"]
    with collect_diagnostics() as outer:
        with collect_diagnostics() as inner:
            emit_warning(op, "slow")
        emit_warning(op, "slower")
    assert [(d.severity, d.message, d.line) for d in inner] == [("warning", "slow", 2)]
    assert [d.message for d in outer] == ["slower"]


def test_warnings_without_collector_go_to_stderr(ctx, capsys):
    op = ops_by_name(parse_source(ctx, SOURCE, "in.mlir"))["graph.relu"]
    emit_warning(op, "slow")
    assert capsys.readouterr().err.startswith("in.mlir:2:3: warning: slow\n")


# --------------------------------------------------------------------------- #
# run_main
# --------------------------------------------------------------------------- #


def exit_code(main) -> int:
    with pytest.raises(SystemExit) as info:
        run_main(main)
    return info.value.code


def test_run_main_success_and_explicit_codes():
    assert exit_code(lambda: None) == 0
    assert exit_code(lambda: 3) == 3


def test_run_main_diagnostic_error_exits_1(capsys):
    def main():
        raise DiagnosticError(Diagnostic("error", "bad input", "in.mlir", 1, 1, "x"))

    assert exit_code(main) == 1
    assert capsys.readouterr().err == "in.mlir:1:1: error: bad input\nx\n^\n"


def test_run_main_reports_escaped_xdsl_errors_as_user_errors(ctx, capsys):
    def parse_without_locations():
        Parser(ctx, "func.func @f() {\n  func.retrun\n}\n", "raw.mlir").parse_module()

    def verify_exception():
        raise VerifyException("bad\nthing")

    assert exit_code(parse_without_locations) == 1
    assert (
        capsys.readouterr().err == "raw.mlir:3:1: error: Operation func.retrun is not registered\n"
    )
    assert exit_code(verify_exception) == 1
    assert capsys.readouterr().err == "error: bad thing\n"


def test_run_main_internal_error_exits_2_without_traceback(capsys, monkeypatch):
    monkeypatch.delenv("ZIGGURAT_DEBUG", raising=False)

    def main():
        e = ZeroDivisionError("division by zero")
        e.add_note("in pass my-pass")
        raise e

    assert exit_code(main) == 2
    err = capsys.readouterr().err
    assert (
        "internal error, please report: ZeroDivisionError: division by zero (in pass my-pass)"
        in err
    )
    assert "Traceback" not in err


def test_run_main_internal_error_traceback_with_debug(capsys, monkeypatch):
    monkeypatch.setenv("ZIGGURAT_DEBUG", "1")

    def main():
        raise KeyError("k")

    assert exit_code(main) == 2
    assert "Traceback" in capsys.readouterr().err


# --------------------------------------------------------------------------- #
# write_atomically
# --------------------------------------------------------------------------- #


def test_write_atomically_writes_text_and_bytes(tmp_path):
    write_atomically(tmp_path / "a.txt", "héllo")
    write_atomically(tmp_path / "b.bin", b"\x00\x01")
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "héllo"
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\x01"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.bin"]


def test_write_atomically_failure_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "out.mlir"
    target.write_text("old")

    def failing_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        write_atomically(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.mlir"]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_write_atomically_keeps_permissions_of_the_replaced_file(tmp_path):
    target = tmp_path / "script.sh"
    target.write_text("old")
    target.chmod(0o751)
    write_atomically(target, "new")
    assert stat.S_IMODE(target.stat().st_mode) == 0o751


# --------------------------------------------------------------------------- #
# Expected-diagnostic annotations
# --------------------------------------------------------------------------- #

ANNOTATED = """\
%0 = a  // expected-error {{same line}}
// expected-warning@+2 {{two below}}
// expected-note@-2 {{two above}}
%1 = b
// expected-remark@above {{skips annotated lines}}
// expected-error@below {{next plain line}}  expected-error@below {{twice}}
%2 = c
"""


def test_parse_expected_diagnostics_resolves_every_form():
    expected = parse_expected_diagnostics(ANNOTATED, "t.mlir", line_offset=100)
    assert [(e.severity, e.message, e.line) for e in expected] == [
        ("error", "same line", 101),
        ("warning", "two below", 104),
        ("note", "two above", 101),
        ("remark", "skips annotated lines", 104),
        ("error", "next plain line", 107),
        ("error", "twice", 107),
    ]
    assert (expected[1].annotation_line, expected[1].annotation_col) == (102, 4)


def at(line, severity="error", message="boom"):
    return Diagnostic(severity, message, "t.mlir", line, 1)


def test_check_matches_by_severity_line_and_substring():
    expected = parse_expected_diagnostics(
        "x // expected-error {{oo}}\ny // expected-warning {{w}}\n", "t.mlir"
    )
    assert check_expected_diagnostics(expected, [at(1), at(2, "warning", "a w b")]) == []


def test_check_reports_missing_and_unexpected():
    expected = parse_expected_diagnostics("x // expected-error {{boom}}\n", "t.mlir")
    errors = check_expected_diagnostics(expected, [at(2)])
    assert [e.message for e in errors] == [
        'expected error "boom" was not produced',
        "unexpected error: boom",
    ]
    assert [(e.line, e.col) for e in errors] == [(1, 6), (2, 1)]


def test_check_each_annotation_consumes_one_diagnostic():
    expected = parse_expected_diagnostics("x // expected-error {{boom}}\n", "t.mlir")
    errors = check_expected_diagnostics(expected, [at(1), at(1)])
    assert [e.message for e in errors] == ["unexpected error: boom"]


def test_check_file_must_match():
    expected = parse_expected_diagnostics("x // expected-error {{boom}}\n", "t.mlir")
    elsewhere = Diagnostic("error", "boom", "gen.py", 1, 1)
    assert len(check_expected_diagnostics(expected, [elsewhere])) == 2


def test_check_severity_must_match():
    expected = parse_expected_diagnostics("x // expected-warning {{boom}}\n", "t.mlir")
    assert len(check_expected_diagnostics(expected, [at(1)])) == 2


def test_check_covers_located_notes_and_skips_unlocated_ones():
    error = at(1)
    error.notes = [at(2, "note", "declared here"), Diagnostic("note", "in pass x")]
    expected = parse_expected_diagnostics("x // expected-error {{boom}}\n", "t.mlir")
    assert [e.message for e in check_expected_diagnostics(expected, [error])] == [
        "unexpected note: declared here"
    ]
    expected += parse_expected_diagnostics("\ny // expected-note {{declared}}\n", "t.mlir")
    assert check_expected_diagnostics(expected, [error]) == []


def test_words_ending_in_expected_are_not_annotations():
    assert (
        parse_expected_diagnostics(
            "// unexpected-error {{a}} and not-expected-note {{b}}\n", "t.mlir"
        )
        == []
    )
