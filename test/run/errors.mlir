// Failures are diagnostics at the op or function they concern, with exit code 1.
// RUN: not ziggurat-run %s --function unimplemented 2>&1 | filecheck %s --check-prefix=NO-IMPL
// RUN: python -c "import numpy as np; np.savez('%t.npz', x=np.zeros((3, 2), dtype=np.float32))"
// RUN: not ziggurat-run %s --function relu --inputs %t.npz 2>&1 | filecheck %s --check-prefix=SHAPE
// RUN: not ziggurat-run %s 2>&1 | filecheck %s --check-prefix=AMBIGUOUS

// test.op (xDSL's test dialect) parses, but no level gives it semantics.
// NO-IMPL: errors.mlir:[[# @LINE + 6]]:3: error: no interpreter implementation for 'test.op'
// NO-IMPL-NEXT: %y = "test.op"(%x) : (tensor<4xf32>) -> tensor<4xf32>
// NO-IMPL-NEXT: ^
// NO-IMPL-NOT: Traceback

func.func @unimplemented(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = "test.op"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// SHAPE: errors.mlir:[[# @LINE + 1]]:1: error: input for argument #0 'x' of @relu has shape [3, 2], but the argument is tensor<2x3xf32>
func.func @relu(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = graph.relu %x : tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// AMBIGUOUS: error: cannot choose the function to run: there is no @main and 2 public functions (functions: @unimplemented, @relu); name one
