// npu-plan-memory: allocs become npu.buffers at aligned offsets; where a space is short, buffers
// never live at once share bytes.
// RUN: ziggurat-opt %s --split-input-file -p npu-plan-memory | filecheck %s

// Room for all: every buffer gets bytes of its own, so nothing orders the instructions that touch
// them; offsets follow the space's alignment (32 bytes in 'ub').
// CHECK-LABEL: func.func @roomy
// CHECK-NEXT:    %x = npu.buffer offset 0 : memref<64x64xf16, "ub">
// CHECK-NEXT:    %y = npu.buffer offset 8192 : memref<64x64xf16, "ub">
// CHECK-NEXT:    %odd = npu.buffer offset 16384 : memref<10xf16, "ub">
// CHECK-NEXT:    %w = npu.buffer offset 16416 : memref<8xf16, "ub">
// CHECK-NOT:     memref.alloc
module attributes {npu.machine = "davinci"} {
  func.func @roomy(%X: memref<64x64xf16, "gm">, %Y: memref<64x64xf16, "gm">) {
    %x = memref.alloc() : memref<64x64xf16, "ub">
    %y = memref.alloc() : memref<64x64xf16, "ub">
    %odd = memref.alloc() : memref<10xf16, "ub">
    %w = memref.alloc() : memref<8xf16, "ub">
    npu.dma "mte2" %X[0, 0] -> %x[0, 0] {shape = array<i64: 64, 64>} : memref<64x64xf16, "gm"> -> memref<64x64xf16, "ub">
    npu.vec.reduce "max" %x[0, 0] -> %odd[0] {repeat = 8 : i64, mask = 8 : i64} : memref<64x64xf16, "ub"> -> memref<10xf16, "ub">
    npu.vec.reduce "max" %odd[0] -> %w[0] {mask = 8 : i64} : memref<10xf16, "ub"> -> memref<8xf16, "ub">
    npu.vec.relu %x[0, 0] -> %y[0, 0] {repeat = 32 : i64} : memref<64x64xf16, "ub"> -> memref<64x64xf16, "ub">
    npu.dma "mte3" %y[0, 0] -> %Y[0, 0] {shape = array<i64: 64, 64>} : memref<64x64xf16, "ub"> -> memref<64x64xf16, "gm">
    func.return
  }
}

// -----

// 'ub' holds two of these: %x dies at the relu into %y, %z is first used after it, so %z takes
// %x's bytes (without reuse it does not fit: plan-memory-noreuse.mlir).
// CHECK-LABEL: func.func @short
// CHECK-NEXT:    %x = npu.buffer offset 0 : memref<64x1024xf16, "ub">
// CHECK-NEXT:    %y = npu.buffer offset 131072 : memref<64x1024xf16, "ub">
// CHECK-NEXT:    %z = npu.buffer offset 0 : memref<64x1024xf16, "ub">
module attributes {npu.machine = "davinci"} {
  func.func @short(%X: memref<64x1024xf16, "gm">, %Y: memref<64x1024xf16, "gm">) {
    %x = memref.alloc() : memref<64x1024xf16, "ub">
    %y = memref.alloc() : memref<64x1024xf16, "ub">
    %z = memref.alloc() : memref<64x1024xf16, "ub">
    npu.dma "mte2" %X[0, 0] -> %x[0, 0] {shape = array<i64: 64, 1024>} : memref<64x1024xf16, "gm"> -> memref<64x1024xf16, "ub">
    npu.vec.relu %x[0, 0] -> %y[0, 0] {repeat = 512 : i64} : memref<64x1024xf16, "ub"> -> memref<64x1024xf16, "ub">
    npu.vec.relu %y[0, 0] -> %z[0, 0] {repeat = 512 : i64} : memref<64x1024xf16, "ub"> -> memref<64x1024xf16, "ub">
    npu.dma "mte3" %z[0, 0] -> %Y[0, 0] {shape = array<i64: 64, 1024>} : memref<64x1024xf16, "ub"> -> memref<64x1024xf16, "gm">
    func.return
  }
}

// -----

// 'l0a' (64 KiB, 512-byte fractals) is short for three: %a is used inside the loop, %b only after
// it, so %a lives for the whole loop and %b may take its bytes after it. %t, used once per
// iteration, lives for the whole loop too: %b may not take its bytes either.
// CHECK-LABEL: func.func @loop
// CHECK:         %a = npu.buffer offset 0 : memref<16x1024xf16, "l0a">
// CHECK-NEXT:    %t = npu.buffer offset 32768 : memref<16x1024xf16, "l0a">
// CHECK-NEXT:    %b = npu.buffer offset 0 : memref<16x1024xf16, "l0a">
module attributes {npu.machine = "davinci"} {
  func.func @loop(%A: memref<16x64xf16, "gm">) {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %a = memref.alloc() : memref<16x1024xf16, "l0a">
    %t = memref.alloc() : memref<16x1024xf16, "l0a">
    %b = memref.alloc() : memref<16x1024xf16, "l0a">
    %l1 = memref.alloc() : memref<16x64xf16, "l1">
    npu.dma "mte2" %A[0, 0] -> %l1[0, 0] {shape = array<i64: 16, 64>} : memref<16x64xf16, "gm"> -> memref<16x64xf16, "l1">
    scf.for %k = %c0 to %c64 step %c16 {
      npu.dma "mte1" %l1[0, %k] -> %t[0, 0] {shape = array<i64: 16, 16>} : memref<16x64xf16, "l1"> -> memref<16x1024xf16, "l0a">
      npu.dma "mte1" %l1[0, %k] -> %a[0, 0] {shape = array<i64: 16, 16>} : memref<16x64xf16, "l1"> -> memref<16x1024xf16, "l0a">
    }
    npu.dma "mte1" %l1[0, 0] -> %b[0, 0] {shape = array<i64: 16, 16>} : memref<16x64xf16, "l1"> -> memref<16x1024xf16, "l0a">
    func.return
  }
}


// -----

// %w is overwritten whole by the first instruction of each iteration that touches it, so nothing
// of it is carried around the loop: it lives from that load to its last read, and %v, used only
// before it in the body, shares its bytes ('ub' is short for both).
// CHECK-LABEL: func.func @killed
// CHECK:         %v = npu.buffer offset 0 : memref<64x1024xf32, "ub">
// CHECK-NEXT:    %w = npu.buffer offset 0 : memref<64x1024xf32, "ub">
module attributes {npu.machine = "davinci"} {
  func.func @killed(%X: memref<64x1024xf32, "gm">, %Y: memref<64x1024xf32, "gm">) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %v = memref.alloc() : memref<64x1024xf32, "ub">
    %w = memref.alloc() : memref<64x1024xf32, "ub">
    scf.for %i = %c0 to %c4 step %c1 {
      npu.dma "mte2" %X[0, 0] -> %v[0, 0] {shape = array<i64: 64, 1024>} : memref<64x1024xf32, "gm"> -> memref<64x1024xf32, "ub">
      npu.dma "mte3" %v[0, 0] -> %Y[0, 0] {shape = array<i64: 64, 1024>} : memref<64x1024xf32, "ub"> -> memref<64x1024xf32, "gm">
      npu.dma "mte2" %X[0, 0] -> %w[0, 0] {shape = array<i64: 64, 1024>} : memref<64x1024xf32, "gm"> -> memref<64x1024xf32, "ub">
      npu.vec.relu %w[0, 0] -> %w[0, 0] {repeat = 1024 : i64} : memref<64x1024xf32, "ub"> -> memref<64x1024xf32, "ub">
      npu.dma "mte3" %w[0, 0] -> %Y[0, 0] {shape = array<i64: 64, 1024>} : memref<64x1024xf32, "ub"> -> memref<64x1024xf32, "gm">
    }
    func.return
  }
}

// -----

// 'ub' is short for all four: %early and %keep take 128 KiB each, so %ping and %pong must share
// bytes. They are a ping-pong pair: each is refilled whole before it is read again, so in program
// order they are never live at once, but their pipes use them at once (the load into one overlaps
// the work on the other). They take the bytes of %early, used only before them, not each other's.
// CHECK-LABEL: func.func @ping_pong_short
// CHECK-NEXT:    %early = npu.buffer offset 0 : memref<64x1024xf16, "ub">
// CHECK-NEXT:    %keep = npu.buffer offset 131072 : memref<64x1024xf16, "ub">
// CHECK-NEXT:    %ping = npu.buffer offset 0 : memref<16x1024xf16, "ub">
// CHECK-NEXT:    %pong = npu.buffer offset 32768 : memref<16x1024xf16, "ub">
module attributes {npu.machine = "davinci"} {
  func.func @ping_pong_short(%X: memref<64x1024xf16, "gm">, %Y: memref<64x1024xf16, "gm">, %Z: memref<64x1024xf16, "gm">) {
    %early = memref.alloc() : memref<64x1024xf16, "ub">
    %keep = memref.alloc() : memref<64x1024xf16, "ub">
    %ping = memref.alloc() : memref<16x1024xf16, "ub">
    %pong = memref.alloc() : memref<16x1024xf16, "ub">
    npu.dma "mte2" %X[0, 0] -> %early[0, 0] {shape = array<i64: 64, 1024>} : memref<64x1024xf16, "gm"> -> memref<64x1024xf16, "ub">
    npu.dma "mte2" %X[0, 0] -> %keep[0, 0] {shape = array<i64: 64, 1024>} : memref<64x1024xf16, "gm"> -> memref<64x1024xf16, "ub">
    npu.dma "mte3" %early[0, 0] -> %Y[0, 0] {shape = array<i64: 64, 1024>} : memref<64x1024xf16, "ub"> -> memref<64x1024xf16, "gm">
    npu.dma "mte2" %Z[0, 0] -> %ping[0, 0] {shape = array<i64: 16, 1024>} : memref<64x1024xf16, "gm"> -> memref<16x1024xf16, "ub">
    npu.vec.relu %ping[0, 0] -> %ping[0, 0] {repeat = 128 : i64} : memref<16x1024xf16, "ub"> -> memref<16x1024xf16, "ub">
    npu.dma "mte3" %ping[0, 0] -> %Z[0, 0] {shape = array<i64: 16, 1024>} : memref<16x1024xf16, "ub"> -> memref<64x1024xf16, "gm">
    npu.dma "mte2" %Z[16, 0] -> %pong[0, 0] {shape = array<i64: 16, 1024>} : memref<64x1024xf16, "gm"> -> memref<16x1024xf16, "ub">
    npu.vec.relu %pong[0, 0] -> %pong[0, 0] {repeat = 128 : i64} : memref<16x1024xf16, "ub"> -> memref<16x1024xf16, "ub">
    npu.dma "mte3" %pong[0, 0] -> %Z[16, 0] {shape = array<i64: 16, 1024>} : memref<16x1024xf16, "ub"> -> memref<64x1024xf16, "gm">
    npu.dma "mte2" %Z[32, 0] -> %ping[0, 0] {shape = array<i64: 16, 1024>} : memref<64x1024xf16, "gm"> -> memref<16x1024xf16, "ub">
    npu.vec.relu %ping[0, 0] -> %ping[0, 0] {repeat = 128 : i64} : memref<16x1024xf16, "ub"> -> memref<16x1024xf16, "ub">
    npu.dma "mte3" %ping[0, 0] -> %Z[32, 0] {shape = array<i64: 16, 1024>} : memref<16x1024xf16, "ub"> -> memref<64x1024xf16, "gm">
    npu.dma "mte2" %Z[48, 0] -> %pong[0, 0] {shape = array<i64: 16, 1024>} : memref<64x1024xf16, "gm"> -> memref<16x1024xf16, "ub">
    npu.vec.relu %pong[0, 0] -> %pong[0, 0] {repeat = 128 : i64} : memref<16x1024xf16, "ub"> -> memref<16x1024xf16, "ub">
    npu.dma "mte3" %pong[0, 0] -> %Z[48, 0] {shape = array<i64: 16, 1024>} : memref<16x1024xf16, "ub"> -> memref<64x1024xf16, "gm">
    npu.dma "mte3" %keep[0, 0] -> %Y[0, 0] {shape = array<i64: 64, 1024>} : memref<64x1024xf16, "ub"> -> memref<64x1024xf16, "gm">
    func.return
  }
}

// -----

// Bytes of their own for %a, %b and %c, each used alone, would take 240 KiB of 'ub' and leave
// %l, live across all three, no room: the space is planned again sharing bytes between buffers
// never live at once, so the three share offset 0 and %l comes after them.
// CHECK-LABEL: func.func @crowded
// CHECK-NEXT:    %l = npu.buffer offset 81920 : memref<32x1024xf16, "ub">
// CHECK-NEXT:    %a = npu.buffer offset 0 : memref<40x1024xf16, "ub">
// CHECK-NEXT:    %b = npu.buffer offset 0 : memref<40x1024xf16, "ub">
// CHECK-NEXT:    %c = npu.buffer offset 0 : memref<40x1024xf16, "ub">
module attributes {npu.machine = "davinci"} {
  func.func @crowded(%X: memref<40x1024xf16, "gm">, %Y: memref<40x1024xf16, "gm">, %L: memref<32x1024xf16, "gm">, %Z: memref<32x1024xf16, "gm">) {
    %l = memref.alloc() : memref<32x1024xf16, "ub">
    %a = memref.alloc() : memref<40x1024xf16, "ub">
    %b = memref.alloc() : memref<40x1024xf16, "ub">
    %c = memref.alloc() : memref<40x1024xf16, "ub">
    npu.dma "mte2" %L[0, 0] -> %l[0, 0] {shape = array<i64: 32, 1024>} : memref<32x1024xf16, "gm"> -> memref<32x1024xf16, "ub">
    npu.dma "mte2" %X[0, 0] -> %a[0, 0] {shape = array<i64: 40, 1024>} : memref<40x1024xf16, "gm"> -> memref<40x1024xf16, "ub">
    npu.dma "mte3" %a[0, 0] -> %Y[0, 0] {shape = array<i64: 40, 1024>} : memref<40x1024xf16, "ub"> -> memref<40x1024xf16, "gm">
    npu.dma "mte2" %X[0, 0] -> %b[0, 0] {shape = array<i64: 40, 1024>} : memref<40x1024xf16, "gm"> -> memref<40x1024xf16, "ub">
    npu.dma "mte3" %b[0, 0] -> %Y[0, 0] {shape = array<i64: 40, 1024>} : memref<40x1024xf16, "ub"> -> memref<40x1024xf16, "gm">
    npu.dma "mte2" %X[0, 0] -> %c[0, 0] {shape = array<i64: 40, 1024>} : memref<40x1024xf16, "gm"> -> memref<40x1024xf16, "ub">
    npu.dma "mte3" %c[0, 0] -> %Y[0, 0] {shape = array<i64: 40, 1024>} : memref<40x1024xf16, "ub"> -> memref<40x1024xf16, "gm">
    npu.dma "mte3" %l[0, 0] -> %Z[0, 0] {shape = array<i64: 32, 1024>} : memref<32x1024xf16, "ub"> -> memref<32x1024xf16, "gm">
    func.return
  }
}
