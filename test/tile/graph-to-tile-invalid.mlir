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

// Only cast, quantize and dequantize read unsigned tensors so far; the refusal names
// the op that needs a sign-aware lowering, not the quantize before it.
func.func @add_ui8(%x: tensor<4xi8>, %s: tensor<f32>, %z: tensor<ui8>, %y: tensor<4xui8>) -> tensor<4xui8> {
  %q = graph.quantize %s, %s, %z : (tensor<f32>, tensor<f32>, tensor<ui8>) -> tensor<ui8>
  // expected-error@+1 {{graph-to-tile: cannot lower 'graph.add' on tensor<4xui8> yet}}
  %a = graph.add %y, %q : (tensor<4xui8>, tensor<ui8>) -> tensor<4xui8>
  func.return %a : tensor<4xui8>
}
