// RUN: ziggurat-opt %s --split-input-file -p graph-space-to-depth | filecheck %s
// RUN: ziggurat-opt %s --split-input-file -p 'graph-space-to-depth{k-multiple=1}' | filecheck %s --check-prefix=UNIT
// RUN: not ziggurat-opt %s -p 'graph-space-to-depth{k-multiple=0}' 2>&1 | filecheck %s --check-prefix=BAD-OPTION
// RUN: not ziggurat-opt %s -p 'graph-space-to-depth{machine=abacus}' 2>&1 | filecheck %s --check-prefix=BAD-MACHINE
// Numerics: the rewritten stem computes what the original does on the graph
// interpreter (test/compile/space-to-depth-stem.mlir runs it lowered).
// RUN: ziggurat-run %s --function stem --save-inputs %t.in.npz --outputs %t.ref.npz
// RUN: ziggurat-opt %s -p graph-space-to-depth,graph-fold-constants | ziggurat-run - --function stem --inputs %t.in.npz --expect %t.ref.npz --rtol 1e-5 --atol 1e-5

// BAD-OPTION: error: invalid options for pass 'graph-space-to-depth': k-multiple must be >= 1, got 0
// BAD-MACHINE: error: unknown machine 'abacus'

// ResNet's stem, 7x7 with stride 2 over 3 channels, on a 16x16 image: the
// input's 2x2 blocks become 12 channels of 8x8 and the kernel 4x4. One zero tap
// in front makes the top and left padding 4 (2 blocks); one block after the
// input gives 8 output rows again. The weights, padded to 8x8 and rearranged the
// same way, are constants that graph-fold-constants folds.
// CHECK-LABEL: func.func @stem(
// CHECK-NEXT:    %[[WP:.*]] = graph.pad %w {pads = array<i64: 0, 0, 1, 1, 0, 0, 0, 0>} : tensor<8x3x7x7xf32> -> tensor<8x3x8x8xf32>
// CHECK-NEXT:    %[[W6:.*]] = graph.reshape %[[WP]] : tensor<8x3x8x8xf32> -> tensor<8x3x4x2x4x2xf32>
// CHECK-NEXT:    %[[WT:.*]] = graph.transpose %[[W6]] {perm = array<i64: 0, 1, 3, 5, 2, 4>} : tensor<8x3x4x2x4x2xf32> -> tensor<8x3x2x2x4x4xf32>
// CHECK-NEXT:    %[[WS:.*]] = graph.reshape %[[WT]] : tensor<8x3x2x2x4x4xf32> -> tensor<8x12x4x4xf32>
// CHECK-NEXT:    %[[X6:.*]] = graph.reshape %x : tensor<1x3x16x16xf32> -> tensor<1x3x8x2x8x2xf32>
// CHECK-NEXT:    %[[XT:.*]] = graph.transpose %[[X6]] {perm = array<i64: 0, 1, 3, 5, 2, 4>} : tensor<1x3x8x2x8x2xf32> -> tensor<1x3x2x2x8x8xf32>
// CHECK-NEXT:    %[[XS:.*]] = graph.reshape %[[XT]] : tensor<1x3x2x2x8x8xf32> -> tensor<1x12x8x8xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.conv2d %[[XS]], %[[WS]], %b {pads = array<i64: 2, 2, 1, 1>} : (tensor<1x12x8x8xf32>, tensor<8x12x4x4xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
// CHECK-NEXT:    func.return %[[Y]]
// With every channel counted (a unit that pads nothing), 12 channels of 4x4 are
// more work than 3 of 7x7: nothing changes. (With option `machine`, the machine's
// matrix unit and DMAs decide: test/compile/space-to-depth-stem.mlir.)
// UNIT-LABEL: func.func @stem(
// UNIT-NEXT:    graph.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>}
func.func @stem(%x: tensor<1x3x16x16xf32>, %w: tensor<8x3x7x7xf32>, %b: tensor<8xf32>) -> tensor<1x8x8x8xf32> {
  %y = graph.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>} : (tensor<1x3x16x16xf32>, tensor<8x3x7x7xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  func.return %y : tensor<1x8x8x8xf32>
}

// -----

// A MobileNet-style stem, 3x3/2 with padding 1 and no bias, on a 12x10 image
// (rows and columns differ): the kernel becomes 2x2 (one zero tap in front),
// the padding one block before and none after.
// CHECK-LABEL: func.func @mobilenet_stem(
// CHECK:         graph.pad %w {pads = array<i64: 0, 0, 1, 1, 0, 0, 0, 0>} : tensor<4x3x3x3xf32> -> tensor<4x3x4x4xf32>
// CHECK:         graph.reshape {{.*}} : tensor<1x3x2x2x6x5xf32> -> tensor<1x12x6x5xf32>
// CHECK-NEXT:    graph.conv2d {{.*}} {pads = array<i64: 1, 1, 0, 0>} : (tensor<1x12x6x5xf32>, tensor<4x12x2x2xf32>) -> tensor<1x4x6x5xf32>
func.func @mobilenet_stem(%x: tensor<1x3x12x10xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x5xf32> {
  %y = graph.conv2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x12x10xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x5xf32>
  func.return %y : tensor<1x4x6x5xf32>
}

// -----

// Stride 2 down the rows only, no padding: the blocks are 2x1, the kernel 3x3
// becomes 2x3 (one zero tap after, none in front), and 2 channels become 4.
// CHECK-LABEL: func.func @rows_only(
// CHECK:         graph.pad %w {pads = array<i64: 0, 0, 0, 0, 0, 0, 1, 0>} : tensor<4x2x3x3xf32> -> tensor<4x2x4x3xf32>
// CHECK:         graph.transpose {{.*}} : tensor<1x2x4x2x6x1xf32> -> tensor<1x2x2x1x4x6xf32>
// CHECK:         graph.conv2d %{{[0-9]+}}, %{{[0-9]+}} : (tensor<1x4x4x6xf32>, tensor<4x4x2x3xf32>) -> tensor<1x4x3x4xf32>
func.func @rows_only(%x: tensor<1x2x8x6xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x3x4xf32> {
  %y = graph.conv2d %x, %w {strides = array<i64: 2, 1>} : (tensor<1x2x8x6xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x3x4xf32>
  func.return %y : tensor<1x4x3x4xf32>
}

// -----

// Left alone: a deep strided conv (64 channels already fill the unit: 256
// channels of 2x2 would be more work), a stride-1 conv, a height that is not a
// multiple of the stride, an NHWC conv, a grouped conv and a dilated one.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT:     graph.transpose
// CHECK-NOT:     graph.reshape
// CHECK:         func.return
func.func @left_alone(%deep: tensor<1x64x8x8xf32>, %wd: tensor<8x64x3x3xf32>,
                      %x: tensor<1x3x9x8xf32>, %w: tensor<8x3x3x3xf32>,
                      %nhwc: tensor<1x8x8x3xf32>, %wn: tensor<8x3x3x3xf32>,
                      %grouped: tensor<1x4x8x8xf32>, %wg: tensor<8x2x3x3xf32>,
                      %x8: tensor<1x3x8x8xf32>) -> (tensor<1x8x4x4xf32>, tensor<1x8x7x6xf32>, tensor<1x8x4x3xf32>, tensor<1x4x4x8xf32>, tensor<1x8x4x4xf32>, tensor<1x8x2x2xf32>) {
  %0 = graph.conv2d %deep, %wd {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x64x8x8xf32>, tensor<8x64x3x3xf32>) -> tensor<1x8x4x4xf32>
  %1 = graph.conv2d %x, %w : (tensor<1x3x9x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x7x6xf32>
  %2 = graph.conv2d %x, %w {strides = array<i64: 2, 2>} : (tensor<1x3x9x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x4x3xf32>
  %3 = graph.conv2d %nhwc, %wn {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, layout = "NHWC"} : (tensor<1x8x8x3xf32>, tensor<8x3x3x3xf32>) -> tensor<1x4x4x8xf32>
  %4 = graph.conv2d %grouped, %wg {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x4x4xf32>
  %5 = graph.conv2d %x8, %w {strides = array<i64: 2, 2>, dilations = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x2x2xf32>
  func.return %0, %1, %2, %3, %4, %5 : tensor<1x8x4x4xf32>, tensor<1x8x7x6xf32>, tensor<1x8x4x3xf32>, tensor<1x4x4x8xf32>, tensor<1x8x4x4xf32>, tensor<1x8x2x2xf32>
}
