// npu-plan-memory: allocs become npu.buffers at aligned offsets; buffers never live at once share bytes.
// RUN: ziggurat-opt %s --split-input-file -p npu-plan-memory | filecheck %s
// RUN: ziggurat-opt %s --split-input-file -p 'npu-plan-memory{reuse=false}' | filecheck %s --check-prefix=NOREUSE

// %x dies at the relu into %y; %z is first used after it, so it takes %x's bytes.
// %w, live with %z and %odd only, takes %y's bytes; %odd, live with all three, goes past them.
// CHECK-LABEL: func.func @sequential
// CHECK-NEXT:    %x = npu.buffer offset 0 : memref<64x64xf16, "ub">
// CHECK-NEXT:    %y = npu.buffer offset 8192 : memref<64x64xf16, "ub">
// CHECK-NEXT:    %z = npu.buffer offset 0 : memref<64x64xf16, "ub">
// CHECK-NEXT:    %odd = npu.buffer offset 16384 : memref<10xf16, "ub">
// CHECK-NEXT:    %w = npu.buffer offset 8192 : memref<8xf16, "ub">
// CHECK-NOT:     memref.alloc
// NOREUSE-LABEL: func.func @sequential
// NOREUSE:         %z = npu.buffer offset 16384 : memref<64x64xf16, "ub">
module attributes {npu.machine = "davinci"} {
  func.func @sequential(%X: memref<64x64xf16, "gm">, %Y: memref<64x64xf16, "gm">) {
    %x = memref.alloc() : memref<64x64xf16, "ub">
    %y = memref.alloc() : memref<64x64xf16, "ub">
    %z = memref.alloc() : memref<64x64xf16, "ub">
    %odd = memref.alloc() : memref<10xf16, "ub">
    %w = memref.alloc() : memref<8xf16, "ub">
    npu.dma "mte2" %X[0, 0] -> %x[0, 0] {shape = array<i64: 64, 64>} : memref<64x64xf16, "gm"> -> memref<64x64xf16, "ub">
    npu.vec.reduce "max" %x[0, 0] -> %odd[0] {repeat = 8 : i64, mask = 8 : i64} : memref<64x64xf16, "ub"> -> memref<10xf16, "ub">
    npu.vec.relu %x[0, 0] -> %y[0, 0] {repeat = 32 : i64} : memref<64x64xf16, "ub"> -> memref<64x64xf16, "ub">
    npu.vec.relu %y[0, 0] -> %z[0, 0] {repeat = 32 : i64} : memref<64x64xf16, "ub"> -> memref<64x64xf16, "ub">
    npu.vec.reduce "max" %odd[0] -> %w[0] {mask = 8 : i64} : memref<10xf16, "ub"> -> memref<8xf16, "ub">
    npu.dma "mte3" %z[0, 0] -> %Y[0, 0] {shape = array<i64: 64, 64>} : memref<64x64xf16, "ub"> -> memref<64x64xf16, "gm">
    func.return
  }
}

// -----

// %a is used inside the loop, %b only after it: %a lives for the whole loop, so %b cannot
// take its bytes before the loop ends, but may after it. %t, used once per iteration, lives
// for the whole loop too and keeps %b's bytes apart from its own.
// L0A is addressed in 512-byte fractals.
// CHECK-LABEL: func.func @loop
// CHECK:         %a = npu.buffer offset 0 : memref<16x16xf16, "l0a">
// CHECK-NEXT:    %t = npu.buffer offset 512 : memref<16x16xf16, "l0a">
// CHECK-NEXT:    %b = npu.buffer offset 0 : memref<16x16xf16, "l0a">
module attributes {npu.machine = "davinci"} {
  func.func @loop(%A: memref<16x64xf16, "gm">) {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %a = memref.alloc() : memref<16x16xf16, "l0a">
    %t = memref.alloc() : memref<16x16xf16, "l0a">
    %b = memref.alloc() : memref<16x16xf16, "l0a">
    %l1 = memref.alloc() : memref<16x64xf16, "l1">
    npu.dma "mte2" %A[0, 0] -> %l1[0, 0] {shape = array<i64: 16, 64>} : memref<16x64xf16, "gm"> -> memref<16x64xf16, "l1">
    scf.for %k = %c0 to %c64 step %c16 {
      npu.dma "mte1" %l1[0, %k] -> %t[0, 0] {shape = array<i64: 16, 16>} : memref<16x64xf16, "l1"> -> memref<16x16xf16, "l0a">
      npu.dma "mte1" %l1[0, %k] -> %a[0, 0] {shape = array<i64: 16, 16>} : memref<16x64xf16, "l1"> -> memref<16x16xf16, "l0a">
    }
    npu.dma "mte1" %l1[0, 0] -> %b[0, 0] {shape = array<i64: 16, 16>} : memref<16x64xf16, "l1"> -> memref<16x16xf16, "l0a">
    func.return
  }
}

// -----

// Flags already present: nothing orders the accesses that sharing would add, so no reuse.
// CHECK-LABEL: func.func @synchronized
// CHECK-NEXT:    %x = npu.buffer offset 0 : memref<64xf32, "ub">
// CHECK-NEXT:    %y = npu.buffer offset 256 : memref<64xf32, "ub">
module attributes {npu.machine = "davinci"} {
  func.func @synchronized(%X: memref<64xf32, "gm">, %Y: memref<64xf32, "gm">) {
    %x = memref.alloc() : memref<64xf32, "ub">
    %y = memref.alloc() : memref<64xf32, "ub">
    npu.dma "mte2" %X[0] -> %x[0] {shape = array<i64: 64>} : memref<64xf32, "gm"> -> memref<64xf32, "ub">
    npu.set_flag "mte2" -> "mte3", 0
    npu.wait_flag "mte2" -> "mte3", 0
    npu.dma "mte3" %x[0] -> %Y[0] {shape = array<i64: 64>} : memref<64xf32, "ub"> -> memref<64xf32, "gm">
    npu.dma "mte2" %X[0] -> %y[0] {shape = array<i64: 64>} : memref<64xf32, "gm"> -> memref<64xf32, "ub">
    func.return
  }
}
