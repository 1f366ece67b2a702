// RUN: not ziggurat-opt %s 2>&1 | filecheck %s
// The fuzzer (ir category, a number of test/tile/pack-invalid.mlir set to 2^63) found xDSL
// packing an array<i64: ...> value without a range check: "internal error, please report:
// error: argument out of range" (struct.error). It is a parse error at the op.

func.func @f(%p: tensor<2x2x16x16xf16>, %e: tensor<32x32xf16>) -> tensor<32x32xf16> {
  // CHECK: array-value-out-of-range.mlir:[[# @LINE + 3]]:3: error: a value of this op is out of range for its type
  // CHECK-NOT: internal error
  // CHECK-NOT: Traceback
  %u = tile.unpack %p inner_dims_pos = [0, 1] inner_tiles = [16, 9223372036854775808] into %e : tensor<2x2x16x16xf16> -> tensor<32x32xf16>
  func.return %u : tensor<32x32xf16>
}
