// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=tensorcore}' | filecheck %s

// A 1x1 conv over 1024 channels with its bias and relu, in bf16 on tensorcore: the tile-size
// rules pick 7 output rows x 64 channels, whose f32 accumulators, epilogue buffers and bf16
// copies npu-plan-memory cannot place in 'rf' beside the double-buffered operand tiles. The
// pipeline retries the group with the next smaller candidate of the tuner's (6 rows), which fits.
// CHECK-LABEL: func.func @main(
// CHECK-NOT:     memref<1x64x7x14xf32, "rf">
// CHECK:         npu.buffer offset {{[0-9]+}} : memref<1x64x6x14xf32, "rf">
// CHECK-NOT:     memref<1x64x7x14xf32, "rf">
// CHECK:         func.return
func.func @main(%x: tensor<1x1024x14x14xbf16>, %w: tensor<256x1024x1x1xbf16>, %b: tensor<256xbf16>) -> tensor<1x256x14x14xbf16> {
  %y = graph.conv2d %x, %w, %b : (tensor<1x1024x14x14xbf16>, tensor<256x1024x1x1xbf16>, tensor<256xbf16>) -> tensor<1x256x14x14xbf16>
  %r = graph.relu %y : tensor<1x256x14x14xbf16>
  func.return %r : tensor<1x256x14x14xbf16>
}
