// npu-insert-sync: a flag pair for each dependence between pipes, none that others imply.
// RUN: ziggurat-opt %s --split-input-file -p npu-insert-sync | filecheck %s

// Straight-line code through every unit: each pipe waits for the one that wrote what it reads.
// CHECK-LABEL: func.func @chain
// CHECK:         npu.dma "mte2" %A
// CHECK-NEXT:    npu.dma "mte2" %B
// CHECK-NEXT:    npu.set_flag "mte2" -> "mte1", 0
// CHECK-NEXT:    npu.wait_flag "mte2" -> "mte1", 0
// CHECK-NEXT:    npu.dma "mte1" %a1
// CHECK-NEXT:    npu.dma "mte1" %b1
// CHECK-NEXT:    npu.set_flag "mte1" -> "cube", 0
// CHECK-NEXT:    npu.wait_flag "mte1" -> "cube", 0
// CHECK-NEXT:    npu.mma
// CHECK-NEXT:    npu.set_flag "cube" -> "fixpipe", 0
// CHECK-NEXT:    npu.wait_flag "cube" -> "fixpipe", 0
// CHECK-NEXT:    npu.dma "fixpipe"
// CHECK-NEXT:    npu.set_flag "fixpipe" -> "vector", 0
// CHECK-NEXT:    npu.wait_flag "fixpipe" -> "vector", 0
// CHECK-NEXT:    npu.vec.relu
// CHECK-NEXT:    npu.set_flag "vector" -> "mte3", 0
// CHECK-NEXT:    npu.wait_flag "vector" -> "mte3", 0
// CHECK-NEXT:    npu.dma "mte3"
// CHECK-NEXT:    func.return
module attributes {npu.machine = "davinci"} {
  func.func @chain(%A: memref<64x128xf16, "gm">, %B: memref<128x64xf16, "gm">, %Y: memref<64x64xf16, "gm">) {
    %a1 = npu.buffer offset 0 : memref<64x128xf16, "l1">
    %b1 = npu.buffer offset 16384 : memref<128x64xf16, "l1">
    %a0 = npu.buffer offset 0 : memref<64x128xf16, "l0a">
    %b0 = npu.buffer offset 0 : memref<128x64xf16, "l0b">
    %c = npu.buffer offset 0 : memref<64x64xf32, "l0c">
    %y = npu.buffer offset 0 : memref<64x64xf16, "ub">
    npu.dma "mte2" %A[0, 0] -> %a1[0, 0] {shape = array<i64: 64, 128>} : memref<64x128xf16, "gm"> -> memref<64x128xf16, "l1">
    npu.dma "mte2" %B[0, 0] -> %b1[0, 0] {shape = array<i64: 128, 64>} : memref<128x64xf16, "gm"> -> memref<128x64xf16, "l1">
    npu.dma "mte1" %a1[0, 0] -> %a0[0, 0] {shape = array<i64: 64, 128>} : memref<64x128xf16, "l1"> -> memref<64x128xf16, "l0a">
    npu.dma "mte1" %b1[0, 0] -> %b0[0, 0] {shape = array<i64: 128, 64>} : memref<128x64xf16, "l1"> -> memref<128x64xf16, "l0b">
    npu.mma %a0[0, 0], %b0[0, 0] -> %c[0, 0] {m = 64 : i64, n = 64 : i64, k = 128 : i64} : memref<64x128xf16, "l0a">, memref<128x64xf16, "l0b"> -> memref<64x64xf32, "l0c">
    npu.dma "fixpipe" %c[0, 0] -> %y[0, 0] {shape = array<i64: 64, 64>} : memref<64x64xf32, "l0c"> -> memref<64x64xf16, "ub">
    npu.vec.relu %y[0, 0] -> %y[0, 0] {repeat = 32 : i64} : memref<64x64xf16, "ub"> -> memref<64x64xf16, "ub">
    npu.dma "mte3" %y[0, 0] -> %Y[0, 0] {shape = array<i64: 64, 64>} : memref<64x64xf16, "ub"> -> memref<64x64xf16, "gm">
    func.return
  }
}

// -----

// mte3 reads %x, which mte2 wrote, but it already waits for the vector unit, which waited for
// mte2 before reading %x: that chain orders it, so no flag goes from mte2 to mte3.
// Buffers at different offsets of one space are independent (the dup into %elsewhere waits for
// nothing); at overlapping offsets they are one: the load into %alias overwrites bytes of %x and
// %y that mte3 and the vector unit read, and the flag from mte3 orders it after both.
// CHECK-LABEL: func.func @transitive
// CHECK:         npu.dma "mte2" %X[0] -> %x[0]
// CHECK-NEXT:    npu.set_flag "mte2" -> "vector", 0
// CHECK-NEXT:    npu.wait_flag "mte2" -> "vector", 0
// CHECK-NEXT:    npu.vec.relu %x[0] -> %y[0]
// CHECK-NEXT:    npu.set_flag "vector" -> "mte3", 0
// CHECK-NEXT:    npu.wait_flag "vector" -> "mte3", 0
// CHECK-NEXT:    npu.dma "mte3" %y[0] -> %Y[0]
// CHECK-NEXT:    npu.dma "mte3" %x[0] -> %Z[0]
// CHECK-NEXT:    npu.set_flag "mte3" -> "mte2", 0
// CHECK-NEXT:    npu.vec.dup %elsewhere[0]
// CHECK-NEXT:    npu.wait_flag "mte3" -> "mte2", 0
// CHECK-NEXT:    npu.dma "mte2" %X[0] -> %alias[0]
// CHECK-NEXT:    func.return
module attributes {npu.machine = "davinci"} {
  func.func @transitive(%X: memref<64xf32, "gm">, %Y: memref<64xf32, "gm">, %Z: memref<64xf32, "gm">) {
    %x = npu.buffer offset 0 : memref<64xf32, "ub">
    %y = npu.buffer offset 256 : memref<64xf32, "ub">
    %elsewhere = npu.buffer offset 512 : memref<64xf32, "ub">
    %alias = npu.buffer offset 128 : memref<64xf32, "ub">
    npu.dma "mte2" %X[0] -> %x[0] {shape = array<i64: 64>} : memref<64xf32, "gm"> -> memref<64xf32, "ub">
    npu.vec.relu %x[0] -> %y[0] : memref<64xf32, "ub"> -> memref<64xf32, "ub">
    npu.dma "mte3" %y[0] -> %Y[0] {shape = array<i64: 64>} : memref<64xf32, "ub"> -> memref<64xf32, "gm">
    npu.dma "mte3" %x[0] -> %Z[0] {shape = array<i64: 64>} : memref<64xf32, "ub"> -> memref<64xf32, "gm">
    npu.vec.dup %elsewhere[0] {scalar = 1.0 : f64} : memref<64xf32, "ub">
    npu.dma "mte2" %X[0] -> %alias[0] {shape = array<i64: 64>} : memref<64xf32, "gm"> -> memref<64xf32, "ub">
    func.return
  }
}

// -----

// One buffer per stage reused by every iteration: besides the flags within an iteration, the next
// iteration's load must wait until the vector unit has read the buffer, and its relu until the
// store has read the result: flags carried around the loop, set once before it and waited once after.
// The load before the loop is waited for before it; the load after it waits for the loop's last
// store, which (the loop runs at least once) waited for its last relu: one flag orders both.
// CHECK-LABEL: func.func @carried
// CHECK:         npu.dma "mte2" %X[0, 0] -> %first[0]
// CHECK-NEXT:    npu.set_flag "mte2" -> "vector", 0
// CHECK-NEXT:    npu.set_flag "vector" -> "mte2", 0
// CHECK-NEXT:    npu.set_flag "mte3" -> "vector", 0
// CHECK-NEXT:    npu.wait_flag "mte2" -> "vector", 0
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      npu.wait_flag "vector" -> "mte2", 0
// CHECK-NEXT:      npu.dma "mte2" %X[%i, 0] -> %x[0]
// CHECK-NEXT:      npu.set_flag "mte2" -> "vector", 0
// CHECK-NEXT:      npu.wait_flag "mte2" -> "vector", 0
// CHECK-NEXT:      npu.wait_flag "mte3" -> "vector", 0
// CHECK-NEXT:      npu.vec.add %x[0], %first[0] -> %y[0]
// CHECK-NEXT:      npu.set_flag "vector" -> "mte2", 0
// CHECK-NEXT:      npu.set_flag "vector" -> "mte3", 0
// CHECK-NEXT:      npu.wait_flag "vector" -> "mte3", 0
// CHECK-NEXT:      npu.dma "mte3" %y[0] -> %Y[%i, 0]
// CHECK-NEXT:      npu.set_flag "mte3" -> "vector", 0
// CHECK-NEXT:    {{^    }$}}
// CHECK-NEXT:    npu.set_flag "mte3" -> "mte2", 0
// CHECK-NEXT:    npu.wait_flag "mte3" -> "vector", 0
// CHECK-NEXT:    npu.wait_flag "vector" -> "mte2", 0
// CHECK-NEXT:    npu.wait_flag "mte3" -> "mte2", 0
// CHECK-NEXT:    npu.dma "mte2" %X[0, 0] -> %y[0]
module attributes {npu.machine = "davinci"} {
  func.func @carried(%X: memref<8x64xf32, "gm">, %Y: memref<8x64xf32, "gm">) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %first = npu.buffer offset 0 : memref<64xf32, "ub">
    %x = npu.buffer offset 256 : memref<64xf32, "ub">
    %y = npu.buffer offset 512 : memref<64xf32, "ub">
    npu.dma "mte2" %X[0, 0] -> %first[0] {shape = array<i64: 64>} : memref<8x64xf32, "gm"> -> memref<64xf32, "ub">
    scf.for %i = %c0 to %c8 step %c1 {
      npu.dma "mte2" %X[%i, 0] -> %x[0] {shape = array<i64: 64>} : memref<8x64xf32, "gm"> -> memref<64xf32, "ub">
      npu.vec.add %x[0], %first[0] -> %y[0] : memref<64xf32, "ub">, memref<64xf32, "ub"> -> memref<64xf32, "ub">
      npu.dma "mte3" %y[0] -> %Y[%i, 0] {shape = array<i64: 64>} : memref<64xf32, "ub"> -> memref<8x64xf32, "gm">
    }
    npu.dma "mte2" %X[0, 0] -> %y[0] {shape = array<i64: 64>} : memref<8x64xf32, "gm"> -> memref<64xf32, "ub">
    func.return
  }
}

// -----

// A weight in a global reads bytes of its own, and a buffer the pass cannot trace (%Bv, from a
// cast) may be anywhere in its space but nowhere else: neither load from gm waits for the mte1
// write into l0b before it (the in-order mte2 queue alone orders them); the mte3 store into gm
// does wait for mte2 having read %Bv, which it may overlap there.
// CHECK-LABEL: func.func @global_and_untraced
// CHECK:         npu.dma "mte2" %A
// CHECK-NEXT:    npu.set_flag "mte2" -> "mte1", 0
// CHECK-NEXT:    npu.wait_flag "mte2" -> "mte1", 0
// CHECK-NEXT:    npu.dma "mte1" %a1
// CHECK-NEXT:    npu.dma "mte2" %W
// CHECK-NEXT:    npu.dma "mte2" %Bv
// CHECK-NEXT:    npu.set_flag "mte2" -> "mte3", 0
// CHECK-NEXT:    npu.wait_flag "mte2" -> "mte3", 0
// CHECK-NEXT:    npu.dma "mte3" %u[0, 0] -> %Y
module attributes {npu.machine = "davinci"} {
  "memref.global"() <{sym_name = "weight", type = memref<64x64xf16, "gm">, initial_value = dense<1.000000e+00> : tensor<64x64xf16>, sym_visibility = "private", constant}> : () -> ()
  func.func @global_and_untraced(%A: memref<64x64xf16, "gm">, %B: memref<4096xf16, "gm">, %Y: memref<64x64xf16, "gm">) {
    %a1 = npu.buffer offset 0 : memref<64x64xf16, "l1">
    %w1 = npu.buffer offset 8192 : memref<64x64xf16, "l1">
    %b1 = npu.buffer offset 16384 : memref<64x64xf16, "l1">
    %a0 = npu.buffer offset 0 : memref<64x64xf16, "l0b">
    %u = npu.buffer offset 0 : memref<64x64xf16, "ub">
    %W = memref.get_global @weight : memref<64x64xf16, "gm">
    %Bv = builtin.unrealized_conversion_cast %B : memref<4096xf16, "gm"> to memref<64x64xf16, "gm">
    npu.dma "mte2" %A[0, 0] -> %a1[0, 0] {shape = array<i64: 64, 64>} : memref<64x64xf16, "gm"> -> memref<64x64xf16, "l1">
    npu.dma "mte1" %a1[0, 0] -> %a0[0, 0] {shape = array<i64: 64, 64>} : memref<64x64xf16, "l1"> -> memref<64x64xf16, "l0b">
    npu.dma "mte2" %W[0, 0] -> %w1[0, 0] {shape = array<i64: 64, 64>} : memref<64x64xf16, "gm"> -> memref<64x64xf16, "l1">
    npu.dma "mte2" %Bv[0, 0] -> %b1[0, 0] {shape = array<i64: 64, 64>} : memref<64x64xf16, "gm"> -> memref<64x64xf16, "l1">
    npu.dma "mte3" %u[0, 0] -> %Y[0, 0] {shape = array<i64: 64, 64>} : memref<64x64xf16, "ub"> -> memref<64x64xf16, "gm">
    func.return
  }
}
