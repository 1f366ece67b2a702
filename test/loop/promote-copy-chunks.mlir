// A copy within global memory goes out and back through a local space (davinci: gm ->
// ub -> gm); one too large for that space (a DenseNet concat's part, 1x64x56x56 f16 =
// 392 KB, ub 256 KB) is split into static chunks along its outer dims, each half the
// space at most (20 channels of 56x56 f16 = 122.5 KB), copied through one staging buffer.
// RUN: ziggurat-opt %s -p 'loop-promote-to-memory-space{machine=davinci},loop-legalize-copies{machine=davinci}' | filecheck %s
// RUN: ziggurat-run %s --function concat_part --seed 3 --print > %t.before
// RUN: ziggurat-opt %s -p 'loop-promote-to-memory-space{machine=davinci},loop-legalize-copies{machine=davinci}' | ziggurat-run - --function concat_part --seed 3 --print > %t.after
// RUN: diff %t.before %t.after

// CHECK-LABEL: func.func @concat_part(
// CHECK:         %[[UB:.*]] = memref.alloc() : memref<1x20x56x56xf16, "ub">
// CHECK:         %[[S0:.*]] = memref.subview %a[0, 0, 0, 0] [1, 20, 56, 56] [1, 1, 1, 1]
// CHECK:         %[[D0:.*]] = memref.subview %v[0, 0, 0, 0] [1, 20, 56, 56] [1, 1, 1, 1]
// CHECK:         loop.copy_async %[[S0]] -> %[[UB]]
// CHECK:         loop.copy_async %[[UB]] -> %[[D0]]
// CHECK:         memref.subview %a[0, 20, 0, 0] [1, 20, 56, 56] [1, 1, 1, 1]
// CHECK:         memref.subview %a[0, 40, 0, 0] [1, 20, 56, 56] [1, 1, 1, 1]
// CHECK:         %[[S3:.*]] = memref.subview %a[0, 60, 0, 0] [1, 4, 56, 56] [1, 1, 1, 1]
// CHECK:         %[[D3:.*]] = memref.subview %v[0, 60, 0, 0] [1, 4, 56, 56] [1, 1, 1, 1]
// CHECK:         loop.copy_async %[[S3]] -> %{{.*}} : memref<1x4x56x56xf16, strided<[200704, 3136, 56, 1], offset: 188160>, "gm"> -> memref<1x4x56x56xf16, "ub">
// CHECK-NOT:     loop.copy %a
func.func @concat_part(%a: memref<1x64x56x56xf16, "gm">, %result0: memref<1x96x56x56xf16, "gm">) {
  %v = memref.subview %result0[0, 32, 0, 0] [1, 64, 56, 56] [1, 1, 1, 1] : memref<1x96x56x56xf16, "gm"> to memref<1x64x56x56xf16, strided<[301056, 3136, 56, 1], offset: 100352>, "gm">
  loop.copy %a -> %v : memref<1x64x56x56xf16, "gm"> -> memref<1x64x56x56xf16, strided<[301056, 3136, 56, 1], offset: 100352>, "gm">
  func.return
}
