// A matmul + relu from the graph level to the plugin's gemm commands, through ziggurat's own
// lowering (lower-to-npu for the gemmini machine) and the plugin's npu-to-gemm; it runs on
// ziggurat's machine model with the plugin's semantics and matches the graph interpreter.
// RUN: ziggurat-run %s --save-inputs %t.in.npz --outputs %t.ref.npz
// RUN: ziggurat-opt %s -p lower-to-gemmini -o %t.gemm.mlir
// RUN: filecheck %s --input-file %t.gemm.mlir --check-prefix=GEMM
// RUN: ziggurat-run %t.gemm.mlir --machine gemmini --inputs %t.in.npz --expect %t.ref.npz --report text | filecheck %s --check-prefix=REPORT
// RUN: ziggurat-opt %s --print-pipeline -p lower-to-gemmini | filecheck %s --check-prefix=PIPELINE

// GEMM-NOT: npu.dma
// GEMM-NOT: npu.mma
// GEMM:     gemm.load
// GEMM:     gemm.compute
// GEMM:     gemm.alu "relu"
// GEMM:     gemm.store {{.*}} -> %result0

// REPORT:      result0: float16[64, 16]  max abs error {{.*}}  ok
// REPORT:      machine gemmini
// REPORT:      throughput {{.*}} FLOP
// REPORT-DAG:  ex {{.*}}
// REPORT-DAG:  alu {{.*}}

// PIPELINE: loop-to-npu{machine="gemmini"},npu-to-gemm,npu-hoist-invariant{machine="gemmini"},npu-plan-memory{machine="gemmini"},npu-insert-sync{machine="gemmini"}

func.func @main(%a: tensor<64x32xf16>, %b: tensor<32x16xf16>) -> tensor<64x16xf16> {
  %c = graph.matmul %a, %b : (tensor<64x32xf16>, tensor<32x16xf16>) -> tensor<64x16xf16>
  %r = graph.relu %c : tensor<64x16xf16>
  func.return %r : tensor<64x16xf16>
}
