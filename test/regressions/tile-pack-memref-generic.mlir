// RUN: ziggurat-opt %s -p 'tile-pack{machine=tensorcore}' | filecheck %s
// The fuzzer (pipeline category, on test/loop/double-buffer.mlir) found tile-pack crashing
// on a loop-level contraction: "internal error, please report: ValueError: Expected 0 new
// results, but got 1 (while running pass 'tile-pack' on op 'linalg.generic')". A
// linalg.generic on memrefs has no results; tile-pack packs tensor contractions only and
// must leave this one as it is.

func.func @matmul_k5(%A: memref<32x160xf16, "gm">, %B: memref<160x32xf16, "gm">, %result0: memref<32x32xf32, "gm">) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c160 = arith.constant 160 : index
  %zero = arith.constant 0.000000e+00 : f32
  %acc = memref.alloc() : memref<32x32xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<32x32xf32>)
  scf.for %k = %c0 to %c160 step %c32 {
    %a = memref.subview %A[0, %k] [32, 32] [1, 1] : memref<32x160xf16, "gm"> to memref<32x32xf16, strided<[160, 1], offset: ?>, "gm">
    %b = memref.subview %B[%k, 0] [32, 32] [1, 1] : memref<160x32xf16, "gm"> to memref<32x32xf16, strided<[32, 1], offset: ?>, "gm">
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<32x32xf16, strided<[160, 1], offset: ?>, "gm">, memref<32x32xf16, strided<[32, 1], offset: ?>, "gm">) outs(%acc : memref<32x32xf32>) {
    ^bb0(%x: f16, %y: f16, %o: f32):
      %xe = arith.extf %x : f16 to f32
      %ye = arith.extf %y : f16 to f32
      %p = arith.mulf %xe, %ye : f32
      %s = arith.addf %o, %p : f32
      linalg.yield %s : f32
    }
  }
  loop.copy %acc -> %result0 : memref<32x32xf32> -> memref<32x32xf32, "gm">
  func.return
}

// CHECK-LABEL: func.func @matmul_k5
// CHECK:         linalg.generic
// CHECK-SAME:      outs(%acc : memref<32x32xf32>)
// CHECK-NOT:     tile.pack
