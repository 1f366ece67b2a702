// A masked fill (ONNX Where with a constant branch, as a causal attention mask): the constant is a
// buffer `npu.vec.dup` fills, which `npu.vec.select` reads; run against the graph interpreter.
// RUN: ziggurat-run %s --seed 4 --outputs %t.graph.npz
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=davinci}' -o %t.npu.mlir
// RUN: filecheck %s --input-file %t.npu.mlir
// RUN: ziggurat-run %t.npu.mlir --seed 4 --expect %t.graph.npz --rtol 0 --atol 0

func.func @main(%mask: tensor<32x64xi1>, %x: tensor<32x64xf16>) -> tensor<32x64xf16> {
  %fill = graph.constant dense<-1.0e4> : tensor<f16>
  %y = graph.where %mask, %fill, %x : (tensor<32x64xi1>, tensor<f16>, tensor<32x64xf16>) -> tensor<32x64xf16>
  func.return %y : tensor<32x64xf16>
}

// CHECK:      npu.vec.dup %[[FILL:[0-9]+]][0, 0] {scalar = -1.000000e+04 : f64, repeat = 16 : i64} : memref<32x64xf16, "ub">
// CHECK:      npu.vec.select %{{[0-9]+}}[0, 0], %[[FILL]][0, 0], %{{[0-9]+}}[0, 0] -> %{{[0-9]+}}[0, 0] {repeat = 16 : i64} : memref<32x64xi1, "ub">
