// RUN: ziggurat-opt %s -p 'loop-stage-reduction' --verify-diagnostics -o /dev/null

// tile.stage_reduction is present or absent: a value is a mistake, not a setting.
func.func @valued(%a: memref<64x256xf16, "gm">, %b: memref<64x64xf16, "l0b">, %acc: memref<64x64xf32, "l0c">) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %l1 = memref.alloc() : memref<64x64xf16, "l1">
  %l0a = memref.alloc() : memref<64x64xf16, "l0a">
  scf.for %k = %c0 to %c256 step %c64 {
    %s = memref.subview %a[0, %k] [64, 64] [1, 1] : memref<64x256xf16, "gm"> to memref<64x64xf16, strided<[256, 1], offset: ?>, "gm">
    %t = loop.copy_async %s -> %l1 : memref<64x64xf16, strided<[256, 1], offset: ?>, "gm"> -> memref<64x64xf16, "l1">
    loop.wait %t : !loop.token
    %u = loop.copy_async %l1 -> %l0a : memref<64x64xf16, "l1"> -> memref<64x64xf16, "l0a">
    loop.wait %u : !loop.token
    // expected-error@+1 {{tile.stage_reduction is a unit attribute (present or absent), got 1 : i64}}
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%l0a, %b : memref<64x64xf16, "l0a">, memref<64x64xf16, "l0b">) outs(%acc : memref<64x64xf32, "l0c">) attrs = {tile.stage_reduction = 1 : i64} {
    ^bb0(%x: f16, %y: f16, %o: f32):
      %xe = arith.extf %x : f16 to f32
      %ye = arith.extf %y : f16 to f32
      %p = arith.mulf %xe, %ye : f32
      %r = arith.addf %o, %p : f32
      linalg.yield %r : f32
    }
  }
  func.return
}
