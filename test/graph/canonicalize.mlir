// RUN: ziggurat-opt %s --split-input-file -p graph-canonicalize | filecheck %s --check-prefixes=CHECK,GRAPH
// RUN: ziggurat-opt %s --split-input-file -p canonicalize | filecheck %s --check-prefixes=CHECK,XDSL

// One function per pattern, then the cases that must not fire. Both passes
// apply the same patterns; only graph-canonicalize folds constants.

// CHECK-LABEL: func.func @add_zero_rhs(
// CHECK-NEXT:    func.return %x : tensor<2x3xf32>
func.func @add_zero_rhs(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %zero = graph.constant dense<0.0> : tensor<2x3xf32>
  %0 = graph.add %x, %zero : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// A scalar-shaped zero broadcasts into x's shape: still x.
// CHECK-LABEL: func.func @add_zero_lhs_broadcast_scalar(
// CHECK-NEXT:    func.return %x : tensor<2x3xi32>
func.func @add_zero_lhs_broadcast_scalar(%x: tensor<2x3xi32>) -> tensor<2x3xi32> {
  %zero = arith.constant dense<0> : tensor<1xi32>
  %0 = graph.add %zero, %x : (tensor<1xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  func.return %0 : tensor<2x3xi32>
}

// CHECK-LABEL: func.func @relu_relu(
// CHECK-NEXT:    %[[R:.*]] = graph.relu %x : tensor<4xf16>
// CHECK-NEXT:    func.return %[[R]] : tensor<4xf16>
func.func @relu_relu(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = graph.relu %x : tensor<4xf16>
  %1 = graph.relu %0 : tensor<4xf16>
  %2 = graph.relu %1 : tensor<4xf16>
  func.return %2 : tensor<4xf16>
}

// CHECK-LABEL: func.func @transpose_identity(
// CHECK-NEXT:    func.return %x : tensor<2x3x4xf32>
func.func @transpose_identity(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = graph.transpose %x {perm = array<i64: 0, 1, 2>} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @transpose_transpose(
// CHECK-NEXT:    %[[T:.*]] = graph.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT:    func.return %[[T]] : tensor<4x2x3xf32>
func.func @transpose_transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = graph.transpose %x {perm = array<i64: 1, 2, 0>} : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %1 = graph.transpose %0 {perm = array<i64: 2, 1, 0>} : tensor<3x4x2xf32> -> tensor<2x4x3xf32>
  %2 = graph.transpose %1 {perm = array<i64: 0, 2, 1>} : tensor<2x4x3xf32> -> tensor<2x3x4xf32>
  %3 = graph.transpose %2 {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  func.return %3 : tensor<4x2x3xf32>
}

// Two transposes that cancel leave nothing.
// CHECK-LABEL: func.func @transpose_inverse(
// CHECK-NEXT:    func.return %x : tensor<2x3x4xf32>
func.func @transpose_inverse(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = graph.transpose %x {perm = array<i64: 1, 2, 0>} : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %1 = graph.transpose %0 {perm = array<i64: 2, 0, 1>} : tensor<3x4x2xf32> -> tensor<2x3x4xf32>
  func.return %1 : tensor<2x3x4xf32>
}

// The inner transpose has another user: it stays, the outer one reads x directly.
// CHECK-LABEL: func.func @transpose_transpose_shared(
// CHECK-NEXT:    %[[T:.*]] = graph.transpose %x {perm = array<i64: 1, 0>}
// CHECK-NEXT:    func.return %x, %[[T]] : tensor<2x3xf32>, tensor<3x2xf32>
func.func @transpose_transpose_shared(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>) {
  %0 = graph.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %1 = graph.transpose %0 {perm = array<i64: 1, 0>} : tensor<3x2xf32> -> tensor<2x3xf32>
  func.return %1, %0 : tensor<2x3xf32>, tensor<3x2xf32>
}

// Constant folding is graph-canonicalize's; xDSL's canonicalize leaves the add.
// CHECK-LABEL: func.func @fold_in_graph_canonicalize(
// GRAPH-NEXT:    %[[C:.*]] = graph.constant dense<[3, 5]> : tensor<2xi8>
// GRAPH-NEXT:    func.return %[[C]] : tensor<2xi8>
// XDSL:          graph.add
func.func @fold_in_graph_canonicalize() -> tensor<2xi8> {
  %a = graph.constant dense<[1, 2]> : tensor<2xi8>
  %b = graph.constant dense<[2, 3]> : tensor<2xi8>
  %0 = graph.add %a, %b : (tensor<2xi8>, tensor<2xi8>) -> tensor<2xi8>
  func.return %0 : tensor<2xi8>
}

// -----

// Negative cases: none of these may change.

// x + zeros where zeros broadcasts x to a bigger shape is not x.
// CHECK-LABEL: func.func @add_zero_broadcasts_x(
// CHECK-NEXT:    graph.constant dense<0.000000e+00> : tensor<2x3xf32>
// CHECK-NEXT:    graph.add %x, %{{.*}} : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @add_zero_broadcasts_x(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  %zero = graph.constant dense<0.0> : tensor<2x3xf32>
  %0 = graph.add %x, %zero : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// A constant that is not all zeros.
// CHECK-LABEL: func.func @add_not_zero(
// CHECK:         graph.add
func.func @add_not_zero(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = graph.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %0 = graph.add %x, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// relu of exp is not relu of relu.
// CHECK-LABEL: func.func @relu_exp(
// CHECK-NEXT:    graph.exp
// CHECK-NEXT:    graph.relu
func.func @relu_exp(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.exp %x : tensor<4xf32>
  %1 = graph.relu %0 : tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// A permutation is kept as it is.
// CHECK-LABEL: func.func @transpose_kept(
// CHECK-NEXT:    graph.transpose %x {perm = array<i64: 1, 0>}
func.func @transpose_kept(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = graph.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}
