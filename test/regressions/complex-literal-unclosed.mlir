// RUN: not ziggurat-opt %s 2>&1 | filecheck %s
// The fuzzer (ir category, a `(` inserted into a dense literal of examples/resnet_block.mlir)
// found xDSL's parser reading `(2.0, 3.0` as a complex element and asserting on the token after
// it: "internal error, please report: AssertionError: Unexpected token ..., expected
// MLIRTokenKind.R_PAREN". It is a parse error at that token, as in MLIR.

func.func @f() -> tensor<3xf16> {
  // CHECK: complex-literal-unclosed.mlir:[[# @LINE + 4]]:44: error: Expected ')' after complex elements
  // CHECK-NEXT: %c = graph.constant dense<[1.0, (2.0, 3.0]> : tensor<3xf16>
  // CHECK-NOT: internal error
  // CHECK-NOT: Traceback
  %c = graph.constant dense<[1.0, (2.0, 3.0]> : tensor<3xf16>
  func.return %c : tensor<3xf16>
}
