// RUN: ziggurat-opt %s --verify-diagnostics -p 'lower-to-npu{machine=davinci}'

// A softmax row must stay whole in one tile, and a row of 131072 f32 (512 KiB) does not fit
// davinci's 256 KiB 'ub': the group has no smaller tile to retry with, and the error says so.
func.func @main(%x: tensor<2x131072xf32>) -> tensor<2x131072xf32> {
  // expected-error@+1 {{does not fit 'ub' (262144 bytes) on machine 'davinci'; this is the smallest legal tile of group 'softmax_0' (tile.sizes = [1, 131072])}}
  %y = graph.softmax %x : tensor<2x131072xf32>
  func.return %y : tensor<2x131072xf32>
}
