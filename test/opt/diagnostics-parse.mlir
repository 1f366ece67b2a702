// RUN: not ziggurat-opt %s --split-input-file 2>&1 | filecheck %s --strict-whitespace

// Each chunk fails on its own, the others still run, and line numbers are
// those of this whole file. The caret sits under the offending token.

func.func @unknown_op(%a: tensor<2xf32>) -> tensor<2xf32> {
// CHECK:{{^}}{{.*}}diagnostics-parse.mlir:[[# @LINE + 3]]:8: error: unknown operation 'graph.reluu' in dialect 'graph'; did you mean 'graph.relu'?{{$}}
// CHECK-NEXT:{{^}}  %0 = graph.reluu %a : tensor<2xf32>{{$}}
// CHECK-NEXT:{{^}}       ^{{$}}
  %0 = graph.reluu %a : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @unknown_dialect(%a: tensor<2xf32>) -> tensor<2xf32> {
// CHECK:{{^}}{{.*}}diagnostics-parse.mlir:[[# @LINE + 3]]:8: error: unknown dialect 'grahp' (in operation 'grahp.relu'); did you mean 'graph'?{{$}}
// CHECK-NEXT:{{^}}  %0 = grahp.relu %a : tensor<2xf32>{{$}}
// CHECK-NEXT:{{^}}       ^{{$}}
  %0 = grahp.relu %a : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @generic_unknown_op(%a: tensor<2xf32>) -> tensor<2xf32> {
// CHECK:{{^}}{{.*}}diagnostics-parse.mlir:[[# @LINE + 3]]:9: error: unknown dialect 'nosuch' (in operation 'nosuch.op'){{$}}
// CHECK-NEXT:{{^}}  %0 = "nosuch.op"(%a) : (tensor<2xf32>) -> tensor<2xf32>{{$}}
// CHECK-NEXT:{{^}}        ^{{$}}
  %0 = "nosuch.op"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @missing_colon(%a: tensor<2xf32>) -> tensor<2xf32> {
// CHECK:{{^}}{{.*}}diagnostics-parse.mlir:[[# @LINE + 3]]:22: error: Expected ':'{{$}}
// CHECK-NEXT:{{^}}  %0 = graph.relu %a tensor<2xf32>{{$}}
// CHECK-NEXT:{{^}}                     ^{{$}}
  %0 = graph.relu %a tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @undefined_value(%a: tensor<2xf32>) -> tensor<2xf32> {
// CHECK:{{^}}{{.*}}diagnostics-parse.mlir:[[# @LINE + 3]]:19: error: use of undefined value '%b'{{$}}
// CHECK-NEXT:{{^}}  %0 = graph.relu %b : tensor<2xf32>{{$}}
// CHECK-NEXT:{{^}}                  ^{{$}}
  %0 = graph.relu %b : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @block_redefined() {
// CHECK:{{^}}{{.*}}diagnostics-parse.mlir:[[# @LINE + 6]]:1: error: re-declaration of block 'bb0'{{$}}
// CHECK-NEXT:{{^}}^bb0:{{$}}
// CHECK-NEXT:{{^}}^{{$}}
// CHECK-NEXT:{{^}}{{.*}}diagnostics-parse.mlir:[[# @LINE + 1]]:1: note: originally declared here{{$}}
^bb0:
  cf.br ^bb0
^bb0:
  func.return
}

// -----

// A chunk with no ops is an empty module. A section banner such as the next
// line is not a chunk separator (xDSL splits on the substring):
// ----------------------------------------------------------------------- //

// -----

func.func @still_printed(%a: tensor<2xf32>) -> tensor<2xf32> {
  func.return %a : tensor<2xf32>
}
// CHECK:      builtin.module {
// CHECK-NEXT: }
// CHECK-EMPTY:
// CHECK-NEXT: // -----
// CHECK-NEXT: builtin.module {
// CHECK-NEXT:   func.func @still_printed

// -----

// A dense literal whose elements do not fill its type: xDSL notices once it has
// read the type and reported it at the next op; the error is at the literal.
func.func @dense_shape_mismatch() -> tensor<2x2xf32> {
// CHECK:{{^}}{{.*}}diagnostics-parse.mlir:[[# @LINE + 3]]:28: error: Shape mismatch in dense literal. Expected [2, 2] shape from the type, but got [3] shape.{{$}}
// CHECK-NEXT:{{^}}  %0 = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<2x2xf32>{{$}}
// CHECK-NEXT:{{^}}                           ^{{$}}
  %0 = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<2x2xf32>
  %1 = graph.constant dense<[1.0]> : tensor<1xf32>
  func.return %0 : tensor<2x2xf32>
}

// -----

func.func @dense_hex_too_short() -> tensor<2x2xf32> {
// CHECK:{{^}}{{.*}}diagnostics-parse.mlir:[[# @LINE + 3]]:28: error: Shape mismatch in dense literal. Expected 4 elements from the type, but got 2 elements.{{$}}
// CHECK-NEXT:{{^}}  %0 = graph.constant dense<"0x0000803F00000040"> : tensor<2x2xf32>{{$}}
// CHECK-NEXT:{{^}}                           ^{{$}}
  %0 = graph.constant dense<"0x0000803F00000040"> : tensor<2x2xf32>
  func.return %0 : tensor<2x2xf32>
}
