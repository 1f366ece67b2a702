// RUN: not ziggurat-opt %s --split-input-file 2>&1 | filecheck %s
// A `"` inserted before the first op of a chunk (examples/resnet_block.mlir's `func.func`) fails
// while the parser reads its first token, before any op: the error is still a diagnostic at its
// line in the whole file, with the line quoted.

// -----

// CHECK: unterminated-string-first-token.mlir:[[# @LINE + 3]]:1: error: End of file reached before closing string literal.
// CHECK-NEXT: {{^}}"func.func @f() {
// CHECK-NEXT: {{^}}^
"func.func @f() {
  func.return
}
