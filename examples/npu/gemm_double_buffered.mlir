// C = A @ B on one DaVinci core (the davinci preset): A 256x512 f16, B 512x256 f16, C 256x256 f32,
// double-buffered.
//
// The same pipeline as gemm_single_buffered.mlir, with two buffers per operand in L1 and in
// L0 and the loop body unrolled into two stages (ping: buffers [0] and event ids 0; pong:
// buffers [1] and event ids 1; flags name their event statically, as on the hardware). MTE2
// fetches the next K tile into one buffer while MTE1 and the cube work on the other, so the
// loads hide behind the cube.
module attributes {npu.machine = "davinci"} {
  func.func @main(%A: memref<256x512xf16, "gm">, %B: memref<512x256xf16, "gm">, %C: memref<256x256xf32, "gm">) {
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %c512 = arith.constant 512 : index
    %a1 = npu.buffer offset 0 : memref<2x256x64xf16, "l1">
    %b1 = npu.buffer offset 65536 : memref<2x64x256xf16, "l1">
    %a0 = npu.buffer offset 0 : memref<2x256x64xf16, "l0a">
    %b0 = npu.buffer offset 0 : memref<2x64x256xf16, "l0b">
    %c = npu.buffer offset 0 : memref<256x256xf32, "l0c">
    // Both L1 and L0 buffers start free: the first "free again" waits of each stage consume these.
    npu.set_flag "mte1" -> "mte2", 0
    npu.set_flag "mte1" -> "mte2", 1
    npu.set_flag "cube" -> "mte1", 0
    npu.set_flag "cube" -> "mte1", 1
    scf.for %k = %c0 to %c512 step %c128 {
      %k0 = arith.addi %k, %c0 : index
      %k1 = arith.addi %k, %c64 : index
      // stage 0: K tile %k0, buffers [0], event id 0
      npu.wait_flag "mte1" -> "mte2", 0
      npu.dma "mte2" %A[0, %k0] -> %a1[0, 0, 0] {shape = array<i64: 256, 64>} : memref<256x512xf16, "gm"> -> memref<2x256x64xf16, "l1">
      npu.dma "mte2" %B[%k0, 0] -> %b1[0, 0, 0] {shape = array<i64: 64, 256>} : memref<512x256xf16, "gm"> -> memref<2x64x256xf16, "l1">
      npu.set_flag "mte2" -> "mte1", 0
      npu.wait_flag "mte2" -> "mte1", 0
      npu.wait_flag "cube" -> "mte1", 0
      npu.dma "mte1" %a1[0, 0, 0] -> %a0[0, 0, 0] {shape = array<i64: 256, 64>} : memref<2x256x64xf16, "l1"> -> memref<2x256x64xf16, "l0a">
      npu.dma "mte1" %b1[0, 0, 0] -> %b0[0, 0, 0] {shape = array<i64: 64, 256>} : memref<2x64x256xf16, "l1"> -> memref<2x64x256xf16, "l0b">
      npu.set_flag "mte1" -> "mte2", 0
      npu.set_flag "mte1" -> "cube", 0
      npu.wait_flag "mte1" -> "cube", 0
      %first = arith.cmpi eq, %k, %c0 : index
      scf.if %first {
        npu.mma %a0[0, 0, 0], %b0[0, 0, 0] -> %c[0, 0] {m = 256 : i64, n = 256 : i64, k = 64 : i64} : memref<2x256x64xf16, "l0a">, memref<2x64x256xf16, "l0b"> -> memref<256x256xf32, "l0c">
      } else {
        npu.mma %a0[0, 0, 0], %b0[0, 0, 0] -> %c[0, 0] {m = 256 : i64, n = 256 : i64, k = 64 : i64, accumulate} : memref<2x256x64xf16, "l0a">, memref<2x64x256xf16, "l0b"> -> memref<256x256xf32, "l0c">
      }
      npu.set_flag "cube" -> "mte1", 0
      // stage 1: K tile %k1, buffers [1], event id 1
      npu.wait_flag "mte1" -> "mte2", 1
      npu.dma "mte2" %A[0, %k1] -> %a1[1, 0, 0] {shape = array<i64: 256, 64>} : memref<256x512xf16, "gm"> -> memref<2x256x64xf16, "l1">
      npu.dma "mte2" %B[%k1, 0] -> %b1[1, 0, 0] {shape = array<i64: 64, 256>} : memref<512x256xf16, "gm"> -> memref<2x64x256xf16, "l1">
      npu.set_flag "mte2" -> "mte1", 1
      npu.wait_flag "mte2" -> "mte1", 1
      npu.wait_flag "cube" -> "mte1", 1
      npu.dma "mte1" %a1[1, 0, 0] -> %a0[1, 0, 0] {shape = array<i64: 256, 64>} : memref<2x256x64xf16, "l1"> -> memref<2x256x64xf16, "l0a">
      npu.dma "mte1" %b1[1, 0, 0] -> %b0[1, 0, 0] {shape = array<i64: 64, 256>} : memref<2x64x256xf16, "l1"> -> memref<2x64x256xf16, "l0b">
      npu.set_flag "mte1" -> "mte2", 1
      npu.set_flag "mte1" -> "cube", 1
      npu.wait_flag "mte1" -> "cube", 1
      npu.mma %a0[1, 0, 0], %b0[1, 0, 0] -> %c[0, 0] {m = 256 : i64, n = 256 : i64, k = 64 : i64, accumulate} : memref<2x256x64xf16, "l0a">, memref<2x64x256xf16, "l0b"> -> memref<256x256xf32, "l0c">
      npu.set_flag "cube" -> "mte1", 1
    }
    // Consume the last "free again" flags so every set has its wait.
    npu.wait_flag "mte1" -> "mte2", 0
    npu.wait_flag "mte1" -> "mte2", 1
    npu.wait_flag "cube" -> "mte1", 0
    npu.wait_flag "cube" -> "mte1", 1
    npu.set_flag "cube" -> "fixpipe", 0
    npu.wait_flag "cube" -> "fixpipe", 0
    npu.dma "fixpipe" %c[0, 0] -> %C[0, 0] {shape = array<i64: 256, 256>} : memref<256x256xf32, "l0c"> -> memref<256x256xf32, "gm">
    func.return
  }
}
