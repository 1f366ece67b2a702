// loop-hoist-copies leaves in the loop what is not invariant there.
// RUN: ziggurat-opt %s -p loop-hoist-copies | filecheck %s

// What must stay: a copy whose source the loop writes, a copy into a buffer the loop reads before
// the copy, and a copy whose view depends on the induction variable.

// CHECK-LABEL: func.func @stays
// CHECK:         scf.for
// CHECK-NEXT:      linalg.fill
// CHECK-NEXT:      loop.copy %src -> %l1
// CHECK-NEXT:      linalg.generic
// CHECK-NEXT:        ^
// CHECK-NEXT:        math.exp
// CHECK-NEXT:        linalg.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.copy %src -> %ub2
// CHECK-NEXT:      %v = memref.subview %x[%i]
// CHECK-NEXT:      %[[T:.*]] = loop.copy_async %v -> %ub3
// CHECK-NEXT:      loop.wait %[[T]]
// CHECK-NEXT:    }
func.func @stays(%x: memref<64xf16, "gm">, %src: memref<16xf16, "ub">, %l1: memref<16xf16, "l1">, %ub2: memref<16xf16, "ub">, %ub3: memref<16xf16, "ub">) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %h = arith.constant 1.0 : f16
  scf.for %i = %c0 to %c64 step %c16 {
    linalg.fill ins(%h : f16) outs(%src : memref<16xf16, "ub">)
    loop.copy %src -> %l1 : memref<16xf16, "ub"> -> memref<16xf16, "l1">
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%ub2 : memref<16xf16, "ub">) outs(%ub3 : memref<16xf16, "ub">) {
    ^bb0(%a: f16, %o: f16):
      %e = math.exp %a : f16
      linalg.yield %e : f16
    }
    loop.copy %src -> %ub2 : memref<16xf16, "ub"> -> memref<16xf16, "ub">
    %v = memref.subview %x[%i] [16] [1] : memref<64xf16, "gm"> to memref<16xf16, strided<[1], offset: ?>, "gm">
    %t = loop.copy_async %v -> %ub3 : memref<16xf16, strided<[1], offset: ?>, "gm"> -> memref<16xf16, "ub">
    loop.wait %t : !loop.token
  }
  func.return
}
