// An epilogue that updates the accumulator in place (a bias add) cannot copy its result back to
// c_space on davinci (no engine writes l0c): the ops after it read its vector-space buffer instead.
// The truncf that had become a casting copy l0c -> gm now starts in ub, whose engine (mte3) does not
// cast: the vector unit casts first. On tensorcore c_space is the vector space: nothing moves.
// RUN: ziggurat-opt %s -p 'loop-promote-to-memory-space{machine=davinci},loop-legalize-copies{machine=davinci}' | filecheck %s --check-prefix=DAVINCI
// RUN: ziggurat-opt %s -p 'loop-promote-to-memory-space{machine=tensorcore},loop-legalize-copies{machine=tensorcore}' | filecheck %s --check-prefix=TC

// DAVINCI-LABEL: func.func @gemm_bias
// DAVINCI:         %acc = memref.alloc() : memref<16x32xf32, "l0c">
// DAVINCI:         %[[UB:.*]] = memref.alloc() : memref<16x32xf32, "ub">
// DAVINCI:         %[[BIAS:.*]] = memref.alloc() : memref<32xf32, "ub">
// DAVINCI:         %[[H:.*]] = memref.alloc() : memref<16x32xf16, "ub">
// DAVINCI:         linalg.generic {{.*}} outs(%acc : memref<16x32xf32, "l0c">)
// DAVINCI:         loop.copy_async %acc -> %[[UB]] : memref<16x32xf32, "l0c"> -> memref<16x32xf32, "ub">
// DAVINCI:         loop.copy_async %bias -> %[[BIAS]]
// DAVINCI:         linalg.generic {{.*}} ins(%[[UB]], %[[BIAS]] : memref<16x32xf32, "ub">, memref<32xf32, "ub">) outs(%[[UB]] : memref<16x32xf32, "ub">)
// DAVINCI-NOT:     -> %acc
// DAVINCI:         linalg.generic {{.*}} ins(%[[UB]] : memref<16x32xf32, "ub">) outs(%[[H]] : memref<16x32xf16, "ub">)
// DAVINCI-NEXT:    ^{{.*}}
// DAVINCI-NEXT:      arith.truncf
// DAVINCI:         loop.copy_async %[[H]] -> %result0 : memref<16x32xf16, "ub"> -> memref<16x32xf16, "gm">

// TC-LABEL: func.func @gemm_bias
// TC:         linalg.generic {{.*}} ins(%acc, %{{.*}} : memref<16x32xf32, "rf">, memref<32xf32, "rf">) outs(%acc : memref<16x32xf32, "rf">)
// TC:         loop.copy_async %acc -> %result0 : memref<16x32xf32, "rf"> -> memref<16x32xf16, "gm">
func.func @gemm_bias(%x: memref<16x64xf16, "gm">, %w: memref<64x32xf16, "gm">, %bias: memref<32xf32, "gm">, %result0: memref<16x32xf16, "gm">) {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<16x32xf32, "gm">
  linalg.fill ins(%zero : f32) outs(%acc : memref<16x32xf32, "gm">)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<16x64xf16, "gm">, memref<64x32xf16, "gm">) outs(%acc : memref<16x32xf32, "gm">) {
  ^bb0(%a: f16, %b: f16, %o: f32):
    %ae = arith.extf %a : f16 to f32
    %be = arith.extf %b : f16 to f32
    %p = arith.mulf %ae, %be : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%acc, %bias : memref<16x32xf32, "gm">, memref<32xf32, "gm">) outs(%acc : memref<16x32xf32, "gm">) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%acc : memref<16x32xf32, "gm">) outs(%result0 : memref<16x32xf16, "gm">) {
  ^bb0(%a: f32, %o: f16):
    %t = arith.truncf %a : f32 to f16
    linalg.yield %t : f16
  }
  func.return
}
