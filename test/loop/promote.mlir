// loop-promote-to-memory-space on the loop level that tile-to-loop writes (docs/lowering.md, sections 4 and 5):
// contraction operands staged along the DMA chain into a_space/b_space, the accumulator placed in
// c_space, elementwise ops in the vector space, results copied back.
// RUN: ziggurat-opt %s --split-input-file -p 'loop-promote-to-memory-space{machine=davinci}' | filecheck %s --check-prefix=DAVINCI
// RUN: ziggurat-opt %s --split-input-file -p 'loop-promote-to-memory-space{machine=tensorcore}' | filecheck %s --check-prefix=TC

// Matmul + relu in one tile loop. On davinci the accumulator lives in l0c, A and B go gm -> l1 -> l0a/l0b,
// the truncf folds into the fixpipe copy l0c -> ub (it casts) and the relu runs in ub, its result copied
// ub -> gm. On tensorcore everything the units read is in rf (the truncf stays: no engine copies rf -> rf).

// DAVINCI-LABEL: func.func @matmul_relu
// DAVINCI-NEXT:    %acc = memref.alloc() : memref<32x32xf32, "l0c">
// DAVINCI-NEXT:    %t = memref.alloc() : memref<32x32xf16, "ub">
// DAVINCI-NEXT:    %[[L1A:.*]] = memref.alloc() : memref<32x32xf16, "l1">
// DAVINCI-NEXT:    %[[L0A:.*]] = memref.alloc() : memref<32x32xf16, "l0a">
// DAVINCI-NEXT:    %[[L1B:.*]] = memref.alloc() : memref<32x32xf16, "l1">
// DAVINCI-NEXT:    %[[L0B:.*]] = memref.alloc() : memref<32x32xf16, "l0b">
// DAVINCI-NEXT:    %[[UB:.*]] = memref.alloc() : memref<32x32xf16, "ub">
// DAVINCI:         scf.for %i
// DAVINCI-NEXT:      linalg.fill ins(%zero : f32) outs(%acc : memref<32x32xf32, "l0c">)
// DAVINCI-NEXT:      scf.for %k
// DAVINCI-NEXT:        %a = memref.subview %A
// DAVINCI-NEXT:        %b = memref.subview %B
// DAVINCI-NEXT:        %[[T0:.*]] = loop.copy_async %a -> %[[L1A]] : memref<32x32xf16, strided<[64, 1], offset: ?>, "gm"> -> memref<32x32xf16, "l1">
// DAVINCI-NEXT:        loop.wait %[[T0]] : !loop.token
// DAVINCI-NEXT:        %[[T1:.*]] = loop.copy_async %[[L1A]] -> %[[L0A]] : memref<32x32xf16, "l1"> -> memref<32x32xf16, "l0a">
// DAVINCI-NEXT:        loop.wait %[[T1]] : !loop.token
// DAVINCI-NEXT:        loop.copy_async %b -> %[[L1B]]
// DAVINCI-NEXT:        loop.wait
// DAVINCI-NEXT:        loop.copy_async %[[L1B]] -> %[[L0B]]
// DAVINCI-NEXT:        loop.wait
// DAVINCI-NEXT:        linalg.generic {{.*}} ins(%[[L0A]], %[[L0B]] : memref<32x32xf16, "l0a">, memref<32x32xf16, "l0b">) outs(%acc : memref<32x32xf32, "l0c">)
// DAVINCI:           %[[T2:.*]] = loop.copy_async %acc -> %t : memref<32x32xf32, "l0c"> -> memref<32x32xf16, "ub">
// DAVINCI-NEXT:      loop.wait %[[T2]] : !loop.token
// DAVINCI-NEXT:      %out = memref.subview %result0
// DAVINCI-NEXT:      linalg.generic {{.*}} ins(%t : memref<32x32xf16, "ub">) outs(%[[UB]] : memref<32x32xf16, "ub">)
// DAVINCI:             arith.maximumf
// DAVINCI:           %[[T3:.*]] = loop.copy_async %[[UB]] -> %out : memref<32x32xf16, "ub"> -> memref<32x32xf16, strided<[32, 1], offset: ?>, "gm">
// DAVINCI-NEXT:      loop.wait %[[T3]] : !loop.token
// DAVINCI-NOT:     memref.dealloc

// TC-LABEL: func.func @matmul_relu
// TC-NEXT:    %acc = memref.alloc() : memref<32x32xf32, "rf">
// TC-NEXT:    %t = memref.alloc() : memref<32x32xf16, "rf">
// TC-NEXT:    %[[SA:.*]] = memref.alloc() : memref<32x32xf16, "smem">
// TC-NEXT:    %[[RA:.*]] = memref.alloc() : memref<32x32xf16, "rf">
// TC:           loop.copy_async %a -> %[[SA]]
// TC:           loop.copy_async %[[SA]] -> %[[RA]] : memref<32x32xf16, "smem"> -> memref<32x32xf16, "rf">
// TC:           linalg.generic {{.*}} ins(%[[RA]], %{{.*}} : memref<32x32xf16, "rf">, memref<32x32xf16, "rf">) outs(%acc : memref<32x32xf32, "rf">)
// TC:         linalg.generic {{.*}} ins(%acc : memref<32x32xf32, "rf">) outs(%t : memref<32x32xf16, "rf">)
// TC-NEXT:      ^{{.*}}
// TC-NEXT:      arith.truncf
// TC:         loop.copy_async %{{.*}} -> %out : memref<32x32xf16, "rf"> -> memref<32x32xf16, strided<[32, 1], offset: ?>, "gm">

func.func @matmul_relu(%A: memref<64x64xf16, "gm">, %B: memref<64x32xf16, "gm">, %result0: memref<64x32xf16, "gm">) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %hzero = arith.constant 0.0 : f16
  scf.for %i = %c0 to %c64 step %c32 {
    %acc = memref.alloc() : memref<32x32xf32>
    linalg.fill ins(%zero : f32) outs(%acc : memref<32x32xf32>)
    scf.for %k = %c0 to %c64 step %c32 {
      %a = memref.subview %A[%i, %k] [32, 32] [1, 1] : memref<64x64xf16, "gm"> to memref<32x32xf16, strided<[64, 1], offset: ?>, "gm">
      %b = memref.subview %B[%k, 0] [32, 32] [1, 1] : memref<64x32xf16, "gm"> to memref<32x32xf16, strided<[32, 1], offset: ?>, "gm">
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<32x32xf16, strided<[64, 1], offset: ?>, "gm">, memref<32x32xf16, strided<[32, 1], offset: ?>, "gm">) outs(%acc : memref<32x32xf32>) {
      ^bb0(%x: f16, %y: f16, %o: f32):
        %xe = arith.extf %x : f16 to f32
        %ye = arith.extf %y : f16 to f32
        %p = arith.mulf %xe, %ye : f32
        %s = arith.addf %o, %p : f32
        linalg.yield %s : f32
      }
    }
    %t = memref.alloc() : memref<32x32xf16>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%acc : memref<32x32xf32>) outs(%t : memref<32x32xf16>) {
    ^bb0(%x: f32, %o: f16):
      %r = arith.truncf %x : f32 to f16
      linalg.yield %r : f16
    }
    %out = memref.subview %result0[%i, 0] [32, 32] [1, 1] : memref<64x32xf16, "gm"> to memref<32x32xf16, strided<[32, 1], offset: ?>, "gm">
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t : memref<32x32xf16>) outs(%out : memref<32x32xf16, strided<[32, 1], offset: ?>, "gm">) {
    ^bb0(%x: f16, %o: f16):
      %r = arith.maximumf %x, %hzero : f16
      linalg.yield %r : f16
    }
  }
  func.return
}

// -----

// A ragged 100x77x300 matmul (K tiled by 100): buffers rounded up to the matrix unit's M/N/K (davinci
// 16x16x16, tensorcore 16x8x16) with zero padding on the first engine that pads (davinci's mte2);
// tensorcore's engines do not pad, so the rf buffer is zeroed and the copy fills its valid region.
// The accumulator is the padded buffer; what reads it afterwards reads its valid region.

// DAVINCI-LABEL: func.func @ragged
// DAVINCI-NEXT:    %[[C:.*]] = memref.alloc() : memref<112x80xf32, "l0c">
// DAVINCI-NEXT:    %acc = memref.subview %[[C]][0, 0] [100, 77] [1, 1] : memref<112x80xf32, "l0c"> to memref<100x77xf32, strided<[80, 1]>, "l0c">
// DAVINCI-NEXT:    %[[L1A:.*]] = memref.alloc() : memref<112x112xf16, "l1">
// DAVINCI-NEXT:    %[[L0A:.*]] = memref.alloc() : memref<112x112xf16, "l0a">
// DAVINCI-NEXT:    %[[L1B:.*]] = memref.alloc() : memref<112x80xf16, "l1">
// DAVINCI-NEXT:    %[[L0B:.*]] = memref.alloc() : memref<112x80xf16, "l0b">
// DAVINCI:         linalg.fill ins(%zero : f32) outs(%[[C]] : memref<112x80xf32, "l0c">)
// DAVINCI:           loop.copy_async %a -> %[[L1A]] {pad = array<i64: 0, 12, 0, 12>} : memref<100x100xf16, strided<[300, 1], offset: ?>, "gm"> -> memref<112x112xf16, "l1">
// DAVINCI:           loop.copy_async %[[L1A]] -> %[[L0A]] : memref<112x112xf16, "l1"> -> memref<112x112xf16, "l0a">
// DAVINCI:           loop.copy_async %b -> %[[L1B]] {pad = array<i64: 0, 12, 0, 3>}
// DAVINCI:           linalg.generic {{.*}} ins(%[[L0A]], %[[L0B]] : memref<112x112xf16, "l0a">, memref<112x80xf16, "l0b">) outs(%[[C]] : memref<112x80xf32, "l0c">)
// DAVINCI:         loop.copy %acc -> %result0 : memref<100x77xf32, strided<[80, 1]>, "l0c"> -> memref<100x77xf32, "gm">

// TC-LABEL: func.func @ragged
// TC-NEXT:    %[[C:.*]] = memref.alloc() : memref<112x80xf32, "rf">
// TC-NEXT:    %acc = memref.subview %[[C]][0, 0] [100, 77] [1, 1]
// TC-NEXT:    %[[SA:.*]] = memref.alloc() : memref<100x100xf16, "smem">
// TC-NEXT:    %[[RA:.*]] = memref.alloc() : memref<112x112xf16, "rf">
// TC:           loop.copy_async %a -> %[[SA]] : memref<100x100xf16, strided<[300, 1], offset: ?>, "gm"> -> memref<100x100xf16, "smem">
// TC:           linalg.fill ins(%{{.*}} : f16) outs(%[[RA]] : memref<112x112xf16, "rf">)
// TC-NEXT:      %[[V:.*]] = memref.subview %[[RA]][0, 0] [100, 100] [1, 1] : memref<112x112xf16, "rf"> to memref<100x100xf16, strided<[112, 1]>, "rf">
// TC-NEXT:      loop.copy_async %[[SA]] -> %[[V]]
// TC:           linalg.generic {{.*}} ins(%[[RA]], %{{.*}} : memref<112x112xf16, "rf">, memref<112x80xf16, "rf">) outs(%[[C]] : memref<112x80xf32, "rf">)

func.func @ragged(%A: memref<100x300xf16, "gm">, %B: memref<300x77xf16, "gm">, %result0: memref<100x77xf32, "gm">) {
  %c0 = arith.constant 0 : index
  %c100 = arith.constant 100 : index
  %c300 = arith.constant 300 : index
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<100x77xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<100x77xf32>)
  scf.for %k = %c0 to %c300 step %c100 {
    %a = memref.subview %A[0, %k] [100, 100] [1, 1] : memref<100x300xf16, "gm"> to memref<100x100xf16, strided<[300, 1], offset: ?>, "gm">
    %b = memref.subview %B[%k, 0] [100, 77] [1, 1] : memref<300x77xf16, "gm"> to memref<100x77xf16, strided<[77, 1], offset: ?>, "gm">
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<100x100xf16, strided<[300, 1], offset: ?>, "gm">, memref<100x77xf16, strided<[77, 1], offset: ?>, "gm">) outs(%acc : memref<100x77xf32>) {
    ^bb0(%x: f16, %y: f16, %o: f32):
      %xe = arith.extf %x : f16 to f32
      %ye = arith.extf %y : f16 to f32
      %p = arith.mulf %xe, %ye : f32
      %s = arith.addf %o, %p : f32
      linalg.yield %s : f32
    }
  }
  loop.copy %acc -> %result0 : memref<100x77xf32> -> memref<100x77xf32, "gm">
  func.return
}
