// loop-stage-reduction: the matmul's K loop (4 steps of 64) staged its lhs and rhs slices through l1
// one step at a time; with `tile.stage_reduction` on the root, each operand's slices of all four
// steps are copied into one l1 buffer before the loop, and each step copies its slice of that
// buffer on to l0a/l0b. The lowered matmul matches the graph interpreter on davinci (l1) and on
// tensorcore (smem).
// RUN: ziggurat-opt %s -p 'graph-fuse,graph-to-tile,tile-and-fuse{machine=davinci},tile-vectorize{machine=davinci},canonicalize,tile-to-loop{machine=davinci},loop-promote-to-memory-space{machine=davinci},loop-stage-reduction' | filecheck %s
// RUN: ziggurat-run %s --outputs %t.graph.npz
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=davinci}' | ziggurat-run - --machine davinci --expect %t.graph.npz | filecheck %s --check-prefix=NUMERICS
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=tensorcore}' | ziggurat-run - --machine tensorcore --expect %t.graph.npz | filecheck %s --check-prefix=NUMERICS

// CHECK-LABEL: func.func @main
// CHECK-DAG:     %[[A:.*]] = memref.alloc() : memref<64x256xf16, "l1">
// CHECK-DAG:     %[[B:.*]] = memref.alloc() : memref<256x64xf16, "l1">
// CHECK-NOT:     memref.alloc() : memref<64x64xf16, "l1">
// CHECK:         %[[AV:.*]] = memref.subview %a[0, 0] [64, 256] [1, 1] : memref<64x256xf16, "gm"> to memref<64x256xf16, strided<[256, 1]>, "gm">
// CHECK-NEXT:    %[[AT:.*]] = loop.copy_async %[[AV]] -> %[[A]]
// CHECK-NEXT:    loop.wait %[[AT]]
// CHECK-NEXT:    %[[BV:.*]] = memref.subview %b[0, 0] [256, 64] [1, 1] : memref<256x64xf16, "gm"> to memref<256x64xf16, strided<[64, 1]>, "gm">
// CHECK-NEXT:    %[[BT:.*]] = loop.copy_async %[[BV]] -> %[[B]]
// CHECK-NEXT:    loop.wait %[[BT]]
// CHECK-NEXT:    scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NOT:       "gm"> -> memref<64x64xf16, "l1">
// CHECK:           %[[AS:.*]] = memref.subview %[[A]][0, %[[K]]] [64, 64] [1, 1] : memref<64x256xf16, "l1"> to memref<64x64xf16, strided<[256, 1], offset: ?>, "l1">
// CHECK-NEXT:      loop.copy_async %[[AS]] -> %{{.*}} : memref<64x64xf16, strided<[256, 1], offset: ?>, "l1"> -> memref<64x64xf16, "l0a">
// CHECK:           %[[BS:.*]] = memref.subview %[[B]][%[[K]], 0] [64, 64] [1, 1] : memref<256x64xf16, "l1"> to memref<64x64xf16, strided<[64, 1], offset: ?>, "l1">
// CHECK-NEXT:      loop.copy_async %[[BS]] -> %{{.*}} : memref<64x64xf16, strided<[64, 1], offset: ?>, "l1"> -> memref<64x64xf16, "l0b">
// CHECK:           linalg.generic
// NUMERICS:     result0: {{.*}}  ok{{$}}
func.func @main(%a: tensor<64x256xf16>, %b: tensor<256x64xf16>) -> tensor<64x64xf16> {
  %c = graph.matmul %a, %b {tile.sizes = array<i64: 64, 64, 64>, tile.stage_reduction} : (tensor<64x256xf16>, tensor<256x64xf16>) -> tensor<64x64xf16>
  func.return %c : tensor<64x64xf16>
}
