// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics -p toy-double-to-add{report=true} | filecheck %s

// Every form of annotation, matched against the diagnostics really produced;
// the run succeeds (exit 0) and prints the IR of the chunks that did not fail.

func.func @same_line(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = graph.transpose %a {perm = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<3x2xf32> // expected-error {{is not a permutation}}
  func.return %0 : tensor<3x2xf32>
}

// -----

func.func @relative(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error@+1 {{'graph.transpose' op perm [1, 1]}}
  %0 = graph.transpose %a {perm = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %1 = graph.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  // expected-error@-1 {{contraction dimensions differ}}
  func.return %1 : tensor<2x5xf32>
}

// -----

func.func @above_below(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<4x3xf32> {
  // The next two skip each other's line: @below/@above mean the nearest line holding no annotation.
  %0 = graph.transpose %a {perm = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<3x2xf32>
  // expected-error@below {{'graph.matmul' op}}
  // expected-error@above {{'graph.transpose' op}}
  %1 = graph.matmul %0, %b : (tensor<3x2xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  func.return %b : tensor<4x5xf32>
  // expected-error@-1 {{'func.return' op}}
}

// -----

// Parse errors and their notes are diagnostics like any other.
func.func @parse_error() {
^bb0:  // expected-note {{originally declared here}}
  cf.br ^bb0
^bb0:  // expected-error {{re-declaration of block 'bb0'}}
  func.return
}

// -----

// Warnings and remarks from a pass.
func.func @from_a_pass(%t: tensor<2xf32>, %s: f32) -> (tensor<2xf32>, f32) {
  %0 = toy.double %t : tensor<2xf32>  // expected-remark {{rewritten to graph.add}}
  %1 = toy.double %s : f32            // expected-warning {{graph.add takes tensors}}
  func.return %0, %1 : tensor<2xf32>, f32
}
// CHECK:      func.func @from_a_pass
// CHECK-NEXT:   %0 = graph.add %t, %t
// CHECK-NEXT:   %1 = toy.double %s : f32
