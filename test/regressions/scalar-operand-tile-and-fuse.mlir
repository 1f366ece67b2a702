// RUN: ziggurat-opt %s -p 'tile-vectorize{machine=tensorcore}' -o %t.vectorized.mlir
// RUN: ziggurat-run %s --save-inputs %t.in.npz --outputs %t.ref.npz
// RUN: ziggurat-opt %t.vectorized.mlir -p 'compile{machine=systolic}' | ziggurat-run - --machine systolic --inputs %t.in.npz --expect %t.ref.npz | filecheck %s
// tile-vectorize makes the relu's zero a scalar operand (an f16 with the map `-> ()`);
// tile-and-fuse read every operand's shape to find the loop extents and stopped with an internal
// error on it (found by the fuzzer). A scalar names no loop.
// CHECK: ok
func.func @relu_f16(%x: tensor<4x16xf16>, %e: tensor<4x16xf16>) -> tensor<4x16xf16> {
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x16xf16>) outs(%e : tensor<4x16xf16>) attrs = {tile.group = "relu"} {
  ^bb0(%a: f16, %o: f16):
    %w = arith.extf %a : f16 to f32
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %w, %z : f32
    %t = arith.truncf %m : f32 to f16
    linalg.yield %t : f16
  } -> tensor<4x16xf16>
  func.return %y : tensor<4x16xf16>
}
