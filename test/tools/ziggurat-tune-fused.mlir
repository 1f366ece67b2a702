// ziggurat-tune on fused graph IR (what `ziggurat-compile --machine M --emit graph` writes) tunes
// it as it tunes the unfused IR, and writes the same module: it unfuses it first, as lower-to-npu
// fuses again. Within a fused group a conv's weights are the group's arguments, not constants, so
// a change of layout (NHWC) would have left their transposes to run on the device for every tile
// instead of folding them.
// RUN: ziggurat-tune %s --machine davinci --jobs 1 --top-k 2 --bufferings '' --no-stage -o %t.mlir 2>/dev/null
// RUN: ziggurat-opt %s -p graph-fuse -o %t.fused.mlir
// RUN: filecheck %s --check-prefix=FUSED < %t.fused.mlir
// RUN: ziggurat-tune %t.fused.mlir --machine davinci --jobs 1 --top-k 2 --bufferings '' --no-stage -o %t.from-fused.mlir 2>/dev/null
// RUN: diff %t.mlir %t.from-fused.mlir
// RUN: filecheck %s --check-prefix=TUNED < %t.from-fused.mlir

// FUSED: graph.fused "conv2d_relu"
// TUNED-NOT: graph.fused
// TUNED: graph.conv2d %{{.*}}, %w {{{.*}}tile.sizes = array<i64: {{.*}}>
// TUNED-NOT: graph.fused

func.func @main(%x: tensor<1x28x28x64xbf16>) -> tensor<1x28x28x64xbf16> {
  %w = graph.constant dense<0.01> : tensor<64x64x3x3xbf16>
  %t = graph.transpose %x {perm = array<i64: 0, 3, 1, 2>} : tensor<1x28x28x64xbf16> -> tensor<1x64x28x28xbf16>
  %c = graph.conv2d %t, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x64x28x28xbf16>, tensor<64x64x3x3xbf16>) -> tensor<1x64x28x28xbf16>
  %r = graph.relu %c : tensor<1x64x28x28xbf16>
  %o = graph.transpose %r {perm = array<i64: 0, 2, 3, 1>} : tensor<1x64x28x28xbf16> -> tensor<1x28x28x64xbf16>
  func.return %o : tensor<1x28x28x64xbf16>
}
