// The graph level of examples/npu/elementwise_reduce.mlir (softmax of each row), for test/run/expect.mlir.
func.func @main(%X: tensor<32x256xf32>) -> tensor<32x256xf32> {
  %y = graph.softmax %X : tensor<32x256xf32>
  func.return %y : tensor<32x256xf32>
}
