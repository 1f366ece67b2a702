// RUN: ziggurat-opt %s -p 'loop-to-npu{machine=davinci}' | filecheck %s
// RUN: ziggurat-run %s --seed 3 --print > %t.loop
// RUN: ziggurat-opt %s -p 'loop-to-npu{machine=davinci},npu-plan-memory{machine=davinci},npu-insert-sync{machine=davinci}' | ziggurat-run - --seed 3 --print > %t.npu
// RUN: diff %t.loop %t.npu

// A uint8 image halved and requantized to uint8, as graph-to-tile lowers DequantizeLinear and
// QuantizeLinear of ui8: buffers hold signless i8, so the conversions from and to unsigned
// integers say so (`unsigned = "src"`: zero-extend, `unsigned = "dst"`: saturate to [0, 255]).
// Both levels print the same uint8 values (the arguments' ziggurat.element_type).
// CHECK-LABEL: func.func @halve(
// CHECK:         npu.vec.cast %u[0, 0] -> %f[0, 0] {unsigned = "src", repeat = 2 : i64} : memref<2x64xi8, "ub"> -> memref<2x64xf32, "ub">
// CHECK-NEXT:    npu.vec.muls %f[0, 0] -> %f[0, 0] {scalar = 5.000000e-01 : f64, repeat = 2 : i64} : memref<2x64xf32, "ub"> -> memref<2x64xf32, "ub">
// CHECK:         npu.vec.cast %f[0, 0] -> %u[0, 0] {unsigned = "dst", repeat = 2 : i64} : memref<2x64xf32, "ub"> -> memref<2x64xi8, "ub">
#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
func.func @halve(%x: memref<2x64xi8, "gm"> {ziggurat.element_type = ui8}, %result0: memref<2x64xi8, "gm"> {ziggurat.element_type = ui8}) {
  %u = memref.alloc() : memref<2x64xi8, "ub">
  %f = memref.alloc() : memref<2x64xf32, "ub">
  loop.copy %x -> %u : memref<2x64xi8, "gm"> -> memref<2x64xi8, "ub">
  %half = arith.constant 5.000000e-01 : f32
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%u : memref<2x64xi8, "ub">) outs(%f : memref<2x64xf32, "ub">) {
  ^bb0(%a: i8, %o: f32):
    %w = arith.uitofp %a : i8 to f32
    linalg.yield %w : f32
  }
  linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel", "parallel"]} ins(%f, %half : memref<2x64xf32, "ub">, f32) outs(%f : memref<2x64xf32, "ub">) {
  ^bb0(%a: f32, %h: f32, %o: f32):
    %s = arith.mulf %a, %h : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%f : memref<2x64xf32, "ub">) outs(%f : memref<2x64xf32, "ub">) {
  ^bb0(%a: f32, %o: f32):
    %r = math.roundeven %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%f : memref<2x64xf32, "ub">) outs(%u : memref<2x64xi8, "ub">) {
  ^bb0(%a: f32, %o: i8):
    %n = arith.fptoui %a : f32 to i8
    linalg.yield %n : i8
  }
  loop.copy %u -> %result0 : memref<2x64xi8, "ub"> -> memref<2x64xi8, "gm">
  func.return
}
