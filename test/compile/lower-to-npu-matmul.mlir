// lower-to-npu end to end on a GEMM + relu: the IR at each level of docs/lowering.md,
// and the npu program run on the davinci model against the graph interpreter.
// RUN: ziggurat-run %s --outputs %t.graph.npz
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=davinci}' --print-between-passes -o %t.npu.mlir | filecheck %s --check-prefix=LEVELS
// RUN: filecheck %s --check-prefix=NPU < %t.npu.mlir
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=davinci}' | ziggurat-run - --machine davinci --report text --expect %t.graph.npz | filecheck %s --check-prefix=REPORT

func.func @main(%a: tensor<256x512xf16>, %b: tensor<512x256xf16>) -> tensor<256x256xf16> {
  %c = graph.matmul %a, %b : (tensor<256x512xf16>, tensor<512x256xf16>) -> tensor<256x256xf16>
  %r = graph.relu %c : tensor<256x256xf16>
  func.return %r : tensor<256x256xf16>
}

// Graph level, one fusion group.
// LEVELS-LABEL: IR after graph-fuse:
// LEVELS:         graph.fused "matmul_relu"
// LEVELS:           = graph.matmul
// LEVELS-NEXT:      = graph.relu
// Tensor level: the group's ops marked, then tiled: rows of 128 outside, K in steps of 64
// accumulating in f32 through iter_args, the epilogue fused into the row loop.
// LEVELS-LABEL: IR after graph-to-tile:
// LEVELS:         linalg.generic {{.*}}tile.group = "matmul_relu_0", tile.root
// LEVELS-LABEL: IR after tile-and-fuse:
// LEVELS:         scf.for {{.*}} iter_args({{.*}}) -> (tensor<256x256xf16>)
// LEVELS:           scf.for {{.*}} iter_args({{.*}}) -> (tensor<128x256xf32>)
// LEVELS:             tensor.extract_slice %a{{.*}} to tensor<128x64xf16>
// LEVELS:             tensor.extract_slice %b{{.*}} to tensor<64x256xf16>
// LEVELS:           arith.truncf
// LEVELS:           arith.maximumf
// LEVELS:           tensor.insert_slice {{.*}} into tensor<256x256xf16>
// Loop level: memrefs in global memory, the result as an out-parameter.
// LEVELS-LABEL: IR after tile-to-loop:
// LEVELS:         func.func @main(%a: memref<256x512xf16, "gm">, %b: memref<512x256xf16, "gm">, %result0: memref<256x256xf16, "gm">)
// LEVELS:           memref.subview
// Operands staged along the DMA chain gm -> l1 -> l0a/l0b, the accumulator in l0c, the
// epilogue in ub, each hop an async copy and its wait.
// LEVELS-LABEL: IR after loop-promote-to-memory-space:
// LEVELS-DAG:     memref.alloc() : memref<128x256xf32, "l0c">
// LEVELS-DAG:     memref.alloc() : memref<128x64xf16, "l1">
// LEVELS-DAG:     memref.alloc() : memref<128x64xf16, "l0a">
// LEVELS-DAG:     memref.alloc() : memref<64x256xf16, "l0b">
// LEVELS-DAG:     memref.alloc() : memref<128x256xf16, "ub">
// LEVELS:         loop.copy_async {{.*}} "gm"> -> memref<128x64xf16, "l1">
// LEVELS-NEXT:    loop.wait
// Two slots per buffer filled in the K loop, the loop unrolled by two.
// LEVELS-LABEL: IR after loop-double-buffer:
// LEVELS-DAG:     memref.alloc() : memref<2x128x64xf16, "l1">
// LEVELS-DAG:     memref.alloc() : memref<2x64x256xf16, "l0b">
// LEVELS:         loop.copy_async {{.*}} offset: 8192>, "l1">
// Instructions: DMAs on the engines of each hop, the cube's mma (the first one of the K loop
// not accumulating: the zero fill is gone), relu on the vector unit.
// LEVELS-LABEL: IR after loop-to-npu:
// LEVELS-NOT:     linalg.
// LEVELS:         npu.dma "mte2" %a
// LEVELS:         npu.dma "mte1"
// LEVELS:         npu.mma {{.*}} {m = 128 : i64, n = 256 : i64, k = 64 : i64}
// LEVELS:         npu.mma {{.*}} accumulate
// LEVELS:         npu.dma "fixpipe" {{.*}} "l0c"> -> memref<{{.*}}xf16, "ub">
// LEVELS:         npu.vec.relu
// LEVELS:         npu.dma "mte3" {{.*}} -> %result0
// LEVELS-LABEL: IR after npu-plan-memory:
// LEVELS-NOT:     memref.alloc
// LEVELS:         npu.buffer offset {{[0-9]+}} : memref<2x128x64xf16, "l1">
// LEVELS-NOT:     IR after

// The final program: every local buffer placed, flags between the pipes.
// NPU-NOT:     memref.alloc
// NPU:         npu.buffer
// NPU:         npu.set_flag "mte2" -> "mte1"
// NPU:         npu.wait_flag "mte2" -> "mte1"
// NPU:         npu.mma
// NPU:         npu.wait_flag "cube" -> "fixpipe"
// NPU:         npu.dma "fixpipe"
// NPU:         npu.set_flag "vector" -> "mte3"

// REPORT:   result0: {{.*}}  max abs error {{.*}}  ok
// REPORT:   machine davinci: 1 core(s) run
// REPORT:   roofline {{.*}} bound by compute
// REPORT:   cube
// REPORT:   vector
