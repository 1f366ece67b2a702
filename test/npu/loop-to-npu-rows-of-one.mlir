// RUN: ziggurat-opt %s -p 'loop-to-npu{machine=tensorcore}' | filecheck %s
// RUN: ziggurat-run %s --function column --seed 3 --print > %t.loop
// RUN: ziggurat-opt %s -p 'loop-to-npu{machine=tensorcore},npu-plan-memory{machine=tensorcore},npu-insert-sync{machine=tensorcore}' | ziggurat-run - --function column --seed 3 --print > %t.npu
// RUN: diff %t.loop %t.npu
// RUN: ziggurat-run %s --function transpose_in_rf --seed 3 --print > %t.loop2
// RUN: ziggurat-opt %s -p 'loop-to-npu{machine=tensorcore},npu-plan-memory{machine=tensorcore},npu-insert-sync{machine=tensorcore}' | ziggurat-run - --function transpose_in_rf --seed 3 --print > %t.npu2
// RUN: diff %t.loop2 %t.npu2

// The bias of a conv on a 1x1 map, added to its accumulator: mma's n = 8 pads the map's one point to
// 8 columns, so the valid channels are a column, 8 elements apart. Each row is one element: one
// masked lane per repetition, the repetitions walking the column.
// CHECK-LABEL: func.func @column(
// CHECK:         npu.vec.add %acc[0, 0], %br[0] -> %acc[0, 0] {repeat = 8 : i64, mask = 1 : i64, stride = array<i64: 8, 1, 8>}
func.func @column(%x: memref<16x8xf32, "gm">, %bias: memref<8xf32, "gm">, %result0: memref<8x1xf32, "gm">) {
  %xs = memref.alloc() : memref<16x8xf32, "smem">
  %acc = memref.alloc() : memref<16x8xf32, "rf">
  %bs = memref.alloc() : memref<8xf32, "smem">
  %br = memref.alloc() : memref<8xf32, "rf">
  loop.copy %x -> %xs : memref<16x8xf32, "gm"> -> memref<16x8xf32, "smem">
  loop.copy %xs -> %acc : memref<16x8xf32, "smem"> -> memref<16x8xf32, "rf">
  loop.copy %bias -> %bs : memref<8xf32, "gm"> -> memref<8xf32, "smem">
  loop.copy %bs -> %br : memref<8xf32, "smem"> -> memref<8xf32, "rf">
  %col = memref.subview %acc[0, 0] [8, 1] [1, 1] : memref<16x8xf32, "rf"> to memref<8x1xf32, strided<[8, 1]>, "rf">
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%col, %br : memref<8x1xf32, strided<[8, 1]>, "rf">, memref<8xf32, "rf">) outs(%col : memref<8x1xf32, strided<[8, 1]>, "rf">) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  loop.copy %col -> %result0 : memref<8x1xf32, strided<[8, 1]>, "rf"> -> memref<8x1xf32, "gm">
  func.return

// A transpose inside 'rf' (no engine copies rf -> rf, and the vector unit reads blocks of adjacent
// elements): the strided read is the DMA out to shared memory, the fewest hops there and back
// (gm -> rf would take two), then the copy back in. (%a is rewritten before %b is read, so %b's
// reader cannot read %a transposed instead.)
// CHECK-LABEL: func.func @transpose_in_rf(
// CHECK:         %[[MID:.*]] = memref.alloc() : memref<8x16xf16, "smem">
// CHECK-NOT:     npu.vec.cast
// CHECK:         npu.dma "st" %a[0, 0] -> %[[MID]][0, 0] {shape = array<i64: 8, 16>, src_strides = array<i64: 1, 8>}
// CHECK-NEXT:    npu.dma "ldmatrix" %[[MID]][0, 0] -> %b[0, 0] {shape = array<i64: 8, 16>}
}
func.func @transpose_in_rf(%k: memref<16x8xf16, "gm">, %result0: memref<8x16xf16, "gm">) {
  %s = memref.alloc() : memref<16x8xf16, "smem">
  %a = memref.alloc() : memref<16x8xf16, "rf">
  %b = memref.alloc() : memref<8x16xf16, "rf">
  loop.copy %k -> %s : memref<16x8xf16, "gm"> -> memref<16x8xf16, "smem">
  loop.copy %s -> %a : memref<16x8xf16, "smem"> -> memref<16x8xf16, "rf">
  linalg.transpose ins(%a : memref<16x8xf16, "rf">) outs(%b : memref<8x16xf16, "rf">) permutation = [1, 0]
  loop.copy %s -> %a : memref<16x8xf16, "smem"> -> memref<16x8xf16, "rf">
  loop.copy %b -> %result0 : memref<8x16xf16, "rf"> -> memref<8x16xf16, "gm">
  func.return
}
