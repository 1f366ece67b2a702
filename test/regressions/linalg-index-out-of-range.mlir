// RUN: ziggurat-opt %s --verify-diagnostics
// RUN: not ziggurat-run %s 2>&1 | filecheck %s
// The fuzzer (ir category, test/tile/vectorize.mlir's `linalg.index 0` set to 2^31) found
// ziggurat-run failing with "internal error, please report: IndexError": xDSL's linalg.index
// has no verifier. MLIR's checks the dim against the enclosing op's loops; so does ours.

// CHECK: linalg-index-out-of-range.mlir:[[# @LINE + 6]]:5: error: 'linalg.index' op expected dim (2147483648) to be lower than the number of loops (1) of the enclosing LinalgOp
// CHECK-NOT: internal error
func.func @f(%e: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]} outs(%e : tensor<4xf32>) {
  ^bb0(%o: f32):
    // expected-error@+1 {{'linalg.index' op expected dim (2147483648) to be lower than the number of loops (1) of the enclosing LinalgOp}}
    %i = linalg.index 2147483648 : index
    %c = arith.index_cast %i : index to i64
    %f = arith.sitofp %c : i64 to f32
    linalg.yield %f : f32
  } -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
