// RUN: ziggurat-opt %s -p tile-decompose-conv | filecheck %s
// RUN: ziggurat-opt %s -p tile-decompose-conv | ziggurat-run - --function conv_last_row --seed 1 --print > %t.split
// RUN: ziggurat-run %s --function conv_last_row --seed 1 --print > %t.whole
// RUN: diff %t.whole %t.split

// The last row of a 3x3 conv tiled by rows (13 = 4 x 3 + 1): one output row, so the
// input rows are `oh + kh` with `oh` a unit dim. That is still a window: one
// contraction per window point (9, with K the 4 input channels, as the tile sizes
// planned), not a block split that makes `kh` a second K dim (3 contractions with
// K = 4 x 3, whose weight tiles are 3 times larger: SqueezeNet's overflowed l0a).
// CHECK-LABEL: func.func @conv_last_row(
// CHECK-NOT:     tensor.expand_shape
// CHECK:         tensor.extract_slice %x[0, 0, 0, 0] [1, 4, 1, 5] [1, 1, 1, 1] : tensor<1x4x3x7xi32> to tensor<1x4x1x5xi32>
// CHECK-COUNT-9: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x4x1x5xi32>, tensor<8x4xi32>) outs(%{{.*}} : tensor<1x8x1x5xi32>)
// CHECK-NOT:     linalg.generic
// CHECK:         func.return
func.func @conv_last_row(%x: tensor<1x4x3x7xi32>, %w: tensor<8x4x3x3xi32>) -> tensor<1x8x1x5xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x8x1x5xi32>
  %acc = linalg.fill ins(%zero : i32) outs(%e : tensor<1x8x1x5xi32>) -> tensor<1x8x1x5xi32>
  %y = linalg.generic {indexing_maps = [affine_map<(n, o, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>, affine_map<(n, o, oh, ow, c, kh, kw) -> (o, c, kh, kw)>, affine_map<(n, o, oh, ow, c, kh, kw) -> (n, o, oh, ow)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x4x3x7xi32>, tensor<8x4x3x3xi32>) outs(%acc : tensor<1x8x1x5xi32>) {
  ^bb0(%a: i32, %b: i32, %s: i32):
    %p = arith.muli %a, %b : i32
    %t = arith.addi %s, %p : i32
    linalg.yield %t : i32
  } -> tensor<1x8x1x5xi32>
  func.return %y : tensor<1x8x1x5xi32>
}
