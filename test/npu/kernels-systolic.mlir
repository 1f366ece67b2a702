// The example kernels of the systolic preset on its machine model: --report text gives
// their cycles, pipe utilization, bytes per memory level and the roof that binds.
// RUN: ziggurat-run %examples/npu/systolic/gemm_single_buffered.mlir --machine systolic --report text | filecheck %s --check-prefixes=GEMM,SINGLE
// RUN: ziggurat-run %examples/npu/systolic/gemm_double_buffered.mlir --machine systolic --report text | filecheck %s --check-prefixes=GEMM,DOUBLE
// RUN: ziggurat-run %examples/npu/systolic/elementwise_reduce.mlir --machine systolic --report text | filecheck %s --check-prefix=SOFTMAX

// GEMM:        machine systolic: 1 core(s) run, 1 of 1 sharing global memory, 1 GHz
// Single-buffered, each K tile loads (32 KiB at 10 B/cycle: 3,277 cycles) then computes
// (3,040); double-buffered, the loads run back to back under the array.
// SINGLE-NEXT: total {{ +}}31,831 cycles
// DOUBLE-NEXT: total {{ +}}22,714 cycles
// 128 KiB of A and B read at 10 B/cycle bind, not the 1,024 MACs/cycle.
// SINGLE-NEXT: roofline {{ +}}13,107 cycles  bound by global memory, 41.2% achieved
// DOUBLE-NEXT: roofline {{ +}}13,107 cycles  bound by global memory, 57.7% achieved
// GEMM-NEXT:   throughput {{ +}}16,777,216 FLOP
// GEMM:        load {{ +}}13,107
// GEMM-NEXT:   store {{ +}}6,554
// 4 K tiles x 4 x 4 output-stationary folds of 32 + 32 + 128 - 2 cycles.
// SINGLE-NEXT: array {{ +}}12,160 {{ +}}38.2%
// DOUBLE-NEXT: array {{ +}}12,160 {{ +}}53.5%
// GEMM-NEXT:   vector {{ +}}0 {{ +}}0.0%
// GEMM:        memory {{ +}}bytes read {{ +}}bytes written
// GEMM-NEXT:   dram {{ +}}131,072 {{ +}}65,536
// GEMM-NEXT:   filter {{ +}}65,536 {{ +}}65,536
// GEMM-NEXT:   ifmap {{ +}}65,536 {{ +}}65,536
// GEMM-NEXT:   ofmap {{ +}}262,144 {{ +}}262,144

// The softmax is the vector unit's: 8 f32 lanes a cycle, exp and div 8 times slower.
// SOFTMAX:      total {{ +}}29,796 cycles
// SOFTMAX-NEXT: roofline {{ +}}3,277 cycles  bound by global memory, 11.0% achieved
// SOFTMAX:      array {{ +}}0 {{ +}}0.0%
// SOFTMAX-NEXT: vector {{ +}}23,232 {{ +}}78.0% {{ +}}354
// SOFTMAX:      dram {{ +}}32,768 {{ +}}32,768
// SOFTMAX-NEXT: ofmap {{ +[0-9,]+ +[0-9,]+$}}
// SOFTMAX-NOT:  {{.}}
