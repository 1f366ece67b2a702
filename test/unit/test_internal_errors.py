"""Internal errors (a bug in ziggurat or a plugin, not in the input) in all three tools.

Each must print "internal error, please report: <exception> (while running pass
'<pass>' on op '<op>' at file:line:col)" when a pass crashed, exit 2, and show the
traceback only with `--debug` (or `ZIGGURAT_DEBUG=1`). test/opt/internal-error.mlir
checks the message of a crashing plugin pass line by line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from ziggurat.tools import ziggurat_compile, ziggurat_run
from ziggurat.transforms.graph.canonicalize import GraphCanonicalizePass

CRASHING_INPUT = """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = toy.double %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
"""


@pytest.fixture(autouse=True)
def no_debug(monkeypatch):
    # --debug sets ZIGGURAT_DEBUG for the process: setenv makes monkeypatch restore it.
    monkeypatch.setenv("ZIGGURAT_DEBUG", "0")


def exit_code(main, argv) -> int:
    with pytest.raises(SystemExit) as exit:
        main(argv)
    return exit.value.code


@pytest.mark.skipif(shutil.which("ziggurat-opt") is None, reason="console scripts not on PATH")
@pytest.mark.parametrize("debug", [[], ["--debug"]], ids=["plain", "debug"])
def test_crashing_plugin_pass_exits_2_naming_pass_and_op(tmp_path, debug):
    source = tmp_path / "crash.mlir"
    source.write_text(CRASHING_INPUT)
    environment = {key: value for key, value in os.environ.items() if key != "ZIGGURAT_DEBUG"}
    done = subprocess.run(
        ["ziggurat-opt", str(source), "-p", "toy-crash", *debug],
        capture_output=True,
        text=True,
        env=environment,
    )
    assert done.returncode == 2
    assert (
        "internal error, please report: KeyError: 'a bug in toy-crash' "
        f"(while running pass 'toy-crash' on op 'toy.double' at {source}:2:3)\n"
    ) in done.stderr
    assert ("Traceback (most recent call last)" in done.stderr) == bool(debug)


def relu_model(path: Path) -> Path:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "g", [x], [y])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)
    return path


def crash_at_relu(self, ctx, module) -> None:
    def visit(op):
        raise IndexError("a bug in graph-canonicalize")

    for inner in module.walk():
        if inner.name == "graph.relu":
            visit(inner)


@pytest.mark.parametrize("debug", [[], ["--debug"]], ids=["plain", "debug"])
def test_ziggurat_compile_names_the_crashed_pass(tmp_path, capsys, monkeypatch, debug):
    monkeypatch.setattr(GraphCanonicalizePass, "apply", crash_at_relu)
    model = relu_model(tmp_path / "relu.onnx")
    assert exit_code(ziggurat_compile.main, [str(model), "--opt", *debug]) == 2
    err = capsys.readouterr().err
    assert (
        "internal error, please report: IndexError: a bug in graph-canonicalize "
        "(while running pass 'graph-canonicalize' on op 'graph.relu')"
    ) in err
    assert ("Traceback (most recent call last)" in err) == bool(debug)


@pytest.mark.parametrize("debug", [[], ["--debug"]], ids=["plain", "debug"])
def test_ziggurat_run_debug_shows_the_traceback(tmp_path, capsys, monkeypatch, debug):
    def crash(*args, **kwargs):
        raise RuntimeError("a bug in the interpreter")

    monkeypatch.setattr(ziggurat_run, "run_function", crash)
    source = tmp_path / "relu.mlir"
    source.write_text(
        "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %0 = graph.relu %x : tensor<4xf32>\n"
        "  func.return %0 : tensor<4xf32>\n"
        "}\n"
    )
    assert exit_code(ziggurat_run.main, [str(source), *debug]) == 2
    err = capsys.readouterr().err
    assert "internal error, please report: RuntimeError: a bug in the interpreter" in err
    assert ("Traceback (most recent call last)" in err) == bool(debug)


@pytest.mark.parametrize("main", [ziggurat_compile.main, ziggurat_run.main], ids=["compile", "run"])
def test_help_documents_debug(main, capsys):
    assert exit_code(main, ["--help"]) == 0
    assert "--debug" in capsys.readouterr().out
