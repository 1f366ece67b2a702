// Tiles of 1 are tiles too: every tile of a matmul chain computes its one element right.
// RUN: ziggurat-run %s --save-inputs %t.in.npz --outputs %t.ref.npz
// RUN: ziggurat-opt %s -p 'tile-and-fuse{sizes=1,1,1,1},tile-vectorize{machine=systolic}' | filecheck %s
// RUN: ziggurat-opt %s -p 'tile-and-fuse{sizes=1,1,1,1},tile-vectorize{machine=systolic}' | ziggurat-run - --inputs %t.in.npz --expect %t.ref.npz --timeout 60
// The pipeline fuzzer ran this pipeline on test/tile/pack.mlir's 32x32 chain and the output ran
// past its 30 s limit: 66,560 generics in 1x1x1 tiles, each decoding its maps, body and slice
// offsets anew. The tensor interpreter now plans each op once per run (test_tensor_interpreter.py
// checks that); this smaller chain checks the numbers.

// CHECK-LABEL: func.func @chain(
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               tensor.extract_slice %a[%{{.*}}, %{{.*}}] [1, 1] [1, 1]
func.func @chain(%a: tensor<8x8xf16>, %b: tensor<8x8xf16>, %c: tensor<8x8xf16>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %m1 = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<8x8xf16>, tensor<8x8xf16>) outs(%acc : tensor<8x8xf32>) {
  ^bb0(%x: f16, %w: f16, %s: f32):
    %ex = arith.extf %x : f16 to f32
    %ew = arith.extf %w : f16 to f32
    %p = arith.mulf %ex, %ew : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<8x8xf32>
  %e16 = tensor.empty() : tensor<8x8xf16>
  %h = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%m1 : tensor<8x8xf32>) outs(%e16 : tensor<8x8xf16>) {
  ^bb0(%v: f32, %o: f16):
    %r = arith.truncf %v : f32 to f16
    linalg.yield %r : f16
  } -> tensor<8x8xf16>
  %m2 = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%h, %c : tensor<8x8xf16>, tensor<8x8xf16>) outs(%acc : tensor<8x8xf32>) {
  ^bb0(%x: f16, %w: f16, %s: f32):
    %ex = arith.extf %x : f16 to f32
    %ew = arith.extf %w : f16 to f32
    %p = arith.mulf %ex, %ew : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<8x8xf32>
  func.return %m2 : tensor<8x8xf32>
}
