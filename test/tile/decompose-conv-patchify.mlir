// RUN: ziggurat-opt %s -p tile-decompose-conv | filecheck %s
// RUN: ziggurat-opt %s -p tile-decompose-conv | ziggurat-run - --function patchify --seed 1 --print > %t.split
// RUN: ziggurat-run %s --function patchify --seed 1 --print > %t.whole
// RUN: diff %t.whole %t.split

// A 2x2 stride-2 conv (ConvNeXt's downsampling, ViT's patch embedding): its window tiles
// its input (`oh * 2 + kh`), but the weights do not read `oh`, so it is a window, one
// contraction per point (4, K the input channels), not a block split: that would make
// (c, kh, kw) the input's K dims between its rows and columns, which no matrix unit reads
// as a row-major tile.
// CHECK-LABEL: func.func @patchify(
// CHECK-NOT:     tensor.expand_shape
// CHECK:         tensor.extract_slice %x[0, 0, 0, 0] [1, 4, 3, 3] [1, 1, 2, 2] : tensor<1x4x6x6xi32> to tensor<1x4x3x3xi32>
// CHECK-COUNT-4: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x4x3x3xi32>, tensor<8x4xi32>) outs(%{{.*}} : tensor<1x8x3x3xi32>)
// CHECK-NOT:     linalg.generic
// CHECK:         func.return
func.func @patchify(%x: tensor<1x4x6x6xi32>, %w: tensor<8x4x2x2xi32>) -> tensor<1x8x3x3xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x8x3x3xi32>
  %acc = linalg.fill ins(%zero : i32) outs(%e : tensor<1x8x3x3xi32>) -> tensor<1x8x3x3xi32>
  %y = linalg.generic {indexing_maps = [affine_map<(n, o, oh, ow, c, kh, kw) -> (n, c, oh * 2 + kh, ow * 2 + kw)>, affine_map<(n, o, oh, ow, c, kh, kw) -> (o, c, kh, kw)>, affine_map<(n, o, oh, ow, c, kh, kw) -> (n, o, oh, ow)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x4x6x6xi32>, tensor<8x4x2x2xi32>) outs(%acc : tensor<1x8x3x3xi32>) {
  ^bb0(%a: i32, %b: i32, %s: i32):
    %p = arith.muli %a, %b : i32
    %t = arith.addi %s, %p : i32
    linalg.yield %t : i32
  } -> tensor<1x8x3x3xi32>
  func.return %y : tensor<1x8x3x3xi32>
}
