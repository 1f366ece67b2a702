"""tile-to-loop keeps the numerics and bufferizes without needless copies; the loop interpreter
runs memref views without copying them.

Numerics: each graph program runs on the graph interpreter and, after
`graph-to-tile,...,tile-to-loop`, on the loop interpreter (`run_loop_function`,
through the differential harness), on the same inputs.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import MemRefType, NoneAttr, TensorType
from xdsl.parser import Parser

from ziggurat.context import default_context, multiverse
from ziggurat.diagnostics import DiagnosticError
from ziggurat.dialects import loop
from ziggurat.interpreters.loop_interpreter import run_loop_function
from ziggurat.testing.differential import check_pass_preserves_numerics

TO_LOOP = "tile-to-loop{machine=davinci}"

PROGRAMS = {
    "matmul_bias_relu_f16": """
func.func @main(%a: tensor<64x32xf16>, %b: tensor<32x48xf16>, %c: tensor<48xf16>) -> tensor<64x48xf16> {
  %m = graph.matmul %a, %b : (tensor<64x32xf16>, tensor<32x48xf16>) -> tensor<64x48xf16>
  %s = graph.add %m, %c : (tensor<64x48xf16>, tensor<48xf16>) -> tensor<64x48xf16>
  %r = graph.relu %s : tensor<64x48xf16>
  func.return %r : tensor<64x48xf16>
}""",
    "conv_pad_pool": """
func.func @main(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x4x4xf32> {
  %c = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x8x8xf32>
  %p = graph.max_pool %c {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x6x8x8xf32> -> tensor<1x6x4x4xf32>
  func.return %p : tensor<1x6x4x4xf32>
}""",
    "softmax_transpose_reshape": """
func.func @main(%x: tensor<2x3x8xf32>) -> (tensor<2x3x8xf32>, tensor<8x6xf32>, tensor<2x3x8xf32>) {
  %s = graph.softmax %x {axis = -1 : i64} : tensor<2x3x8xf32>
  %f = graph.reshape %s : tensor<2x3x8xf32> -> tensor<6x8xf32>
  %t = graph.transpose %f {perm = array<i64: 1, 0>} : tensor<6x8xf32> -> tensor<8x6xf32>
  func.return %s, %t, %x : tensor<2x3x8xf32>, tensor<8x6xf32>, tensor<2x3x8xf32>
}""",
    "constants_and_twice_returned": """
func.func @main(%x: tensor<4x3xi32>) -> (tensor<4x3xi32>, tensor<4x3xi32>) {
  %k = graph.constant dense<[[1, 2, 3]]> : tensor<1x3xi32>
  %z = graph.constant dense<7> : tensor<4x3xi32>
  %a = graph.mul %x, %k : (tensor<4x3xi32>, tensor<1x3xi32>) -> tensor<4x3xi32>
  %b = graph.add %a, %z : (tensor<4x3xi32>, tensor<4x3xi32>) -> tensor<4x3xi32>
  func.return %b, %b : tensor<4x3xi32>, tensor<4x3xi32>
}""",
}


def _no_tensors(module) -> bool:
    return not any(
        isinstance(value.type, TensorType)
        for op in module.walk()
        for value in (*op.operands, *op.results)
    )


@pytest.mark.parametrize("case", sorted(PROGRAMS))
def test_graph_to_loop_preserves_numerics(case):
    report = check_pass_preserves_numerics(PROGRAMS[case], f"graph-to-tile,{TO_LOOP}", seed=1)
    assert report.ok, report
    assert _no_tensors(report.transformed)
    main = next(op for op in report.transformed.ops if isinstance(op, func.FuncOp))
    assert main.function_type.outputs.data == ()
    assert all(isinstance(t, MemRefType) for t in main.function_type.inputs.data)


@pytest.mark.parametrize("case", ["conv_pad_pool"])
def test_decomposed_convolutions_bufferize(case):
    """tile-decompose-conv slices rank-reduced weights: they become rank-reduced subviews."""
    report = check_pass_preserves_numerics(
        PROGRAMS[case], f"graph-to-tile,tile-decompose-conv,{TO_LOOP}", seed=2
    )
    assert report.ok, report
    assert any(isinstance(op, memref.SubviewOp) for op in report.transformed.walk())


@pytest.mark.skipif(
    "tile-and-fuse" not in multiverse().all_passes, reason="tile-and-fuse has not landed"
)
@pytest.mark.parametrize("case", sorted(PROGRAMS))
def test_tiled_programs_preserve_numerics(case):
    pipeline = f"graph-to-tile,tile-and-fuse{{machine=davinci}},{TO_LOOP}"
    report = check_pass_preserves_numerics(PROGRAMS[case], pipeline, seed=3)
    assert report.ok, report
    assert _no_tensors(report.transformed)


TILED = (
    open(__file__.replace("unit/test_tile_to_loop.py", "loop/tile-to-loop.mlir"))
    .read()
    .split("// -----")[0]
)


def test_tiled_matmul_is_computed_in_place():
    """The doc's tiled matmul + relu: no copies, the relu writes the subview of %result0."""
    report = check_pass_preserves_numerics(TILED, TO_LOOP, seed=4)
    assert report.ok, report
    assert not any(isinstance(op, loop.CopyOp | memref.CopyOp) for op in report.transformed.walk())
    allocs = [op for op in report.transformed.walk() if isinstance(op, memref.AllocOp)]
    assert [op.memref.type.memory_space for op in allocs] == [
        op.memref.type.memory_space for op in allocs[:1]
    ] * 2


WRITES_INPUT = """
func.func @main(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x4xf32>) outs(%b : tensor<4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %l = scf.for %i = %c0 to %c4 step %c2 iter_args(%o = %r) -> (tensor<4x4xf32>) {
    %t = tensor.extract_slice %a[%i, 0] [2, 4] [1, 1] : tensor<4x4xf32> to tensor<2x4xf32>
    %n = tensor.insert_slice %t into %o[%i, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<4x4xf32>
    scf.yield %n : tensor<4x4xf32>
  }
  func.return %r, %l : tensor<4x4xf32>, tensor<4x4xf32>
}
"""


def test_inputs_and_values_read_later_are_copied_not_overwritten():
    """An outs that is a function input, and a loop init read after the loop, are copied first
    (the loop interpreter makes inputs read-only, so a write to one would fail the run)."""
    report = check_pass_preserves_numerics(WRITES_INPUT, TO_LOOP, seed=5)
    assert report.ok, report
    copies = [op for op in report.transformed.walk() if isinstance(op, loop.CopyOp)]
    assert len(copies) == 3  # %b into %result0, %r into the loop's buffer, each slice


def _parse(text: str):
    return Parser(default_context(), text).parse_module()


def test_dynamic_shapes_are_refused():
    from ziggurat.testing.differential import apply_pipeline

    module = _parse(
        "func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {\n  func.return %x : tensor<?xf32>\n}"
    )
    with pytest.raises(DiagnosticError, match="tile-to-loop needs static shapes"):
        apply_pipeline(module, TO_LOOP)


# --------------------------------------------------------------------------- #
# The loop interpreter
# --------------------------------------------------------------------------- #

VIEWS = """
func.func @main(%x: memref<4x6xf32, "gm">, %result0: memref<4x6xf32, "gm">, %result1: memref<2x3xi8, "gm">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  loop.copy %x -> %result0 : memref<4x6xf32, "gm"> -> memref<4x6xf32, "gm">
  scf.for %i = %c0 to %c2 step %c1 {
    %v = memref.subview %result0[%i, 1] [2, 2] [2, 2] : memref<4x6xf32, "gm"> to memref<2x2xf32, strided<[12, 2], offset: ?>, "gm">
    %z = arith.constant 0.0 : f32
    linalg.fill ins(%z : f32) outs(%v : memref<2x2xf32, strided<[12, 2], offset: ?>, "gm">)
  }
  %s = memref.subview %x[0, 0] [1, 2] [1, 1] : memref<4x6xf32, "gm"> to memref<1x2xf32, strided<[6, 1]>, "gm">
  %t = loop.copy_async %s -> %result1 {pad = array<i64: 1, 0, 0, 1>, pad_value = 300.0 : f64} : memref<1x2xf32, strided<[6, 1]>, "gm"> -> memref<2x3xi8, "gm">
  loop.wait %t : !loop.token
  func.return
}
"""


def test_views_write_through_and_copies_pad_and_saturate():
    x = np.arange(24, dtype=np.float32).reshape(4, 6) + 0.4
    outputs = run_loop_function(_parse(VIEWS), [x])
    expected = x.copy()
    for i in range(2):
        expected[i : i + 3 : 2, 1:4:2] = 0
    np.testing.assert_array_equal(outputs["result0"], expected)
    np.testing.assert_array_equal(outputs["result1"], [[127, 127, 127], [0, 1, 127]])
    np.testing.assert_array_equal(x, np.arange(24, dtype=np.float32).reshape(4, 6) + 0.4)


def test_unwritten_outputs_show_and_inputs_are_read_only():
    unwritten = 'func.func @main(%x: memref<2xf32, "gm">, %result0: memref<2xf32, "gm">) {\n  func.return\n}'
    assert np.isnan(
        run_loop_function(_parse(unwritten), [np.zeros(2, np.float32)])["result0"]
    ).all()
    writes_input = """
func.func @main(%x: memref<2xf32, "gm">, %result0: memref<2xf32, "gm">) {
  %z = arith.constant 1.0 : f32
  linalg.fill ins(%z : f32) outs(%x : memref<2xf32, "gm">)
  func.return
}"""
    with pytest.raises(DiagnosticError, match="linalg.fill. writes a read-only buffer"):
        run_loop_function(_parse(writes_input), [np.zeros(2, np.float32)])
    with pytest.raises(DiagnosticError, match="needs an input for argument 'x'"):
        run_loop_function(_parse(unwritten), [])


def test_reshaping_a_strided_view_is_refused():
    text = """
func.func @main(%x: memref<4x4xf32, "gm">, %result0: memref<4xf32, "gm">) {
  %v = memref.subview %x[0, 0] [2, 2] [2, 2] : memref<4x4xf32, "gm"> to memref<2x2xf32, strided<[8, 2]>, "gm">
  %c = memref.collapse_shape %v [[0, 1]] : memref<2x2xf32, strided<[8, 2]>, "gm"> into memref<4xf32, strided<[2]>, "gm">
  func.return
}"""
    with pytest.raises(DiagnosticError, match="non-contiguous buffer would need a copy"):
        run_loop_function(_parse(text), [np.zeros((4, 4), np.float32)])


def test_subview_sizes_must_match_its_type():
    """xDSL's verifier lets a subview's sizes differ from its type; the interpreter says so at the op."""
    text = """
func.func @main(%x: memref<4x4xf32, "gm">, %result0: memref<2x2xf32, "gm">) {
  %v = memref.subview %x[0, 0] [2, 3] [1, 1] : memref<4x4xf32, "gm"> to memref<2x2xf32, strided<[4, 1]>, "gm">
  func.return
}"""
    with pytest.raises(
        DiagnosticError, match=r"subview sizes \[2, 3\] do not match its result shape \[2, 2\]"
    ):
        run_loop_function(_parse(text), [np.zeros((4, 4), np.float32)])


def test_ziggurat_run_shows_the_result_arguments(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "loop.mlir"
    path.write_text(VIEWS)
    run = subprocess.run(
        [sys.executable, "-m", "ziggurat.tools.ziggurat_run", str(path), "--print"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert (
        'result0: memref<4x6xf32, "gm">' in run.stdout
        and 'result1: memref<2x3xi8, "gm">' in run.stdout
    )
    assert "\nx:" not in run.stdout


def test_elementwise_chains_overwrite_their_input():
    """matmul (f32 accumulator) -> truncf -> add bias -> relu into %result0: the add overwrites
    the truncf's buffer, so two allocs in all; the accumulator stays within the matmul's group
    (unplaced), the f16 result crosses groups (global)."""
    report = check_pass_preserves_numerics(
        PROGRAMS["matmul_bias_relu_f16"], f"graph-to-tile,{TO_LOOP}", seed=6
    )
    assert report.ok, report
    allocs = [op.memref.type for op in report.transformed.walk() if isinstance(op, memref.AllocOp)]
    assert sorted(str(t) for t in allocs) == ['memref<64x48xf16, "gm">', "memref<64x48xf32>"]


def test_buffers_within_one_fusion_group_are_unplaced():
    """A fused matmul + relu that fits one tile has no loop; its intermediates still stay
    unplaced (no global round trip), only %result0 is global."""
    text = """
func.func @main(%a: tensor<64x32xf16>, %b: tensor<32x16xf16>) -> tensor<64x16xf16> {
  %c = graph.matmul %a, %b : (tensor<64x32xf16>, tensor<32x16xf16>) -> tensor<64x16xf16>
  %r = graph.relu %c : tensor<64x16xf16>
  func.return %r : tensor<64x16xf16>
}"""
    report = check_pass_preserves_numerics(text, f"graph-fuse,graph-to-tile,{TO_LOOP}", seed=7)
    assert report.ok, report
    allocs = [op.memref.type for op in report.transformed.walk() if isinstance(op, memref.AllocOp)]
    assert allocs and all(t.memory_space == NoneAttr() for t in allocs)
