// One chunk per verifier rule of the graph dialect; each message states the rule and the offending values.
// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics

// Shapes must be static.
func.func @f0(%x: tensor<?x3xf32>) {
  // expected-error@+1 {{input must have a static shape, got tensor<?x3xf32>}}
  %0 = graph.sigmoid %x : tensor<?x3xf32>
  func.return
}

// -----

// Float-only activations reject integers.
func.func @f1(%x: tensor<4xi32>) {
  // expected-error@+1 {{'graph.sigmoid' op input must have a floating-point element type, got tensor<4xi32>}}
  %0 = graph.sigmoid %x : tensor<4xi32>
  func.return
}

// -----

// The declared result type must be the inferred one.
func.func @f2(%x: tensor<4x4xf32>) {
  // expected-error@+1 {{result #0 has type tensor<4xf32>, but the operands and attributes imply tensor<1x4xf32>}}
  %0 = graph.reduce_sum %x {axes = array<i64: 0>} : tensor<4x4xf32> -> tensor<4xf32>
  func.return
}

// -----

// gelu's approximation is none or tanh.
func.func @f3(%x: tensor<4xf32>) {
  // expected-error@+1 {{approximate must be "none" or "tanh", got "erf"}}
  %0 = graph.gelu %x {approximate = "erf"} : tensor<4xf32>
  func.return
}

// -----

// clip's bounds must be ordered.
func.func @f4(%x: tensor<4xf32>) {
  // expected-error@+1 {{min (2.0) must not exceed max (1.0)}}
  %0 = graph.clip %x {min = 2.000000e+00 : f32, max = 1.000000e+00 : f32} : tensor<4xf32>
  func.return
}

// -----

// Binary operands broadcast.
func.func @f5(%a: tensor<2x3xf32>, %b: tensor<2xf32>) {
  // expected-error@+1 {{operand shapes [2, 3] and [2] are not broadcast-compatible}}
  %0 = graph.add %a, %b : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// Binary operands share an element type.
func.func @f6(%a: tensor<2xf32>, %b: tensor<2xf16>) {
  // expected-error@+1 {{lhs and rhs must have the same element type, got tensor<2xf32>, tensor<2xf16>}}
  %0 = graph.mul %a, %b : (tensor<2xf32>, tensor<2xf16>) -> tensor<2xf32>
  func.return
}

// -----

// prelu's slope broadcasts to the input (one way).
func.func @f7(%x: tensor<2x3xf32>, %s: tensor<2x1x3xf32>) {
  // expected-error@+1 {{slope shape [2, 1, 3] does not broadcast to [2, 3]}}
  %0 = graph.prelu %x, %s : (tensor<2x3xf32>, tensor<2x1x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// where's condition is boolean.
func.func @f8(%c: tensor<2xi8>, %a: tensor<2xf32>) {
  // expected-error@+1 {{condition must have element type i1, got tensor<2xi8>}}
  %0 = graph.where %c, %a, %a : (tensor<2xi8>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return
}

// -----

// Comparisons broadcast their operands.
func.func @compare(%a: tensor<2x3xf32>, %b: tensor<2xf32>) {
  // expected-error@+1 {{operand shapes [2, 3] and [2] are not broadcast-compatible}}
  %0 = graph.less %a, %b : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xi1>
  func.return
}

// -----

// Comparisons give booleans.
func.func @compare_result(%a: tensor<2xf32>) {
  // expected-error@+1 {{result #0 has type tensor<2xf32>, but the operands and attributes imply tensor<2xi1>}}
  %0 = graph.equal %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return
}

// -----

// not negates booleans only.
func.func @not_float(%x: tensor<2xf32>) {
  // expected-error@+1 {{input must have element type i1, got tensor<2xf32>}}
  %0 = graph.not %x : tensor<2xf32>
  func.return
}

// -----

// matmul contracts K with K.
func.func @f9(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error@+1 {{contraction dimensions differ: lhs tensor<2x3xf32> has K=3, rhs tensor<4x5xf32> has K=4}}
  %0 = graph.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return
}

// -----

// gemm contracts op(a) with op(b).
func.func @f10(%a: tensor<3x4xf32>, %b: tensor<3x5xf32>) {
  // expected-error@+1 {{contraction dimensions differ: op(a) is 3x4, op(b) is 3x5}}
  %0 = graph.gemm %a, %b {trans_a = false} : (tensor<3x4xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  func.return
}

// -----

// gemm operands are matrices.
func.func @f11(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) {
  // expected-error@+1 {{a and b must be 2-D, got tensor<2x3x4xf32> and tensor<4x5xf32>}}
  %0 = graph.gemm %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  func.return
}

// -----

// gemm's c broadcasts to the result.
func.func @f12(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %c: tensor<3xf32>) {
  // expected-error@+1 {{c shape [3] does not broadcast to [3, 5]}}
  %0 = graph.gemm %a, %b, %c : (tensor<3x4xf32>, tensor<4x5xf32>, tensor<3xf32>) -> tensor<3x5xf32>
  func.return
}

// -----

// conv2d: input channels are the weight's input channels times groups.
func.func @f13(%x: tensor<1x3x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error@+1 {{input channels (3) must equal weight input channels (4) times groups (1)}}
  %0 = graph.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// conv2d: output channels split into the groups.
func.func @f14(%x: tensor<1x4x8x8xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error@+1 {{output channels (3) must be a multiple of groups (2)}}
  %0 = graph.conv2d %x, %w {groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x6x6xf32>
  func.return
}

// -----

// conv2d: groups is positive.
func.func @f15(%x: tensor<1x4x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error@+1 {{groups must be positive, got 0}}
  %0 = graph.conv2d %x, %w {groups = 0 : i64} : (tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// conv2d: one bias per output channel.
func.func @f16(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) {
  // expected-error@+1 {{bias must have shape [4] (the output channels), got tensor<3xf32>}}
  %0 = graph.conv2d %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// conv2d: NHWC weights are OHWI, so C is their last dimension.
func.func @f17(%x: tensor<1x8x8x3xf32>, %w: tensor<4x3x3x4xf32>) {
  // expected-error@+1 {{input channels (3) must equal weight input channels (4) times groups (1)}}
  %0 = graph.conv2d %x, %w {layout = "NHWC"} : (tensor<1x8x8x3xf32>, tensor<4x3x3x4xf32>) -> tensor<1x6x6x4xf32>
  func.return
}

// -----

// conv2d: the layout is NCHW or NHWC.
func.func @f18(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{layout must be "NCHW" or "NHWC", got "CHWN"}}
  %0 = graph.conv2d %x, %w {layout = "CHWN"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// conv2d: 4-D operands.
func.func @f19(%x: tensor<3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{input and weight must be 4-D (NCHW), got tensor<3x8x8xf32> and tensor<4x3x3x3xf32>}}
  %0 = graph.conv2d %x, %w : (tensor<3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<4x6x6xf32>
  func.return
}

// -----

// conv2d: operands share an element type.
func.func @f20(%x: tensor<1x3x8x8xf16>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{input, weight and bias must have the same element type}}
  %0 = graph.conv2d %x, %w : (tensor<1x3x8x8xf16>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf16>
  func.return
}

// -----

// conv2d: the window fits in the padded input.
func.func @f21(%x: tensor<1x3x2x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{the height window spans 3 elements (kernel 3, dilation 1), more than the padded input's 2 (2 + pads 0 and 0)}}
  %0 = graph.conv2d %x, %w : (tensor<1x3x2x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x1x6xf32>
  func.return
}

// -----

// conv2d: strides are positive.
func.func @f22(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{strides must be positive, got [1, 0]}}
  %0 = graph.conv2d %x, %w {strides = array<i64: 1, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// conv2d: pads are [top, left, bottom, right].
func.func @f23(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{pads must have 4 values, got [1, 1]}}
  %0 = graph.conv2d %x, %w {pads = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

// conv2d: pads are non-negative.
func.func @f24(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{pads must be non-negative, got [0, -1, 0, 0]}}
  %0 = graph.conv2d %x, %w {pads = array<i64: 0, -1, 0, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x5xf32>
  func.return
}

// -----

// batch_norm: statistics have one entry per channel.
func.func @f25(%x: tensor<1x3x4x4xf32>, %c: tensor<3xf32>, %v: tensor<4xf32>) {
  // expected-error@+1 {{variance must have shape [3] (the input channels), got tensor<4xf32>}}
  %0 = graph.batch_norm %x, %c, %c, %c, %v : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>) -> tensor<1x3x4x4xf32>
  func.return
}

// -----

// batch_norm: the input has a channel axis.
func.func @f26(%x: tensor<3xf32>, %c: tensor<3xf32>) {
  // expected-error@+1 {{input must have rank >= 2 (N, C, ...), got tensor<3xf32>}}
  %0 = graph.batch_norm %x, %c, %c, %c, %c : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return
}

// -----

// layer_norm: scale broadcasts to the normalized shape.
func.func @f27(%x: tensor<2x3x4xf32>, %s: tensor<3x4xf32>) {
  // expected-error@+1 {{scale shape [3, 4] does not broadcast to [4]}}
  %0 = graph.layer_norm %x, %s : (tensor<2x3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
  func.return
}

// -----

// layer_norm: the axis is in range.
func.func @f28(%x: tensor<2x3xf32>, %s: tensor<3xf32>) {
  // expected-error@+1 {{axis -3 is out of range for rank 2}}
  %0 = graph.layer_norm %x, %s {axis = -3 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// softmax: the axis is in range.
func.func @f29(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{axis 2 is out of range for rank 2}}
  %0 = graph.softmax %x {axis = 2 : i64} : tensor<2x3xf32>
  func.return
}

// -----

// max_pool: padding is smaller than the kernel.
func.func @f30(%x: tensor<1x1x4x4xf32>) {
  // expected-error@+1 {{pads [0, 2, 0, 0] must be smaller than the kernel [2, 2]}}
  %0 = graph.max_pool %x {kernel = array<i64: 2, 2>, pads = array<i64: 0, 2, 0, 0>} : tensor<1x1x4x4xf32> -> tensor<1x1x3x5xf32>
  func.return
}

// -----

// max_pool: the kernel has a height and a width.
func.func @f31(%x: tensor<1x1x4x4xf32>) {
  // expected-error@+1 {{kernel must have 2 values, got [2]}}
  %0 = graph.max_pool %x {kernel = array<i64: 2>} : tensor<1x1x4x4xf32> -> tensor<1x1x3x3xf32>
  func.return
}

// -----

// max_pool: dilations are positive.
func.func @f32(%x: tensor<1x1x4x4xf32>) {
  // expected-error@+1 {{dilations must be positive, got [0, 1]}}
  %0 = graph.max_pool %x {kernel = array<i64: 2, 2>, dilations = array<i64: 0, 1>} : tensor<1x1x4x4xf32> -> tensor<1x1x3x3xf32>
  func.return
}

// -----

// avg_pool: 4-D input.
func.func @f33(%x: tensor<1x4x4xf32>) {
  // expected-error@+1 {{input must be 4-D (NCHW), got tensor<1x4x4xf32>}}
  %0 = graph.avg_pool %x {kernel = array<i64: 2, 2>} : tensor<1x4x4xf32> -> tensor<1x3x3xf32>
  func.return
}

// -----

// avg_pool: the window fits.
func.func @f34(%x: tensor<1x1x4x4xf32>) {
  // expected-error@+1 {{the width window spans 5 elements (kernel 5, dilation 1), more than the padded input's 4}}
  %0 = graph.avg_pool %x {kernel = array<i64: 2, 5>} : tensor<1x1x4x4xf32> -> tensor<1x1x3x1xf32>
  func.return
}

// -----

// avg_pool averages floats only (as ONNX AveragePool).
func.func @avg_pool_int(%x: tensor<1x1x4x4xi8>) {
  // expected-error@+1 {{input must have a floating-point element type, got tensor<1x1x4x4xi8>}}
  %0 = graph.avg_pool %x {kernel = array<i64: 2, 2>} : tensor<1x1x4x4xi8> -> tensor<1x1x3x3xi8>
  func.return
}

// -----

// global_avg_pool: batch, channels and at least one spatial axis.
func.func @f35(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{input must have rank >= 3 (batch, channels, spatial), got tensor<2x3xf32>}}
  %0 = graph.global_avg_pool %x : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

// Reductions name each axis once.
func.func @f36(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{axes [0, -2] name an axis twice}}
  %0 = graph.reduce_mean %x {axes = array<i64: 0, -2>} : tensor<2x3xf32> -> tensor<1x3xf32>
  func.return
}

// -----

// Reduction axes are in range.
func.func @f37(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{axes entry 2 is out of range for rank 2}}
  %0 = graph.reduce_max %x {axes = array<i64: 2>} : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

// arg_max needs something to take the maximum of.
func.func @arg_max_empty(%x: tensor<2x0xf32>) {
  // expected-error@+1 {{axis 1 of tensor<2x0xf32> is empty: it has no maximum}}
  %0 = graph.arg_max %x {axis = 1 : i64} : tensor<2x0xf32> -> tensor<2x1xi64>
  func.return
}

// -----

// cumsum's axis is in range.
func.func @cumsum_axis(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{axis 2 is out of range for rank 2}}
  %0 = graph.cumsum %x {axis = 2 : i64} : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

// transpose permutes the dimensions.
func.func @f38(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{perm [1, 2] is not a permutation of the 2 dimensions of tensor<2x3xf32>}}
  %0 = graph.transpose %x {perm = array<i64: 1, 2>} : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return
}

// -----

// reshape keeps the element count.
func.func @f39(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{cannot reshape tensor<2x3xf32> (6 elements) to tensor<5xf32> (5 elements)}}
  %0 = graph.reshape %x : tensor<2x3xf32> -> tensor<5xf32>
  func.return
}

// -----

// reshape keeps the element type.
func.func @f40(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{input and result must have the same element type, got tensor<2x3xf32>, tensor<6xf16>}}
  %0 = graph.reshape %x : tensor<2x3xf32> -> tensor<6xf16>
  func.return
}

// -----

// broadcast_to only grows size-1 dimensions.
func.func @f41(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{input shape [2, 3] does not broadcast to [4, 3]}}
  %0 = graph.broadcast_to %x : tensor<2x3xf32> -> tensor<4x3xf32>
  func.return
}

// -----

// flatten's axis is in [-rank, rank].
func.func @f42(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{axis 3 is out of range [-2, 2]}}
  %0 = graph.flatten %x {axis = 3 : i64} : tensor<2x3xf32> -> tensor<6x1xf32>
  func.return
}

// -----

// squeeze drops only size-1 dimensions.
func.func @f43(%x: tensor<2x1xf32>) {
  // expected-error@+1 {{cannot squeeze axis 0 of tensor<2x1xf32>: its size is 2, not 1}}
  %0 = graph.squeeze %x {axes = array<i64: 0>} : tensor<2x1xf32> -> tensor<1xf32>
  func.return
}

// -----

// unsqueeze axes index the result.
func.func @f44(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{axes entry 3 is out of range for rank 3}}
  %0 = graph.unsqueeze %x {axes = array<i64: 3>} : tensor<2x3xf32> -> tensor<2x3x1xf32>
  func.return
}

// -----

// concat operands agree off the axis.
func.func @f45(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) {
  // expected-error@+1 {{operand #1 tensor<3x3xf32> must match operand #0 tensor<2x3xf32> in every dimension but the concatenation axis 1}}
  %0 = graph.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x6xf32>
  func.return
}

// -----

// concat operands share an element type.
func.func @f46(%a: tensor<2x3xf32>, %b: tensor<2x3xi32>) {
  // expected-error@+1 {{operands must have the same element type}}
  %0 = graph.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xi32>) -> tensor<4x3xf32>
  func.return
}

// -----

// concat's axis is in range.
func.func @f47(%a: tensor<2x3xf32>) {
  // expected-error@+1 {{axis -3 is out of range for rank 2}}
  %0 = graph.concat %a, %a {axis = -3 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// slice lists have one entry per sliced axis.
func.func @f48(%x: tensor<4x4xf32>) {
  // expected-error@+1 {{starts [0, 1], ends [2], axes [0, 1] and steps [1, 1] must have the same length}}
  %0 = graph.slice %x {starts = array<i64: 0, 1>, ends = array<i64: 2>} : tensor<4x4xf32> -> tensor<2x4xf32>
  func.return
}

// -----

// slice steps are non-zero.
func.func @f49(%x: tensor<4xf32>) {
  // expected-error@+1 {{steps must be non-zero, got [0]}}
  %0 = graph.slice %x {starts = array<i64: 0>, ends = array<i64: 2>, steps = array<i64: 0>} : tensor<4xf32> -> tensor<2xf32>
  func.return
}

// -----

// pad has a begin and an end per dimension.
func.func @f50(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{pads must have 2 x rank = 4 values, got [1, 1]}}
  %0 = graph.pad %x {pads = array<i64: 1, 1>} : tensor<2x3xf32> -> tensor<4x3xf32>
  func.return
}

// -----

// pad modes are those of ONNX.
func.func @f51(%x: tensor<3xf32>) {
  // expected-error@+1 {{mode must be "constant", "reflect" or "edge", got "wrap"}}
  %0 = graph.pad %x {pads = array<i64: 1, 1>, mode = "wrap"} : tensor<3xf32> -> tensor<5xf32>
  func.return
}

// -----

// reflect padding stays within the dimension.
func.func @f52(%x: tensor<3xf32>) {
  // expected-error@+1 {{reflect pads of dimension 0 must be smaller than its size 3, got 3 and 0}}
  %0 = graph.pad %x {pads = array<i64: 3, 0>, mode = "reflect"} : tensor<3xf32> -> tensor<6xf32>
  func.return
}

// -----

// Negative pads crop, but not past nothing.
func.func @f53(%x: tensor<3xf32>) {
  // expected-error@+1 {{pads [-2, -2] crop dimension 0 of tensor<3xf32> below zero}}
  %0 = graph.pad %x {pads = array<i64: -2, -2>} : tensor<3xf32> -> tensor<0xf32>
  func.return
}

// -----

// gather indices are i32 or i64.
func.func @f54(%x: tensor<4x3xf32>, %i: tensor<2xi8>) {
  // expected-error@+1 {{indices must have element type i32 or i64, got tensor<2xi8>}}
  %0 = graph.gather %x, %i : (tensor<4x3xf32>, tensor<2xi8>) -> tensor<2x3xf32>
  func.return
}

// -----

// cast keeps the shape.
func.func @f55(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{cast keeps the shape: input tensor<2x3xf32> and result tensor<6xi32> differ}}
  %0 = graph.cast %x : tensor<2x3xf32> -> tensor<6xi32>
  func.return
}

// -----

// cast needs element types with numeric semantics.
func.func @f56(%x: tensor<2xf32>) {
  // expected-error@+1 {{result element type i4 has no cast semantics}}
  %0 = graph.cast %x : tensor<2xf32> -> tensor<2xi4>
  func.return
}

// -----

// quantize: the zero point is an 8- or 16-bit integer.
func.func @f57(%x: tensor<2x3xf32>, %s: tensor<f32>, %z: tensor<i32>) {
  // expected-error@+1 {{zero_point must have element type i8, ui8, i16, ui16; got tensor<i32>}}
  %0 = graph.quantize %x, %s, %z : (tensor<2x3xf32>, tensor<f32>, tensor<i32>) -> tensor<2x3xi32>
  func.return
}

// -----

// quantize: no 4-bit types (they have no numpy form here).
func.func @quantize_i4(%x: tensor<2x3xf32>, %s: tensor<f32>, %z: tensor<i4>) {
  // expected-error@+1 {{zero_point must have element type i8, ui8, i16, ui16; got tensor<i4>}}
  %0 = graph.quantize %x, %s, %z : (tensor<2x3xf32>, tensor<f32>, tensor<i4>) -> tensor<2x3xi4>
  func.return
}

// -----

// quantize: a per-channel scale has one entry per channel of the axis.
func.func @f58(%x: tensor<2x3xf32>, %s: tensor<2xf32>, %z: tensor<2xi8>) {
  // expected-error@+1 {{per-channel scale tensor<2xf32> must have one entry per element of axis 1 of tensor<2x3xf32> (3)}}
  %0 = graph.quantize %x, %s, %z : (tensor<2x3xf32>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x3xi8>
  func.return
}

// -----

// quantize: scales are scalars or vectors.
func.func @f59(%x: tensor<2x3xf32>, %s: tensor<2x3xf32>, %z: tensor<2x3xi8>) {
  // expected-error@+1 {{scale must be a scalar (per-tensor) or 1-D (per-channel), got tensor<2x3xf32>}}
  %0 = graph.quantize %x, %s, %z : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi8>) -> tensor<2x3xi8>
  func.return
}

// -----

// quantize: the scale has the input's element type.
func.func @f60(%x: tensor<2x3xf32>, %s: tensor<f16>, %z: tensor<ui8>) {
  // expected-error@+1 {{input and scale must have the same element type}}
  %0 = graph.quantize %x, %s, %z : (tensor<2x3xf32>, tensor<f16>, tensor<ui8>) -> tensor<2x3xui8>
  func.return
}

// -----

// dequantize: zero point and scale have one shape.
func.func @f61(%x: tensor<2x3xi8>, %s: tensor<3xf32>, %z: tensor<i8>) {
  // expected-error@+1 {{zero_point tensor<i8> must have the shape of scale tensor<3xf32>}}
  %0 = graph.dequantize %x, %s, %z : (tensor<2x3xi8>, tensor<3xf32>, tensor<i8>) -> tensor<2x3xf32>
  func.return
}

// -----

// dequantize: the input is quantized.
func.func @f62(%x: tensor<2x3xf32>, %s: tensor<f32>, %z: tensor<f32>) {
  // expected-error@+1 {{input must have element type i8, ui8, i16, ui16, i32; got tensor<2x3xf32>}}
  %0 = graph.dequantize %x, %s, %z : (tensor<2x3xf32>, tensor<f32>, tensor<f32>) -> tensor<2x3xf32>
  func.return
}

// -----

// dequantize: zero point of the input's type.
func.func @f63(%x: tensor<2x3xi8>, %s: tensor<f32>, %z: tensor<ui8>) {
  // expected-error@+1 {{input and zero_point must have the same element type}}
  %0 = graph.dequantize %x, %s, %z : (tensor<2x3xi8>, tensor<f32>, tensor<ui8>) -> tensor<2x3xf32>
  func.return
}

// -----

// bitcast keeps the element width.
func.func @bitcast_width(%x: tensor<4xf32>) {
  // expected-error@+1 {{'graph.bitcast' op bitcast needs integer or float element types of the same width, got f32 and i16}}
  %0 = graph.bitcast %x : tensor<4xf32> -> tensor<4xi16>
  func.return
}

// -----

// top_k takes at most the axis' size.
func.func @top_k_too_many(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{'graph.top_k' op k must be in [0, 3] (dimension 1 of tensor<2x3xf32>), got 5}}
  %v, %i = graph.top_k %x {k = 5 : i64} : (tensor<2x3xf32>) -> (tensor<2x5xf32>, tensor<2x5xi64>)
  func.return
}

// -----

// Bitwise ops and shifts take integers, and a direction of left or right.
func.func @bitwise_float(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  // expected-error@+1 {{'graph.bitwise_and' op operands must have an integer element type, got tensor<4xf32>}}
  %0 = graph.bitwise_and %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @bit_shift_direction(%x: tensor<4xi32>, %y: tensor<4xi32>) {
  // expected-error@+1 {{'graph.bit_shift' op direction must be "left" or "right", got "up"}}
  %0 = graph.bit_shift %x, %y {direction = "up"} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

// Trigonometric and rounding ops are float-only.
func.func @sin_integer(%x: tensor<4xi32>) {
  // expected-error@+1 {{'graph.sin' op input must have a floating-point element type, got tensor<4xi32>}}
  %0 = graph.sin %x : tensor<4xi32>
  func.return
}

// -----

// mod's operands share an element type.
func.func @mod_mixed(%x: tensor<4xi32>, %y: tensor<4xi64>) {
  // expected-error@+1 {{'graph.mod' op lhs and rhs must have the same element type, got tensor<4xi32>, tensor<4xi64>}}
  %0 = graph.mod %x, %y : (tensor<4xi32>, tensor<4xi64>) -> tensor<4xi32>
  func.return
}

// -----

func.func @cumprod_axis(%x: tensor<4xf32>) {
  // expected-error@+1 {{'graph.cumprod' op axis 1 is out of range for rank 1}}
  %0 = graph.cumprod %x {axis = 1 : i64} : tensor<4xf32> -> tensor<4xf32>
  func.return
}
