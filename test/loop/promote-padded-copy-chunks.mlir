// A padding copy within global memory too large for the local space it passes (AlexNet's
// LRN channel pad, 1x96x54x54 -> 1x100x54x54 f16 = 583 KB, ub 256 KB) is split into static
// chunks along its unpadded dims; the padded dim stays whole, so each chunk pads as the copy
// did (100 channels x 12 rows x 54 = 126.6 KB, at most half of ub).
// RUN: ziggurat-opt %s -p 'loop-promote-to-memory-space{machine=davinci},loop-legalize-copies{machine=davinci}' | filecheck %s
// RUN: ziggurat-run %s --function channel_pad --seed 3 --print > %t.before
// RUN: ziggurat-opt %s -p 'loop-promote-to-memory-space{machine=davinci},loop-legalize-copies{machine=davinci}' | ziggurat-run - --function channel_pad --seed 3 --print > %t.after
// RUN: diff %t.before %t.after

// CHECK-LABEL: func.func @channel_pad(
// CHECK:         %[[S0:.*]] = memref.subview %a[0, 0, 0, 0] [1, 96, 12, 54] [1, 1, 1, 1]
// CHECK:         %[[D0:.*]] = memref.subview %result0[0, 0, 0, 0] [1, 100, 12, 54] [1, 1, 1, 1]
// CHECK:         loop.copy_async %[[S0]] -> %[[UB:.*]] {pad = array<i64: 0, 0, 2, 2, 0, 0, 0, 0>, pad_value = 0.000000e+00 : f64} : {{.*}} -> memref<1x100x12x54xf16, "ub">
// CHECK:         loop.copy_async %[[UB]] -> %[[D0]]
// CHECK:         memref.subview %a[0, 0, 12, 0] [1, 96, 12, 54] [1, 1, 1, 1]
// CHECK:         memref.subview %a[0, 0, 24, 0] [1, 96, 12, 54] [1, 1, 1, 1]
// CHECK:         memref.subview %a[0, 0, 36, 0] [1, 96, 12, 54] [1, 1, 1, 1]
// CHECK:         %[[S4:.*]] = memref.subview %a[0, 0, 48, 0] [1, 96, 6, 54] [1, 1, 1, 1]
// CHECK:         %[[D4:.*]] = memref.subview %result0[0, 0, 48, 0] [1, 100, 6, 54] [1, 1, 1, 1]
// CHECK-NOT:     loop.copy %a
func.func @channel_pad(%a: memref<1x96x54x54xf16, "gm">, %result0: memref<1x100x54x54xf16, "gm">) {
  loop.copy %a -> %result0 {pad = array<i64: 0, 0, 2, 2, 0, 0, 0, 0>, pad_value = 0.0 : f64} : memref<1x96x54x54xf16, "gm"> -> memref<1x100x54x54xf16, "gm">
  func.return
}
