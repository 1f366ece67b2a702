// RUN: ziggurat-opt %s --split-input-file -p graph-to-tile | filecheck %s
// The output is IR that parses back (upstream dialects only).
// RUN: ziggurat-opt %s --split-input-file -p graph-to-tile | ziggurat-opt --split-input-file | filecheck %s

// graph-to-tile on representative ops: named linalg ops where upstream has them,
// linalg.generic with arith/math bodies otherwise, tensor ops for reshapes.

// A 2-D f32 matmul is linalg.matmul accumulating into a zero-filled init.
// CHECK-LABEL: func.func @matmul(
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    %[[EMPTY:.*]] = tensor.empty() : tensor<100x77xf32>
// CHECK-NEXT:    %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<100x77xf32>) -> tensor<100x77xf32>
// CHECK-NEXT:    %[[MM:.*]] = linalg.matmul ins(%a, %b : tensor<100x300xf32>, tensor<300x77xf32>) outs(%[[INIT]] : tensor<100x77xf32>) -> tensor<100x77xf32>
// CHECK-NEXT:    func.return %[[MM]] : tensor<100x77xf32>
// CHECK-NOT:     graph.
func.func @matmul(%a: tensor<100x300xf32>, %b: tensor<300x77xf32>) -> tensor<100x77xf32> {
  %y = graph.matmul %a, %b : (tensor<100x300xf32>, tensor<300x77xf32>) -> tensor<100x77xf32>
  func.return %y : tensor<100x77xf32>
}

// -----

// relu is a parallel generic whose body is arith.maximumf with zero.
// CHECK-LABEL: func.func @relu(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>)
// CHECK:           %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[M:.*]] = arith.maximumf %{{.*}}, %[[Z]] : f32
// CHECK-NEXT:      linalg.yield %[[M]] : f32
func.func @relu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.relu %x : tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// f16 arithmetic runs in f32, as the graph dialect's reference semantics.
// CHECK-LABEL: func.func @relu_f16(
// CHECK:           arith.extf %{{.*}} : f16 to f32
// CHECK:           arith.maximumf
// CHECK:           arith.truncf %{{.*}} : f32 to f16
func.func @relu_f16(%x: tensor<4xf16>) -> tensor<4xf16> {
  %y = graph.relu %x : tensor<4xf16>
  func.return %y : tensor<4xf16>
}

// -----

// Broadcasting is in the indexing maps: the [3] operand reads d1, a size-1 dim reads 0.
// CHECK-LABEL: func.func @add_broadcast(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
// CHECK:           arith.addf
func.func @add_broadcast(%a: tensor<2x1xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %y = graph.add %a, %b : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

// A reduction is a generic with a reduction iterator into a filled init; keepdims is
// an expand_shape of the reduced tensor.
// CHECK-LABEL: func.func @reduce_sum(
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT:    %[[SUM:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x : tensor<2x3x4xf32>) outs(%[[INIT]] : tensor<2x4xf32>)
// CHECK:           arith.addf
// CHECK:         tensor.expand_shape %[[SUM]] {{\[\[}}0 : i64], [1 : i64, 2 : i64]] output_shape [2, 1, 4] : tensor<2x4xf32> into tensor<2x1x4xf32>
func.func @reduce_sum(%x: tensor<2x3x4xf32>) -> tensor<2x1x4xf32> {
  %y = graph.reduce_sum %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  func.return %y : tensor<2x1x4xf32>
}

// -----

// A reshape that merges dimensions is a collapse_shape, one that splits them an
// expand_shape; one that does both is a collapse_shape to the finest shape both
// sides coarsen to, then an expand_shape (65x1x64 -> 65x4x16, an attention's head
// split, goes through 65x64; 2x3x4 -> 4x6 through 24). Only an empty tensor keeps
// tensor.reshape with a shape constant.
// CHECK-LABEL: func.func @reshapes(
// CHECK:         %{{.*}} = tensor.collapse_shape %x {{\[\[}}0 : i64, 1 : i64], [2 : i64]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK:         %{{.*}} = tensor.expand_shape %x {{\[\[}}0 : i64], [1 : i64], [2 : i64, 3 : i64]] output_shape [2, 3, 2, 2] : tensor<2x3x4xf32> into tensor<2x3x2x2xf32>
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %x {{\[\[}}0 : i64, 1 : i64, 2 : i64]] : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK-NEXT:    %{{.*}} = tensor.expand_shape %[[FLAT]] {{\[\[}}0 : i64, 1 : i64]] output_shape [4, 6] : tensor<24xf32> into tensor<4x6xf32>
// CHECK:         %[[ROWS:.*]] = tensor.collapse_shape %q {{\[\[}}0 : i64], [1 : i64, 2 : i64]] : tensor<65x1x64xf32> into tensor<65x64xf32>
// CHECK-NEXT:    %{{.*}} = tensor.expand_shape %[[ROWS]] {{\[\[}}0 : i64], [1 : i64, 2 : i64]] output_shape [65, 4, 16] : tensor<65x64xf32> into tensor<65x4x16xf32>
// CHECK:         %[[SHAPE:.*]] = arith.constant dense<[0, 2]> : tensor<2xi64>
// CHECK-NEXT:    %{{.*}} = tensor.reshape %e(%[[SHAPE]]) : (tensor<2x0xf32>, tensor<2xi64>) -> tensor<0x2xf32>
// CHECK-NOT:     tensor.reshape
func.func @reshapes(%x: tensor<2x3x4xf32>, %q: tensor<65x1x64xf32>, %e: tensor<2x0xf32>)
    -> (tensor<6x4xf32>, tensor<2x3x2x2xf32>, tensor<4x6xf32>, tensor<65x4x16xf32>, tensor<0x2xf32>) {
  %a = graph.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %b = graph.reshape %x : tensor<2x3x4xf32> -> tensor<2x3x2x2xf32>
  %c = graph.reshape %x : tensor<2x3x4xf32> -> tensor<4x6xf32>
  %d = graph.reshape %q : tensor<65x1x64xf32> -> tensor<65x4x16xf32>
  %f = graph.reshape %e : tensor<2x0xf32> -> tensor<0x2xf32>
  func.return %a, %b, %c, %d, %f : tensor<6x4xf32>, tensor<2x3x2x2xf32>, tensor<4x6xf32>, tensor<65x4x16xf32>, tensor<0x2xf32>
}

// -----

// conv2d (NCHW, one group) is tensor.pad + linalg.conv_2d_nchw_fchw; the bias a generic.
// With two linalg ops besides the fill, the conv is a group of its own.
// CHECK-LABEL: func.func @conv(
// CHECK:         %[[P:.*]] = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:         linalg.conv_2d_nchw_fchw {tile.group = "conv2d_0", tile.root, strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%[[P]], %w : tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>)
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  %y = graph.conv2d %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  func.return %y : tensor<1x4x8x8xf32>
}

// -----

// An NHWC conv (OHWI weights) is a generic contraction over (n, oh, ow, o | c, kh, kw)
// whose maps read the channels innermost: no transposes, the layout reaches the
// buffers. Its bias broadcasts along the innermost dim.
// CHECK-LABEL: func.func @conv_nhwc(
// CHECK:         %[[P:.*]] = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, ((d1 * 2) + d5), ((d2 * 2) + d6), d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d3, d5, d6, d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[P]], %w : tensor<1x10x10x3xf16>, tensor<4x3x3x3xf16>) outs(%{{.*}} : tensor<1x4x4x4xf32>)
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>]
// CHECK-NOT:     linalg.transpose
func.func @conv_nhwc(%x: tensor<1x8x8x3xf16>, %w: tensor<4x3x3x3xf16>, %b: tensor<4xf16>) -> tensor<1x4x4x4xf16> {
  %y = graph.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, layout = "NHWC"} : (tensor<1x8x8x3xf16>, tensor<4x3x3x3xf16>, tensor<4xf16>) -> tensor<1x4x4x4xf16>
  func.return %y : tensor<1x4x4x4xf16>
}

// -----

// An NHWC pool runs over (n, oh, ow, c | kh, kw): the output map is the identity.
// CHECK-LABEL: func.func @max_pool_nhwc(
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, ((d1 * 2) + d4), ((d2 * 2) + d5), d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %{{.*}} : tensor<1x8x8x16xf16>, tensor<2x2xf16>) outs(%{{.*}} : tensor<1x4x4x16xf16>)
// CHECK-NOT:     linalg.transpose
func.func @max_pool_nhwc(%x: tensor<1x8x8x16xf16>) -> tensor<1x4x4x16xf16> {
  %y = graph.max_pool %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, layout = "NHWC"} : tensor<1x8x8x16xf16> -> tensor<1x4x4x16xf16>
  func.return %y : tensor<1x4x4x16xf16>
}

// -----

// concat inserts each operand into an empty tensor; slice is extract_slice with strides.
// CHECK-LABEL: func.func @concat_slice(
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x8xf32>
// CHECK-NEXT:    %[[C0:.*]] = tensor.insert_slice %a into %[[E]][0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x8xf32>
// CHECK-NEXT:    %[[C1:.*]] = tensor.insert_slice %b into %[[C0]][0, 3] [2, 5] [1, 1] : tensor<2x5xf32> into tensor<2x8xf32>
// CHECK-NEXT:    tensor.extract_slice %[[C1]][0, 1] [2, 4] [1, 2] : tensor<2x8xf32> to tensor<2x4xf32>
func.func @concat_slice(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x4xf32> {
  %c = graph.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  %s = graph.slice %c {starts = array<i64: 1>, ends = array<i64: 8>, axes = array<i64: 1>, steps = array<i64: 2>} : tensor<2x8xf32> -> tensor<2x4xf32>
  func.return %s : tensor<2x4xf32>
}

// -----

// softmax: a max reduction, the shifted exponentials, a sum reduction, a division.
// CHECK-LABEL: func.func @softmax(
// CHECK:         iterator_types = ["parallel", "reduction"]
// CHECK:           arith.maximumf
// CHECK:           arith.subf
// CHECK:           math.exp
// CHECK:         iterator_types = ["parallel", "reduction"]
// CHECK:           arith.addf
// CHECK:           arith.divf
// CHECK-NOT:     graph.
func.func @softmax(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %y = graph.softmax %x : tensor<4x10xf32>
  func.return %y : tensor<4x10xf32>
}

// -----

// Unsigned tensors enter arith as their signless bits (tile.bitcast, MLIR's
// tensor.bitcast) and convert with zero extension.
// CHECK-LABEL: func.func @dequantize_ui8(
// CHECK:         %[[X:.*]] = tile.bitcast %x : tensor<4xui8> to tensor<4xi8>
// CHECK:         %[[Z:.*]] = tile.bitcast %z : tensor<ui8> to tensor<i8>
// CHECK:         linalg.generic {{.*}} ins(%[[X]], %s, %[[Z]] : tensor<4xi8>, tensor<f32>, tensor<i8>)
// CHECK:           arith.extui %{{.*}} : i8 to i64
// CHECK:           arith.extui %{{.*}} : i8 to i64
// CHECK:           arith.sitofp %{{.*}} : i64 to f32
func.func @dequantize_ui8(%x: tensor<4xui8>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<4xf32> {
  %y = graph.dequantize %x, %s, %z : (tensor<4xui8>, tensor<f32>, tensor<ui8>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// A graph.fused group is inlined: every op its members lower to carries the group's
// name made unique in the function (`_0`, `_1`), the root's ops also `tile.root`;
// `tile.sizes` goes with the op it was on. An f16 conv with one group is a
// contraction over (n, o, oh, ow | c, kh, kw): no unit group dim, no reshape.
// CHECK-LABEL: func.func @fused(
// CHECK:         tensor.pad %x
// CHECK:         } {tile.sizes = array<i64: 1, 4, 4, 8, 3, 3, 3>, tile.group = "conv2d_relu_0", tile.root} : tensor<1x3x8x8xf16> to tensor<1x3x10x10xf16>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, (d2 + d5), (d3 + d6))>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>]
// CHECK-SAME:      attrs = {tile.sizes = array<i64: 1, 4, 4, 8, 3, 3, 3>, tile.group = "conv2d_relu_0", tile.root}
// CHECK-NOT:     tensor.collapse_shape
// CHECK:         linalg.generic {{.*}} attrs = {tile.group = "conv2d_relu_0"}
// CHECK:           arith.maximumf
// CHECK:         linalg.generic {{.*}} attrs = {tile.group = "conv2d_relu_1", tile.root}
// CHECK:         linalg.generic {{.*}} attrs = {tile.group = "conv2d_relu_1"}
// CHECK-NOT:     graph.
func.func @fused(%x: tensor<1x3x8x8xf16>, %w: tensor<4x3x3x3xf16>, %w2: tensor<4x4x1x1xf16>) -> tensor<1x4x8x8xf16> {
  %g = graph.fused "conv2d_relu" (%x, %w) {root = "graph.conv2d"} ({
  ^bb0(%a: tensor<1x3x8x8xf16>, %b: tensor<4x3x3x3xf16>):
    %y = graph.conv2d %a, %b {pads = array<i64: 1, 1, 1, 1>, tile.sizes = array<i64: 1, 4, 4, 8, 3, 3, 3>} : (tensor<1x3x8x8xf16>, tensor<4x3x3x3xf16>) -> tensor<1x4x8x8xf16>
    %r = graph.relu %y : tensor<1x4x8x8xf16>
    graph.yield %r : tensor<1x4x8x8xf16>
  }) : (tensor<1x3x8x8xf16>, tensor<4x3x3x3xf16>) -> tensor<1x4x8x8xf16>
  %h = graph.fused "conv2d_relu" (%g, %w2) {root = "graph.conv2d"} ({
  ^bb0(%a: tensor<1x4x8x8xf16>, %b: tensor<4x4x1x1xf16>):
    %y = graph.conv2d %a, %b : (tensor<1x4x8x8xf16>, tensor<4x4x1x1xf16>) -> tensor<1x4x8x8xf16>
    %r = graph.relu %y : tensor<1x4x8x8xf16>
    graph.yield %r : tensor<1x4x8x8xf16>
  }) : (tensor<1x4x8x8xf16>, tensor<4x4x1x1xf16>) -> tensor<1x4x8x8xf16>
  func.return %h : tensor<1x4x8x8xf16>
}

// -----

// Depthwise: (n, g, oh, ow | kh, kw); the unit og and c dims are left out.
// CHECK-LABEL: func.func @depthwise(
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, (d2 + d4), (d3 + d5))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, 0, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK-NOT:     tensor.collapse_shape
func.func @depthwise(%x: tensor<1x8x10x10xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<1x8x10x10xf32> {
  %y = graph.conv2d %x, %w {groups = 8 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x10x10xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x10x10xf32>
  func.return %y : tensor<1x8x10x10xf32>
}
