// loop-distribute, when the outer tile loop has fewer tiles than cores: a 256x512 matmul in
// 128x256 tiles has 2 row tiles and 2 column tiles, and 4 cores. The two parallel tile loops
// become one over the 4 tiles, row-major (tile f is row tile f / 2, column tile f % 2), which
// the cores split, one tile each. Compiled for 4 cores, the result is the graph
// interpreter's, without a race.
// RUN: ziggurat-opt %s -p 'graph-fuse,graph-to-tile,tile-and-fuse{machine=davinci},tile-decompose-conv,tile-vectorize{machine=davinci},canonicalize,tile-to-loop{machine=davinci},loop-distribute{machine=davinci cores=4}' | filecheck %s
// RUN: ziggurat-run %s --outputs %t.graph.npz
// RUN: ziggurat-opt %s -p 'compile{machine=davinci cores=4}' -o %t.npu.mlir
// RUN: ziggurat-run %t.npu.mlir --expect %t.graph.npz --report text | filecheck %s --check-prefix=NUMBERS

// CHECK:       builtin.module attributes {npu.cores = 4 : i64}
// CHECK:         %[[CORE:.*]] = npu.core_id
// CHECK:         %[[TOTAL:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[WIDTH:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[ROWS:.*]] = arith.constant 128 : index
// CHECK-NEXT:    %{{.*}} = arith.constant 0 : index
// CHECK-NEXT:    %[[COLUMNS:.*]] = arith.constant 256 : index
// CHECK:         %[[START:.*]] = arith.muli %[[CORE]], %{{.*}} : index
// CHECK-NEXT:    %[[FIRST:.*]] = arith.addi %[[START]], %{{.*}} : index
// CHECK:         scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %[[ONE]] {
// CHECK-NEXT:      %[[F:.*]] = arith.addi %[[J]], %[[FIRST]] : index
// CHECK-NEXT:      %[[ROW:.*]] = arith.divui %[[F]], %[[WIDTH]] : index
// CHECK-NEXT:      %[[COLUMN:.*]] = arith.remui %[[F]], %[[WIDTH]] : index
// CHECK-NEXT:      %[[R:.*]] = arith.muli %[[ROW]], %[[ROWS]] : index
// CHECK-NEXT:      %[[I:.*]] = arith.addi %[[R]], %{{.*}} : index
// CHECK-NEXT:      %[[C:.*]] = arith.muli %[[COLUMN]], %[[COLUMNS]] : index
// CHECK-NEXT:      %[[K:.*]] = arith.addi %[[C]], %{{.*}} : index
// CHECK:             memref.subview %a[%[[I]], %{{.*}}] [128, 64]
// CHECK:             memref.subview %b[%{{.*}}, %[[K]]] [64, 256]
// CHECK:           memref.subview %result0[%[[I]], %[[K]]] [128, 256]
// CHECK-NOT:     scf.if
// CHECK:         func.return

// NUMBERS:     result0: float16[256, 512] {{.*}} ok{{$}}
// NUMBERS:     machine davinci: 4 core(s) run

func.func @main(%a: tensor<256x128xf16>, %b: tensor<128x512xf16>) -> tensor<256x512xf16> {
  %m = graph.matmul %a, %b : (tensor<256x128xf16>, tensor<128x512xf16>) -> tensor<256x512xf16>
  func.return %m : tensor<256x512xf16>
}
