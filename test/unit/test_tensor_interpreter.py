"""The tensor-level interpreter: linalg, tensor, math and the arith ops xDSL lacks,
run through the shared `run_function`, against numpy written here."""

from __future__ import annotations

import numpy as np
import pytest

from ziggurat.context import default_context
from ziggurat.diagnostics import DiagnosticError
from ziggurat.interpreters.interpreter import run_function
from ziggurat.parsing import parse_source


def run(text: str, *inputs: np.ndarray) -> list[np.ndarray]:
    return run_function(parse_source(default_context(), text, "test.mlir"), list(inputs))


rng = np.random.default_rng(0)


def randn(*shape) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def test_conv_2d_nchw_fchw_with_several_channels_strides_and_dilations():
    # xDSL's own implementation is wrong whenever C > 1 or F > 1 (DESIGN §9).
    x, w = randn(2, 3, 9, 10), randn(4, 3, 3, 2)
    text = """
    func.func @main(%x: tensor<2x3x9x10xf32>, %w: tensor<4x3x3x2xf32>) -> tensor<2x4x3x8xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<2x4x3x8xf32>
      %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x3x8xf32>) -> tensor<2x4x3x8xf32>
      %y = linalg.conv_2d_nchw_fchw {dilations = dense<[2, 1]> : tensor<2xi64>, strides = dense<[2, 1]> : tensor<2xi64>}
             ins(%x, %w : tensor<2x3x9x10xf32>, tensor<4x3x3x2xf32>) outs(%init : tensor<2x4x3x8xf32>) -> tensor<2x4x3x8xf32>
      func.return %y : tensor<2x4x3x8xf32>
    }"""
    (y,) = run(text, x, w)
    expected = np.zeros((2, 4, 3, 8), np.float64)
    for i in range(3):
        for j in range(2):
            patch = x[:, :, 2 * i : 2 * i + 5 : 2, j : j + 8]  # rows 2*oh + 2*i, columns ow + j
            expected += np.einsum("nchw,fc->nfhw", patch[:, :, :3], w[:, :, i, j])
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)


def test_generic_reduction_with_a_transposed_output_and_a_window_map():
    # y[j, i] = init + sum_k x[i, 2 * j + k]: a strided window, output transposed.
    x = randn(3, 9)
    text = """
    func.func @main(%x: tensor<3x9xf32>, %init: tensor<4x3xf32>) -> tensor<4x3xf32> {
      %window = tensor.empty() : tensor<2xf32>
      %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1 * 2 + d2)>,
                                            affine_map<(d0, d1, d2) -> (d2)>,
                                            affine_map<(d0, d1, d2) -> (d1, d0)>],
                           iterator_types = ["parallel", "parallel", "reduction"]}
          ins(%x, %window : tensor<3x9xf32>, tensor<2xf32>) outs(%init : tensor<4x3xf32>) {
      ^bb0(%a: f32, %unused: f32, %acc: f32):
        %e = math.exp %a : f32
        %s = arith.addf %e, %acc : f32
        linalg.yield %s : f32
      } -> tensor<4x3xf32>
      func.return %y : tensor<4x3xf32>
    }"""
    init = randn(4, 3)
    (y,) = run(text, x, init)
    e = np.exp(x)
    expected = init + np.stack([e[:, 2 * j] + e[:, 2 * j + 1] for j in range(4)])
    np.testing.assert_allclose(y, expected, rtol=1e-6)


def test_generic_body_with_index_compare_select_and_extract():
    # y[i, j] = x[2 - i, j] where j is even, else -1 (a reversed gather through tensor.extract).
    x = randn(3, 4)
    text = """
    func.func @main(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
      %e = tensor.empty() : tensor<3x4xf32>
      %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
          outs(%e : tensor<3x4xf32>) {
      ^bb0(%out: f32):
        %i = linalg.index 0 : index
        %j = linalg.index 1 : index
        %two = arith.constant 2 : index
        %r = arith.subi %two, %i : index
        %v = tensor.extract %x[%r, %j] : tensor<3x4xf32>
        %jj = arith.index_cast %j : index to i64
        %c2 = arith.constant 2 : i64
        %m = arith.remsi %jj, %c2 : i64
        %c0 = arith.constant 0 : i64
        %even = arith.cmpi eq, %m, %c0 : i64
        %minus = arith.constant -1.0 : f32
        %s = arith.select %even, %v, %minus : f32
        linalg.yield %s : f32
      } -> tensor<3x4xf32>
      func.return %y : tensor<3x4xf32>
    }"""
    (y,) = run(text, x)
    expected = np.where(np.arange(4) % 2 == 0, x[::-1], -1)
    np.testing.assert_array_equal(y, expected)


def test_a_reduction_body_that_is_not_a_combine_is_reported():
    text = """
    func.func @main(%x: tensor<4xf32>, %init: tensor<f32>) -> tensor<f32> {
      %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
          ins(%x : tensor<4xf32>) outs(%init : tensor<f32>) {
      ^bb0(%a: f32, %acc: f32):
        %s = arith.addf %a, %acc : f32
        %t = arith.mulf %s, %s : f32
        linalg.yield %t : f32
      } -> tensor<f32>
      func.return %y : tensor<f32>
    }"""
    with pytest.raises(
        DiagnosticError, match="cannot evaluate this reduction body vectorized"
    ) as caught:
        run(text, randn(4), np.zeros((), np.float32))
    assert caught.value.diagnostics[0].line == 3


def test_tensor_slicing_padding_and_reshapes():
    x = randn(4, 6)
    text = """
    func.func @main(%x: tensor<4x6xf32>) -> (tensor<2x3xf32>, tensor<4x6xf32>, tensor<6x8xf32>, tensor<2x2x6xf32>, tensor<24xf32>, tensor<3x8xf32>) {
      %s = tensor.extract_slice %x[1, 0] [2, 3] [2, 2] : tensor<4x6xf32> to tensor<2x3xf32>
      %z = arith.constant dense<0.0> : tensor<4x6xf32>
      %i = tensor.insert_slice %s into %z[0, 1] [2, 3] [3, 1] : tensor<2x3xf32> into tensor<4x6xf32>
      %p = tensor.pad %x low[1, 0] high[1, 2] {
      ^bb0(%a: index, %b: index):
        %c = arith.constant 7.0 : f32
        tensor.yield %c : f32
      } : tensor<4x6xf32> to tensor<6x8xf32>
      %e = tensor.expand_shape %x [[0, 1], [2]] output_shape [2, 2, 6] : tensor<4x6xf32> into tensor<2x2x6xf32>
      %f = tensor.collapse_shape %x [[0, 1]] : tensor<4x6xf32> into tensor<24xf32>
      %shape = arith.constant dense<[3, 8]> : tensor<2xi64>
      %r = tensor.reshape %x(%shape) : (tensor<4x6xf32>, tensor<2xi64>) -> tensor<3x8xf32>
      func.return %s, %i, %p, %e, %f, %r : tensor<2x3xf32>, tensor<4x6xf32>, tensor<6x8xf32>, tensor<2x2x6xf32>, tensor<24xf32>, tensor<3x8xf32>
    }"""
    s, i, p, e, f, r = run(text, x)
    np.testing.assert_array_equal(s, x[1:4:2, 0:6:2])
    expected = np.zeros((4, 6), np.float32)
    expected[0:4:3, 1:4] = s
    np.testing.assert_array_equal(i, expected)
    np.testing.assert_array_equal(p, np.pad(x, ((1, 1), (0, 2)), constant_values=7))
    np.testing.assert_array_equal(e, x.reshape(2, 2, 6))
    np.testing.assert_array_equal(f, x.reshape(24))
    np.testing.assert_array_equal(r, x.reshape(3, 8))


def test_math_and_conversions_in_a_body():
    text = """
    func.func @main(%x: tensor<5xf32>, %y: tensor<5xf32>) -> tensor<5xf16> {
      %e = tensor.empty() : tensor<5xf16>
      %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
                                            affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
          ins(%x, %y : tensor<5xf32>, tensor<5xf32>) outs(%e : tensor<5xf16>) {
      ^bb0(%a: f32, %b: f32, %out: f16):
        %t = math.tanh %a : f32
        %q = arith.divf %t, %b : f32
        %s = math.absf %q : f32
        %n = math.rsqrt %s : f32
        %h = arith.truncf %n : f32 to f16
        linalg.yield %h : f16
      } -> tensor<5xf16>
      func.return %r : tensor<5xf16>
    }"""
    x, y = randn(5), randn(5)
    (r,) = run(text, x, y)
    assert r.dtype == np.float16
    expected = (1 / np.sqrt(np.abs(np.tanh(x) / y))).astype(np.float16)
    np.testing.assert_allclose(r.astype(np.float32), expected.astype(np.float32), rtol=1e-3)


def test_graph_and_tensor_ops_in_one_function():
    x, w = randn(1, 2, 5, 5), randn(3, 2, 3, 3)
    text = """
    func.func @main(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<1x3x3x3xf32>
      %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
      %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
             ins(%x, %w : tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) outs(%init : tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32>
      %y = graph.relu %c : tensor<1x3x3x3xf32>
      func.return %y : tensor<1x3x3x3xf32>
    }"""
    (y,) = run(text, x, w)
    # The reference: the graph dialect's numpy semantics, through graph ops.
    reference = run(
        """
    func.func @main(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32> {
      %c = graph.conv2d %x, %w : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
      %y = graph.relu %c : tensor<1x3x3x3xf32>
      func.return %y : tensor<1x3x3x3xf32>
    }""",
        x,
        w,
    )[0]
    np.testing.assert_allclose(y, reference, rtol=1e-5, atol=1e-6)


def test_an_op_without_implementation_is_named():
    text = """
    func.func @main(%x: f32) -> tensor<3xf32> {
      %s = tensor.splat %x : tensor<3xf32>
      func.return %s : tensor<3xf32>
    }"""
    with pytest.raises(DiagnosticError, match="no interpreter implementation for 'tensor.splat'"):
        run(text, np.array(1.0, np.float32))


def test_a_generic_contraction_runs_as_one_einsum():
    # 256 x 384 x 512: the product over the iteration space would be 50M elements;
    # the sum of products runs as an einsum of the two factors instead.
    a, b = randn(256, 512), randn(512, 384)
    text = """
    func.func @main(%a: tensor<256x512xf32>, %b: tensor<512x384xf32>, %init: tensor<256x384xf32>) -> tensor<256x384xf32> {
      %y = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>,
                                            affine_map<(m, n, k) -> (m, n)>],
                           iterator_types = ["parallel", "parallel", "reduction"]}
          ins(%a, %b : tensor<256x512xf32>, tensor<512x384xf32>) outs(%init : tensor<256x384xf32>) {
      ^bb0(%x: f32, %w: f32, %acc: f32):
        %p = arith.mulf %x, %w : f32
        %s = arith.addf %acc, %p : f32
        linalg.yield %s : f32
      } -> tensor<256x384xf32>
      func.return %y : tensor<256x384xf32>
    }"""
    init = randn(256, 384)
    (y,) = run(text, a, b, init)
    np.testing.assert_allclose(y, init + a @ b, rtol=1e-4, atol=1e-3)


def test_a_generic_in_a_loop_is_planned_once_per_run(monkeypatch):
    # A nest of 1x1 tiles (tile-and-fuse{sizes=1,1,1,1}) runs one generic tens of thousands of
    # times; decoding its maps and body each time made a 32x32x32 matmul chain take 30 s.
    from ziggurat.interpreters import tensor_interpreter

    planned = []
    plan = tensor_interpreter._plan
    monkeypatch.setattr(tensor_interpreter, "_plan", lambda op: planned.append(op) or plan(op))
    x = randn(4)
    text = """
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %e = tensor.empty() : tensor<4xf32>
      %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%o = %e) -> (tensor<4xf32>) {
        %s = tensor.extract_slice %x[%i] [1] [1] : tensor<4xf32> to tensor<1xf32>
        %t = tensor.empty() : tensor<1xf32>
        %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                             iterator_types = ["parallel"]} ins(%s : tensor<1xf32>) outs(%t : tensor<1xf32>) {
        ^bb0(%a: f32, %b: f32):
          %n = arith.negf %a : f32
          linalg.yield %n : f32
        } -> tensor<1xf32>
        %u = tensor.insert_slice %y into %o[%i] [1] [1] : tensor<1xf32> into tensor<4xf32>
        scf.yield %u : tensor<4xf32>
      }
      func.return %r : tensor<4xf32>
    }"""
    module = parse_source(default_context(), text, "test.mlir")
    (y,) = run_function(module, [x])
    np.testing.assert_array_equal(y, -x)
    assert len(planned) == 1
    run_function(module, [x])  # a new run plans again: passes may have changed the IR in between
    assert len(planned) == 2
