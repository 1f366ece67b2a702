// RUN: ziggurat-opt %s --split-input-file -p graph-canonicalize | filecheck %s --check-prefixes=CHECK,GRAPH
// RUN: ziggurat-opt %s --split-input-file -p canonicalize | filecheck %s --check-prefixes=CHECK,XDSL

// One function per pattern, then the cases that must not fire. Both passes
// apply the same patterns; only graph-canonicalize folds constants.

// CHECK-LABEL: func.func @add_zero_rhs(
// CHECK-NEXT:    func.return %x : tensor<2x3xf32>
func.func @add_zero_rhs(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %zero = graph.constant dense<0.0> : tensor<2x3xf32>
  %0 = graph.add %x, %zero : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// A scalar-shaped zero broadcasts into x's shape: still x.
// CHECK-LABEL: func.func @add_zero_lhs_broadcast_scalar(
// CHECK-NEXT:    func.return %x : tensor<2x3xi32>
func.func @add_zero_lhs_broadcast_scalar(%x: tensor<2x3xi32>) -> tensor<2x3xi32> {
  %zero = arith.constant dense<0> : tensor<1xi32>
  %0 = graph.add %zero, %x : (tensor<1xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  func.return %0 : tensor<2x3xi32>
}

// CHECK-LABEL: func.func @relu_relu(
// CHECK-NEXT:    %[[R:.*]] = graph.relu %x : tensor<4xf16>
// CHECK-NEXT:    func.return %[[R]] : tensor<4xf16>
func.func @relu_relu(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = graph.relu %x : tensor<4xf16>
  %1 = graph.relu %0 : tensor<4xf16>
  %2 = graph.relu %1 : tensor<4xf16>
  func.return %2 : tensor<4xf16>
}

// CHECK-LABEL: func.func @transpose_identity(
// CHECK-NEXT:    func.return %x : tensor<2x3x4xf32>
func.func @transpose_identity(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = graph.transpose %x {perm = array<i64: 0, 1, 2>} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @transpose_transpose(
// CHECK-NEXT:    %[[T:.*]] = graph.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT:    func.return %[[T]] : tensor<4x2x3xf32>
func.func @transpose_transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = graph.transpose %x {perm = array<i64: 1, 2, 0>} : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %1 = graph.transpose %0 {perm = array<i64: 2, 1, 0>} : tensor<3x4x2xf32> -> tensor<2x4x3xf32>
  %2 = graph.transpose %1 {perm = array<i64: 0, 2, 1>} : tensor<2x4x3xf32> -> tensor<2x3x4xf32>
  %3 = graph.transpose %2 {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  func.return %3 : tensor<4x2x3xf32>
}

// A scale on a transposed operand (attention's `k^T * scale`) moves before the transpose, which
// then meets its consumer (here it moves again, past the sub); a transpose with another use stays
// where it is.
// CHECK-LABEL: func.func @scale_of_transpose(
// CHECK-NEXT:    %s = graph.constant dense<0.353553385> : tensor<1xf32>
// CHECK-NEXT:    %[[M:.*]] = graph.mul %k, %s : (tensor<2x5x4xf32>, tensor<1xf32>) -> tensor<2x5x4xf32>
// CHECK-NEXT:    %[[D:.*]] = graph.sub %s, %[[M]] : (tensor<1xf32>, tensor<2x5x4xf32>) -> tensor<2x5x4xf32>
// CHECK-NEXT:    %[[T:.*]] = graph.transpose %[[D]] {perm = array<i64: 0, 2, 1>} : tensor<2x5x4xf32> -> tensor<2x4x5xf32>
// CHECK-NEXT:    %u = graph.transpose %k {perm = array<i64: 0, 2, 1>} : tensor<2x5x4xf32> -> tensor<2x4x5xf32>
// CHECK-NEXT:    %[[A:.*]] = graph.add %u, %s : (tensor<2x4x5xf32>, tensor<1xf32>) -> tensor<2x4x5xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.relu %u : tensor<2x4x5xf32>
// CHECK-NEXT:    func.return %[[T]], %[[A]], %[[B]]
func.func @scale_of_transpose(%k: tensor<2x5x4xf32>) -> (tensor<2x4x5xf32>, tensor<2x4x5xf32>, tensor<2x4x5xf32>) {
  %s = graph.constant dense<0.353553385> : tensor<1xf32>
  %t = graph.transpose %k {perm = array<i64: 0, 2, 1>} : tensor<2x5x4xf32> -> tensor<2x4x5xf32>
  %0 = graph.mul %t, %s : (tensor<2x4x5xf32>, tensor<1xf32>) -> tensor<2x4x5xf32>
  %1 = graph.sub %s, %0 : (tensor<1xf32>, tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %u = graph.transpose %k {perm = array<i64: 0, 2, 1>} : tensor<2x5x4xf32> -> tensor<2x4x5xf32>
  %2 = graph.add %u, %s : (tensor<2x4x5xf32>, tensor<1xf32>) -> tensor<2x4x5xf32>
  %3 = graph.relu %u : tensor<2x4x5xf32>
  func.return %1, %2, %3 : tensor<2x4x5xf32>, tensor<2x4x5xf32>, tensor<2x4x5xf32>
}

// A transpose given leading dims of size 1 (attention's heads, then a batch dim) becomes one
// transpose of the unsqueezed input, which the scale then moves before.
// CHECK-LABEL: func.func @heads(
// CHECK-NEXT:    %[[U:.*]] = graph.unsqueeze %q {axes = array<i64: 0>} : tensor<197x6x64xf32> -> tensor<1x197x6x64xf32>
// CHECK-NEXT:    %s = graph.constant dense<0.353553385> : tensor<1xf32>
// CHECK-NEXT:    %[[M:.*]] = graph.mul %[[U]], %s : (tensor<1x197x6x64xf32>, tensor<1xf32>) -> tensor<1x197x6x64xf32>
// CHECK-NEXT:    %[[T:.*]] = graph.transpose %[[M]] {perm = array<i64: 0, 2, 1, 3>} : tensor<1x197x6x64xf32> -> tensor<1x6x197x64xf32>
// CHECK-NEXT:    func.return %[[T]] : tensor<1x6x197x64xf32>
func.func @heads(%q: tensor<197x6x64xf32>) -> tensor<1x6x197x64xf32> {
  %t = graph.transpose %q {perm = array<i64: 1, 0, 2>} : tensor<197x6x64xf32> -> tensor<6x197x64xf32>
  %r = graph.reshape %t : tensor<6x197x64xf32> -> tensor<1x6x197x64xf32>
  %s = graph.constant dense<0.353553385> : tensor<1xf32>
  %m = graph.mul %r, %s : (tensor<1x6x197x64xf32>, tensor<1xf32>) -> tensor<1x6x197x64xf32>
  func.return %m : tensor<1x6x197x64xf32>
}

// A reshape that regroups more than leading units keeps its transpose.
// CHECK-LABEL: func.func @heads_merged(
// CHECK-NEXT:    %[[T:.*]] = graph.transpose %q
// CHECK-NEXT:    %[[R:.*]] = graph.reshape %[[T]]
func.func @heads_merged(%q: tensor<197x6x64xf32>) -> tensor<1x1182x64xf32> {
  %t = graph.transpose %q {perm = array<i64: 1, 0, 2>} : tensor<197x6x64xf32> -> tensor<6x197x64xf32>
  %r = graph.reshape %t : tensor<6x197x64xf32> -> tensor<1x1182x64xf32>
  func.return %r : tensor<1x1182x64xf32>
}

// Two transposes that cancel leave nothing.
// CHECK-LABEL: func.func @transpose_inverse(
// CHECK-NEXT:    func.return %x : tensor<2x3x4xf32>
func.func @transpose_inverse(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = graph.transpose %x {perm = array<i64: 1, 2, 0>} : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %1 = graph.transpose %0 {perm = array<i64: 2, 0, 1>} : tensor<3x4x2xf32> -> tensor<2x3x4xf32>
  func.return %1 : tensor<2x3x4xf32>
}

// The inner transpose has another user: it stays, the outer one reads x directly.
// CHECK-LABEL: func.func @transpose_transpose_shared(
// CHECK-NEXT:    %[[T:.*]] = graph.transpose %x {perm = array<i64: 1, 0>}
// CHECK-NEXT:    func.return %x, %[[T]] : tensor<2x3xf32>, tensor<3x2xf32>
func.func @transpose_transpose_shared(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>) {
  %0 = graph.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %1 = graph.transpose %0 {perm = array<i64: 1, 0>} : tensor<3x2xf32> -> tensor<2x3xf32>
  func.return %1, %0 : tensor<2x3xf32>, tensor<3x2xf32>
}

// CHECK-LABEL: func.func @sub_zero(
// CHECK-NEXT:    func.return %x : tensor<2x3xf32>
func.func @sub_zero(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %zero = graph.constant dense<0.0> : tensor<3xf32>
  %0 = graph.sub %x, %zero : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @mul_one(
// CHECK-NEXT:    func.return %x, %x : tensor<4xbf16>, tensor<4xbf16>
func.func @mul_one(%x: tensor<4xbf16>) -> (tensor<4xbf16>, tensor<4xbf16>) {
  %one = graph.constant dense<1.0> : tensor<4xbf16>
  %0 = graph.mul %x, %one : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  %1 = graph.mul %one, %x : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  func.return %0, %1 : tensor<4xbf16>, tensor<4xbf16>
}

// Integers only; the zero takes the result's (broadcast) shape.
// CHECK-LABEL: func.func @mul_zero_int(
// CHECK-NEXT:    %[[Z:.*]] = graph.constant dense<0> : tensor<2x3xi32>
// CHECK-NEXT:    func.return %[[Z]] : tensor<2x3xi32>
func.func @mul_zero_int(%x: tensor<3xi32>) -> tensor<2x3xi32> {
  %zero = arith.constant dense<0> : tensor<2x1xi32>
  %0 = graph.mul %zero, %x : (tensor<2x1xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  func.return %0 : tensor<2x3xi32>
}

// CHECK-LABEL: func.func @div_one(
// CHECK-NEXT:    func.return %x, %y : tensor<5xf32>, tensor<5xi8>
func.func @div_one(%x: tensor<5xf32>, %y: tensor<5xi8>) -> (tensor<5xf32>, tensor<5xi8>) {
  %one = graph.constant dense<1.0> : tensor<f32>
  %i_one = graph.constant dense<1> : tensor<5xi8>
  %0 = graph.div %x, %one : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
  %1 = graph.div %y, %i_one : (tensor<5xi8>, tensor<5xi8>) -> tensor<5xi8>
  func.return %0, %1 : tensor<5xf32>, tensor<5xi8>
}

// CHECK-LABEL: func.func @pow_one(
// CHECK-NEXT:    func.return %x : tensor<5xf32>
func.func @pow_one(%x: tensor<5xf32>) -> tensor<5xf32> {
  %one = graph.constant dense<1.0> : tensor<5xf32>
  %0 = graph.pow %x, %one : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  func.return %0 : tensor<5xf32>
}

// CHECK-LABEL: func.func @neg_neg(
// CHECK-NEXT:    func.return %x, %y : tensor<3xf32>, tensor<3xi8>
func.func @neg_neg(%x: tensor<3xf32>, %y: tensor<3xi8>) -> (tensor<3xf32>, tensor<3xi8>) {
  %0 = graph.neg %x : tensor<3xf32>
  %1 = graph.neg %0 : tensor<3xf32>
  %2 = graph.neg %y : tensor<3xi8>
  %3 = graph.neg %2 : tensor<3xi8>
  func.return %1, %3 : tensor<3xf32>, tensor<3xi8>
}

// CHECK-LABEL: func.func @relu_relu6(
// CHECK-NEXT:    %[[A:.*]] = graph.relu6 %x : tensor<4xf32>
// CHECK-NEXT:    %[[B:.*]] = graph.relu6 %x : tensor<4xf32>
// CHECK-NEXT:    func.return %[[A]], %[[A]], %[[B]]
func.func @relu_relu6(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %r6 = graph.relu6 %x : tensor<4xf32>
  %0 = graph.relu %r6 : tensor<4xf32>
  %1 = graph.relu6 %r6 : tensor<4xf32>
  %r = graph.relu %x : tensor<4xf32>
  %2 = graph.relu6 %r : tensor<4xf32>
  func.return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @clip_unbounded(
// CHECK-NEXT:    func.return %x : tensor<4xf32>
func.func @clip_unbounded(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.clip %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @cast_same_type(
// CHECK-NEXT:    func.return %x : tensor<4xf16>
func.func @cast_same_type(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = graph.cast %x : tensor<4xf16> -> tensor<4xf16>
  func.return %0 : tensor<4xf16>
}

// Through an exact widening: f16 -> f32 -> i32 is f16 -> i32; i8 -> i32 -> i8 is nothing.
// CHECK-LABEL: func.func @cast_cast_exact(
// CHECK-NEXT:    %[[C:.*]] = graph.cast %x : tensor<4xf16> -> tensor<4xi32>
// CHECK-NEXT:    func.return %[[C]], %y : tensor<4xi32>, tensor<4xi8>
func.func @cast_cast_exact(%x: tensor<4xf16>, %y: tensor<4xi8>) -> (tensor<4xi32>, tensor<4xi8>) {
  %0 = graph.cast %x : tensor<4xf16> -> tensor<4xf32>
  %1 = graph.cast %0 : tensor<4xf32> -> tensor<4xi32>
  %2 = graph.cast %y : tensor<4xi8> -> tensor<4xi32>
  %3 = graph.cast %2 : tensor<4xi32> -> tensor<4xi8>
  func.return %1, %3 : tensor<4xi32>, tensor<4xi8>
}

// CHECK-LABEL: func.func @reshape_same_type(
// CHECK-NEXT:    func.return %x : tensor<2x3xf32>
func.func @reshape_same_type(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.reshape %x : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @reshape_reshape(
// CHECK-NEXT:    %[[R:.*]] = graph.reshape %x : tensor<2x3x4xf32> -> tensor<4x6xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<4x6xf32>
func.func @reshape_reshape(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = graph.reshape %x : tensor<2x3x4xf32> -> tensor<24xf32>
  %1 = graph.flatten %0 {axis = 0 : i64} : tensor<24xf32> -> tensor<1x24xf32>
  %2 = graph.reshape %1 : tensor<1x24xf32> -> tensor<4x6xf32>
  func.return %2 : tensor<4x6xf32>
}

// CHECK-LABEL: func.func @squeeze_unsqueeze(
// CHECK-NEXT:    func.return %x, %y : tensor<2x1x3xf32>, tensor<2x3xf32>
func.func @squeeze_unsqueeze(%x: tensor<2x1x3xf32>, %y: tensor<2x3xf32>) -> (tensor<2x1x3xf32>, tensor<2x3xf32>) {
  %0 = graph.squeeze %x {axes = array<i64: 1>} : tensor<2x1x3xf32> -> tensor<2x3xf32>
  %1 = graph.unsqueeze %0 {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2x1x3xf32>
  %2 = graph.unsqueeze %y {axes = array<i64: 0>} : tensor<2x3xf32> -> tensor<1x2x3xf32>
  %3 = graph.squeeze %2 : tensor<1x2x3xf32> -> tensor<2x3xf32>
  func.return %1, %3 : tensor<2x1x3xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @broadcast_to(
// CHECK-NEXT:    %[[B:.*]] = graph.broadcast_to %x : tensor<3xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT:    func.return %[[B]], %x : tensor<4x2x3xf32>, tensor<3xf32>
func.func @broadcast_to(%x: tensor<3xf32>) -> (tensor<4x2x3xf32>, tensor<3xf32>) {
  %0 = graph.broadcast_to %x : tensor<3xf32> -> tensor<2x3xf32>
  %1 = graph.broadcast_to %0 : tensor<2x3xf32> -> tensor<4x2x3xf32>
  %2 = graph.broadcast_to %x : tensor<3xf32> -> tensor<3xf32>
  func.return %1, %2 : tensor<4x2x3xf32>, tensor<3xf32>
}

// CHECK-LABEL: func.func @slice_everything(
// CHECK-NEXT:    func.return %x : tensor<2x3xf32>
func.func @slice_everything(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.slice %x {starts = array<i64: 0, -3>, ends = array<i64: 9223372036854775807, 3>} : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @pad_zero(
// CHECK-NEXT:    func.return %x : tensor<2x3xf32>
func.func @pad_zero(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.pad %x {pads = array<i64: 0, 0, 0, 0>, mode = "reflect"} : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @concat_one(
// CHECK-NEXT:    func.return %x : tensor<2x3xf32>
func.func @concat_one(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.concat %x {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @pool_1x1(
// CHECK-NEXT:    func.return %x, %x : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
func.func @pool_1x1(%x: tensor<1x2x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %0 = graph.max_pool %x {kernel = array<i64: 1, 1>} : tensor<1x2x3x3xf32> -> tensor<1x2x3x3xf32>
  %1 = graph.avg_pool %x {kernel = array<i64: 1, 1>, layout = "NHWC"} : tensor<1x2x3x3xf32> -> tensor<1x2x3x3xf32>
  func.return %0, %1 : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}

// CHECK-LABEL: func.func @global_pool_of_one(
// CHECK-NEXT:    func.return %x, %x : tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>
func.func @global_pool_of_one(%x: tensor<2x3x1x1xf32>) -> (tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>) {
  %0 = graph.global_avg_pool %x : tensor<2x3x1x1xf32> -> tensor<2x3x1x1xf32>
  %1 = graph.global_max_pool %x : tensor<2x3x1x1xf32> -> tensor<2x3x1x1xf32>
  func.return %0, %1 : tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>
}

// Constant folding is graph-canonicalize's; xDSL's canonicalize leaves the add.
// CHECK-LABEL: func.func @fold_in_graph_canonicalize(
// GRAPH-NEXT:    %[[C:.*]] = graph.constant dense<[3, 5]> : tensor<2xi8>
// GRAPH-NEXT:    func.return %[[C]] : tensor<2xi8>
// XDSL:          graph.add
func.func @fold_in_graph_canonicalize() -> tensor<2xi8> {
  %a = graph.constant dense<[1, 2]> : tensor<2xi8>
  %b = graph.constant dense<[2, 3]> : tensor<2xi8>
  %0 = graph.add %a, %b : (tensor<2xi8>, tensor<2xi8>) -> tensor<2xi8>
  func.return %0 : tensor<2xi8>
}

// -----

// Negative cases: none of these may change.

// x + zeros where zeros broadcasts x to a bigger shape is not x.
// CHECK-LABEL: func.func @add_zero_broadcasts_x(
// CHECK-NEXT:    graph.constant dense<0.000000e+00> : tensor<2x3xf32>
// CHECK-NEXT:    graph.add %x, %{{.*}} : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
func.func @add_zero_broadcasts_x(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  %zero = graph.constant dense<0.0> : tensor<2x3xf32>
  %0 = graph.add %x, %zero : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// A constant that is not all zeros.
// CHECK-LABEL: func.func @add_not_zero(
// CHECK:         graph.add
func.func @add_not_zero(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = graph.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %0 = graph.add %x, %c : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// relu of exp is not relu of relu.
// CHECK-LABEL: func.func @relu_exp(
// CHECK-NEXT:    graph.exp
// CHECK-NEXT:    graph.relu
func.func @relu_exp(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.exp %x : tensor<4xf32>
  %1 = graph.relu %0 : tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// A permutation is kept as it is.
// CHECK-LABEL: func.func @transpose_kept(
// CHECK-NEXT:    graph.transpose %x {perm = array<i64: 1, 0>}
func.func @transpose_kept(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = graph.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// x * 0 is not 0 for floats: inf * 0 and NaN * 0 are NaN.
// CHECK-LABEL: func.func @mul_zero_float(
// CHECK:         graph.mul
func.func @mul_zero_float(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = graph.constant dense<0.0> : tensor<4xf32>
  %0 = graph.mul %x, %zero : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// 0 - x and 1 / x and 1 ** x are not x.
// CHECK-LABEL: func.func @wrong_side(
// CHECK:         graph.sub
// CHECK:         graph.div
// CHECK:         graph.pow
func.func @wrong_side(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %zero = graph.constant dense<0.0> : tensor<4xf32>
  %one = graph.constant dense<1.0> : tensor<4xf32>
  %0 = graph.sub %zero, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = graph.div %one, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = graph.pow %one, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// x * ones that broadcasts x is not x.
// CHECK-LABEL: func.func @mul_one_broadcasts_x(
// CHECK:         graph.mul
func.func @mul_one_broadcasts_x(%x: tensor<1x3xf32>) -> tensor<2x3xf32> {
  %one = graph.constant dense<1.0> : tensor<2x1xf32>
  %0 = graph.mul %x, %one : (tensor<1x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// A bounded clip clamps.
// CHECK-LABEL: func.func @clip_bounded(
// CHECK-NEXT:    graph.clip %x {min = 0.000000e+00 : f32}
func.func @clip_bounded(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.clip %x {min = 0.0 : f32} : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// Narrowing casts lose values: f32 -> f16 -> f32 rounds, i32 -> i8 -> i32 wraps,
// and i8 -> f16 -> f8 is not i8 -> f8 (only float sources saturate to fp8).
// CHECK-LABEL: func.func @cast_cast_lossy(
// CHECK-NEXT:    graph.cast %x : tensor<4xf32> -> tensor<4xf16>
// CHECK-NEXT:    graph.cast %{{.*}} : tensor<4xf16> -> tensor<4xf32>
// CHECK-NEXT:    graph.cast %y : tensor<4xi32> -> tensor<4xi8>
// CHECK-NEXT:    graph.cast %{{.*}} : tensor<4xi8> -> tensor<4xi32>
// CHECK-NEXT:    graph.cast %z : tensor<4xi16> -> tensor<4xf32>
// CHECK-NEXT:    graph.cast %{{.*}} : tensor<4xf32> -> tensor<4xf8E4M3FN>
func.func @cast_cast_lossy(%x: tensor<4xf32>, %y: tensor<4xi32>, %z: tensor<4xi16>) -> (tensor<4xf32>, tensor<4xi32>, tensor<4xf8E4M3FN>) {
  %0 = graph.cast %x : tensor<4xf32> -> tensor<4xf16>
  %1 = graph.cast %0 : tensor<4xf16> -> tensor<4xf32>
  %2 = graph.cast %y : tensor<4xi32> -> tensor<4xi8>
  %3 = graph.cast %2 : tensor<4xi8> -> tensor<4xi32>
  %4 = graph.cast %z : tensor<4xi16> -> tensor<4xf32>
  %5 = graph.cast %4 : tensor<4xf32> -> tensor<4xf8E4M3FN>
  func.return %1, %3, %5 : tensor<4xf32>, tensor<4xi32>, tensor<4xf8E4M3FN>
}

// A reversed slice keeps the shape but not the order; a pad that crops one
// side and grows the other keeps the shape but shifts.
// CHECK-LABEL: func.func @slice_pad_same_shape(
// CHECK-NEXT:    graph.slice %x
// CHECK-NEXT:    graph.pad %x
func.func @slice_pad_same_shape(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = graph.slice %x {starts = array<i64: -1>, ends = array<i64: -9223372036854775807>, steps = array<i64: -1>} : tensor<3xf32> -> tensor<3xf32>
  %1 = graph.pad %x {pads = array<i64: 1, -1>} : tensor<3xf32> -> tensor<3xf32>
  func.return %0, %1 : tensor<3xf32>, tensor<3xf32>
}

// A 1x1 pool with stride 2 subsamples.
// CHECK-LABEL: func.func @pool_strided(
// CHECK-NEXT:    graph.max_pool
func.func @pool_strided(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %0 = graph.max_pool %x {kernel = array<i64: 1, 1>, strides = array<i64: 2, 2>} : tensor<1x1x4x4xf32> -> tensor<1x1x2x2xf32>
  func.return %0 : tensor<1x1x2x2xf32>
}
