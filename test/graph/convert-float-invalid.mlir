// graph-convert-float runs before fusion: it refuses fused groups rather than guess their bodies.
// RUN: ziggurat-opt %s -p graph-fuse,graph-convert-float --verify-diagnostics

// expected-error@+1 {{graph-convert-float runs before graph-fuse; it cannot convert graph.fused}}
func.func @fused(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = graph.exp %x : tensor<4xf32>
  %b = graph.relu %a : tensor<4xf32>
  func.return %b : tensor<4xf32>
}
