// RUN: not ziggurat-run %s 2>&1 | filecheck %s
// RUN: not ziggurat-run %s --function main 2>&1 | filecheck %s --check-prefix=NAMED

// A file with no function (here: only comments, as a truncated file may be)
// gave "error: cannot choose the function to run" without naming the file:
// the implicit module had no location. It starts where the text does.

// CHECK: empty-module-location.mlir:1:1: error: cannot choose the function to run: there is no @main and 0 public functions
// NAMED: empty-module-location.mlir:1:1: error: no function @main in the module (functions: none)
