// ResNet-50's stage-3 3x3 conv on tensorcore, where the tile sizes fill most of smem: its
// window points' weight tiles (changing with each input-channel step) take two staging
// buffers in turn, not one each, which together with the peeled row tiles' inputs would
// not fit smem's 164 KiB. It lowers, fits, and matches the graph interpreter.
// RUN: ziggurat-run %s --outputs %t.graph.npz
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=tensorcore}' | ziggurat-run - --machine tensorcore --expect %t.graph.npz | filecheck %s
// CHECK: result0: {{.*}}  ok{{$}}
func.func @main(%x: tensor<1x256x14x14xf16>, %w: tensor<256x256x3x3xf16>) -> tensor<1x256x14x14xf16> {
  %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x256x14x14xf16>, tensor<256x256x3x3xf16>) -> tensor<1x256x14x14xf16>
  %r = graph.relu %y : tensor<1x256x14x14xf16>
  func.return %r : tensor<1x256x14x14xf16>
}
