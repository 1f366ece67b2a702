// The bufferized program computes what the graph program does: both run on the same
// seeded inputs (the %resultN arguments are the loop level's outputs) and print the
// same numbers. Integer data keeps the comparison exact.
// RUN: ziggurat-run %s --seed 5 --print > %t.graph
// RUN: ziggurat-opt %s -p "graph-to-tile,tile-to-loop{machine=davinci}" > %t.loop.mlir
// RUN: ziggurat-run %t.loop.mlir --seed 5 --print | sed -e 's/memref<\(.*\), "gm">/tensor<\1>/' > %t.loop
// RUN: diff %t.graph %t.loop
// RUN: filecheck %s --input-file %t.loop.mlir
// The tensor level's own run test also holds gather, concat and a reflect pad (generic
// bodies that read an outer tensor, as memref.load after bufferization):
// RUN: ziggurat-run %S/../tile/graph-to-tile-run.mlir --seed 3 --print > %t.graph2
// RUN: ziggurat-opt %S/../tile/graph-to-tile-run.mlir -p "graph-to-tile,tile-to-loop{machine=davinci}" | ziggurat-run - --seed 3 --print | sed -e 's/memref<\(.*\), "gm">/tensor<\1>/' > %t.loop2
// RUN: diff %t.graph2 %t.loop2

// CHECK: "memref.global"() <{sym_name = "constant0", type = memref<8xi32, "gm">, initial_value = dense<[1, -2, 3, -4, 5, -6, 7, -8]> : tensor<8xi32>, sym_visibility = "private", constant}>
// CHECK-NOT: tensor.
// CHECK: memref.get_global @constant0 : memref<8xi32, "gm">

func.func @main(%x: tensor<1x4x6x6xi32>, %w: tensor<8x4x3x3xi32>)
    -> (tensor<1x8x3x3xi32>, tensor<1x3x8xi32>, tensor<8x3xi32>) {
  %b = graph.constant dense<[1, -2, 3, -4, 5, -6, 7, -8]> : tensor<8xi32>
  %c = graph.conv2d %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x6xi32>, tensor<8x4x3x3xi32>, tensor<8xi32>) -> tensor<1x8x6x6xi32>
  %r = graph.relu %c : tensor<1x8x6x6xi32>
  %p = graph.max_pool %r {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x8x6x6xi32> -> tensor<1x8x3x3xi32>
  %s = graph.reduce_sum %p {axes = array<i64: 3>, keepdims = false} : tensor<1x8x3x3xi32> -> tensor<1x8x3xi32>
  %t = graph.transpose %s {perm = array<i64: 0, 2, 1>} : tensor<1x8x3xi32> -> tensor<1x3x8xi32>
  %f = graph.reshape %s : tensor<1x8x3xi32> -> tensor<8x3xi32>
  func.return %p, %t, %f : tensor<1x8x3x3xi32>, tensor<1x3x8xi32>, tensor<8x3xi32>
}
