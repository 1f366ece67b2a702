// RUN: not ziggurat-opt %s 2>&1 | filecheck %s
// The fuzzer (ir category, a `"` inserted into examples/npu/gemm.mlir) hung ziggurat-opt: xDSL's
// string-literal regex nests `+` in `*`, so a quote without a closing one on its line made it
// backtrack through 2^n splits of the line. With one character per repetition it fails at once.

// CHECK: unterminated-string.mlir:[[# @LINE + 3]]:3: error: End of file reached before closing string literal.
func.func @f() {
  %c0 = arith.constant 0 : index
  "  %c512 = arith.constant 512 : index and a long tail of words to backtrack through
  func.return
}
