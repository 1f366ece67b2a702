// An embedding lookup (ONNX Gather of whole rows, then a position embedding added, as GPT's and
// BERT's inputs) lowered to npu on davinci and tensorcore and run against the graph interpreter,
// exactly: each index is read by the scalar unit (`npu.load`), wrapped when negative, and names
// the row one DMA copies. The seed's i64 inputs lie in [-8, 8), negative ones included.
// RUN: ziggurat-run %s --seed 1 --outputs %t.graph.npz
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=davinci}' -o %t.davinci.mlir
// RUN: filecheck %s --check-prefix=DAVINCI --input-file %t.davinci.mlir
// RUN: ziggurat-run %t.davinci.mlir --seed 1 --expect %t.graph.npz --rtol 0 --atol 0
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=tensorcore}' -o %t.tensorcore.mlir
// RUN: filecheck %s --check-prefix=TENSORCORE --input-file %t.tensorcore.mlir
// RUN: ziggurat-run %t.tensorcore.mlir --seed 1 --expect %t.graph.npz --rtol 0 --atol 0

func.func @main(%table: tensor<16x64xf16>, %ids: tensor<2x5xi64>, %pos: tensor<5x64xf16>) -> tensor<2x5x64xf16> {
  %g = graph.gather %table, %ids {axis = 0 : i64} : (tensor<16x64xf16>, tensor<2x5xi64>) -> tensor<2x5x64xf16>
  %y = graph.add %g, %pos : (tensor<2x5x64xf16>, tensor<5x64xf16>) -> tensor<2x5x64xf16>
  func.return %y : tensor<2x5x64xf16>
}

// The indices reach ub (mte2); the scalar unit waits for them, then per index: a load, the
// wrap of a negative index (index + 16 where index < 0), and one 64-element row from gm to ub.
// DAVINCI:      npu.dma "mte2" %ids[0, 0] -> %[[IDS:.*]][0, 0] {shape = array<i64: 2, 5>}
// DAVINCI:      npu.set_flag "mte2" -> "scalar"
// DAVINCI-DAG:  %[[V:.*]] = arith.constant 16 : index
// DAVINCI-DAG:  %[[ZERO:.*]] = arith.constant 0 : index
// DAVINCI:      npu.wait_flag "mte2" -> "scalar"
// DAVINCI:      scf.for %[[B:.*]] = {{.*}} {
// DAVINCI:        scf.for %[[S:.*]] = {{.*}} {
// DAVINCI-NEXT:     %[[I:.*]] = npu.load %[[IDS]][%[[B]], %[[S]]] : memref<2x5xi64, "ub"> -> i64
// DAVINCI-NEXT:     %[[X:.*]] = arith.index_cast %[[I]] : i64 to index
// DAVINCI-NEXT:     %[[NEG:.*]] = arith.cmpi slt, %[[X]], %[[ZERO]] : index
// DAVINCI-NEXT:     %[[UP:.*]] = arith.addi %[[X]], %[[V]] : index
// DAVINCI-NEXT:     %[[ROW:.*]] = arith.select %[[NEG]], %[[UP]], %[[X]] : index
// DAVINCI-NEXT:     npu.dma "mte2" %table[%[[ROW]], 0] -> %{{.*}}[%[[B]], %[[S]], 0] {shape = array<i64: 64>} : memref<16x64xf16, "gm"> -> memref<2x5x64xf16, "ub">
// DAVINCI-NEXT:   }
// DAVINCI-NEXT: }
// DAVINCI:      npu.vec.add

// tensorcore's gm reaches rf only through smem: the rows gather into smem, then move to rf whole.
// TENSORCORE:      %[[STAGE:.*]] = npu.buffer offset {{[0-9]+}} : memref<2x5x64xf16, "smem">
// TENSORCORE:      %[[ROWS:.*]] = npu.buffer offset {{[0-9]+}} : memref<2x5x64xf16, "rf">
// TENSORCORE:      npu.wait_flag "ldmatrix" -> "scalar"
// TENSORCORE:      npu.load %{{.*}} : memref<2x5xi64, "rf"> -> i64
// TENSORCORE:      npu.dma "cp_async" %table[%{{.*}}, 0] -> %[[STAGE]][%{{.*}}, %{{.*}}, 0] {shape = array<i64: 64>}
// TENSORCORE:      npu.set_flag "cp_async" -> "ldmatrix"
// TENSORCORE:      npu.wait_flag "cp_async" -> "ldmatrix"
// TENSORCORE-NEXT: npu.dma "ldmatrix" %[[STAGE]][0, 0, 0] -> %[[ROWS]][0, 0, 0]
// TENSORCORE:      npu.vec.add %[[ROWS]]
