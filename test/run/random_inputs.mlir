// Without --inputs the arguments are random with a fixed seed (default 0);
// the summary shows each result's type, min/max/mean and first elements.
// RUN: ziggurat-run %s | filecheck %s
// RUN: ziggurat-run %s --seed 0 | filecheck %s
// RUN: ziggurat-run %s --seed 1 | filecheck %s --check-prefix=OTHER-SEED

// relu of 16 standard normal samples: the negative ones become exactly 0.
// CHECK:      result0: tensor<4x4xf32>  min 0 max 1.304 mean 0.220316
// CHECK-NEXT:   0.12573 0 0.640423 0.1049 0 0.361595 1.304 0.947081 ...
// exp of the same samples: positive, with exp(1.304) as the maximum.
// CHECK-NEXT: result1: tensor<4x4xf32>  min 0.0977804 max 3.684 mean 1.08289
// CHECK-NEXT:   1.13398 0.876249 1.89728 1.1106 0.585277 1.43562 3.684 2.57817 ...

// OTHER-SEED:     result0: tensor<4x4xf32>  min 0 max
// OTHER-SEED-NOT: max 1.304

func.func @main(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %r = graph.relu %x : tensor<4x4xf32>
  %e = graph.exp %x : tensor<4x4xf32>
  func.return %r, %e : tensor<4x4xf32>, tensor<4x4xf32>
}
