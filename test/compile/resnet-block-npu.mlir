// Issue 5's done-when: the ResNet basic block of examples/ (1x64x56x56 f16) lowered by
// lower-to-npu for davinci, each level shown by --print-between-passes, and the npu program
// run on the machine model, its output within fp16 tolerance of the graph interpreter's.
// RUN: ziggurat-run %examples/resnet_block.mlir --save-inputs %t.in.npz --outputs %t.graph.npz
// RUN: ziggurat-opt %examples/resnet_block.mlir -p 'lower-to-npu{machine=davinci}' --print-between-passes -o %t.npu.mlir | filecheck %s
// RUN: filecheck %s --input-file %t.npu.mlir --check-prefix=NPU
// RUN: ziggurat-run %t.npu.mlir --machine davinci --inputs %t.in.npz --expect %t.graph.npz --report text | filecheck %s --check-prefix=REPORT

// Graph level: two fusion groups, each rooted at its convolution.
// CHECK-LABEL: IR after graph-fuse:
// CHECK:         graph.fused "conv2d_batch_norm_relu"
// CHECK:         graph.fused "conv2d_batch_norm_add_relu"
// Tensor level, tiled: loops over output tiles, slices of the inputs, the epilogue fused.
// CHECK-LABEL: IR after tile-and-fuse:
// CHECK:         scf.for
// CHECK:           tensor.extract_slice
// CHECK:           tensor.insert_slice
// CHECK-LABEL: IR after tile-decompose-conv:
// Loop level: buffers in global memory, then in the machine's spaces with async copies.
// CHECK-LABEL: IR after tile-to-loop:
// CHECK:         func.func @main(%x: memref<1x64x56x56xf16, "gm">, %w1: memref<64x64x3x3xf16, "gm">, %w2: memref<64x64x3x3xf16, "gm">, %result0: memref<1x64x56x56xf16, "gm">)
// CHECK-LABEL: IR after loop-promote-to-memory-space:
// CHECK-DAG:     "l1">
// CHECK-DAG:     "l0a">
// CHECK-DAG:     "l0b">
// CHECK-DAG:     "l0c">
// CHECK-DAG:     "ub">
// CHECK:         loop.copy_async
// CHECK:         loop.wait
// Double buffering: two slots for what a loop fills with copies.
// CHECK-LABEL: IR after loop-double-buffer:
// CHECK:         memref<2x
// npu level: DMA engines, the cube, the vector unit, then addresses and flags.
// CHECK-LABEL: IR after loop-to-npu:
// CHECK-DAG:     npu.dma "mte2"
// CHECK-DAG:     npu.dma "mte1"
// CHECK-DAG:     npu.mma
// CHECK-DAG:     npu.vec.relu
// CHECK-LABEL: IR after npu-plan-memory:
// CHECK:         npu.buffer offset
// The output, after npu-insert-sync: flags between the pipes.
// NPU:           npu.machine = "davinci"
// NPU:           npu.set_flag
// NPU:           npu.wait_flag

// REPORT:   result0: {{.*}}  ok{{$}}
// REPORT:   machine davinci
// REPORT:   cube
