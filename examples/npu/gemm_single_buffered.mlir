// C = A @ B on one DaVinci core (the davinci preset): A 256x512 f16, B 512x256 f16, C 256x256 f32.
//
// K is walked in 64-wide tiles with one buffer per operand in L1 and in L0: MTE2 brings the
// tiles of A and B from global memory into L1, MTE1 moves them into L0A/L0B, the cube
// accumulates into L0C, and FIXPIPE writes C back at the end. Flags order the pipes both
// ways: forward ("the tiles are loaded") and back ("the buffer is free again"), so MTE2
// cannot fetch tile k+1 before MTE1 has read tile k. Compare gemm_double_buffered.mlir.
module attributes {npu.machine = "davinci"} {
  func.func @main(%A: memref<256x512xf16, "gm">, %B: memref<512x256xf16, "gm">, %C: memref<256x256xf32, "gm">) {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %c512 = arith.constant 512 : index
    %a1 = npu.buffer offset 0 : memref<256x64xf16, "l1">
    %b1 = npu.buffer offset 32768 : memref<64x256xf16, "l1">
    %a0 = npu.buffer offset 0 : memref<256x64xf16, "l0a">
    %b0 = npu.buffer offset 0 : memref<64x256xf16, "l0b">
    %c = npu.buffer offset 0 : memref<256x256xf32, "l0c">
    // L1 and L0 start free: the first iteration's "free again" waits consume these.
    npu.set_flag "mte1" -> "mte2", 0
    npu.set_flag "cube" -> "mte1", 0
    scf.for %k = %c0 to %c512 step %c64 {
      npu.wait_flag "mte1" -> "mte2", 0
      npu.dma "mte2" %A[0, %k] -> %a1[0, 0] {shape = array<i64: 256, 64>} : memref<256x512xf16, "gm"> -> memref<256x64xf16, "l1">
      npu.dma "mte2" %B[%k, 0] -> %b1[0, 0] {shape = array<i64: 64, 256>} : memref<512x256xf16, "gm"> -> memref<64x256xf16, "l1">
      npu.set_flag "mte2" -> "mte1", 0
      npu.wait_flag "mte2" -> "mte1", 0
      npu.wait_flag "cube" -> "mte1", 0
      npu.dma "mte1" %a1[0, 0] -> %a0[0, 0] {shape = array<i64: 256, 64>} : memref<256x64xf16, "l1"> -> memref<256x64xf16, "l0a">
      npu.dma "mte1" %b1[0, 0] -> %b0[0, 0] {shape = array<i64: 64, 256>} : memref<64x256xf16, "l1"> -> memref<64x256xf16, "l0b">
      npu.set_flag "mte1" -> "mte2", 0
      npu.set_flag "mte1" -> "cube", 0
      npu.wait_flag "mte1" -> "cube", 0
      %first = arith.cmpi eq, %k, %c0 : index
      scf.if %first {
        npu.mma %a0[0, 0], %b0[0, 0] -> %c[0, 0] {m = 256 : i64, n = 256 : i64, k = 64 : i64} : memref<256x64xf16, "l0a">, memref<64x256xf16, "l0b"> -> memref<256x256xf32, "l0c">
      } else {
        npu.mma %a0[0, 0], %b0[0, 0] -> %c[0, 0] {m = 256 : i64, n = 256 : i64, k = 64 : i64, accumulate} : memref<256x64xf16, "l0a">, memref<64x256xf16, "l0b"> -> memref<256x256xf32, "l0c">
      }
      npu.set_flag "cube" -> "mte1", 0
    }
    // Consume the last "free again" flags so every set has its wait.
    npu.wait_flag "mte1" -> "mte2", 0
    npu.wait_flag "cube" -> "mte1", 0
    npu.set_flag "cube" -> "fixpipe", 0
    npu.wait_flag "cube" -> "fixpipe", 0
    npu.dma "fixpipe" %c[0, 0] -> %C[0, 0] {shape = array<i64: 256, 256>} : memref<256x256xf32, "l0c"> -> memref<256x256xf32, "gm">
    func.return
  }
}
