// What graph-to-tile refuses, reported at the op it cannot lower.
// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics -p graph-to-tile

// arith and linalg bodies take signless integers: unsigned tensors need a sign-aware lowering.
func.func @unsigned(%x: tensor<4xui8>) -> tensor<4xui8> {
  // expected-error@+1 {{graph-to-tile: cannot lower 'graph.relu' on tensor<4xui8> yet}}
  %y = graph.relu %x : tensor<4xui8>
  func.return %y : tensor<4xui8>
}

// -----

// math.ipowi gives negative exponents another meaning than the graph dialect.
func.func @integer_pow(%a: tensor<3xi32>, %b: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error@+1 {{graph-to-tile: cannot lower integer 'graph.pow' yet}}
  %y = graph.pow %a, %b : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  func.return %y : tensor<3xi32>
}

// -----

// Quantization to an unsigned zero point is refused at the quantize, not earlier.
func.func @quantize_ui8(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<4xui8> {
  %r = graph.relu %x : tensor<4xf32>
  // expected-error@+1 {{graph-to-tile: cannot lower 'graph.quantize' on tensor<ui8> yet}}
  %q = graph.quantize %r, %s, %z : (tensor<4xf32>, tensor<f32>, tensor<ui8>) -> tensor<4xui8>
  func.return %q : tensor<4xui8>
}
