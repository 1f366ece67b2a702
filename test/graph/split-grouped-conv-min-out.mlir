// RUN: ziggurat-opt %s --split-input-file -p "graph-split-grouped-conv{min-out-per-group=17}" | filecheck %s

// min-out-per-group=17 (what graph-opt runs in NCHW): 8 output channels per group stay one
// grouped conv, for graph-to-tile's group loop; 32 per group are split.
// CHECK-LABEL: func.func @narrow_groups(
// CHECK-NEXT:    graph.conv2d %x, %w {groups = 4 : i64}
// CHECK-LABEL: func.func @wide_groups(
// CHECK-COUNT-2: graph.conv2d
// CHECK:         graph.concat
func.func @narrow_groups(%x: tensor<1x16x5x5xf32>, %w: tensor<32x4x3x3xf32>) -> tensor<1x32x3x3xf32> {
  %y = graph.conv2d %x, %w {groups = 4 : i64} : (tensor<1x16x5x5xf32>, tensor<32x4x3x3xf32>) -> tensor<1x32x3x3xf32>
  func.return %y : tensor<1x32x3x3xf32>
}

// -----

func.func @wide_groups(%x: tensor<1x16x5x5xf32>, %w: tensor<64x8x3x3xf32>) -> tensor<1x64x3x3xf32> {
  %y = graph.conv2d %x, %w {groups = 2 : i64} : (tensor<1x16x5x5xf32>, tensor<64x8x3x3xf32>) -> tensor<1x64x3x3xf32>
  func.return %y : tensor<1x64x3x3xf32>
}
