// An MLP imported from ONNX: Gemm with transB, initializers as named constants, one @main.
// RUN: rm -rf %t && mkdir -p %t
// RUN: python %examples/models/mlp.py %t/mlp.onnx
// RUN: ziggurat-compile %t/mlp.onnx | filecheck %s
// The IR written with -o parses again and runs through the graph passes.
// RUN: ziggurat-compile %t/mlp.onnx -o %t/mlp.mlir
// RUN: ziggurat-opt %t/mlp.mlir -p graph-canonicalize,cse | filecheck %s

// CHECK:      func.func @main(%x: tensor<4x64xf32>) -> tensor<4x10xf32> {
// CHECK-DAG:    %fc1_w = graph.constant dense<"0x{{[0-9A-F]+}}"> : tensor<128x64xf32>
// CHECK-DAG:    %fc1_b = graph.constant dense<"0x{{[0-9A-F]+}}"> : tensor<128xf32>
// CHECK:        %fc1 = graph.gemm %x, %fc1_w, %fc1_b {trans_b = true} : (tensor<4x64xf32>, tensor<128x64xf32>, tensor<128xf32>) -> tensor<4x128xf32>
// CHECK-NEXT:   %relu1 = graph.relu %fc1 : tensor<4x128xf32>
// CHECK:        %logits = graph.gemm %relu1, %fc2_w, %fc2_b {trans_b = true} : (tensor<4x128xf32>, tensor<10x128xf32>, tensor<10xf32>) -> tensor<4x10xf32>
// CHECK-NEXT:   %probs = graph.softmax %logits : tensor<4x10xf32>
// CHECK-NEXT:   func.return %probs : tensor<4x10xf32>
