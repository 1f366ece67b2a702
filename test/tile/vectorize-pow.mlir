// tile-vectorize: davinci's vector unit has no pow; a constant exponent in quarters up to 4
// (LRN's base ** 0.75) becomes rsqrt, divf and mulf instructions. Any other exponent stays
// math.powf, which loop-to-npu then reports.
// RUN: ziggurat-opt %s --split-input-file -p "tile-vectorize{machine=davinci}" | filecheck %s

// x ** 0.75 = rsqrt(rsqrt(x)) * (1 / rsqrt(x)), the exponent read from a splat tensor.
// CHECK-LABEL: func.func @three_quarters(
// CHECK-NOT:     math.powf
// CHECK:         math.rsqrt %{{.*}} : f16
// CHECK:         math.rsqrt %{{.*}} : f16
// CHECK:         arith.divf %{{.*}}, %{{.*}} : f16
// CHECK:         arith.mulf %{{.*}}, %{{.*}} : f16
// CHECK-NOT:     math.powf
func.func @three_quarters(%x: tensor<4x16xf16>, %e: tensor<4x16xf16>) -> tensor<4x16xf16> {
  %c = arith.constant dense<7.500000e-01> : tensor<f16>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %c : tensor<4x16xf16>, tensor<f16>) outs(%e : tensor<4x16xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %w = arith.extf %a : f16 to f32
    %v = arith.extf %b : f16 to f32
    %p = math.powf %w, %v : f32
    %t = arith.truncf %p : f32 to f16
    linalg.yield %t : f16
  } -> tensor<4x16xf16>
  func.return %y : tensor<4x16xf16>
}

// -----

// x ** -1.75 = x ** 0.25 / x / x; a body constant exponent.
// CHECK-LABEL: func.func @negative(
// CHECK-NOT:     math.powf
// CHECK:         math.rsqrt
// CHECK:         math.rsqrt
// CHECK:         arith.divf
// CHECK:         arith.divf
// CHECK-NOT:     math.powf
func.func @negative(%x: tensor<4x16xf32>, %e: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = arith.constant -1.75 : f32
    %p = math.powf %a, %c : f32
    linalg.yield %p : f32
  } -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}

// -----

// 0.3 is no quarter: untouched.
// CHECK-LABEL: func.func @not_quarters(
// CHECK:         math.powf
func.func @not_quarters(%x: tensor<4x16xf32>, %e: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = arith.constant 0.3 : f32
    %p = math.powf %a, %c : f32
    linalg.yield %p : f32
  } -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}
