// RUN: not ziggurat-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s --strict-whitespace

// --verify-diagnostics fails on an expected diagnostic that is not produced and
// on a produced one that is not expected; each chunk is checked on its own and
// the IR of a chunk that did not fail is still printed.

func.func @missing(%a: tensor<2xf32>) -> tensor<2xf32> {
// The caret points at the annotation.
// CHECK:{{^}}{{.*}}verify-diagnostics-mismatch.mlir:[[# @LINE + 3]]:42: error: expected error "not a permutation" was not produced{{$}}
// CHECK-NEXT:{{^}}  %0 = graph.relu %a : tensor<2xf32>  // expected{{.*}}
// CHECK-NEXT:{{^ {41}\^$}}
  %0 = graph.relu %a : tensor<2xf32>  // expected-error {{not a permutation}}
  func.return %0 : tensor<2xf32>
}

// -----

func.func @unexpected(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
// CHECK:{{^}}{{.*}}verify-diagnostics-mismatch.mlir:[[# @LINE + 3]]:3: error: unexpected error: 'graph.transpose' op perm [0, 0] is not a permutation{{.*}}
// CHECK-NEXT:{{^}}  %0 = graph.transpose %a {perm = array<i64: 0, 0>}{{.*}}
// CHECK-NEXT:{{^}}  ^{{$}}
  %0 = graph.transpose %a {perm = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// -----

// The right message on the wrong line is both missing and unexpected.
func.func @wrong_line(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
// CHECK:{{^}}{{.*}}verify-diagnostics-mismatch.mlir:[[# @LINE + 4]]:6: error: expected error "not a permutation" was not produced{{$}}
// CHECK-NEXT:{{^}}  // expected{{.*}}
// CHECK-NEXT:{{^     \^$}}
// CHECK-NEXT:{{^}}{{.*}}verify-diagnostics-mismatch.mlir:[[# @LINE + 2]]:3: error: unexpected error: 'graph.transpose' op perm [1, 1]{{.*}}
  // expected-error@+2 {{not a permutation}}
  %0 = graph.transpose %a {perm = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// -----

// The message of an annotation must be a substring of the diagnostic's.
func.func @wrong_message(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
// CHECK:{{^}}{{.*}}verify-diagnostics-mismatch.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: expected error "perm must be sorted" was not produced{{$}}
// CHECK:{{^}}{{.*}}verify-diagnostics-mismatch.mlir:[[# @LINE + 1]]:3: error: unexpected error: 'graph.transpose' op perm [1, 1]{{.*}}
  %0 = graph.transpose %a {perm = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<3x2xf32> // expected-error {{perm must be sorted}}
  func.return %0 : tensor<3x2xf32>
}

// -----

// Warnings are checked too: none is produced here.
func.func @missing_warning(%a: tensor<2xf32>) -> tensor<2xf32> {
// CHECK:{{^}}{{.*}}verify-diagnostics-mismatch.mlir:[[# @LINE + 1]]:6: error: expected warning "unused" was not produced{{$}}
  // expected-warning@+1 {{unused}}
  func.return %a : tensor<2xf32>
}

// -----

func.func @fine(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = graph.relu %a : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
// CHECK:      builtin.module {
// CHECK-NEXT:   func.func @fine
// CHECK-NEXT:     %0 = graph.relu %a : tensor<2xf32>
