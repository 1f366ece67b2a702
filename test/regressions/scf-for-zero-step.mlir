// RUN: ziggurat-opt %s --verify-diagnostics
// RUN: not ziggurat-run %s 2>&1 | filecheck %s
// make fuzz turned a loop's step constant in test/loop/hoist-copies-stays.mlir into 0:
// xDSL's scf.for verifier lets a zero step through and its interpreter failed with
// Python's "range() arg 3 must not be zero", an internal error. As in MLIR, a constant
// step must be positive: a verifier error at the loop.

// CHECK: scf-for-zero-step.mlir:[[# @LINE + 6]]:3: error: 'scf.for' op constant step operand must be positive
func.func @main(%x: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0 : index
  // expected-error@+1 {{'scf.for' op constant step operand must be positive}}
  scf.for %i = %c0 to %c64 step %zero {
    %v = memref.load %x[%i] : memref<64xf32>
    memref.store %v, %x[%i] : memref<64xf32>
  }
  func.return
}
