// A ResNet basic block: Conv pads in ONNX's [top, left, bottom, right] order, BatchNormalization, the shortcut Add.
// RUN: rm -rf %t && mkdir -p %t
// RUN: python %examples/models/resnet_block.py %t/block.onnx
// RUN: ziggurat-compile %t/block.onnx --opt | filecheck %s

// CHECK:      func.func @main(%x: tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32> {
// CHECK:        %conv1 = graph.conv2d %x, %conv1_w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x16x16xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x16x16xf32>
// CHECK:        %bn1 = graph.batch_norm %conv1, %bn1_scale, %bn1_bias, %bn1_mean, %bn1_var : (tensor<1x16x16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x16x16x16xf32>
// CHECK-NEXT:   %relu1 = graph.relu %bn1 : tensor<1x16x16x16xf32>
// CHECK:        %bn2 = graph.batch_norm %conv2,
// CHECK-NEXT:   %sum = graph.add %bn2, %x : (tensor<1x16x16x16xf32>, tensor<1x16x16x16xf32>) -> tensor<1x16x16x16xf32>
// CHECK-NEXT:   %y = graph.relu %sum : tensor<1x16x16x16xf32>
// CHECK-NEXT:   func.return %y
