// What loop-stage-reduction leaves in the loop. Without `all`, only loops of roots marked
// tile.stage_reduction are staged; with all=true every loop holding a contraction is, but a copy
// that pads along the dim the loop walks, or whose buffer a compute op reads (not a staging hop),
// stays.
// RUN: ziggurat-opt %s -p 'loop-stage-reduction' | filecheck %s --check-prefix=MARKED
// RUN: ziggurat-opt %s -p 'loop-stage-reduction{all=true}' | filecheck %s --check-prefix=ALL

// MARKED-LABEL: func.func @unmarked
// MARKED:         scf.for %[[K:.*]] =
// MARKED-NEXT:      memref.subview %a[0, %[[K]]] [64, 64]
// MARKED-NEXT:      loop.copy_async %{{.*}} -> %{{.*}} : {{.*}} -> memref<64x64xf16, "l1">
// ALL-LABEL:    func.func @unmarked
// ALL:            memref.alloc() : memref<64x256xf16, "l1">
// ALL:            loop.copy_async %{{.*}} -> %{{.*}} : memref<64x256xf16, strided<[256, 1]>, "gm"> -> memref<64x256xf16, "l1">
// ALL-NEXT:       loop.wait
// ALL-NEXT:       scf.for
func.func @unmarked(%a: memref<64x256xf16, "gm">, %b: memref<64x64xf16, "l0b">, %acc: memref<64x64xf32, "l0c">) {
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
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%l0a, %b : memref<64x64xf16, "l0a">, memref<64x64xf16, "l0b">) outs(%acc : memref<64x64xf32, "l0c">) {
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

// The copy pads the K dim (60 of each 64 columns read, 4 zeros): the slices do not tile one range.
// MARKED-LABEL: func.func @padded_k
// MARKED:         scf.for
// MARKED-NEXT:      memref.subview
// MARKED-NEXT:      loop.copy_async {{.*}} -> memref<64x64xf16, "l1">
// ALL-LABEL:    func.func @padded_k
// ALL-NOT:        memref<64x240xf16, "l1">
// ALL:            scf.for
// ALL-NEXT:         memref.subview
// ALL-NEXT:         loop.copy_async {{.*}} -> memref<64x64xf16, "l1">
func.func @padded_k(%a: memref<64x240xf16, "gm">, %b: memref<64x64xf16, "l0b">, %acc: memref<64x64xf32, "l0c">) {
  %c0 = arith.constant 0 : index
  %c60 = arith.constant 60 : index
  %c240 = arith.constant 240 : index
  %l1 = memref.alloc() : memref<64x64xf16, "l1">
  %l0a = memref.alloc() : memref<64x64xf16, "l0a">
  scf.for %k = %c0 to %c240 step %c60 {
    %s = memref.subview %a[0, %k] [64, 60] [1, 1] : memref<64x240xf16, "gm"> to memref<64x60xf16, strided<[240, 1], offset: ?>, "gm">
    %t = loop.copy_async %s -> %l1 {pad = array<i64: 0, 0, 0, 4>} : memref<64x60xf16, strided<[240, 1], offset: ?>, "gm"> -> memref<64x64xf16, "l1">
    loop.wait %t : !loop.token
    %u = loop.copy_async %l1 -> %l0a : memref<64x64xf16, "l1"> -> memref<64x64xf16, "l0a">
    loop.wait %u : !loop.token
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%l0a, %b : memref<64x64xf16, "l0a">, memref<64x64xf16, "l0b">) outs(%acc : memref<64x64xf32, "l0c">) attrs = {tile.stage_reduction} {
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

// The contraction reads the copied buffer itself: it is an operand, not a staging hop.
// MARKED-LABEL: func.func @operand
// MARKED:         scf.for
// MARKED-NEXT:      memref.subview
// MARKED-NEXT:      loop.copy_async {{.*}} -> memref<64x64xf16, "l0a">
// ALL-LABEL:    func.func @operand
// ALL:            scf.for
// ALL-NEXT:         memref.subview
// ALL-NEXT:         loop.copy_async {{.*}} -> memref<64x64xf16, "l0a">
func.func @operand(%a: memref<64x256xf16, "gm">, %b: memref<64x64xf16, "l0b">, %acc: memref<64x64xf32, "l0c">) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %l0a = memref.alloc() : memref<64x64xf16, "l0a">
  scf.for %k = %c0 to %c256 step %c64 {
    %s = memref.subview %a[0, %k] [64, 64] [1, 1] : memref<64x256xf16, "gm"> to memref<64x64xf16, strided<[256, 1], offset: ?>, "gm">
    %t = loop.copy_async %s -> %l0a : memref<64x64xf16, strided<[256, 1], offset: ?>, "gm"> -> memref<64x64xf16, "l0a">
    loop.wait %t : !loop.token
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%l0a, %b : memref<64x64xf16, "l0a">, memref<64x64xf16, "l0b">) outs(%acc : memref<64x64xf32, "l0c">) attrs = {tile.stage_reduction} {
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
