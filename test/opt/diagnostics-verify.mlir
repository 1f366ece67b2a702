// RUN: not ziggurat-opt %s --split-input-file 2>&1 | filecheck %s --strict-whitespace

// Verifier failures are reported at the failing op, one diagnostic per op,
// instead of xDSL's dump of the whole module.

func.func @not_a_permutation(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
// CHECK:{{^}}{{.*}}diagnostics-verify.mlir:[[# @LINE + 3]]:3: error: 'graph.transpose' op perm [0, 0] is not a permutation{{.*}}
// CHECK-NEXT:{{^}}  %0 = graph.transpose %a {perm = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>{{$}}
// CHECK-NEXT:{{^}}  ^{{$}}
  %0 = graph.transpose %a {perm = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// -----

func.func @two_failures(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
// CHECK:{{^}}{{.*}}diagnostics-verify.mlir:[[# @LINE + 4]]:3: error: 'graph.transpose' op {{.*}}
// CHECK-NEXT:{{^}}  %0 = graph.transpose{{.*}}
// CHECK-NEXT:{{^}}  ^{{$}}
// CHECK-NEXT:{{^}}{{.*}}diagnostics-verify.mlir:[[# @LINE + 2]]:3: error: 'graph.matmul' op {{.*}}
  %0 = graph.transpose %a {perm = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %1 = graph.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return %1 : tensor<2x5xf32>
}

// -----

func.func @wrong_return_type(%a: tensor<2xf32>) -> tensor<3xf32> {
// CHECK:{{^}}{{.*}}diagnostics-verify.mlir:[[# @LINE + 1]]:3: error: 'func.return' op {{.*}}
  func.return %a : tensor<2xf32>
}
