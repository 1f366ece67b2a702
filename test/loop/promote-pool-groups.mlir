// RUN: ziggurat-opt %s -p 'loop-promote-to-memory-space{machine=davinci}' | filecheck %s
// RUN: ziggurat-run %s --function groups --seed 2 --print > %t.before
// RUN: ziggurat-opt %s -p 'loop-promote-to-memory-space{machine=davinci}' | ziggurat-run - --function groups --seed 2 --print > %t.after
// RUN: diff %t.before %t.after

// Staging buffers are shared by the ops of one block and one fusion group, not across
// groups: a buffer shared by two layers lives from the first to the last, across the
// layers between, whose buffers then cannot reuse its bytes (ShuffleNet's unlooped
// layers overflowed l0b). The two relus of group a_0 share their ub in/out buffers;
// b_0's relu gets two of its own.
// CHECK-LABEL: func.func @groups(
// CHECK-NEXT:    %[[IN:.*]] = memref.alloc() : memref<8x16xf16, "ub">
// CHECK-NEXT:    %[[OUT:.*]] = memref.alloc() : memref<8x16xf16, "ub">
// CHECK-NEXT:    %[[IN_B:.*]] = memref.alloc() : memref<8x16xf16, "ub">
// CHECK-NEXT:    %[[OUT_B:.*]] = memref.alloc() : memref<8x16xf16, "ub">
// CHECK:         loop.copy_async %x -> %[[IN]]
// CHECK:         loop.copy_async %[[OUT]] -> %result0
// CHECK:         loop.copy_async %result0 -> %[[IN]]
// CHECK:         loop.copy_async %[[OUT]] -> %result1
// CHECK:         loop.copy_async %result1 -> %[[IN_B]]
// CHECK:         loop.copy_async %[[OUT_B]] -> %result2
func.func @groups(%x: memref<8x16xf16, "gm">, %result0: memref<8x16xf16, "gm">, %result1: memref<8x16xf16, "gm">, %result2: memref<8x16xf16, "gm">) {
  %c = arith.constant 0.0 : f16
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %c : memref<8x16xf16, "gm">, f16) outs(%result0 : memref<8x16xf16, "gm">) attrs = {tile.group = "a_0"} {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %m = arith.maximumf %a, %b : f16
    linalg.yield %m : f16
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%result0, %c : memref<8x16xf16, "gm">, f16) outs(%result1 : memref<8x16xf16, "gm">) attrs = {tile.group = "a_0"} {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %m = arith.maximumf %a, %b : f16
    linalg.yield %m : f16
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%result1, %c : memref<8x16xf16, "gm">, f16) outs(%result2 : memref<8x16xf16, "gm">) attrs = {tile.group = "b_0"} {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %m = arith.maximumf %a, %b : f16
    linalg.yield %m : f16
  }
  func.return
}
