// A returned value that is an expand_shape of a computed tensor (a global pool's sums with the
// reduced dims reinserted): the tensor is computed straight into a view of the result in its own
// shape (memref.collapse_shape of %result0), not into a buffer then copied. Copied, the copy was a
// phase of its own: on several cores, a barrier and a round trip through global memory.
// RUN: ziggurat-opt %s -p "tile-to-loop{machine=davinci}" | filecheck %s
// RUN: ziggurat-run %s --outputs %t.tensor.npz
// RUN: ziggurat-opt %s -p "tile-to-loop{machine=davinci}" | ziggurat-run - --expect %t.tensor.npz | filecheck %s --check-prefix=NUMBERS

// CHECK-LABEL: func.func @expanded_result(%x: memref<2x6x5xf32, "gm">, %result0: memref<2x6x1xf32, "gm">) {
// CHECK:         %[[V:.*]] = memref.collapse_shape %result0 {{\[}}[0 : i64], [1 : i64, 2 : i64]] : memref<2x6x1xf32, "gm"> into memref<2x6xf32, "gm">
// CHECK:         linalg.generic {{.*}} ins(%x : memref<2x6x5xf32, "gm">) outs(%[[V]] : memref<2x6xf32, "gm">)
// CHECK-NOT:     loop.copy
// CHECK:         func.return

// NUMBERS: result0: float32[2, 6, 1] {{.*}} ok{{$}}
func.func @expanded_result(%x: tensor<2x6x5xf32>) -> tensor<2x6x1xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<2x6xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x6xf32>) -> tensor<2x6xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<2x6x5xf32>) outs(%init : tensor<2x6xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x6xf32>
  %y = tensor.expand_shape %r [[0], [1, 2]] output_shape [2, 6, 1] : tensor<2x6xf32> into tensor<2x6x1xf32>
  func.return %y : tensor<2x6x1xf32>
}
