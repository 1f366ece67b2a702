// npu-plan-memory refuses what it cannot place, at the alloc, and loop-level code, at its first op.
// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics -p 'npu-plan-memory{machine=davinci}'

func.func @too_big(%X: memref<64x64xf32, "gm">) {
  %x = memref.alloc() : memref<64x64xf32, "l0a">
  // expected-error@+1 {{buffer %y of 16384 bytes does not fit in 'l0a' (capacity 65536 bytes on machine 'davinci'): live with it are %x (16384 bytes at [49152, 65536)), %z (49152 bytes at [0, 49152)); 81920 bytes in all}}
  %y = memref.alloc() : memref<64x64xf32, "l0a">
  %z = memref.alloc() : memref<192x64xf32, "l0a">
  npu.dma "mte1" %x[0, 0] -> %y[0, 0] {shape = array<i64: 64, 64>} : memref<64x64xf32, "l0a"> -> memref<64x64xf32, "l0a">
  npu.dma "mte1" %y[0, 0] -> %z[0, 0] {shape = array<i64: 64, 64>} : memref<64x64xf32, "l0a"> -> memref<192x64xf32, "l0a">
  npu.dma "mte1" %x[0, 0] -> %z[64, 0] {shape = array<i64: 64, 64>} : memref<64x64xf32, "l0a"> -> memref<192x64xf32, "l0a">
  func.return
}

// -----

func.func @alone() {
  // expected-error@+1 {{buffer %big of 2097152 bytes does not fit in 'l1' (capacity 1048576 bytes on machine 'davinci'): live with it are nothing else; 2097152 bytes in all}}
  %big = memref.alloc() : memref<1024x1024xf16, "l1">
  func.return
}

// -----

func.func @unplaced() {
  // expected-error@+1 {{cannot plan memref<16xf16>: it has no memory space (run loop-promote-to-memory-space first)}}
  %a = memref.alloc() : memref<16xf16>
  func.return
}

// -----

func.func @unknown_space() {
  // expected-error@+1 {{cannot plan memref<16xf16, "smem">: machine 'davinci' has no memory space 'smem' (it has gm, l1, l0a, l0b, l0c, ub)}}
  %a = memref.alloc() : memref<16xf16, "smem">
  func.return
}

// -----

func.func @dynamic(%n: index) {
  // expected-error@+1 {{cannot plan memref<?xf16, "ub">: a buffer has a static shape and the row-major layout}}
  %a = memref.alloc(%n) : memref<?xf16, "ub">
  func.return
}

// -----

// Flags already present: nothing would order the accesses that sharing adds, so no reuse even
// where the space is short.
func.func @synchronized(%X: memref<64x1024xf16, "gm">, %Y: memref<64x1024xf16, "gm">) {
  %x = memref.alloc() : memref<64x1024xf16, "ub">
  %y = memref.alloc() : memref<64x1024xf16, "ub">
  // expected-error@+1 {{buffer %z of 131072 bytes does not fit in 'ub'}}
  %z = memref.alloc() : memref<64x1024xf16, "ub">
  npu.dma "mte2" %X[0, 0] -> %x[0, 0] {shape = array<i64: 64, 1024>} : memref<64x1024xf16, "gm"> -> memref<64x1024xf16, "ub">
  npu.set_flag "mte2" -> "vector", 0
  npu.wait_flag "mte2" -> "vector", 0
  npu.vec.relu %x[0, 0] -> %y[0, 0] {repeat = 512 : i64} : memref<64x1024xf16, "ub"> -> memref<64x1024xf16, "ub">
  npu.vec.relu %y[0, 0] -> %z[0, 0] {repeat = 512 : i64} : memref<64x1024xf16, "ub"> -> memref<64x1024xf16, "ub">
  func.return
}

// -----

// A buffer without a name is named by its type (the error points at its alloc).
func.func @unnamed() {
  // expected-error@+1 {{buffer memref<1024x1024xf16, "l1"> of 2097152 bytes does not fit in 'l1'}}
  %0 = "memref.alloc"() <{operandSegmentSizes = array<i32: 0, 0>}> : () -> memref<1024x1024xf16, "l1">
  func.return
}

// -----

// Loop-level code (a fuzzer find: tile-vectorize,npu-plan-memory on test/loop/promote-copies.mlir):
// its buffers would become npu.buffers that linalg and loop ops read, which no interpreter runs.
func.func @not_lowered(%x: memref<16xf16, "gm">, %result0: memref<16xf16, "gm">) {
  %t = memref.alloc() : memref<16xf16, "ub">
  // expected-error@+1 {{npu-plan-memory places the buffers of npu code, and loop.copy is not lowered to npu instructions yet (run loop-to-npu first)}}
  loop.copy %x -> %t : memref<16xf16, "gm"> -> memref<16xf16, "ub">
  loop.copy %t -> %result0 : memref<16xf16, "ub"> -> memref<16xf16, "gm">
  func.return
}
