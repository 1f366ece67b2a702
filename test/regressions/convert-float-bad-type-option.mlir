// RUN: not ziggurat-opt %s -p 'graph-convert-float{source=NCHW}' 2>&1 | filecheck %s
// The pipeline fuzzer, drawing option values for the newly registered graph-convert-float,
// found a bad type name reported as "internal error, please report: ValueError: 'NCHW' is
// not a float type". It is a diagnostic about the command line.

// CHECK: error: graph-convert-float: 'NCHW' is not a float type
// CHECK-NOT: internal error
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}
