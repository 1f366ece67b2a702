// npu-insert-sync on two buffers that npu-plan-memory put end to end in global memory (a layer's
// input and output): the loads of one and the stores into the other touch different bytes, so no
// flag orders them. The pass bounds a dynamic index by its loop: %i runs 0, 2, 4, 6 (not up to 7,
// which would put the window's second row past the input's end, into the output), and an index it
// cannot bound still keeps the window inside its buffer.
// The interpreter's hazard checker runs the result (a missing flag would be a race it reports).
// RUN: ziggurat-opt %s -p npu-insert-sync | filecheck %s
// RUN: ziggurat-opt %s -p npu-insert-sync | ziggurat-run - --machine davinci --function rows > /dev/null

// CHECK-LABEL: func.func @rows
// CHECK-NOT:     "mte3" -> "mte2"
// CHECK:         func.return
module attributes {npu.machine = "davinci"} {
  func.func @rows() {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %c8 = arith.constant 8 : index
    %in = npu.buffer offset 0 : memref<8x64xf32, "gm">
    %out = npu.buffer offset 2048 : memref<8x64xf32, "gm">
    %t = npu.buffer offset 0 : memref<2x64xf32, "ub">
    %u = npu.buffer offset 512 : memref<2x64xf32, "ub">
    scf.for %i = %c0 to %c8 step %c2 {
      npu.dma "mte2" %in[%i, 0] -> %t[0, 0] {shape = array<i64: 2, 64>} : memref<8x64xf32, "gm"> -> memref<2x64xf32, "ub">
      npu.vec.relu %t[0, 0] -> %u[0, 0] {repeat = 2 : i64} : memref<2x64xf32, "ub"> -> memref<2x64xf32, "ub">
      npu.dma "mte3" %u[0, 0] -> %out[%i, 0] {shape = array<i64: 2, 64>} : memref<2x64xf32, "ub"> -> memref<8x64xf32, "gm">
    }
    func.return
  }

  // The loop's bound is an argument: %i may be any row, and the window is still inside %in.
  // CHECK-LABEL: func.func @unbounded
  // CHECK-NOT:     "mte3" -> "mte2"
  // CHECK:         func.return
  func.func @unbounded(%n: index) {
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %in = npu.buffer offset 0 : memref<8x64xf32, "gm">
    %out = npu.buffer offset 2048 : memref<8x64xf32, "gm">
    %t = npu.buffer offset 0 : memref<2x64xf32, "ub">
    %u = npu.buffer offset 512 : memref<2x64xf32, "ub">
    scf.for %i = %c0 to %n step %c2 {
      npu.dma "mte2" %in[%i, 0] -> %t[0, 0] {shape = array<i64: 2, 64>} : memref<8x64xf32, "gm"> -> memref<2x64xf32, "ub">
      npu.vec.relu %t[0, 0] -> %u[0, 0] {repeat = 2 : i64} : memref<2x64xf32, "ub"> -> memref<2x64xf32, "ub">
      npu.dma "mte3" %u[0, 0] -> %out[%i, 0] {shape = array<i64: 2, 64>} : memref<2x64xf32, "ub"> -> memref<8x64xf32, "gm">
    }
    func.return
  }
}
