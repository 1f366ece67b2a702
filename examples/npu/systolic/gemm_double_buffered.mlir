// C = A @ B on the systolic preset (SCALE-Sim's default 32x32 output-stationary array):
// A 128x512 i8, B 512x128 i8, C 128x128 i32, double-buffered.
//
// The same pipeline as gemm_single_buffered.mlir, with two buffers per operand in the ifmap
// and filter scratchpads and the loop body unrolled into two stages (ping: buffers [0] and
// event ids 0; pong: buffers [1] and event ids 1), as SCALE-Sim's double-buffered scratchpads
// work: the load engine fetches the next K tile into one half while the array works on the
// other, so the array waits only for DRAM bandwidth, not for each load to start.
module attributes {npu.machine = "systolic"} {
  func.func @main(%A: memref<128x512xi8, "dram">, %B: memref<512x128xi8, "dram">, %C: memref<128x128xi32, "dram">) {
    %c0 = arith.constant 0 : index
    %c128 = arith.constant 128 : index
    %c256 = arith.constant 256 : index
    %c512 = arith.constant 512 : index
    %a = npu.buffer offset 0 : memref<2x128x128xi8, "ifmap">
    %b = npu.buffer offset 0 : memref<2x128x128xi8, "filter">
    %c = npu.buffer offset 0 : memref<128x128xi32, "ofmap">
    // Both halves start free: the first "free again" wait of each stage consumes these.
    npu.set_flag "array" -> "load", 0
    npu.set_flag "array" -> "load", 1
    scf.for %k = %c0 to %c512 step %c256 {
      %k1 = arith.addi %k, %c128 : index
      // stage 0: K tile %k, buffers [0], event id 0
      npu.wait_flag "array" -> "load", 0
      npu.dma "load" %A[0, %k] -> %a[0, 0, 0] {shape = array<i64: 128, 128>} : memref<128x512xi8, "dram"> -> memref<2x128x128xi8, "ifmap">
      npu.dma "load" %B[%k, 0] -> %b[0, 0, 0] {shape = array<i64: 128, 128>} : memref<512x128xi8, "dram"> -> memref<2x128x128xi8, "filter">
      npu.set_flag "load" -> "array", 0
      npu.wait_flag "load" -> "array", 0
      %first = arith.cmpi eq, %k, %c0 : index
      scf.if %first {
        npu.mma %a[0, 0, 0], %b[0, 0, 0] -> %c[0, 0] {m = 128 : i64, n = 128 : i64, k = 128 : i64} : memref<2x128x128xi8, "ifmap">, memref<2x128x128xi8, "filter"> -> memref<128x128xi32, "ofmap">
      } else {
        npu.mma %a[0, 0, 0], %b[0, 0, 0] -> %c[0, 0] {m = 128 : i64, n = 128 : i64, k = 128 : i64, accumulate} : memref<2x128x128xi8, "ifmap">, memref<2x128x128xi8, "filter"> -> memref<128x128xi32, "ofmap">
      }
      npu.set_flag "array" -> "load", 0
      // stage 1: K tile %k1, buffers [1], event id 1
      npu.wait_flag "array" -> "load", 1
      npu.dma "load" %A[0, %k1] -> %a[1, 0, 0] {shape = array<i64: 128, 128>} : memref<128x512xi8, "dram"> -> memref<2x128x128xi8, "ifmap">
      npu.dma "load" %B[%k1, 0] -> %b[1, 0, 0] {shape = array<i64: 128, 128>} : memref<512x128xi8, "dram"> -> memref<2x128x128xi8, "filter">
      npu.set_flag "load" -> "array", 1
      npu.wait_flag "load" -> "array", 1
      npu.mma %a[1, 0, 0], %b[1, 0, 0] -> %c[0, 0] {m = 128 : i64, n = 128 : i64, k = 128 : i64, accumulate} : memref<2x128x128xi8, "ifmap">, memref<2x128x128xi8, "filter"> -> memref<128x128xi32, "ofmap">
      npu.set_flag "array" -> "load", 1
    }
    // Consume the last "free again" flags so every set has its wait.
    npu.wait_flag "array" -> "load", 0
    npu.wait_flag "array" -> "load", 1
    npu.set_flag "array" -> "store", 0
    npu.wait_flag "array" -> "store", 0
    npu.dma "store" %c[0, 0] -> %C[0, 0] {shape = array<i64: 128, 128>} : memref<128x128xi32, "ofmap"> -> memref<128x128xi32, "dram">
    func.return
  }
}
