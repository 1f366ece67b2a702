// RUN: ziggurat-run %s | filecheck %s
// RUN: ziggurat-opt %s | filecheck %s --check-prefix=PRINTED

// make fuzz renamed the arguments of an npu kernel to %x_0 and %x_1 (valid names):
// xDSL keeps both as the name hint `x`, so ziggurat-run bound the inputs by the one
// name `x` and refused the kernel ("input 'x' has shape (8,), the argument is
// memref<4xf16, "gm">"). Argument names are unique, as the printer writes them.

// CHECK: x: memref<4xf16, "gm">
// CHECK: x_1: memref<8xf16, "gm">
// PRINTED: func.func @main(%x: memref<4xf16, "gm">, %x_1: memref<8xf16, "gm">)
builtin.module attributes {npu.machine = "davinci"} {
  func.func @main(%x_0: memref<4xf16, "gm">, %x_1: memref<8xf16, "gm">) {
    %b = npu.buffer offset 0 : memref<4xf16, "ub">
    npu.dma "mte2" %x_0[0] -> %b[0] {shape = array<i64: 4>} : memref<4xf16, "gm"> -> memref<4xf16, "ub">
    func.return
  }
}
