// RUN: ziggurat-opt %s --split-input-file -p 'loop-double-buffer{machine=davinci}' | filecheck %s
// RUN: ziggurat-run %s --function three --seed 4 --print > %t.before
// RUN: ziggurat-opt %s -p 'loop-double-buffer{machine=davinci}' | ziggurat-run - --function three --seed 4 --print > %t.after
// RUN: diff %t.before %t.after

// A fusion group's `tile.buffering` (on its root ops, as ziggurat-tune sets it on the graph op)
// overrides the pass's depth in the loops around them: 3 slots, the loop unrolled by 3.
// CHECK-LABEL: func.func @three
// CHECK:         memref.alloc() : memref<3x8x16xf16, "ub">
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-COUNT-3:   loop.copy_async
func.func @three(%x: memref<48x16xf16, "gm">, %result0: memref<48x16xf16, "gm">) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c48 = arith.constant 48 : index
  %zero = arith.constant 0.0 : f16
  %in = memref.alloc() : memref<8x16xf16, "ub">
  scf.for %i = %c0 to %c48 step %c8 {
    %s = memref.subview %x[%i, 0] [8, 16] [1, 1] : memref<48x16xf16, "gm"> to memref<8x16xf16, strided<[16, 1], offset: ?>, "gm">
    %t = loop.copy_async %s -> %in : memref<8x16xf16, strided<[16, 1], offset: ?>, "gm"> -> memref<8x16xf16, "ub">
    loop.wait %t : !loop.token
    %o = memref.subview %result0[%i, 0] [8, 16] [1, 1] : memref<48x16xf16, "gm"> to memref<8x16xf16, strided<[16, 1], offset: ?>, "gm">
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%in, %zero : memref<8x16xf16, "ub">, f16) outs(%o : memref<8x16xf16, strided<[16, 1], offset: ?>, "gm">) attrs = {tile.buffering = 3 : i64, tile.root} {
    ^bb0(%a: f16, %b: f16, %out: f16):
      %m = arith.maximumf %a, %b : f16
      linalg.yield %m : f16
    }
  }
  func.return
}

// -----

// tile.buffering = 1: single buffers, the loop as it was.
// CHECK-LABEL: func.func @single
// CHECK:         memref.alloc() : memref<8x16xf16, "ub">
// CHECK-NOT:     memref.subview %{{.*}}[1, 0, 0]
func.func @single(%x: memref<48x16xf16, "gm">, %result0: memref<48x16xf16, "gm">) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c48 = arith.constant 48 : index
  %zero = arith.constant 0.0 : f16
  %in = memref.alloc() : memref<8x16xf16, "ub">
  scf.for %i = %c0 to %c48 step %c8 {
    %s = memref.subview %x[%i, 0] [8, 16] [1, 1] : memref<48x16xf16, "gm"> to memref<8x16xf16, strided<[16, 1], offset: ?>, "gm">
    %t = loop.copy_async %s -> %in : memref<8x16xf16, strided<[16, 1], offset: ?>, "gm"> -> memref<8x16xf16, "ub">
    loop.wait %t : !loop.token
    %o = memref.subview %result0[%i, 0] [8, 16] [1, 1] : memref<48x16xf16, "gm"> to memref<8x16xf16, strided<[16, 1], offset: ?>, "gm">
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%in, %zero : memref<8x16xf16, "ub">, f16) outs(%o : memref<8x16xf16, strided<[16, 1], offset: ?>, "gm">) attrs = {tile.buffering = 1 : i64, tile.root} {
    ^bb0(%a: f16, %b: f16, %out: f16):
      %m = arith.maximumf %a, %b : f16
      linalg.yield %m : f16
    }
  }
  func.return
}
