"""Every tool prints IR through `ziggurat.printing.Printer`: ziggurat-opt's `mlir` target and
--print-between-passes print a model exactly as ziggurat-compile does, and none of them decodes
a large dense constant element by element (xDSL's printer does, twice, to test for a splat).
test/tools/print-large-constants.mlir checks that what they print parses back."""

from __future__ import annotations

from pathlib import Path

import pytest
from benchmark_scripts import two_layers
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr

from ziggurat.printing import MLIRTarget
from ziggurat.tools import ziggurat_compile
from ziggurat.tools.ziggurat_opt import ZigguratOptMain


def compiled_text(tmp_path: Path) -> str:
    """ziggurat-compile's graph IR of a MatMul whose 32x32 weights print as hex."""
    output = tmp_path / "compiled.mlir"
    args = ziggurat_compile.build_argument_parser().parse_args(
        [str(two_layers(tmp_path)), "-o", str(output)]
    )
    assert ziggurat_compile.compile_model(args) == 0
    text = output.read_text()
    assert 'dense<"0x' in text
    return text


def opt_output(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert ZigguratOptMain(args).run() == 0
    return capsys.readouterr().out


@pytest.fixture
def no_element_decoding(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: DenseIntOrFPElementsAttr):
        raise AssertionError(f"decoded the {len(self)} elements of a dense constant to print it")

    monkeypatch.setattr(DenseIntOrFPElementsAttr, "get_values", refuse)


def test_the_mlir_target_is_ziggurats():
    assert ZigguratOptMain([]).available_targets["mlir"]() is MLIRTarget


def test_opt_prints_a_model_as_ziggurat_compile_does(tmp_path, capsys, no_element_decoding):
    compiled = compiled_text(tmp_path)
    path = tmp_path / "compiled.mlir"
    assert opt_output([str(path)], capsys).rstrip("\n") == compiled.rstrip("\n")
    assert opt_output([str(path), "-t", "mlir"], capsys).rstrip("\n") == compiled.rstrip("\n")


def test_print_between_passes_prints_as_ziggurat_compile_does(
    tmp_path, capsys, no_element_decoding
):
    compiled = compiled_text(tmp_path)
    printed = opt_output(
        [str(tmp_path / "compiled.mlir"), "-p", "cse,dce", "--print-between-passes"], capsys
    )
    assert printed.startswith("IR after cse:\n" + compiled.rstrip("\n") + "\n\n\n\n")
