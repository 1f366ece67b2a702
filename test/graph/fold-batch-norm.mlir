// RUN: ziggurat-opt %s -p graph-fold-batch-norm | filecheck %s

// CHECK-LABEL: func.func @conv_bn
// f = scale / sqrt(var + 1) = [2, 1]: w * f = [2, 2], bias - mean * f = [-1.5, -1].
// CHECK:         %[[W:.*]] = graph.constant dense<2.000000e+00> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<[-1.500000e+00, -1.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %x, %[[W]], %[[B]] : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    func.return %[[C]]
func.func @conv_bn(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = graph.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %scale = graph.constant dense<[4.0, 3.0]> : tensor<2xf32>
  %bias = graph.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %mean = graph.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %var = graph.constant dense<[3.0, 8.0]> : tensor<2xf32>
  %c = graph.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %b = graph.batch_norm %c, %scale, %bias, %mean, %var {epsilon = 1.0 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %b : tensor<1x2x3x3xf32>
}

// The conv's bias is folded too: f = [1, 1], bias - mean * f = [-0.5, -2], conv bias * f + that = [0, 1].
// CHECK-LABEL: func.func @conv_bias_bn
// CHECK:         %[[B:.*]] = graph.constant dense<[0.000000e+00, 1.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    graph.conv2d %x, %{{.*}}, %[[B]]
// CHECK-NOT:     graph.batch_norm
func.func @conv_bias_bn(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = graph.constant dense<1.0> : tensor<2x1x1x1xf32>
  %cb = graph.constant dense<[0.5, 3.0]> : tensor<2xf32>
  %one = graph.constant dense<1.0> : tensor<2xf32>
  %bias = graph.constant dense<[0.5, -1.0]> : tensor<2xf32>
  %c = graph.conv2d %x, %w, %cb : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  %b = graph.batch_norm %c, %one, %bias, %one, %one {epsilon = 0.0 : f32} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %b : tensor<1x2x3x3xf32>
}

// CHECK-LABEL: func.func @gemm_bn
// CHECK:         graph.gemm %a, %{{.*}}, %{{.*}} {trans_b = true} : (tensor<3x4xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<3x5xf32>
// CHECK-NOT:     graph.batch_norm
func.func @gemm_bn(%a: tensor<3x4xf32>) -> tensor<3x5xf32> {
  %w = graph.constant dense<0.25> : tensor<5x4xf32>
  %c = graph.constant dense<1.5> : tensor<5xf32>
  %s = graph.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>
  %g = graph.gemm %a, %w, %c {trans_b = true, beta = 2.0 : f32} : (tensor<3x4xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  %b = graph.batch_norm %g, %s, %s, %s, %s : (tensor<3x5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  func.return %b : tensor<3x5xf32>
}

// CHECK-LABEL: func.func @matmul_bn
// CHECK:         graph.gemm %a, %{{.*}}, %{{.*}} : (tensor<3x4xf32>, tensor<4x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
// CHECK-NOT:     graph.batch_norm
func.func @matmul_bn(%a: tensor<3x4xf32>) -> tensor<3x5xf32> {
  %w = graph.constant dense<0.25> : tensor<4x5xf32>
  %s = graph.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>
  %m = graph.matmul %a, %w : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %b = graph.batch_norm %m, %s, %s, %s, %s : (tensor<3x5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  func.return %b : tensor<3x5xf32>
}

// Not folded: a statistic is a function argument.
// CHECK-LABEL: func.func @param_not_constant
// CHECK:         graph.conv2d
// CHECK-NEXT:    graph.batch_norm
func.func @param_not_constant(%x: tensor<1x1x3x3xf32>, %mean: tensor<2xf32>) -> tensor<1x2x3x3xf32> {
  %w = graph.constant dense<1.0> : tensor<2x1x1x1xf32>
  %one = graph.constant dense<1.0> : tensor<2xf32>
  %c = graph.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %b = graph.batch_norm %c, %one, %one, %mean, %one : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %b : tensor<1x2x3x3xf32>
}

// Not folded: the conv result is also returned.
// CHECK-LABEL: func.func @conv_used_twice
// CHECK:         %[[C:.*]] = graph.conv2d
// CHECK-NEXT:    %[[B:.*]] = graph.batch_norm %[[C]]
// CHECK-NEXT:    func.return %[[C]], %[[B]]
func.func @conv_used_twice(%x: tensor<1x1x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %w = graph.constant dense<1.0> : tensor<2x1x1x1xf32>
  %one = graph.constant dense<1.0> : tensor<2xf32>
  %c = graph.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %b = graph.batch_norm %c, %one, %one, %one, %one : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %c, %b : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}

// Not folded: in NHWC the batch norm's axis 1 is H, not the conv's output channels.
// CHECK-LABEL: func.func @nhwc_conv
// CHECK:         graph.conv2d
// CHECK-NEXT:    graph.batch_norm
func.func @nhwc_conv(%x: tensor<1x3x3x1xf32>) -> tensor<1x3x3x3xf32> {
  %w = graph.constant dense<1.0> : tensor<3x1x1x1xf32>
  %one = graph.constant dense<1.0> : tensor<3xf32>
  %c = graph.conv2d %x, %w {layout = "NHWC"} : (tensor<1x3x3x1xf32>, tensor<3x1x1x1xf32>) -> tensor<1x3x3x3xf32>
  %b = graph.batch_norm %c, %one, %one, %one, %one : (tensor<1x3x3x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x3x3xf32>
  func.return %b : tensor<1x3x3x3xf32>
}

// matmul + constant add + batch norm: one gemm whose c is addend * f + s = s + f * (2 - s), f ~ sqrt(s).
// CHECK-LABEL: func.func @matmul_add_bn
// CHECK:         %[[C:.*]] = graph.constant dense<[1.99999499, 2.000000e+00, 1.26795208, 4.99999032e-06, -1.70819724]> : tensor<5xf32>
// CHECK-NEXT:    graph.gemm %a, %{{.*}}, %[[C]] : (tensor<3x4xf32>, tensor<4x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
// CHECK-NOT:     graph.batch_norm
func.func @matmul_add_bn(%a: tensor<3x4xf32>) -> tensor<3x5xf32> {
  %w = graph.constant dense<0.25> : tensor<4x5xf32>
  %c = graph.constant dense<2.0> : tensor<5xf32>
  %s = graph.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>
  %m = graph.matmul %a, %w : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %p = graph.add %c, %m : (tensor<5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %b = graph.batch_norm %p, %s, %s, %s, %s : (tensor<3x5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  func.return %b : tensor<3x5xf32>
}
