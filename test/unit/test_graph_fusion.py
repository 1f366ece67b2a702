"""graph-fuse and graph-unfuse: the groups keep what the function computes, and the
graph.fused op verifies its body."""

from __future__ import annotations

from pathlib import Path

import pytest

from ziggurat.context import default_context
from ziggurat.diagnostics import DiagnosticError, parse_source, verify_module
from ziggurat.dialects.graph import FusedOp
from ziggurat.lowering.differential import apply_pipeline, check_pass_preserves_numerics

FUSE_TESTS = Path(__file__).parent.parent / "graph" / "fuse.mlir"


def functions_of(text: str) -> list[str]:
    module = parse_source(default_context(), text, "fuse.mlir")
    return [op.sym_name.data for op in module.body.block.ops]


@pytest.mark.parametrize("function", functions_of(FUSE_TESTS.read_text()))
@pytest.mark.parametrize("pipeline", ["graph-fuse", "graph-fuse,graph-unfuse", "graph-fuse,cse,dce"])
def test_fusion_preserves_numerics(function: str, pipeline: str):
    report = check_pass_preserves_numerics(FUSE_TESTS.read_text(), pipeline, function=function)
    assert report.ok, str(report)


def test_fuse_forms_groups_and_unfuse_removes_them():
    module = parse_source(default_context(), FUSE_TESTS.read_text(), "fuse.mlir")
    apply_pipeline(module, "graph-fuse")
    names = sorted(op.group_name.data for op in module.walk() if isinstance(op, FusedOp))
    assert "conv2d_batch_norm_relu_add" in names and "sub_mul_reduce_sum" in names
    apply_pipeline(module, "graph-unfuse")
    assert not any(isinstance(op, FusedOp) for op in module.walk())


def test_max_ops_limits_group_size():
    module = parse_source(default_context(), FUSE_TESTS.read_text(), "fuse.mlir")
    apply_pipeline(module, "graph-fuse{max-ops=2}")
    sizes = [len(op.body.block.ops) - 1 for op in module.walk() if isinstance(op, FusedOp)]
    assert sizes and max(sizes) == 2


def test_yield_types_must_match_results():
    text = """
    func.func @f(%x: tensor<4xf32>) -> tensor<4xf16> {
      %r = graph.fused "relu"(%x) {root = "graph.relu"}({
      ^bb0(%a: tensor<4xf32>):
        %b = graph.relu %a : tensor<4xf32>
        graph.yield %b : tensor<4xf32>
      }) : (tensor<4xf32>) -> tensor<4xf16>
      func.return %r : tensor<4xf16>
    }
    """
    module = parse_source(default_context(), text, "bad.mlir")
    with pytest.raises(DiagnosticError, match="'graph.yield' gives types"):
        verify_module(module)
