// An ONNX MLP compiled down to each level for a machine, run there and checked against
// onnxruntime. The model is f32; davinci's cube takes f16 and bf16, so it computes in bf16
// inside (graph-convert-float; bf16 keeps f32's range) and is checked with bf16's tolerance.
// RUN: rm -rf %t && mkdir -p %t
// RUN: python %examples/models/mlp.py %t/mlp.onnx
// RUN: ziggurat-compile %t/mlp.onnx --machine davinci --emit graph | filecheck %s --check-prefix=GRAPH
// RUN: ziggurat-compile %t/mlp.onnx --machine davinci --emit graph --check | filecheck %s --check-prefix=CHECK
// RUN: ziggurat-compile %t/mlp.onnx --machine davinci --emit tile | filecheck %s --check-prefix=TILE
// RUN: ziggurat-compile %t/mlp.onnx --machine davinci --emit loop | filecheck %s --check-prefix=LOOP
// RUN: ziggurat-compile %t/mlp.onnx --machine davinci -o %t/mlp.npu.mlir
// RUN: filecheck %s --input-file %t/mlp.npu.mlir --check-prefix=NPU
// RUN: ziggurat-compile %t/mlp.onnx --machine davinci --emit loop --check | filecheck %s --check-prefix=CHECK
// RUN: ziggurat-compile %t/mlp.onnx --machine davinci --check --report text --trace %t/trace.json | filecheck %s --check-prefixes=CHECK,REPORT
// RUN: ziggurat-compile %t/mlp.onnx --machine tensorcore --check | filecheck %s
// RUN: ziggurat-compile %t/mlp.onnx --machine systolic --check | filecheck %s
// RUN: filecheck %s --input-file %t/trace.json --check-prefix=TRACE

// GRAPH:      func.func @main(%x: tensor<4x64xf32>) -> tensor<4x10xf32>
// GRAPH:      graph.
// GRAPH-NOT:  linalg.
// GRAPH-NOT:  npu.
// TILE:      func.func @main(%x: tensor<4x64xf32>) -> tensor<4x10xf32>
// TILE:      linalg.generic
// TILE-NOT:  graph.
// LOOP:      func.func @main(%x: memref<4x64xf32, "gm">, %result0: memref<4x10xf32, "gm">)
// LOOP:      loop.copy_async
// NPU:       npu.machine = "davinci"
// NPU:       npu.mma
// NPU:       npu.set_flag

// REPORT:    machine davinci
// REPORT:    cube
// REPORT:    layers
// REPORT:    fc1
// CHECK:     output 'probs': float32[4, 10] {{.*}} ok
// CHECK:     check passed: 1 output(s) match onnxruntime
// TRACE:     "traceEvents"
