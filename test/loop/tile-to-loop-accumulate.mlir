// tile-to-loop: an elementwise generic that reads its own `outs` where it writes it
// (`acc = acc + x`, tile-vectorize's form of a depthwise conv's window steps) updates the
// accumulator in place: one buffer for all steps, no copy per step.
// RUN: ziggurat-opt %s --split-input-file -p "tile-to-loop{machine=davinci}" | filecheck %s

// CHECK-LABEL: func.func @window_steps
// CHECK:         %[[ACC:.*]] = memref.alloc() : memref<4x64xf32>
// CHECK-NEXT:    linalg.fill {{.*}}outs(%[[ACC]] : memref<4x64xf32>)
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[ACC]], %x0 : memref<4x64xf32>, memref<4x64xf32, "gm">) outs(%[[ACC]] : memref<4x64xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[ACC]], %x1 : memref<4x64xf32>, memref<4x64xf32, "gm">) outs(%[[ACC]] : memref<4x64xf32>)
// CHECK-NOT:     loop.copy
// CHECK-NOT:     memref.alloc
// CHECK:         linalg.generic {{.*}} ins(%[[ACC]] : memref<4x64xf32>) outs(%result0 : memref<4x64xf16, "gm">)
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @window_steps(%x0: tensor<4x64xf32>, %x1: tensor<4x64xf32>) -> tensor<4x64xf16> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x64xf32>
  %acc0 = linalg.fill {tile.group = "g_0"} ins(%zero : f32) outs(%e : tensor<4x64xf32>) -> tensor<4x64xf32>
  %acc1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%acc0, %x0 : tensor<4x64xf32>, tensor<4x64xf32>) outs(%acc0 : tensor<4x64xf32>) attrs = {tile.group = "g_0"} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x64xf32>
  %acc2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%acc1, %x1 : tensor<4x64xf32>, tensor<4x64xf32>) outs(%acc1 : tensor<4x64xf32>) attrs = {tile.group = "g_0"} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x64xf32>
  %e16 = tensor.empty() : tensor<4x64xf16>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%acc2 : tensor<4x64xf32>) outs(%e16 : tensor<4x64xf16>) attrs = {tile.group = "g_0"} {
  ^bb0(%a: f32, %o: f16):
    %t = arith.truncf %a : f32 to f16
    linalg.yield %t : f16
  } -> tensor<4x64xf16>
  func.return %r : tensor<4x64xf16>
}

// -----

// Read through another map (a transpose), an element is read after another one is written
// over it: the sum goes to a new buffer, the accumulator copied in first.
// CHECK-LABEL: func.func @transposed_read
// CHECK:         %[[ACC:.*]] = memref.alloc() : memref<64x64xf32, "gm">
// CHECK-NEXT:    linalg.fill {{.*}}outs(%[[ACC]] : memref<64x64xf32, "gm">)
// CHECK-NEXT:    linalg.generic {{.*}} ins(%x : memref<64x64xf32, "gm">) outs(%[[ACC]] : memref<64x64xf32, "gm">)
// CHECK:         loop.copy %[[ACC]] -> %result0
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[ACC]], %x : memref<64x64xf32, "gm">, memref<64x64xf32, "gm">) outs(%result0 : memref<64x64xf32, "gm">)
#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
func.func @transposed_read(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill {tile.group = "g_0"} ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %acc0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<64x64xf32>) outs(%f : tensor<64x64xf32>) attrs = {tile.group = "g_0"} {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<64x64xf32>
  %acc1 = linalg.generic {indexing_maps = [#t, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%acc0, %x : tensor<64x64xf32>, tensor<64x64xf32>) outs(%acc0 : tensor<64x64xf32>) attrs = {tile.group = "g_0"} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  func.return %acc1 : tensor<64x64xf32>
}
