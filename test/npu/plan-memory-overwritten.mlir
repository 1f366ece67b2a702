// npu-plan-memory: a buffer's live range ends at its last read before an instruction overwrites
// it whole, and starts again there. Double-buffer's unrolled halves reuse a window step's
// temporaries (depthwise conv: product, cast): each half starts by overwriting them, so the
// temporaries of different steps are never live at once.
// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics -p 'npu-plan-memory{machine=davinci}' | filecheck %s

// 'ub' (256 KiB) holds two of these 128 KiB buffers. Each is written whole and read in each
// half of the loop body, holding nothing between its halves: the three take turns, and %u
// takes %t's bytes (one live range each, they would need 384 KiB).
// CHECK-LABEL: func.func @halves
// CHECK:         %t = npu.buffer offset 0 : memref<64x512xf32, "ub">
// CHECK-NEXT:    %v = npu.buffer offset 131072 : memref<64x512xf32, "ub">
// CHECK-NEXT:    %u = npu.buffer offset 0 : memref<64x512xf32, "ub">
func.func @halves(%X: memref<64x512xf32, "gm">, %Y: memref<64x512xf32, "gm">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %t = memref.alloc() : memref<64x512xf32, "ub">
  %v = memref.alloc() : memref<64x512xf32, "ub">
  %u = memref.alloc() : memref<64x512xf32, "ub">
  scf.for %i = %c0 to %c4 step %c1 {
    npu.dma "mte2" %X[0, 0] -> %t[0, 0] {shape = array<i64: 64, 512>} : memref<64x512xf32, "gm"> -> memref<64x512xf32, "ub">
    npu.dma "mte3" %t[0, 0] -> %Y[0, 0] {shape = array<i64: 64, 512>} : memref<64x512xf32, "ub"> -> memref<64x512xf32, "gm">
    npu.dma "mte2" %X[0, 0] -> %v[0, 0] {shape = array<i64: 64, 512>} : memref<64x512xf32, "gm"> -> memref<64x512xf32, "ub">
    npu.dma "mte3" %v[0, 0] -> %Y[0, 0] {shape = array<i64: 64, 512>} : memref<64x512xf32, "ub"> -> memref<64x512xf32, "gm">
    npu.dma "mte2" %X[0, 0] -> %u[0, 0] {shape = array<i64: 64, 512>} : memref<64x512xf32, "gm"> -> memref<64x512xf32, "ub">
    npu.dma "mte3" %u[0, 0] -> %Y[0, 0] {shape = array<i64: 64, 512>} : memref<64x512xf32, "ub"> -> memref<64x512xf32, "gm">
    npu.dma "mte2" %X[0, 0] -> %t[0, 0] {shape = array<i64: 64, 512>} : memref<64x512xf32, "gm"> -> memref<64x512xf32, "ub">
    npu.dma "mte3" %t[0, 0] -> %Y[0, 0] {shape = array<i64: 64, 512>} : memref<64x512xf32, "ub"> -> memref<64x512xf32, "gm">
    npu.dma "mte2" %X[0, 0] -> %v[0, 0] {shape = array<i64: 64, 512>} : memref<64x512xf32, "gm"> -> memref<64x512xf32, "ub">
    npu.dma "mte3" %v[0, 0] -> %Y[0, 0] {shape = array<i64: 64, 512>} : memref<64x512xf32, "ub"> -> memref<64x512xf32, "gm">
    npu.dma "mte2" %X[0, 0] -> %u[0, 0] {shape = array<i64: 64, 512>} : memref<64x512xf32, "gm"> -> memref<64x512xf32, "ub">
    npu.dma "mte3" %u[0, 0] -> %Y[0, 0] {shape = array<i64: 64, 512>} : memref<64x512xf32, "ub"> -> memref<64x512xf32, "gm">
  }
  func.return
}

// -----

// The same, but the second halves of %t and %v start by reading them (a relu in place): what
// the first half left is still needed, so each lives from its first write to its last read,
// and %u, live in between, needs bytes of its own that 'ub' does not have.
func.func @carried(%X: memref<64x512xf32, "gm">, %Y: memref<64x512xf32, "gm">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %t = memref.alloc() : memref<64x512xf32, "ub">
  %v = memref.alloc() : memref<64x512xf32, "ub">
  // expected-error@+1 {{buffer %u of 131072 bytes does not fit in 'ub'}}
  %u = memref.alloc() : memref<64x512xf32, "ub">
  scf.for %i = %c0 to %c4 step %c1 {
    npu.dma "mte2" %X[0, 0] -> %t[0, 0] {shape = array<i64: 64, 512>} : memref<64x512xf32, "gm"> -> memref<64x512xf32, "ub">
    npu.dma "mte3" %t[0, 0] -> %Y[0, 0] {shape = array<i64: 64, 512>} : memref<64x512xf32, "ub"> -> memref<64x512xf32, "gm">
    npu.dma "mte2" %X[0, 0] -> %v[0, 0] {shape = array<i64: 64, 512>} : memref<64x512xf32, "gm"> -> memref<64x512xf32, "ub">
    npu.dma "mte3" %v[0, 0] -> %Y[0, 0] {shape = array<i64: 64, 512>} : memref<64x512xf32, "ub"> -> memref<64x512xf32, "gm">
    npu.dma "mte2" %X[0, 0] -> %u[0, 0] {shape = array<i64: 64, 512>} : memref<64x512xf32, "gm"> -> memref<64x512xf32, "ub">
    npu.dma "mte3" %u[0, 0] -> %Y[0, 0] {shape = array<i64: 64, 512>} : memref<64x512xf32, "ub"> -> memref<64x512xf32, "gm">
    npu.vec.relu %t[0, 0] -> %t[0, 0] {repeat = 512 : i64} : memref<64x512xf32, "ub"> -> memref<64x512xf32, "ub">
    npu.dma "mte3" %t[0, 0] -> %Y[0, 0] {shape = array<i64: 64, 512>} : memref<64x512xf32, "ub"> -> memref<64x512xf32, "gm">
    npu.vec.relu %v[0, 0] -> %v[0, 0] {repeat = 512 : i64} : memref<64x512xf32, "ub"> -> memref<64x512xf32, "ub">
    npu.dma "mte3" %v[0, 0] -> %Y[0, 0] {shape = array<i64: 64, 512>} : memref<64x512xf32, "ub"> -> memref<64x512xf32, "gm">
  }
  func.return
}
