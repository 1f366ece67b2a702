// The lowered program computes what the graph program does: both run on the same
// seeded inputs and print the same numbers. Integer data keeps the comparison exact.
// RUN: ziggurat-run %s --seed 3 --print > %t.graph
// RUN: ziggurat-opt %s -p graph-to-tile > %t.tile.mlir
// RUN: ziggurat-run %t.tile.mlir --seed 3 --print > %t.tile
// RUN: diff %t.graph %t.tile
// RUN: filecheck %s --input-file %t.tile.mlir --check-prefix=TILE

// TILE-NOT: graph.
// TILE: linalg.conv_2d_nchw_fchw
// TILE-NOT: graph.

func.func @main(%x: tensor<1x4x6x6xi32>, %w: tensor<8x4x3x3xi32>, %b: tensor<8xi32>, %i: tensor<3xi64>)
    -> (tensor<1x8x3x3xi32>, tensor<1x3x8xi32>, tensor<8x7xi32>) {
  %c = graph.conv2d %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x6xi32>, tensor<8x4x3x3xi32>, tensor<8xi32>) -> tensor<1x8x6x6xi32>
  %r = graph.relu %c : tensor<1x8x6x6xi32>
  %p = graph.max_pool %r {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x8x6x6xi32> -> tensor<1x8x3x3xi32>
  %s = graph.reduce_sum %p {axes = array<i64: 3>, keepdims = false} : tensor<1x8x3x3xi32> -> tensor<1x8x3xi32>
  %t = graph.transpose %s {perm = array<i64: 0, 2, 1>} : tensor<1x8x3xi32> -> tensor<1x3x8xi32>
  %f = graph.reshape %s : tensor<1x8x3xi32> -> tensor<8x3xi32>
  %pad = graph.pad %f {pads = array<i64: 0, 2, 0, 2>, mode = "reflect"} : tensor<8x3xi32> -> tensor<8x7xi32>
  // Random i64 inputs lie in [-8, 8): every one is a valid index of the 8 rows.
  %g = graph.gather %pad, %i {axis = 0 : i64} : (tensor<8x7xi32>, tensor<3xi64>) -> tensor<3x7xi32>
  %cat = graph.concat %g, %pad {axis = 0 : i64} : (tensor<3x7xi32>, tensor<8x7xi32>) -> tensor<11x7xi32>
  %m = graph.reduce_max %cat {axes = array<i64: 0>} : tensor<11x7xi32> -> tensor<1x7xi32>
  %y = graph.sub %pad, %m : (tensor<8x7xi32>, tensor<1x7xi32>) -> tensor<8x7xi32>
  func.return %p, %t, %y : tensor<1x8x3x3xi32>, tensor<1x3x8xi32>, tensor<8x7xi32>
}
