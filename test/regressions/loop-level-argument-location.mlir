// RUN: not ziggurat-run %s 2>&1 | filecheck %s
// The fuzzer (ir category, lines of test/loop/double-buffer-stays.mlir swapped) found
// ziggurat-run reporting an argument the interpreter cannot draw, at the loop level, with
// no location ("error: argument #1 ... has type index"): the inputs were drawn from a
// detached copy of the signature. The error is at the function.

// CHECK: loop-level-argument-location.mlir:[[# @LINE + 1]]:1: error: argument #1 {{.*}} has type index, which the interpreter cannot hold as a numpy array
func.func @main(%x: memref<4xf32, "gm">, %n: index, %result0: memref<4xf32, "gm">) {
  loop.copy %x -> %result0 : memref<4xf32, "gm"> -> memref<4xf32, "gm">
  func.return
}
