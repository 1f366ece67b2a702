// loop-distribute divides each fusion group's tile loop among the cores by npu.core_id and puts
// npu.sync_cores between the groups: 3 row tiles of 128 on 2 cores, core c takes tile c in a
// loop with static bounds and core 0 also the third, under scf.if. The second group reads
// the first group's output from global memory only after the barrier. With cores=1 nothing
// changes; compiled for 2 cores, the program gives the graph interpreter's result without a race.
// RUN: ziggurat-opt %s -p 'graph-fuse,graph-to-tile,tile-and-fuse{machine=davinci},tile-decompose-conv,tile-vectorize{machine=davinci},canonicalize,tile-to-loop{machine=davinci},loop-distribute{machine=davinci cores=2}' | filecheck %s
// RUN: ziggurat-opt %s -p 'graph-fuse,graph-to-tile,tile-and-fuse{machine=davinci},tile-decompose-conv,tile-vectorize{machine=davinci},canonicalize,tile-to-loop{machine=davinci}' -o %t.loop.mlir
// RUN: ziggurat-opt %t.loop.mlir -p 'loop-distribute{machine=davinci cores=1}' -o %t.one.mlir
// RUN: ziggurat-opt %t.loop.mlir -o %t.none.mlir
// RUN: diff %t.one.mlir %t.none.mlir
// RUN: ziggurat-run %s --outputs %t.graph.npz
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=davinci cores=2}' | ziggurat-run - --machine davinci --cores 2 --expect %t.graph.npz | filecheck %s --check-prefix=NUMBERS

// CHECK:       func.func @main
// CHECK-NEXT:    %[[CORE:.*]] = npu.core_id
// CHECK:         %[[START:.*]] = arith.muli %[[CORE]], %{{.*}} : index
// CHECK-NEXT:    %[[FIRST:.*]] = arith.addi %[[START]], %{{.*}} : index
// CHECK-NEXT:    %[[LB:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[UB:.*]] = arith.constant 128 : index
// CHECK-NEXT:    scf.for %[[J:.*]] = %[[LB]] to %[[UB]] step %{{.*}} {
// CHECK-NEXT:      %[[I:.*]] = arith.addi %[[J]], %[[FIRST]] : index
// CHECK:             memref.subview %a[%[[I]], %{{.*}}] [128, 64]
// CHECK:           memref.subview %{{.*}}[%[[I]], 0] [128, 256]
// The third tile (rows 256..383) on core 0: row 256 + 128 c for c < 1.
// CHECK:         %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[STEP:.*]] = arith.constant 128 : index
// CHECK-NEXT:    %[[BASE:.*]] = arith.constant 256 : index
// CHECK-NEXT:    %[[TAKES:.*]] = arith.cmpi ult, %[[CORE]], %[[ONE]] : index
// CHECK-NEXT:    %[[SCALED:.*]] = arith.muli %[[CORE]], %[[STEP]] : index
// CHECK-NEXT:    %[[LAST:.*]] = arith.addi %[[SCALED]], %[[BASE]] : index
// CHECK-NEXT:    scf.if %[[TAKES]] {
// CHECK:             memref.subview %a[%[[LAST]], %{{.*}}] [128, 64]
// CHECK:         npu.sync_cores
// CHECK:         scf.for
// CHECK:         scf.if
// CHECK-NOT:     npu.sync_cores
// CHECK:         func.return

// NUMBERS: result0: float16[384, 256] {{.*}} ok{{$}}

func.func @main(%a: tensor<384x512xf16>, %b: tensor<512x256xf16>, %c: tensor<256x256xf16>) -> tensor<384x256xf16> {
  %m = graph.matmul %a, %b : (tensor<384x512xf16>, tensor<512x256xf16>) -> tensor<384x256xf16>
  %r = graph.relu %m : tensor<384x256xf16>
  %n = graph.matmul %r, %c : (tensor<384x256xf16>, tensor<256x256xf16>) -> tensor<384x256xf16>
  func.return %n : tensor<384x256xf16>
}
