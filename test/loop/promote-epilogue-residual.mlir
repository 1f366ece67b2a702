// The truncation writes an intermediate that a residual add then updates in place (a conv's
// bias, residual add and relu fused): the cast folds into a copy l0c -> ub, the bias add moves
// its source to ub, and the copy, now within ub, is the vector unit's cast into that buffer,
// not a bounce ub -> gm -> ub. On tensorcore all of it stays in rf.
// RUN: ziggurat-opt %s -p 'loop-promote-to-memory-space{machine=davinci},loop-legalize-copies{machine=davinci}' | filecheck %s --check-prefix=DAVINCI
// RUN: ziggurat-opt %s -p 'loop-promote-to-memory-space{machine=tensorcore},loop-legalize-copies{machine=tensorcore}' | filecheck %s --check-prefix=TC

// DAVINCI-LABEL: func.func @gemm_bias_residual
// DAVINCI-NOT:     memref.alloc() : memref<16x32xf16, "gm">
// DAVINCI:         %h = memref.alloc() : memref<16x32xf16, "ub">
// DAVINCI:         %[[UB:.*]] = memref.alloc() : memref<16x32xf32, "ub">
// DAVINCI:         linalg.generic {{.*}} ins(%[[UB]], %{{.*}} : memref<16x32xf32, "ub">, memref<32xf32, "ub">) outs(%[[UB]] : memref<16x32xf32, "ub">)
// DAVINCI-NEXT:    ^{{.*}}
// DAVINCI-NEXT:      arith.addf
// DAVINCI-NEXT:      linalg.yield
// DAVINCI-NEXT:    }
// DAVINCI-NEXT:    linalg.generic {{.*}} ins(%[[UB]] : memref<16x32xf32, "ub">) outs(%h : memref<16x32xf16, "ub">)
// DAVINCI-NEXT:    ^{{.*}}
// DAVINCI-NEXT:      arith.truncf
// DAVINCI-NOT:     -> memref<16x32xf16, "gm">
// DAVINCI:         loop.copy_async %res -> %[[RES:.*]] : memref<16x32xf16, "gm"> -> memref<16x32xf16, "ub">
// DAVINCI:         linalg.generic {{.*}} ins(%h, %[[RES]] : memref<16x32xf16, "ub">, memref<16x32xf16, "ub">) outs(%h : memref<16x32xf16, "ub">)
// TC-LABEL: func.func @gemm_bias_residual
// TC:         linalg.generic {{.*}} ins(%acc, %{{.*}} : memref<16x32xf32, "rf">, memref<32xf32, "rf">) outs(%acc : memref<16x32xf32, "rf">)
// TC:         linalg.generic {{.*}} ins(%acc : memref<16x32xf32, "rf">) outs(%h : memref<16x32xf16, "rf">)
// TC-NOT:     -> memref<16x32xf16, "gm">
// TC:         loop.copy_async %res -> %{{.*}} : memref<16x32xf16, "gm"> -> memref<16x32xf16, "smem">
func.func @gemm_bias_residual(%x: memref<16x64xf16, "gm">, %w: memref<64x32xf16, "gm">, %bias: memref<32xf32, "gm">, %res: memref<16x32xf16, "gm">, %result0: memref<16x32xf16, "gm">) {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<16x32xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<16x32xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : memref<16x64xf16, "gm">, memref<64x32xf16, "gm">) outs(%acc : memref<16x32xf32>) {
  ^bb0(%a: f16, %b: f16, %o: f32):
    %ae = arith.extf %a : f16 to f32
    %be = arith.extf %b : f16 to f32
    %p = arith.mulf %ae, %be : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%acc, %bias : memref<16x32xf32>, memref<32xf32, "gm">) outs(%acc : memref<16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  %h = memref.alloc() : memref<16x32xf16>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%acc : memref<16x32xf32>) outs(%h : memref<16x32xf16>) {
  ^bb0(%a: f32, %o: f16):
    %t = arith.truncf %a : f32 to f16
    linalg.yield %t : f16
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%h, %res : memref<16x32xf16>, memref<16x32xf16, "gm">) outs(%h : memref<16x32xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %s = arith.addf %a, %b : f16
    linalg.yield %s : f16
  }
  %zh = arith.constant 0.0 : f16
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%h, %zh : memref<16x32xf16>, f16) outs(%result0 : memref<16x32xf16, "gm">) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %m = arith.maximumf %a, %b : f16
    linalg.yield %m : f16
  }
  func.return
}
