// RUN: ziggurat-opt %s -p 'loop-double-buffer{machine=davinci}' --verify-diagnostics -o /dev/null

// A group's buffering depth must be at least one slot.
func.func @zero(%x: memref<48x16xf16, "gm">, %result0: memref<48x16xf16, "gm">) {
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
    // expected-error@+1 {{tile.buffering must be an integer >= 1, got 0 : i64}}
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%in, %zero : memref<8x16xf16, "ub">, f16) outs(%o : memref<8x16xf16, strided<[16, 1], offset: ?>, "gm">) attrs = {tile.buffering = 0 : i64, tile.root} {
    ^bb0(%a: f16, %b: f16, %out: f16):
      %m = arith.maximumf %a, %b : f16
      linalg.yield %m : f16
    }
  }
  func.return
}
