// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics -p graph-fold-constants | filecheck %s
// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics -p graph-canonicalize | filecheck %s

// An op whose evaluation fails on its constant operands is left to fail at
// run time, with a warning at the op; everything else still folds.
// graph-canonicalize folds the same way.

// CHECK-LABEL: func.func @gather_out_of_range(
// CHECK:         graph.gather
// CHECK-NOT:     graph.add
func.func @gather_out_of_range() -> (tensor<2xf32>, tensor<3xf32>) {
  %data = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %indices = graph.constant dense<[0, 3]> : tensor<2xi64>
  // expected-warning@+1 {{'graph.gather' not folded: evaluating it failed: ValueError: gather indices must be in [-3, 3), got 0..3}}
  %0 = graph.gather %data, %indices : (tensor<3xf32>, tensor<2xi64>) -> tensor<2xf32>
  %1 = graph.add %data, %data : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %0, %1 : tensor<2xf32>, tensor<3xf32>
}

// -----

// Integer powers with negative exponents have no integer value.
// CHECK-LABEL: func.func @negative_integer_power(
// CHECK:         graph.pow
func.func @negative_integer_power() -> tensor<2xi32> {
  %base = graph.constant dense<[2, 3]> : tensor<2xi32>
  %exponent = graph.constant dense<-1> : tensor<2xi32>
  // expected-warning@+1 {{'graph.pow' not folded: evaluating it failed: ValueError: Integers to negative integer powers are not allowed.}}
  %0 = graph.pow %base, %exponent : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  func.return %0 : tensor<2xi32>
}
