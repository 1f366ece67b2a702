// npu-hoist-invariant: when two hoisted groups fill buffers of one type with the same values
// (each of loop-double-buffer's stages broadcasts the bias into its own buffer, as loop-to-npu makes a
// buffer per broadcast), the second goes and its readers read the first: one buffer is live
// across the loop, not two (ResNet-50's stem conv tiled two rows at a time then fits ub).
// RUN: ziggurat-opt %s -p 'npu-hoist-invariant{machine=davinci}' | filecheck %s
// RUN: ziggurat-opt %s -p 'npu-plan-memory{machine=davinci},npu-insert-sync{machine=davinci}' | ziggurat-run - --machine davinci --function stages --seed 3 --print > %t.before
// RUN: ziggurat-opt %s -p 'npu-hoist-invariant{machine=davinci},npu-plan-memory{machine=davinci},npu-insert-sync{machine=davinci}' | ziggurat-run - --machine davinci --function stages --seed 3 --print > %t.after
// RUN: diff %t.before %t.after

// CHECK-LABEL: func.func @stages
// CHECK-NOT:     %spread1 = memref.alloc
// CHECK:         npu.vec.broadcast %bias32[0] -> %spread0[0, 0]
// CHECK-NEXT:    npu.vec.broadcast %bias32[0] -> %spread0[0, 32]
// CHECK-NEXT:    scf.for
// CHECK-NOT:       npu.vec.broadcast
// CHECK:           npu.vec.add %tile[0, 0], %spread0[0, 0]
// CHECK:           npu.vec.add %tile[0, 0], %spread0[0, 0]
// CHECK:         func.return
func.func @stages(%x: memref<4x64x64xf32, "gm">, %bias: memref<64xf32, "gm">, %y: memref<4x64x64xf32, "gm">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %bias32 = memref.alloc() : memref<64xf32, "ub">
  %spread0 = memref.alloc() : memref<64x64xf32, "ub">
  %spread1 = memref.alloc() : memref<64x64xf32, "ub">
  %tile = memref.alloc() : memref<64x64xf32, "ub">
  npu.dma "mte2" %bias[0] -> %bias32[0] {shape = array<i64: 64>} : memref<64xf32, "gm"> -> memref<64xf32, "ub">
  scf.for %i = %c0 to %c4 step %c2 {
    npu.vec.broadcast %bias32[0] -> %spread0[0, 0] {repeat = 64 : i64, mask = 32 : i64, stride = array<i64: 1, 64>} : memref<64xf32, "ub"> -> memref<64x64xf32, "ub">
    npu.vec.broadcast %bias32[0] -> %spread0[0, 32] {repeat = 64 : i64, mask = 32 : i64, stride = array<i64: 1, 64>} : memref<64xf32, "ub"> -> memref<64x64xf32, "ub">
    npu.dma "mte2" %x[%i, 0, 0] -> %tile[0, 0] {shape = array<i64: 64, 64>} : memref<4x64x64xf32, "gm"> -> memref<64x64xf32, "ub">
    npu.vec.add %tile[0, 0], %spread0[0, 0] -> %tile[0, 0] {repeat = 64 : i64} : memref<64x64xf32, "ub">, memref<64x64xf32, "ub"> -> memref<64x64xf32, "ub">
    npu.dma "mte3" %tile[0, 0] -> %y[%i, 0, 0] {shape = array<i64: 64, 64>} : memref<64x64xf32, "ub"> -> memref<4x64x64xf32, "gm">
    %j = arith.addi %i, %c1 : index
    npu.vec.broadcast %bias32[0] -> %spread1[0, 0] {repeat = 64 : i64, mask = 32 : i64, stride = array<i64: 1, 64>} : memref<64xf32, "ub"> -> memref<64x64xf32, "ub">
    npu.vec.broadcast %bias32[0] -> %spread1[0, 32] {repeat = 64 : i64, mask = 32 : i64, stride = array<i64: 1, 64>} : memref<64xf32, "ub"> -> memref<64x64xf32, "ub">
    npu.dma "mte2" %x[%j, 0, 0] -> %tile[0, 0] {shape = array<i64: 64, 64>} : memref<4x64x64xf32, "gm"> -> memref<64x64xf32, "ub">
    npu.vec.add %tile[0, 0], %spread1[0, 0] -> %tile[0, 0] {repeat = 64 : i64} : memref<64x64xf32, "ub">, memref<64x64xf32, "ub"> -> memref<64x64xf32, "ub">
    npu.dma "mte3" %tile[0, 0] -> %y[%j, 0, 0] {shape = array<i64: 64, 64>} : memref<64x64xf32, "ub"> -> memref<4x64x64xf32, "gm">
  }
  func.return
}

// Different values (the second stage broadcasts another bias) keep their own buffers.
// CHECK-LABEL: func.func @different
// CHECK:         npu.vec.broadcast %a[0] -> %spread0[0, 0]
// CHECK-NEXT:    npu.vec.broadcast %b[0] -> %spread1[0, 0]
// CHECK-NEXT:    scf.for
// CHECK:           npu.vec.add %tile[0, 0], %spread0[0, 0]
// CHECK:           npu.vec.add %tile[0, 0], %spread1[0, 0]
func.func @different(%x: memref<4x64x64xf32, "gm">, %y: memref<4x64x64xf32, "gm">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloc() : memref<64xf32, "ub">
  %b = memref.alloc() : memref<64xf32, "ub">
  %spread0 = memref.alloc() : memref<64x64xf32, "ub">
  %spread1 = memref.alloc() : memref<64x64xf32, "ub">
  %tile = memref.alloc() : memref<64x64xf32, "ub">
  npu.vec.dup %a[0] {scalar = 1.0 : f32, repeat = 1 : i64} : memref<64xf32, "ub">
  npu.vec.dup %b[0] {scalar = 2.0 : f32, repeat = 1 : i64} : memref<64xf32, "ub">
  scf.for %i = %c0 to %c4 step %c2 {
    npu.vec.broadcast %a[0] -> %spread0[0, 0] {repeat = 64 : i64, stride = array<i64: 1, 64>} : memref<64xf32, "ub"> -> memref<64x64xf32, "ub">
    npu.dma "mte2" %x[%i, 0, 0] -> %tile[0, 0] {shape = array<i64: 64, 64>} : memref<4x64x64xf32, "gm"> -> memref<64x64xf32, "ub">
    npu.vec.add %tile[0, 0], %spread0[0, 0] -> %tile[0, 0] {repeat = 64 : i64} : memref<64x64xf32, "ub">, memref<64x64xf32, "ub"> -> memref<64x64xf32, "ub">
    npu.dma "mte3" %tile[0, 0] -> %y[%i, 0, 0] {shape = array<i64: 64, 64>} : memref<64x64xf32, "ub"> -> memref<4x64x64xf32, "gm">
    %j = arith.addi %i, %c1 : index
    npu.vec.broadcast %b[0] -> %spread1[0, 0] {repeat = 64 : i64, stride = array<i64: 1, 64>} : memref<64xf32, "ub"> -> memref<64x64xf32, "ub">
    npu.dma "mte2" %x[%j, 0, 0] -> %tile[0, 0] {shape = array<i64: 64, 64>} : memref<4x64x64xf32, "gm"> -> memref<64x64xf32, "ub">
    npu.vec.add %tile[0, 0], %spread1[0, 0] -> %tile[0, 0] {repeat = 64 : i64} : memref<64x64xf32, "ub">, memref<64x64xf32, "ub"> -> memref<64x64xf32, "ub">
    npu.dma "mte3" %tile[0, 0] -> %y[%j, 0, 0] {shape = array<i64: 64, 64>} : memref<64x64xf32, "ub"> -> memref<4x64x64xf32, "gm">
  }
  func.return
}
