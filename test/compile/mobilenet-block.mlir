// A MobileNetV2 block: depthwise Conv (group = channels) and ReLU6 written as Clip(0, 6) with constant inputs.
// RUN: rm -rf %t && mkdir -p %t
// RUN: python %examples/models/mobilenet_block.py %t/block.onnx
// RUN: ziggurat-compile %t/block.onnx | filecheck %s

// CHECK:      %expand = graph.conv2d %x, %expand_w : (tensor<1x16x16x16xf32>, tensor<64x16x1x1xf32>) -> tensor<1x64x16x16xf32>
// CHECK:      %expand_relu6 = graph.clip %expand_bn {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : tensor<1x64x16x16xf32>
// CHECK:      %depthwise = graph.conv2d %expand_relu6, %depthwise_w {pads = array<i64: 1, 1, 1, 1>, groups = 64 : i64} : (tensor<1x64x16x16xf32>, tensor<64x1x3x3xf32>) -> tensor<1x64x16x16xf32>
// CHECK:      %project = graph.conv2d %depthwise_relu6, %project_w : (tensor<1x64x16x16xf32>, tensor<16x64x1x1xf32>) -> tensor<1x16x16x16xf32>
// CHECK:      %y = graph.add %project_bn, %x
// The Clip bounds became attributes: their constants are gone.
// CHECK-NOT:  relu6_min
