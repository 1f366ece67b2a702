// loop-to-npu on tensorcore: engines of at most 2-d windows split a 3-d copy into a loop of DMAs;
// in rf (matrix and vector space at once) the accumulator's zero fill is absorbed all the same, a
// transposed weight [N, K] gets its rf buffer as [K, N], written through transposed strides.
// RUN: ziggurat-opt %s --split-input-file -p 'loop-to-npu{machine=tensorcore}' | filecheck %s

// CHECK-LABEL: func.func @split
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      npu.dma "cp_async" %X[%[[I]], 8, 16] -> %s[%[[I]], 0, 0] {shape = array<i64: 8, 16>} : memref<4x32x64xf16, "gm"> -> memref<4x8x16xf16, "smem">
// CHECK-NEXT:    }
// CHECK:         npu.dma "cp_async" %X[0, 0, 0] -> %s2[0, 0, 0] {shape = array<i64: 4, 512>, src_strides = array<i64: 2048, 1>, dst_strides = array<i64: 512, 1>}
func.func @split(%X: memref<4x32x64xf16, "gm">) {
  %s = memref.alloc() : memref<4x8x16xf16, "smem">
  %v = memref.subview %X[0, 8, 16] [4, 8, 16] [1, 1, 1] : memref<4x32x64xf16, "gm"> to memref<4x8x16xf16, strided<[2048, 64, 1], offset: 528>, "gm">
  loop.copy %v -> %s : memref<4x8x16xf16, strided<[2048, 64, 1], offset: 528>, "gm"> -> memref<4x8x16xf16, "smem">
  %w = memref.subview %X[0, 0, 0] [4, 8, 64] [1, 1, 1] : memref<4x32x64xf16, "gm"> to memref<4x8x64xf16, strided<[2048, 64, 1]>, "gm">
  %s2 = memref.alloc() : memref<4x8x64xf16, "smem">
  loop.copy %w -> %s2 : memref<4x8x64xf16, strided<[2048, 64, 1]>, "gm"> -> memref<4x8x64xf16, "smem">
  func.return
}

// -----

// CHECK-LABEL: func.func @linear
// CHECK:         %wr = memref.alloc() : memref<64x48xf16, "rf">
// CHECK-NOT:     linalg.fill
// CHECK-NOT:     npu.vec.dup
// CHECK:         npu.dma "ldmatrix" %ws[0, 0] -> %wr[0, 0] {shape = array<i64: 48, 64>, dst_strides = array<i64: 1, 48>}
// CHECK-NEXT:    npu.mma %xr[0, 0], %wr[0, 0] -> %c[0, 0] {m = 32 : i64, n = 48 : i64, k = 64 : i64} : memref<32x64xf16, "rf">, memref<64x48xf16, "rf"> -> memref<32x48xf32, "rf">
// CHECK-NEXT:    npu.vec.muls %c[0, 0] -> %c[0, 0] {scalar = -1.000000e+00 : f64, repeat = 24 : i64}
// CHECK-NEXT:    npu.dma "st" %c[0, 0] -> %result0[0, 0] {shape = array<i64: 32, 48>}
func.func @linear(%X: memref<32x64xf16, "gm">, %W: memref<48x64xf16, "gm">, %result0: memref<32x48xf32, "gm">) {
  %zero = arith.constant 0.000000e+00 : f32
  %xs = memref.alloc() : memref<32x64xf16, "smem">
  %xr = memref.alloc() : memref<32x64xf16, "rf">
  %ws = memref.alloc() : memref<48x64xf16, "smem">
  %wr = memref.alloc() : memref<48x64xf16, "rf">
  %c = memref.alloc() : memref<32x48xf32, "rf">
  loop.copy %X -> %xs : memref<32x64xf16, "gm"> -> memref<32x64xf16, "smem">
  loop.copy %xs -> %xr : memref<32x64xf16, "smem"> -> memref<32x64xf16, "rf">
  loop.copy %W -> %ws : memref<48x64xf16, "gm"> -> memref<48x64xf16, "smem">
  loop.copy %ws -> %wr : memref<48x64xf16, "smem"> -> memref<48x64xf16, "rf">
  linalg.fill ins(%zero : f32) outs(%c : memref<32x48xf32, "rf">)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%xr, %wr : memref<32x64xf16, "rf">, memref<48x64xf16, "rf">) outs(%c : memref<32x48xf32, "rf">) {
  ^bb0(%x: f16, %w: f16, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %we = arith.extf %w : f16 to f32
    %p = arith.mulf %xe, %we : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%c : memref<32x48xf32, "rf">) outs(%c : memref<32x48xf32, "rf">) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  }
  loop.copy %c -> %result0 : memref<32x48xf32, "rf"> -> memref<32x48xf32, "gm">
  func.return
}

// -----

// No engine copies rf -> rf: a copy inside the vector spaces (here casting) is a vector cast.
// CHECK-LABEL: func.func @rf_copy
// CHECK-NEXT:    npu.vec.cast %a[0, 0] -> %b[0, 0] {repeat = 16 : i64} : memref<32x32xf32, "rf"> -> memref<32x32xf16, "rf">
// CHECK-NEXT:    func.return
func.func @rf_copy(%a: memref<32x32xf32, "rf">, %b: memref<32x32xf16, "rf">) {
  loop.copy %a -> %b : memref<32x32xf32, "rf"> -> memref<32x32xf16, "rf">
  func.return
}
