// A padded conv whose four row tiles tile-and-fuse peels into straight-line code (28 rows in
// tiles of 8 for 4 cores): loop-distribute gives each tile its own core, under its own scf.if,
// instead of running the whole group on one; the cores compute what the graph does.
// RUN: ziggurat-run %S/../npu/Inputs/conv-pad-gm.mlir --seed 1 --outputs %t.ref.npz
// RUN: ziggurat-opt %S/../npu/Inputs/conv-pad-gm.mlir -p 'graph-opt{machine=davinci},graph-fuse,graph-to-tile,tile-and-fuse{machine=davinci cores=4},tile-decompose-conv,tile-vectorize{machine=davinci},canonicalize,tile-to-loop{machine=davinci},loop-distribute{machine=davinci cores=4}' | filecheck %s
// RUN: ziggurat-opt %S/../npu/Inputs/conv-pad-gm.mlir -p 'compile{machine=davinci cores=4}' | ziggurat-run - --seed 1 --expect %t.ref.npz --report text | filecheck %s --check-prefix=RAN

// CHECK:      %[[CORE:.*]] = npu.core_id
// CHECK:      %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[ON0:.*]] = arith.cmpi eq, %[[CORE]], %[[C0]] : index
// CHECK-NEXT: scf.if %[[ON0]] {
// CHECK:        loop.copy
// CHECK:      %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[ON1:.*]] = arith.cmpi eq, %[[CORE]], %[[C1]] : index
// CHECK-NEXT: scf.if %[[ON1]] {
// CHECK:      %[[C2:.*]] = arith.constant 2 : index
// CHECK:      scf.if
// CHECK:      %[[C3:.*]] = arith.constant 3 : index
// CHECK:      scf.if

// Every core moves data: none sits idle.
// RAN:        result0: {{.*}} ok
// RAN:        per core       min    mean     max
// RAN-NEXT:   mte2 {{ +[1-9][0-9]?\.[0-9]%}}
