// Single-head attention, seq 512, d 64, on systolic: the softmax scale (a 0-d splat
// constant) is a scalar, `npu.vec.muls`, not a 2-byte buffer staged from dram. With
// that buffer npu-plan-memory overflowed ofmap by 2 bytes (the tiles fill all 65536).
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=systolic}' -o %t.npu.mlir
// RUN: filecheck %s --input-file %t.npu.mlir
// RUN: ziggurat-run %s --seed 3 --outputs %t.expected.npz
// RUN: ziggurat-run %t.npu.mlir --seed 3 --expect %t.expected.npz

// CHECK-NOT:   memref<f16,
// CHECK:       npu.vec.muls {{.*}} {scalar = 1.250000e-01 : f64
// CHECK-NOT:   memref<f16,

func.func @main(%q: tensor<512x64xf16>, %k: tensor<512x64xf16>, %v: tensor<512x64xf16>) -> tensor<512x64xf16> {
  %kt = graph.transpose %k {perm = array<i64: 1, 0>} : tensor<512x64xf16> -> tensor<64x512xf16>
  %s = graph.matmul %q, %kt : (tensor<512x64xf16>, tensor<64x512xf16>) -> tensor<512x512xf16>
  %scale = graph.constant dense<0.125> : tensor<f16>
  %t = graph.mul %s, %scale : (tensor<512x512xf16>, tensor<f16>) -> tensor<512x512xf16>
  %p = graph.softmax %t : tensor<512x512xf16>
  %o = graph.matmul %p, %v : (tensor<512x512xf16>, tensor<512x64xf16>) -> tensor<512x64xf16>
  func.return %o : tensor<512x64xf16>
}
