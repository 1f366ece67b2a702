// loop-promote-to-memory-space and loop-legalize-copies make the program's own copies (tile-to-loop's
// pads) doable by the machine's engines: a buffer only copies fill moves next to its readers when
// the engine on the way pads, and a copy no single engine does is split along its route (the first engine that
// pads pads; else the first vector space on the route is zero-filled and the copy writes its interior).
// RUN: ziggurat-opt %s --split-input-file -p 'loop-promote-to-memory-space{machine=davinci},loop-legalize-copies{machine=davinci}' | filecheck %s --check-prefix=DAVINCI
// RUN: ziggurat-opt %s --split-input-file -p 'loop-promote-to-memory-space{machine=tensorcore},loop-legalize-copies{machine=tensorcore}' | filecheck %s --check-prefix=TC

// A padded input that a contraction reads: on davinci mte2 pads on the way into l1, where the
// padded tile stays for l1 -> l0a; tensorcore's cp.async cannot pad, so the buffer stays in gm and
// the pad goes gm -> smem -> rf (zero-filled, interior written) -> gm.

// DAVINCI-LABEL: func.func @padded_input
// DAVINCI:         %xp = memref.alloc() : memref<18x16xf16, "l1">
// DAVINCI:         loop.copy %x -> %xp {pad = array<i64: 1, 1, 0, 0>, pad_value = 0.000000e+00 : f64} : memref<16x16xf16, "gm"> -> memref<18x16xf16, "l1">
// DAVINCI:         %v = memref.subview %xp[2, 0] [16, 16] [1, 1] : memref<18x16xf16, "l1"> to memref<16x16xf16, strided<[16, 1], offset: 32>, "l1">
// DAVINCI:         loop.copy_async %v -> %{{.*}} : memref<16x16xf16, strided<[16, 1], offset: 32>, "l1"> -> memref<16x16xf16, "l0a">

// TC-LABEL: func.func @padded_input
// TC:         %xp = memref.alloc() : memref<18x16xf16, "gm">
// TC:         %[[R:.*]] = memref.alloc() : memref<18x16xf16, "rf">
// TC:         loop.copy_async %x -> %[[S:.*]] : memref<16x16xf16, "gm"> -> memref<16x16xf16, "smem">
// TC:         linalg.fill ins(%{{.*}} : f16) outs(%[[R]] : memref<18x16xf16, "rf">)
// TC-NEXT:    %[[I:.*]] = memref.subview %[[R]][1, 0] [16, 16] [1, 1] : memref<18x16xf16, "rf"> to memref<16x16xf16, strided<[16, 1], offset: 16>, "rf">
// TC-NEXT:    loop.copy_async %[[S]] -> %[[I]]
// TC-NEXT:    loop.wait
// TC-NEXT:    loop.copy_async %[[R]] -> %xp : memref<18x16xf16, "rf"> -> memref<18x16xf16, "gm">
// TC-NOT:     loop.copy %x
func.func @padded_input(%x: memref<16x16xf16, "gm">, %w: memref<16x16xf16, "gm">, %result0: memref<16x16xf32, "gm">) {
  %zero = arith.constant 0.0 : f32
  %xp = memref.alloc() : memref<18x16xf16, "gm">
  loop.copy %x -> %xp {pad = array<i64: 1, 1, 0, 0>, pad_value = 0.0 : f64} : memref<16x16xf16, "gm"> -> memref<18x16xf16, "gm">
  %acc = memref.alloc() : memref<16x16xf32, "gm">
  linalg.fill ins(%zero : f32) outs(%acc : memref<16x16xf32, "gm">)
  %v = memref.subview %xp[2, 0] [16, 16] [1, 1] : memref<18x16xf16, "gm"> to memref<16x16xf16, strided<[16, 1], offset: 32>, "gm">
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%v, %w : memref<16x16xf16, strided<[16, 1], offset: 32>, "gm">, memref<16x16xf16, "gm">) outs(%acc : memref<16x16xf32, "gm">) {
  ^bb0(%a: f16, %b: f16, %o: f32):
    %ae = arith.extf %a : f16 to f32
    %be = arith.extf %b : f16 to f32
    %p = arith.mulf %ae, %be : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  loop.copy %acc -> %result0 : memref<16x16xf32, "gm"> -> memref<16x16xf32, "gm">
  func.return
}

// -----

// A pad from global memory to global memory: out and back through the nearest space (davinci:
// gm -> ub, mte2 padding, -> gm).

// DAVINCI-LABEL: func.func @global_pad
// DAVINCI-NEXT:    %[[U:.*]] = memref.alloc() : memref<4x10xf32, "ub">
// DAVINCI-NEXT:    %[[T0:.*]] = loop.copy_async %x -> %[[U]] {pad = array<i64: 0, 0, 1, 1>, pad_value = -1.000000e+00 : f64} : memref<4x8xf32, "gm"> -> memref<4x10xf32, "ub">
// DAVINCI-NEXT:    loop.wait %[[T0]]
// DAVINCI-NEXT:    %[[T1:.*]] = loop.copy_async %[[U]] -> %result0 : memref<4x10xf32, "ub"> -> memref<4x10xf32, "gm">
// DAVINCI-NEXT:    loop.wait %[[T1]]
// DAVINCI-NEXT:    func.return
func.func @global_pad(%x: memref<4x8xf32, "gm">, %result0: memref<4x10xf32, "gm">) {
  loop.copy %x -> %result0 {pad = array<i64: 0, 0, 1, 1>, pad_value = -1.0 : f64} : memref<4x8xf32, "gm"> -> memref<4x10xf32, "gm">
  func.return
}
