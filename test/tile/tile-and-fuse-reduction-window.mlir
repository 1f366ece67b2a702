// RUN: ziggurat-opt %s -p 'graph-fuse,graph-to-tile,tile-and-fuse{machine=davinci}' | filecheck %s

// A vector group's tiles are sized with the whole window a fused reduction reads per
// output element: the global average pool of 1000 channels of 13x13 f16 (SqueezeNet's
// last layer) reads 169 elements per output, which tile-vectorize widens to f32; one
// tile of all 1000 channels (330 KB in f16, twice that in f32) would not fit davinci's
// ub (256 KB), so the channels are tiled by 128, the remainder 104 after.
// CHECK-LABEL: func.func @global_avg_pool_wide(
// CHECK:         scf.for
// CHECK:           tensor.extract_slice %x[0, %{{.*}}, 0, 0] [1, 128, 13, 13] [1, 1, 1, 1] : tensor<1x1000x13x13xf16> to tensor<1x128x13x13xf16>
// CHECK:           tensor.insert_slice %{{.*}} into %{{.*}}[0, %{{.*}}] [1, 128] [1, 1] : tensor<1x128xf16> into tensor<1x1000xf16>
// CHECK:         tensor.extract_slice %x[0, 896, 0, 0] [1, 104, 13, 13] [1, 1, 1, 1] : tensor<1x1000x13x13xf16> to tensor<1x104x13x13xf16>
func.func @global_avg_pool_wide(%x: tensor<1x1000x13x13xf16>) -> tensor<1x1000x1x1xf16> {
  %y = graph.global_avg_pool %x : tensor<1x1000x13x13xf16> -> tensor<1x1000x1x1xf16>
  func.return %y : tensor<1x1000x1x1xf16>
}
