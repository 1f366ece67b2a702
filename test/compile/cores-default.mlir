// ziggurat-compile fills the chip by default: npu code for every core the machine has (davinci's
// 32), checked against onnxruntime on them, and run there by ziggurat-run (the module says how
// many). --cores 1 gives one core's program, without npu.cores. The levels above npu run as one
// program, so they default to one core, and asking them to run on several is an error, as is asking
// for more cores than the machine has.
// RUN: rm -rf %t && mkdir -p %t
// RUN: python %examples/models/resnet_block.py %t/block.onnx
// RUN: ziggurat-compile %t/block.onnx --machine davinci -o %t/chip.mlir
// RUN: filecheck %s --input-file %t/chip.mlir
// RUN: ziggurat-run %t/chip.mlir --report text | filecheck %s --check-prefix=REPORT
// RUN: ziggurat-compile %t/block.onnx --machine davinci --check | filecheck %s --check-prefix=PASSED
// RUN: ziggurat-compile %t/block.onnx --machine davinci --cores 1 -o %t/one.mlir
// RUN: filecheck %s --input-file %t/one.mlir --check-prefix=ONE
// RUN: ziggurat-compile %t/block.onnx --machine davinci --emit loop --check | filecheck %s --check-prefix=PASSED
// RUN: not ziggurat-compile %t/block.onnx --machine davinci --emit loop --cores 4 --check 2>&1 | filecheck %s --check-prefix=LEVEL
// RUN: not ziggurat-compile %t/block.onnx --machine davinci --cores 64 2>&1 | filecheck %s --check-prefix=MORE
// RUN: not ziggurat-compile %t/block.onnx --machine davinci --cores 0 2>&1 | filecheck %s --check-prefix=NONE

// CHECK:      builtin.module attributes {npu.machine = "davinci", npu.cores = 32 : i64,
// CHECK:        npu.core_id
// CHECK:        func.func @main(

// REPORT:     machine davinci: 32 core(s) run, 32 of 32 sharing global memory

// PASSED:     check passed: 1 output(s) match onnxruntime

// ONE:        builtin.module attributes {npu.machine = "davinci", ziggurat.useful_macs
// ONE-NOT:    npu.core_id

// MORE-NOT:   note
// MORE:       error: --cores 64: machine 'davinci' has 32 cores (give 1 to 32)
// NONE:       error: --cores 0: machine 'davinci' has 32 cores (give 1 to 32)

// LEVEL:      error: --cores 4 runs npu code on 4 cores; the loop level runs as one program: give --emit npu (or --cores 1)
