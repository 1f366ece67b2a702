// loop-stage-reduction on a 3x3 conv whose loop walks input channels (16 of 64 per step): each row
// tile's padded input (all 64 channels, rows with their halo) is copied into l1 once, before the
// channel loop, and the window points read their channels' slice of it. The weight tiles, which
// the points stage in two l1 buffers in turn (two writers), stay in the loop. The lowered conv
// matches the graph interpreter on davinci and tensorcore.
// RUN: ziggurat-opt %s -p 'graph-fuse,graph-to-tile,tile-and-fuse{machine=davinci},tile-decompose-conv,tile-vectorize{machine=davinci},canonicalize,tile-to-loop{machine=davinci},loop-promote-to-memory-space{machine=davinci},loop-stage-reduction' | filecheck %s
// RUN: ziggurat-run %s --outputs %t.graph.npz
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=davinci}' | ziggurat-run - --machine davinci --expect %t.graph.npz | filecheck %s --check-prefix=NUMERICS
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=tensorcore}' | ziggurat-run - --machine tensorcore --expect %t.graph.npz | filecheck %s --check-prefix=NUMERICS

// CHECK-LABEL: func.func @main
// CHECK:         %[[FIRST:.*]] = memref.alloc() : memref<1x64x6x18xf16, "l1">
// CHECK:         %[[LAST:.*]] = memref.alloc() : memref<1x64x6x18xf16, "l1">
// CHECK:         %[[ROWS:.*]] = memref.subview %x[0, 0, 0, 0] [1, 64, 5, 16] [1, 1, 1, 1]
// CHECK-NEXT:    loop.copy %[[ROWS]] -> %[[FIRST]] {pad = array<i64: 0, 0, 0, 0, 1, 0, 1, 1>
// CHECK-NEXT:    scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      memref.subview %[[FIRST]][0, %[[C]], 0, 0] [1, 16, 6, 18] [1, 1, 1, 1]
// CHECK:           loop.copy_async %{{.*}} -> %{{.*}} : memref<32x16xf16, strided<[576, 9], offset: ?>, "gm"> -> memref<32x16xf16, "l1">
// CHECK:         %[[ROWS2:.*]] = memref.subview %x[0, 0, 3, 0] [1, 64, 5, 16] [1, 1, 1, 1]
// CHECK-NEXT:    loop.copy %[[ROWS2]] -> %[[LAST]] {pad = array<i64: 0, 0, 0, 0, 0, 1, 1, 1>
// CHECK-NEXT:    scf.for %[[C2:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      memref.subview %[[LAST]][0, %[[C2]], 0, 0] [1, 16, 6, 18] [1, 1, 1, 1]
// NUMERICS:     result0: {{.*}}  ok{{$}}
func.func @main(%x: tensor<1x64x8x16xf16>, %w: tensor<32x64x3x3xf16>) -> tensor<1x32x8x16xf16> {
  %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, tile.sizes = array<i64: 1, 32, 4, 16, 16, 3, 3>, tile.stage_reduction} : (tensor<1x64x8x16xf16>, tensor<32x64x3x3xf16>) -> tensor<1x32x8x16xf16>
  func.return %y : tensor<1x32x8x16xf16>
}
