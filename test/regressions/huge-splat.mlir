// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics

// xDSL expands a splat into every element while parsing: these few characters
// asked for 18 EB and ended in an internal MemoryError (and a splat of a few
// hundred million elements took minutes). A splat past the limit is refused.

func.func @huge() -> tensor<4611686018427387904xf32> {
  // expected-error@+1 {{splat dense literal of tensor<4611686018427387904xf32> has 4611686018427387904 elements, more than the 16777216 the parser can expand}}
  %c = graph.constant dense<1.0> : tensor<4611686018427387904xf32>
  func.return %c : tensor<4611686018427387904xf32>
}

// -----

// Below the limit, a splat parses.
func.func @large() -> tensor<1024x1024xi8> {
  %c = arith.constant dense<1> : tensor<1024x1024xi8>
  func.return %c : tensor<1024x1024xi8>
}
