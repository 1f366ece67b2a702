// RUN: ziggurat-opt %s | ziggurat-opt | filecheck %s

// Every graph op in its custom syntax, printed back as written (properties
// equal to their ONNX default are not printed), then parsed again.

// CHECK-LABEL: func.func @activations(
// CHECK-NEXT:    %relu = graph.relu %x : tensor<2x8xf32>
// CHECK-NEXT:    %relu_i8 = graph.relu %i : tensor<2x8xi8>
// CHECK-NEXT:    %relu6 = graph.relu6 %x : tensor<2x8xf32>
// CHECK-NEXT:    %leaky = graph.leaky_relu %x {alpha = 1.000000e-01 : f32} : tensor<2x8xf32>
// CHECK-NEXT:    %leaky_default = graph.leaky_relu %x : tensor<2x8xf32>
// CHECK-NEXT:    %elu = graph.elu %x {alpha = 5.000000e-01 : f32} : tensor<2x8xf32>
// CHECK-NEXT:    %gelu = graph.gelu %x : tensor<2x8xf32>
// CHECK-NEXT:    %gelu_tanh = graph.gelu %x {approximate = "tanh"} : tensor<2x8xf32>
// CHECK-NEXT:    %sigmoid = graph.sigmoid %x : tensor<2x8xf32>
// CHECK-NEXT:    %tanh = graph.tanh %x : tensor<2x8xf32>
// CHECK-NEXT:    %silu = graph.silu %x : tensor<2x8xf32>
// CHECK-NEXT:    %hard_sigmoid = graph.hard_sigmoid %x {alpha = 1.250000e-01 : f32, beta = 2.500000e-01 : f32} : tensor<2x8xf32>
// CHECK-NEXT:    %hard_swish = graph.hard_swish %x : tensor<2x8xf32>
// CHECK-NEXT:    %softplus = graph.softplus %x : tensor<2x8xf32>
// CHECK-NEXT:    %clip = graph.clip %x {min = -1.000000e+00 : f32, max = 1.000000e+00 : f32} : tensor<2x8xf32>
// CHECK-NEXT:    %clip_min = graph.clip %i {min = 0.000000e+00 : f32} : tensor<2x8xi8>
// CHECK-NEXT:    func.return %clip : tensor<2x8xf32>
func.func @activations(%x: tensor<2x8xf32>, %i: tensor<2x8xi8>) -> tensor<2x8xf32> {
  %relu = graph.relu %x : tensor<2x8xf32>
  %relu_i8 = graph.relu %i : tensor<2x8xi8>
  %relu6 = graph.relu6 %x : tensor<2x8xf32>
  %leaky = graph.leaky_relu %x {alpha = 1.000000e-01 : f32} : tensor<2x8xf32>
  %leaky_default = graph.leaky_relu %x : tensor<2x8xf32>
  %elu = graph.elu %x {alpha = 5.000000e-01 : f32} : tensor<2x8xf32>
  %gelu = graph.gelu %x : tensor<2x8xf32>
  %gelu_tanh = graph.gelu %x {approximate = "tanh"} : tensor<2x8xf32>
  %sigmoid = graph.sigmoid %x : tensor<2x8xf32>
  %tanh = graph.tanh %x : tensor<2x8xf32>
  %silu = graph.silu %x : tensor<2x8xf32>
  %hard_sigmoid = graph.hard_sigmoid %x {alpha = 1.250000e-01 : f32, beta = 2.500000e-01 : f32} : tensor<2x8xf32>
  %hard_swish = graph.hard_swish %x : tensor<2x8xf32>
  %softplus = graph.softplus %x : tensor<2x8xf32>
  %clip = graph.clip %x {min = -1.000000e+00 : f32, max = 1.000000e+00 : f32} : tensor<2x8xf32>
  %clip_min = graph.clip %i {min = 0.000000e+00 : f32} : tensor<2x8xi8>
  func.return %clip : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @unary_math(
// CHECK-NEXT:    %exp = graph.exp %x : tensor<4xf16>
// CHECK-NEXT:    %log = graph.log %x : tensor<4xf16>
// CHECK-NEXT:    %sqrt = graph.sqrt %x : tensor<4xf16>
// CHECK-NEXT:    %rsqrt = graph.rsqrt %x : tensor<4xf16>
// CHECK-NEXT:    %reciprocal = graph.reciprocal %x : tensor<4xf16>
// CHECK-NEXT:    %neg = graph.neg %x : tensor<4xf16>
// CHECK-NEXT:    %neg_i32 = graph.neg %i : tensor<4xi32>
// CHECK-NEXT:    %abs = graph.abs %i : tensor<4xi32>
// CHECK-NEXT:    %erf = graph.erf %x : tensor<4xf16>
// CHECK-NEXT:    %sin = graph.sin %x : tensor<4xf16>
// CHECK-NEXT:    %cos = graph.cos %x : tensor<4xf16>
// CHECK-NEXT:    %tan = graph.tan %x : tensor<4xf16>
// CHECK-NEXT:    %asin = graph.asin %x : tensor<4xf16>
// CHECK-NEXT:    %acos = graph.acos %x : tensor<4xf16>
// CHECK-NEXT:    %atan = graph.atan %x : tensor<4xf16>
// CHECK-NEXT:    %sinh = graph.sinh %x : tensor<4xf16>
// CHECK-NEXT:    %cosh = graph.cosh %x : tensor<4xf16>
// CHECK-NEXT:    %asinh = graph.asinh %x : tensor<4xf16>
// CHECK-NEXT:    %acosh = graph.acosh %x : tensor<4xf16>
// CHECK-NEXT:    %atanh = graph.atanh %x : tensor<4xf16>
// CHECK-NEXT:    %floor = graph.floor %x : tensor<4xf16>
// CHECK-NEXT:    %ceil = graph.ceil %x : tensor<4xf16>
// CHECK-NEXT:    %round = graph.round %x : tensor<4xf16>
// CHECK-NEXT:    func.return %erf : tensor<4xf16>
func.func @unary_math(%x: tensor<4xf16>, %i: tensor<4xi32>) -> tensor<4xf16> {
  %exp = graph.exp %x : tensor<4xf16>
  %log = graph.log %x : tensor<4xf16>
  %sqrt = graph.sqrt %x : tensor<4xf16>
  %rsqrt = graph.rsqrt %x : tensor<4xf16>
  %reciprocal = graph.reciprocal %x : tensor<4xf16>
  %neg = graph.neg %x : tensor<4xf16>
  %neg_i32 = graph.neg %i : tensor<4xi32>
  %abs = graph.abs %i : tensor<4xi32>
  %erf = graph.erf %x : tensor<4xf16>
  %sin = graph.sin %x : tensor<4xf16>
  %cos = graph.cos %x : tensor<4xf16>
  %tan = graph.tan %x : tensor<4xf16>
  %asin = graph.asin %x : tensor<4xf16>
  %acos = graph.acos %x : tensor<4xf16>
  %atan = graph.atan %x : tensor<4xf16>
  %sinh = graph.sinh %x : tensor<4xf16>
  %cosh = graph.cosh %x : tensor<4xf16>
  %asinh = graph.asinh %x : tensor<4xf16>
  %acosh = graph.acosh %x : tensor<4xf16>
  %atanh = graph.atanh %x : tensor<4xf16>
  %floor = graph.floor %x : tensor<4xf16>
  %ceil = graph.ceil %x : tensor<4xf16>
  %round = graph.round %x : tensor<4xf16>
  func.return %erf : tensor<4xf16>
}

// CHECK-LABEL: func.func @broadcasting(
// CHECK-NEXT:    %add = graph.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %sub = graph.sub %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %mul = graph.mul %b, %a : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %div = graph.div %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %pow = graph.pow %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %max = graph.max %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %min = graph.min %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %prelu = graph.prelu %a, %s : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %where = graph.where %c, %a, %b : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %equal = graph.equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT:    %greater = graph.greater %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT:    %less = graph.less %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT:    %not = graph.not %less : tensor<2x3xi1>
// CHECK-NEXT:    func.return %where : tensor<2x3xf32>
func.func @broadcasting(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<2x1xi1>, %s: tensor<1xf32>) -> tensor<2x3xf32> {
  %add = graph.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %sub = graph.sub %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %mul = graph.mul %b, %a : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %div = graph.div %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %pow = graph.pow %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %max = graph.max %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %min = graph.min %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %prelu = graph.prelu %a, %s : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32>
  %where = graph.where %c, %a, %b : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %equal = graph.equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %greater = graph.greater %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %less = graph.less %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %not = graph.not %less : tensor<2x3xi1>
  func.return %where : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @integer_math(
// CHECK-NEXT:    %mod = graph.mod %a, %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:    %fmod = graph.mod %a, %b {fmod = true} : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:    %fmod_f16 = graph.mod %x, %x {fmod = true} : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
// CHECK-NEXT:    %and = graph.bitwise_and %a, %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:    %or = graph.bitwise_or %a, %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:    %xor = graph.bitwise_xor %a, %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:    %not = graph.bitwise_not %a : tensor<2x3xi32>
// CHECK-NEXT:    %shift_left = graph.bit_shift %a, %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:    %shift_right = graph.bit_shift %u, %u {direction = "right"} : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
// CHECK-NEXT:    func.return %mod : tensor<2x3xi32>
func.func @integer_math(%a: tensor<2x3xi32>, %b: tensor<3xi32>, %x: tensor<4xf16>, %u: tensor<4xui8>) -> tensor<2x3xi32> {
  %mod = graph.mod %a, %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %fmod = graph.mod %a, %b {fmod = true} : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %fmod_f16 = graph.mod %x, %x {fmod = true} : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  %and = graph.bitwise_and %a, %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %or = graph.bitwise_or %a, %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %xor = graph.bitwise_xor %a, %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %not = graph.bitwise_not %a : tensor<2x3xi32>
  %shift_left = graph.bit_shift %a, %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %shift_right = graph.bit_shift %u, %u {direction = "right"} : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  func.return %mod : tensor<2x3xi32>
}

// CHECK-LABEL: func.func @contractions(
// CHECK-NEXT:    %matmul = graph.matmul %a, %b : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    %gemm = graph.gemm %a, %bt, %c {alpha = 5.000000e-01 : f32, trans_b = true} : (tensor<3x4xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    %gemm_no_c = graph.gemm %a, %bt {trans_b = true} : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:    %conv = graph.conv2d %x, %w, %bias {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>, tensor<6xf32>) -> tensor<1x6x4x4xf32>
// CHECK-NEXT:    %conv_no_bias = graph.conv2d %x, %w {dilations = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x4x4xf32>
// CHECK-NEXT:    %depthwise = graph.conv2d %xh, %wd {pads = array<i64: 1, 1, 1, 1>, groups = 4 : i64, layout = "NHWC"} : (tensor<1x8x8x4xf16>, tensor<4x3x3x1xf16>) -> tensor<1x8x8x4xf16>
// CHECK-NEXT:    func.return %gemm : tensor<3x5xf32>
func.func @contractions(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %bt: tensor<5x4xf32>, %c: tensor<5xf32>, %x: tensor<1x3x8x8xf32>, %w: tensor<6x3x3x3xf32>, %bias: tensor<6xf32>, %xh: tensor<1x8x8x4xf16>, %wd: tensor<4x3x3x1xf16>) -> tensor<3x5xf32> {
  %matmul = graph.matmul %a, %b : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %gemm = graph.gemm %a, %bt, %c {alpha = 5.000000e-01 : f32, trans_b = true} : (tensor<3x4xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  %gemm_no_c = graph.gemm %a, %bt {trans_b = true} : (tensor<3x4xf32>, tensor<5x4xf32>) -> tensor<3x5xf32>
  %conv = graph.conv2d %x, %w, %bias {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>, tensor<6xf32>) -> tensor<1x6x4x4xf32>
  %conv_no_bias = graph.conv2d %x, %w {dilations = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<6x3x3x3xf32>) -> tensor<1x6x4x4xf32>
  %depthwise = graph.conv2d %xh, %wd {pads = array<i64: 1, 1, 1, 1>, groups = 4 : i64, layout = "NHWC"} : (tensor<1x8x8x4xf16>, tensor<4x3x3x1xf16>) -> tensor<1x8x8x4xf16>
  func.return %gemm : tensor<3x5xf32>
}

// CHECK-LABEL: func.func @normalization(
// CHECK-NEXT:    %bn = graph.batch_norm %x, %c, %c, %c, %c {epsilon = 1.000000e-03 : f32} : (tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x5x5xf32>
// CHECK-NEXT:    %ln = graph.layer_norm %s, %g, %g : (tensor<2x7xf32>, tensor<7xf32>, tensor<7xf32>) -> tensor<2x7xf32>
// CHECK-NEXT:    %ln_no_bias = graph.layer_norm %s, %s {axis = 0 : i64, epsilon = 1.000000e-06 : f32} : (tensor<2x7xf32>, tensor<2x7xf32>) -> tensor<2x7xf32>
// CHECK-NEXT:    %softmax = graph.softmax %s : tensor<2x7xf32>
// CHECK-NEXT:    %softmax_axis = graph.softmax %s {axis = 0 : i64} : tensor<2x7xf32>
// CHECK-NEXT:    %log_softmax = graph.log_softmax %s : tensor<2x7xf32>
// CHECK-NEXT:    func.return %bn : tensor<2x4x5x5xf32>
func.func @normalization(%x: tensor<2x4x5x5xf32>, %c: tensor<4xf32>, %s: tensor<2x7xf32>, %g: tensor<7xf32>) -> tensor<2x4x5x5xf32> {
  %bn = graph.batch_norm %x, %c, %c, %c, %c {epsilon = 1.000000e-03 : f32} : (tensor<2x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x5x5xf32>
  %ln = graph.layer_norm %s, %g, %g : (tensor<2x7xf32>, tensor<7xf32>, tensor<7xf32>) -> tensor<2x7xf32>
  %ln_no_bias = graph.layer_norm %s, %s {axis = 0 : i64, epsilon = 1.000000e-06 : f32} : (tensor<2x7xf32>, tensor<2x7xf32>) -> tensor<2x7xf32>
  %softmax = graph.softmax %s : tensor<2x7xf32>
  %softmax_axis = graph.softmax %s {axis = 0 : i64} : tensor<2x7xf32>
  %log_softmax = graph.log_softmax %s : tensor<2x7xf32>
  func.return %bn : tensor<2x4x5x5xf32>
}

// CHECK-LABEL: func.func @pooling(
// CHECK-NEXT:    %max_pool = graph.max_pool %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x3x9x9xf32> -> tensor<1x3x5x5xf32>
// CHECK-NEXT:    %max_pool_ceil = graph.max_pool %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = true, dilations = array<i64: 1, 2>} : tensor<1x3x9x9xf32> -> tensor<1x3x5x4xf32>
// CHECK-NEXT:    %max_pool_nhwc = graph.max_pool %xh {kernel = array<i64: 3, 3>, layout = "NHWC"} : tensor<1x9x9x3xi8> -> tensor<1x7x7x3xi8>
// CHECK-NEXT:    %avg_pool = graph.avg_pool %x {kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, count_include_pad = true} : tensor<1x3x9x9xf32> -> tensor<1x3x9x9xf32>
// CHECK-NEXT:    %gap = graph.global_avg_pool %x : tensor<1x3x9x9xf32> -> tensor<1x3x1x1xf32>
// CHECK-NEXT:    %gmp = graph.global_max_pool %xh {layout = "NHWC"} : tensor<1x9x9x3xi8> -> tensor<1x1x1x3xi8>
// CHECK-NEXT:    func.return %gap : tensor<1x3x1x1xf32>
func.func @pooling(%x: tensor<1x3x9x9xf32>, %xh: tensor<1x9x9x3xi8>) -> tensor<1x3x1x1xf32> {
  %max_pool = graph.max_pool %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x3x9x9xf32> -> tensor<1x3x5x5xf32>
  %max_pool_ceil = graph.max_pool %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode = true, dilations = array<i64: 1, 2>} : tensor<1x3x9x9xf32> -> tensor<1x3x5x4xf32>
  %max_pool_nhwc = graph.max_pool %xh {kernel = array<i64: 3, 3>, layout = "NHWC"} : tensor<1x9x9x3xi8> -> tensor<1x7x7x3xi8>
  %avg_pool = graph.avg_pool %x {kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, count_include_pad = true} : tensor<1x3x9x9xf32> -> tensor<1x3x9x9xf32>
  %gap = graph.global_avg_pool %x : tensor<1x3x9x9xf32> -> tensor<1x3x1x1xf32>
  %gmp = graph.global_max_pool %xh {layout = "NHWC"} : tensor<1x9x9x3xi8> -> tensor<1x1x1x3xi8>
  func.return %gap : tensor<1x3x1x1xf32>
}

// CHECK-LABEL: func.func @reductions(
// CHECK-NEXT:    %sum = graph.reduce_sum %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
// CHECK-NEXT:    %mean = graph.reduce_mean %x {axes = array<i64: 0, -1>, keepdims = false} : tensor<2x3x4xf32> -> tensor<3xf32>
// CHECK-NEXT:    %max = graph.reduce_max %x : tensor<2x3x4xf32> -> tensor<1x1x1xf32>
// CHECK-NEXT:    %prod = graph.reduce_prod %x {axes = array<i64: 2>, keepdims = false} : tensor<2x3x4xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %arg_max = graph.arg_max %x {axis = 1 : i64, keepdims = false, select_last_index = true} : tensor<2x3x4xf32> -> tensor<2x4xi64>
// CHECK-NEXT:    %arg_max_default = graph.arg_max %x : tensor<2x3x4xf32> -> tensor<1x3x4xi64>
// CHECK-NEXT:    %cumsum = graph.cumsum %x {axis = -1 : i64, exclusive = true, reverse = true} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT:    %cumprod = graph.cumprod %x {axis = 1 : i64, exclusive = true} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
// CHECK-NEXT:    func.return %max : tensor<1x1x1xf32>
func.func @reductions(%x: tensor<2x3x4xf32>) -> tensor<1x1x1xf32> {
  %sum = graph.reduce_sum %x {axes = array<i64: 1>} : tensor<2x3x4xf32> -> tensor<2x1x4xf32>
  %mean = graph.reduce_mean %x {axes = array<i64: 0, -1>, keepdims = false} : tensor<2x3x4xf32> -> tensor<3xf32>
  %max = graph.reduce_max %x : tensor<2x3x4xf32> -> tensor<1x1x1xf32>
  %prod = graph.reduce_prod %x {axes = array<i64: 2>, keepdims = false} : tensor<2x3x4xf32> -> tensor<2x3xf32>
  %arg_max = graph.arg_max %x {axis = 1 : i64, keepdims = false, select_last_index = true} : tensor<2x3x4xf32> -> tensor<2x4xi64>
  %arg_max_default = graph.arg_max %x : tensor<2x3x4xf32> -> tensor<1x3x4xi64>
  %cumsum = graph.cumsum %x {axis = -1 : i64, exclusive = true, reverse = true} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %cumprod = graph.cumprod %x {axis = 1 : i64, exclusive = true} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  func.return %max : tensor<1x1x1xf32>
}

// CHECK-LABEL: func.func @shapes(
// CHECK-NEXT:    %transpose = graph.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT:    %reshape = graph.reshape %x : tensor<2x3x4xf32> -> tensor<4x6xf32>
// CHECK-NEXT:    %broadcast = graph.broadcast_to %u : tensor<3x1xf32> -> tensor<2x3x5xf32>
// CHECK-NEXT:    %flatten = graph.flatten %x : tensor<2x3x4xf32> -> tensor<2x12xf32>
// CHECK-NEXT:    %flatten0 = graph.flatten %x {axis = 0 : i64} : tensor<2x3x4xf32> -> tensor<1x24xf32>
// CHECK-NEXT:    %squeeze = graph.squeeze %u : tensor<3x1xf32> -> tensor<3xf32>
// CHECK-NEXT:    %squeeze_axes = graph.squeeze %u {axes = array<i64: -1>} : tensor<3x1xf32> -> tensor<3xf32>
// CHECK-NEXT:    %unsqueeze = graph.unsqueeze %x {axes = array<i64: 0, 4>} : tensor<2x3x4xf32> -> tensor<1x2x3x4x1xf32>
// CHECK-NEXT:    %concat = graph.concat %x, %y, %x {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x3x4xf32>) -> tensor<2x11x4xf32>
// CHECK-NEXT:    %concat_one = graph.concat %x {axis = -1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT:    %slice = graph.slice %x {starts = array<i64: 1, 0>, ends = array<i64: 3, -1>} : tensor<2x3x4xf32> -> tensor<1x2x4xf32>
// CHECK-NEXT:    %slice_steps = graph.slice %x {starts = array<i64: -1>, ends = array<i64: -9223372036854775808>, axes = array<i64: 2>, steps = array<i64: -2>} : tensor<2x3x4xf32> -> tensor<2x3x2xf32>
// CHECK-NEXT:    %pad = graph.pad %x {pads = array<i64: 0, 1, 2, 0, 1, 0>, value = -1.000000e+00 : f32} : tensor<2x3x4xf32> -> tensor<2x5x6xf32>
// CHECK-NEXT:    %pad_reflect = graph.pad %x {pads = array<i64: 0, 2, 0, 0, 0, -1>, mode = "reflect"} : tensor<2x3x4xf32> -> tensor<2x5x3xf32>
// CHECK-NEXT:    %gather = graph.gather %x, %idx {axis = 2 : i64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x3x2xf32>
// CHECK-NEXT:    %top_values, %top_indices = graph.top_k %x {k = 2 : i64, axis = 1 : i64, largest = false} : (tensor<2x3x4xf32>) -> (tensor<2x2x4xf32>, tensor<2x2x4xi64>)
// CHECK-NEXT:    %top, %top_1 = graph.top_k %x {k = 4 : i64} : (tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xi64>)
// CHECK-NEXT:    func.return %reshape : tensor<4x6xf32>
func.func @shapes(%x: tensor<2x3x4xf32>, %y: tensor<2x5x4xf32>, %u: tensor<3x1xf32>, %idx: tensor<2xi64>) -> tensor<4x6xf32> {
  %transpose = graph.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %reshape = graph.reshape %x : tensor<2x3x4xf32> -> tensor<4x6xf32>
  %broadcast = graph.broadcast_to %u : tensor<3x1xf32> -> tensor<2x3x5xf32>
  %flatten = graph.flatten %x : tensor<2x3x4xf32> -> tensor<2x12xf32>
  %flatten0 = graph.flatten %x {axis = 0 : i64} : tensor<2x3x4xf32> -> tensor<1x24xf32>
  %squeeze = graph.squeeze %u : tensor<3x1xf32> -> tensor<3xf32>
  %squeeze_axes = graph.squeeze %u {axes = array<i64: -1>} : tensor<3x1xf32> -> tensor<3xf32>
  %unsqueeze = graph.unsqueeze %x {axes = array<i64: 0, 4>} : tensor<2x3x4xf32> -> tensor<1x2x3x4x1xf32>
  %concat = graph.concat %x, %y, %x {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x3x4xf32>) -> tensor<2x11x4xf32>
  %concat_one = graph.concat %x {axis = -1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %slice = graph.slice %x {starts = array<i64: 1, 0>, ends = array<i64: 3, -1>} : tensor<2x3x4xf32> -> tensor<1x2x4xf32>
  %slice_steps = graph.slice %x {starts = array<i64: -1>, ends = array<i64: -9223372036854775808>, axes = array<i64: 2>, steps = array<i64: -2>} : tensor<2x3x4xf32> -> tensor<2x3x2xf32>
  %pad = graph.pad %x {pads = array<i64: 0, 1, 2, 0, 1, 0>, value = -1.000000e+00 : f32} : tensor<2x3x4xf32> -> tensor<2x5x6xf32>
  %pad_reflect = graph.pad %x {pads = array<i64: 0, 2, 0, 0, 0, -1>, mode = "reflect"} : tensor<2x3x4xf32> -> tensor<2x5x3xf32>
  %gather = graph.gather %x, %idx {axis = 2 : i64} : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x3x2xf32>
  %top_values, %top_indices = graph.top_k %x {k = 2 : i64, axis = 1 : i64, largest = false} : (tensor<2x3x4xf32>) -> (tensor<2x2x4xf32>, tensor<2x2x4xi64>)
  %top:2 = graph.top_k %x {k = 4 : i64, axis = -1 : i64} : (tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xi64>)
  func.return %reshape : tensor<4x6xf32>
}

// CHECK-LABEL: func.func @conversions(
// CHECK-NEXT:    %cast = graph.cast %x : tensor<2x3xf32> -> tensor<2x3xbf16>
// CHECK-NEXT:    %cast_int = graph.cast %x : tensor<2x3xf32> -> tensor<2x3xi32>
// CHECK-NEXT:    %bits = graph.bitcast %x : tensor<2x3xf32> -> tensor<2x3xi32>
// CHECK-NEXT:    %q = graph.quantize %x, %s, %zp : (tensor<2x3xf32>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
// CHECK-NEXT:    %dq = graph.dequantize %q, %s, %zp : (tensor<2x3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3xf32>
// CHECK-NEXT:    %qc = graph.quantize %x, %cs, %czp {axis = -1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xui8>) -> tensor<2x3xui8>
// CHECK-NEXT:    %dqc = graph.dequantize %qc, %cs, %czp : (tensor<2x3xui8>, tensor<3xf32>, tensor<3xui8>) -> tensor<2x3xf32>
// CHECK-NEXT:    %const = graph.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    func.return %dq : tensor<2x3xf32>
func.func @conversions(%x: tensor<2x3xf32>, %s: tensor<f32>, %zp: tensor<i8>, %cs: tensor<3xf32>, %czp: tensor<3xui8>) -> tensor<2x3xf32> {
  %cast = graph.cast %x : tensor<2x3xf32> -> tensor<2x3xbf16>
  %cast_int = graph.cast %x : tensor<2x3xf32> -> tensor<2x3xi32>
  %bits = graph.bitcast %x : tensor<2x3xf32> -> tensor<2x3xi32>
  %q = graph.quantize %x, %s, %zp : (tensor<2x3xf32>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  %dq = graph.dequantize %q, %s, %zp : (tensor<2x3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3xf32>
  %qc = graph.quantize %x, %cs, %czp {axis = -1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xui8>) -> tensor<2x3xui8>
  // axis = 1 is the default: not printed.
  %dqc = graph.dequantize %qc, %cs, %czp {axis = 1 : i64} : (tensor<2x3xui8>, tensor<3xf32>, tensor<3xui8>) -> tensor<2x3xf32>
  %const = graph.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  func.return %dq : tensor<2x3xf32>
}
