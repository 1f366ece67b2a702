// A 3x3 convolution + relu from the graph level to the plugin's gemm commands: ziggurat's
// lowering makes it one matmul per window position on strided views of the input (mvin's
// main-memory row stride), the plugin maps the instructions; numbers match the graph level.
// RUN: ziggurat-run %s --save-inputs %t.in.npz --outputs %t.ref.npz
// RUN: ziggurat-opt %s -p lower-to-gemmini -o %t.gemm.mlir
// RUN: filecheck %s --input-file %t.gemm.mlir --check-prefix=GEMM
// RUN: ziggurat-run %t.gemm.mlir --machine gemmini --inputs %t.in.npz --expect %t.ref.npz --report text | filecheck %s --check-prefix=REPORT

// GEMM-NOT: npu.dma
// GEMM:     gemm.load %x{{.*}}dst_strides = array<i64: 16, 1>
// GEMM:     gemm.load %w{{.*}}src_strides = array<i64: 144, 9>
// GEMM:     gemm.compute
// GEMM:     gemm.alu "relu"
// GEMM:     gemm.store {{.*}} -> %result0

// REPORT:   result0: float16[1, 16, 16, 16]  max abs error {{.*}}  ok
// REPORT:   machine gemmini
// REPORT:   ex {{.*}}

func.func @main(%x: tensor<1x16x18x18xf16>, %w: tensor<16x16x3x3xf16>) -> tensor<1x16x16x16xf16> {
  %c = graph.conv2d %x, %w : (tensor<1x16x18x18xf16>, tensor<16x16x3x3xf16>) -> tensor<1x16x16x16xf16>
  %r = graph.relu %c : tensor<1x16x16x16xf16>
  func.return %r : tensor<1x16x16x16xf16>
}
