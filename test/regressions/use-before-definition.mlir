// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics
// RUN: not ziggurat-run %s 2>&1 | filecheck %s

// xDSL's verifier does not check SSA dominance: with two lines swapped, a use
// before its definition verified and ziggurat-run failed with an internal
// KeyError when it read the value. It is a located error, as in MLIR.

// CHECK: use-before-definition.mlir:[[# @LINE + 5]]:3: error: 'graph.relu' op operand #0 does not dominate this use
// CHECK: use-before-definition.mlir:[[# @LINE + 6]]:3: note: operand defined here
// CHECK-NOT: internal error
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'graph.relu' op operand #0 does not dominate this use}}
  %b = graph.relu %a : tensor<2xf32>
  // expected-note@+1 {{operand defined here}}
  %a = graph.relu %x : tensor<2xf32>
  func.return %b : tensor<2xf32>
}

// -----

// A region may use values of the enclosing block, but only those defined before its op.
func.func @later(%x: tensor<2xf32>, %c: i1) -> tensor<2xf32> {
  %r = scf.if %c -> (tensor<2xf32>) {
    // expected-error@+1 {{'scf.yield' op operand #0 does not dominate this use}}
    scf.yield %a : tensor<2xf32>
  } else {
    scf.yield %x : tensor<2xf32>
  }
  // expected-note@+1 {{operand defined here}}
  %a = graph.relu %x : tensor<2xf32>
  func.return %r : tensor<2xf32>
}

// -----

// Values of enclosing regions and of earlier ops are fine; so is any order at module level.
func.func @fine(%x: tensor<2xf32>, %c: i1) -> tensor<2xf32> {
  %a = graph.relu %x : tensor<2xf32>
  %r = scf.if %c -> (tensor<2xf32>) {
    %inner = graph.add %a, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    scf.yield %inner : tensor<2xf32>
  } else {
    scf.yield %a : tensor<2xf32>
  }
  func.return %r : tensor<2xf32>
}
