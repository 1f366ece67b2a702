// RUN: ziggurat-opt %s --split-input-file -p graph-canonicalize | filecheck %s
// RUN: ziggurat-opt %s --split-input-file -p canonicalize | filecheck %s

// A gather at constant indices that count up by one is a slice along its axis (a view), then a
// reshape to the indices' shape; any other gather stays.

// A scalar index (qkv[1] of an attention): a slice of one, reshaped to drop the axis.
// CHECK-LABEL: func.func @scalar_index(
// CHECK-NEXT:    %[[S:.*]] = graph.slice %x {starts = array<i64: 1>, ends = array<i64: 2>, axes = array<i64: 0>} : tensor<3x5x1x8xf32> -> tensor<1x5x1x8xf32>
// CHECK-NEXT:    %[[R:.*]] = graph.reshape %[[S]] : tensor<1x5x1x8xf32> -> tensor<5x1x8xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<5x1x8xf32>
func.func @scalar_index(%x: tensor<3x5x1x8xf32>) -> tensor<5x1x8xf32> {
  %k = graph.constant dense<1> : tensor<i64>
  %y = graph.gather %x, %k : (tensor<3x5x1x8xf32>, tensor<i64>) -> tensor<5x1x8xf32>
  func.return %y : tensor<5x1x8xf32>
}

// -----

// Negative indices count from the end; a 1-d run keeps the gathered shape: no reshape.
// CHECK-LABEL: func.func @negative_run(
// CHECK-NEXT:    %[[S:.*]] = graph.slice %x {starts = array<i64: 2>, ends = array<i64: 4>, axes = array<i64: 1>} : tensor<3x4xi32> -> tensor<3x2xi32>
// CHECK-NEXT:    func.return %[[S]] : tensor<3x2xi32>
func.func @negative_run(%x: tensor<3x4xi32>) -> tensor<3x2xi32> {
  %k = graph.constant dense<[-2, -1]> : tensor<2xi32>
  %y = graph.gather %x, %k {axis = -1 : i64} : (tensor<3x4xi32>, tensor<2xi32>) -> tensor<3x2xi32>
  func.return %y : tensor<3x2xi32>
}

// -----

// A 2-d run along a middle axis: the slice, reshaped to the indices' 2x2.
// CHECK-LABEL: func.func @matrix_run(
// CHECK-NEXT:    %[[S:.*]] = graph.slice %x {starts = array<i64: 1>, ends = array<i64: 5>, axes = array<i64: 1>} : tensor<2x6x3xf32> -> tensor<2x4x3xf32>
// CHECK-NEXT:    %[[R:.*]] = graph.reshape %[[S]] : tensor<2x4x3xf32> -> tensor<2x2x2x3xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @matrix_run(%x: tensor<2x6x3xf32>) -> tensor<2x2x2x3xf32> {
  %k = graph.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  %y = graph.gather %x, %k {axis = 1 : i64} : (tensor<2x6x3xf32>, tensor<2x2xi64>) -> tensor<2x2x2x3xf32>
  func.return %y : tensor<2x2x2x3xf32>
}

// -----

// Stays: indices out of order, repeated, out of range, empty, or not constant.
// CHECK-LABEL: func.func @stays(
// CHECK-COUNT-5: graph.gather
// CHECK-NOT:     graph.slice
func.func @stays(%x: tensor<3x4xf32>, %i: tensor<2xi64>)
    -> (tensor<3x4xf32>, tensor<2x4xf32>, tensor<4xf32>, tensor<0x4xf32>, tensor<2x4xf32>) {
  %p = graph.constant dense<[2, 0, 1]> : tensor<3xi64>
  %a = graph.gather %x, %p : (tensor<3x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  %r = graph.constant dense<[1, 1]> : tensor<2xi64>
  %b = graph.gather %x, %r : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  %o = graph.constant dense<3> : tensor<i64>
  %c = graph.gather %x, %o : (tensor<3x4xf32>, tensor<i64>) -> tensor<4xf32>
  %e = graph.constant dense<> : tensor<0xi64>
  %d = graph.gather %x, %e : (tensor<3x4xf32>, tensor<0xi64>) -> tensor<0x4xf32>
  %f = graph.gather %x, %i : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  func.return %a, %b, %c, %d, %f : tensor<3x4xf32>, tensor<2x4xf32>, tensor<4xf32>, tensor<0x4xf32>, tensor<2x4xf32>
}
