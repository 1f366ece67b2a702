// ziggurat-compile's npu code as kernels (docs/lowering.md, Kernels): each fusion group a private
// function that @main calls, with its weights as arguments and the model's weights as globals;
// the program checks against onnxruntime, and so does the whole lowering (--no-kernels), which
// calls nothing. A second compile, from the cache and in one process, writes the same bytes. The
// options that only kernels take are refused without them. The program is for all of davinci's
// 32 cores, ziggurat-compile's default. (useful_macs: two 16-channel 3x3
// convs over 16x16, 589,824 MACs each.)
// RUN: rm -rf %t && mkdir -p %t
// RUN: python %examples/models/resnet_block.py %t/block.onnx
// RUN: ziggurat-compile %t/block.onnx --machine davinci --jobs 2 --kernel-cache %t/cache -o %t/block.npu.mlir
// RUN: filecheck %s --input-file %t/block.npu.mlir
// RUN: ziggurat-compile %t/block.onnx --machine davinci --jobs 1 --kernel-cache %t/cache -o %t/again.npu.mlir
// RUN: cmp %t/block.npu.mlir %t/again.npu.mlir
// RUN: ziggurat-compile %t/block.onnx --machine davinci --check | filecheck %s --check-prefix=PASSED
// RUN: ziggurat-compile %t/block.onnx --machine davinci --no-kernels -o %t/whole.npu.mlir
// RUN: filecheck %s --input-file %t/whole.npu.mlir --check-prefix=WHOLE
// RUN: ziggurat-compile %t/block.onnx --machine davinci --no-kernels --check | filecheck %s --check-prefix=PASSED
// RUN: not ziggurat-compile %t/block.onnx --machine davinci --no-kernels --jobs 2 2>&1 | filecheck %s --check-prefix=JOBS
// RUN: not ziggurat-compile %t/block.onnx --machine davinci --kernels --emit loop 2>&1 | filecheck %s --check-prefix=LEVEL
// RUN: not ziggurat-compile %t/block.onnx --machine davinci --jobs 0 2>&1 | filecheck %s --check-prefix=COUNT

// CHECK:      builtin.module attributes {npu.machine = "davinci", npu.cores = 32 : i64, ziggurat.useful_macs = {"f16->f32" = 1179648 : i64}} {
// CHECK:        "memref.global"() <{sym_name = "weight0", type = memref<16x16x3x3xf16, "gm">
// CHECK:        func.func private @[[CAST:cast_[0-9a-f]+]](%0: memref<1x16x16x16xf32, "gm">, %result0: memref<1x16x16x16xf16, "gm">) {
// CHECK:        func.func private @[[CONV:conv2d_relu_[0-9a-f]+]](%0: memref<1x16x16x16xf16, "gm">, %result0: memref<1x16x16x16xf16, "gm">, %w0: memref<16x16x3x3xf16, "gm">
// CHECK:          npu.mma
// CHECK:        func.func @main(%x: memref<1x16x16x16xf32, "gm">, %result0: memref<1x16x16x16xf32, "gm">) {
// CHECK:          %[[X:[0-9]+]] = npu.buffer offset {{[0-9]+}} : memref<1x16x16x16xf16, "gm">
// CHECK:          func.call @[[CAST]](%x, %[[X]])
// CHECK:          %[[W:[0-9]+]] = memref.get_global @weight0
// CHECK:          func.call @[[CONV]](%[[X]], %{{[0-9]+}}, %[[W]],
// CHECK:          func.call @conv2d_add_relu_{{.*}}%result0
// CHECK-NOT:      func.call
// CHECK:          func.return

// PASSED:     check passed: 1 output(s) match onnxruntime

// WHOLE:      func.func @main(
// WHOLE-NOT:  func.call
// WHOLE:      npu.mma

// JOBS:       error: --jobs and --kernel-cache say how npu kernels are lowered: give --machine, without --no-kernels
// LEVEL:      error: --kernels lowers to npu kernels: give --machine (and --emit npu)
// COUNT:      error: --jobs takes a count >= 1, got 0
