// loop-double-buffer leaves alone what it cannot or should not split.
// RUN: ziggurat-opt %s -p 'loop-double-buffer{machine=davinci}' | filecheck %s
// RUN: ziggurat-opt %s -p 'loop-double-buffer' | filecheck %s --check-prefix=NOMACHINE

// A buffer read after the loop keeps one slot; a loop with dynamic bounds or a single iteration
// is not unrolled; with the machine, a 160 KiB ub buffer stays single (two slots exceed 256 KiB).

// Without a machine there is no capacity to respect:
// NOMACHINE: memref.alloc() : memref<2x81920xf16, "ub">

// CHECK-LABEL: func.func @stays
// CHECK-NEXT:    %used_after = memref.alloc() : memref<16xf16, "ub">
// CHECK-NEXT:    %big = memref.alloc() : memref<81920xf16, "ub">
// CHECK-NOT:     memref<2x
// CHECK-COUNT-3: scf.for
func.func @stays(%x: memref<64xf16, "gm">, %y: memref<81920xf16, "gm">, %z: memref<16xf16, "gm">, %n: index) {
  %used_after = memref.alloc() : memref<16xf16, "ub">
  %big = memref.alloc() : memref<81920xf16, "ub">
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %c64 step %c16 {
    %v = memref.subview %x[%i] [16] [1] : memref<64xf16, "gm"> to memref<16xf16, strided<[1], offset: ?>, "gm">
    loop.copy %v -> %used_after : memref<16xf16, strided<[1], offset: ?>, "gm"> -> memref<16xf16, "ub">
    loop.copy %y -> %big : memref<81920xf16, "gm"> -> memref<81920xf16, "ub">
  }
  loop.copy %used_after -> %z : memref<16xf16, "ub"> -> memref<16xf16, "gm">
  scf.for %i = %c0 to %n step %c16 {
    %t = memref.alloc() : memref<16xf16, "ub">
    loop.copy %z -> %t : memref<16xf16, "gm"> -> memref<16xf16, "ub">
  }
  scf.for %i = %c0 to %c16 step %c16 {
    %t = memref.alloc() : memref<16xf16, "ub">
    loop.copy %z -> %t : memref<16xf16, "gm"> -> memref<16xf16, "ub">
  }
  func.return
}
