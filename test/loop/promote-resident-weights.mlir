// A conv's window points each read their own weight tile, and while the loop walks output rows
// (output channels and input channels whole) every one of them is the same in each iteration:
// loop-promote-to-memory-space gives each its own buffer in l1 (a buffer of the pool would be
// overwritten by the next point's). The peeled first row tile (the halo's top pad), straight-line
// code before the loop, loads them; the loop and the peeled last tile read them there: nine
// weight loads in all, not nine per row tile. The lowered conv still matches the graph
// interpreter.
// RUN: ziggurat-opt %s -p 'graph-fuse,graph-to-tile,tile-and-fuse{machine=davinci},tile-decompose-conv,tile-vectorize{machine=davinci},canonicalize,tile-to-loop{machine=davinci},loop-promote-to-memory-space{machine=davinci},loop-hoist-copies' | filecheck %s
// RUN: ziggurat-run %s --outputs %t.graph.npz
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=davinci}' | ziggurat-run - --machine davinci --expect %t.graph.npz | filecheck %s --check-prefix=NUMERICS

// CHECK-LABEL: func.func @main
// CHECK-COUNT-9: "gm"> -> memref<16x16xf16, "l1">
// CHECK-NOT:      "gm"> -> memref<16x16xf16, "l1">
// CHECK:          scf.for
// CHECK-NOT:      "gm"> -> memref<16x16xf16, "l1">
// CHECK:          func.return
// NUMERICS:     result0: {{.*}}  ok{{$}}
func.func @main(%x: tensor<1x16x8x16xf16>, %w: tensor<16x16x3x3xf16>) -> tensor<1x16x8x16xf16> {
  %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, tile.sizes = array<i64: 1, 16, 2, 16, 16, 3, 3>} : (tensor<1x16x8x16xf16>, tensor<16x16x3x3xf16>) -> tensor<1x16x8x16xf16>
  %r = graph.relu %y : tensor<1x16x8x16xf16>
  func.return %r : tensor<1x16x8x16xf16>
}
