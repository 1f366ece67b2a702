// A concat fused with its consumer (graph-fuse's concat_relu) is not tiled: its
// buffer is the whole tensor, so it lives in the global space even though only one
// group touches it (DenseNet's 1x256x56x56 concat buffers were left to a local space).
// RUN: ziggurat-opt %s -p "graph-fuse,graph-to-tile,tile-to-loop{machine=davinci}" | filecheck %s
// RUN: ziggurat-run %s --seed 4 --print > %t.graph
// RUN: ziggurat-opt %s -p "graph-fuse,graph-to-tile,tile-to-loop{machine=davinci}" | ziggurat-run - --seed 4 --print | sed -e 's/memref<\(.*\), "gm">/tensor<\1>/' > %t.loop
// RUN: diff %t.graph %t.loop

// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[CAT:.*]] = memref.alloc() : memref<1x12x6x6xi32, "gm">
// CHECK:         memref.subview %[[CAT]][0, 8, 0, 0] [1, 4, 6, 6] [1, 1, 1, 1]
func.func @main(%x: tensor<1x8x6x6xi32>, %w: tensor<4x8x1x1xi32>) -> tensor<1x12x6x6xi32> {
  %c = graph.conv2d %x, %w : (tensor<1x8x6x6xi32>, tensor<4x8x1x1xi32>) -> tensor<1x4x6x6xi32>
  %y = graph.concat %x, %c {axis = 1 : i64} : (tensor<1x8x6x6xi32>, tensor<1x4x6x6xi32>) -> tensor<1x12x6x6xi32>
  %r = graph.relu %y : tensor<1x12x6x6xi32>
  func.return %r : tensor<1x12x6x6xi32>
}
