// RUN: not ziggurat-run %s --function insert 2>&1 | filecheck %s --check-prefix=INSERT
// RUN: not ziggurat-run %s --function extract 2>&1 | filecheck %s --check-prefix=EXTRACT
// make fuzz mutated a size of test/loop/tile-to-loop-concat-overlap.mlir's insert_slice to
// 0: the slice (0x4) no longer held the inserted 4x4 tensor, which xDSL's verifier lets
// through, and the tensor interpreter failed with numpy's "cannot reshape array of size 16
// into shape (0,4)", an internal error. It is a diagnostic at the slice.

// INSERT: slice-shape-mismatch.mlir:[[# @LINE + 2]]:3: error: tensor.insert_slice inserts (4, 4) into a slice of (0, 4)
func.func @insert(%x: tensor<4x4xi32>, %d: tensor<6x4xi32>) -> tensor<6x4xi32> {
  %r = tensor.insert_slice %x into %d[2, 0] [0, 4] [1, 1] : tensor<4x4xi32> into tensor<6x4xi32>
  func.return %r : tensor<6x4xi32>
}

// EXTRACT: slice-shape-mismatch.mlir:[[# @LINE + 2]]:3: error: tensor.extract_slice takes a slice of (0, 4) as (4, 4)
func.func @extract(%d: tensor<6x4xi32>) -> tensor<4x4xi32> {
  %r = tensor.extract_slice %d[2, 0] [0, 4] [1, 1] : tensor<6x4xi32> to tensor<4x4xi32>
  func.return %r : tensor<4x4xi32>
}
