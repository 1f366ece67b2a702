// C = A @ B on one SM (the tensorcore preset): A 128x512 f16, B 512x128 f16, C 128x128 f32.
//
// K is walked in 64-wide tiles with one buffer per operand in shared memory and in registers:
// cp.async brings the tiles of A and B from global memory into shared memory, ldmatrix moves
// them into registers, the tensor cores accumulate into register accumulators (one
// 128x128x64 npu.mma stands for the warps' m16n8k16 mma.sync instructions), and st writes C
// back at the end. Flags order the pipes both ways: forward ("the tiles are loaded") and
// back ("the buffer is free again"). Compare gemm_double_buffered.mlir.
module attributes {npu.machine = "tensorcore"} {
  func.func @main(%A: memref<128x512xf16, "gm">, %B: memref<512x128xf16, "gm">, %C: memref<128x128xf32, "gm">) {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %c512 = arith.constant 512 : index
    %a1 = npu.buffer offset 0 : memref<128x64xf16, "smem">
    %b1 = npu.buffer offset 16384 : memref<64x128xf16, "smem">
    %a0 = npu.buffer offset 65536 : memref<128x64xf16, "rf">
    %b0 = npu.buffer offset 81920 : memref<64x128xf16, "rf">
    %c = npu.buffer offset 0 : memref<128x128xf32, "rf">
    // Shared memory and registers start free: the first iteration's "free again" waits consume these.
    npu.set_flag "ldmatrix" -> "cp_async", 0
    npu.set_flag "mma" -> "ldmatrix", 0
    scf.for %k = %c0 to %c512 step %c64 {
      npu.wait_flag "ldmatrix" -> "cp_async", 0
      npu.dma "cp_async" %A[0, %k] -> %a1[0, 0] {shape = array<i64: 128, 64>} : memref<128x512xf16, "gm"> -> memref<128x64xf16, "smem">
      npu.dma "cp_async" %B[%k, 0] -> %b1[0, 0] {shape = array<i64: 64, 128>} : memref<512x128xf16, "gm"> -> memref<64x128xf16, "smem">
      npu.set_flag "cp_async" -> "ldmatrix", 0
      npu.wait_flag "cp_async" -> "ldmatrix", 0
      npu.wait_flag "mma" -> "ldmatrix", 0
      npu.dma "ldmatrix" %a1[0, 0] -> %a0[0, 0] {shape = array<i64: 128, 64>} : memref<128x64xf16, "smem"> -> memref<128x64xf16, "rf">
      npu.dma "ldmatrix" %b1[0, 0] -> %b0[0, 0] {shape = array<i64: 64, 128>} : memref<64x128xf16, "smem"> -> memref<64x128xf16, "rf">
      npu.set_flag "ldmatrix" -> "cp_async", 0
      npu.set_flag "ldmatrix" -> "mma", 0
      npu.wait_flag "ldmatrix" -> "mma", 0
      %first = arith.cmpi eq, %k, %c0 : index
      scf.if %first {
        npu.mma %a0[0, 0], %b0[0, 0] -> %c[0, 0] {m = 128 : i64, n = 128 : i64, k = 64 : i64} : memref<128x64xf16, "rf">, memref<64x128xf16, "rf"> -> memref<128x128xf32, "rf">
      } else {
        npu.mma %a0[0, 0], %b0[0, 0] -> %c[0, 0] {m = 128 : i64, n = 128 : i64, k = 64 : i64, accumulate} : memref<128x64xf16, "rf">, memref<64x128xf16, "rf"> -> memref<128x128xf32, "rf">
      }
      npu.set_flag "mma" -> "ldmatrix", 0
    }
    // Consume the last "free again" flags so every set has its wait.
    npu.wait_flag "ldmatrix" -> "cp_async", 0
    npu.wait_flag "mma" -> "ldmatrix", 0
    npu.set_flag "mma" -> "st", 0
    npu.wait_flag "mma" -> "st", 0
    npu.dma "st" %c[0, 0] -> %C[0, 0] {shape = array<i64: 128, 128>} : memref<128x128xf32, "rf"> -> memref<128x128xf32, "gm">
    func.return
  }
}
