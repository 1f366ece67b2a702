// loop-promote-to-memory-space pads a contraction's buffers to whole matrix instructions with the
// fewest points: the output rows x cols of a conv tile are one run of the instruction's N (NCHW:
// loop-to-npu regroups them), so 7x7 points take 8x8 (64, four 16-wide blocks), not 7x16 (112);
// 3 rows of 7 take 4x8 (32), not 3x16 (48); the single row left over takes 1x16 (a unit dim stays).
// Both dims of the B tile and of the accumulator grow; the fixpipe reads the accumulator's 7x7 valid
// region back out.
// RUN: ziggurat-opt %s -p 'graph-fuse,graph-to-tile,tile-and-fuse{machine=davinci},tile-decompose-conv,tile-vectorize{machine=davinci},canonicalize,tile-to-loop{machine=davinci},loop-promote-to-memory-space{machine=davinci}' > %t.mlir
// RUN: filecheck %s < %t.mlir
// RUN: filecheck %s --check-prefix=OLD < %t.mlir
// RUN: ziggurat-run %s --seed 4 --outputs %t.expected.npz
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=davinci}' | ziggurat-run - --seed 4 --expect %t.expected.npz --rtol 1e-2 --atol 1e-2
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=tensorcore}' | ziggurat-run - --seed 4 --expect %t.expected.npz --rtol 1e-2 --atol 1e-2

// CHECK-DAG:   memref.alloc() : memref<1x64x8x8xf32, "l0c">
// CHECK-DAG:   memref.alloc() : memref<1x64x8x8xf16, "l0b">
// CHECK-DAG:   memref.alloc() : memref<1x64x4x8xf32, "l0c">
// CHECK-DAG:   memref.alloc() : memref<1x64x4x8xf16, "l0b">
// CHECK-DAG:   memref.alloc() : memref<1x64x1x16xf16, "l0b">
// OLD-NOT:     7x16x
// OLD-NOT:     3x16x
// CHECK-DAG:   memref.subview {{.*}} [1, 64, 7, 7] [1, 1, 1, 1] : memref<1x64x8x8xf32, "l0c"> to memref<1x64x7x7xf32, strided<[4096, 64, 8, 1]>, "l0c">
// CHECK:       loop.copy_async {{.*}} {pad = array<i64: 0, 0, 0, 0, 0, 1, 0, 1>} : memref<1x64x7x7xf16, strided<[5184, 81, 9, 1]>, "l1"> -> memref<1x64x8x8xf16, "l0b">
// CHECK:       loop.copy_async {{.*}} {pad = array<i64: 0, 0, 0, 0, 0, 1, 0, 1>} : memref<1x64x3x7xf16, {{.*}}, "l1"> -> memref<1x64x4x8xf16, "l0b">
func.func @main(%x: tensor<1x64x7x7xf16>) -> tensor<1x64x7x7xf16> {
  %w1 = graph.constant dense<0.03125> : tensor<64x64x3x3xf16>
  %w2 = graph.constant dense<-0.015625> : tensor<64x64x3x3xf16>
  %y = graph.conv2d %x, %w1 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x64x7x7xf16>, tensor<64x64x3x3xf16>) -> tensor<1x64x7x7xf16>
  %r = graph.relu %y : tensor<1x64x7x7xf16>
  %z = graph.conv2d %r, %w2 {pads = array<i64: 1, 1, 1, 1>, tile.sizes = array<i64: 1, 64, 3, 7, 64, 3, 3>} : (tensor<1x64x7x7xf16>, tensor<64x64x3x3xf16>) -> tensor<1x64x7x7xf16>
  func.return %z : tensor<1x64x7x7xf16>
}
