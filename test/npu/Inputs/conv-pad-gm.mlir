// A padded 3x3 convolution and relu: on tensorcore its padded input tiles stay in global memory.
func.func @main(%x: tensor<1x32x28x28xf16>, %w: tensor<64x32x3x3xf16>) -> tensor<1x64x28x28xf16> {
  %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x28x28xf16>, tensor<64x32x3x3xf16>) -> tensor<1x64x28x28xf16>
  %r = graph.relu %y : tensor<1x64x28x28xf16>
  func.return %r : tensor<1x64x28x28xf16>
}
