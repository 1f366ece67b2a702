// C = A @ B on one SM (the tensorcore preset): A 128x512 f16, B 512x128 f16, C 128x128 f32,
// double-buffered.
//
// The same pipeline as gemm_single_buffered.mlir, with two buffers per operand in shared
// memory and in registers and the loop body unrolled into two stages (ping: buffers [0] and
// event ids 0; pong: buffers [1] and event ids 1). cp.async fetches the next K tile into one
// buffer while ldmatrix and the tensor cores work on the other, as a multi-stage cp.async
// pipeline does on Ampere.
module attributes {npu.machine = "tensorcore"} {
  func.func @main(%A: memref<128x512xf16, "gm">, %B: memref<512x128xf16, "gm">, %C: memref<128x128xf32, "gm">) {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %c512 = arith.constant 512 : index
    %a1 = npu.buffer offset 0 : memref<2x128x64xf16, "smem">
    %b1 = npu.buffer offset 32768 : memref<2x64x128xf16, "smem">
    %a0 = npu.buffer offset 65536 : memref<2x128x64xf16, "rf">
    %b0 = npu.buffer offset 98304 : memref<2x64x128xf16, "rf">
    %c = npu.buffer offset 0 : memref<128x128xf32, "rf">
    // Shared-memory and register buffers start free: the first "free again" waits of each stage consume these.
    npu.set_flag "ldmatrix" -> "cp_async", 0
    npu.set_flag "ldmatrix" -> "cp_async", 1
    npu.set_flag "mma" -> "ldmatrix", 0
    npu.set_flag "mma" -> "ldmatrix", 1
    scf.for %k = %c0 to %c512 step %c128 {
      %k0 = arith.addi %k, %c0 : index
      %k1 = arith.addi %k, %c64 : index
      // stage 0: K tile %k0, buffers [0], event id 0
      npu.wait_flag "ldmatrix" -> "cp_async", 0
      npu.dma "cp_async" %A[0, %k0] -> %a1[0, 0, 0] {shape = array<i64: 128, 64>} : memref<128x512xf16, "gm"> -> memref<2x128x64xf16, "smem">
      npu.dma "cp_async" %B[%k0, 0] -> %b1[0, 0, 0] {shape = array<i64: 64, 128>} : memref<512x128xf16, "gm"> -> memref<2x64x128xf16, "smem">
      npu.set_flag "cp_async" -> "ldmatrix", 0
      npu.wait_flag "cp_async" -> "ldmatrix", 0
      npu.wait_flag "mma" -> "ldmatrix", 0
      npu.dma "ldmatrix" %a1[0, 0, 0] -> %a0[0, 0, 0] {shape = array<i64: 128, 64>} : memref<2x128x64xf16, "smem"> -> memref<2x128x64xf16, "rf">
      npu.dma "ldmatrix" %b1[0, 0, 0] -> %b0[0, 0, 0] {shape = array<i64: 64, 128>} : memref<2x64x128xf16, "smem"> -> memref<2x64x128xf16, "rf">
      npu.set_flag "ldmatrix" -> "cp_async", 0
      npu.set_flag "ldmatrix" -> "mma", 0
      npu.wait_flag "ldmatrix" -> "mma", 0
      %first = arith.cmpi eq, %k, %c0 : index
      scf.if %first {
        npu.mma %a0[0, 0, 0], %b0[0, 0, 0] -> %c[0, 0] {m = 128 : i64, n = 128 : i64, k = 64 : i64} : memref<2x128x64xf16, "rf">, memref<2x64x128xf16, "rf"> -> memref<128x128xf32, "rf">
      } else {
        npu.mma %a0[0, 0, 0], %b0[0, 0, 0] -> %c[0, 0] {m = 128 : i64, n = 128 : i64, k = 64 : i64, accumulate} : memref<2x128x64xf16, "rf">, memref<2x64x128xf16, "rf"> -> memref<128x128xf32, "rf">
      }
      npu.set_flag "mma" -> "ldmatrix", 0
      // stage 1: K tile %k1, buffers [1], event id 1
      npu.wait_flag "ldmatrix" -> "cp_async", 1
      npu.dma "cp_async" %A[0, %k1] -> %a1[1, 0, 0] {shape = array<i64: 128, 64>} : memref<128x512xf16, "gm"> -> memref<2x128x64xf16, "smem">
      npu.dma "cp_async" %B[%k1, 0] -> %b1[1, 0, 0] {shape = array<i64: 64, 128>} : memref<512x128xf16, "gm"> -> memref<2x64x128xf16, "smem">
      npu.set_flag "cp_async" -> "ldmatrix", 1
      npu.wait_flag "cp_async" -> "ldmatrix", 1
      npu.wait_flag "mma" -> "ldmatrix", 1
      npu.dma "ldmatrix" %a1[1, 0, 0] -> %a0[1, 0, 0] {shape = array<i64: 128, 64>} : memref<2x128x64xf16, "smem"> -> memref<2x128x64xf16, "rf">
      npu.dma "ldmatrix" %b1[1, 0, 0] -> %b0[1, 0, 0] {shape = array<i64: 64, 128>} : memref<2x64x128xf16, "smem"> -> memref<2x64x128xf16, "rf">
      npu.set_flag "ldmatrix" -> "cp_async", 1
      npu.set_flag "ldmatrix" -> "mma", 1
      npu.wait_flag "ldmatrix" -> "mma", 1
      npu.mma %a0[1, 0, 0], %b0[1, 0, 0] -> %c[0, 0] {m = 128 : i64, n = 128 : i64, k = 64 : i64, accumulate} : memref<2x128x64xf16, "rf">, memref<2x64x128xf16, "rf"> -> memref<128x128xf32, "rf">
      npu.set_flag "mma" -> "ldmatrix", 1
    }
    // Consume the last "free again" flags so every set has its wait.
    npu.wait_flag "ldmatrix" -> "cp_async", 0
    npu.wait_flag "ldmatrix" -> "cp_async", 1
    npu.wait_flag "mma" -> "ldmatrix", 0
    npu.wait_flag "mma" -> "ldmatrix", 1
    npu.set_flag "mma" -> "st", 0
    npu.wait_flag "mma" -> "st", 0
    npu.dma "st" %c[0, 0] -> %C[0, 0] {shape = array<i64: 128, 128>} : memref<128x128xf32, "rf"> -> memref<128x128xf32, "gm">
    func.return
  }
}
