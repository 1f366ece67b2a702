// The example GEMMs (C = A @ B, A 256x512 f16, B 512x256 f16, C f32) on the davinci
// machine model: --report text is the cost of the run, one line per pipe and memory space.
// RUN: ziggurat-run %examples/npu/gemm_single_buffered.mlir --machine davinci --report text | filecheck %s --check-prefixes=CHECK,SINGLE
// RUN: ziggurat-run %examples/npu/gemm_double_buffered.mlir --machine davinci --report text | filecheck %s --check-prefixes=CHECK,DOUBLE
// Without --machine the machine comes from the module's npu.machine attribute.
// RUN: ziggurat-run %examples/npu/gemm_double_buffered.mlir --report text | filecheck %s --check-prefixes=CHECK,DOUBLE

// The report replaces the summary of the outputs on stdout.
// CHECK-NOT:   memref<
// CHECK:       machine davinci: 1 core(s) run, 1 of [[#]] sharing global memory, [[#]] GHz
// CHECK-NEXT:  total {{ +}}[[CYCLES:[0-9,]+]] cycles {{ +}}[[#]].[[#]] us
// 256*256*512 MACs at the cube's 16x16x16 f16 MACs per cycle: 8,192 cycles, more than
// global memory needs for A, B and C, so compute is the roof that binds.
// CHECK-NEXT:  roofline {{ +}}8,192 cycles  bound by compute, {{[0-9]+\.[0-9]}}% achieved
// CHECK-NEXT:  throughput {{ +}}67,108,864 FLOP {{ +}}{{[0-9.]+}} TFLOP/s
// CHECK-EMPTY:
// CHECK-NEXT:  pipe {{ +}}busy cycles {{ +}}busy {{ +}}instructions
// CHECK-NEXT:  scalar {{ +}}{{[0-9,]+ +[0-9.]+% +[0-9,]+$}}
// CHECK-NEXT:  mte2 {{ +[0-9,]+ +[0-9.]+% +[0-9,]+$}}
// CHECK-NEXT:  mte1 {{ +[0-9,]+ +[0-9.]+% +[0-9,]+$}}
// CHECK-NEXT:  mte3 {{ +}}0 {{ +}}0.0% {{ +}}0
// CHECK-NEXT:  fixpipe {{ +[0-9,]+ +[0-9.]+% +[0-9,]+$}}
// SINGLE-NEXT: cube {{ +[0-9,]+ +6[0-9]\.[0-9]% +[0-9,]+$}}
// DOUBLE-NEXT: cube {{ +[0-9,]+ +[78][0-9]\.[0-9]% +[0-9,]+$}}
// CHECK-NEXT:  vector {{ +}}0 {{ +}}0.0% {{ +}}0
// CHECK-EMPTY:
// CHECK-NEXT:  memory {{ +}}bytes read {{ +}}bytes written
// A and B (2 x 256 KiB of f16) are read once from global memory; C (256 KiB of f32) is written once.
// CHECK-NEXT:  gm {{ +}}524,288 {{ +}}262,144
// CHECK-NEXT:  l0a {{ +}}262,144 {{ +}}262,144
// CHECK-NEXT:  l0b {{ +}}262,144 {{ +}}262,144
// CHECK-NEXT:  l0c {{ +[0-9,]+ +[0-9,]+$}}
// CHECK-NEXT:  l1 {{ +}}524,288 {{ +}}524,288
// CHECK-NOT:   {{.}}
