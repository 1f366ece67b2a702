// RUN: ziggurat-opt %s -p 'loop-to-npu{machine=davinci}' | filecheck %s
// RUN: ziggurat-run %s --seed 5 --print > %t.loop
// RUN: ziggurat-opt %s -p 'loop-to-npu{machine=davinci},npu-plan-memory{machine=davinci},npu-insert-sync{machine=davinci}' | ziggurat-run - --seed 5 --print > %t.npu
// RUN: diff %t.loop %t.npu

// A BatchNorm's factor gamma * rsqrt(var + eps) as tile-vectorize leaves it in f16: one
// instruction per generic, the rsqrt on f16 lanes. The vector unit's rsqrt computes in f32 and
// rounds once; the loop level's math.rsqrt on f16 does the same (a square root rounded to f16
// before the division would round twice and land one ulp off for about a quarter of the inputs),
// so both levels print the same f16 values.
// CHECK-LABEL: func.func @batch_norm_factor(
// CHECK:         npu.vec.mul %v[0, 0], %v[0, 0] -> %f[0, 0] {repeat = 8 : i64} : memref<8x128xf16, "ub">, memref<8x128xf16, "ub"> -> memref<8x128xf16, "ub">
// CHECK-NEXT:    npu.vec.adds %f[0, 0] -> %f[0, 0] {scalar = 1.0013580322265625e-05 : f64, repeat = 8 : i64} : memref<8x128xf16, "ub"> -> memref<8x128xf16, "ub">
// CHECK-NEXT:    npu.vec.rsqrt %f[0, 0] -> %f[0, 0] {repeat = 8 : i64} : memref<8x128xf16, "ub"> -> memref<8x128xf16, "ub">
// CHECK-NEXT:    npu.vec.mul %g[0, 0], %f[0, 0] -> %f[0, 0] {repeat = 8 : i64} : memref<8x128xf16, "ub">, memref<8x128xf16, "ub"> -> memref<8x128xf16, "ub">
#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
func.func @batch_norm_factor(%x: memref<8x128xf16, "gm">, %gamma: memref<8x128xf16, "gm">, %result0: memref<8x128xf16, "gm">) {
  %v = memref.alloc() : memref<8x128xf16, "ub">
  %g = memref.alloc() : memref<8x128xf16, "ub">
  %f = memref.alloc() : memref<8x128xf16, "ub">
  loop.copy %x -> %v : memref<8x128xf16, "gm"> -> memref<8x128xf16, "ub">
  loop.copy %gamma -> %g : memref<8x128xf16, "gm"> -> memref<8x128xf16, "ub">
  %eps = arith.constant 1.001360e-05 : f16
  // var = x * x: a positive variance from the random inputs
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%v : memref<8x128xf16, "ub">) outs(%f : memref<8x128xf16, "ub">) {
  ^bb0(%a: f16, %o: f16):
    %s = arith.mulf %a, %a : f16
    linalg.yield %s : f16
  }
  linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel", "parallel"]} ins(%f, %eps : memref<8x128xf16, "ub">, f16) outs(%f : memref<8x128xf16, "ub">) {
  ^bb0(%a: f16, %e: f16, %o: f16):
    %s = arith.addf %a, %e : f16
    linalg.yield %s : f16
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%f : memref<8x128xf16, "ub">) outs(%f : memref<8x128xf16, "ub">) {
  ^bb0(%a: f16, %o: f16):
    %s = math.rsqrt %a : f16
    linalg.yield %s : f16
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%g, %f : memref<8x128xf16, "ub">, memref<8x128xf16, "ub">) outs(%f : memref<8x128xf16, "ub">) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %s = arith.mulf %a, %b : f16
    linalg.yield %s : f16
  }
  loop.copy %f -> %result0 : memref<8x128xf16, "ub"> -> memref<8x128xf16, "gm">
  func.return
}
