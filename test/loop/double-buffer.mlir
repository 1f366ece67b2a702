// loop-double-buffer: buffers that copies fill inside a loop get two slots and the loop is unrolled by two,
// stage s on slot s; an odd trip count leaves the last iteration peeled after the loop, on slot 0.
// RUN: ziggurat-opt %s --split-input-file -p 'loop-promote-to-memory-space{machine=davinci},loop-double-buffer' | filecheck %s --check-prefix=DAVINCI
// RUN: ziggurat-opt %s --split-input-file -p 'loop-promote-to-memory-space{machine=tensorcore},loop-double-buffer' | filecheck %s --check-prefix=TC
// RUN: ziggurat-opt %s --split-input-file -p 'loop-promote-to-memory-space{machine=davinci},loop-double-buffer{depth=3}' | filecheck %s --check-prefix=DEPTH3

// Five K steps: a loop over two unrolled pairs (k = 0, 64) and k = 128 peeled.

// DAVINCI-LABEL: func.func @matmul_k5
// DAVINCI-NEXT:    %acc = memref.alloc() : memref<32x32xf32, "l0c">
// DAVINCI-NEXT:    %[[L1A:.*]] = memref.alloc() : memref<2x32x32xf16, "l1">
// DAVINCI-NEXT:    %[[L1A0:.*]] = memref.subview %[[L1A]][0, 0, 0] [1, 32, 32] [1, 1, 1] : memref<2x32x32xf16, "l1"> to memref<32x32xf16, strided<[32, 1]>, "l1">
// DAVINCI-NEXT:    %[[L1A1:.*]] = memref.subview %[[L1A]][1, 0, 0] [1, 32, 32] [1, 1, 1] : memref<2x32x32xf16, "l1"> to memref<32x32xf16, strided<[32, 1], offset: 1024>, "l1">
// DAVINCI-NEXT:    %[[L0A:.*]] = memref.alloc() : memref<2x32x32xf16, "l0a">
// DAVINCI-NEXT:    %[[L0A0:.*]] = memref.subview %[[L0A]][0, 0, 0]
// DAVINCI-NEXT:    %[[L0A1:.*]] = memref.subview %[[L0A]][1, 0, 0]
// DAVINCI-NEXT:    memref.alloc() : memref<2x32x32xf16, "l1">
// DAVINCI-NEXT:    memref.subview
// DAVINCI-NEXT:    memref.subview
// DAVINCI-NEXT:    memref.alloc() : memref<2x32x32xf16, "l0b">
// DAVINCI:         %[[STEP:.*]] = arith.constant 64 : index
// DAVINCI-NEXT:    %[[UB:.*]] = arith.constant 128 : index
// DAVINCI-NEXT:    scf.for %[[K:.*]] = %c0 to %[[UB]] step %[[STEP]] {
// DAVINCI-NEXT:      %a = memref.subview %A[0, %[[K]]]
// DAVINCI-NEXT:      %b = memref.subview %B[%[[K]], 0]
// DAVINCI-NEXT:      loop.copy_async %a -> %[[L1A0]]
// DAVINCI-NEXT:      loop.wait
// DAVINCI-NEXT:      loop.copy_async %[[L1A0]] -> %[[L0A0]]
// DAVINCI:           linalg.generic {{.*}} ins(%[[L0A0]], %{{.*}} : memref<32x32xf16, strided<[32, 1]>, "l0a">, memref<32x32xf16, strided<[32, 1]>, "l0b">)
// DAVINCI:           %[[C32:.*]] = arith.constant 32 : index
// DAVINCI-NEXT:      %[[K1:.*]] = arith.addi %[[K]], %[[C32]] : index
// DAVINCI-NEXT:      %a_1 = memref.subview %A[0, %[[K1]]]
// DAVINCI-NEXT:      %b_1 = memref.subview %B[%[[K1]], 0]
// DAVINCI-NEXT:      loop.copy_async %a_1 -> %[[L1A1]]
// DAVINCI-NEXT:      loop.wait
// DAVINCI-NEXT:      loop.copy_async %[[L1A1]] -> %[[L0A1]]
// DAVINCI:           linalg.generic {{.*}} ins(%[[L0A1]], %{{.*}} : memref<32x32xf16, strided<[32, 1], offset: 1024>, "l0a">, memref<32x32xf16, strided<[32, 1], offset: 1024>, "l0b">)
// DAVINCI:         %[[K4:.*]] = arith.constant 128 : index
// DAVINCI-NEXT:    %a_2 = memref.subview %A[0, %[[K4]]]
// DAVINCI-NEXT:    %b_2 = memref.subview %B[%[[K4]], 0]
// DAVINCI-NEXT:    loop.copy_async %a_2 -> %[[L1A0]]
// DAVINCI:         linalg.generic {{.*}} ins(%[[L0A0]], %{{.*}} : memref<32x32xf16, strided<[32, 1]>, "l0a">
// DAVINCI:         loop.copy %acc -> %result0
// DAVINCI-NOT:     scf.for

// TC-LABEL: func.func @matmul_k5
// TC:         memref.alloc() : memref<2x32x32xf16, "smem">
// TC:         memref.alloc() : memref<2x32x32xf16, "rf">
// TC:         scf.for
// TC-COUNT-2:   linalg.generic
// TC:         arith.constant 128 : index
// TC-COUNT-1: linalg.generic

// Depth 3: one loop iteration of three stages is straight-line code, then two peeled iterations on slots 0 and 1.
// DEPTH3-LABEL: func.func @matmul_k5
// DEPTH3:         %[[L1A:.*]] = memref.alloc() : memref<3x32x32xf16, "l1">
// DEPTH3-NEXT:    %[[S0:.*]] = memref.subview %[[L1A]][0, 0, 0]
// DEPTH3-NEXT:    %[[S1:.*]] = memref.subview %[[L1A]][1, 0, 0]
// DEPTH3-NEXT:    %[[S2:.*]] = memref.subview %[[L1A]][2, 0, 0] [1, 32, 32] [1, 1, 1] : memref<3x32x32xf16, "l1"> to memref<32x32xf16, strided<[32, 1], offset: 2048>, "l1">
// DEPTH3-NOT:     scf.for
// DEPTH3:         loop.copy_async %{{.*}} -> %[[S0]]
// DEPTH3:         loop.copy_async %{{.*}} -> %[[S1]]
// DEPTH3:         loop.copy_async %{{.*}} -> %[[S2]]
// DEPTH3:         loop.copy_async %{{.*}} -> %[[S0]]
// DEPTH3:         loop.copy_async %{{.*}} -> %[[S1]]
// DEPTH3-NOT:     loop.copy_async %{{.*}} -> %[[S2]]

func.func @matmul_k5(%A: memref<32x160xf16, "gm">, %B: memref<160x32xf16, "gm">, %result0: memref<32x32xf32, "gm">) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c160 = arith.constant 160 : index
  %zero = arith.constant 0.0 : f32
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
