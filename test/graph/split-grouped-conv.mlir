// RUN: ziggurat-opt %s --split-input-file -p graph-split-grouped-conv | filecheck %s
// Numerics: the split program computes what the grouped conv does (f32, exact
// up to the summation order), on the first function of this file.
// RUN: ziggurat-run %s --function grouped --save-inputs %t.in.npz --outputs %t.ref.npz
// RUN: ziggurat-opt %s -p graph-split-grouped-conv | ziggurat-run - --function grouped --inputs %t.in.npz --expect %t.ref.npz --rtol 1e-5 --atol 1e-5

// Two groups of 4 input and 3 output channels, with a bias: one conv per group on
// its slices of the input channels, the weights' and the bias' output channels,
// the strides and pads kept, the results concatenated along the channels.
// CHECK-LABEL: func.func @grouped(
// CHECK-NEXT:    %[[X0:.*]] = graph.slice %x {starts = array<i64: 0>, ends = array<i64: 4>, axes = array<i64: 1>} : tensor<1x8x7x7xf32> -> tensor<1x4x7x7xf32>
// CHECK-NEXT:    %[[W0:.*]] = graph.slice %w {starts = array<i64: 0>, ends = array<i64: 3>, axes = array<i64: 0>} : tensor<6x4x3x3xf32> -> tensor<3x4x3x3xf32>
// CHECK-NEXT:    %[[B0:.*]] = graph.slice %b {starts = array<i64: 0>, ends = array<i64: 3>, axes = array<i64: 0>} : tensor<6xf32> -> tensor<3xf32>
// CHECK-NEXT:    %[[Y0:.*]] = graph.conv2d %[[X0]], %[[W0]], %[[B0]] {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x7x7xf32>, tensor<3x4x3x3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT:    %[[X1:.*]] = graph.slice %x {starts = array<i64: 4>, ends = array<i64: 8>, axes = array<i64: 1>}
// CHECK-NEXT:    %[[W1:.*]] = graph.slice %w {starts = array<i64: 3>, ends = array<i64: 6>, axes = array<i64: 0>}
// CHECK-NEXT:    %[[B1:.*]] = graph.slice %b {starts = array<i64: 3>, ends = array<i64: 6>, axes = array<i64: 0>}
// CHECK-NEXT:    %[[Y1:.*]] = graph.conv2d %[[X1]], %[[W1]], %[[B1]]
// CHECK-NEXT:    %[[Y:.*]] = graph.concat %[[Y0]], %[[Y1]] {axis = 1 : i64} : (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) -> tensor<1x6x4x4xf32>
// CHECK-NEXT:    func.return %[[Y]]
func.func @grouped(%x: tensor<1x8x7x7xf32>, %w: tensor<6x4x3x3xf32>, %b: tensor<6xf32>) -> tensor<1x6x4x4xf32> {
  %y = graph.conv2d %x, %w, %b {groups = 2 : i64, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x7x7xf32>, tensor<6x4x3x3xf32>, tensor<6xf32>) -> tensor<1x6x4x4xf32>
  func.return %y : tensor<1x6x4x4xf32>
}

// -----

// NHWC: the input's channels are its last axis; the weights (OHWI) are sliced on O.
// CHECK-LABEL: func.func @grouped_nhwc(
// CHECK-NEXT:    graph.slice %x {starts = array<i64: 0>, ends = array<i64: 2>, axes = array<i64: 3>} : tensor<1x5x5x4xf32> -> tensor<1x5x5x2xf32>
// CHECK-NEXT:    graph.slice %w {starts = array<i64: 0>, ends = array<i64: 2>, axes = array<i64: 0>} : tensor<4x1x1x2xf32> -> tensor<2x1x1x2xf32>
// CHECK-NEXT:    graph.conv2d {{.*}} {layout = "NHWC"} : (tensor<1x5x5x2xf32>, tensor<2x1x1x2xf32>) -> tensor<1x5x5x2xf32>
// CHECK:         graph.concat {{.*}} {axis = 3 : i64} : (tensor<1x5x5x2xf32>, tensor<1x5x5x2xf32>) -> tensor<1x5x5x4xf32>
func.func @grouped_nhwc(%x: tensor<1x5x5x4xf32>, %w: tensor<4x1x1x2xf32>) -> tensor<1x5x5x4xf32> {
  %y = graph.conv2d %x, %w {groups = 2 : i64, layout = "NHWC"} : (tensor<1x5x5x4xf32>, tensor<4x1x1x2xf32>) -> tensor<1x5x5x4xf32>
  func.return %y : tensor<1x5x5x4xf32>
}

// -----

// Left alone: depthwise (one output channel per group; graph-to-tile lowers it
// without a reshape) and ungrouped convs.
// CHECK-LABEL: func.func @not_split(
// CHECK-NOT:     graph.slice
// CHECK-NOT:     graph.concat
// CHECK:         graph.conv2d %x, %dw {groups = 4 : i64}
// CHECK:         graph.conv2d %d, %w
// CHECK-NOT:     graph.concat
func.func @not_split(%x: tensor<1x4x5x5xf32>, %dw: tensor<4x1x3x3xf32>, %w: tensor<8x4x1x1xf32>) -> tensor<1x8x3x3xf32> {
  %d = graph.conv2d %x, %dw {groups = 4 : i64} : (tensor<1x4x5x5xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x3x3xf32>
  %y = graph.conv2d %d, %w : (tensor<1x4x3x3xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x3x3xf32>
  func.return %y : tensor<1x8x3x3xf32>
}
