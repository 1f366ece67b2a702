// Inputs from an npz keyed by argument name; --print shows every element.
// RUN: python -c "import numpy as np; np.savez('%t.npz', w=np.eye(3, 2, dtype=np.float32), x=np.arange(6, dtype=np.float32).reshape(2, 3) - 3)"
// RUN: ziggurat-run %s --inputs %t.npz --print | filecheck %s

// x @ w keeps the first two columns of x: [[-3, -2], [0, 1]]; the bias adds [1, 1].
// CHECK:      result0: tensor<2x2xf32>
// CHECK-NEXT: {{\[\[}}0. 0.]
// CHECK-NEXT:  [1. 2.]]
// CHECK-NEXT: result1: tensor<2x2xf32>
// CHECK-NEXT: {{\[\[}}-2. 1.]
// CHECK-NEXT:  [-1. 2.]]

func.func @main(%x: tensor<2x3xf32>, %w: tensor<3x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %bias = arith.constant dense<1.0> : tensor<2xf32>
  %m = graph.matmul %x, %w : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %a = graph.add %m, %bias : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %r = graph.relu %a : tensor<2x2xf32>
  %t = graph.transpose %a {perm = array<i64: 1, 0>} : tensor<2x2xf32> -> tensor<2x2xf32>
  func.return %r, %t : tensor<2x2xf32>, tensor<2x2xf32>
}
