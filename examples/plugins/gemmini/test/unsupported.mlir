// What Gemmini cannot do is a located error, not a crash. The machine's vector unit lists
// add (so loop-to-npu selects npu.vec.add), but the gemm ALU applies relu and casts only.
// RUN: not ziggurat-opt %s -p lower-to-gemmini --split-input-file 2>&1 | filecheck %s --check-prefixes=CHECK,EXP

// CHECK: error: gemmini's ALU applies relu and casts only, not 'npu.vec.add'
func.func @main(%a: tensor<16x16xf32>, %b: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %s = graph.add %a, %b : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  func.return %s : tensor<16x16xf32>
}

// -----

// And what the machine itself lacks, ziggurat's own loop-to-npu reports from the machine file.
// EXP: error: linalg.generic: the vector unit 'alu' of machine 'gemmini' has no 'exp'
func.func @main(%a: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %e = graph.exp %a : tensor<16x16xf32>
  func.return %e : tensor<16x16xf32>
}
