// RUN: ziggurat-opt %s --verify-diagnostics --split-input-file
// The fuzzer (ir category, a number of test/tile/decompose-conv-invalid.mlir set to 0) found
// `mod 0` in an indexing map: xDSL accepts it, and linalg.generic's verifier, evaluating the map,
// divided by zero ("internal error: ZeroDivisionError"). MLIR's rule: mod, floordiv and ceildiv
// take a positive constant.

func.func @mod_zero(%x: tensor<8xf32>, %w: tensor<3xf32>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'linalg.generic' op affine map (d0, d1) -> (((d0 + d1) mod 0)) divides by 0: mod, floordiv and ceildiv take a positive constant}}
  %y = linalg.generic {indexing_maps = [affine_map<(i, k) -> ((i + k) mod 0)>, affine_map<(i, k) -> (k)>, affine_map<(i, k) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%x, %w : tensor<8xf32>, tensor<3xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %s: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %s, %p : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

func.func @floordiv_negative(%x: tensor<8xf32>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{divides by -2}}
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i floordiv -2)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%a: f32, %s: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
