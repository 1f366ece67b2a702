// Removing a npu.wait_flag from the double-buffered GEMM lets MTE1 read an L1 tile MTE2 may
// still be writing: the run stops with a hazard at the reading op, not with wrong numbers.
// RUN: sed '0,/npu.wait_flag "mte2" -> "mte1", 0/{//d;}' %examples/npu/gemm_double_buffered.mlir > %t.mlir
// RUN: not ziggurat-run %t.mlir --machine davinci --report text > %t.stdout 2> %t.stderr
// RUN: filecheck %s --input-file=%t.stderr
// RUN: filecheck %s --input-file=%t.stdout --check-prefix=NO-REPORT --allow-empty

// CHECK:      {{.*}}.mlir:[[#LINE:]]:7: error: npu.dma on pipe 'mte1' reads 'l1' bytes [{{[0-9]+}}, {{[0-9]+}}) while npu.dma on pipe 'mte2' may still be writing bytes {{.*}}: nothing orders them
// CHECK-NEXT: npu.dma "mte1" %a1[0, 0, 0] -> %a0[0, 0, 0]
// CHECK-NEXT: ^
// CHECK-NEXT: {{.*}}.mlir:{{[0-9]+}}:7: note: the earlier access on pipe 'mte2'
// CHECK-NEXT: npu.dma "mte2" %A
// CHECK-NOT:  Traceback

// NO-REPORT-NOT: {{.}}
