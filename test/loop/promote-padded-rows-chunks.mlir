// A padding copy within global memory whose chunks, with their padded dims whole, still do not
// fit the staging space (ResNet-50's stem input 1x3x224x224 padded by 3 through systolic's 64 KiB
// ofmap: one padded channel 230x230 f16 is 105 KB) is split along a padded dim too, the first run
// of rows taking the low padding and the last the high padding. Here: one channel 156x155 f16 is
// 48 KB > 32 KB, so each channel is cut into rows 0..99 (3 rows of low padding: 102x155) and
// 99..150 (3 rows of high padding: 54x155), each padded in W as the copy is.
// RUN: ziggurat-opt %s -p 'loop-promote-to-memory-space{machine=systolic},loop-legalize-copies{machine=systolic}' | filecheck %s
// RUN: ziggurat-run %s --function padded_input --seed 3 --print > %t.before
// RUN: ziggurat-opt %s -p 'loop-promote-to-memory-space{machine=systolic},loop-legalize-copies{machine=systolic}' | ziggurat-run - --function padded_input --seed 3 --print > %t.after
// RUN: diff %t.before %t.after

// CHECK-LABEL: func.func @padded_input(
// CHECK-DAG:     %[[TOP:.*]] = memref.alloc() : memref<1x1x102x155xf16, "ofmap">
// CHECK-DAG:     %[[BOTTOM:.*]] = memref.alloc() : memref<1x1x54x155xf16, "ofmap">
// CHECK:         %[[C0:.*]] = memref.subview %x[0, 0, 0, 0] [1, 1, 150, 150]
// CHECK:         %[[R0:.*]] = memref.subview %result0[0, 0, 0, 0] [1, 1, 156, 155]
// CHECK:         %[[S0:.*]] = memref.subview %[[C0]][0, 0, 0, 0] [1, 1, 99, 150]
// CHECK:         %[[D0:.*]] = memref.subview %[[R0]][0, 0, 0, 0] [1, 1, 102, 155]
// CHECK:         linalg.fill ins(%{{.*}} : f16) outs(%[[TOP]] :
// CHECK:         %[[I0:.*]] = memref.subview %[[TOP]][0, 0, 3, 3] [1, 1, 99, 150]
// CHECK:         loop.copy_async %[[S0]] -> %[[I0]] :
// CHECK:         loop.copy_async %[[TOP]] -> %[[D0]] :
// CHECK:         %[[S1:.*]] = memref.subview %[[C0]][0, 0, 99, 0] [1, 1, 51, 150]
// CHECK:         %[[D1:.*]] = memref.subview %[[R0]][0, 0, 102, 0] [1, 1, 54, 155]
// CHECK:         linalg.fill ins(%{{.*}} : f16) outs(%[[BOTTOM]] :
// CHECK:         %[[I1:.*]] = memref.subview %[[BOTTOM]][0, 0, 0, 3] [1, 1, 51, 150]
// CHECK:         loop.copy_async %[[S1]] -> %[[I1]] :
// CHECK:         loop.copy_async %[[BOTTOM]] -> %[[D1]] :
// CHECK:         memref.subview %x[0, 1, 0, 0] [1, 1, 150, 150]
// CHECK-NOT:     loop.copy %x
func.func @padded_input(%x: memref<1x2x150x150xf16, "dram">, %result0: memref<1x2x156x155xf16, "dram">) {
  loop.copy %x -> %result0 {pad = array<i64: 0, 0, 0, 0, 3, 3, 3, 2>, pad_value = 0.0 : f64} : memref<1x2x150x150xf16, "dram"> -> memref<1x2x156x155xf16, "dram">
  func.return
}
