// RUN: ziggurat-opt %s -p 'loop-to-npu{machine=davinci}' | filecheck %s
// RUN: ziggurat-run %s --seed 3 --print > %t.loop
// RUN: ziggurat-opt %s -p 'loop-to-npu{machine=davinci},npu-plan-memory{machine=davinci},npu-insert-sync{machine=davinci}' | ziggurat-run - --seed 3 --print > %t.npu
// RUN: diff %t.loop %t.npu

// A sum over rows of one element (the global average pool of a 1x1 map): each element is its own
// sum, added to the output elementwise. A reduce instruction would have read the 16 rows, their
// unit dimension dropped, as one block of 16 and summed them all into the first output.
// CHECK-LABEL: func.func @pool_of_one(
// CHECK-NOT:     npu.vec.reduce
// CHECK:         npu.vec.dup %o[0] {scalar = 0.000000e+00 : f64, mask = 16 : i64}
// CHECK-NOT:     npu.vec.reduce
// CHECK:         npu.vec.add %o[0], %a[0, 0] -> %o[0] {mask = 16 : i64}
// CHECK-NOT:     npu.vec.reduce
func.func @pool_of_one(%x: memref<16x1xf32, "gm">, %result0: memref<16xf32, "gm">) {
  %a = memref.alloc() : memref<16x1xf32, "ub">
  %o = memref.alloc() : memref<16xf32, "ub">
  loop.copy %x -> %a : memref<16x1xf32, "gm"> -> memref<16x1xf32, "ub">
  %zero = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%zero : f32) outs(%o : memref<16xf32, "ub">)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a : memref<16x1xf32, "ub">) outs(%o : memref<16xf32, "ub">) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  }
  loop.copy %o -> %result0 : memref<16xf32, "ub"> -> memref<16xf32, "gm">
  func.return
}
