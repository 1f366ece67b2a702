// A concat's parts are computed straight into their slices of its buffer: its
// tensor.empty moves to the top of the function, so the buffer exists before the
// parts are computed, and each insert_slice (the second one inserting into the
// first one's result, which writes other elements) disappears. Without this the
// parts were computed into buffers of their own and copied, a copy within global
// memory that goes through a local space whole (SqueezeNet's 2x 1x64x55x55).
// RUN: ziggurat-run %s --seed 2 --print > %t.graph
// RUN: ziggurat-opt %s -p "graph-to-tile,tile-to-loop{machine=davinci}" > %t.loop.mlir
// RUN: ziggurat-run %t.loop.mlir --seed 2 --print | sed -e 's/memref<\(.*\), "gm">/tensor<\1>/' > %t.loop
// RUN: diff %t.graph %t.loop
// RUN: filecheck %s --input-file %t.loop.mlir

// CHECK-LABEL: func.func @main(%a: memref<2x3x4xi32, "gm">, %b: memref<2x5x4xi32, "gm">, %result0: memref<2x8x4xi32, "gm">) {
// CHECK-NEXT:    %[[CAT:.*]] = memref.alloc() : memref<2x8x4xi32, "gm">
// CHECK-NOT:     loop.copy
// CHECK:         %[[A:.*]] = memref.subview %[[CAT]][0, 0, 0] [2, 3, 4] [1, 1, 1]
// CHECK-NEXT:    linalg.generic {{.*}} ins(%a : memref<2x3x4xi32, "gm">) outs(%[[A]] : memref<2x3x4xi32, strided<[32, 4, 1]>, "gm">)
// CHECK-NOT:     loop.copy
// CHECK:         %[[B:.*]] = memref.subview %[[CAT]][0, 3, 0] [2, 5, 4] [1, 1, 1]
// CHECK-NEXT:    linalg.generic {{.*}} ins(%b, %b : memref<2x5x4xi32, "gm">, memref<2x5x4xi32, "gm">) outs(%[[B]] : memref<2x5x4xi32, strided<[32, 4, 1], offset: 12>, "gm">)
// CHECK-NOT:     loop.copy
// CHECK:         linalg.generic {{.*}} ins(%[[CAT]], %[[CAT]] : {{.*}}) outs(%result0 : memref<2x8x4xi32, "gm">)
// CHECK-NOT:     loop.copy
func.func @main(%a: tensor<2x3x4xi32>, %b: tensor<2x5x4xi32>) -> tensor<2x8x4xi32> {
  %ra = graph.relu %a : tensor<2x3x4xi32>
  %sb = graph.add %b, %b : (tensor<2x5x4xi32>, tensor<2x5x4xi32>) -> tensor<2x5x4xi32>
  %c = graph.concat %ra, %sb {axis = 1 : i64} : (tensor<2x3x4xi32>, tensor<2x5x4xi32>) -> tensor<2x8x4xi32>
  %y = graph.add %c, %c : (tensor<2x8x4xi32>, tensor<2x8x4xi32>) -> tensor<2x8x4xi32>
  func.return %y : tensor<2x8x4xi32>
}
