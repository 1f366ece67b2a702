// RUN: not ziggurat-opt %s 2>&1 | filecheck %s
// The fuzzer (ir category, two lines of test/loop/double-buffer.mlir swapped) found a value
// used before its name is defined inside a later op's region: xDSL's parser left a placeholder
// for it and the verifier crashed ("internal error, please report: ValueError: Forward
// declared values do not have an owner"). It is an undefined value, located at the use.

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: use-defined-in-nested-region.mlir:[[# @LINE + 3]]:23: error: use of undefined value '%c1'
  // CHECK-NOT: internal error
  %c0 = arith.constant 0 : index
  scf.for %i = %c0 to %c1 step %c1 {
    %c1 = arith.constant 1 : index
  }
  func.return %x : tensor<4xf32>
}
