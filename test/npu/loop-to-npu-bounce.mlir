// RUN: ziggurat-opt %s -p 'loop-to-npu{machine=davinci}' | filecheck %s
// RUN: ziggurat-run %s --function shuffle --seed 3 --print > %t.loop
// RUN: ziggurat-opt %s -p 'loop-to-npu{machine=davinci},npu-plan-memory{machine=davinci},npu-insert-sync{machine=davinci}' | ziggurat-run - --function shuffle --seed 3 --print > %t.npu
// RUN: diff %t.loop %t.npu
// RUN: ziggurat-run %s --function transpose_in_ub --seed 3 --print > %t.loop2
// RUN: ziggurat-opt %s -p 'loop-to-npu{machine=davinci},npu-plan-memory{machine=davinci},npu-insert-sync{machine=davinci}' | ziggurat-run - --function transpose_in_ub --seed 3 --print > %t.npu2
// RUN: diff %t.loop2 %t.npu2

// A channel shuffle inside 'ub' (no DMA engine from ub to ub): the vector unit would copy
// it, one 7x7 channel (98 bytes) at a time, but its instructions start at multiples of
// 32 bytes. The copy goes out to a buffer in gm and back, on the DMA engines (any offset).
// (%a is rewritten before %b is read, so %b's reader cannot read %a transposed instead.)
// CHECK-LABEL: func.func @shuffle(
// CHECK:         %[[MID:.*]] = memref.alloc() : memref<1x4x2x7x7xf16, "gm">
// CHECK-NOT:     npu.vec.cast
// CHECK:         npu.dma "mte3" %a{{.*}} -> %[[MID]]
// CHECK:         npu.dma "mte2" %[[MID]]{{.*}} -> %b
// CHECK-NOT:     npu.vec.cast
#map_in = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d1, d3, d4)>
#map_out = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
func.func @shuffle(%x: memref<1x2x4x7x7xf16, "gm">, %result0: memref<1x4x2x7x7xf16, "gm">) {
  %a = memref.alloc() : memref<1x2x4x7x7xf16, "ub">
  %b = memref.alloc() : memref<1x4x2x7x7xf16, "ub">
  loop.copy %x -> %a : memref<1x2x4x7x7xf16, "gm"> -> memref<1x2x4x7x7xf16, "ub">
  linalg.generic {indexing_maps = [#map_in, #map_out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%a : memref<1x2x4x7x7xf16, "ub">) outs(%b : memref<1x4x2x7x7xf16, "ub">) {
  ^bb0(%in: f16, %out: f16):
    linalg.yield %in : f16
  }
  loop.copy %x -> %a : memref<1x2x4x7x7xf16, "gm"> -> memref<1x2x4x7x7xf16, "ub">
  loop.copy %b -> %result0 : memref<1x4x2x7x7xf16, "ub"> -> memref<1x4x2x7x7xf16, "gm">
  func.return
}

// A transpose inside 'ub' whose source is rewritten before the result is read: the vector
// unit copies blocks of adjacent elements, not a source read with stride 32, so the
// transpose is the strided DMA out to gm, and the copy back in.
// CHECK-LABEL: func.func @transpose_in_ub(
// CHECK:         %[[MID:.*]] = memref.alloc() : memref<32x64xf16, "gm">
// CHECK:         npu.dma "mte3" %a[0, 0] -> %[[MID]][0, 0] {shape = array<i64: 32, 64>, src_strides = array<i64: 1, 32>}
// CHECK:         npu.dma "mte2" %[[MID]][0, 0] -> %b[0, 0] {shape = array<i64: 32, 64>}
func.func @transpose_in_ub(%k: memref<64x32xf16, "gm">, %result0: memref<32x64xf16, "gm">) {
  %a = memref.alloc() : memref<64x32xf16, "ub">
  %b = memref.alloc() : memref<32x64xf16, "ub">
  loop.copy %k -> %a : memref<64x32xf16, "gm"> -> memref<64x32xf16, "ub">
  linalg.transpose ins(%a : memref<64x32xf16, "ub">) outs(%b : memref<32x64xf16, "ub">) permutation = [1, 0]
  loop.copy %k -> %a : memref<64x32xf16, "gm"> -> memref<64x32xf16, "ub">
  loop.copy %b -> %result0 : memref<32x64xf16, "ub"> -> memref<32x64xf16, "gm">
  func.return
}
