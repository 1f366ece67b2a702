// loop-legalize-copies on davinci (mte2: gm -> l1, gm -> ub, pads; mte1: l1 -> l0a/l0b, pads;
// mte3: ub -> gm; fixpipe: l0c -> ub/gm, casts): a copy no single engine does becomes one copy
// per hop of its route; one that an engine does stays. The numbers stay the same.
// RUN: ziggurat-opt %s -p 'loop-legalize-copies{machine=davinci}' | filecheck %s
// RUN: ziggurat-run %s --function pad_within_gm --seed 1 --print > %t.pad.before
// RUN: ziggurat-opt %s -p 'loop-legalize-copies{machine=davinci}' | ziggurat-run - --function pad_within_gm --seed 1 --print > %t.pad.after
// RUN: diff %t.pad.before %t.pad.after
// RUN: ziggurat-run %s --function cast_within_ub --seed 1 --print > %t.within.before
// RUN: ziggurat-opt %s -p 'loop-legalize-copies{machine=davinci}' | ziggurat-run - --function cast_within_ub --seed 1 --print > %t.within.after
// RUN: diff %t.within.before %t.within.after
// RUN: ziggurat-run %s --function cast_out_of_ub --seed 1 --print > %t.out.before
// RUN: ziggurat-opt %s -p 'loop-legalize-copies{machine=davinci}' | ziggurat-run - --function cast_out_of_ub --seed 1 --print > %t.out.after
// RUN: diff %t.out.before %t.out.after
// RUN: ziggurat-run %s --function pad_by_fill --seed 1 --print > %t.fill.before
// RUN: ziggurat-opt %s -p 'loop-legalize-copies{machine=davinci}' | ziggurat-run - --function pad_by_fill --seed 1 --print > %t.fill.after
// RUN: diff %t.fill.before %t.fill.after

// No path from gm to gm: out through ub (mte2 pads on the way) and back.
// CHECK-LABEL: func.func @pad_within_gm(
// CHECK-NEXT:    %[[U:.*]] = memref.alloc() : memref<4x10xf32, "ub">
// CHECK-NEXT:    %[[T0:.*]] = loop.copy_async %x -> %[[U]] {pad = array<i64: 0, 0, 1, 1>, pad_value = -1.000000e+00 : f64} : memref<4x8xf32, "gm"> -> memref<4x10xf32, "ub">
// CHECK-NEXT:    loop.wait %[[T0]]
// CHECK-NEXT:    %[[T1:.*]] = loop.copy_async %[[U]] -> %result0 : memref<4x10xf32, "ub"> -> memref<4x10xf32, "gm">
// CHECK-NEXT:    loop.wait %[[T1]]
// CHECK-NEXT:    func.return
func.func @pad_within_gm(%x: memref<4x8xf32, "gm">, %result0: memref<4x10xf32, "gm">) {
  loop.copy %x -> %result0 {pad = array<i64: 0, 0, 1, 1>, pad_value = -1.0 : f64} : memref<4x8xf32, "gm"> -> memref<4x10xf32, "gm">
  func.return
}

// No path from gm to l0a: through l1.
// CHECK-LABEL: func.func @two_hops(
// CHECK:         %[[L1:.*]] = memref.alloc() : memref<16x16xf16, "l1">
// CHECK-NEXT:    %[[T0:.*]] = loop.copy_async %w -> %[[L1]] : memref<16x16xf16, "gm"> -> memref<16x16xf16, "l1">
// CHECK-NEXT:    loop.wait %[[T0]]
// CHECK-NEXT:    %[[T1:.*]] = loop.copy_async %[[L1]] -> %a : memref<16x16xf16, "l1"> -> memref<16x16xf16, "l0a">
// CHECK-NEXT:    loop.wait %[[T1]]
// CHECK-NOT:     loop.copy
func.func @two_hops(%w: memref<16x16xf16, "gm">) {
  %a = memref.alloc() : memref<16x16xf16, "l0a">
  loop.copy %w -> %a : memref<16x16xf16, "gm"> -> memref<16x16xf16, "l0a">
  func.return
}

// No engine moves within ub: a cast there is the vector unit's. The copies mte2 and mte3 do stay.
// CHECK-LABEL: func.func @cast_within_ub(
// CHECK:         loop.copy %x -> %u : memref<16x16xf32, "gm"> -> memref<16x16xf32, "ub">
// CHECK-NEXT:    linalg.generic {{.*}} ins(%u : memref<16x16xf32, "ub">) outs(%h : memref<16x16xf16, "ub">)
// CHECK:           arith.truncf
// CHECK:         loop.copy %h -> %result0 : memref<16x16xf16, "ub"> -> memref<16x16xf16, "gm">
// CHECK-NEXT:    func.return
func.func @cast_within_ub(%x: memref<16x16xf32, "gm">, %result0: memref<16x16xf16, "gm">) {
  %u = memref.alloc() : memref<16x16xf32, "ub">
  %h = memref.alloc() : memref<16x16xf16, "ub">
  loop.copy %x -> %u : memref<16x16xf32, "gm"> -> memref<16x16xf32, "ub">
  loop.copy %u -> %h : memref<16x16xf32, "ub"> -> memref<16x16xf16, "ub">
  loop.copy %h -> %result0 : memref<16x16xf16, "ub"> -> memref<16x16xf16, "gm">
  func.return
}

// mte3 does not cast: the vector unit casts in ub first, then mte3 moves.
// CHECK-LABEL: func.func @cast_out_of_ub(
// CHECK:         %[[H:.*]] = memref.alloc() : memref<16x16xf16, "ub">
// CHECK:         linalg.generic {{.*}} ins(%u : memref<16x16xf32, "ub">) outs(%[[H]] : memref<16x16xf16, "ub">)
// CHECK:           arith.truncf
// CHECK:         loop.copy %[[H]] -> %result0 : memref<16x16xf16, "ub"> -> memref<16x16xf16, "gm">
// CHECK-NEXT:    func.return
func.func @cast_out_of_ub(%x: memref<16x16xf32, "gm">, %result0: memref<16x16xf16, "gm">) {
  %u = memref.alloc() : memref<16x16xf32, "ub">
  loop.copy %x -> %u : memref<16x16xf32, "gm"> -> memref<16x16xf32, "ub">
  loop.copy %u -> %result0 : memref<16x16xf32, "ub"> -> memref<16x16xf16, "gm">
  func.return
}

// fixpipe does not pad: the first vector space on the route (here the destination) is filled
// with the pad value and the copy writes its interior.
// CHECK-LABEL: func.func @pad_by_fill(
// CHECK:         %[[P:.*]] = arith.constant -1.000000e+00 : f32
// CHECK-NEXT:    linalg.fill ins(%[[P]] : f32) outs(%u : memref<18x16xf32, "ub">)
// CHECK-NEXT:    %[[I:.*]] = memref.subview %u[1, 0] [16, 16] [1, 1] : memref<18x16xf32, "ub"> to memref<16x16xf32, strided<[16, 1], offset: 16>, "ub">
// CHECK-NEXT:    %[[T:.*]] = loop.copy_async %c -> %[[I]] : memref<16x16xf32, "l0c"> -> memref<16x16xf32, strided<[16, 1], offset: 16>, "ub">
// CHECK-NEXT:    loop.wait %[[T]]
// CHECK-NEXT:    loop.copy %u -> %result0
func.func @pad_by_fill(%result0: memref<18x16xf32, "gm">) {
  %two = arith.constant 2.0 : f32
  %c = memref.alloc() : memref<16x16xf32, "l0c">
  %u = memref.alloc() : memref<18x16xf32, "ub">
  linalg.fill ins(%two : f32) outs(%c : memref<16x16xf32, "l0c">)
  loop.copy %c -> %u {pad = array<i64: 1, 1, 0, 0>, pad_value = -1.0 : f64} : memref<16x16xf32, "l0c"> -> memref<18x16xf32, "ub">
  loop.copy %u -> %result0 : memref<18x16xf32, "ub"> -> memref<18x16xf32, "gm">
  func.return
}

// An async copy from a view into a buffer of the same space that neither pads nor casts (how
// promote-to-memory-space writes a padded staging buffer back) stays: loop-to-npu moves it with
// the vector unit.
// CHECK-LABEL: func.func @write_back(
// CHECK:         %t = loop.copy_async %v -> %u : memref<16x16xf32, strided<[32, 1]>, "ub"> -> memref<16x16xf32, "ub">
func.func @write_back(%x: memref<16x16xf32, "gm">, %result0: memref<16x16xf32, "gm">) {
  %big = memref.alloc() : memref<16x32xf32, "ub">
  %u = memref.alloc() : memref<16x16xf32, "ub">
  %v = memref.subview %big[0, 0] [16, 16] [1, 1] : memref<16x32xf32, "ub"> to memref<16x16xf32, strided<[32, 1]>, "ub">
  loop.copy %x -> %v : memref<16x16xf32, "gm"> -> memref<16x16xf32, strided<[32, 1]>, "ub">
  %t = loop.copy_async %v -> %u : memref<16x16xf32, strided<[32, 1]>, "ub"> -> memref<16x16xf32, "ub">
  loop.wait %t : !loop.token
  loop.copy %u -> %result0 : memref<16x16xf32, "ub"> -> memref<16x16xf32, "gm">
  func.return
}
