// RUN: not ziggurat-opt %s -p 'loop-distribute{machine=davinci cores=33}' 2>&1 | filecheck %s
// RUN: not ziggurat-opt %s -p 'loop-distribute{cores=0}' 2>&1 | filecheck %s --check-prefix=ZERO
// RUN: not ziggurat-opt %s -p 'lower-to-npu{machine=davinci cores=two}' 2>&1 | filecheck %s --check-prefix=OPTION

// CHECK: error: loop-distribute: machine 'davinci' has 32 cores, not 33
// ZERO: error: loop-distribute needs cores >= 1, got 0
// OPTION: error: option 'cores' of pipeline 'lower-to-npu' takes one integer >= 1

func.func @main(%x: memref<64xf16, "gm">) {
  func.return
}
