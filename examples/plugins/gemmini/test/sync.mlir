// ziggurat's npu-insert-sync orders the plugin's commands: they declare their pipe and the
// tiles they read and write, so the flags come from the dependences between the queues.
// RUN: ziggurat-opt %s -p 'npu-insert-sync{machine=gemmini}' | filecheck %s
// RUN: ziggurat-opt %s -p 'npu-insert-sync{machine=gemmini}' | ziggurat-run - --report text | filecheck %s --check-prefix=REPORT

// CHECK:      gemm.load %B
// CHECK-NEXT: npu.set_flag "load" -> "ex", [[E:[0-9]+]]
// CHECK-NEXT: npu.wait_flag "load" -> "ex", [[E]]
// CHECK-NEXT: gemm.compute
// CHECK-NEXT: npu.set_flag "ex" -> "alu"
// CHECK-NEXT: npu.wait_flag "ex" -> "alu"
// CHECK-NEXT: gemm.alu
// CHECK-NEXT: npu.set_flag "alu" -> "store"
// CHECK-NEXT: npu.wait_flag "alu" -> "store"
// CHECK-NEXT: gemm.store

// Without the flags the run would report a hazard; with them it completes.
// REPORT: machine gemmini
module attributes {npu.machine = "gemmini"} {
  func.func @main(%A: memref<32x32xf16, "dram">, %B: memref<32x32xf16, "dram">, %C: memref<32x32xf16, "dram">) {
    %a = npu.buffer offset 0 : memref<32x32xf16, "spad">
    %b = npu.buffer offset 2048 : memref<32x32xf16, "spad">
    %c = npu.buffer offset 0 : memref<32x32xf32, "acc">
    gemm.load %A[0, 0] -> %a[0, 0] {rows = 32 : i64, cols = 32 : i64} : memref<32x32xf16, "dram"> -> memref<32x32xf16, "spad">
    gemm.load %B[0, 0] -> %b[0, 0] {rows = 32 : i64, cols = 32 : i64} : memref<32x32xf16, "dram"> -> memref<32x32xf16, "spad">
    gemm.compute %a[0, 0], %b[0, 0] -> %c[0, 0] {m = 32 : i64, n = 32 : i64, k = 32 : i64} : memref<32x32xf16, "spad">, memref<32x32xf16, "spad"> -> memref<32x32xf32, "acc">
    gemm.alu "relu" %c[0, 0] -> %c[0, 0] {rows = 32 : i64, cols = 32 : i64} : memref<32x32xf32, "acc"> -> memref<32x32xf32, "acc">
    gemm.store %c[0, 0] -> %C[0, 0] {rows = 32 : i64, cols = 32 : i64} : memref<32x32xf32, "acc"> -> memref<32x32xf16, "dram">
    func.return
  }
}
