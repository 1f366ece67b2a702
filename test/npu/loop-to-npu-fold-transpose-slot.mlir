// A transpose inside 'ub' (no DMA engine from ub to ub) from one slot of a double-buffered
// alloc: as from a whole alloc, its reader reads the slot through a transposed view (a
// memref.reinterpret_cast of the alloc at the slot's element offset), and nothing is moved in ub.
// RUN: ziggurat-opt %s -p 'loop-to-npu{machine=davinci}' | filecheck %s
// RUN: ziggurat-run %s --seed 3 --print > %t.loop
// RUN: ziggurat-opt %s -p 'loop-to-npu{machine=davinci},npu-plan-memory{machine=davinci},npu-insert-sync{machine=davinci}' | ziggurat-run - --seed 3 --print > %t.npu
// RUN: diff %t.loop %t.npu

// CHECK-LABEL: func.func @main(
// CHECK:         npu.dma "mte2" %k[0, 0] -> %slots[1, 0, 0]
// CHECK-NOT:     npu.vec.cast
// CHECK:         npu.dma "mte3" %slots[1, 0, 0] -> %result0[0, 0] {shape = array<i64: 32, 64>, src_strides = array<i64: 1, 32>}
func.func @main(%k: memref<64x32xf16, "gm">, %result0: memref<32x64xf16, "gm">) {
  %slots = memref.alloc() : memref<2x64x32xf16, "ub">
  %slot = memref.subview %slots[1, 0, 0] [1, 64, 32] [1, 1, 1] : memref<2x64x32xf16, "ub"> to memref<64x32xf16, strided<[32, 1], offset: 2048>, "ub">
  %b = memref.alloc() : memref<32x64xf16, "ub">
  loop.copy %k -> %slot : memref<64x32xf16, "gm"> -> memref<64x32xf16, strided<[32, 1], offset: 2048>, "ub">
  linalg.transpose ins(%slot : memref<64x32xf16, strided<[32, 1], offset: 2048>, "ub">) outs(%b : memref<32x64xf16, "ub">) permutation = [1, 0]
  loop.copy %b -> %result0 : memref<32x64xf16, "ub"> -> memref<32x64xf16, "gm">
  func.return
}
