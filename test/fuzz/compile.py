"""Category `compile`: ONNX models through `ziggurat-compile --opt --check`.

A case is one graph op on odd shapes (the `shapes` generator's ops, shapes
and attributes, which need not be valid: the importer must reject what the
graph dialect cannot express) saved as a one-node ONNX model, sometimes with
its bytes corrupted (truncated, or one byte changed). `ziggurat-compile`
imports it, optimizes it and compares the graph interpreter with
onnxruntime: it must succeed, or fail with a diagnostic; a failed check
("ziggurat and onnxruntime differ") is a wrong answer.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from hypothesis import assume
from hypothesis import strategies as st

from .outcome import Outcome, run_in_process
from .shapes import REDUCE, ShapeCase, _case, inputs_for, onnx_model, onnx_results

CHECK_FAILED = "check failed"
"""What `ziggurat-compile --check` prints when the numbers differ."""


@dataclass
class CompileCase:
    shape_case: ShapeCase
    corruption: str | None
    model: bytes

    @property
    def text(self) -> str:
        """The saved failing input: the model's bytes as hex (failures are written as text)."""
        return self.model.hex()

    def describe(self) -> str:
        corrupted = f", {self.corruption}" if self.corruption else ""
        return f"ONNX {self.shape_case.onnx_op} {self.shape_case.describe()}{corrupted}"


@st.composite
def compile_cases(draw) -> CompileCase:
    case = draw(_case())
    # onnxruntime computes a reduction over an empty axis with the wrong shape (see
    # shapes.reference_results), so --check would blame ziggurat for onnxruntime's answer.
    assume(not (case.op in REDUCE and any(0 in shape for shape in case.input_shapes)))
    # onnx.checker wants the output's shape: onnxruntime's result has it.
    results = onnx_results(case, inputs_for(case))
    model = onnx_model(case, None if results is None else results[0].shape).SerializeToString()
    corruption = draw(st.sampled_from((None, None, "truncate", "byte")))
    if corruption == "truncate":
        at = draw(st.integers(0, len(model) - 1))
        model, corruption = model[:at], f"truncated at byte {at}"
    elif corruption == "byte":
        at = draw(st.integers(0, len(model) - 1))
        value = draw(st.integers(0, 255))
        model, corruption = (
            model[:at] + bytes([value]) + model[at + 1 :],
            f"byte {at} set to {value}",
        )
    return CompileCase(case, corruption, model)


@contextlib.contextmanager
def _argv(argv: Sequence[str]) -> Iterator[None]:
    saved = sys.argv
    sys.argv = ["ziggurat-compile", *argv]
    try:
        yield
    finally:
        sys.argv = saved


def _compile(argv: Sequence[str]) -> None:
    from ziggurat.tools import ziggurat_compile

    # Its main reads sys.argv.
    with _argv(argv):
        ziggurat_compile.main()


def check_compile_case(case: CompileCase, workdir: Path) -> dict[str, Outcome]:
    path = workdir / "model.onnx"
    path.write_bytes(case.model)
    # Diagnostics name the ONNX node or the file, not an IR position.
    outcome = run_in_process(_compile, [str(path), "--opt", "--check"], location=None)
    if outcome.kind == "diagnostic" and CHECK_FAILED in outcome.stderr:
        outcome.kind, outcome.detail = (
            "mismatch",
            "ziggurat-compile --check found a difference with onnxruntime",
        )
    return {"ziggurat-compile": outcome}
