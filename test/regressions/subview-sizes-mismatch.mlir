// RUN: not ziggurat-run %s 2>&1 | filecheck %s
// The fuzzer (ir category, a number changed in test/loop/ops.mlir) found a memref.subview
// whose sizes [4, 5] disagree with its result type (4x4) passing the verifier and crashing
// the loop interpreter: "internal error, please report: ValueError: cannot reshape array of
// size 20 into shape (4,4)". It must be a diagnostic at the subview, exit 1 (fixed in 8c4c7f5).

func.func @main(%a: memref<8x8xf32, "gm">, %result0: memref<4x4xf32, "gm">) {
  // CHECK-NOT: internal error
  // CHECK: subview-sizes-mismatch.mlir:[[# @LINE + 1]]:3: error:
  %v = memref.subview %a[0, 0] [4, 5] [1, 1] : memref<8x8xf32, "gm"> to memref<4x4xf32, strided<[8, 1]>, "gm">
  loop.copy %v -> %result0 : memref<4x4xf32, strided<[8, 1]>, "gm"> -> memref<4x4xf32, "gm">
  func.return
}
