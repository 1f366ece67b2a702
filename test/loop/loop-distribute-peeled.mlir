// A padded conv whose first and last row tiles tile-and-fuse peels into straight-line code (28 rows in
// tiles of 7 for 4 cores): loop-distribute gives each tile its own core, the peeled ones under their
// own scf.if, the middle loop's two iterations to the two cores next in turn, instead of running the
// whole group on one; the cores compute what the graph does.
// RUN: ziggurat-run %S/../npu/Inputs/conv-pad-gm.mlir --seed 1 --outputs %t.ref.npz
// RUN: ziggurat-opt %S/../npu/Inputs/conv-pad-gm.mlir -p 'graph-opt{machine=davinci},graph-fuse,graph-to-tile,tile-and-fuse{machine=davinci cores=4},tile-decompose-conv,tile-vectorize{machine=davinci},canonicalize,tile-to-loop{machine=davinci},loop-distribute{machine=davinci cores=4}' | filecheck %s
// RUN: ziggurat-opt %S/../npu/Inputs/conv-pad-gm.mlir -p 'compile{machine=davinci cores=4}' | ziggurat-run - --seed 1 --expect %t.ref.npz --report text | filecheck %s --check-prefix=RAN

// CHECK:      %[[CORE:.*]] = npu.core_id
// CHECK:      %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[ON0:.*]] = arith.cmpi eq, %[[CORE]], %[[C0]] : index
// CHECK-NEXT: scf.if %[[ON0]] {
// CHECK:        loop.copy
// The middle rows: iteration r on core 1 + r, r = (core + 3) mod 4 < 2.
// CHECK:      %[[BACK:.*]] = arith.constant 3 : index
// CHECK-NEXT: %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-NEXT: %[[SHIFTED:.*]] = arith.addi %[[CORE]], %[[BACK]] : index
// CHECK-NEXT: %[[RANK:.*]] = arith.remui %[[SHIFTED]], %[[FOUR]] : index
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2 : index
// CHECK:      arith.cmpi ult, %[[RANK]], %[[TWO]] : index
// CHECK:      scf.if
// The last rows on core 3.
// CHECK:      %[[C3:.*]] = arith.constant 3 : index
// CHECK-NEXT: %[[ON3:.*]] = arith.cmpi eq, %[[CORE]], %[[C3]] : index
// CHECK-NEXT: scf.if %[[ON3]] {

// Every core moves data: none sits idle.
// RAN:        result0: {{.*}} ok
// RAN:        per core       min    mean     max
// RAN-NEXT:   mte2 {{ +[1-9][0-9]?\.[0-9]%}}
