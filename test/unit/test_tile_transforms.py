"""The tensor-level transforms keep the numerics and reach the form the next level needs.

Each case lowers a graph function with `graph-to-tile`, applies the pass, and
runs both the graph (graph interpreter) and the result (tensor interpreter) on
the same random inputs through the differential harness; the structural checks
say what the pass promises (matmul-like contractions, one scalar op per
generic, blocked operands).
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import arith, math, tensor
from xdsl.dialects.linalg import ops as linalg

from ziggurat.dialects import tile
from ziggurat.interpreters.tile_interpreter import pack, unpack
from ziggurat.ir.contraction import is_contraction
from ziggurat.testing.differential import check_pass_preserves_numerics
from ziggurat.transforms.tile.vectorize import is_vectorized


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
    "strided2": (
        (1, 3, 9, 9),
        (5, 3, 3, 3),
        (1, 5, 5, 5),
        {"pads": PAD1, "strides": "array<i64: 2, 2>"},
    ),
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
    return kinds <= {
        (True, True, True),
        (True, False, True),
        (False, True, True),
        (True, True, False),
    }


@pytest.mark.parametrize("element_type", ["f32", "f16"])
@pytest.mark.parametrize("case", sorted(CONVS))
def test_decompose_conv_preserves_numerics(case, element_type):
    x, w, y, properties = CONVS[case]
    text = conv_function(x, w, y, element_type, **properties)
    report = check_pass_preserves_numerics(text, "graph-to-tile,tile-decompose-conv", seed=2)
    assert report.ok, report
    # one multiply-accumulate per window point: a contraction, or (depthwise) an elementwise step
    steps = [
        op
        for op in report.transformed.walk()
        if isinstance(op, linalg.GenericOp) and len(op.inputs) == 2
    ]
    assert len(steps) == w[2] * w[3] or case == "kernel_is_stride"
    assert all(_matmul_like(op) for op in steps)
    assert all(is_contraction(op) for op in steps) == (case != "depthwise")
    assert not any(isinstance(op, linalg.Conv2DNchwFchwOp) for op in report.transformed.walk())


def test_decompose_conv_slices_with_the_stride():
    x, w, y, properties = CONVS["strided2"]
    report = check_pass_preserves_numerics(
        conv_function(x, w, y, "f16", **properties), "graph-to-tile,tile-decompose-conv"
    )
    slices = [op for op in report.transformed.walk() if isinstance(op, tensor.ExtractSliceOp)]
    strides = {tuple(op.static_strides.get_values()[-2:]) for op in slices}
    assert (2, 2) in strides


def test_decompose_conv_leaves_matmul_alone_and_unrolls_pooling_windows():
    text = """
func.func @main(%a: tensor<4x8xf16>, %b: tensor<8x3xf16>, %x: tensor<1x2x7x7xf32>) -> (tensor<4x3xf16>, tensor<1x2x3x3xf32>) {
  %m = graph.matmul %a, %b : (tensor<4x8xf16>, tensor<8x3xf16>) -> tensor<4x3xf16>
  %p = graph.max_pool %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>} : tensor<1x2x7x7xf32> -> tensor<1x2x3x3xf32>
  func.return %m, %p : tensor<4x3xf16>, tensor<1x2x3x3xf32>
}
"""
    report = check_pass_preserves_numerics(text, "graph-to-tile,tile-decompose-conv")
    assert report.ok, report
    ops = list(report.transformed.walk())
    (matmul,) = [op for op in ops if is_contraction(op)]
    assert [operand.name_hint for operand in matmul.inputs] == ["a", "b"]
    steps = [
        op
        for op in ops
        if isinstance(op, linalg.GenericOp)
        and any(isinstance(o, arith.MaximumfOp) for o in op.body.walk())
    ]
    assert len(steps) == 9
    assert all(m.data.is_projected_permutation() for op in steps for m in op.indexing_maps.data)


# --------------------------------------------------------------------------- #
# tile-vectorize
# --------------------------------------------------------------------------- #

UNARY = {
    "tanh": "graph.tanh %x : {t}",
    "erf": "graph.erf %x : {t}",
    "silu": "graph.silu %x : {t}",
    "relu": "graph.relu %x : {t}",
    "gelu": "graph.gelu %x : {t}",
    "gelu_tanh": 'graph.gelu %x {{approximate = "tanh"}} : {t}',
    "sigmoid": "graph.sigmoid %x : {t}",
    "softmax": "graph.softmax %x {{axis = 1 : i64}} : {t}",
    "leaky_relu": "graph.leaky_relu %x {{alpha = 0.1 : f32}} : {t}",
}


def _vectorize_case(body: str, element_type: str) -> str:
    t = f"tensor<8x48x{element_type}>"
    b = f"tensor<48x{element_type}>"
    return f"""
func.func @main(%x: {t}, %b: {b}, %g: {b}) -> {t} {{
  %y = {body.format(t=t, b=b)}
  func.return %y : {t}
}}
"""


CASES = {
    **UNARY,
    "layer_norm": "graph.layer_norm %x, %g, %b {{axis = 1 : i64}} : ({t}, {b}, {b}) -> {t}",
    "bias_add": "graph.add %x, %b : ({t}, {b}) -> {t}",
}


def _element_types_of(op: linalg.GenericOp) -> set[str]:
    return {str(a.type) for a in op.body.block.args}


@pytest.mark.parametrize("element_type", ["f32", "f16"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_vectorize_preserves_numerics_one_op_per_generic(case, element_type):
    text = _vectorize_case(CASES[case], element_type)
    report = check_pass_preserves_numerics(
        text, "graph-to-tile,tile-vectorize{machine=davinci}", seed=4
    )
    assert report.ok, report
    generics = [op for op in report.transformed.walk() if isinstance(op, linalg.GenericOp)]
    assert generics
    for op in generics:
        assert is_vectorized(op), op
    # what no vector unit has is expanded: sqrt, tanh, erf, negation
    expanded = (math.SqrtOp, math.TanhOp, math.ErfOp, arith.NegfOp)
    assert not any(isinstance(op, expanded) for op in report.transformed.walk())


def test_vectorize_computes_f16_where_the_vector_unit_has_f16_lanes():
    text = _vectorize_case(CASES["bias_add"], "f16")
    report = check_pass_preserves_numerics(text, "graph-to-tile,tile-vectorize{machine=davinci}")
    (generic,) = [op for op in report.transformed.walk() if isinstance(op, linalg.GenericOp)]
    assert _element_types_of(generic) == {"f16"}
    assert not any(isinstance(op, (arith.ExtFOp, arith.TruncFOp)) for op in generic.walk())


def test_vectorize_keeps_f32_where_the_vector_unit_has_no_f16_lanes(tmp_path):
    machine = tmp_path / "narrow.toml"
    machine.write_text('extends = "davinci"\n[vector]\nbandwidth = 1\n')
    text = _vectorize_case(CASES["relu"], "f16")
    report = check_pass_preserves_numerics(
        text, f'graph-to-tile,tile-vectorize{{machine="{machine}"}}'
    )
    assert report.ok, report
    kinds = [
        type(next(iter(op.body.block.ops)))
        for op in report.transformed.walk()
        if isinstance(op, linalg.GenericOp)
    ]
    assert kinds == [arith.ExtFOp, arith.MaximumfOp, arith.TruncFOp]


def test_vectorize_keeps_constants_as_scalar_operands():
    report = check_pass_preserves_numerics(
        _vectorize_case(CASES["relu"], "f16"), "graph-to-tile,tile-vectorize{machine=davinci}"
    )
    (generic,) = [op for op in report.transformed.walk() if isinstance(op, linalg.GenericOp)]
    assert [str(v.type) for v in generic.inputs] == ["tensor<8x48xf16>", "f16"]
    assert str(generic.indexing_maps.data[1].data) == "(d0, d1) -> ()"


def test_vectorize_reduces_in_the_accumulator_type_and_keeps_row_statistics_per_row():
    """layer_norm: f32 sums of f16 data; the normalizer is computed once per row."""
    report = check_pass_preserves_numerics(
        _vectorize_case(CASES["layer_norm"], "f16"), "graph-to-tile,tile-vectorize{machine=davinci}"
    )
    reductions = [
        op
        for op in report.transformed.walk()
        if isinstance(op, linalg.GenericOp)
        and len(op.iterator_types.data) == 2
        and "reduction" in str(op.iterator_types)
    ]
    assert reductions and all(_element_types_of(op) == {"f32"} for op in reductions)
    # x / sqrt(var + eps) is x * rsqrt(var + eps), the rsqrt once per row
    rsqrts = [op for op in report.transformed.walk() if isinstance(op, math.RsqrtOp)]
    assert [str(op.parent_op().outputs[0].type) for op in rsqrts] == ["tensor<8xf32>"]


def test_vectorize_leaves_contractions_alone():
    text = """
func.func @main(%a: tensor<4x8xf16>, %b: tensor<8x3xf16>) -> tensor<4x3xf16> {
  %m = graph.matmul %a, %b : (tensor<4x8xf16>, tensor<8x3xf16>) -> tensor<4x3xf16>
  func.return %m : tensor<4x3xf16>
}
"""
    report = check_pass_preserves_numerics(text, "graph-to-tile,tile-vectorize{machine=davinci}")
    assert report.ok, report
    assert sum(is_contraction(op) for op in report.transformed.walk()) == 1


# --------------------------------------------------------------------------- #
# tile.pack / tile.unpack semantics
# --------------------------------------------------------------------------- #


def test_pack_matches_the_blocked_layout_of_mlir_tensor_pack():
    a = np.arange(40 * 24, dtype=np.float32).reshape(40, 24)
    packed = pack(a, [0, 1], [16, 8], None, -1.0)
    assert packed.shape == (3, 3, 16, 8)
    np.testing.assert_array_equal(packed[1, 2], a[16:32, 16:24])
    np.testing.assert_array_equal(packed[2, 0, :8], a[32:40, 0:8])
    assert (packed[2, 0, 8:] == -1).all()  # the padding of the last row of tiles


def test_pack_with_outer_perm_and_swapped_inner_dims():
    a = np.arange(32 * 48, dtype=np.float32).reshape(32, 48)
    packed = pack(a, [1, 0], [16, 8], [1, 0], 0.0)
    assert packed.shape == (3, 4, 16, 8)
    # outer (j, i), tile [16 columns of dim 1, 8 rows of dim 0]
    np.testing.assert_array_equal(packed[2, 1], a[8:16, 32:48].T)
    np.testing.assert_array_equal(unpack(packed, a.shape, [1, 0], [16, 8], [1, 0]), a)


# --------------------------------------------------------------------------- #
# tile-pack
# --------------------------------------------------------------------------- #

MLP = """
func.func @main(%x: tensor<{m}x48xf16>, %w1: tensor<48x64xf16>, %b: tensor<64xf16>, %w2: tensor<64x32xf16>) -> tensor<{m}x32xf16> {{
  %h = graph.matmul %x, %w1 : (tensor<{m}x48xf16>, tensor<48x64xf16>) -> tensor<{m}x64xf16>
  %r = graph.{act} %h : tensor<{m}x64xf16>
  %a = graph.add %r, %b : (tensor<{m}x64xf16>, tensor<64xf16>) -> tensor<{m}x64xf16>
  %s = graph.sigmoid %a : tensor<{m}x64xf16>
  %y = graph.matmul %s, %w2 : (tensor<{m}x64xf16>, tensor<64x32xf16>) -> tensor<{m}x32xf16>
  func.return %y : tensor<{m}x32xf16>
}}
"""


CHAIN = """
func.func @main(%x: tensor<32x48xf16>, %w1: tensor<48x64xf16>, %w2: tensor<64x32xf16>) -> tensor<32x32xf16> {{
  %h = graph.matmul %x, %w1 : (tensor<32x48xf16>, tensor<48x64xf16>) -> tensor<32x64xf16>
  %r = graph.{act} %h : tensor<32x64xf16>
  %y = graph.matmul %r, %w2 : (tensor<32x64xf16>, tensor<64x32xf16>) -> tensor<32x32xf16>
  func.return %y : tensor<32x32xf16>
}}
"""


def _count(module, op_type) -> int:
    return sum(isinstance(op, op_type) for op in module.walk())


@pytest.mark.parametrize("machine", ["davinci", "tensorcore", "systolic"])
@pytest.mark.parametrize("m", [32, 40])
@pytest.mark.parametrize("vectorize", [False, True])
def test_pack_preserves_numerics(m, machine, vectorize):
    pipeline = "graph-to-tile," + (f"tile-vectorize{{machine={machine}}}," if vectorize else "")
    text = MLP.format(m=m, act="relu")
    report = check_pass_preserves_numerics(
        text, pipeline + f"tile-pack{{machine={machine}}}", seed=6
    )
    assert report.ok, report
    packs = _count(report.transformed, tile.PackOp)
    assert packs == 0 if machine == "systolic" else packs >= 3


def test_pack_blocks_contractions_in_the_matrix_units_fractal_shape():
    report = check_pass_preserves_numerics(
        MLP.format(m=32, act="relu"), "graph-to-tile,tile-pack{machine=tensorcore}"
    )
    blocks = {
        tuple(op.inner_tiles.get_values())
        for op in report.transformed.walk()
        if isinstance(op, tile.PackOp)
    }
    assert blocks == {(16, 16), (16, 8)}  # MxK and KxN of tensorcore's 16x8x16
    for op in report.transformed.walk():
        if is_contraction(op):
            assert [len(m.data.results) for m in op.indexing_maps.data] == [4, 4, 4]


def test_pack_keeps_data_blocked_between_matmuls():
    """relu sinks below the unpack and pack(unpack) cancels between the two matmuls;
    the bias add (a broadcast) stops it in the MLP, so use a plain chain."""
    text = CHAIN.format(act="relu")
    report = check_pass_preserves_numerics(
        text, "graph-to-tile,tile-vectorize{machine=davinci},tile-pack{machine=davinci}"
    )
    assert report.ok, report
    assert _count(report.transformed, tile.PackOp) == 3  # x, w1, w2
    assert _count(report.transformed, tile.UnpackOp) == 1  # the result


def test_pack_does_not_cancel_across_padding():
    """With 40 hidden units the first matmul's last N block (the second's K block) is
    padded: sigmoid(0) = 0.5 there, so cancelling pack(unpack) would add 0.5 * w2 rows
    to the second sum. Its lhs is packed again, with zeros."""
    text = CHAIN.format(act="sigmoid").replace("x64x", "x40x").replace("<64x", "<40x")
    report = check_pass_preserves_numerics(
        text, "graph-to-tile,tile-vectorize{machine=davinci},tile-pack{machine=davinci}"
    )
    assert report.ok, report
    lhs_of_second = (
        [op for op in report.transformed.walk() if is_contraction(op)][-1].inputs[0].owner
    )
    assert isinstance(lhs_of_second, tile.PackOp)


@pytest.mark.parametrize(
    "pipeline",
    ["tile-decompose-conv", "tile-vectorize{machine=davinci}", "tile-pack{machine=davinci}"],
)
def test_passes_leave_no_detached_users(pipeline):
    """Ops built and dropped must not keep uses of the function's values (a later pass
    erasing those values would fail)."""
    text = (
        CHAIN.format(act="softmax")
        .replace("%h : tensor<32x64xf16>\n", "%h {axis = 1 : i64} : tensor<32x64xf16>\n")
        .replace(
            "%y = graph.matmul %r",
            "%c = graph.conv2d %x4, %w4 : (tensor<1x2x6x6xf16>, tensor<3x2x3x3xf16>) -> tensor<1x3x4x4xf16>\n  %y = graph.matmul %r",
        )
        .replace(
            "%w2: tensor<64x32xf16>)",
            "%w2: tensor<64x32xf16>, %x4: tensor<1x2x6x6xf16>, %w4: tensor<3x2x3x3xf16>)",
        )
    )
    report = check_pass_preserves_numerics(text, f"graph-to-tile,{pipeline}")
    assert report.ok, report
    for op in report.transformed.walk():
        for value in (*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)):
            assert all(use.operation.parent_block() is not None for use in value.uses), op


@pytest.mark.parametrize("element_type", ["f32", "f16"])
def test_vectorize_splits_depthwise_window_steps(element_type):
    """After decompose-conv a depthwise step multiplies and accumulates with no reduction
    dim (not the matrix unit's): vectorize splits it like an elementwise body."""
    x, w, y, properties = CONVS["depthwise"]
    text = conv_function(x, w, y, element_type, **properties)
    report = check_pass_preserves_numerics(
        text, "graph-to-tile,tile-decompose-conv,tile-vectorize{machine=davinci}", seed=3
    )
    assert report.ok, report
    generics = [op for op in report.transformed.walk() if isinstance(op, linalg.GenericOp)]
    assert all(is_vectorized(op) for op in generics)
