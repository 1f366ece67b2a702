"""The tensor-level transforms keep the numerics and reach the form the next level needs.

Each case lowers a graph function with `graph-to-tile`, applies the pass, and
runs both the graph (graph interpreter) and the result (tensor interpreter) on
the same random inputs through the differential harness; the structural checks
say what the pass promises (matmul-like contractions, one scalar op per
generic, blocked operands).
"""

from __future__ import annotations

import pytest
from xdsl.dialects import tensor
from xdsl.dialects.linalg import ops as linalg
from ziggurat.lowering.differential import check_pass_preserves_numerics
from ziggurat.transforms.tile.decompose_conv import is_contraction


def conv_function(x, w, y, element_type="f32", **properties) -> str:
    attrs = ", ".join(f"{k} = {v}" for k, v in properties.items())
    shape = lambda s: "x".join(map(str, s)) + "x" + element_type  # noqa: E731
    return f"""
func.func @main(%x: tensor<{shape(x)}>, %w: tensor<{shape(w)}>) -> tensor<{shape(y)}> {{
  %y = graph.conv2d %x, %w {{{attrs}}} : (tensor<{shape(x)}>, tensor<{shape(w)}>) -> tensor<{shape(y)}>
  func.return %y : tensor<{shape(y)}>
}}
"""


PAD1 = "array<i64: 1, 1, 1, 1>"
CONVS = {
    "3x3_pad1": ((1, 4, 8, 8), (6, 4, 3, 3), (1, 6, 8, 8), {"pads": PAD1}),
    "1x1": ((2, 8, 5, 5), (4, 8, 1, 1), (2, 4, 5, 5), {}),
    "strided2": ((1, 3, 9, 9), (5, 3, 3, 3), (1, 5, 5, 5), {"pads": PAD1, "strides": "array<i64: 2, 2>"}),
    "depthwise": ((1, 6, 7, 7), (6, 1, 3, 3), (1, 6, 7, 7), {"pads": PAD1, "groups": "6 : i64"}),
    "grouped": ((1, 8, 6, 6), (4, 4, 3, 3), (1, 4, 4, 4), {"groups": "2 : i64"}),
    "dilated": ((1, 2, 9, 9), (3, 2, 3, 3), (1, 3, 5, 5), {"dilations": "array<i64: 2, 2>"}),
    "kernel_is_stride": ((1, 2, 8, 8), (3, 2, 2, 2), (1, 3, 4, 4), {"strides": "array<i64: 2, 2>"}),
}


def _matmul_like(op: linalg.GenericOp) -> bool:
    """Each dim is batch (all three maps), M (lhs, out), N (rhs, out) or K (lhs, rhs)."""
    maps = [m.data for m in op.indexing_maps.data]
    if not all(m.is_projected_permutation() for m in maps):
        return False
    used = [{e.position for e in m.results} for m in maps]
    kinds = {(d in used[0], d in used[1], d in used[2]) for d in range(maps[0].num_dims)}
    return kinds <= {(True, True, True), (True, False, True), (False, True, True), (True, True, False)}


@pytest.mark.parametrize("element_type", ["f32", "f16"])
@pytest.mark.parametrize("case", sorted(CONVS))
def test_decompose_conv_preserves_numerics(case, element_type):
    x, w, y, properties = CONVS[case]
    text = conv_function(x, w, y, element_type, **properties)
    report = check_pass_preserves_numerics(text, "graph-to-tile,tile-decompose-conv", seed=2)
    assert report.ok, report
    contractions = [op for op in report.transformed.walk() if is_contraction(op)]
    assert len(contractions) == w[2] * w[3] or case == "kernel_is_stride"
    assert all(_matmul_like(op) for op in contractions)
    assert not any(isinstance(op, linalg.Conv2DNchwFchwOp) for op in report.transformed.walk())


def test_decompose_conv_slices_with_the_stride():
    x, w, y, properties = CONVS["strided2"]
    report = check_pass_preserves_numerics(
        conv_function(x, w, y, "f16", **properties), "graph-to-tile,tile-decompose-conv"
    )
    slices = [op for op in report.transformed.walk() if isinstance(op, tensor.ExtractSliceOp)]
    strides = {tuple(op.static_strides.get_values()[-2:]) for op in slices}
    assert (2, 2) in strides


def test_decompose_conv_leaves_matmul_and_pooling_alone():
    text = """
func.func @main(%a: tensor<4x8xf16>, %b: tensor<8x3xf16>, %x: tensor<1x2x6x6xf32>) -> (tensor<4x3xf16>, tensor<1x2x3x3xf32>) {
  %m = graph.matmul %a, %b : (tensor<4x8xf16>, tensor<8x3xf16>) -> tensor<4x3xf16>
  %p = graph.max_pool %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x2x6x6xf32> -> tensor<1x2x3x3xf32>
  func.return %m, %p : tensor<4x3xf16>, tensor<1x2x3x3xf32>
}
"""
    lowered = check_pass_preserves_numerics(text, "graph-to-tile").transformed
    report = check_pass_preserves_numerics(text, "graph-to-tile,tile-decompose-conv")
    assert report.ok, report
    assert str(report.transformed) == str(lowered)
