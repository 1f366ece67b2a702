// RUN: ziggurat-opt %s --verify-diagnostics --split-input-file
// The fuzzer (ir category, a stride of test/loop/ops.mlir's subview set to 0) found a subview
// whose result type keeps the source's strides while the subview's stride is 0: xDSL does not
// check a subview's result layout, and the interpreter's numpy slice of step 0 raised ("internal
// error: ValueError: slice step cannot be zero"). MLIR's rule: the result's strides are the
// source's times the subview's, its offset the source's plus the offsets along the strides.

// A layout that follows the rule verifies.
func.func @strided(%a: memref<4x8xf32, "gm">) -> memref<2x2xf32, strided<[16, 2], offset: 9>, "gm"> {
  %v = memref.subview %a[1, 1] [2, 2] [2, 2] : memref<4x8xf32, "gm"> to memref<2x2xf32, strided<[16, 2], offset: 9>, "gm">
  func.return %v : memref<2x2xf32, strided<[16, 2], offset: 9>, "gm">
}

// -----

func.func @zero_stride(%a: memref<256x512xf16, "gm">) {
  // expected-error@+1 {{'memref.subview' op expected result type memref<128x64xf16, strided<[512, 1], offset: 64>, "gm"> to have strides [512, 0] (the source's times the subview's)}}
  %v = memref.subview %a[0, 64] [128, 64] [1, 0] : memref<256x512xf16, "gm"> to memref<128x64xf16, strided<[512, 1], offset: 64>, "gm">
  func.return
}

// -----

func.func @offset(%a: memref<256x512xf16, "gm">) {
  // expected-error@+1 {{to have offset 576}}
  %v = memref.subview %a[1, 64] [128, 64] [1, 1] : memref<256x512xf16, "gm"> to memref<128x64xf16, strided<[512, 1], offset: 64>, "gm">
  func.return
}
