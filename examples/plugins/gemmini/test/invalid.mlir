// The machine's rules hold for plugin commands too.
// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics

module attributes {npu.machine = "gemmini"} {
  func.func @store_into_spad(%A: memref<16x16xf16, "dram">) {
    %a = npu.buffer offset 0 : memref<16x16xf16, "spad">
    // expected-error@+1 {{gemm.load cannot move spad -> dram on machine 'gemmini'}}
    gemm.load %a[0, 0] -> %A[0, 0] {rows = 16 : i64, cols = 16 : i64} : memref<16x16xf16, "spad"> -> memref<16x16xf16, "dram">
    func.return
  }
}

// -----

module attributes {npu.machine = "gemmini"} {
  func.func @compute_from_acc(%x: memref<16x16xf32, "acc">, %y: memref<16x16xf16, "spad">) {
    // expected-error@+1 {{gemm.compute operand A must be in 'spad'}}
    gemm.compute %x[0, 0], %y[0, 0] -> %x[0, 0] {m = 16 : i64, n = 16 : i64, k = 16 : i64} : memref<16x16xf32, "acc">, memref<16x16xf16, "spad"> -> memref<16x16xf32, "acc">
    func.return
  }
}

// -----

func.func @unknown_function(%x: memref<16x16xf32, "acc">) {
  // expected-error@+1 {{gemm.alu function must be one of relu, cast, got 'gelu'}}
  gemm.alu "gelu" %x[0, 0] -> %x[0, 0] {rows = 16 : i64, cols = 16 : i64} : memref<16x16xf32, "acc"> -> memref<16x16xf32, "acc">
  func.return
}
