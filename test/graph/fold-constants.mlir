// RUN: ziggurat-opt %s --split-input-file -p graph-fold-constants | filecheck %s
// RUN: ziggurat-opt %s --split-input-file -p 'graph-fold-constants{max-elements=4}' | filecheck %s --check-prefix=MAX4

// A chain of ops on constants folds in one run, into one constant; the
// constants it read are erased.
// CHECK-LABEL: func.func @chain(
// CHECK-NEXT:    %[[C:.*]] = graph.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 8.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT:    %[[R:.*]] = graph.add %x, %[[C]]
// CHECK-NEXT:    func.return %[[R]]
func.func @chain(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %a = graph.constant dense<[[1.0, -2.0], [3.0, -4.0]]> : tensor<2x2xf32>
  %b = arith.constant dense<[[0.0, 3.0], [-1.0, 8.0]]> : tensor<2x2xf32>
  %0 = graph.relu %a : tensor<2x2xf32>
  %1 = graph.add %0, %b : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %2 = graph.transpose %1 {perm = array<i64: 1, 0>} : tensor<2x2xf32> -> tensor<2x2xf32>
  %3 = graph.add %x, %2 : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %3 : tensor<2x2xf32>
}

// Results keep their element type: i8 wraps around as it does at run time.
// CHECK-LABEL: func.func @int8_wraps(
// CHECK-NEXT:    %[[C:.*]] = graph.constant dense<[-56, 0, 127]> : tensor<3xi8>
// CHECK-NEXT:    func.return %[[C]]
func.func @int8_wraps() -> tensor<3xi8> {
  %a = graph.constant dense<[100, -128, 127]> : tensor<3xi8>
  %b = graph.constant dense<[100, -128, 0]> : tensor<3xi8>
  %0 = graph.add %a, %b : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>
  func.return %0 : tensor<3xi8>
}

// Narrow floats round to their own precision: 1 + 2^-11 is 1 in f16, 2048 + 1 is 2048 in bf16 (8-bit mantissa).
// CHECK-LABEL: func.func @narrow_floats(
// CHECK-NEXT:    %[[H:.*]] = graph.constant dense<1.000000e+00> : tensor<2xf16>
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<2.048000e+03> : tensor<2xbf16>
// CHECK-NEXT:    func.return %[[H]], %[[B]]
func.func @narrow_floats() -> (tensor<2xf16>, tensor<2xbf16>) {
  %a = graph.constant dense<1.0> : tensor<2xf16>
  %b = graph.constant dense<0.00048828125> : tensor<2xf16>
  %0 = graph.add %a, %b : (tensor<2xf16>, tensor<2xf16>) -> tensor<2xf16>
  %c = graph.constant dense<2048.0> : tensor<2xbf16>
  %d = graph.constant dense<1.0> : tensor<2xbf16>
  %1 = graph.add %c, %d : (tensor<2xbf16>, tensor<2xbf16>) -> tensor<2xbf16>
  func.return %0, %1 : tensor<2xf16>, tensor<2xbf16>
}

// Broadcasting folds to the result's shape; a constant still used elsewhere stays.
// CHECK-LABEL: func.func @broadcast_and_shared(
// CHECK-NEXT:    %[[A:.*]] = graph.constant dense<[1, 2, 3]> : tensor<3xui8>
// CHECK-NEXT:    %[[C:.*]] = graph.constant dense<{{\[}}[11, 12, 13], [21, 22, 23]]> : tensor<2x3xui8>
// CHECK-NEXT:    func.return %[[C]], %[[A]]
func.func @broadcast_and_shared() -> (tensor<2x3xui8>, tensor<3xui8>) {
  %a = graph.constant dense<[1, 2, 3]> : tensor<3xui8>
  %b = graph.constant dense<[[10], [20]]> : tensor<2x1xui8>
  %0 = graph.add %a, %b : (tensor<3xui8>, tensor<2x1xui8>) -> tensor<2x3xui8>
  func.return %0, %a : tensor<2x3xui8>, tensor<3xui8>
}

// Overflow to infinity and inf + -inf = NaN fold to what the op computes at
// run time, without complaint.
// CHECK-LABEL: func.func @ieee_specials(
// CHECK-NEXT:    graph.constant dense<{{\[}}[0x7f800000, 0x{{.*}}], [0x{{.*}}, 0xff800000]]> : tensor<2x2xf32>
// CHECK-NEXT:    func.return
func.func @ieee_specials() -> tensor<2x2xf32> {
  %a = graph.constant dense<[3.0e38, -3.0e38]> : tensor<2xf32>
  %b = graph.constant dense<[[3.0e38], [-3.0e38]]> : tensor<2x1xf32>
  %0 = graph.add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = graph.add %b, %b : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
  %2 = graph.add %0, %1 : (tensor<2xf32>, tensor<2x1xf32>) -> tensor<2x2xf32>
  func.return %2 : tensor<2x2xf32>
}

// -----

// Ops with a non-constant operand stay; dead ops go, as in every greedy rewrite.
// CHECK-LABEL: func.func @not_constant(
// CHECK-NEXT:    %[[C:.*]] = graph.constant
// CHECK-NEXT:    graph.add %x, %[[C]]
// CHECK-NEXT:    func.return
func.func @not_constant(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = graph.constant dense<1.0> : tensor<2xf32>
  %0 = graph.add %x, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = graph.exp %x : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

// max-elements=4: the 2x3 broadcast result is too big to materialise, so
// the add stays, but the 3-element relu before it folds.
// MAX4-LABEL: func.func @too_big(
// MAX4-NEXT:    %[[B:.*]] = graph.constant dense<{{\[}}[1.000000e+00], [2.000000e+00]]> : tensor<2x1xf32>
// MAX4-NEXT:    %[[R:.*]] = graph.constant dense<[0.000000e+00, 5.000000e-01, 0.000000e+00]> : tensor<3xf32>
// MAX4-NEXT:    %[[S:.*]] = graph.add %[[R]], %[[B]] : (tensor<3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
// MAX4-NEXT:    func.return %[[S]]
// CHECK-LABEL: func.func @too_big(
// CHECK-NEXT:    graph.constant dense<{{\[}}[1.000000e+00, 1.500000e+00, 1.000000e+00], [2.000000e+00, 2.500000e+00, 2.000000e+00]]> : tensor<2x3xf32>
// CHECK-NEXT:    func.return
func.func @too_big() -> tensor<2x3xf32> {
  %a = graph.constant dense<[-1.0, 0.5, -2.0]> : tensor<3xf32>
  %b = graph.constant dense<[[1.0], [2.0]]> : tensor<2x1xf32>
  %0 = graph.relu %a : tensor<3xf32>
  %1 = graph.add %0, %b : (tensor<3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  func.return %1 : tensor<2x3xf32>
}

// -----

// max-elements=4: a dense 2x3 weight transposed folds (it makes no larger tensor than the IR
// holds already); a transposed splat of the same size does not (the splat is one element in
// the IR, its transpose would be six).
// MAX4-LABEL: func.func @weight_in_another_layout(
// MAX4-NEXT:    %[[W:.*]] = graph.constant dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// MAX4-NEXT:    %[[S:.*]] = graph.constant dense<7.000000e+00> : tensor<2x3xf32>
// MAX4-NEXT:    %[[T:.*]] = graph.transpose %[[S]] {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
// MAX4-NEXT:    func.return %[[W]], %[[T]]
func.func @weight_in_another_layout() -> (tensor<3x2xf32>, tensor<3x2xf32>) {
  %w = graph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %t = graph.transpose %w {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %s = graph.constant dense<7.0> : tensor<2x3xf32>
  %u = graph.transpose %s {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return %t, %u : tensor<3x2xf32>, tensor<3x2xf32>
}
