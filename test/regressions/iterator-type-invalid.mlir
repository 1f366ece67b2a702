// RUN: not ziggurat-opt %s 2>&1 | filecheck %s
// The fuzzer (ir category, a character of test/tile/decompose-conv.mlir flipped) found xDSL's
// linalg.generic parser converting an iterator type name unchecked: "internal error, please
// report: ValueError: 'par5llel' is not a valid IteratorType". It is a parse error at the op.

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: iterator-type-invalid.mlir:[[# @LINE + 2]]:3: error: invalid value in this op: 'par5llel' is not a valid IteratorType
  // CHECK-NOT: internal error
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["par5llel"]} ins(%x : tensor<4xf32>) outs(%x : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
