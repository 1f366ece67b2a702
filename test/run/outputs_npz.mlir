// --outputs writes result0, result1, ... to an npz and prints nothing; positional arr_0 inputs are accepted.
// RUN: python -c "import numpy as np; np.savez('%t.in.npz', np.array([[1, -2], [3, -4]], dtype=np.int32))"
// RUN: ziggurat-run %s --inputs %t.in.npz --outputs %t.out.npz | filecheck %s --allow-empty --check-prefix=QUIET
// RUN: python -c "import numpy as np; r = np.load('%t.out.npz'); print(sorted(r.files), r['result0'].dtype, r['result0'].tolist(), r['result1'].tolist())" | filecheck %s

// QUIET-NOT: {{.}}
// CHECK: ['result0', 'result1'] int32 {{\[\[}}1, 0], [3, 0]] {{\[\[}}2, 4], [3, 7]]

func.func @main(%x: tensor<2x2xi32>) -> (tensor<2x2xi32>, tensor<2x2xi32>) {
  %r = graph.relu %x : tensor<2x2xi32>
  %c = graph.constant dense<[[1, 3], [1, 7]]> : tensor<2x2xi32>
  %s = graph.add %r, %c : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x2xi32>
  %t = graph.transpose %s {perm = array<i64: 1, 0>} : tensor<2x2xi32> -> tensor<2x2xi32>
  func.return %r, %t : tensor<2x2xi32>, tensor<2x2xi32>
}
