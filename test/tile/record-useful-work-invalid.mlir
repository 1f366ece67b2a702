// What tile-record-useful-work refuses, reported at the contraction.
// RUN: ziggurat-opt %s --verify-diagnostics -p "tile-record-useful-work"

// Its work is not known before the run.
func.func @dynamic(%a: tensor<?x48xf16>, %b: tensor<48x64xf16>, %acc: tensor<?x64xf32>) -> tensor<?x64xf32> {
  // expected-error@+1 {{tile-record-useful-work: cannot count the work of a contraction with a dynamic shape}}
  %y = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<?x48xf16>, tensor<48x64xf16>) outs(%acc : tensor<?x64xf32>) {
  ^bb0(%x: f16, %w: f16, %s: f32):
    %ex = arith.extf %x : f16 to f32
    %ew = arith.extf %w : f16 to f32
    %p = arith.mulf %ex, %ew : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<?x64xf32>
  func.return %y : tensor<?x64xf32>
}
