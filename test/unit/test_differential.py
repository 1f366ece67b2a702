"""The differential harness: it passes a pass that keeps the numbers, and reports one
that changes them with the output, the element and the tolerance."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from ziggurat.diagnostics import DiagnosticError
from ziggurat.dialects import graph
from ziggurat.testing.differential import (
    check_pass_preserves_numerics,
    compare_outputs,
)

RELU = """
func.func @main(%x: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %y = graph.relu %x : tensor<3x5xf32>
  func.return %y : tensor<3x5xf32>
}"""


@dataclass(frozen=True)
class ReluToAbs(ModulePass):
    """A wrong "optimization": relu replaced by abs."""

    name = "test-relu-to-abs"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for relu in list(op.walk()):
            if isinstance(relu, graph.ReluOp):
                abs_op = graph.AbsOp(relu.input)
                relu.parent_block().insert_op_before(abs_op, relu)
                relu.results[0].replace_all_uses_with(abs_op.results[0])
                relu.detach()
                relu.erase()


def test_a_preserving_pass_is_ok():
    report = check_pass_preserves_numerics(RELU, "graph-to-tile", seed=3)
    assert report.ok
    assert report.pipeline == "graph-to-tile" and report.function == "main"
    assert "preserves" in str(report)
    np.testing.assert_array_equal(report.before[0], np.maximum(report.after[0], 0))


def test_a_wrong_pass_is_reported_with_the_element_that_differs():
    report = check_pass_preserves_numerics(RELU, [ReluToAbs()], seed=3)
    assert not report.ok
    (output,) = report.outputs
    negatives = int((report.before[0] == 0).sum())
    assert output.mismatches == int((report.after[0] != report.before[0]).sum()) > 0
    assert output.mismatches <= negatives
    assert output.expected == 0.0 and output.actual > 0
    text = str(report)
    assert "CHANGES" in text and "test-relu-to-abs" in text
    assert f"FAIL: {output.mismatches} element(s) beyond it" in text
    assert "each element within 1e-05 + 0.0001 x |ref|" in text


def test_the_same_seed_gives_the_same_inputs():
    first = check_pass_preserves_numerics(RELU, "graph-to-tile", seed=7)
    second = check_pass_preserves_numerics(RELU, "graph-to-tile", seed=7)
    other = check_pass_preserves_numerics(RELU, "graph-to-tile", seed=8)
    np.testing.assert_array_equal(first.before[0], second.before[0])
    assert not np.array_equal(first.before[0], other.before[0])


def test_integers_must_match_exactly_and_floats_within_tolerance():
    ints = compare_outputs([np.array([1, 2], np.int32)], [np.array([1, 3], np.int32)], None, None)
    assert not ints[0].ok and ints[0].where == (1,)
    floats = compare_outputs(
        [np.array([1.0, 2.0], np.float16)], [np.array([1.0, 2.001], np.float16)], None, None
    )
    assert floats[0].ok
    strict = compare_outputs(
        [np.array([1.0, 2.0], np.float16)], [np.array([1.0, 2.002], np.float16)], 0.0, 0.0
    )
    assert not strict[0].ok


def test_nan_matches_nan_and_shapes_must_agree():
    same = compare_outputs(
        [np.array([np.nan], np.float32)], [np.array([np.nan], np.float32)], None, None
    )
    assert same[0].ok
    shaped = compare_outputs(
        [np.zeros((2,), np.float32)], [np.zeros((1, 2), np.float32)], None, None
    )
    assert not shaped[0].ok and "shape [1, 2]" in str(shaped[0])


def test_an_unknown_pass_is_a_diagnostic():
    with pytest.raises(DiagnosticError, match="invalid pipeline 'no-such-pass'"):
        check_pass_preserves_numerics(RELU, "no-such-pass")


def test_a_pass_failure_is_located_at_the_op():
    text = """
    func.func @main(%x: tensor<4xui8>) -> tensor<4xui8> {
      %y = graph.relu %x : tensor<4xui8>
      func.return %y : tensor<4xui8>
    }"""
    with pytest.raises(DiagnosticError) as caught:
        check_pass_preserves_numerics(text, "graph-to-tile")
    assert caught.value.diagnostics[0].line == 3
