// The hand-written programs in examples/npu parse, pass the davinci machine rules and round-trip.
// RUN: ziggurat-opt %examples/npu/gemm_single_buffered.mlir | ziggurat-opt | filecheck %s --check-prefix=SINGLE
// RUN: ziggurat-opt %examples/npu/gemm_double_buffered.mlir | ziggurat-opt | filecheck %s --check-prefix=DOUBLE
// RUN: ziggurat-opt %examples/npu/gemm_relu.mlir | ziggurat-opt | filecheck %s --check-prefix=RELU

// SINGLE: builtin.module attributes {npu.machine = "davinci"}
// SINGLE: scf.for %k = %c0 to %c512 step %c64 {
// SINGLE-NEXT: npu.wait_flag "mte1" -> "mte2", 0
// SINGLE-NEXT: npu.dma "mte2" %A[0, %k] -> %a1[0, 0] {shape = array<i64: 256, 64>}
// SINGLE: npu.mma %a0[0, 0], %b0[0, 0] -> %c[0, 0] {m = 256 : i64, n = 256 : i64, k = 64 : i64, accumulate}
// SINGLE: npu.dma "fixpipe" %c[0, 0] -> %C[0, 0]

// DOUBLE: scf.for %k = %c0 to %c512 step %c128 {
// DOUBLE: npu.dma "mte2" %A[0, %k0] -> %a1[0, 0, 0]
// DOUBLE: npu.dma "mte2" %A[0, %k1] -> %a1[1, 0, 0]
// DOUBLE: npu.mma %a0[1, 0, 0], %b0[1, 0, 0] -> %c[0, 0] {m = 256 : i64, n = 256 : i64, k = 64 : i64, accumulate}
// DOUBLE-NEXT: npu.set_flag "cube" -> "mte1", 1

// RELU: npu.dma "fixpipe" %c[0, 0] -> %y[0, 0] {shape = array<i64: 64, 64>} : memref<64x64xf32, "l0c"> -> memref<64x64xf16, "ub">
// RELU: npu.vec.relu %y[0, 0] -> %y[0, 0] {repeat = 32 : i64}
