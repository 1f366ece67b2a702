// loop-distribute divides loop-level tile loops; a module above that level (tensors, no memref
// arguments) is left as it is and not marked npu.cores, so a one-core lowering of it after the
// pass stays a one-core program.
// RUN: ziggurat-opt %s -p 'loop-distribute{cores=4}' | filecheck %s

// CHECK:       builtin.module {
// CHECK-NOT:   npu.cores
// CHECK-LABEL: func.func @graph_level
// CHECK-NEXT:    graph.relu
func.func @graph_level(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.relu %x : tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
