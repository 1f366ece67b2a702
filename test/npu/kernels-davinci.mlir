// The softmax example of the davinci preset on its machine model (the GEMMs' reports are
// checked in test/run/npu_gemm_report.mlir): cycles, vector utilization, bytes per level, roof.
// RUN: ziggurat-run %examples/npu/elementwise_reduce.mlir --machine davinci --report text | filecheck %s

// CHECK:      machine davinci: 1 core(s) run, 1 of 32 sharing global memory, 1 GHz
// CHECK-NEXT: total {{ +}}4,654 cycles
// 32 KiB each way through global memory; the vector unit's 4,032 cycles are what the run waits for.
// CHECK-NEXT: roofline {{ +}}27 cycles  bound by global memory, 0.6% achieved
// CHECK:      mte2 {{ +}}306
// CHECK:      mte3 {{ +}}306
// CHECK:      cube {{ +}}0 {{ +}}0.0%
// CHECK-NEXT: vector {{ +}}4,032 {{ +}}86.6% {{ +}}290
// CHECK:      gm {{ +}}32,768 {{ +}}32,768
// CHECK-NEXT: ub {{ +}}264,192 {{ +}}197,888
// CHECK-NOT:  {{.}}
