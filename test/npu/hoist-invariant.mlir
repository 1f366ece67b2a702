// npu-hoist-invariant: instructions that write the same values in every iteration move before
// the loop; loop-double-buffer's copies of them go; everything else stays where it is.
// RUN: ziggurat-opt %s -p 'npu-hoist-invariant{machine=davinci}' | filecheck %s
// RUN: ziggurat-opt %s -p 'npu-plan-memory{machine=davinci},npu-insert-sync{machine=davinci}' | ziggurat-run - --machine davinci --function epilogue --seed 3 --print > %t.before
// RUN: ziggurat-opt %s -p 'npu-hoist-invariant{machine=davinci},npu-plan-memory{machine=davinci},npu-insert-sync{machine=davinci}' | ziggurat-run - --machine davinci --function epilogue --seed 3 --print > %t.after
// RUN: diff %t.before %t.after
// RUN: not ziggurat-opt %s -p 'npu-hoist-invariant' 2>&1 | filecheck %s --check-prefix=NOMACHINE

// NOMACHINE: error: npu-hoist-invariant needs a machine: npu-hoist-invariant{machine=NAME} or npu.machine = "NAME" on the module

// A conv epilogue over 4 output tiles, unrolled by two stages: the bias is cast to f32 and
// broadcast over the tile (two instructions, 32 columns each) in every stage. The cast (and its
// stage-1 copy) and the broadcast pair move out; the adds, which read the tiles, stay.
// CHECK-LABEL: func.func @epilogue
// CHECK:         npu.dma "mte2" %bias[0] -> %bias16[0]
// CHECK-NEXT:    npu.vec.cast %bias16[0] -> %bias32[0]
// CHECK-NEXT:    npu.vec.broadcast %bias32[0] -> %spread[0, 0] {repeat = 64 : i64, mask = 32 : i64
// CHECK-NEXT:    npu.vec.broadcast %bias32[0] -> %spread[0, 32] {repeat = 64 : i64, mask = 32 : i64
// CHECK-NEXT:    scf.for
// CHECK-NOT:       npu.vec.cast
// CHECK-NOT:       npu.vec.broadcast
// CHECK:           npu.vec.add %tile[0, 0], %spread[0, 0]
// CHECK-NOT:       npu.vec.cast
// CHECK:           npu.vec.add %tile[0, 0], %spread[0, 0]
// CHECK:         func.return
func.func @epilogue(%x: memref<4x64x64xf32, "gm">, %bias: memref<64xf16, "gm">, %y: memref<4x64x64xf32, "gm">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %bias16 = memref.alloc() : memref<64xf16, "ub">
  %bias32 = memref.alloc() : memref<64xf32, "ub">
  %spread = memref.alloc() : memref<64x64xf32, "ub">
  %tile = memref.alloc() : memref<64x64xf32, "ub">
  npu.dma "mte2" %bias[0] -> %bias16[0] {shape = array<i64: 64>} : memref<64xf16, "gm"> -> memref<64xf16, "ub">
  scf.for %i = %c0 to %c4 step %c2 {
    npu.vec.cast %bias16[0] -> %bias32[0] : memref<64xf16, "ub"> -> memref<64xf32, "ub">
    npu.vec.broadcast %bias32[0] -> %spread[0, 0] {repeat = 64 : i64, mask = 32 : i64, stride = array<i64: 1, 64>} : memref<64xf32, "ub"> -> memref<64x64xf32, "ub">
    npu.vec.broadcast %bias32[0] -> %spread[0, 32] {repeat = 64 : i64, mask = 32 : i64, stride = array<i64: 1, 64>} : memref<64xf32, "ub"> -> memref<64x64xf32, "ub">
    npu.dma "mte2" %x[%i, 0, 0] -> %tile[0, 0] {shape = array<i64: 64, 64>} : memref<4x64x64xf32, "gm"> -> memref<64x64xf32, "ub">
    npu.vec.add %tile[0, 0], %spread[0, 0] -> %tile[0, 0] {repeat = 64 : i64} : memref<64x64xf32, "ub">, memref<64x64xf32, "ub"> -> memref<64x64xf32, "ub">
    npu.dma "mte3" %tile[0, 0] -> %y[%i, 0, 0] {shape = array<i64: 64, 64>} : memref<64x64xf32, "ub"> -> memref<4x64x64xf32, "gm">
    %j = arith.addi %i, %c1 : index
    npu.vec.cast %bias16[0] -> %bias32[0] : memref<64xf16, "ub"> -> memref<64xf32, "ub">
    npu.dma "mte2" %x[%j, 0, 0] -> %tile[0, 0] {shape = array<i64: 64, 64>} : memref<4x64x64xf32, "gm"> -> memref<64x64xf32, "ub">
    npu.vec.add %tile[0, 0], %spread[0, 0] -> %tile[0, 0] {repeat = 64 : i64} : memref<64x64xf32, "ub">, memref<64x64xf32, "ub"> -> memref<64x64xf32, "ub">
    npu.dma "mte3" %tile[0, 0] -> %y[%j, 0, 0] {shape = array<i64: 64, 64>} : memref<64x64xf32, "ub"> -> memref<4x64x64xf32, "gm">
  }
  func.return
}

// What stays: a cast whose source the loop rewrites (%a), a broadcast whose buffer is read
// before it in the body (%b), a cast whose result is read after the loop (%c), an in-place
// relu (%d reads what it writes), and one on an index of the loop (%e).
// CHECK-LABEL: func.func @stays
// CHECK:         scf.for
// CHECK-NEXT:      npu.dma "mte2" %x[%i] -> %a16[0]
// CHECK-NEXT:      npu.vec.cast %a16[0] -> %a32[0]
// CHECK-NEXT:      npu.dma "mte3" %b[0] -> %yb[0]
// CHECK-NEXT:      npu.vec.broadcast %f[0] -> %b[0]
// CHECK-NEXT:      npu.vec.cast %c16[0] -> %c32[0]
// CHECK-NEXT:      npu.vec.relu %d[0] -> %d[0]
// CHECK-NEXT:      npu.vec.cast %c16[%i] -> %e[0]
// CHECK:         npu.dma "mte3" %c32[0] -> %yc[0]
func.func @stays(%x: memref<256xf16, "gm">, %yb: memref<64xf32, "gm">, %yc: memref<64xf32, "gm">, %xf: memref<64xf32, "gm">) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %a16 = memref.alloc() : memref<64xf16, "ub">
  %a32 = memref.alloc() : memref<64xf32, "ub">
  %b = memref.alloc() : memref<64xf32, "ub">
  %c16 = memref.alloc() : memref<256xf16, "ub">
  %c32 = memref.alloc() : memref<64xf32, "ub">
  %d = memref.alloc() : memref<64xf32, "ub">
  %e = memref.alloc() : memref<64xf32, "ub">
  %f = memref.alloc() : memref<64xf32, "ub">
  npu.dma "mte2" %xf[0] -> %f[0] {shape = array<i64: 64>} : memref<64xf32, "gm"> -> memref<64xf32, "ub">
  npu.dma "mte2" %x[0] -> %c16[0] {shape = array<i64: 256>} : memref<256xf16, "gm"> -> memref<256xf16, "ub">
  scf.for %i = %c0 to %c128 step %c64 {
    npu.dma "mte2" %x[%i] -> %a16[0] {shape = array<i64: 64>} : memref<256xf16, "gm"> -> memref<64xf16, "ub">
    npu.vec.cast %a16[0] -> %a32[0] : memref<64xf16, "ub"> -> memref<64xf32, "ub">
    npu.dma "mte3" %b[0] -> %yb[0] {shape = array<i64: 64>} : memref<64xf32, "ub"> -> memref<64xf32, "gm">
    npu.vec.broadcast %f[0] -> %b[0] {mask = 64 : i64} : memref<64xf32, "ub"> -> memref<64xf32, "ub">
    npu.vec.cast %c16[0] -> %c32[0] : memref<256xf16, "ub"> -> memref<64xf32, "ub">
    npu.vec.relu %d[0] -> %d[0] : memref<64xf32, "ub"> -> memref<64xf32, "ub">
    npu.vec.cast %c16[%i] -> %e[0] : memref<256xf16, "ub"> -> memref<64xf32, "ub">
  }
  npu.dma "mte3" %c32[0] -> %yc[0] {shape = array<i64: 64>} : memref<64xf32, "ub"> -> memref<64xf32, "gm">
  func.return
}

// A function that already has flags (hand-written sync) is left as it is: the cast would move
// before the wait that orders it after the DMA.
// CHECK-LABEL: func.func @synced
// CHECK:         scf.for
// CHECK-NEXT:      npu.wait_flag "mte2" -> "vector", 0
// CHECK-NEXT:      npu.vec.cast %a16[0] -> %a32[0]
func.func @synced(%x: memref<64xf16, "gm">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %a16 = memref.alloc() : memref<64xf16, "ub">
  %a32 = memref.alloc() : memref<64xf32, "ub">
  npu.dma "mte2" %x[0] -> %a16[0] {shape = array<i64: 64>} : memref<64xf16, "gm"> -> memref<64xf16, "ub">
  npu.set_flag "mte2" -> "vector", 0
  scf.for %i = %c0 to %c2 step %c1 {
    npu.wait_flag "mte2" -> "vector", 0
    npu.vec.cast %a16[0] -> %a32[0] : memref<64xf16, "ub"> -> memref<64xf32, "ub">
    npu.set_flag "mte2" -> "vector", 0
  }
  npu.wait_flag "mte2" -> "vector", 0
  func.return
}
