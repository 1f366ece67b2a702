// The example kernels of the tensorcore preset on its machine model: --report text gives
// their cycles, pipe utilization, bytes per memory level and the roof that binds.
// RUN: ziggurat-run %examples/npu/tensorcore/gemm_single_buffered.mlir --machine tensorcore --report text | filecheck %s --check-prefixes=GEMM,SINGLE
// RUN: ziggurat-run %examples/npu/tensorcore/gemm_double_buffered.mlir --machine tensorcore --report text | filecheck %s --check-prefixes=GEMM,DOUBLE
// RUN: ziggurat-run %examples/npu/tensorcore/elementwise_reduce.mlir --machine tensorcore --report text | filecheck %s --check-prefix=SOFTMAX

// GEMM:        machine tensorcore: 1 core(s) run, 1 of 108 sharing global memory, 1.41 GHz
// SINGLE-NEXT: total {{ +}}12,153 cycles
// DOUBLE-NEXT: total {{ +}}10,310 cycles
// 128*128*512 MACs at 1,024 per cycle; double buffering hides cp.async and ldmatrix behind them.
// SINGLE-NEXT: roofline {{ +}}8,192 cycles  bound by compute, 67.4% achieved
// DOUBLE-NEXT: roofline {{ +}}8,192 cycles  bound by compute, 79.5% achieved
// GEMM-NEXT:   throughput {{ +}}16,777,216 FLOP
// GEMM:        cp_async {{ +}}4,416
// GEMM-NEXT:   ldmatrix {{ +}}2,112
// GEMM-NEXT:   st {{ +}}1,028
// 8 K tiles of 32 + 128*128*64/1,024 cycles.
// SINGLE-NEXT: mma {{ +}}8,448 {{ +}}69.5%
// DOUBLE-NEXT: mma {{ +}}8,448 {{ +}}81.9%
// GEMM-NEXT:   simt {{ +}}0 {{ +}}0.0%
// GEMM:        memory {{ +}}bytes read {{ +}}bytes written
// GEMM-NEXT:   gm {{ +}}262,144 {{ +}}65,536
// GEMM-NEXT:   rf {{ +}}786,432 {{ +}}786,432
// GEMM-NEXT:   smem {{ +}}262,144 {{ +}}262,144

// SOFTMAX:      total {{ +}}4,199 cycles
// SOFTMAX-NEXT: roofline {{ +[0-9,]+}} cycles  bound by global memory
// SOFTMAX:      mma {{ +}}0 {{ +}}0.0%
// SOFTMAX-NEXT: simt {{ +}}2,880 {{ +}}68.6% {{ +}}290
// SOFTMAX:      gm {{ +}}32,768 {{ +}}32,768
// SOFTMAX-NEXT: rf {{ +[0-9,]+ +[0-9,]+$}}
// SOFTMAX-NEXT: smem {{ +}}32,768 {{ +}}32,768
// SOFTMAX-NOT:  {{.}}
