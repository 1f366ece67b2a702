// graph-convert-float takes an op's own graph.precision only when it names a float type.
// RUN: ziggurat-opt %s -p graph-convert-float --verify-diagnostics

func.func @not_a_float(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{graph.precision must be a float type, got i32}}
  %y = graph.exp %x {graph.precision = i32} : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
