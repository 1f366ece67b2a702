// What tile-vectorize refuses, reported at the generic it would split.
// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics -p "tile-vectorize{machine=davinci}"

// The intermediate tensors of the chain need static shapes.
func.func @dynamic(%x: tensor<?x16xf16>, %e: tensor<?x16xf16>) -> tensor<?x16xf16> {
  // expected-error@+1 {{tile-vectorize: dynamic shape tensor<?x16xf16> is not supported}}
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x16xf16>) outs(%e : tensor<?x16xf16>) {
  ^bb0(%a: f16, %o: f16):
    %w = arith.extf %a : f16 to f32
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %w, %z : f32
    %t = arith.truncf %m : f32 to f16
    linalg.yield %t : f16
  } -> tensor<?x16xf16>
  func.return %y : tensor<?x16xf16>
}
