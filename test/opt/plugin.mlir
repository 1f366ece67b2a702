// RUN: ziggurat-opt %s | filecheck %s --check-prefix PARSE
// RUN: ziggurat-opt %s -p toy-double-to-add,cse | filecheck %s
// RUN: ziggurat-opt --list-passes | filecheck %s --check-prefix LIST

// The `toy` dialect and the `toy-double-to-add` pass come from
// test/plugin (package ziggurat-example-plugin), registered through the
// `xdsl.universe` entry point: ziggurat-opt parses, runs and lists them with no
// change to ziggurat.

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = toy.double %x : tensor<4xf32>
  %1 = toy.double %x : tensor<4xf32>
  %2 = graph.add %0, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// PARSE:      %0 = toy.double %x : tensor<4xf32>
// PARSE-NEXT: %1 = toy.double %x : tensor<4xf32>

// CHECK:      func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:   %0 = graph.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:   %1 = graph.add %0, %0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:   func.return %1 : tensor<4xf32>

// LIST: toy-double-to-add  - Rewrite toy.double on tensors to graph.add
