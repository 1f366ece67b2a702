// loop-to-npu on davinci: copies become DMAs with their subviews folded into indices and strides,
// contractions npu.mma (the accumulator's zero fill absorbed into a first non-accumulating mma),
// single-op generics npu.vec.* with repeat/mask/stride from the 256-byte vector unit.
// RUN: ziggurat-opt %s --split-input-file -p 'loop-to-npu{machine=davinci}' | filecheck %s

// The module names the machine it now targets.
// CHECK:       builtin.module attributes {npu.machine = "davinci"}
// A gm tile into slot 1 of a double buffer (rank-reducing subview), the slot on to l0a, a strided gm view.
// CHECK-LABEL: func.func @copies
// CHECK:         %a1 = memref.alloc() : memref<2x64x64xf16, "l1">
// CHECK-NEXT:    scf.for %i
// CHECK-NEXT:      npu.dma "mte2" %A[%i, 64] -> %a1[1, 0, 0] {shape = array<i64: 64, 64>} : memref<256x512xf16, "gm"> -> memref<2x64x64xf16, "l1">
// CHECK-NEXT:      %a0 = memref.alloc() : memref<64x64xf16, "l0a">
// CHECK-NEXT:      npu.dma "mte1" %a1[1, 0, 0] -> %a0[0, 0] {shape = array<i64: 64, 64>} : memref<2x64x64xf16, "l1"> -> memref<64x64xf16, "l0a">
// CHECK:         npu.dma "mte2" %A[0, 0] -> %u[0, 0] {shape = array<i64: 8, 32>, src_strides = array<i64: 1024, 1>} : memref<256x512xf16, "gm"> -> memref<8x32xf16, "ub">
// CHECK-NOT:     loop.
// CHECK-NOT:     memref.subview
func.func @copies(%A: memref<256x512xf16, "gm">) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %a1 = memref.alloc() : memref<2x64x64xf16, "l1">
  scf.for %i = %c0 to %c256 step %c64 {
  %s = memref.subview %A[%i, 64] [64, 64] [1, 1] : memref<256x512xf16, "gm"> to memref<64x64xf16, strided<[512, 1], offset: ?>, "gm">
  %slot = memref.subview %a1[1, 0, 0] [1, 64, 64] [1, 1, 1] : memref<2x64x64xf16, "l1"> to memref<64x64xf16, strided<[64, 1], offset: 4096>, "l1">
  %t = loop.copy_async %s -> %slot : memref<64x64xf16, strided<[512, 1], offset: ?>, "gm"> -> memref<64x64xf16, strided<[64, 1], offset: 4096>, "l1">
  loop.wait %t : !loop.token
  %a0 = memref.alloc() : memref<64x64xf16, "l0a">
  loop.copy %slot -> %a0 : memref<64x64xf16, strided<[64, 1], offset: 4096>, "l1"> -> memref<64x64xf16, "l0a">
  }
  %x = memref.alloc() : memref<4x8x16xf32, "ub">
  %xs = memref.subview %A[0, 0] [8, 32] [2, 1] : memref<256x512xf16, "gm"> to memref<8x32xf16, strided<[1024, 1]>, "gm">
  %u = memref.alloc() : memref<8x32xf16, "ub">
  loop.copy %xs -> %u : memref<8x32xf16, strided<[1024, 1]>, "gm"> -> memref<8x32xf16, "ub">
  func.return
}


// -----

// matmul + relu, K walked in a loop: the fill of l0c is gone, the first K step overwrites.
// CHECK-LABEL: func.func @main
// CHECK-NOT:     linalg.fill
// CHECK:         scf.for %i
// CHECK-NEXT:      scf.for %k
// CHECK-NEXT:        npu.dma "mte2" %A[%i, %k] -> %a1[0, 0] {shape = array<i64: 64, 64>}
// CHECK-NEXT:        npu.dma "mte1" %a1[0, 0] -> %a0[0, 0] {shape = array<i64: 64, 64>}
// CHECK-NEXT:        npu.dma "mte2" %B[%k, 0] -> %b1[0, 0] {shape = array<i64: 64, 128>}
// CHECK-NEXT:        npu.dma "mte1" %b1[0, 0] -> %b0[0, 0] {shape = array<i64: 64, 128>}
// CHECK-NEXT:        %[[FIRST:.*]] = arith.cmpi eq, %k, %c0 : index
// CHECK-NEXT:        scf.if %[[FIRST]] {
// CHECK-NEXT:          npu.mma %a0[0, 0], %b0[0, 0] -> %c[0, 0] {m = 64 : i64, n = 128 : i64, k = 64 : i64} : memref<64x64xf16, "l0a">, memref<64x128xf16, "l0b"> -> memref<64x128xf32, "l0c">
// CHECK-NEXT:        } else {
// CHECK-NEXT:          npu.mma %a0[0, 0], %b0[0, 0] -> %c[0, 0] {m = 64 : i64, n = 128 : i64, k = 64 : i64, accumulate}
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:      npu.dma "fixpipe" %c[0, 0] -> %y[0, 0] {shape = array<i64: 64, 128>} : memref<64x128xf32, "l0c"> -> memref<64x128xf16, "ub">
// CHECK-NEXT:      npu.vec.relu %y[0, 0] -> %r[0, 0] {repeat = 64 : i64} : memref<64x128xf16, "ub"> -> memref<64x128xf16, "ub">
// CHECK-NEXT:      npu.dma "mte3" %r[0, 0] -> %result0[%i, 0] {shape = array<i64: 64, 128>} : memref<64x128xf16, "ub"> -> memref<128x128xf16, "gm">
// CHECK-NOT:     loop.
// CHECK-NOT:     linalg.
func.func @main(%A: memref<128x256xf16, "gm">, %B: memref<256x128xf16, "gm">, %result0: memref<128x128xf16, "gm">) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.000000e+00 : f32
  %hzero = arith.constant 0.000000e+00 : f16
  %a1 = memref.alloc() : memref<64x64xf16, "l1">
  %b1 = memref.alloc() : memref<64x128xf16, "l1">
  %a0 = memref.alloc() : memref<64x64xf16, "l0a">
  %b0 = memref.alloc() : memref<64x128xf16, "l0b">
  %c = memref.alloc() : memref<64x128xf32, "l0c">
  %y = memref.alloc() : memref<64x128xf16, "ub">
  %r = memref.alloc() : memref<64x128xf16, "ub">
  scf.for %i = %c0 to %c128 step %c64 {
    linalg.fill ins(%zero : f32) outs(%c : memref<64x128xf32, "l0c">)
    scf.for %k = %c0 to %c256 step %c64 {
      %as = memref.subview %A[%i, %k] [64, 64] [1, 1] : memref<128x256xf16, "gm"> to memref<64x64xf16, strided<[256, 1], offset: ?>, "gm">
      %t0 = loop.copy_async %as -> %a1 : memref<64x64xf16, strided<[256, 1], offset: ?>, "gm"> -> memref<64x64xf16, "l1">
      loop.wait %t0 : !loop.token
      %t1 = loop.copy_async %a1 -> %a0 : memref<64x64xf16, "l1"> -> memref<64x64xf16, "l0a">
      loop.wait %t1 : !loop.token
      %bs = memref.subview %B[%k, 0] [64, 128] [1, 1] : memref<256x128xf16, "gm"> to memref<64x128xf16, strided<[128, 1], offset: ?>, "gm">
      %t2 = loop.copy_async %bs -> %b1 : memref<64x128xf16, strided<[128, 1], offset: ?>, "gm"> -> memref<64x128xf16, "l1">
      loop.wait %t2 : !loop.token
      %t3 = loop.copy_async %b1 -> %b0 : memref<64x128xf16, "l1"> -> memref<64x128xf16, "l0b">
      loop.wait %t3 : !loop.token
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a0, %b0 : memref<64x64xf16, "l0a">, memref<64x128xf16, "l0b">) outs(%c : memref<64x128xf32, "l0c">) {
      ^bb0(%x: f16, %w: f16, %acc: f32):
        %xe = arith.extf %x : f16 to f32
        %we = arith.extf %w : f16 to f32
        %p = arith.mulf %xe, %we : f32
        %s = arith.addf %acc, %p : f32
        linalg.yield %s : f32
      }
    }
    loop.copy %c -> %y : memref<64x128xf32, "l0c"> -> memref<64x128xf16, "ub">
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y : memref<64x128xf16, "ub">) outs(%r : memref<64x128xf16, "ub">) {
    ^bb0(%in: f16, %out: f16):
      %m = arith.maximumf %in, %hzero : f16
      linalg.yield %m : f16
    }
    %ys = memref.subview %result0[%i, 0] [64, 128] [1, 1] : memref<128x128xf16, "gm"> to memref<64x128xf16, strided<[128, 1], offset: ?>, "gm">
    loop.copy %r -> %ys : memref<64x128xf16, "ub"> -> memref<64x128xf16, strided<[128, 1], offset: ?>, "gm">
  }
  func.return
}


// -----

// Batch dims are loops; the input holding the output's innermost dim is B (here the second role
// swap: the weights of a conv tile are A); ragged views round up to the 16x16x16 cube.
// CHECK-LABEL: func.func @batched
// CHECK:         scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      npu.mma %a[%[[B]], 0, 0], %b[%[[B]], 0, 0] -> %c[%[[B]], 0, 0] {m = 32 : i64, n = 32 : i64, k = 64 : i64} : memref<2x32x64xf16, "l0a">, memref<2x64x32xf16, "l0b"> -> memref<2x32x32xf32, "l0c">
// CHECK-LABEL: func.func @conv_tile
// CHECK-NEXT:    npu.mma %w[0, 0], %x[0, 0] -> %o[0, 0] {m = 32 : i64, n = 48 : i64, k = 64 : i64, accumulate} : memref<32x64xf16, "l0a">, memref<64x48xf16, "l0b"> -> memref<32x48xf32, "l0c">
// CHECK-LABEL: func.func @ragged
// CHECK-NEXT:    npu.mma %a[0, 0], %b[0, 0] -> %c[0, 0] {m = 112 : i64, n = 80 : i64, k = 144 : i64, accumulate}
func.func @batched(%a: memref<2x32x64xf16, "l0a">, %b: memref<2x64x32xf16, "l0b">, %c: memref<2x32x32xf32, "l0c">) {
  %zero = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<2x32x32xf32, "l0c">)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : memref<2x32x64xf16, "l0a">, memref<2x64x32xf16, "l0b">) outs(%c : memref<2x32x32xf32, "l0c">) {
  ^bb0(%x: f16, %w: f16, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %we = arith.extf %w : f16 to f32
    %p = arith.mulf %xe, %we : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

func.func @conv_tile(%x: memref<64x48xf16, "l0b">, %w: memref<32x64xf16, "l0a">, %o: memref<32x48xf32, "l0c">) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<64x48xf16, "l0b">, memref<32x64xf16, "l0a">) outs(%o : memref<32x48xf32, "l0c">) {
  ^bb0(%xv: f16, %wv: f16, %acc: f32):
    %xe = arith.extf %xv : f16 to f32
    %we = arith.extf %wv : f16 to f32
    %p = arith.mulf %we, %xe : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

func.func @ragged(%a: memref<112x144xf16, "l0a">, %b: memref<144x80xf16, "l0b">, %c: memref<112x80xf32, "l0c">) {
  %av = memref.subview %a[0, 0] [100, 140] [1, 1] : memref<112x144xf16, "l0a"> to memref<100x140xf16, strided<[144, 1]>, "l0a">
  %bv = memref.subview %b[0, 0] [140, 77] [1, 1] : memref<144x80xf16, "l0b"> to memref<140x77xf16, strided<[80, 1]>, "l0b">
  %cv = memref.subview %c[0, 0] [100, 77] [1, 1] : memref<112x80xf32, "l0c"> to memref<100x77xf32, strided<[80, 1]>, "l0c">
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%av, %bv : memref<100x140xf16, strided<[144, 1]>, "l0a">, memref<140x77xf16, strided<[80, 1]>, "l0b">) outs(%cv : memref<100x77xf32, strided<[80, 1]>, "l0c">) {
  ^bb0(%x: f16, %w: f16, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %we = arith.extf %w : f16 to f32
    %p = arith.mulf %xe, %we : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}


// -----

// A bias per column (stride 0 between repetitions), scalar operands as muls/relu, a scalar on the
// left spread with dup, a masked 50-wide view of 64-wide rows.
// CHECK-LABEL: func.func @bias_relu
// CHECK-NEXT:    %[[HALF:.*]] = memref.alloc() : memref<16x64xf16, "ub">
// CHECK-NEXT:    npu.vec.add %x[0, 0], %b[0] -> %y[0, 0] {repeat = 16 : i64, mask = 64 : i64, stride = array<i64: 64, 0, 64>}
// CHECK-NEXT:    npu.vec.muls %y[0, 0] -> %y[0, 0] {scalar = 2.000000e+00 : f64, repeat = 8 : i64}
// CHECK-NEXT:    npu.vec.relu %y[0, 0] -> %y[0, 0] {repeat = 8 : i64}
// CHECK-NEXT:    npu.vec.dup %[[HALF]][0, 0] {scalar = 5.000000e-01 : f64, repeat = 8 : i64}
// CHECK-NEXT:    npu.vec.sub %[[HALF]][0, 0], %y[0, 0] -> %y[0, 0] {repeat = 8 : i64}
// CHECK-NEXT:    npu.vec.exp %y[0, 0] -> %y[0, 0] {repeat = 16 : i64, mask = 50 : i64, stride = array<i64: 64, 64>}
// CHECK-NEXT:    func.return
func.func @bias_relu(%x: memref<16x64xf16, "ub">, %b: memref<64xf16, "ub">, %y: memref<16x64xf16, "ub">) {
  %zero = arith.constant 0.000000e+00 : f16
  %half = arith.constant 5.000000e-01 : f16
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %b : memref<16x64xf16, "ub">, memref<64xf16, "ub">) outs(%y : memref<16x64xf16, "ub">) {
  ^bb0(%in: f16, %bias: f16, %out: f16):
    %s = arith.addf %in, %bias : f16
    linalg.yield %s : f16
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y : memref<16x64xf16, "ub">) outs(%y : memref<16x64xf16, "ub">) {
  ^bb0(%in: f16, %out: f16):
    %s = arith.divf %in, %half : f16
    linalg.yield %s : f16
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y : memref<16x64xf16, "ub">) outs(%y : memref<16x64xf16, "ub">) {
  ^bb0(%in: f16, %out: f16):
    %s = arith.maximumf %zero, %in : f16
    linalg.yield %s : f16
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y : memref<16x64xf16, "ub">) outs(%y : memref<16x64xf16, "ub">) {
  ^bb0(%in: f16, %out: f16):
    %s = arith.subf %half, %in : f16
    linalg.yield %s : f16
  }
  %t = memref.subview %y[0, 0] [16, 50] [1, 1] : memref<16x64xf16, "ub"> to memref<16x50xf16, strided<[64, 1]>, "ub">
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t : memref<16x50xf16, strided<[64, 1]>, "ub">) outs(%t : memref<16x50xf16, strided<[64, 1]>, "ub">) {
  ^bb0(%in: f16, %out: f16):
    %s = math.exp %in : f16
    linalg.yield %s : f16
  }
  func.return
}


// -----

// Softmax rows of 256 f32 (4 blocks of 64 lanes): row max/sum as a reduce of every block then a
// reduce of each row's 4 partials, combined into the filled output; the row value spread over the
// rows one block column at a time (each instruction starts in row 0, aligned).
// CHECK-LABEL: func.func @main
// CHECK:         npu.dma "mte2" %X[0, 0] -> %x[0, 0] {shape = array<i64: 32, 256>}
// CHECK-NEXT:    npu.vec.dup %m[0] {scalar = 0xfff0000000000000 : f64, mask = 32 : i64}
// CHECK-NEXT:    npu.vec.reduce "max" %x[0, 0] -> %[[P:.*]][0] {repeat = 128 : i64} : memref<32x256xf32, "ub"> -> memref<128xf32, "ub">
// CHECK-NEXT:    npu.vec.reduce "max" %[[P]][0] -> %[[R:.*]][0] {repeat = 32 : i64, mask = 4 : i64, stride = array<i64: 4, 1>}
// CHECK-NEXT:    npu.vec.max %m[0], %[[R]][0] -> %m[0] {mask = 32 : i64}
// CHECK-NEXT:    npu.vec.broadcast %m[0] -> %[[ROWS:.*]][0, 0] {repeat = 32 : i64, stride = array<i64: 1, 256>} : memref<32xf32, "ub"> -> memref<32x256xf32, "ub">
// CHECK-NEXT:    npu.vec.broadcast %m[0] -> %[[ROWS]][0, 64] {repeat = 32 : i64, stride = array<i64: 1, 256>}
// CHECK-NEXT:    npu.vec.broadcast %m[0] -> %[[ROWS]][0, 128] {repeat = 32 : i64, stride = array<i64: 1, 256>}
// CHECK-NEXT:    npu.vec.broadcast %m[0] -> %[[ROWS]][0, 192] {repeat = 32 : i64, stride = array<i64: 1, 256>}
// CHECK:         npu.vec.sub %x[0, 0], %[[ROWS]][0, 0] -> %e[0, 0] {repeat = 128 : i64}
// CHECK-NEXT:    npu.vec.exp %e[0, 0] -> %e[0, 0] {repeat = 128 : i64}
// CHECK-NEXT:    npu.vec.dup %s[0] {scalar = 0.000000e+00 : f64, mask = 32 : i64}
// CHECK-NEXT:    npu.vec.reduce "sum" %e[0, 0]
// CHECK-NEXT:    npu.vec.reduce "sum"
// CHECK-NEXT:    npu.vec.add %s[0]
// CHECK:         npu.vec.div %e[0, 0]
// CHECK-NEXT:    npu.dma "mte3" %x[0, 0] -> %result0[0, 0] {shape = array<i64: 32, 256>}
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @main(%X: memref<32x256xf32, "gm">, %result0: memref<32x256xf32, "gm">) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.000000e+00 : f32
  %x = memref.alloc() : memref<32x256xf32, "ub">
  %m = memref.alloc() : memref<32xf32, "ub">
  %s = memref.alloc() : memref<32xf32, "ub">
  %e = memref.alloc() : memref<32x256xf32, "ub">
  loop.copy %X -> %x : memref<32x256xf32, "gm"> -> memref<32x256xf32, "ub">
  linalg.fill ins(%ninf : f32) outs(%m : memref<32xf32, "ub">)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<32x256xf32, "ub">) outs(%m : memref<32xf32, "ub">) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %in, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %m : memref<32x256xf32, "ub">, memref<32xf32, "ub">) outs(%e : memref<32x256xf32, "ub">) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%e : memref<32x256xf32, "ub">) outs(%e : memref<32x256xf32, "ub">) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%s : memref<32xf32, "ub">)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%e : memref<32x256xf32, "ub">) outs(%s : memref<32xf32, "ub">) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%e, %s : memref<32x256xf32, "ub">, memref<32xf32, "ub">) outs(%x : memref<32x256xf32, "ub">) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.divf %a, %b : f32
    linalg.yield %r : f32
  }
  loop.copy %x -> %result0 : memref<32x256xf32, "ub"> -> memref<32x256xf32, "gm">
  func.return
}

// -----

// A conv tile's operands staged in 3-d buffers (ow padded to 16): X and the accumulator get the
// [K, N] and [M, N] shapes the cube reads (same bytes), the copies walking them through the old shape.
// CHECK-LABEL: func.func @main
// CHECK:         %x0 = memref.alloc() : memref<32x224xf16, "l0b">
// CHECK:         %c = memref.alloc() : memref<16x224xf32, "l0c">
// CHECK:         npu.dma "mte1" %x1[0, 0, 0] -> %x0[0, 0] {shape = array<i64: 32, 14, 16>, dst_strides = array<i64: 224, 16, 1>}
// CHECK:         npu.mma %w0[0, 0], %x0[0, 0] -> %c[0, 0] {m = 16 : i64, n = 224 : i64, k = 32 : i64}
// CHECK-NEXT:    npu.dma "fixpipe" %c[0, 0] -> %result0[0, 0, 0] {shape = array<i64: 224, 14>, src_strides = array<i64: 16, 1>, dst_strides = array<i64: 14, 1>}
// CHECK-NOT:     memref.expand_shape

func.func @main(%X: memref<32x14x14xf16, "gm">, %W: memref<16x32xf16, "gm">, %result0: memref<16x14x14xf32, "gm">) {
  %zero = arith.constant 0.000000e+00 : f32
  %x1 = memref.alloc() : memref<32x14x16xf16, "l1">
  %x0 = memref.alloc() : memref<32x14x16xf16, "l0b">
  %w1 = memref.alloc() : memref<16x32xf16, "l1">
  %w0 = memref.alloc() : memref<16x32xf16, "l0a">
  %c = memref.alloc() : memref<16x14x16xf32, "l0c">
  loop.copy %X -> %x1 {pad = array<i64: 0, 0, 0, 0, 0, 2>} : memref<32x14x14xf16, "gm"> -> memref<32x14x16xf16, "l1">
  loop.copy %x1 -> %x0 : memref<32x14x16xf16, "l1"> -> memref<32x14x16xf16, "l0b">
  loop.copy %W -> %w1 : memref<16x32xf16, "gm"> -> memref<16x32xf16, "l1">
  loop.copy %w1 -> %w0 : memref<16x32xf16, "l1"> -> memref<16x32xf16, "l0a">
  linalg.fill ins(%zero : f32) outs(%c : memref<16x14x16xf32, "l0c">)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d3, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x0, %w0 : memref<32x14x16xf16, "l0b">, memref<16x32xf16, "l0a">) outs(%c : memref<16x14x16xf32, "l0c">) {
  ^bb0(%xv: f16, %wv: f16, %acc: f32):
    %xe = arith.extf %xv : f16 to f32
    %we = arith.extf %wv : f16 to f32
    %p = arith.mulf %we, %xe : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %cs = memref.subview %c[0, 0, 0] [16, 14, 14] [1, 1, 1] : memref<16x14x16xf32, "l0c"> to memref<16x14x14xf32, strided<[224, 16, 1]>, "l0c">
  loop.copy %cs -> %result0 : memref<16x14x14xf32, strided<[224, 16, 1]>, "l0c"> -> memref<16x14x14xf32, "gm">
  func.return
}

// -----

// More dims than the engine moves (fixpipe: 2): the DMAs loop over the dim with the fewest
// iterations (3 rows, each all 32 channels), not the outermost (32 channels, each 3 rows).
// CHECK-LABEL: func.func @fewest_dmas
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    scf.for %[[ROW:.*]] = %[[C0]] to %[[C3]] step %[[C1]] {
// CHECK-NEXT:      npu.dma "fixpipe" %c[0, %[[ROW]], 0] -> %result0[0, %[[ROW]], 0] {shape = array<i64: 32, 14>, src_strides = array<i64: 48, 1>, dst_strides = array<i64: 56, 1>}
// CHECK-NEXT:    }
func.func @fewest_dmas(%c: memref<32x3x16xf32, "l0c">, %result0: memref<32x4x14xf16, "gm">) {
  %cs = memref.subview %c[0, 0, 0] [32, 3, 14] [1, 1, 1] : memref<32x3x16xf32, "l0c"> to memref<32x3x14xf32, strided<[48, 16, 1]>, "l0c">
  %rs = memref.subview %result0[0, 0, 0] [32, 3, 14] [1, 1, 1] : memref<32x4x14xf16, "gm"> to memref<32x3x14xf16, strided<[56, 14, 1]>, "gm">
  loop.copy %cs -> %rs : memref<32x3x14xf32, strided<[48, 16, 1]>, "l0c"> -> memref<32x3x14xf16, strided<[56, 14, 1]>, "gm">
  func.return
}

// -----

// A transpose inside ub (no engine serves ub -> ub, the vector unit reads adjacent elements): its
// reader reads the source through transposed strides instead; the source is rewritten only after.
// CHECK-LABEL: func.func @kt
// CHECK-NEXT:    %a = memref.alloc() : memref<64x32xf16, "ub">
// CHECK-NEXT:    %b = memref.alloc() : memref<32x64xf16, "ub">
// CHECK-NEXT:    npu.dma "mte2" %k[0, 0] -> %a[0, 0] {shape = array<i64: 64, 32>}
// CHECK-NEXT:    npu.dma "mte3" %a[0, 0] -> %result0[0, 0] {shape = array<i64: 32, 64>, src_strides = array<i64: 1, 32>} : memref<64x32xf16, "ub"> -> memref<32x64xf16, "gm">
// CHECK-NEXT:    npu.dma "mte2" %k[0, 0] -> %a[0, 0]
// CHECK-NEXT:    func.return
func.func @kt(%k: memref<64x32xf16, "gm">, %result0: memref<32x64xf16, "gm">) {
  %a = memref.alloc() : memref<64x32xf16, "ub">
  %b = memref.alloc() : memref<32x64xf16, "ub">
  loop.copy %k -> %a : memref<64x32xf16, "gm"> -> memref<64x32xf16, "ub">
  linalg.transpose ins(%a : memref<64x32xf16, "ub">) outs(%b : memref<32x64xf16, "ub">) permutation = [1, 0]
  loop.copy %b -> %result0 : memref<32x64xf16, "ub"> -> memref<32x64xf16, "gm">
  loop.copy %k -> %a : memref<64x32xf16, "gm"> -> memref<64x32xf16, "ub">
  func.return
}

// -----

// The same transpose, but an op that overwrites its result in place reads it first: a view of the
// source would leave the result unwritten, so the transpose stays, through global memory.
// CHECK-LABEL: func.func @kt_read_in_place
// CHECK-NEXT:    %[[GM:.*]] = memref.alloc() : memref<32x64xf16, "gm">
// CHECK-NEXT:    %a = memref.alloc() : memref<64x32xf16, "ub">
// CHECK-NEXT:    %b = memref.alloc() : memref<32x64xf16, "ub">
// CHECK-NEXT:    npu.dma "mte2" %k[0, 0] -> %a[0, 0] {shape = array<i64: 64, 32>}
// CHECK-NEXT:    npu.dma "mte3" %a[0, 0] -> %[[GM]][0, 0] {shape = array<i64: 32, 64>, src_strides = array<i64: 1, 32>}
// CHECK-NEXT:    npu.dma "mte2" %[[GM]][0, 0] -> %b[0, 0] {shape = array<i64: 32, 64>}
// CHECK-NEXT:    npu.vec.exp %b[0, 0] -> %b[0, 0]
// CHECK-NEXT:    npu.dma "mte3" %b[0, 0] -> %result0[0, 0]
// CHECK-NEXT:    func.return
func.func @kt_read_in_place(%k: memref<64x32xf16, "gm">, %result0: memref<32x64xf16, "gm">) {
  %a = memref.alloc() : memref<64x32xf16, "ub">
  %b = memref.alloc() : memref<32x64xf16, "ub">
  loop.copy %k -> %a : memref<64x32xf16, "gm"> -> memref<64x32xf16, "ub">
  linalg.transpose ins(%a : memref<64x32xf16, "ub">) outs(%b : memref<32x64xf16, "ub">) permutation = [1, 0]
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%b : memref<32x64xf16, "ub">) outs(%b : memref<32x64xf16, "ub">) {
  ^bb0(%in: f16, %out: f16):
    %e = math.exp %in : f16
    linalg.yield %e : f16
  }
  loop.copy %b -> %result0 : memref<32x64xf16, "ub"> -> memref<32x64xf16, "gm">
  func.return
}

// -----

// Two ops the unit has no single instruction for: abs as max(x, -x), expm1 as exp then adds -1.
// CHECK-LABEL: func.func @abs_expm1
// CHECK-NEXT:    %[[NEG:.*]] = memref.alloc() : memref<16x64xf16, "ub">
// CHECK-NEXT:    npu.vec.muls %x[0, 0] -> %[[NEG]][0, 0] {scalar = -1.000000e+00 : f64, repeat = 8 : i64}
// CHECK-NEXT:    npu.vec.max %x[0, 0], %[[NEG]][0, 0] -> %y[0, 0] {repeat = 8 : i64}
// CHECK-NEXT:    npu.vec.exp %y[0, 0] -> %y[0, 0] {repeat = 8 : i64}
// CHECK-NEXT:    npu.vec.adds %y[0, 0] -> %y[0, 0] {scalar = -1.000000e+00 : f64, repeat = 8 : i64}
func.func @abs_expm1(%x: memref<16x64xf16, "ub">, %y: memref<16x64xf16, "ub">) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<16x64xf16, "ub">) outs(%y : memref<16x64xf16, "ub">) {
  ^bb0(%in: f16, %out: f16):
    %a = math.absf %in : f16
    linalg.yield %a : f16
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y : memref<16x64xf16, "ub">) outs(%y : memref<16x64xf16, "ub">) {
  ^bb0(%in: f16, %out: f16):
    %e = math.expm1 %in : f16
    linalg.yield %e : f16
  }
  func.return
}
