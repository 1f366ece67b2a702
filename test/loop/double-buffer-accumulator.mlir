// RUN: ziggurat-opt %s --split-input-file -p 'loop-double-buffer{machine=davinci}' | filecheck %s
// RUN: ziggurat-run %s --function tiles --seed 1 --print > %t.before
// RUN: ziggurat-opt %s -p 'loop-double-buffer{machine=davinci}' | ziggurat-run - --function tiles --seed 1 --print > %t.after
// RUN: diff %t.before %t.after

// An accumulator zeroed whole at the start of every iteration of the output-tile loop, and
// drained by a copy at its end, carries nothing from one tile to the next: it gets two slots,
// so that the drain of one tile overlaps the next tile's matrix instructions.
// CHECK-LABEL: func.func @tiles
// CHECK:         %[[ACC:.*]] = memref.alloc() : memref<2x16x32xf32, "l0c">
// CHECK-NEXT:    %[[SLOT0:.*]] = memref.subview %[[ACC]][0, 0, 0] [1, 16, 32] [1, 1, 1]
// CHECK-NEXT:    %[[SLOT1:.*]] = memref.subview %[[ACC]][1, 0, 0] [1, 16, 32] [1, 1, 1]
// CHECK:         scf.for
// CHECK:           linalg.fill ins(%{{.*}} : f32) outs(%[[SLOT0]] :
// CHECK:           linalg.generic {{.*}} outs(%[[SLOT0]] :
// CHECK:           loop.copy %[[SLOT0]] -> %{{.*}} :
// CHECK:           linalg.fill ins(%{{.*}} : f32) outs(%[[SLOT1]] :
// CHECK:           linalg.generic {{.*}} outs(%[[SLOT1]] :
// CHECK:           loop.copy %[[SLOT1]] -> %{{.*}} :
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
func.func @tiles(%A: memref<64x32xf16, "l0a">, %B: memref<32x32xf16, "l0b">, %result0: memref<64x32xf32, "gm">) {
  %zero = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %acc = memref.alloc() : memref<16x32xf32, "l0c">
  scf.for %i = %c0 to %c64 step %c16 {
    linalg.fill ins(%zero : f32) outs(%acc : memref<16x32xf32, "l0c">)
    %a = memref.subview %A[%i, 0] [16, 32] [1, 1] : memref<64x32xf16, "l0a"> to memref<16x32xf16, strided<[32, 1], offset: ?>, "l0a">
    linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %B : memref<16x32xf16, strided<[32, 1], offset: ?>, "l0a">, memref<32x32xf16, "l0b">) outs(%acc : memref<16x32xf32, "l0c">) {
    ^bb0(%x: f16, %y: f16, %s: f32):
      %xe = arith.extf %x : f16 to f32
      %ye = arith.extf %y : f16 to f32
      %p = arith.mulf %xe, %ye : f32
      %t = arith.addf %s, %p : f32
      linalg.yield %t : f32
    }
    %out = memref.subview %result0[%i, 0] [16, 32] [1, 1] : memref<64x32xf32, "gm"> to memref<16x32xf32, strided<[32, 1], offset: ?>, "gm">
    loop.copy %acc -> %out : memref<16x32xf32, "l0c"> -> memref<16x32xf32, strided<[32, 1], offset: ?>, "gm">
  }
  func.return
}

// -----

// Read before it is zeroed: the sum runs on from one iteration to the next, so it stays single.
// CHECK-LABEL: func.func @carried
// CHECK:         memref.alloc() : memref<16x32xf32, "l0c">
// CHECK-NOT:     memref.subview
func.func @carried(%result0: memref<16x32xf32, "gm">) {
  %zero = arith.constant 0.000000e+00 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %acc = memref.alloc() : memref<16x32xf32, "l0c">
  scf.for %i = %c0 to %c4 step %c1 {
    loop.copy %acc -> %result0 : memref<16x32xf32, "l0c"> -> memref<16x32xf32, "gm">
    linalg.fill ins(%zero : f32) outs(%acc : memref<16x32xf32, "l0c">)
  }
  func.return
}
