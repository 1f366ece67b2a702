// RUN: ziggurat-opt %s --split-input-file -p graph-to-tile | filecheck %s

// A grouped conv with several output channels per group is one contraction over
// (n, g, og, oh, ow | c, kh, kw); the collapse of (g, og) into the output channels sinks
// past the elementwise ops of its group (their other operands expanded to match), so every
// member of the group runs over (n, g, og, oh, ow) and the collapse, after the group's last
// op, belongs to no group.
// CHECK-LABEL: func.func @fused(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, ((d1 * 4) + d5), (d3 + d6), (d4 + d7))>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (((d1 * 3) + d2), d5, d6, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>]{{.*}} outs(%{{.*}} : tensor<1x2x3x6x6xf32>) attrs = {tile.group = "conv2d_relu_0", tile.root}
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         %[[B:.*]] = tensor.expand_shape %b {{\[}}[0 : i64, 1 : i64]] output_shape [2, 3] : tensor<6xf16> into tensor<2x3xf16>
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d1, d2)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>]{{.*}} ins(%{{.*}}, %[[B]] : tensor<1x2x3x6x6xf32>, tensor<2x3xf16>) outs(%{{.*}} : tensor<1x2x3x6x6xf16>) attrs = {tile.group = "conv2d_relu_0", tile.root}
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<1x2x3x6x6xf16>) outs(%{{.*}} : tensor<1x2x3x6x6xf16>) attrs = {tile.group = "conv2d_relu_0"}
// CHECK:         } -> tensor<1x2x3x6x6xf16>
// CHECK-NEXT:    %[[C:.*]] = tensor.collapse_shape %[[R]] {{\[}}[0 : i64], [1 : i64, 2 : i64], [3 : i64], [4 : i64]] : tensor<1x2x3x6x6xf16> into tensor<1x6x6x6xf16>
// CHECK-NEXT:    func.return %[[C]]
func.func @fused(%x: tensor<1x8x6x6xf16>, %w: tensor<6x4x3x3xf16>, %b: tensor<6xf16>) -> tensor<1x6x6x6xf16> {
  %g = graph.fused "conv2d_relu" (%x, %w, %b) {root = "graph.conv2d"} ({
  ^bb0(%a: tensor<1x8x6x6xf16>, %k: tensor<6x4x3x3xf16>, %c: tensor<6xf16>):
    %y = graph.conv2d %a, %k, %c {groups = 2 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x6x6xf16>, tensor<6x4x3x3xf16>, tensor<6xf16>) -> tensor<1x6x6x6xf16>
    %r = graph.relu %y : tensor<1x6x6x6xf16>
    graph.yield %r : tensor<1x6x6x6xf16>
  }) : (tensor<1x8x6x6xf16>, tensor<6x4x3x3xf16>, tensor<6xf16>) -> tensor<1x6x6x6xf16>
  func.return %g : tensor<1x6x6x6xf16>
}

// -----

// A value from outside the group that an elementwise member reads whole is expanded too
// (a view); one the conv output is read by twice (x * sigmoid(x)) is the uncollapsed value.
// CHECK-LABEL: func.func @residual(
// CHECK:         %[[S:.*]] = tensor.expand_shape %skip {{\[}}[0 : i64], [1 : i64, 2 : i64], [3 : i64], [4 : i64]] output_shape [1, 2, 3, 5, 5] : tensor<1x6x5x5xf32> into tensor<1x2x3x5x5xf32>
// CHECK:         %[[A:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[S]] : tensor<1x2x3x5x5xf32>, tensor<1x2x3x5x5xf32>)
// CHECK:         %[[G:.*]] = linalg.generic {{.*}} ins(%[[A]] : tensor<1x2x3x5x5xf32>)
// CHECK:         %[[M:.*]] = linalg.generic {{.*}} ins(%[[A]], %[[G]] : tensor<1x2x3x5x5xf32>, tensor<1x2x3x5x5xf32>)
// CHECK:         } -> tensor<1x2x3x5x5xf32>
// CHECK-NEXT:    tensor.collapse_shape %[[M]] {{.*}} into tensor<1x6x5x5xf32>
// CHECK-NOT:     tensor.collapse_shape
func.func @residual(%x: tensor<1x4x5x5xf32>, %w: tensor<6x2x1x1xf32>, %skip: tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32> {
  %g = graph.fused "conv2d_add_sigmoid_mul" (%x, %w, %skip) {root = "graph.conv2d"} ({
  ^bb0(%a: tensor<1x4x5x5xf32>, %k: tensor<6x2x1x1xf32>, %s: tensor<1x6x5x5xf32>):
    %y = graph.conv2d %a, %k {groups = 2 : i64} : (tensor<1x4x5x5xf32>, tensor<6x2x1x1xf32>) -> tensor<1x6x5x5xf32>
    %t = graph.add %y, %s : (tensor<1x6x5x5xf32>, tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32>
    %e = graph.sigmoid %t : tensor<1x6x5x5xf32>
    %m = graph.mul %t, %e : (tensor<1x6x5x5xf32>, tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32>
    graph.yield %m : tensor<1x6x5x5xf32>
  }) : (tensor<1x4x5x5xf32>, tensor<6x2x1x1xf32>, tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32>
  func.return %g : tensor<1x6x5x5xf32>
}

// -----

// Only a group's elementwise members take the collapse in: here a max pool follows the conv
// in its group, and the collapse stays between them.
// CHECK-LABEL: func.func @pooled(
// CHECK:         %[[Y:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<1x2x2x4x4xf32>)
// CHECK:         } -> tensor<1x2x2x4x4xf32>
// CHECK-NEXT:    tensor.collapse_shape %[[Y]] {{.*}} {tile.group = "conv2d_max_pool_0", tile.root} : tensor<1x2x2x4x4xf32> into tensor<1x4x4x4xf32>
func.func @pooled(%x: tensor<1x4x4x4xf32>, %w: tensor<4x2x1x1xf32>) -> tensor<1x4x2x2xf32> {
  %g = graph.fused "conv2d_max_pool" (%x, %w) {root = "graph.conv2d"} ({
  ^bb0(%a: tensor<1x4x4x4xf32>, %k: tensor<4x2x1x1xf32>):
    %y = graph.conv2d %a, %k {groups = 2 : i64} : (tensor<1x4x4x4xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x4x4xf32>
    %p = graph.max_pool %y {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x4x4x4xf32> -> tensor<1x4x2x2xf32>
    graph.yield %p : tensor<1x4x2x2xf32>
  }) : (tensor<1x4x4x4xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x2x2xf32>
  func.return %g : tensor<1x4x2x2xf32>
}
