// loop-hoist-copies moves copies whose views do not change in a loop out of it: here the lhs tile of
// row block %i, staged gm -> l1 -> l0a (davinci) or gm -> smem -> rf (tensorcore), is the same for
// every %j, so both copies climb out of the %j loop; the rhs tile depends on %j and stays.
// RUN: ziggurat-opt %s --split-input-file -p 'loop-promote-to-memory-space{machine=davinci},loop-hoist-copies' | filecheck %s --check-prefix=DAVINCI
// RUN: ziggurat-opt %s --split-input-file -p 'loop-promote-to-memory-space{machine=tensorcore},loop-hoist-copies' | filecheck %s --check-prefix=TC

// DAVINCI-LABEL: func.func @matmul_ij
// DAVINCI:         scf.for %i
// DAVINCI-NEXT:      %a = memref.subview %A[%i, 0]
// DAVINCI-NEXT:      %[[T0:.*]] = loop.copy_async %a -> %{{.*}} : {{.*}} -> memref<32x32xf16, "l1">
// DAVINCI-NEXT:      loop.wait %[[T0]]
// DAVINCI-NEXT:      %[[T1:.*]] = loop.copy_async %{{.*}} -> %{{.*}} : memref<32x32xf16, "l1"> -> memref<32x32xf16, "l0a">
// DAVINCI-NEXT:      loop.wait %[[T1]]
// DAVINCI-NEXT:      scf.for %j
// DAVINCI-NEXT:        %b = memref.subview %B[0, %j]
// DAVINCI-NEXT:        linalg.fill
// DAVINCI-NEXT:        loop.copy_async %b
// DAVINCI-NEXT:        loop.wait
// DAVINCI-NEXT:        loop.copy_async
// DAVINCI-NEXT:        loop.wait
// DAVINCI-NEXT:        linalg.generic
// DAVINCI-NOT:       loop.copy_async %a

// TC-LABEL: func.func @matmul_ij
// TC:         scf.for %i
// TC-NEXT:      %a = memref.subview %A[%i, 0]
// TC-NEXT:      loop.copy_async %a -> %{{.*}} : {{.*}} -> memref<32x32xf16, "smem">
// TC-NEXT:      loop.wait
// TC-NEXT:      loop.copy_async %{{.*}} -> %{{.*}} : memref<32x32xf16, "smem"> -> memref<32x32xf16, "rf">
// TC-NEXT:      loop.wait
// TC-NEXT:      scf.for %j

func.func @matmul_ij(%A: memref<64x32xf16, "gm">, %B: memref<32x64xf16, "gm">, %result0: memref<64x64xf32, "gm">) {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c64 step %c32 {
    scf.for %j = %c0 to %c64 step %c32 {
      %a = memref.subview %A[%i, 0] [32, 32] [1, 1] : memref<64x32xf16, "gm"> to memref<32x32xf16, strided<[32, 1], offset: ?>, "gm">
      %b = memref.subview %B[0, %j] [32, 32] [1, 1] : memref<32x64xf16, "gm"> to memref<32x32xf16, strided<[64, 1], offset: ?>, "gm">
      %acc = memref.alloc() : memref<32x32xf32>
      linalg.fill ins(%zero : f32) outs(%acc : memref<32x32xf32>)
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<32x32xf16, strided<[32, 1], offset: ?>, "gm">, memref<32x32xf16, strided<[64, 1], offset: ?>, "gm">) outs(%acc : memref<32x32xf32>) {
      ^bb0(%x: f16, %y: f16, %o: f32):
        %xe = arith.extf %x : f16 to f32
        %ye = arith.extf %y : f16 to f32
        %p = arith.mulf %xe, %ye : f32
        %s = arith.addf %o, %p : f32
        linalg.yield %s : f32
      }
      %out = memref.subview %result0[%i, %j] [32, 32] [1, 1] : memref<64x64xf32, "gm"> to memref<32x32xf32, strided<[64, 1], offset: ?>, "gm">
      loop.copy %acc -> %out : memref<32x32xf32> -> memref<32x32xf32, strided<[64, 1], offset: ?>, "gm">
    }
  }
  func.return
}

