// loop-double-buffer counts against a space's capacity only the allocs live where a buffer is
// (from the first to the last top-level op using them), as npu-plan-memory lets the others share
// its bytes: in a network, one layer's buffers no longer keep the next layer's single.
// RUN: ziggurat-opt %s -p 'loop-double-buffer{machine=davinci}' | filecheck %s

// ub is 256 KiB. The four allocs take 264 KiB in all, but the loops never see them all live:
// - %a (88 KiB) lives with %shared (96 KiB): 96 + 2 x 88 = 272 KiB, so it stays single;
// - %b (32 KiB) lives with %shared: 96 + 2 x 32 = 160 KiB, two slots;
// - %c (48 KiB) lives after %shared's last use, alone: 2 x 48 = 96 KiB, two slots.

// CHECK-LABEL: func.func @layers
// CHECK:         memref.alloc() : memref<49152xf16, "ub">
// CHECK:         memref.alloc() : memref<45056xf16, "ub">
// CHECK:         memref.alloc() : memref<2x16384xf16, "ub">
// CHECK:         memref.alloc() : memref<2x24576xf16, "ub">
// CHECK-NOT:     memref<2x45056
// CHECK-NOT:     memref<2x49152
func.func @layers(%x: memref<4x45056xf16, "gm">, %y: memref<4x16384xf16, "gm">, %w: memref<4x24576xf16, "gm">,
                  %s: memref<49152xf16, "gm">, %out: memref<49152xf16, "gm">) {
  %shared = memref.alloc() : memref<49152xf16, "ub">
  %a = memref.alloc() : memref<45056xf16, "ub">
  %b = memref.alloc() : memref<16384xf16, "ub">
  %c = memref.alloc() : memref<24576xf16, "ub">
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.copy %s -> %shared : memref<49152xf16, "gm"> -> memref<49152xf16, "ub">
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.subview %x[%i, 0] [1, 45056] [1, 1] : memref<4x45056xf16, "gm"> to memref<45056xf16, strided<[1], offset: ?>, "gm">
    loop.copy %v -> %a : memref<45056xf16, strided<[1], offset: ?>, "gm"> -> memref<45056xf16, "ub">
    loop.copy %shared -> %out : memref<49152xf16, "ub"> -> memref<49152xf16, "gm">
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.subview %y[%i, 0] [1, 16384] [1, 1] : memref<4x16384xf16, "gm"> to memref<16384xf16, strided<[1], offset: ?>, "gm">
    loop.copy %v -> %b : memref<16384xf16, strided<[1], offset: ?>, "gm"> -> memref<16384xf16, "ub">
    loop.copy %shared -> %out : memref<49152xf16, "ub"> -> memref<49152xf16, "gm">
  }
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.subview %w[%i, 0] [1, 24576] [1, 1] : memref<4x24576xf16, "gm"> to memref<24576xf16, strided<[1], offset: ?>, "gm">
    loop.copy %v -> %c : memref<24576xf16, strided<[1], offset: ?>, "gm"> -> memref<24576xf16, "ub">
  }
  func.return
}
