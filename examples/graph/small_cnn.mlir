// A small CNN classifier at the graph level: an 8x8 grey image, four hand-made
// 3x3 filters, batch norm, relu, max pool, a 1x1 convolution to eight
// channels, global average pooling and a linear layer to four class
// probabilities. The weights are constants in the IR.
//
//   ziggurat-run examples/graph/small_cnn.mlir            # random image, seed 0
//   ziggurat-opt examples/graph/small_cnn.mlir -p graph-fold-constants,graph-canonicalize,cse,dce
//
// As written by a naive exporter, it carries work the graph simplifier removes
// without changing the result: weights stored in another layout and
// transposed or reshaped at run time (constant folding), an add of zeros and
// a relu of a relu (canonicalization), a layout round trip NCHW -> NHWC ->
// NCHW (canonicalization), and two identical branches (CSE).

func.func @main(%image: tensor<1x1x8x8xf32>) -> tensor<1x4xf32> {
  // Filters: horizontal edges, vertical edges, blur, center-surround.
  %w1 = graph.constant dense<[
    [[[0.25, 0.25, 0.25], [0.0, 0.0, 0.0], [-0.25, -0.25, -0.25]]],
    [[[0.25, 0.0, -0.25], [0.25, 0.0, -0.25], [0.25, 0.0, -0.25]]],
    [[[0.11, 0.11, 0.11], [0.11, 0.12, 0.11], [0.11, 0.11, 0.11]]],
    [[[0.0, -0.25, 0.0], [-0.25, 1.0, -0.25], [0.0, -0.25, 0.0]]]
  ]> : tensor<4x1x3x3xf32>
  %b1 = graph.constant dense<[0.0, 0.0, 0.1, 0.0]> : tensor<4xf32>
  %conv1 = graph.conv2d %image, %w1, %b1 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x8x8xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>

  %scale = graph.constant dense<[1.0, 1.0, 2.0, 0.5]> : tensor<4xf32>
  %shift = graph.constant dense<[0.0, 0.1, -0.1, 0.0]> : tensor<4xf32>
  %mean = graph.constant dense<[0.0, 0.0, 0.05, 0.0]> : tensor<4xf32>
  %variance = graph.constant dense<[0.5, 0.5, 0.25, 1.0]> : tensor<4xf32>
  %bn1 = graph.batch_norm %conv1, %scale, %shift, %mean, %variance : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>

  // A zero bias the exporter materialized, and an activation applied twice.
  %zeros = graph.constant dense<0.0> : tensor<4x1x1xf32>
  %biased = graph.add %bn1, %zeros : (tensor<1x4x8x8xf32>, tensor<4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %relu1 = graph.relu %biased : tensor<1x4x8x8xf32>
  %relu1_again = graph.relu %relu1 : tensor<1x4x8x8xf32>
  %pool1 = graph.max_pool %relu1_again {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>

  // To NHWC and straight back.
  %nhwc = graph.transpose %pool1 {perm = array<i64: 0, 2, 3, 1>} : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>
  %nchw = graph.transpose %nhwc {perm = array<i64: 0, 3, 1, 2>} : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>

  // 1x1 convolution, its weights stored as an 8x4 matrix.
  %w2_matrix = graph.constant dense<[
    [-0.64, 0.28, -0.07, -0.26], [-0.29, 0.58, 0.81, -0.65],
    [0.31, -0.4, 0.93, 0.84], [0.27, 0.51, 0.03, 0.65],
    [-0.1, -0.32, -0.44, -0.55], [0.05, -0.14, 0.33, -0.97],
    [-0.1, -0.27, -0.61, 0.19], [-0.13, -0.4, -0.58, 0.75]
  ]> : tensor<8x4xf32>
  %w2 = graph.reshape %w2_matrix : tensor<8x4xf32> -> tensor<8x4x1x1xf32>
  %conv2 = graph.conv2d %nchw, %w2 : (tensor<1x4x4x4xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x4x4xf32>

  // Two identical branches, averaged.
  %branch_a = graph.relu %conv2 : tensor<1x8x4x4xf32>
  %branch_b = graph.relu %conv2 : tensor<1x8x4x4xf32>
  %sum = graph.add %branch_a, %branch_b : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %relu2 = graph.mul %sum, %half : (tensor<1x8x4x4xf32>, tensor<f32>) -> tensor<1x8x4x4xf32>

  %pooled = graph.global_avg_pool %relu2 : tensor<1x8x4x4xf32> -> tensor<1x8x1x1xf32>
  %features = graph.reshape %pooled : tensor<1x8x1x1xf32> -> tensor<1x8xf32>

  // Linear layer, its weights stored transposed (classes x features).
  %fc_t = graph.constant dense<[
    [0.59, 0.21, -0.31, 0.89, 0.13, -0.13, 0.8, -0.36],
    [0.39, -0.37, -0.48, 0.4, -0.54, -0.01, 0.16, -0.62],
    [0.46, 0.1, 0.24, -0.26, -0.16, -0.01, -0.06, 0.35],
    [0.15, -0.17, -1.0, 0.59, 0.04, -0.35, 0.0, -0.81]
  ]> : tensor<4x8xf32>
  %fc = graph.transpose %fc_t {perm = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<8x4xf32>
  %fc_bias = graph.constant dense<[0.1, 0.0, -0.1, 0.05]> : tensor<4xf32>
  %logits = graph.gemm %features, %fc, %fc_bias : (tensor<1x8xf32>, tensor<8x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
  %probabilities = graph.softmax %logits : tensor<1x4xf32>
  func.return %probabilities : tensor<1x4xf32>
}
