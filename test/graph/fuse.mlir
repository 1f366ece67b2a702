// RUN: ziggurat-opt %s -p graph-fuse | filecheck %s
// RUN: ziggurat-opt %s -p graph-fuse,graph-unfuse | filecheck %s --check-prefix=UNFUSE
// RUN: ziggurat-opt %s -p graph-fuse | ziggurat-opt | filecheck %s

// conv + bias + relu: the conv anchors its elementwise/broadcast consumers;
// the constant bias stays outside and enters as an operand.
// CHECK-LABEL: func.func @conv_bias_relu
// CHECK-NEXT:    %bias = graph.constant
// CHECK-NEXT:    %{{.*}} = graph.fused "conv2d_add_relu"(%x, %w, %bias) {root = "graph.conv2d"}({
// CHECK-NEXT:    ^bb0(%{{.*}}: tensor<1x3x8x8xf32>, %{{.*}}: tensor<4x3x3x3xf32>, %{{.*}}: tensor<1x4x1x1xf32>):
// CHECK-NEXT:      graph.conv2d
// CHECK-NEXT:      graph.add
// CHECK-NEXT:      graph.relu
// CHECK-NEXT:      graph.yield %{{.*}} : tensor<1x4x6x6xf32>
// CHECK-NEXT:    }) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x6x6xf32>
// CHECK-NEXT:    func.return
// UNFUSE-LABEL: func.func @conv_bias_relu
// UNFUSE-NEXT:    %bias = graph.constant
// UNFUSE-NEXT:    graph.conv2d %x, %w
// UNFUSE-NEXT:    graph.add
// UNFUSE-NEXT:    graph.relu
// UNFUSE-NEXT:    func.return
// UNFUSE-NOT:     graph.fused
func.func @conv_bias_relu(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %bias = graph.constant dense<0.5> : tensor<1x4x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %a = graph.add %c, %bias : (tensor<1x4x6x6xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %r = graph.relu %a : tensor<1x4x6x6xf32>
  func.return %r : tensor<1x4x6x6xf32>
}

// A diamond: the conv result feeds both the batch norm and the residual add,
// which post-dominates it through elementwise ops only, so all of it is one group.
// CHECK-LABEL: func.func @conv_bn_relu_residual
// CHECK-NEXT:    %{{.*}} = graph.fused "conv2d_batch_norm_relu_add"(%x, %w, %s) {root = "graph.conv2d"}
// CHECK:         graph.yield
// CHECK-NEXT:    }) : ({{.*}}) -> tensor<1x4x8x8xf32>
// CHECK-NEXT:    func.return
func.func @conv_bn_relu_residual(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x1x1xf32>, %s: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  %c = graph.conv2d %x, %w : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %b = graph.batch_norm %c, %s, %s, %s, %s : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %r = graph.relu %b : tensor<1x4x8x8xf32>
  %a = graph.add %r, %c : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  func.return %a : tensor<1x4x8x8xf32>
}

// A ResNet block: the input %x is used by the first conv and by the residual
// add; each conv anchors its own group, the second one takes the residual add.
// CHECK-LABEL: func.func @resnet_block
// CHECK-NEXT:    %[[G1:.*]] = graph.fused "conv2d_batch_norm_relu"(%x, %w, %s) {root = "graph.conv2d"}
// CHECK:         %{{.*}} = graph.fused "conv2d_batch_norm_add_relu"(%[[G1]], %w, %s, %x) {root = "graph.conv2d"}
// CHECK-NOT:     graph.fused
// CHECK:         func.return
func.func @resnet_block(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>, %s: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  %c1 = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  %b1 = graph.batch_norm %c1, %s, %s, %s, %s : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %r1 = graph.relu %b1 : tensor<1x4x8x8xf32>
  %c2 = graph.conv2d %r1, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  %b2 = graph.batch_norm %c2, %s, %s, %s, %s : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %a = graph.add %b2, %x : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %r2 = graph.relu %a : tensor<1x4x8x8xf32>
  func.return %r2 : tensor<1x4x8x8xf32>
}

// matmul + bias add + gelu.
// CHECK-LABEL: func.func @matmul_add_gelu
// CHECK-NEXT:    graph.fused "matmul_add_gelu"(%a, %b, %bias) {root = "graph.matmul"}
func.func @matmul_add_gelu(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %bias: tensor<16xf32>) -> tensor<4x16xf32> {
  %m = graph.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %s = graph.add %m, %bias : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %g = graph.gelu %s : tensor<4x16xf32>
  func.return %g : tensor<4x16xf32>
}

// A chain of elementwise and broadcast ops is one group, rooted at the broadcast.
// CHECK-LABEL: func.func @elementwise_chain
// CHECK-NEXT:    graph.fused "exp_mul_sigmoid_neg"(%x, %y) {root = "graph.mul"}
// CHECK-NOT:     graph.fused
func.func @elementwise_chain(%x: tensor<4x8xf32>, %y: tensor<8xf32>) -> tensor<4x8xf32> {
  %e = graph.exp %x : tensor<4x8xf32>
  %m = graph.mul %e, %y : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %s = graph.sigmoid %m : tensor<4x8xf32>
  %n = graph.neg %s : tensor<4x8xf32>
  func.return %n : tensor<4x8xf32>
}

// softmax and layer_norm are opaque: their neighbours fuse without them.
// CHECK-LABEL: func.func @softmax_alone
// CHECK-NEXT:    %[[E:.*]] = graph.fused "exp_neg"(%x) {root = "graph.exp"}
// CHECK:         %[[S:.*]] = graph.softmax %[[E]] : tensor<4x8xf32>
// CHECK-NEXT:    graph.relu %[[S]]
// CHECK-NEXT:    func.return
func.func @softmax_alone(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = graph.exp %x : tensor<4x8xf32>
  %n = graph.neg %e : tensor<4x8xf32>
  %s = graph.softmax %n : tensor<4x8xf32>
  %r = graph.relu %s : tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @layer_norm_alone
// CHECK-NEXT:    %[[A:.*]] = graph.abs %x
// CHECK-NEXT:    %[[L:.*]] = graph.layer_norm %[[A]], %g, %g
// CHECK-NEXT:    graph.tanh %[[L]]
// CHECK-NEXT:    func.return
func.func @layer_norm_alone(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  %a = graph.abs %x : tensor<4x8xf32>
  %l = graph.layer_norm %a, %g, %g : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %t = graph.tanh %l : tensor<4x8xf32>
  func.return %t : tensor<4x8xf32>
}

// A reduction absorbs its elementwise producers, but not its consumers.
// CHECK-LABEL: func.func @reduce_absorbs_producers
// CHECK-NEXT:    %[[R:.*]] = graph.fused "sub_mul_reduce_sum"(%x, %y) {root = "graph.reduce_sum"}
// CHECK:         graph.sqrt %[[R]]
// CHECK-NEXT:    func.return
func.func @reduce_absorbs_producers(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %d = graph.sub %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = graph.mul %d, %d : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = graph.reduce_sum %m {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
  %s = graph.sqrt %r : tensor<4x1xf32>
  func.return %s : tensor<4x1xf32>
}

// A diamond through an opaque op: the conv's post-dominator (the add) is reached
// through softmax, so the conv stays alone; relu and the add still fuse.
// CHECK-LABEL: func.func @diamond_through_opaque
// CHECK-NEXT:    %[[C:.*]] = graph.conv2d %x, %w
// CHECK-NEXT:    %[[S:.*]] = graph.softmax %[[C]]
// CHECK-NEXT:    graph.fused "relu_add"(%[[C]], %[[S]]) {root = "graph.add"}
// CHECK-NOT:     graph.fused
func.func @diamond_through_opaque(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32> {
  %c = graph.conv2d %x, %w : (tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x8x8xf32>
  %r = graph.relu %c : tensor<1x4x8x8xf32>
  %s = graph.softmax %c {axis = 1 : i64} : tensor<1x4x8x8xf32>
  %a = graph.add %r, %s : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  func.return %a : tensor<1x4x8x8xf32>
}

// A value also returned from the function has no post-dominator: the conv's
// group ends there, and what follows forms its own group.
// CHECK-LABEL: func.func @escaping_value
// CHECK-NEXT:    %[[G:.*]] = graph.fused "matmul_relu"(%a, %b)
// CHECK:         %[[N:.*]] = graph.fused "exp_neg"(%[[G]])
// CHECK:         func.return %[[G]], %[[N]]
func.func @escaping_value(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %m = graph.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %r = graph.relu %m : tensor<4x16xf32>
  %e = graph.exp %r : tensor<4x16xf32>
  %n = graph.neg %e : tensor<4x16xf32>
  func.return %r, %n : tensor<4x16xf32>, tensor<4x16xf32>
}

// A transpose marked graph.stop_fusion is opaque: relu and sigmoid do not fuse
// through it (unmarked, the three are one relu_transpose_sigmoid group).
// CHECK-LABEL: func.func @stop_fusion
// CHECK-NEXT:    %r = graph.relu %x
// CHECK-NEXT:    %t = graph.transpose %r {graph.stop_fusion, perm = array<i64: 0, 2, 3, 1>}
// CHECK-NEXT:    %s = graph.sigmoid %t
// CHECK-NEXT:    func.return %s
// CHECK-NOT:     graph.fused
func.func @stop_fusion(%x: tensor<1x8x4x4xf32>) -> tensor<1x4x4x8xf32> {
  %r = graph.relu %x : tensor<1x8x4x4xf32>
  %t = graph.transpose %r {graph.stop_fusion, perm = array<i64: 0, 2, 3, 1>} : tensor<1x8x4x4xf32> -> tensor<1x4x4x8xf32>
  %s = graph.sigmoid %t : tensor<1x4x4x8xf32>
  func.return %s : tensor<1x4x4x8xf32>
}
