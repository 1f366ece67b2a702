// RUN: ziggurat-opt %s -p 'loop-to-npu{machine=davinci}' | filecheck %s
// RUN: ziggurat-run %s --function shuffled --seed 3 --print > %t.loop
// RUN: ziggurat-opt %s -p 'loop-to-npu{machine=davinci},npu-plan-memory{machine=davinci},npu-insert-sync{machine=davinci}' | ziggurat-run - --function shuffled --seed 3 --print > %t.npu
// RUN: diff %t.loop %t.npu

// A channel shuffle's buffer, [3, 4] channels read as 12 (collapse_shape), sliced at
// channels 3..5, across the inner dim's boundary: no view of the [3, 4] buffer walks
// that slice, so the buffer is allocated as 12 channels and the copy that fills it
// writes through an expand_shape, folded into the DMA's indices.
// CHECK-LABEL: func.func @shuffled(
// CHECK:         %buf = memref.alloc() : memref<1x12x8xf16, "ub">
// CHECK-NOT:     memref.collapse_shape
// CHECK:         npu.dma {{.*}} %x[0, 0, 0, 0] -> %buf[0, 0, 0] {{.*}} : memref<1x3x4x8xf16, "gm"> -> memref<1x12x8xf16, "ub">
// CHECK:         npu.dma {{.*}} %buf[0, 3, 0] -> %result0[0, 0, 0] {{.*}} : memref<1x12x8xf16, "ub"> -> memref<1x3x8xf16, "gm">
func.func @shuffled(%x: memref<1x3x4x8xf16, "gm">, %result0: memref<1x3x8xf16, "gm">) {
  %buf = memref.alloc() : memref<1x3x4x8xf16, "ub">
  loop.copy %x -> %buf : memref<1x3x4x8xf16, "gm"> -> memref<1x3x4x8xf16, "ub">
  %c = memref.collapse_shape %buf [[0], [1, 2], [3]] : memref<1x3x4x8xf16, "ub"> into memref<1x12x8xf16, "ub">
  %s = memref.subview %c[0, 3, 0] [1, 3, 8] [1, 1, 1] : memref<1x12x8xf16, "ub"> to memref<1x3x8xf16, strided<[96, 8, 1], offset: 24>, "ub">
  loop.copy %s -> %result0 : memref<1x3x8xf16, strided<[96, 8, 1], offset: 24>, "ub"> -> memref<1x3x8xf16, "gm">
  func.return
}
