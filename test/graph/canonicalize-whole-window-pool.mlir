// A max or average pool whose one window covers its whole input, unpadded and undilated, is the
// global pool (ResNet's 7x7 average pool on its 7x7 map): graph-canonicalize rewrites it, in
// either layout, and the rewritten function computes the same values. A window smaller than the
// input, a padded one or a dilated one stays.
// RUN: ziggurat-opt %s -p graph-canonicalize | filecheck %s
// RUN: ziggurat-run %s --function whole --outputs %t.before.npz
// RUN: ziggurat-opt %s -p graph-canonicalize | ziggurat-run - --function whole --expect %t.before.npz | filecheck %s --check-prefix=SAME

// CHECK-LABEL: func.func @whole(
// CHECK-NEXT:    %[[A:.*]] = graph.global_avg_pool %x : tensor<2x5x7x7xf32> -> tensor<2x5x1x1xf32>
// CHECK-NEXT:    %[[M:.*]] = graph.global_max_pool %x : tensor<2x5x7x7xf32> -> tensor<2x5x1x1xf32>
// CHECK-NEXT:    %[[H:.*]] = graph.global_avg_pool %y {layout = "NHWC"} : tensor<2x3x4x5xf32> -> tensor<2x1x1x5xf32>
// CHECK-NEXT:    func.return %[[A]], %[[M]], %[[H]]
func.func @whole(%x: tensor<2x5x7x7xf32>, %y: tensor<2x3x4x5xf32>) -> (tensor<2x5x1x1xf32>, tensor<2x5x1x1xf32>, tensor<2x1x1x5xf32>) {
  %0 = graph.avg_pool %x {kernel = array<i64: 7, 7>} : tensor<2x5x7x7xf32> -> tensor<2x5x1x1xf32>
  %1 = graph.max_pool %x {kernel = array<i64: 7, 7>, strides = array<i64: 2, 2>} : tensor<2x5x7x7xf32> -> tensor<2x5x1x1xf32>
  %2 = graph.avg_pool %y {kernel = array<i64: 3, 4>, layout = "NHWC"} : tensor<2x3x4x5xf32> -> tensor<2x1x1x5xf32>
  func.return %0, %1, %2 : tensor<2x5x1x1xf32>, tensor<2x5x1x1xf32>, tensor<2x1x1x5xf32>
}

// SAME-COUNT-3: {{.*}} ok{{$}}

// CHECK-LABEL: func.func @not_whole(
// CHECK-NEXT:    graph.avg_pool
// CHECK-NEXT:    graph.avg_pool
// CHECK-NEXT:    graph.max_pool
// CHECK-NEXT:    func.return
func.func @not_whole(%x: tensor<1x2x7x7xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>) {
  %0 = graph.avg_pool %x {kernel = array<i64: 6, 6>} : tensor<1x2x7x7xf32> -> tensor<1x2x2x2xf32>
  %1 = graph.avg_pool %x {kernel = array<i64: 7, 7>, strides = array<i64: 7, 7>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x2x7x7xf32> -> tensor<1x2x1x1xf32>
  %2 = graph.max_pool %x {kernel = array<i64: 4, 4>, dilations = array<i64: 2, 2>} : tensor<1x2x7x7xf32> -> tensor<1x2x1x1xf32>
  func.return %0, %1, %2 : tensor<1x2x2x2xf32>, tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>
}
