// RUN: ziggurat-opt %s -p 'graph-convert-float{target=bf16}' -o %t.bf16.mlir
// RUN: ziggurat-run %t.bf16.mlir --outputs %t.graph.npz
// RUN: ziggurat-opt %t.bf16.mlir -p 'graph-opt,graph-to-tile' | filecheck %s --check-prefix=TILE
// RUN: ziggurat-opt %t.bf16.mlir -p 'graph-opt,lower-to-npu{machine=davinci}' | ziggurat-run - --machine davinci --expect %t.graph.npz | filecheck %s
// RUN: ziggurat-opt %t.bf16.mlir -p 'graph-opt,lower-to-npu{machine=tensorcore}' | ziggurat-run - --machine tensorcore --expect %t.graph.npz | filecheck %s
// nn.MultiheadAttention's head split as torch exports it (the ViT of the corpus, sizes kept: 65
// tokens, 4 heads of 16): q, k, v = qkv[0], qkv[1], qkv[2] are Gathers at constant indices, and
// each is reshaped from 65x1x64 to 65x4x16, which splits the 64 and merges away the 1. That
// reshape was a tensor.reshape, which tile-to-loop cannot bufferize, and the Gathers indexed
// reads no vector instruction does. The reshape is now a collapse_shape to 65x64 and an
// expand_shape (views; graph-canonicalize gives the 65x4x16 the batch dim of 1 the transpose
// to 1x4x65x16 had after it), each Gather a slice; on both machines the outputs equal the same
// bf16 graph on the graph interpreter.
// TILE-NOT: tensor.reshape
// TILE-NOT: tensor.extract %
// TILE:     tensor.extract_slice %{{.*}}[1, 0, 0, 0] [1, 65, 1, 64] [1, 1, 1, 1]
// TILE:     tensor.collapse_shape %{{.*}} {{\[}}[0 : i64, 1 : i64], [2 : i64, 3 : i64]] {{.*}} : tensor<1x65x1x64xbf16> into tensor<65x64xbf16>
// TILE-NEXT: tensor.expand_shape %{{.*}} {{\[}}[0 : i64, 1 : i64], [2 : i64, 3 : i64]] output_shape [1, 65, 4, 16] {{.*}} : tensor<65x64xbf16> into tensor<1x65x4x16xbf16>
// TILE-NOT: tensor.reshape
// TILE-NOT: tensor.extract %
// CHECK: result0: {{.*}} max abs error 0 {{.*}} ok{{$}}
func.func @main(%x: tensor<65x1x64xf32>, %w: tensor<64x192xf32>) -> tensor<1x4x65x65xf32> {
  %qkv = graph.matmul %x, %w : (tensor<65x1x64xf32>, tensor<64x192xf32>) -> tensor<65x1x192xf32>
  %s = graph.reshape %qkv : tensor<65x1x192xf32> -> tensor<1x65x1x3x64xf32>
  %t = graph.transpose %s {perm = array<i64: 3, 1, 2, 0, 4>} : tensor<1x65x1x3x64xf32> -> tensor<3x65x1x1x64xf32>
  %u = graph.squeeze %t {axes = array<i64: 3>} : tensor<3x65x1x1x64xf32> -> tensor<3x65x1x64xf32>
  %zero = graph.constant dense<0> : tensor<i64>
  %one = graph.constant dense<1> : tensor<i64>
  %q0 = graph.gather %u, %zero : (tensor<3x65x1x64xf32>, tensor<i64>) -> tensor<65x1x64xf32>
  %k0 = graph.gather %u, %one : (tensor<3x65x1x64xf32>, tensor<i64>) -> tensor<65x1x64xf32>
  %q1 = graph.reshape %q0 : tensor<65x1x64xf32> -> tensor<65x4x16xf32>
  %k1 = graph.reshape %k0 : tensor<65x1x64xf32> -> tensor<65x4x16xf32>
  %q2 = graph.transpose %q1 {perm = array<i64: 1, 0, 2>} : tensor<65x4x16xf32> -> tensor<4x65x16xf32>
  %k2 = graph.transpose %k1 {perm = array<i64: 1, 0, 2>} : tensor<65x4x16xf32> -> tensor<4x65x16xf32>
  %q3 = graph.reshape %q2 : tensor<4x65x16xf32> -> tensor<1x4x65x16xf32>
  %k3 = graph.reshape %k2 : tensor<4x65x16xf32> -> tensor<1x4x65x16xf32>
  %kt = graph.transpose %k3 {perm = array<i64: 0, 1, 3, 2>} : tensor<1x4x65x16xf32> -> tensor<1x4x16x65xf32>
  %half = graph.constant dense<0.5> : tensor<1xf32>
  %kh = graph.mul %kt, %half : (tensor<1x4x16x65xf32>, tensor<1xf32>) -> tensor<1x4x16x65xf32>
  %y = graph.matmul %q3, %kh : (tensor<1x4x65x16xf32>, tensor<1x4x16x65xf32>) -> tensor<1x4x65x65xf32>
  func.return %y : tensor<1x4x65x65xf32>
}
