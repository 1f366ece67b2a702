"""ziggurat-opt driven in-process: exit codes, pass failures and crashes, --verify-each, -o, splitting."""

import importlib.metadata
from dataclasses import dataclass

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from ziggurat.cli import run_main
from ziggurat.context import multiverse
from ziggurat.dialects.graph import TransposeOp, int_array
from ziggurat.tools.ziggurat_opt import (
    ZigguratOptMain,
    main,
    pass_description,
    pass_options,
    split_input,
)

VALID = """\
func.func @f(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.relu %a : tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
"""

BAD_PERM = """\
func.func @g(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = graph.transpose %a {perm = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}
"""


@dataclass(frozen=True)
class CrashingPass(ModulePass):
    """Fails the way a buggy pass does."""

    name = "test-crash"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise ZeroDivisionError("division by zero")


@dataclass(frozen=True)
class RefusingPass(ModulePass):
    name = "test-refuse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise PassFailedException("nothing to do here")


@dataclass(frozen=True)
class BreakingPass(ModulePass):
    """Leaves invalid IR behind: every graph.relu's result feeds a transpose with a bad perm."""

    name = "test-break"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for relu in [o for o in op.walk() if o.name == "graph.relu"]:
            bad = TransposeOp.create(
                operands=[relu.results[0]],
                result_types=[relu.results[0].type],
                properties={"perm": int_array([0, 0])},
            )
            relu.parent_block().insert_op_after(bad, relu)


class OptWithTestPasses(ZigguratOptMain):
    def register_all_passes(self):
        super().register_all_passes()
        for pass_class in (CrashingPass, RefusingPass, BreakingPass):
            self.register_pass(pass_class.name, lambda pass_class=pass_class: pass_class)


def opt(args, capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        run_main(lambda: OptWithTestPasses([str(a) for a in args]).run())
    out, err = capsys.readouterr()
    return info.value.code, out, err


@pytest.fixture
def valid(tmp_path):
    path = tmp_path / "valid.mlir"
    path.write_text(VALID)
    return path


@pytest.fixture
def bad_perm(tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_text(BAD_PERM)
    return path


# --------------------------------------------------------------------------- #
# split_input
# --------------------------------------------------------------------------- #


def test_split_on_exact_marker_lines_only():
    text = "a\n// -----\nb\n// ------------- banner\n  // -----\n// -----  \n// -----\n"
    assert split_input(text) == [
        ("a\n", 0),
        ("b\n// ------------- banner\n  // -----\n", 2),
        ("", 6),
        ("", 7),
    ]


def test_split_without_marker_is_one_chunk():
    assert split_input(VALID) == [(VALID, 0)]


# --------------------------------------------------------------------------- #
# Exit codes and diagnostics
# --------------------------------------------------------------------------- #


def test_valid_input_exits_0_and_prints_ir(valid, capsys):
    code, out, err = opt([valid], capsys)
    assert (code, err) == (0, "")
    assert "%0 = graph.relu %a : tensor<2x3xf32>" in out


def test_main_entry_point(valid, capsys):
    with pytest.raises(SystemExit) as info:
        main([str(valid), "-p", "cse"])
    assert info.value.code == 0
    assert "graph.relu" in capsys.readouterr().out


def test_verifier_failure_exits_1_at_the_op(bad_perm, capsys):
    code, out, err = opt([bad_perm], capsys)
    assert code == 1 and out == ""
    assert err.startswith(
        f"{bad_perm}:2:3: error: 'graph.transpose' op perm [0, 0] is not a permutation"
    )
    assert "Traceback" not in err


def test_bad_command_line_is_a_user_error(valid, capsys):
    with pytest.raises(SystemExit) as info:
        main([str(valid), "--no-such-flag"])
    assert info.value.code == 1
    assert "unrecognized arguments: --no-such-flag" in capsys.readouterr().err


def test_missing_input_file(tmp_path, capsys):
    code, _, err = opt([tmp_path / "nope.mlir"], capsys)
    assert code == 1
    assert err.startswith("error: cannot open input file")


def test_unknown_pass_suggests(valid, capsys):
    code, _, err = opt([valid, "-p", "test-crahs"], capsys)
    assert (code, err) == (1, "error: unknown pass 'test-crahs'; did you mean 'test-crash'?\n")


def test_crash_in_a_pass_is_an_internal_error(valid, capsys, monkeypatch):
    monkeypatch.delenv("ZIGGURAT_DEBUG", raising=False)
    code, _, err = opt([valid, "-p", "cse,test-crash"], capsys)
    assert code == 2
    assert (
        "internal error, please report: ZeroDivisionError: division by zero (while running pass 'test-crash')"
        in err
    )
    assert "Traceback" not in err


def test_debug_flag_prints_the_traceback(valid, capsys, monkeypatch):
    # --debug sets ZIGGURAT_DEBUG=1 for the process; setenv makes monkeypatch restore it.
    monkeypatch.setenv("ZIGGURAT_DEBUG", "0")
    code, _, err = opt([valid, "-p", "test-crash", "--debug"], capsys)
    assert code == 2
    assert "Traceback" in err and "in apply" in err


def test_xdsl_pass_failure_is_a_user_error(valid, capsys):
    code, _, err = opt([valid, "-p", "test-refuse"], capsys)
    assert code == 1
    assert err == f"{valid}: error: nothing to do here (in pass 'test-refuse')\n"


# --------------------------------------------------------------------------- #
# --verify-each
# --------------------------------------------------------------------------- #


def test_verify_each_catches_the_pass_that_broke_the_ir(valid, capsys):
    code, out, err = opt([valid, "-p", "test-break,cse"], capsys)
    assert code == 1 and out == ""
    # The op the pass created has no location of its own: it is reported at the enclosing func.
    assert err.startswith(
        f"{valid}:1:1: error: 'graph.transpose' op perm [0, 0] is not a permutation"
    )
    assert "note: the IR does not verify after pass 'test-break'" in err


def test_no_verify_each_verifies_only_the_result(valid, capsys):
    # cse erases the unused invalid transpose before anything checks it ...
    assert opt([valid, "-p", "test-break,cse", "--no-verify-each"], capsys)[0] == 0
    # ... but invalid IR at the end of the pipeline is still an error.
    code, _, err = opt([valid, "-p", "cse,test-break", "--no-verify-each"], capsys)
    assert code == 1
    assert "the IR does not verify after pass 'test-break'" in err


def test_disable_verify_skips_verification(valid, capsys, monkeypatch):
    # xDSL's --disable-verify also switches attribute verification off process-wide: undo it afterwards.
    monkeypatch.setattr(Attribute, "__post_init__", Attribute.__post_init__)
    code, out, _ = opt([valid, "-p", "test-break", "--disable-verify"], capsys)
    assert code == 0
    assert "graph.transpose" in out


# --------------------------------------------------------------------------- #
# --split-input-file and -o
# --------------------------------------------------------------------------- #


def test_split_chunks_keep_file_line_numbers(tmp_path, capsys):
    path = tmp_path / "split.mlir"
    path.write_text(VALID + "// -----\n" + BAD_PERM + "// -----\n" + VALID)
    code, out, err = opt([path, "--split-input-file"], capsys)
    assert code == 1
    assert err.startswith(f"{path}:7:3: error: 'graph.transpose' op")
    # Both valid chunks are still printed, separated like MLIR's output.
    assert out.count("graph.relu") == 2 and out.count("// -----\n") == 1


def test_failed_run_writes_no_output_file(tmp_path, bad_perm, capsys):
    output = tmp_path / "out.mlir"
    assert opt([bad_perm, "-o", output], capsys)[0] == 1
    assert not output.exists()
    output.write_text("previous")
    assert opt([bad_perm, "-o", output], capsys)[0] == 1
    assert output.read_text() == "previous"


def test_output_file_gets_all_chunks(tmp_path, capsys):
    path, output = tmp_path / "two.mlir", tmp_path / "out.mlir"
    path.write_text(VALID + "// -----\n" + VALID)
    code, out, _ = opt([path, "--split-input-file", "-o", output], capsys)
    assert (code, out) == (0, "")
    assert output.read_text().count("func.func @f") == 2


def test_parsing_diagnostics_covers_parse_errors_only(tmp_path, bad_perm, capsys):
    path = tmp_path / "unparsable.mlir"
    path.write_text(VALID.replace("graph.relu", "graph.rleu"))
    code, out, err = opt([path, "--parsing-diagnostics"], capsys)
    assert (code, err) == (0, "")
    assert "unknown operation 'graph.rleu'" in out
    assert opt([bad_perm, "--parsing-diagnostics"], capsys)[0] == 1


def test_verify_diagnostics_prints_nothing_when_all_match(tmp_path, capsys):
    path = tmp_path / "expect.mlir"
    path.write_text(
        BAD_PERM.replace(
            "tensor<3x2xf32>\n  func",
            "tensor<3x2xf32> // expected-error {{not a permutation}}\n  func",
        )
    )
    code, _, err = opt([path, "--verify-diagnostics"], capsys)
    assert (code, err) == (0, "")


# --------------------------------------------------------------------------- #
# --list-passes helpers
# --------------------------------------------------------------------------- #


def test_pass_options_and_description():
    from ziggurat_example_plugin.double_to_add import ToyDoubleToAdd

    assert (
        pass_description(ToyDoubleToAdd)
        == "Rewrite toy.double on tensors to graph.add of the operand with itself."
    )
    assert [(o.name, o.type, o.default) for o in pass_options(ToyDoubleToAdd)] == [
        ("strict", "bool", "false"),
        ("report", "bool", "false"),
    ]
    assert pass_description(RefusingPass) == ""


def test_conflicting_plugins_are_a_user_error(valid, capsys, monkeypatch):
    real = importlib.metadata.entry_points(group="xdsl.universe")
    twice = [
        *real,
        *(importlib.metadata.EntryPoint(f"{e.name}-copy", e.value, e.group) for e in real),
    ]
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: twice)
    multiverse.cache_clear()
    try:
        with pytest.raises(SystemExit) as info:
            main([str(valid)])
    finally:
        multiverse.cache_clear()
    assert info.value.code == 1
    assert capsys.readouterr().err.startswith(
        "error: conflicting xdsl.universe plugins: Duplicate definition of"
    )
