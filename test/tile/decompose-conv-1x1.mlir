// RUN: ziggurat-opt %s -p tile-decompose-conv | filecheck %s
// RUN: ziggurat-opt %s -p tile-decompose-conv | ziggurat-run - --function conv1x1 --seed 1 --print > %t.split
// RUN: ziggurat-run %s --function conv1x1 --seed 1 --print > %t.whole
// RUN: diff %t.whole %t.split

// A stride-1 1x1 conv: its rows are `oh + kh` with `kh` a unit reduction dim. That is a
// one-point window, not a block split that keeps `kh` and `kw` as unit K dims after
// the channels: loop-promote-to-memory-space rounds K up by padding the innermost K dim,
// `kw`, which left the B operand (the input, [c, oh, 1, ow, 2]) no row-major tile for
// loop-to-npu (ShuffleNet's 136-channel 1x1 convs, K tiled 64 + 8).
// CHECK-LABEL: func.func @conv1x1(
// CHECK-NOT:     tensor.expand_shape
// CHECK:         tensor.extract_slice %w[0, 0, 0, 0] [8, 4, 1, 1] [1, 1, 1, 1] : tensor<8x4x1x1xi32> to tensor<8x4xi32>
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d1, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%x, %{{.*}} : tensor<1x4x3x5xi32>, tensor<8x4xi32>) outs(%{{.*}} : tensor<1x8x3x5xi32>)
// CHECK-NOT:     linalg.generic
// CHECK:         func.return
func.func @conv1x1(%x: tensor<1x4x3x5xi32>, %w: tensor<8x4x1x1xi32>) -> tensor<1x8x3x5xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x8x3x5xi32>
  %acc = linalg.fill ins(%zero : i32) outs(%e : tensor<1x8x3x5xi32>) -> tensor<1x8x3x5xi32>
  %y = linalg.generic {indexing_maps = [affine_map<(n, o, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>, affine_map<(n, o, oh, ow, c, kh, kw) -> (o, c, kh, kw)>, affine_map<(n, o, oh, ow, c, kh, kw) -> (n, o, oh, ow)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x4x3x5xi32>, tensor<8x4x1x1xi32>) outs(%acc : tensor<1x8x3x5xi32>) {
  ^bb0(%a: i32, %b: i32, %s: i32):
    %p = arith.muli %a, %b : i32
    %t = arith.addi %s, %p : i32
    linalg.yield %t : i32
  } -> tensor<1x8x3x5xi32>
  func.return %y : tensor<1x8x3x5xi32>
}
