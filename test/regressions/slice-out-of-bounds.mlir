// RUN: not ziggurat-run %s --function insert 2>&1 | filecheck %s --check-prefix=INSERT
// RUN: not ziggurat-run %s --function extract 2>&1 | filecheck %s --check-prefix=EXTRACT
// The pipeline fuzzer's seeds gained test/loop/tile-to-loop.mlir's @splat_weights, whose tile
// loop steps by 16 to 1000: the last insert_slice reached past the end and the tensor
// interpreter failed with numpy's "cannot reshape array of size 64 into shape (4,8)", an
// internal error. A slice outside its tensor is a diagnostic at the slice.

// INSERT: slice-out-of-bounds.mlir:[[# @LINE + 7]]:5: error: tensor.insert_slice reaches outside its tensor: dim 1 has 1000 elements, the slice takes 16 from offset 992 with stride 1
func.func @insert(%x: tensor<4x1000xf32>) -> tensor<4x1000xf32> {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c1000 = arith.constant 1000 : index
  %r = scf.for %i = %c0 to %c1000 step %c16 iter_args(%acc = %x) -> (tensor<4x1000xf32>) {
    %e = tensor.empty() : tensor<4x16xf32>
    %u = tensor.insert_slice %e into %acc[0, %i] [4, 16] [1, 1] : tensor<4x16xf32> into tensor<4x1000xf32>
    scf.yield %u : tensor<4x1000xf32>
  }
  func.return %r : tensor<4x1000xf32>
}

// EXTRACT: slice-out-of-bounds.mlir:[[# @LINE + 3]]:3: error: tensor.extract_slice reaches outside its tensor: dim 0 has 8 elements, the slice takes 3 from offset 4 with stride 2
func.func @extract(%x: tensor<8xf32>) -> tensor<3xf32> {
  %c4 = arith.constant 4 : index
  %s = tensor.extract_slice %x[%c4] [3] [2] : tensor<8xf32> to tensor<3xf32>
  func.return %s : tensor<3xf32>
}
