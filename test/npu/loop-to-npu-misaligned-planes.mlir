// RUN: ziggurat-opt %s -p 'loop-to-npu{machine=tensorcore}' | filecheck %s
// RUN: ziggurat-run %s --seed 4 --print > %t.loop
// RUN: ziggurat-opt %s -p 'loop-to-npu{machine=tensorcore},npu-plan-memory{machine=tensorcore},npu-insert-sync{machine=tensorcore}' | ziggurat-run - --seed 4 --print > %t.npu
// RUN: diff %t.loop %t.npu

// A conv's f32 accumulator (10 rows of 12, 9x9 used) rounded into a 16x9x9 f16 tile, as a 9x9 conv +
// SiLU on tensorcore lowers it. Each channel's plane is 162 bytes, so the instruction for every
// other channel would start off the registers' 4-byte alignment: the cast writes a temporary
// with rows of 10 instead (every plane 180 bytes), and the DMA engines copy it into place,
// through shared memory and back.
// CHECK-LABEL: func.func @round_accumulator(
// CHECK:         scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      npu.vec.cast %acc[%[[C]], 0, 0] -> %[[T:.*]][%[[C]], 0, 0] {repeat = 9 : i64, mask = 9 : i64, stride = array<i64: 12, 10>} : memref<16x10x12xf32, "rf"> -> memref<16x9x10xf16, "rf">
// CHECK:         npu.dma "st" %[[T]][0, 0, 0] -> %[[S:.*]][0, 0, 0] {{.*}} : memref<16x9x10xf16, "rf"> -> memref<16x9x9xf16, "smem">
// CHECK-NEXT:    npu.dma "ldmatrix" %[[S]][0, 0, 0] -> %y[0, 0, 0] {{.*}} : memref<16x9x9xf16, "smem"> -> memref<16x9x9xf16, "rf">
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @round_accumulator(%x: memref<16x10x12xf32, "gm">, %result0: memref<16x9x9xf16, "gm">) {
  %staged = memref.alloc() : memref<16x10x12xf32, "smem">
  %acc = memref.alloc() : memref<16x10x12xf32, "rf">
  %y = memref.alloc() : memref<16x9x9xf16, "rf">
  loop.copy %x -> %staged : memref<16x10x12xf32, "gm"> -> memref<16x10x12xf32, "smem">
  loop.copy %staged -> %acc : memref<16x10x12xf32, "smem"> -> memref<16x10x12xf32, "rf">
  %used = memref.subview %acc[0, 0, 0] [16, 9, 9] [1, 1, 1] : memref<16x10x12xf32, "rf"> to memref<16x9x9xf32, strided<[120, 12, 1]>, "rf">
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%used : memref<16x9x9xf32, strided<[120, 12, 1]>, "rf">) outs(%y : memref<16x9x9xf16, "rf">) {
  ^bb0(%a: f32, %o: f16):
    %r = arith.truncf %a : f32 to f16
    linalg.yield %r : f16
  }
  loop.copy %y -> %result0 : memref<16x9x9xf16, "rf"> -> memref<16x9x9xf16, "gm">
  func.return
}
