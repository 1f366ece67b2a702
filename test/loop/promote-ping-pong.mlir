// RUN: ziggurat-opt %s -p 'loop-promote-to-memory-space{machine=davinci},loop-legalize-copies{machine=davinci}' | filecheck %s
// RUN: ziggurat-run %s --function points --seed 3 --print > %t.before
// RUN: ziggurat-opt %s -p 'loop-promote-to-memory-space{machine=davinci},loop-legalize-copies{machine=davinci}' | ziggurat-run - --function points --seed 3 --print > %t.after
// RUN: diff %t.before %t.after

// Consecutive contractions of one block (a convolution's window points after
// tile-decompose-conv) take their l0a and l0b operands from two buffers in turn, so that
// loading the next point's operands overlaps the matrix instruction reading this one's.
// On the way, in l1, the weight tiles (bytes nothing writes) also take two buffers in turn,
// which conv tile sizes budget for (room for every point's weights), so the next point's
// load from global memory does not wait for this one's copy to l0a; an operand something
// writes (%result1..%result3, outputs the function fills) shares one staging buffer (each
// copy out of it is done before the next in).
// CHECK-LABEL: func.func @points(
// CHECK-NEXT:    memref.alloc() : memref<32x32xf32, "l0c">
// CHECK-NEXT:    %[[L1_W_PING:.*]] = memref.alloc() : memref<32x32xf16, "l1">
// CHECK-NEXT:    %[[PING_A:.*]] = memref.alloc() : memref<32x32xf16, "l0a">
// CHECK-NEXT:    %[[L1_B:.*]] = memref.alloc() : memref<32x32xf16, "l1">
// CHECK-NEXT:    %[[PING_B:.*]] = memref.alloc() : memref<32x32xf16, "l0b">
// CHECK-NEXT:    %[[L1_W_PONG:.*]] = memref.alloc() : memref<32x32xf16, "l1">
// CHECK-NEXT:    %[[PONG_A:.*]] = memref.alloc() : memref<32x32xf16, "l0a">
// CHECK-NEXT:    %[[PONG_B:.*]] = memref.alloc() : memref<32x32xf16, "l0b">
// CHECK-NOT:     memref.alloc() : memref<32x32xf16, "l1">
// CHECK:         loop.copy_async %w0 -> %[[L1_W_PING]]
// CHECK:         loop.copy_async %[[L1_W_PING]] -> %[[PING_A]]
// CHECK:         loop.copy_async %result1 -> %[[L1_B]]
// CHECK:         loop.copy_async %[[L1_B]] -> %[[PING_B]]
// CHECK:         ins(%[[PING_A]], %[[PING_B]] :
// CHECK:         loop.copy_async %w1 -> %[[L1_W_PONG]]
// CHECK:         loop.copy_async %[[L1_W_PONG]] -> %[[PONG_A]]
// CHECK:         loop.copy_async %result2 -> %[[L1_B]]
// CHECK:         loop.copy_async %[[L1_B]] -> %[[PONG_B]]
// CHECK:         ins(%[[PONG_A]], %[[PONG_B]] :
// CHECK:         loop.copy_async %w2 -> %[[L1_W_PING]]
// CHECK:         loop.copy_async %[[L1_W_PING]] -> %[[PING_A]]
// CHECK:         loop.copy_async %result3 -> %[[L1_B]]
// CHECK:         loop.copy_async %[[L1_B]] -> %[[PING_B]]
// CHECK:         ins(%[[PING_A]], %[[PING_B]] :
#a = affine_map<(i, j, k) -> (i, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>
func.func @points(%w0: memref<32x32xf16, "gm">, %w1: memref<32x32xf16, "gm">, %w2: memref<32x32xf16, "gm">,
                  %x0: memref<32x32xf16, "gm">, %x1: memref<32x32xf16, "gm">, %x2: memref<32x32xf16, "gm">,
                  %result0: memref<32x32xf32, "gm">,
                  %result1: memref<32x32xf16, "gm">, %result2: memref<32x32xf16, "gm">, %result3: memref<32x32xf16, "gm">) {
  loop.copy %x0 -> %result1 : memref<32x32xf16, "gm"> -> memref<32x32xf16, "gm">
  loop.copy %x1 -> %result2 : memref<32x32xf16, "gm"> -> memref<32x32xf16, "gm">
  loop.copy %x2 -> %result3 : memref<32x32xf16, "gm"> -> memref<32x32xf16, "gm">
  %zero = arith.constant 0.000000e+00 : f32
  %acc = memref.alloc() : memref<32x32xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<32x32xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%w0, %result1 : memref<32x32xf16, "gm">, memref<32x32xf16, "gm">) outs(%acc : memref<32x32xf32>) {
  ^bb0(%x: f16, %y: f16, %s: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %xe, %ye : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%w1, %result2 : memref<32x32xf16, "gm">, memref<32x32xf16, "gm">) outs(%acc : memref<32x32xf32>) {
  ^bb0(%x: f16, %y: f16, %s: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %xe, %ye : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%w2, %result3 : memref<32x32xf16, "gm">, memref<32x32xf16, "gm">) outs(%acc : memref<32x32xf32>) {
  ^bb0(%x: f16, %y: f16, %s: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %xe, %ye : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  }
  loop.copy %acc -> %result0 : memref<32x32xf32> -> memref<32x32xf32, "gm">
  func.return
}
