// A conv's window points each read their own weight tile. Here the loop walks input channels,
// so the tiles change every iteration (nothing to hoist); the points stage them in two l1
// buffers in turn, which conv tile sizes budget for (room for every point's weights): with
// one buffer, loading point p+1's weights from global memory would wait for point p's copy
// to l0a, and global-memory loads and matrix instructions would take turns instead of
// overlapping. The lowered conv matches the graph interpreter on davinci, and on tensorcore
// (smem staging, where the tile sizes leave less room).
// RUN: ziggurat-opt %s -p 'graph-fuse,graph-to-tile,tile-and-fuse{machine=davinci},tile-decompose-conv,tile-vectorize{machine=davinci},canonicalize,tile-to-loop{machine=davinci},loop-promote-to-memory-space{machine=davinci},loop-hoist-copies' | filecheck %s
// RUN: ziggurat-run %s --outputs %t.graph.npz
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=davinci}' | ziggurat-run - --machine davinci --expect %t.graph.npz | filecheck %s --check-prefix=NUMERICS
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=tensorcore}' | ziggurat-run - --machine tensorcore --expect %t.graph.npz | filecheck %s --check-prefix=NUMERICS

// CHECK-LABEL: func.func @main
// CHECK:         %[[PING:.*]] = memref.alloc() : memref<16x16xf16, "l1">
// CHECK:         %[[PONG:.*]] = memref.alloc() : memref<16x16xf16, "l1">
// CHECK-NOT:     memref.alloc() : memref<16x16xf16, "l1">
// CHECK:         scf.for
// CHECK:         loop.copy_async %{{.*}} -> %[[PING]] : memref<16x16xf16, strided{{.*}}, "l1">
// CHECK:         loop.copy_async %{{.*}} -> %[[PONG]] : memref<16x16xf16, strided{{.*}}, "l1">
// CHECK:         loop.copy_async %{{.*}} -> %[[PING]] : memref<16x16xf16, strided{{.*}}, "l1">
// CHECK:         loop.copy_async %{{.*}} -> %[[PONG]] : memref<16x16xf16, strided{{.*}}, "l1">
// CHECK:         loop.copy_async %{{.*}} -> %[[PING]] : memref<16x16xf16, strided{{.*}}, "l1">
// CHECK:         loop.copy_async %{{.*}} -> %[[PONG]] : memref<16x16xf16, strided{{.*}}, "l1">
// CHECK:         loop.copy_async %{{.*}} -> %[[PING]] : memref<16x16xf16, strided{{.*}}, "l1">
// CHECK:         loop.copy_async %{{.*}} -> %[[PONG]] : memref<16x16xf16, strided{{.*}}, "l1">
// CHECK:         loop.copy_async %{{.*}} -> %[[PING]] : memref<16x16xf16, strided{{.*}}, "l1">
// CHECK-NOT:     "gm"> -> memref<16x16xf16, "l1">
// CHECK:         func.return
// NUMERICS:     result0: {{.*}}  ok{{$}}
func.func @main(%x: tensor<1x32x6x16xf16>, %w: tensor<16x32x3x3xf16>) -> tensor<1x16x6x16xf16> {
  %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, tile.sizes = array<i64: 1, 16, 6, 16, 16, 3, 3>} : (tensor<1x32x6x16xf16>, tensor<16x32x3x3xf16>) -> tensor<1x16x6x16xf16>
  func.return %y : tensor<1x16x6x16xf16>
}
