// A padding copy out of a vector space whose route pads nowhere and passes no other
// vector space (davinci: ub -> gm, mte3 does not pad): the vector unit zero-fills a
// padded buffer in the source's space, the interior is copied in (out and back
// through gm), and the padded buffer goes out whole. ShuffleNet's channel shuffle
// (a transpose in ub) feeding a padded depthwise conv had no route before.
// RUN: ziggurat-opt %s -p 'loop-promote-to-memory-space{machine=davinci},loop-legalize-copies{machine=davinci}' | filecheck %s
// RUN: ziggurat-run %s --seed 2 --print > %t.before
// RUN: ziggurat-opt %s -p 'loop-promote-to-memory-space{machine=davinci},loop-legalize-copies{machine=davinci}' | ziggurat-run - --seed 2 --print > %t.after
// RUN: diff %t.before %t.after

// CHECK-LABEL: func.func @main(
// CHECK:         %[[P:.*]] = memref.alloc() : memref<1x4x8x8xf16, "ub">
// CHECK:         linalg.fill ins(%{{.*}} : f16) outs(%[[P]] : memref<1x4x8x8xf16, "ub">)
// CHECK-NEXT:    %[[IN:.*]] = memref.subview %[[P]][0, 0, 1, 1] [1, 4, 6, 6] [1, 1, 1, 1]
// CHECK:         loop.copy_async %{{.*}} -> %[[IN]]
// CHECK:         loop.copy %[[P]] -> %result0 : memref<1x4x8x8xf16, "ub"> -> memref<1x4x8x8xf16, "gm">
// CHECK-NOT:     pad =
func.func @main(%x: memref<1x4x6x6xf16, "gm">, %result0: memref<1x4x8x8xf16, "gm">) {
  %t = memref.alloc() : memref<1x4x6x6xf16>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<1x4x6x6xf16, "gm">) outs(%t : memref<1x4x6x6xf16>) {
  ^bb0(%a: f16, %o: f16):
    %m = arith.addf %a, %a : f16
    linalg.yield %m : f16
  }
  loop.copy %t -> %result0 {pad = array<i64: 0, 0, 0, 0, 1, 1, 1, 1>, pad_value = 0.0 : f64} : memref<1x4x6x6xf16> -> memref<1x4x8x8xf16, "gm">
  func.return
}
