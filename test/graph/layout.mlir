// RUN: ziggurat-opt %s -p 'graph-layout{layout=NHWC}' | filecheck %s

// conv -> relu -> conv: the inner transposes cancel; only the argument and the
// result are transposed, and the constant weights are permuted OIHW -> OHWI.
// CHECK-LABEL: func.func @conv_relu_conv
// CHECK-DAG:     %[[W:.*]] = graph.constant {{.*}} : tensor<4x3x3x3xf32>
// CHECK-DAG:     %[[X:.*]] = graph.transpose %x {perm = array<i64: 0, 2, 3, 1>} : tensor<1x3x8x8xf32> -> tensor<1x8x8x3xf32>
// CHECK:         %[[C1:.*]] = graph.conv2d %[[X]], %[[W]] {pads = array<i64: 1, 1, 1, 1>, layout = "NHWC"} : (tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>) -> tensor<1x8x8x4xf32>
// CHECK-NEXT:    %[[R:.*]] = graph.relu %[[C1]] : tensor<1x8x8x4xf32>
// CHECK:         %[[C2:.*]] = graph.conv2d %[[R]], %{{.*}} {layout = "NHWC"} : (tensor<1x8x8x4xf32>, tensor<2x1x1x4xf32>) -> tensor<1x8x8x2xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.transpose %[[C2]] {perm = array<i64: 0, 3, 1, 2>} : tensor<1x8x8x2xf32> -> tensor<1x2x8x8xf32>
// CHECK-NEXT:    func.return %[[Y]]
func.func @conv_relu_conv(%x: tensor<1x3x8x8xf32>) -> tensor<1x2x8x8xf32> {
  %w1 = graph.constant dense<0.5> : tensor<4x3x3x3xf32>
  %w2 = graph.constant dense<[[[[1.0]], [[2.0]], [[3.0]], [[4.0]]], [[[5.0]], [[6.0]], [[7.0]], [[8.0]]]]> : tensor<2x4x1x1xf32>
  %c1 = graph.conv2d %x, %w1 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %r = graph.relu %c1 : tensor<1x4x8x8xf32>
  %c2 = graph.conv2d %r, %w2 : (tensor<1x4x8x8xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x8x8xf32>
  func.return %c2 : tensor<1x2x8x8xf32>
}

// A pool, a per-channel constant (permuted to 1x1x1xC) and a square all stay in NHWC.
// CHECK-LABEL: func.func @pool_add_mul
// CHECK:         %[[X:.*]] = graph.transpose %x {perm = array<i64: 0, 2, 3, 1>}
// CHECK:         %[[P:.*]] = graph.max_pool %[[X]] {{.*}}layout = "NHWC"
// CHECK:         %[[A:.*]] = graph.add %[[P]], %{{.*}} : (tensor<1x4x4x2xf32>, tensor<1x1x1x2xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %[[M:.*]] = graph.mul %[[A]], %[[A]] : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    graph.transpose %[[M]] {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:    func.return
func.func @pool_add_mul(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %bias = graph.constant dense<[[[[1.0]], [[2.0]]]]> : tensor<1x2x1x1xf32>
  %p = graph.max_pool %x {kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %a = graph.add %p, %bias : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %m = graph.mul %a, %a : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %m : tensor<1x2x4x4xf32>
}

// A value used in both layouts keeps a transpose on each side.
// CHECK-LABEL: func.func @residual
// CHECK:         %[[X:.*]] = graph.transpose %x {perm = array<i64: 0, 2, 3, 1>}
// CHECK:         %[[P:.*]] = graph.avg_pool %[[X]]
// CHECK-NEXT:    %[[B:.*]] = graph.transpose %[[P]] {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:    graph.add %[[B]], %x
func.func @residual(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %p = graph.avg_pool %x {kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  %a = graph.add %p, %x : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %a : tensor<1x2x4x4xf32>
}
