// RUN: ziggurat-opt %s --split-input-file -p tile-decompose-conv | filecheck %s
// RUN: ziggurat-opt %s --split-input-file -p tile-decompose-conv | ziggurat-opt --split-input-file | filecheck %s

// A 2x2 window with stride 2 on a tile (the halo slice tile-and-fuse reads):
// one contraction per window point, unrolled, on a strided slice of the input and
// a rank-reduced slice of the weights; the maps are projected permutations.
// CHECK-LABEL: func.func @conv_tile(
// CHECK-SAME:      %x: tensor<1x4x7x7xf16>, %w: tensor<8x4x2x2xf16>, %acc: tensor<1x8x3x3xf32>)
// CHECK-NEXT:    %[[X00:.*]] = tensor.extract_slice %x[0, 0, 0, 0] [1, 4, 3, 3] [1, 1, 2, 2] : tensor<1x4x7x7xf16> to tensor<1x4x3x3xf16>
// CHECK-NEXT:    %[[W00:.*]] = tensor.extract_slice %w[0, 0, 0, 0] [8, 4, 1, 1] [1, 1, 1, 1] : tensor<8x4x2x2xf16> to tensor<8x4xf16>
// CHECK-NEXT:    %[[C00:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d2, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d1, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[X00]], %[[W00]] : tensor<1x4x3x3xf16>, tensor<8x4xf16>) outs(%acc : tensor<1x8x3x3xf32>) attrs = {{.*}}tile.root
// CHECK:           arith.extf
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         %[[X01:.*]] = tensor.extract_slice %x[0, 0, 0, 1] [1, 4, 3, 3] [1, 1, 2, 2]
// CHECK-NEXT:    %[[W01:.*]] = tensor.extract_slice %w[0, 0, 0, 1] [8, 4, 1, 1] [1, 1, 1, 1]
// CHECK-NEXT:    %[[C01:.*]] = linalg.generic {{.*}} ins(%[[X01]], %[[W01]] : tensor<1x4x3x3xf16>, tensor<8x4xf16>) outs(%[[C00]] : tensor<1x8x3x3xf32>)
// CHECK:         tensor.extract_slice %x[0, 0, 1, 0]
// CHECK:         %[[X11:.*]] = tensor.extract_slice %x[0, 0, 1, 1] [1, 4, 3, 3] [1, 1, 2, 2]
// CHECK-NEXT:    %[[W11:.*]] = tensor.extract_slice %w[0, 0, 1, 1]
// CHECK-NEXT:    %[[C11:.*]] = linalg.generic {{.*}} ins(%[[X11]], %[[W11]] : tensor<1x4x3x3xf16>, tensor<8x4xf16>)
// CHECK:         func.return %[[C11]] : tensor<1x8x3x3xf32>
func.func @conv_tile(%x: tensor<1x4x7x7xf16>, %w: tensor<8x4x2x2xf16>, %acc: tensor<1x8x3x3xf32>) -> tensor<1x8x3x3xf32> {
  %y = linalg.generic {indexing_maps = [affine_map<(n, o, oh, ow, c, kh, kw) -> (n, c, oh * 2 + kh, ow * 2 + kw)>, affine_map<(n, o, oh, ow, c, kh, kw) -> (o, c, kh, kw)>, affine_map<(n, o, oh, ow, c, kh, kw) -> (n, o, oh, ow)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x4x7x7xf16>, tensor<8x4x2x2xf16>) outs(%acc : tensor<1x8x3x3xf32>) attrs = {tile.root} {
  ^bb0(%a: f16, %b: f16, %s: f32):
    %ea = arith.extf %a : f16 to f32
    %eb = arith.extf %b : f16 to f32
    %p = arith.mulf %ea, %eb : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<1x8x3x3xf32>
  func.return %y : tensor<1x8x3x3xf32>
}

// -----

// Depthwise with its group dim: the group sum over one channel per group
// (g * 1 + c, c a unit reduction dim) is a one-point window, not a split, so the
// input keeps its channel dim and c goes; the weights' (g * 1 + o) splits (two
// parallel dims), so g is a batch dim. Each step has only parallel dims: the
// broadcast multiply-accumulate the vector unit runs.
// CHECK-LABEL: func.func @depthwise(
// CHECK-NEXT:    %[[WE:.*]] = tensor.expand_shape %w {{\[}}[0 : i64, 1 : i64], [2 : i64], [3 : i64], [4 : i64]] output_shape [3, 1, 1, 3, 3] : tensor<3x1x3x3xf32> into tensor<3x1x1x3x3xf32>
// CHECK-NEXT:    %[[X:.*]] = tensor.extract_slice %x[0, 0, 0, 0] [1, 3, 2, 2] [1, 1, 1, 1] : tensor<1x3x4x4xf32> to tensor<1x3x2x2xf32>
// CHECK-NEXT:    %[[W:.*]] = tensor.extract_slice %[[WE]][0, 0, 0, 0, 0] [3, 1, 1, 1, 1] [1, 1, 1, 1, 1] : tensor<3x1x1x3x3xf32> to tensor<3x1xf32>
// CHECK-NEXT:    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d1, d2)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
// CHECK-COUNT-8: linalg.generic
// CHECK-NOT:     linalg.generic
func.func @depthwise(%x: tensor<1x3x4x4xf32>, %w: tensor<3x1x3x3xf32>, %acc: tensor<1x3x1x2x2xf32>) -> tensor<1x3x1x2x2xf32> {
  %y = linalg.generic {indexing_maps = [affine_map<(n, g, o, oh, ow, c, kh, kw) -> (n, g + c, oh + kh, ow + kw)>, affine_map<(n, g, o, oh, ow, c, kh, kw) -> (g + o, c, kh, kw)>, affine_map<(n, g, o, oh, ow, c, kh, kw) -> (n, g, o, oh, ow)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x3x4x4xf32>, tensor<3x1x3x3xf32>) outs(%acc : tensor<1x3x1x2x2xf32>) {
  ^bb0(%a: f32, %b: f32, %s: f32):
    %p = arith.mulf %a, %b : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<1x3x1x2x2xf32>
  func.return %y : tensor<1x3x1x2x2xf32>
}

// -----

// The named NCHW conv is read as its generic; dilation 2 offsets the window by 2 per point.
// CHECK-LABEL: func.func @named_dilated(
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
// CHECK:         tensor.extract_slice %x[0, 0, 0, 0] [1, 2, 3, 3] [1, 1, 1, 1]
// CHECK:         tensor.extract_slice %x[0, 0, 0, 2] [1, 2, 3, 3] [1, 1, 1, 1]
// CHECK:         tensor.extract_slice %x[0, 0, 2, 0] [1, 2, 3, 3] [1, 1, 1, 1]
// CHECK:         tensor.extract_slice %x[0, 0, 2, 2] [1, 2, 3, 3] [1, 1, 1, 1]
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
func.func @named_dilated(%x: tensor<1x2x5x5xf32>, %w: tensor<4x2x2x2xf32>, %acc: tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %y = linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x2x5x5xf32>, tensor<4x2x2x2xf32>) outs(%acc : tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  func.return %y : tensor<1x4x3x3xf32>
}

// -----

// A max pool: one elementwise max per window point, on strided slices, chained
// through the accumulator; the window-shape operand (%win) is read by no step.
// CHECK-LABEL: func.func @max_pool(
// CHECK-NEXT:    %[[X00:.*]] = tensor.extract_slice %x[0, 0] [3, 3] [2, 2] : tensor<7x7xf32> to tensor<3x3xf32>
// CHECK-NEXT:    %[[M00:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[X00]] : tensor<3x3xf32>) outs(%acc : tensor<3x3xf32>)
// CHECK-NEXT:    ^{{.*}}(%[[A:.*]]: f32, %[[S:.*]]: f32):
// CHECK-NEXT:      arith.maximumf %[[S]], %[[A]] : f32
// CHECK:         %[[X01:.*]] = tensor.extract_slice %x[0, 1] [3, 3] [2, 2]
// CHECK-NEXT:    %[[M01:.*]] = linalg.generic {{.*}} ins(%[[X01]] : tensor<3x3xf32>) outs(%[[M00]] : tensor<3x3xf32>)
// CHECK:         tensor.extract_slice %x[1, 0] [3, 3] [2, 2]
// CHECK:         %[[X22:.*]] = tensor.extract_slice %x[2, 2] [3, 3] [2, 2]
// CHECK-NEXT:    %[[M22:.*]] = linalg.generic {{.*}} ins(%[[X22]] : tensor<3x3xf32>)
// CHECK-NOT:     %win
// CHECK:         func.return %[[M22]] : tensor<3x3xf32>
func.func @max_pool(%x: tensor<7x7xf32>, %win: tensor<3x3xf32>, %acc: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %y = linalg.generic {indexing_maps = [affine_map<(i, j, ki, kj) -> (i * 2 + ki, j * 2 + kj)>, affine_map<(i, j, ki, kj) -> (ki, kj)>, affine_map<(i, j, ki, kj) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x, %win : tensor<7x7xf32>, tensor<3x3xf32>) outs(%acc : tensor<3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %s: f32):
    %m = arith.maximumf %s, %a : f32
    linalg.yield %m : f32
  } -> tensor<3x3xf32>
  func.return %y : tensor<3x3xf32>
}

// -----

// A pool window that tiles its input (2x2, stride 2) is still unrolled per point:
// split into blocks it would reduce two dims at once.
// CHECK-LABEL: func.func @tiling_window(
// CHECK-NOT:     tensor.expand_shape
// CHECK:         tensor.extract_slice %x[0, 0] [3, 3] [2, 2] : tensor<6x6xf32> to tensor<3x3xf32>
// CHECK:         tensor.extract_slice %x[1, 1] [3, 3] [2, 2] : tensor<6x6xf32> to tensor<3x3xf32>
// CHECK-NOT:     "reduction"
// CHECK:         func.return
func.func @tiling_window(%x: tensor<6x6xf32>, %win: tensor<2x2xf32>, %acc: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %y = linalg.generic {indexing_maps = [affine_map<(i, j, ki, kj) -> (i * 2 + ki, j * 2 + kj)>, affine_map<(i, j, ki, kj) -> (ki, kj)>, affine_map<(i, j, ki, kj) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x, %win : tensor<6x6xf32>, tensor<2x2xf32>) outs(%acc : tensor<3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %s: f32):
    %m = arith.maximumf %s, %a : f32
    linalg.yield %m : f32
  } -> tensor<3x3xf32>
  func.return %y : tensor<3x3xf32>
}

// -----

// A matmul (maps already projected permutations) stays.
// CHECK-LABEL: func.func @untouched(
// CHECK-NOT:     tensor.extract_slice
// CHECK:         linalg.matmul
func.func @untouched(%a: tensor<4x6xf32>, %b: tensor<6x3xf32>, %acc: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %y = linalg.matmul ins(%a, %b : tensor<4x6xf32>, tensor<6x3xf32>) outs(%acc : tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %y : tensor<4x3xf32>
}

// -----

// Loop-level (memref) convolutions are not the tensor level's: left alone.
// CHECK-LABEL: func.func @on_memrefs(
// CHECK-NOT:     memref.subview
// CHECK:         linalg.generic {{.*}} ins(%x, %w : memref<1x2x6x6xf32>, memref<3x2x3x3xf32>) outs(%y : memref<1x3x4x4xf32>)
func.func @on_memrefs(%x: memref<1x2x6x6xf32>, %w: memref<3x2x3x3xf32>, %y: memref<1x3x4x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, o, oh, ow, c, kh, kw) -> (n, c, oh + kh, ow + kw)>, affine_map<(n, o, oh, ow, c, kh, kw) -> (o, c, kh, kw)>, affine_map<(n, o, oh, ow, c, kh, kw) -> (n, o, oh, ow)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : memref<1x2x6x6xf32>, memref<3x2x3x3xf32>) outs(%y : memref<1x3x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %s: f32):
    %p = arith.mulf %a, %b : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  }
  func.return
}

// -----

// A strided 1x1 convolution (ResNet's downsampling shortcut): the weights lose
// their unit window dims through a rank-reducing slice even though the slice
// covers the whole tensor.
// CHECK-LABEL: func.func @strided_1x1(
// CHECK-NEXT:    %[[X:.*]] = tensor.extract_slice %x[0, 0, 0, 0] [1, 32, 7, 7] [1, 1, 2, 2] : tensor<1x32x13x13xf16> to tensor<1x32x7x7xf16>
// CHECK-NEXT:    %[[W:.*]] = tensor.extract_slice %w[0, 0, 0, 0] [64, 32, 1, 1] [1, 1, 1, 1] : tensor<64x32x1x1xf16> to tensor<64x32xf16>
// CHECK-NEXT:    linalg.generic {{.*}} ins(%[[X]], %[[W]] : tensor<1x32x7x7xf16>, tensor<64x32xf16>) outs(%acc : tensor<1x64x7x7xf32>)
func.func @strided_1x1(%x: tensor<1x32x13x13xf16>, %w: tensor<64x32x1x1xf16>, %acc: tensor<1x64x7x7xf32>) -> tensor<1x64x7x7xf32> {
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, ((d2 * 2) + d5), ((d3 * 2) + d6))>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x32x13x13xf16>, tensor<64x32x1x1xf16>) outs(%acc : tensor<1x64x7x7xf32>) {
  ^bb0(%a: f16, %b: f16, %s: f32):
    %ea = arith.extf %a : f16 to f32
    %eb = arith.extf %b : f16 to f32
    %p = arith.mulf %ea, %eb : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<1x64x7x7xf32>
  func.return %y : tensor<1x64x7x7xf32>
}
