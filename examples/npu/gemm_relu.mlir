// relu(A @ B) in f16 on one DaVinci core (the davinci preset): A 64x128 f16, B 128x64 f16, Y 64x64 f16.
//
// The whole product fits one cube instruction sequence, so this shows the rest of the core:
// FIXPIPE moves the f32 accumulators to the unified buffer casting them to f16 on the way,
// the vector unit applies relu (32 repeats of 128 f16 lanes), and MTE3 stores the result.
module attributes {npu.machine = "davinci"} {
  func.func @main(%A: memref<64x128xf16, "gm">, %B: memref<128x64xf16, "gm">, %Y: memref<64x64xf16, "gm">) {
    %a1 = npu.buffer offset 0 : memref<64x128xf16, "l1">
    %b1 = npu.buffer offset 16384 : memref<128x64xf16, "l1">
    %a0 = npu.buffer offset 0 : memref<64x128xf16, "l0a">
    %b0 = npu.buffer offset 0 : memref<128x64xf16, "l0b">
    %c = npu.buffer offset 0 : memref<64x64xf32, "l0c">
    %y = npu.buffer offset 0 : memref<64x64xf16, "ub">
    npu.dma "mte2" %A[0, 0] -> %a1[0, 0] {shape = array<i64: 64, 128>} : memref<64x128xf16, "gm"> -> memref<64x128xf16, "l1">
    npu.dma "mte2" %B[0, 0] -> %b1[0, 0] {shape = array<i64: 128, 64>} : memref<128x64xf16, "gm"> -> memref<128x64xf16, "l1">
    npu.set_flag "mte2" -> "mte1", 0
    npu.wait_flag "mte2" -> "mte1", 0
    npu.dma "mte1" %a1[0, 0] -> %a0[0, 0] {shape = array<i64: 64, 128>} : memref<64x128xf16, "l1"> -> memref<64x128xf16, "l0a">
    npu.dma "mte1" %b1[0, 0] -> %b0[0, 0] {shape = array<i64: 128, 64>} : memref<128x64xf16, "l1"> -> memref<128x64xf16, "l0b">
    npu.set_flag "mte1" -> "cube", 0
    npu.wait_flag "mte1" -> "cube", 0
    npu.mma %a0[0, 0], %b0[0, 0] -> %c[0, 0] {m = 64 : i64, n = 64 : i64, k = 128 : i64} : memref<64x128xf16, "l0a">, memref<128x64xf16, "l0b"> -> memref<64x64xf32, "l0c">
    npu.set_flag "cube" -> "fixpipe", 0
    npu.wait_flag "cube" -> "fixpipe", 0
    npu.dma "fixpipe" %c[0, 0] -> %y[0, 0] {shape = array<i64: 64, 64>} : memref<64x64xf32, "l0c"> -> memref<64x64xf16, "ub">
    npu.set_flag "fixpipe" -> "vector", 0
    npu.wait_flag "fixpipe" -> "vector", 0
    npu.vec.relu %y[0, 0] -> %y[0, 0] {repeat = 32 : i64} : memref<64x64xf16, "ub"> -> memref<64x64xf16, "ub">
    npu.set_flag "vector" -> "mte3", 0
    npu.wait_flag "vector" -> "mte3", 0
    npu.dma "mte3" %y[0, 0] -> %Y[0, 0] {shape = array<i64: 64, 64>} : memref<64x64xf16, "ub"> -> memref<64x64xf16, "gm">
    func.return
  }
}
