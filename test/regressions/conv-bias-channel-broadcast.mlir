// A conv plus a per-channel bias argument tensor<1xCx1x1>, lowered to the npu of
// each machine, computes what the graph does (the bias DMA used to run past its
// ub buffer: loop-to-npu dropped the wrong unit dims of its rank-reduced view).
// RUN: ziggurat-run %s --seed 3 --outputs %t.expected.npz
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=davinci}' | ziggurat-run - --seed 3 --expect %t.expected.npz --rtol 1e-2 --atol 1e-2
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=tensorcore}' | ziggurat-run - --seed 3 --expect %t.expected.npz --rtol 1e-2 --atol 1e-2
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=systolic}' | ziggurat-run - --seed 3 --expect %t.expected.npz --rtol 1e-2 --atol 1e-2
func.func @main(%x: tensor<1x64x8x8xf16>, %w: tensor<64x64x3x3xf16>, %b: tensor<1x64x1x1xf16>) -> tensor<1x64x8x8xf16> {
  %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x64x8x8xf16>, tensor<64x64x3x3xf16>) -> tensor<1x64x8x8xf16>
  %z = graph.add %y, %b : (tensor<1x64x8x8xf16>, tensor<1x64x1x1xf16>) -> tensor<1x64x8x8xf16>
  func.return %z : tensor<1x64x8x8xf16>
}
