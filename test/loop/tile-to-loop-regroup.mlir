// A reshape that splits one dim and merges others reaches tile-to-loop as a collapse_shape then an
// expand_shape (graph-to-tile's lowering of it): both are views of the row-major buffer, nothing
// is copied. A tensor.reshape (what graph-to-tile keeps for an empty tensor only) is refused.
// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics -p "tile-to-loop{machine=davinci}" | filecheck %s

// CHECK-LABEL: func.func @split_heads(%q: memref<65x1x64xf32, "gm">, %result0: memref<65x4x16xf32, "gm">) {
// CHECK-NEXT:    %[[C:.*]] = memref.collapse_shape %q {{\[}}[0 : i64], [1 : i64, 2 : i64]] : memref<65x1x64xf32, "gm"> into memref<65x64xf32, "gm">
// CHECK-NEXT:    %[[E:.*]] = memref.expand_shape %[[C]] {{\[}}[0 : i64], [1 : i64, 2 : i64]] output_shape [65, 4, 16] : memref<65x64xf32, "gm"> into memref<65x4x16xf32, "gm">
// CHECK-NEXT:    loop.copy %[[E]] -> %result0
// CHECK-NEXT:    func.return
func.func @split_heads(%q: tensor<65x1x64xf32>) -> tensor<65x4x16xf32> {
  %c = tensor.collapse_shape %q [[0], [1, 2]] : tensor<65x1x64xf32> into tensor<65x64xf32>
  %e = tensor.expand_shape %c [[0], [1, 2]] output_shape [65, 4, 16] : tensor<65x64xf32> into tensor<65x4x16xf32>
  func.return %e : tensor<65x4x16xf32>
}

// -----

func.func @reshape(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %shape = arith.constant dense<[4, 6]> : tensor<2xi64>
  // expected-error@+1 {{tile-to-loop cannot bufferize 'tensor.reshape'}}
  %r = tensor.reshape %x(%shape) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<4x6xf32>
  func.return %r : tensor<4x6xf32>
}
