// A per-channel bias view memref<1x128x1x1> rank-reduced to memref<1x128> keeps
// its leading unit dim: loop-double-buffer's slot views and the retyped copies keep it
// too (they used to drop every unit dim, giving a copy of rank 1 -> rank 2).
// RUN: ziggurat-opt %s -p 'loop-double-buffer' | filecheck %s
// RUN: ziggurat-opt %s -p 'loop-double-buffer,loop-to-npu{machine=davinci}' | filecheck %s --check-prefix=DMA
// RUN: ziggurat-run %s --seed 3 --outputs %t.expected.npz
// RUN: ziggurat-opt %s -p 'loop-double-buffer,loop-to-npu{machine=davinci},npu-plan-memory{machine=davinci},npu-insert-sync{machine=davinci}' | ziggurat-run - --seed 3 --expect %t.expected.npz

// CHECK:      memref.alloc() : memref<2x1x128xbf16, "ub">
// CHECK:      %[[V:.*]] = memref.subview %{{.*}}[0, 0, 0, 0] [1, 128, 1, 1] [1, 1, 1, 1] : memref<1x128x1x1xbf16, strided<[256, 1, 1, 1], offset: ?>, "gm"> to memref<1x128xbf16, strided<[256, 1], offset: ?>, "gm">
// CHECK-NEXT: loop.copy_async %[[V]] -> %{{.*}} : memref<1x128xbf16, strided<[256, 1], offset: ?>, "gm"> -> memref<1x128xbf16, strided<[128, 1]>, "ub">
// The DMA walks the 128 channels with stride 1 on both sides (it used to take the
// ub side's stride of the dropped leading dim, 128, and run past the buffer).
// DMA:        npu.dma "mte2" %b[0, %{{.*}}, 0, 0] -> %{{.*}}[0, 0, 0] {shape = array<i64: 128>, src_strides = array<i64: 1>} : memref<1x256x1x1xbf16, "gm"> -> memref<2x1x128xbf16, "ub">
func.func @main(%b: memref<1x256x1x1xbf16, "gm">, %result0: memref<1x256xbf16, "gm">) {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %u = memref.alloc() : memref<1x128xbf16, "ub">
  scf.for %i = %c0 to %c256 step %c128 {
    %s = memref.subview %b[0, %i, 0, 0] [1, 128, 1, 1] [1, 1, 1, 1] : memref<1x256x1x1xbf16, "gm"> to memref<1x128x1x1xbf16, strided<[256, 1, 1, 1], offset: ?>, "gm">
    %v = memref.subview %s[0, 0, 0, 0] [1, 128, 1, 1] [1, 1, 1, 1] : memref<1x128x1x1xbf16, strided<[256, 1, 1, 1], offset: ?>, "gm"> to memref<1x128xbf16, strided<[256, 1], offset: ?>, "gm">
    %t = loop.copy_async %v -> %u : memref<1x128xbf16, strided<[256, 1], offset: ?>, "gm"> -> memref<1x128xbf16, "ub">
    loop.wait %t : !loop.token
    %o = memref.subview %result0[0, %i] [1, 128] [1, 1] : memref<1x256xbf16, "gm"> to memref<1x128xbf16, strided<[256, 1], offset: ?>, "gm">
    %t2 = loop.copy_async %u -> %o : memref<1x128xbf16, "ub"> -> memref<1x128xbf16, strided<[256, 1], offset: ?>, "gm">
    loop.wait %t2 : !loop.token
  }
  func.return
}
