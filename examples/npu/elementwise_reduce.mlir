// Softmax of each row of X (32x256 f32) on one DaVinci core (the davinci preset): an
// elementwise + reduce kernel on the vector unit, Y = exp(X - rowmax(X)) / rowsum(exp(X - rowmax(X))).
//
// MTE2 brings X into the unified buffer, the vector unit works row by row, MTE3 stores Y. The
// vector unit is 256 B wide (64 f32 lanes): a 256-wide row is 4 blocks, so a row's max or sum
// is one reduce of 4 repetitions (a partial per block) and one of the 4 partials.
module attributes {npu.machine = "davinci"} {
  func.func @main(%X: memref<32x256xf32, "gm">, %Y: memref<32x256xf32, "gm">) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %x = npu.buffer offset 0 : memref<32x256xf32, "ub">
    %t = npu.buffer offset 32768 : memref<256xf32, "ub">
    %p0 = npu.buffer offset 33792 : memref<32xf32, "ub">
    %p1 = npu.buffer offset 33920 : memref<32xf32, "ub">
    %m = npu.buffer offset 34048 : memref<8xf32, "ub">
    %s = npu.buffer offset 34080 : memref<8xf32, "ub">
    npu.dma "mte2" %X[0, 0] -> %x[0, 0] {shape = array<i64: 32, 256>} : memref<32x256xf32, "gm"> -> memref<32x256xf32, "ub">
    npu.set_flag "mte2" -> "vector", 0
    npu.wait_flag "mte2" -> "vector", 0
    scf.for %r = %c0 to %c32 step %c1 {
      // m = max of the row, in a tree of reductions of one block per repetition
      npu.vec.reduce "max" %x[%r, 0] -> %p0[0] {repeat = 4 : i64} : memref<32x256xf32, "ub"> -> memref<32xf32, "ub">
      npu.vec.reduce "max" %p0[0] -> %m[0] {mask = 4 : i64} : memref<32xf32, "ub"> -> memref<8xf32, "ub">
      // x - m, with m spread over a row (source stride 0: every block reads the same element)
      npu.vec.broadcast %m[0] -> %t[0] {repeat = 4 : i64, stride = array<i64: 0, 64>} : memref<8xf32, "ub"> -> memref<256xf32, "ub">
      npu.vec.sub %x[%r, 0], %t[0] -> %x[%r, 0] {repeat = 4 : i64} : memref<32x256xf32, "ub">, memref<256xf32, "ub"> -> memref<32x256xf32, "ub">
      npu.vec.exp %x[%r, 0] -> %x[%r, 0] {repeat = 4 : i64} : memref<32x256xf32, "ub"> -> memref<32x256xf32, "ub">
      // s = sum of the row; then divide the row by it
      npu.vec.reduce "sum" %x[%r, 0] -> %p0[0] {repeat = 4 : i64} : memref<32x256xf32, "ub"> -> memref<32xf32, "ub">
      npu.vec.reduce "sum" %p0[0] -> %s[0] {mask = 4 : i64} : memref<32xf32, "ub"> -> memref<8xf32, "ub">
      npu.vec.broadcast %s[0] -> %t[0] {repeat = 4 : i64, stride = array<i64: 0, 64>} : memref<8xf32, "ub"> -> memref<256xf32, "ub">
      npu.vec.div %x[%r, 0], %t[0] -> %x[%r, 0] {repeat = 4 : i64} : memref<32x256xf32, "ub">, memref<256xf32, "ub"> -> memref<32x256xf32, "ub">
    }
    npu.set_flag "vector" -> "mte3", 0
    npu.wait_flag "vector" -> "mte3", 0
    npu.dma "mte3" %x[0, 0] -> %Y[0, 0] {shape = array<i64: 32, 256>} : memref<32x256xf32, "ub"> -> memref<32x256xf32, "gm">
    func.return
  }
}
