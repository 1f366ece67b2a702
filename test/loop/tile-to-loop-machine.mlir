// tile-to-loop takes its machine from the option, else from the module's npu.machine;
// the global space is the machine's (dram on systolic).
// RUN: ziggurat-opt %s -p tile-to-loop | filecheck %s
// RUN: not ziggurat-opt %s -p "tile-to-loop{machine=nosuchmachine}" 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: sed -e 's/attributes {npu.machine = "systolic"}//' %s | not ziggurat-opt -p tile-to-loop 2>&1 | filecheck %s --check-prefix=NONE

// CHECK: func.func @f(%x: memref<4xf32, "dram">, %result0: memref<4xf32, "dram">)
// UNKNOWN: nosuchmachine
// NONE: error: tile-to-loop needs a machine: tile-to-loop{machine=NAME} or a module attribute npu.machine
builtin.module attributes {npu.machine = "systolic"} {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    func.return %x : tensor<4xf32>
  }
}
