// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics
// RUN: not ziggurat-opt %s 2>&1 | filecheck %s
// A `0` inserted into examples/resnet_block.mlir's `array<i64: 1, 1, 1, 1>` made it
// `array<i604: ...>`: xDSL packs the elements of dense arrays and literals with `struct`, which
// has no format past 64 bits ("internal error, please report: NotImplementedError: Format not
// implemented for i604"). It is a parse error at the literal.

// CHECK: dense-elements-wider-than-64-bits.mlir:[[# @LINE + 4]]:36: error: xDSL cannot hold this dense literal or array: its elements must be integers or floats of at most 64 bits
// CHECK-NOT: internal error
func.func @f(%x: tensor<1x4x8x8xf16>, %w: tensor<4x4x3x3xf16>) -> tensor<1x4x8x8xf16> {
  // expected-error@+1 {{xDSL cannot hold this dense literal or array: its elements must be integers or floats of at most 64 bits}}
  %y = graph.conv2d %x, %w {pads = array<i604: 1, 1, 1, 1>} : (tensor<1x4x8x8xf16>, tensor<4x4x3x3xf16>) -> tensor<1x4x8x8xf16>
  func.return %y : tensor<1x4x8x8xf16>
}

// -----

func.func @g() -> tensor<2xi128> {
  // expected-error@+1 {{xDSL cannot hold this dense literal or array: its elements must be integers or floats of at most 64 bits}}
  %c = arith.constant dense<1> : tensor<2xi128>
  func.return %c : tensor<2xi128>
}
