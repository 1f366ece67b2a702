func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = graph.relu %a : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @g(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = graph.transpose %a {perm = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}
