// --save-inputs writes the inputs a run used; --expect compares the outputs with a saved
// reference, so IR after a pipeline can be checked against the graph level's numbers.
// RUN: ziggurat-run %s --save-inputs %t.in.npz --outputs %t.ref.npz
// RUN: python -c "import numpy as np; print(sorted(np.load('%t.in.npz')), sorted(np.load('%t.ref.npz')))" | filecheck %s --check-prefix=KEYS
// RUN: ziggurat-opt %s -p graph-canonicalize,graph-fold-constants | ziggurat-run - --inputs %t.in.npz --expect %t.ref.npz | filecheck %s
// Other inputs give other numbers: exit 1 with the error of each output.
// RUN: not ziggurat-run %s --seed 1 --expect %t.ref.npz 2>&1 | filecheck %s --check-prefix=DIFFER
// RUN: not ziggurat-run %s --expect %t.in.npz 2>&1 | filecheck %s --check-prefix=NAMES
// RUN: not ziggurat-run %s --expect %t.ref.npz --atol -1 2>&1 | filecheck %s --check-prefix=ATOL
// At the npu level the outputs are the memref arguments (here all of them, as --inputs gives all).
// RUN: ziggurat-run %examples/npu/elementwise_reduce.mlir --save-inputs %t.npu-in.npz --outputs %t.npu-out.npz
// RUN: ziggurat-run %examples/npu/elementwise_reduce.mlir --inputs %t.npu-in.npz --expect %t.npu-out.npz | filecheck %s --check-prefix=NPU
// A kernel written as lower-to-npu writes it (docs/lowering.md) has its outputs in the
// %resultN arguments: the others are its inputs, drawn as the graph level draws them, so the
// graph-level run is the reference. The softmax kernel with its output renamed %result0:
// RUN: sed -e 's/%%Y/%%result0/g' %examples/npu/elementwise_reduce.mlir > %t.softmax-npu.mlir
// RUN: ziggurat-run %S/Inputs/softmax.mlir --outputs %t.softmax-ref.npz
// RUN: ziggurat-run %t.softmax-npu.mlir --save-inputs %t.softmax-in.npz --expect %t.softmax-ref.npz | filecheck %s --check-prefix=LOWERED
// RUN: python -c "import numpy as np; print(sorted(np.load('%t.softmax-in.npz')))" | filecheck %s --check-prefix=LOWERED-INPUTS

func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>) -> (tensor<4x3xf32>, tensor<4x8xf32>) {
  %one = graph.constant dense<1.0> : tensor<4x8xf32>
  %scaled = graph.mul %x, %one : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %0 = graph.matmul %scaled, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %1 = graph.relu %0 : tensor<4x3xf32>
  func.return %1, %scaled : tensor<4x3xf32>, tensor<4x8xf32>
}

// KEYS:        ['w', 'x'] ['result0', 'result1']

// CHECK:       {{^}}result0: float32[4, 3]  max abs error {{.*}}  bound {{.*}} x max|ref| {{.*}}; each element within {{.*}} x |ref|)  ok{{$}}
// CHECK-NEXT:  {{^}}result1: float32[4, 8]  max abs error 0  bound {{.*}}  ok{{$}}

// DIFFER:      {{^}}result0: float32[4, 3]  max abs error {{.*}}  FAIL: {{[0-9]+}} element(s) beyond it, worst at [{{.*}}]: expected {{.*}}, got {{.*}}
// DIFFER-NEXT: {{^}}result1: float32[4, 8]  max abs error {{.*}}  FAIL: {{[0-9]+}} element(s) beyond it
// DIFFER:      ref.npz: error: output result0, result1 differs from the expected array beyond the tolerance

// NAMES:       in.npz: error: no expected array for output result0, result1 (the archive has w, x)

// ATOL:        argument --atol: must be a number >= 0, got -1

// NPU:         {{^}}X: {{.*}}  max abs error 0  {{.*}}  ok{{$}}
// NPU-NEXT:    {{^}}Y: {{.*}}  max abs error 0  {{.*}}  ok{{$}}

// LOWERED:        {{^}}result0: {{.*}}  max abs error {{.*}}  ok{{$}}
// LOWERED-NOT:    {{^}}X:
// LOWERED-INPUTS: ['X']
