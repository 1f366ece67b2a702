// ziggurat-compile's diagnostics: each is one clear line and exit code 1, never a traceback.
// RUN: rm -rf %t && mkdir -p %t
// RUN: python %examples/models/mlp.py --dynamic-batch %t/dynamic.onnx
// RUN: not ziggurat-compile %t/dynamic.onnx 2>&1 | filecheck %s --check-prefix=DYNAMIC
// DYNAMIC: dynamic.onnx: error: input 'x' has a dynamic dimension 0 ('N'); set it with --input-shape x=1x64
// RUN: ziggurat-compile %t/dynamic.onnx --input-shape x=16x64 | filecheck %s --check-prefix=STATIC
// STATIC: func.func @main(%x: tensor<16x64xf32>) -> tensor<16x10xf32>
// RUN: not ziggurat-compile %t/dynamic.onnx --input-shape x=16xQ 2>&1 | filecheck %s --check-prefix=SHAPE
// SHAPE: error: invalid --input-shape 'x=16xQ': dimensions must be non-negative integers separated by 'x', e.g. x=1x3x224x224

// RUN: not ziggurat-compile %t/dynamic.onnx --input-shape x=16x64 --emit npu 2>&1 | filecheck %s --check-prefix=EMIT
// EMIT: error: --emit npu lowers for a machine: give --machine NAME
// RUN: not ziggurat-compile %t/dynamic.onnx --input-shape x=16x64 --machine nosuchchip 2>&1 | filecheck %s --check-prefix=MACHINE
// MACHINE: error: {{.*}}nosuchchip
// RUN: not ziggurat-compile %t/dynamic.onnx --input-shape x=16x64 --report text 2>&1 | filecheck %s --check-prefix=REPORT
// REPORT: error: --report and --trace describe a run on the machine: give --machine (and --emit npu)

// RUN: not ziggurat-compile %t/missing.onnx 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: missing.onnx: error: cannot read the ONNX model: no such file

// RUN: not ziggurat-compile %s 2>&1 | filecheck %s --check-prefix=MALFORMED
// MALFORMED: errors.mlir: error: not a readable ONNX model:
// MALFORMED-NOT: Traceback
