// RUN: rm -f %t.out && ziggurat-opt %s -p cse -o %t.out && filecheck %s < %t.out
//
// A failed run writes nothing: no partial or empty file (even though the first
// chunk of the input succeeds) ...
// RUN: rm -f %t.failed && not ziggurat-opt %S/Inputs/invalid.mlir --split-input-file -o %t.failed
// RUN: not test -e %t.failed
//
// ... and leaves an existing file as it was.
// RUN: echo "previous contents" > %t.kept
// RUN: not ziggurat-opt %S/Inputs/invalid.mlir --split-input-file -o %t.kept
// RUN: filecheck %s --check-prefix KEPT < %t.kept
//
// A successful run replaces it.
// RUN: ziggurat-opt %s -o %t.kept && filecheck %s < %t.kept

func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = graph.relu %a : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// CHECK:      func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
// CHECK-NEXT:   %0 = graph.relu %a : tensor<2xf32>
// KEPT:       {{^}}previous contents{{$}}
// KEPT-NOT:   builtin.module
