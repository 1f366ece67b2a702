// RUN: ziggurat-opt %s -p 'graph-convert-float{target=bf16}' -o %t.bf16.mlir
// RUN: ziggurat-run %t.bf16.mlir --outputs %t.graph.npz
// RUN: ziggurat-opt %t.bf16.mlir -p 'graph-opt,lower-to-npu{machine=davinci}' | ziggurat-run - --machine davinci --expect %t.graph.npz | filecheck %s
// A transpose between two ub buffers (no engine copies ub -> ub on davinci) followed by a multiply
// that tile-to-loop bufferized in place (it reads and writes the transpose's result). loop-to-npu
// folded the transpose into a transposed view for the readers of its result, missed that the
// in-place multiply reads it, and erased the transpose: the multiply read an unwritten buffer and
// every output was 0. The transpose now stays (through global memory) and the outputs match the
// same bf16 graph on the graph interpreter.
// CHECK: result0: {{.*}}  ok{{$}}
func.func @main(%x: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
  %t = graph.transpose %x {perm = array<i64: 0, 3, 1, 2>} : tensor<1x8x8x8xf32> -> tensor<1x8x8x8xf32>
  %c = graph.constant dense<[[[1.0]], [[2.0]], [[3.0]], [[4.0]], [[5.0]], [[6.0]], [[7.0]], [[8.0]]]> : tensor<8x1x1xf32>
  %y = graph.mul %t, %c : (tensor<1x8x8x8xf32>, tensor<8x1x1xf32>) -> tensor<1x8x8x8xf32>
  func.return %y : tensor<1x8x8x8xf32>
}
