builtin.module {
  func.func @main(%a: memref<64x32xf16, "dram">, %b: memref<32x16xf16, "dram">, %result0: memref<64x16xf16, "dram">) {
    %0 = npu.buffer offset 0 : memref<64x16xf32, "acc">
    %1 = npu.buffer offset 0 : memref<64x16xf16, "dram">
    %2 = npu.buffer offset 0 : memref<64x32xf16, "spad">
    %3 = npu.buffer offset 4096 : memref<32x16xf16, "spad">
    %4 = npu.buffer offset 4096 : memref<64x16xf16, "acc">
    %5 = npu.buffer offset 6144 : memref<64x16xf16, "acc">
    gemm.load %a[0, 0] -> %2[0, 0] {rows = 64 : i64, cols = 32 : i64} : memref<64x32xf16, "dram"> -> memref<64x32xf16, "spad">
    gemm.load %b[0, 0] -> %3[0, 0] {rows = 32 : i64, cols = 16 : i64} : memref<32x16xf16, "dram"> -> memref<32x16xf16, "spad">
    npu.set_flag "load" -> "ex", 0
    npu.wait_flag "load" -> "ex", 0
    gemm.compute %2[0, 0], %3[0, 0] -> %0[0, 0] {m = 64 : i64, n = 16 : i64, k = 32 : i64} : memref<64x32xf16, "spad">, memref<32x16xf16, "spad"> -> memref<64x16xf32, "acc">
    npu.set_flag "ex" -> "store", 0
    npu.wait_flag "ex" -> "store", 0
    gemm.store %0[0, 0] -> %1[0, 0] {rows = 64 : i64, cols = 16 : i64} : memref<64x16xf32, "acc"> -> memref<64x16xf16, "dram">
    npu.set_flag "store" -> "load", 0
    npu.wait_flag "store" -> "load", 0
    gemm.load %1[0, 0] -> %4[0, 0] {rows = 64 : i64, cols = 16 : i64} : memref<64x16xf16, "dram"> -> memref<64x16xf16, "acc">
    npu.set_flag "load" -> "alu", 0
    npu.wait_flag "load" -> "alu", 0
    gemm.alu "relu" %4[0, 0] -> %5[0, 0] {rows = 64 : i64, cols = 16 : i64} : memref<64x16xf16, "acc"> -> memref<64x16xf16, "acc">
    npu.set_flag "alu" -> "store", 0
    npu.wait_flag "alu" -> "store", 0
    gemm.store %5[0, 0] -> %result0[0, 0] {rows = 64 : i64, cols = 16 : i64} : memref<64x16xf16, "acc"> -> memref<64x16xf16, "dram">
    func.return
  }
}

