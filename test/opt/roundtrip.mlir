// RUN: ziggurat-opt %s | filecheck %s
// RUN: ziggurat-opt %s | ziggurat-opt | filecheck %s
// RUN: ziggurat-opt %s --print-op-generic | ziggurat-opt | filecheck %s
// RUN: ziggurat-opt %s --print-op-generic | filecheck %s --check-prefix GENERIC
// RUN: ziggurat-opt %s --print-debuginfo | filecheck %s --check-prefix LOC

// Every op gets its source position when parsed (xDSL alone leaves loc(unknown)).

func.func @mlp(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<16x4xf32> {
  %c = graph.constant dense<1.0> : tensor<4x16xf32>
  %0 = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %1 = graph.add %0, %c : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %2 = graph.relu %1 : tensor<4x16xf32>
  %3 = graph.transpose %2 {perm = array<i64: 1, 0>} : tensor<4x16xf32> -> tensor<16x4xf32>
  func.return %3 : tensor<16x4xf32>
}

// CHECK:      func.func @mlp(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<16x4xf32> {
// CHECK-NEXT:   %c = graph.constant dense<1.000000e+00> : tensor<4x16xf32>
// CHECK-NEXT:   %0 = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:   %1 = graph.add %0, %c : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT:   %2 = graph.relu %1 : tensor<4x16xf32>
// CHECK-NEXT:   %3 = graph.transpose %2 {perm = array<i64: 1, 0>} : tensor<4x16xf32> -> tensor<16x4xf32>
// CHECK-NEXT:   func.return %3 : tensor<16x4xf32>
// CHECK-NEXT: }

// GENERIC: "graph.matmul"(%x, %w)
// GENERIC: "graph.transpose"(%2) <{perm = array<i64: 1, 0>}>

// LOC:      graph.constant {{.*}} loc("{{.*}}roundtrip.mlir":10:3)
// LOC:      graph.matmul {{.*}} loc("{{.*}}roundtrip.mlir":11:3)
// LOC:      graph.transpose {{.*}} loc("{{.*}}roundtrip.mlir":14:3)
// LOC:      func.return {{.*}} loc("{{.*}}roundtrip.mlir":15:3)
// LOC-NEXT: } loc("{{.*}}roundtrip.mlir":9:1)
