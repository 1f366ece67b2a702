// Softmax of each row of X (32x256 f32) on the systolic preset: an elementwise + reduce kernel
// on the vector unit, Y = exp(X - rowmax(X)) / rowsum(exp(X - rowmax(X))).
//
// The vector unit works on the accumulator scratchpad (ofmap), so the load engine moves X
// straight into it (Gemmini's mvin to the accumulator) and the store engine takes Y back.
// The unit is 32 B wide (8 f32 lanes): a 256-wide row is 32 blocks, so a row's max or sum
// is a tree of three reduces: 32 partials, 4, then 1.
module attributes {npu.machine = "systolic"} {
  func.func @main(%X: memref<32x256xf32, "dram">, %Y: memref<32x256xf32, "dram">) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %x = npu.buffer offset 0 : memref<32x256xf32, "ofmap">
    %t = npu.buffer offset 32768 : memref<256xf32, "ofmap">
    %p0 = npu.buffer offset 33792 : memref<32xf32, "ofmap">
    %p1 = npu.buffer offset 33920 : memref<32xf32, "ofmap">
    %m = npu.buffer offset 34048 : memref<8xf32, "ofmap">
    %s = npu.buffer offset 34080 : memref<8xf32, "ofmap">
    npu.dma "load" %X[0, 0] -> %x[0, 0] {shape = array<i64: 32, 256>} : memref<32x256xf32, "dram"> -> memref<32x256xf32, "ofmap">
    npu.set_flag "load" -> "vector", 0
    npu.wait_flag "load" -> "vector", 0
    scf.for %r = %c0 to %c32 step %c1 {
      // m = max of the row, in a tree of reductions of one block per repetition
      npu.vec.reduce "max" %x[%r, 0] -> %p0[0] {repeat = 32 : i64} : memref<32x256xf32, "ofmap"> -> memref<32xf32, "ofmap">
      npu.vec.reduce "max" %p0[0] -> %p1[0] {repeat = 4 : i64} : memref<32xf32, "ofmap"> -> memref<32xf32, "ofmap">
      npu.vec.reduce "max" %p1[0] -> %m[0] {mask = 4 : i64} : memref<32xf32, "ofmap"> -> memref<8xf32, "ofmap">
      // x - m, with m spread over a row (source stride 0: every block reads the same element)
      npu.vec.broadcast %m[0] -> %t[0] {repeat = 32 : i64, stride = array<i64: 0, 8>} : memref<8xf32, "ofmap"> -> memref<256xf32, "ofmap">
      npu.vec.sub %x[%r, 0], %t[0] -> %x[%r, 0] {repeat = 32 : i64} : memref<32x256xf32, "ofmap">, memref<256xf32, "ofmap"> -> memref<32x256xf32, "ofmap">
      npu.vec.exp %x[%r, 0] -> %x[%r, 0] {repeat = 32 : i64} : memref<32x256xf32, "ofmap"> -> memref<32x256xf32, "ofmap">
      // s = sum of the row; then divide the row by it
      npu.vec.reduce "sum" %x[%r, 0] -> %p0[0] {repeat = 32 : i64} : memref<32x256xf32, "ofmap"> -> memref<32xf32, "ofmap">
      npu.vec.reduce "sum" %p0[0] -> %p1[0] {repeat = 4 : i64} : memref<32xf32, "ofmap"> -> memref<32xf32, "ofmap">
      npu.vec.reduce "sum" %p1[0] -> %s[0] {mask = 4 : i64} : memref<32xf32, "ofmap"> -> memref<8xf32, "ofmap">
      npu.vec.broadcast %s[0] -> %t[0] {repeat = 32 : i64, stride = array<i64: 0, 8>} : memref<8xf32, "ofmap"> -> memref<256xf32, "ofmap">
      npu.vec.div %x[%r, 0], %t[0] -> %x[%r, 0] {repeat = 32 : i64} : memref<32x256xf32, "ofmap">, memref<256xf32, "ofmap"> -> memref<32x256xf32, "ofmap">
    }
    npu.set_flag "vector" -> "store", 0
    npu.wait_flag "vector" -> "store", 0
    npu.dma "store" %x[0, 0] -> %Y[0, 0] {shape = array<i64: 32, 256>} : memref<32x256xf32, "ofmap"> -> memref<32x256xf32, "dram">
    func.return
  }
}
