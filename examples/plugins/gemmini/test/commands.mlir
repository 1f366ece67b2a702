// The gemm commands round-trip, verify against the gemmini machine, and run on ziggurat's
// machine model with the plugin's semantics: every pipe of the machine does its part.
// RUN: ziggurat-opt %s | ziggurat-opt | filecheck %s --check-prefix=ROUNDTRIP
// RUN: ziggurat-run %s --report text | filecheck %s --check-prefix=REPORT

// ROUNDTRIP: gemm.load %A[0, 0] -> %a[0, 0] {rows = 32 : i64, cols = 32 : i64}
// ROUNDTRIP: gemm.compute %a[0, 0], %b[0, 0] -> %c[0, 0] {m = 32 : i64, n = 32 : i64, k = 32 : i64}
// ROUNDTRIP: gemm.alu "relu" %c[0, 0] -> %c[0, 0] {rows = 32 : i64, cols = 32 : i64}
// ROUNDTRIP: gemm.store %c[0, 0] -> %C[0, 0]

// REPORT: machine gemmini
// REPORT: throughput 66,560 FLOP
// REPORT-DAG: load {{ +}}[[#]] {{.*}} 3
// REPORT-DAG: ex {{ +}}[[#]] {{.*}} 3
// REPORT-DAG: alu {{ +}}[[#]] {{.*}} 3
// REPORT-DAG: store {{ +}}[[#]] {{.*}} 2
module attributes {npu.machine = "gemmini"} {
  func.func @main(%A: memref<32x32xf16, "dram">, %B: memref<32x32xf16, "dram">, %C: memref<32x32xf16, "dram">) {
    %a = npu.buffer offset 0 : memref<32x32xf16, "spad">
    %b = npu.buffer offset 2048 : memref<32x32xf16, "spad">
    %c = npu.buffer offset 0 : memref<32x32xf32, "acc">
    gemm.load %A[0, 0] -> %a[0, 0] {rows = 32 : i64, cols = 32 : i64} : memref<32x32xf16, "dram"> -> memref<32x32xf16, "spad">
    gemm.load %B[0, 0] -> %b[0, 0] {rows = 32 : i64, cols = 32 : i64} : memref<32x32xf16, "dram"> -> memref<32x32xf16, "spad">
    npu.set_flag "load" -> "ex", 0
    npu.wait_flag "load" -> "ex", 0
    gemm.compute %a[0, 0], %b[0, 0] -> %c[0, 0] {m = 32 : i64, n = 32 : i64, k = 32 : i64} : memref<32x32xf16, "spad">, memref<32x32xf16, "spad"> -> memref<32x32xf32, "acc">
    npu.set_flag "ex" -> "alu", 0
    npu.wait_flag "ex" -> "alu", 0
    gemm.alu "relu" %c[0, 0] -> %c[0, 0] {rows = 32 : i64, cols = 32 : i64} : memref<32x32xf32, "acc"> -> memref<32x32xf32, "acc">
    npu.set_flag "alu" -> "store", 0
    npu.wait_flag "alu" -> "store", 0
    gemm.store %c[0, 0] -> %C[0, 0] {rows = 32 : i64, cols = 32 : i64} : memref<32x32xf32, "acc"> -> memref<32x32xf16, "dram">
    func.return
  }
}
