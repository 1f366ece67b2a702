// RUN: ziggurat-opt %s --verify-diagnostics
// RUN: not ziggurat-run %s 2>&1 | filecheck %s
// The fuzzer (ir category, a permutation entry of test/npu/loop-to-npu-bounce.mlir changed) found
// xDSL's linalg.transpose verifier indexing the input's shape with an entry past its rank:
// "internal error, please report: IndexError: tuple index out of range". MLIR's verifier checks
// first that the permutation is one; so does ours, on memrefs and tensors alike.

// CHECK: transpose-permutation-out-of-range.mlir:[[# @LINE + 5]]:3: error: 'linalg.transpose' op permutation is not valid
// CHECK: transpose-permutation-out-of-range.mlir:[[# @LINE + 10]]:3: error: 'linalg.transpose' op permutation is not valid
// CHECK-NOT: internal error
func.func @on_memrefs(%a: memref<2x2xf32>, %b: memref<2x2xf32>) {
  // expected-error@+1 {{'linalg.transpose' op permutation is not valid}}
  linalg.transpose ins(%a : memref<2x2xf32>) outs(%b : memref<2x2xf32>) permutation = [0, 5]
  func.return
}

func.func @main(%a: tensor<2x3xf32>, %e: tensor<3x2xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'linalg.transpose' op permutation is not valid}}
  %t = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = [1, 1]
  func.return %t : tensor<3x2xf32>
}
