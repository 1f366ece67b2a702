// A transformer encoder layer: attention heads as reshape + transpose, batched matmuls, softmax,
// LayerNormalization, and GELU as PyTorch exports it (erf); checked against onnxruntime after --opt.
// RUN: rm -rf %t && mkdir -p %t
// RUN: python %examples/models/transformer_encoder.py %t/encoder.onnx
// RUN: ziggurat-compile %t/encoder.onnx --opt | filecheck %s
// RUN: ziggurat-compile %t/encoder.onnx --opt --check | filecheck %s --check-prefix=NUMBERS

// CHECK:      %q_split = graph.reshape %q_proj : tensor<1x8x32xf32> -> tensor<1x8x4x8xf32>
// CHECK-NEXT: %q_heads = graph.transpose %q_split {perm = array<i64: 0, 2, 1, 3>} : tensor<1x8x4x8xf32> -> tensor<1x4x8x8xf32>
// CHECK:      %k_heads = graph.transpose %k_split {perm = array<i64: 0, 2, 3, 1>}
// CHECK:      %scores_raw = graph.matmul %q_heads, %k_heads : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK:      %attention = graph.softmax %scores : tensor<1x4x8x8xf32>
// CHECK:      %norm1 = graph.layer_norm %residual1, %norm1_scale, %norm1_bias : (tensor<1x8x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x8x32xf32>
// CHECK:      %gelu_erf = graph.erf %gelu_scaled : tensor<1x8x64xf32>
// CHECK:      %y = graph.layer_norm %residual2,
// CHECK-NEXT: func.return %y : tensor<1x8x32xf32>

// NUMBERS:  output 'y': float32[1, 8, 32]  max abs error {{[0-9.e-]+}}  bound {{[0-9.e-]+}} (0.000122 x max|ref| {{[0-9.e+-]+}})  ok
// NUMBERS:  check passed: 1 output(s) match onnxruntime
