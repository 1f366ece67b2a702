// A returned value that is a collapse_shape of a computed tensor (a grouped conv's (g, og)
// output collapsed into its channels): the tensor is computed straight into a view of the
// result in its own shape (memref.expand_shape of %result0), not into a buffer then copied.
// RUN: ziggurat-opt %s -p "tile-to-loop{machine=davinci}" | filecheck %s

// CHECK-LABEL: func.func @collapsed_result(%x: memref<1x2x3x4xf32, "gm">, %result0: memref<1x6x4xf32, "gm">) {
// CHECK-NEXT:    %[[V:.*]] = memref.expand_shape %result0 {{\[}}[0 : i64], [1 : i64, 2 : i64], [3 : i64]] output_shape [1, 2, 3, 4] : memref<1x6x4xf32, "gm"> into memref<1x2x3x4xf32, "gm">
// CHECK-NEXT:    linalg.generic {{.*}} ins(%x : memref<1x2x3x4xf32, "gm">) outs(%[[V]] : memref<1x2x3x4xf32, "gm">)
// CHECK-NOT:     loop.copy
// CHECK:         func.return
func.func @collapsed_result(%x: tensor<1x2x3x4xf32>) -> tensor<1x6x4xf32> {
  %e = tensor.empty() : tensor<1x2x3x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x2x3x4xf32>) outs(%e : tensor<1x2x3x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %z = arith.constant 0.000000e+00 : f32
    %m = arith.maximumf %a, %z : f32
    linalg.yield %m : f32
  } -> tensor<1x2x3x4xf32>
  %c = tensor.collapse_shape %r [[0], [1, 2], [3]] : tensor<1x2x3x4xf32> into tensor<1x6x4xf32>
  func.return %c : tensor<1x6x4xf32>
}
