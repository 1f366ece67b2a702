// C = A @ B on the systolic preset (SCALE-Sim's default 32x32 output-stationary array):
// A 128x512 i8, B 512x128 i8, C 128x128 i32.
//
// K is walked in 128-wide tiles with one buffer per operand: the load engine brings the tiles
// of A into the ifmap scratchpad and of B into the filter scratchpad, the array accumulates
// C in the ofmap scratchpad (each 128x128x128 npu.mma is 4x4 folds of 32x32 outputs), and the
// store engine writes C back at the end. Flags order the pipes both ways: forward ("the tiles
// are loaded") and back ("the scratchpads are free again"), so the load of tile k+1 waits for
// the array to finish tile k. Compare gemm_double_buffered.mlir.
module attributes {npu.machine = "systolic"} {
  func.func @main(%A: memref<128x512xi8, "dram">, %B: memref<512x128xi8, "dram">, %C: memref<128x128xi32, "dram">) {
    %c0 = arith.constant 0 : index
    %c128 = arith.constant 128 : index
    %c512 = arith.constant 512 : index
    %a = npu.buffer offset 0 : memref<128x128xi8, "ifmap">
    %b = npu.buffer offset 0 : memref<128x128xi8, "filter">
    %c = npu.buffer offset 0 : memref<128x128xi32, "ofmap">
    // The scratchpads start free: the first iteration's "free again" wait consumes this.
    npu.set_flag "array" -> "load", 0
    scf.for %k = %c0 to %c512 step %c128 {
      npu.wait_flag "array" -> "load", 0
      npu.dma "load" %A[0, %k] -> %a[0, 0] {shape = array<i64: 128, 128>} : memref<128x512xi8, "dram"> -> memref<128x128xi8, "ifmap">
      npu.dma "load" %B[%k, 0] -> %b[0, 0] {shape = array<i64: 128, 128>} : memref<512x128xi8, "dram"> -> memref<128x128xi8, "filter">
      npu.set_flag "load" -> "array", 0
      npu.wait_flag "load" -> "array", 0
      %first = arith.cmpi eq, %k, %c0 : index
      scf.if %first {
        npu.mma %a[0, 0], %b[0, 0] -> %c[0, 0] {m = 128 : i64, n = 128 : i64, k = 128 : i64} : memref<128x128xi8, "ifmap">, memref<128x128xi8, "filter"> -> memref<128x128xi32, "ofmap">
      } else {
        npu.mma %a[0, 0], %b[0, 0] -> %c[0, 0] {m = 128 : i64, n = 128 : i64, k = 128 : i64, accumulate} : memref<128x128xi8, "ifmap">, memref<128x128xi8, "filter"> -> memref<128x128xi32, "ofmap">
      }
      npu.set_flag "array" -> "load", 0
    }
    // Consume the last "free again" flag so every set has its wait.
    npu.wait_flag "array" -> "load", 0
    npu.set_flag "array" -> "store", 0
    npu.wait_flag "array" -> "store", 0
    npu.dma "store" %c[0, 0] -> %C[0, 0] {shape = array<i64: 128, 128>} : memref<128x128xi32, "ofmap"> -> memref<128x128xi32, "dram">
    func.return
  }
}
