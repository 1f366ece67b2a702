// RUN: ziggurat-opt %s -p 'graph-convert-float{target=bf16}' -o %t.bf16.mlir
// RUN: ziggurat-run %t.bf16.mlir --outputs %t.graph.npz
// RUN: ziggurat-opt %t.bf16.mlir -p 'graph-opt,lower-to-npu{machine=tensorcore}' | ziggurat-run - --machine tensorcore --expect %t.graph.npz | filecheck %s
// RUN: ziggurat-opt %t.bf16.mlir -p 'graph-opt,lower-to-npu{machine=davinci}' | ziggurat-run - --machine davinci --expect %t.graph.npz | filecheck %s
// A conv of 16 to 8 channels on a 1x1 map (a squeeze-excitation fc), then the mean over that map
// (ShuffleNetV2's last pool). On tensorcore, mma's n = 8 pads the map's one point to 8 columns of
// the accumulator, and loop-to-npu refused the bias add and the cast that read its valid column
// (8 channels, 8 elements apart) as "not contiguous in its innermost dimension"; they now walk the
// column one element per repetition. On both machines the mean's sum over rows of one element read
// the channels, their unit dimension dropped, as one row and summed them into one output: each
// element is now its own sum. The outputs match the same bf16 graph on the graph interpreter.
// CHECK: result0: {{.*}}  ok{{$}}
func.func @main(%x: tensor<1x16x1x1xf32>) -> tensor<1x8xf32> {
  %w = graph.constant dense<[[[[0.1]], [[-0.1]], [[0.6]], [[0.1]], [[-0.5]], [[0.4]], [[1.3]], [[0.9]], [[-0.7]], [[-1.3]], [[-0.6]], [[0.0]], [[-2.3]], [[-0.2]], [[-1.2]], [[-0.7]]], [[[-0.5]], [[-0.3]], [[0.4]], [[1.0]], [[-0.1]], [[1.4]], [[-0.7]], [[0.4]], [[0.9]], [[0.1]], [[-0.7]], [[-0.9]], [[-0.5]], [[0.2]], [[-1.0]], [[-0.2]]], [[[-0.2]], [[0.5]], [[0.2]], [[0.4]], [[-0.7]], [[-0.1]], [[0.8]], [[1.5]], [[-1.3]], [[1.5]], [[1.3]], [[0.8]], [[0.3]], [[-0.3]], [[1.5]], [[2.0]]], [[[1.8]], [[1.3]], [[0.4]], [[-1.2]], [[-0.0]], [[0.7]], [[-1.3]], [[0.4]], [[0.4]], [[0.7]], [[-1.2]], [[-0.7]], [[-0.4]], [[-1.2]], [[1.7]], [[-0.5]]], [[[0.3]], [[-0.3]], [[1.6]], [[1.3]], [[0.6]], [[-2.2]], [[0.1]], [[0.7]], [[1.0]], [[-0.6]], [[1.8]], [[-1.3]], [[-0.7]], [[0.9]], [[0.0]], [[2.0]]], [[[0.2]], [[-0.6]], [[-0.4]], [[-1.1]], [[-1.3]], [[0.6]], [[0.6]], [[1.3]], [[-0.8]], [[1.7]], [[-0.3]], [[1.6]], [[-0.4]], [[-0.7]], [[0.2]], [[1.0]]], [[[0.2]], [[-0.6]], [[-1.3]], [[-1.4]], [[0.5]], [[1.0]], [[-0.2]], [[-1.1]], [[0.9]], [[-1.3]], [[-0.7]], [[0.6]], [[-2.3]], [[0.4]], [[-0.6]], [[0.1]]], [[[-0.1]], [[0.2]], [[0.7]], [[-0.8]], [[1.4]], [[0.7]], [[0.8]], [[1.2]], [[0.8]], [[0.8]], [[0.1]], [[-1.4]], [[-0.1]], [[-0.8]], [[-1.4]], [[0.3]]]]> : tensor<8x16x1x1xf32>
  %b = graph.constant dense<[-0.6, -1.0, -1.0, 0.3, 0.4, 1.3, -0.0, 1.0]> : tensor<8xf32>
  %c = graph.conv2d %x, %w, %b : (tensor<1x16x1x1xf32>, tensor<8x16x1x1xf32>, tensor<8xf32>) -> tensor<1x8x1x1xf32>
  %y = graph.reduce_mean %c {keepdims = false, axes = array<i64: 2, 3>} : tensor<1x8x1x1xf32> -> tensor<1x8xf32>
  func.return %y : tensor<1x8xf32>
}
