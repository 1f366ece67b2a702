"""graph-fuse, graph-unfuse, graph-fold-batch-norm and graph-layout: each keeps what the function
computes; the graph.fused op verifies its body."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ziggurat.context import default_context
from ziggurat.diagnostics import DiagnosticError
from ziggurat.dialects.graph import BatchNormOp, FusedOp
from ziggurat.parsing import parse_source
from ziggurat.testing.differential import apply_pipeline, check_pass_preserves_numerics
from ziggurat.verifier import verify_module

FUSE_TESTS = Path(__file__).parent.parent / "graph" / "fuse.mlir"


def functions_of(text: str) -> list[str]:
    module = parse_source(default_context(), text, "fuse.mlir")
    return [op.sym_name.data for op in module.body.block.ops]


@pytest.mark.parametrize("function", functions_of(FUSE_TESTS.read_text()))
@pytest.mark.parametrize(
    "pipeline", ["graph-fuse", "graph-fuse,graph-unfuse", "graph-fuse,cse,dce"]
)
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


# --------------------------------------------------------------------------- #
# graph-fold-batch-norm
# --------------------------------------------------------------------------- #

FOLD_BN_TESTS = Path(__file__).parent.parent / "graph" / "fold-batch-norm.mlir"


@pytest.mark.parametrize("function", functions_of(FOLD_BN_TESTS.read_text()))
def test_fold_batch_norm_preserves_numerics(function: str):
    report = check_pass_preserves_numerics(
        FOLD_BN_TESTS.read_text(), "graph-fold-batch-norm", function=function
    )
    assert report.ok, str(report)


def test_fold_batch_norm_on_random_statistics():
    rng = np.random.default_rng(0)

    def const(shape):
        values = ", ".join(f"{v:.6f}" for v in rng.uniform(0.5, 2.0, size=int(np.prod(shape))))
        return f"dense<[{values}]>"

    text = f"""
    func.func @main(%x: tensor<2x3x6x6xf32>) -> tensor<2x4x3x3xf32> {{
      %w = graph.constant dense<0.5> : tensor<4x3x3x3xf32>
      %cb = graph.constant {const([4])} : tensor<4xf32>
      %s = graph.constant {const([4])} : tensor<4xf32>
      %b = graph.constant {const([4])} : tensor<4xf32>
      %m = graph.constant {const([4])} : tensor<4xf32>
      %v = graph.constant {const([4])} : tensor<4xf32>
      %c = graph.conv2d %x, %w, %cb {{strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}} : (tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x3x3xf32>
      %y = graph.batch_norm %c, %s, %b, %m, %v : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x3x3xf32>
      func.return %y : tensor<2x4x3x3xf32>
    }}
    """
    report = check_pass_preserves_numerics(text, "graph-fold-batch-norm,dce")
    assert report.ok, str(report)
    assert not any(isinstance(op, BatchNormOp) for op in report.transformed.walk())


# --------------------------------------------------------------------------- #
# graph-layout
# --------------------------------------------------------------------------- #

LAYOUT_TESTS = Path(__file__).parent.parent / "graph" / "layout.mlir"


@pytest.mark.parametrize("function", functions_of(LAYOUT_TESTS.read_text()))
@pytest.mark.parametrize(
    "pipeline", ["graph-layout{layout=NHWC}", "graph-layout{layout=NHWC},graph-layout{layout=NCHW}"]
)
def test_layout_preserves_numerics(function: str, pipeline: str):
    report = check_pass_preserves_numerics(LAYOUT_TESTS.read_text(), pipeline, function=function)
    assert report.ok, str(report)


def test_layout_round_trip_leaves_no_transposes():
    module = parse_source(default_context(), LAYOUT_TESTS.read_text(), "layout.mlir")
    apply_pipeline(module, "graph-layout{layout=NHWC},graph-layout{layout=NCHW}")
    function = next(op for op in module.body.block.ops if op.sym_name.data == "conv_relu_conv")
    assert not any(op.name == "graph.transpose" for op in function.walk())
