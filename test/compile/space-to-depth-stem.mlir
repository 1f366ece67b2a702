// ResNet's stem (7x7/2 over 3 channels, bias, ReLU) in f16 on a 64x64 image,
// compiled for each machine, computes what the original graph does. On davinci
// and tensorcore graph-opt gives the conv its space-to-depth input (12 channels
// of 4x4; tensorcore's rearrangement goes through smem); systolic keeps the conv
// (its array pads no channel: the rewrite would add work).
// RUN: ziggurat-run %s --seed 2 --outputs %t.expected.npz
// RUN: ziggurat-opt %s -p 'compile{machine=davinci}' | ziggurat-run - --seed 2 --expect %t.expected.npz --rtol 1e-2 --atol 1e-2
// RUN: ziggurat-opt %s -p 'compile{machine=tensorcore}' | ziggurat-run - --seed 2 --expect %t.expected.npz --rtol 1e-2 --atol 1e-2
// RUN: ziggurat-opt %s -p 'compile{machine=systolic}' | ziggurat-run - --seed 2 --expect %t.expected.npz --rtol 1e-2 --atol 1e-2
// RUN: ziggurat-opt %s -p 'graph-opt{machine=davinci}' | filecheck %s --check-prefix=REWRITTEN
// RUN: ziggurat-opt %s -p 'graph-opt{machine=tensorcore}' | filecheck %s --check-prefix=REWRITTEN
// RUN: ziggurat-opt %s -p 'graph-opt{machine=systolic}' | filecheck %s --check-prefix=KEPT
// RUN: ziggurat-opt %s -p 'graph-opt' | filecheck %s --check-prefix=KEPT
// REWRITTEN:   graph.fused "reshape_transpose_reshape"
// REWRITTEN:   graph.conv2d {{.*}} {pads = array<i64: 2, 2, 1, 1>} : (tensor<1x12x32x32xf16>, tensor<16x12x4x4xf16>, tensor<16xf16>) -> tensor<1x16x32x32xf16>
// KEPT-NOT:    graph.transpose
// KEPT:        graph.conv2d {{.*}} {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>} : (tensor<1x3x64x64xf16>
func.func @main(%x: tensor<1x3x64x64xf16>, %b: tensor<16xf16>) -> tensor<1x16x32x32xf16> {
  %w = graph.constant dense<0.0625> : tensor<16x3x7x7xf16>
  %y = graph.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>} : (tensor<1x3x64x64xf16>, tensor<16x3x7x7xf16>, tensor<16xf16>) -> tensor<1x16x32x32xf16>
  %r = graph.relu %y : tensor<1x16x32x32xf16>
  func.return %r : tensor<1x16x32x32xf16>
}
