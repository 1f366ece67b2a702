// A grouped conv with several output channels per group lowers as one contraction whose groups
// are a tile loop: its npu code does not repeat per group, and computes bit for bit what the
// same conv split into one conv per group (graph-split-grouped-conv) computes.
// RUN: ziggurat-run %s --seed 5 --outputs %t.graph.npz
// RUN: ziggurat-opt %s -p 'graph-fuse,graph-to-tile,tile-and-fuse{machine=davinci}' | filecheck %s --check-prefix=TILE
// RUN: ziggurat-opt %s -p 'compile{machine=davinci}' -o %t.davinci.mlir
// RUN: ziggurat-opt %s -p 'graph-split-grouped-conv,compile{machine=davinci}' -o %t.split.davinci.mlir
// RUN: ziggurat-run %t.split.davinci.mlir --seed 5 --outputs %t.split.davinci.npz
// RUN: ziggurat-run %t.davinci.mlir --seed 5 --expect %t.split.davinci.npz --rtol 0 --atol 0
// RUN: ziggurat-run %t.davinci.mlir --seed 5 --expect %t.graph.npz
// RUN: ziggurat-opt %s -p 'compile{machine=tensorcore}' -o %t.tensorcore.mlir
// RUN: ziggurat-opt %s -p 'graph-split-grouped-conv,compile{machine=tensorcore}' -o %t.split.tensorcore.mlir
// RUN: ziggurat-run %t.split.tensorcore.mlir --seed 5 --outputs %t.split.tensorcore.npz
// RUN: ziggurat-run %t.tensorcore.mlir --seed 5 --expect %t.split.tensorcore.npz --rtol 0 --atol 0
// RUN: ziggurat-run %t.tensorcore.mlir --seed 5 --expect %t.graph.npz
// RUN: filecheck %s --input-file %t.davinci.mlir --check-prefix=NPU

// Tiled over its groups: each tile is one group's 8 input and 8 output channels, the
// bias and relu fused in; the collapse into 32 channels follows the loop.
// TILE:       scf.for %[[G:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<1x4x8x10x10xf16>)
// TILE:         tensor.extract_slice %{{.*}}[0, %{{.*}}, 0, 0] [1, 8, 10, 10] [1, 1, 1, 1] : tensor<1x32x10x10xf16> to tensor<1x8x10x10xf16>
// TILE:         tensor.extract_slice %w[%{{.*}}, 0, 0, 0] [8, 8, 3, 3] [1, 1, 1, 1] : tensor<32x8x3x3xf16> to tensor<8x8x3x3xf16>
// TILE:         linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1x8x10x10xf32>) attrs = {tile.group = "conv2d_relu_0", tile.root}
// TILE:         tensor.insert_slice %{{.*}}[0, %[[G]], 0, 0, 0] [1, 1, 8, 10, 10] [1, 1, 1, 1, 1] : tensor<1x1x8x10x10xf16> into tensor<1x4x8x10x10xf16>
// TILE:       tensor.collapse_shape %{{.*}} : tensor<1x4x8x10x10xf16> into tensor<1x32x10x10xf16>
// TILE-NOT:   tensor.concat

// Each group's tile goes straight into its 8 channels of the result: no copy from global
// memory into the result at the end.
// NPU-LABEL: func.func @main(
// NPU:         npu.dma "mte3" %{{.*}}[0, 0, 0, 0, 0] -> %result0[0, %{{.*}}, 0, 0] {shape = array<i64: 8, 10, 10>} : memref<1x1x8x10x10xf16, "ub"> -> memref<1x32x10x10xf16, "gm">
// NPU-NOT:     "gm"> -> memref<1x32x10x10xf16, "gm">
// NPU:         func.return
func.func @main(%x: tensor<1x32x10x10xf16>, %w: tensor<32x8x3x3xf16>, %b: tensor<32xf16>) -> tensor<1x32x10x10xf16> {
  %y = graph.conv2d %x, %w, %b {groups = 4 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x10x10xf16>, tensor<32x8x3x3xf16>, tensor<32xf16>) -> tensor<1x32x10x10xf16>
  %r = graph.relu %y : tensor<1x32x10x10xf16>
  func.return %r : tensor<1x32x10x10xf16>
}
