// What tile-decompose-conv refuses, reported at the contraction.
// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics -p tile-decompose-conv

// Window offsets and slice sizes must be static.
func.func @dynamic(%x: tensor<1x4x?x?xf32>, %w: tensor<8x4x3x3xf32>, %acc: tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32> {
  // expected-error@+1 {{tile-decompose-conv: dynamic shape tensor<1x4x?x?xf32> is not supported}}
  %y = linalg.generic {indexing_maps = [affine_map<(n, o, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>, affine_map<(n, o, oh, ow, c, kh, kw) -> (o, c, kh, kw)>, affine_map<(n, o, oh, ow, c, kh, kw) -> (n, o, oh, ow)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x4x?x?xf32>, tensor<8x4x3x3xf32>) outs(%acc : tensor<1x8x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %s: f32):
    %p = arith.mulf %a, %b : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<1x8x3x3xf32>
  func.return %y : tensor<1x8x3x3xf32>
}

// -----

// A map result that is not `outer * stride + window * dilation` has no strided slice.
func.func @modulo(%x: tensor<8xf32>, %w: tensor<3xf32>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{tile-decompose-conv: cannot read the map result ((d0 + d1) mod 8) as a window}}
  %y = linalg.generic {indexing_maps = [affine_map<(i, k) -> ((i + k) mod 8)>, affine_map<(i, k) -> (k)>, affine_map<(i, k) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x, %w : tensor<8xf32>, tensor<3xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %s: f32):
    %p = arith.mulf %a, %b : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// Two reduction dims in one sum (a correlation of windows) is not a convolution window.
func.func @two_windows(%x: tensor<8xf32>, %w: tensor<3x3xf32>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{tile-decompose-conv: ((d1 * 2) + d2) sums two reduction dims}}
  %y = linalg.generic {indexing_maps = [affine_map<(i, k, l) -> (k * 2 + l)>, affine_map<(i, k, l) -> (k, l)>, affine_map<(i, k, l) -> (i)>], iterator_types = ["parallel", "reduction", "reduction"]} ins(%x, %w : tensor<8xf32>, tensor<3x3xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %s: f32):
    %p = arith.mulf %a, %b : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
