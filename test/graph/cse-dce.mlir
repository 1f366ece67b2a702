// RUN: ziggurat-opt %s --split-input-file -p cse | filecheck %s --check-prefix=CSE
// RUN: ziggurat-opt %s --split-input-file -p dce | filecheck %s --check-prefix=DCE

// graph ops are Pure, so xDSL's own cse and dce apply to them unchanged.

// Identical ops on identical operands, properties included, become one.
// CSE-LABEL: func.func @cse(
// CSE-NEXT:    %[[C:.*]] = graph.constant dense<1.000000e+00> : tensor<2x3xf32>
// CSE-NEXT:    %[[A:.*]] = graph.add %x, %[[C]]
// CSE-NEXT:    %[[T:.*]] = graph.transpose %[[A]] {perm = array<i64: 1, 0>}
// CSE-NEXT:    %[[S:.*]] = graph.add %[[A]], %[[A]]
// CSE-NEXT:    func.return %[[S]], %[[T]], %[[T]]
func.func @cse(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>) {
  %c1 = graph.constant dense<1.0> : tensor<2x3xf32>
  %c2 = graph.constant dense<1.0> : tensor<2x3xf32>
  %0 = graph.add %x, %c1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = graph.add %x, %c2 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = graph.transpose %0 {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %3 = graph.transpose %1 {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %4 = graph.add %0, %1 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %4, %2, %3 : tensor<2x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>
}

// Different constants, different properties or different operand order stay apart.
// CSE-LABEL: func.func @cse_negative(
// CSE-NEXT:    graph.constant dense<1.000000e+00>
// CSE-NEXT:    graph.constant dense<2.000000e+00>
// CSE-NEXT:    graph.transpose %x {perm = array<i64: 0, 2, 1>}
// CSE-NEXT:    graph.transpose %x {perm = array<i64: 2, 1, 0>}
// CSE-NEXT:    graph.add %c1, %c2
// CSE-NEXT:    graph.add %c2, %c1
func.func @cse_negative(%x: tensor<2x2x2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2x2x2xf32>, tensor<2x2x2xf32>) {
  %c1 = graph.constant dense<1.0> : tensor<2xf32>
  %c2 = graph.constant dense<2.0> : tensor<2xf32>
  %0 = graph.transpose %x {perm = array<i64: 0, 2, 1>} : tensor<2x2x2xf32> -> tensor<2x2x2xf32>
  %1 = graph.transpose %x {perm = array<i64: 2, 1, 0>} : tensor<2x2x2xf32> -> tensor<2x2x2xf32>
  %2 = graph.add %c1, %c2 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %3 = graph.add %c2, %c1 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %2, %3, %0, %1 : tensor<2xf32>, tensor<2xf32>, tensor<2x2x2xf32>, tensor<2x2x2xf32>
}

// -----

// Unused graph ops and constants disappear, chains included; what the return reads stays.
// DCE-LABEL: func.func @dce(
// DCE-NEXT:    %[[R:.*]] = graph.relu %x
// DCE-NEXT:    func.return %[[R]]
func.func @dce(%x: tensor<4xf32>, %w: tensor<4x4xf32>) -> tensor<4xf32> {
  %c = graph.constant dense<1.0> : tensor<4xf32>
  %a = arith.constant dense<2.0> : tensor<4xf32>
  %0 = graph.add %x, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = graph.exp %0 : tensor<4xf32>
  %2 = graph.matmul %1, %w : (tensor<4xf32>, tensor<4x4xf32>) -> tensor<4xf32>
  %3 = graph.relu %x : tensor<4xf32>
  func.return %3 : tensor<4xf32>
}
