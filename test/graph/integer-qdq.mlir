// RUN: ziggurat-opt %s --split-input-file -p graph-integer-qdq | filecheck %s
// RUN: not ziggurat-opt %s -p 'graph-integer-qdq{machine=abacus}' 2>&1 | filecheck %s --check-prefix=BAD-MACHINE
// Numerics: each rewritten function computes exactly what the original does on the graph
// interpreter (the scales are powers of two but the output scales: every float is exact).
// RUN: ziggurat-run %s --function conv --save-inputs %t.conv.npz --outputs %t.conv.ref.npz
// RUN: ziggurat-opt %s -p graph-integer-qdq,graph-fold-constants | ziggurat-run - --function conv --inputs %t.conv.npz --expect %t.conv.ref.npz --rtol 0 --atol 0
// RUN: ziggurat-run %s --function gemm --save-inputs %t.gemm.npz --outputs %t.gemm.ref.npz
// RUN: ziggurat-opt %s -p graph-integer-qdq,graph-fold-constants | ziggurat-run - --function gemm --inputs %t.gemm.npz --expect %t.gemm.ref.npz --rtol 0 --atol 0
// RUN: ziggurat-run %s --function matmul --save-inputs %t.matmul.npz --outputs %t.matmul.ref.npz
// RUN: ziggurat-opt %s -p graph-integer-qdq,graph-fold-constants | ziggurat-run - --function matmul --inputs %t.matmul.npz --expect %t.matmul.ref.npz --rtol 0 --atol 0
// RUN: ziggurat-run %s --function other_bias_scale --save-inputs %t.bias.npz --outputs %t.bias.ref.npz
// RUN: ziggurat-opt %s -p graph-integer-qdq,graph-fold-constants | ziggurat-run - --function other_bias_scale --inputs %t.bias.npz --expect %t.bias.ref.npz --rtol 0 --atol 0

// BAD-MACHINE: error: unknown machine 'abacus'

// A padded conv with uint8 activations (zero points 130 and 0), int8 per-channel weights, an
// int32 bias dequantized with x_scale * w_scale and a Relu: the activations become int8 (zero
// points 2 and -128, both quantizes and the dequantize), the conv an int32 one on the int8
// input, the zero-point correction a constant per output position (border windows read fewer
// weights), the rescaling one multiply per channel before the output's quantize.
// CHECK-LABEL: func.func @conv(
// CHECK:         %[[ZX:.*]] = graph.constant dense<2> : tensor<i8>
// CHECK-NEXT:    %[[XQ:.*]] = graph.quantize %x, %{{.*}}, %[[ZX]] : (tensor<1x3x5x5xf32>, tensor<f32>, tensor<i8>) -> tensor<1x3x5x5xi8>
// CHECK:         %[[XW:.*]] = graph.cast %[[XQ]] : tensor<1x3x5x5xi8> -> tensor<1x3x5x5xi32>
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<{{.*}}> : tensor<2x3x3x3xi32>
// CHECK-NEXT:    %[[ACC:.*]] = graph.conv2d %[[XW]], %[[W]] {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x5x5xi32>, tensor<2x3x3x3xi32>) -> tensor<1x2x5x5xi32>
// CHECK-NEXT:    %[[CORR:.*]] = graph.constant dense<{{.*}}> : tensor<1x2x5x5xi32>
// CHECK-NEXT:    %[[SUM:.*]] = graph.add %[[ACC]], %[[CORR]]
// CHECK-NEXT:    %[[F:.*]] = graph.cast %[[SUM]] : tensor<1x2x5x5xi32> -> tensor<1x2x5x5xf32>
// CHECK-NEXT:    %[[S:.*]] = graph.constant dense<{{\[\[\[\[}}3.125000e-02]], {{\[\[}}1.562500e-02]]]]> : tensor<1x2x1x1xf32>
// CHECK-NEXT:    %[[V:.*]] = graph.mul %[[F]], %[[S]]
// CHECK-NEXT:    %[[R:.*]] = graph.relu %[[V]]
// CHECK-NEXT:    %[[Y:.*]] = graph.quantize %[[R]], %{{.*}}, %{{.*}} : (tensor<1x2x5x5xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x5x5xi8>
// CHECK:         %{{.*}} = graph.dequantize %[[Y]], %{{.*}}, %{{.*}} : (tensor<1x2x5x5xi8>, tensor<f32>, tensor<i8>) -> tensor<1x2x5x5xf32>
// CHECK-NOT:     graph.conv2d
func.func @conv(%x: tensor<1x3x5x5xf32>) -> tensor<1x2x5x5xf32> {
  %sx = graph.constant dense<0.125> : tensor<f32>
  %zx = graph.constant dense<130> : tensor<ui8>
  %xq = graph.quantize %x, %sx, %zx : (tensor<1x3x5x5xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x5x5xui8>
  %xf = graph.dequantize %xq, %sx, %zx : (tensor<1x3x5x5xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x3x5x5xf32>
  %wq = graph.constant dense<[[[[89, 35, 3], [-59, -49, -117], [-108, -123, -83]], [[80, 38, 105], [1, 27, 120], [59, 34, 11]], [[15, 111, -57], [81, 44, -127], [-27, 91, 14]]], [[[-119, 68, 59], [88, -83, -105], [93, -122, 11]], [[-107, -51, -5], [-20, -25, -120], [-126, -96, -125]], [[44, 7, 38], [-62, 29, 67], [-30, -10, 127]]]]> : tensor<2x3x3x3xi8>
  %sw = graph.constant dense<[0.25, 0.125]> : tensor<2xf32>
  %zw = graph.constant dense<0> : tensor<2xi8>
  %wf = graph.dequantize %wq, %sw, %zw {axis = 0 : i64} : (tensor<2x3x3x3xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x3x3x3xf32>
  %bq = graph.constant dense<[700, -45]> : tensor<2xi32>
  %sb = graph.constant dense<[0.03125, 0.015625]> : tensor<2xf32>
  %zb = graph.constant dense<0> : tensor<2xi32>
  %bf = graph.dequantize %bq, %sb, %zb {axis = 0 : i64} : (tensor<2xi32>, tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>
  %c = graph.conv2d %xf, %wf, %bf {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x5x5xf32>, tensor<2x3x3x3xf32>, tensor<2xf32>) -> tensor<1x2x5x5xf32>
  %r = graph.relu %c : tensor<1x2x5x5xf32>
  %sy = graph.constant dense<0.3> : tensor<f32>
  %zy = graph.constant dense<0> : tensor<ui8>
  %yq = graph.quantize %r, %sy, %zy : (tensor<1x2x5x5xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x5x5xui8>
  %y = graph.dequantize %yq, %sy, %zy : (tensor<1x2x5x5xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x2x5x5xf32>
  func.return %y : tensor<1x2x5x5xf32>
}

// -----

// A Gemm over int8 activations (no shift) with per-row weights (trans_b: axis 0) and a float
// bias that is bq * x_scale * w_scale: its integers join the correction, one per column.
// CHECK-LABEL: func.func @gemm(
// CHECK:         %[[XW:.*]] = graph.cast %{{.*}} : tensor<2x4xi8> -> tensor<2x4xi32>
// CHECK-NEXT:    %[[W:.*]] = graph.constant dense<{{.*}}> : tensor<3x4xi32>
// CHECK-NEXT:    %[[ACC:.*]] = graph.gemm %[[XW]], %[[W]] {trans_b = true} : (tensor<2x4xi32>, tensor<3x4xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:    %[[CORR:.*]] = graph.constant dense<[{{.*}}]> : tensor<3xi32>
// CHECK-NEXT:    graph.add %[[ACC]], %[[CORR]] : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// CHECK:         graph.mul %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    graph.quantize %{{.*}} : (tensor<2x3xf32>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
// CHECK-NOT:     graph.gemm
func.func @gemm(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %sx = graph.constant dense<0.25> : tensor<f32>
  %zx = graph.constant dense<-3> : tensor<i8>
  %xq = graph.quantize %x, %sx, %zx : (tensor<2x4xf32>, tensor<f32>, tensor<i8>) -> tensor<2x4xi8>
  %xf = graph.dequantize %xq, %sx, %zx : (tensor<2x4xi8>, tensor<f32>, tensor<i8>) -> tensor<2x4xf32>
  %wq = graph.constant dense<[[78, 123, -31, 47], [115, 38, 87, 48], [52, -28, 96, -93]]> : tensor<3x4xi8>
  %sw = graph.constant dense<[0.0625, 0.125, 0.03125]> : tensor<3xf32>
  %zw = graph.constant dense<0> : tensor<3xi8>
  %wf = graph.dequantize %wq, %sw, %zw {axis = 0 : i64} : (tensor<3x4xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<3x4xf32>
  %b = graph.constant dense<[1.5, -0.5, 0.0078125]> : tensor<3xf32>
  %g = graph.gemm %xf, %wf, %b {trans_b = true} : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %sy = graph.constant dense<0.7> : tensor<f32>
  %zy = graph.constant dense<5> : tensor<i8>
  %yq = graph.quantize %g, %sy, %zy : (tensor<2x3xf32>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  %y = graph.dequantize %yq, %sy, %zy : (tensor<2x3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// -----

// A batched MatMul by per-tensor uint8 weights with zero point 100: both move to int8, and the
// weights' zero point takes a second product (x' times a weight of zero points).
// CHECK-LABEL: func.func @matmul(
// CHECK:         %[[P:.*]] = graph.matmul %[[XW:.*]], %{{.*}} : (tensor<2x2x4xi32>, tensor<4x3xi32>) -> tensor<2x2x3xi32>
// CHECK-NEXT:    %[[ZW:.*]] = graph.constant dense<-28> : tensor<4x3xi32>
// CHECK-NEXT:    %[[Q:.*]] = graph.matmul %[[XW]], %[[ZW]] : (tensor<2x2x4xi32>, tensor<4x3xi32>) -> tensor<2x2x3xi32>
// CHECK-NEXT:    graph.sub %[[P]], %[[Q]]
// CHECK-NOT:     graph.matmul {{.*}}f32
func.func @matmul(%x: tensor<2x2x4xf32>) -> tensor<2x2x3xf32> {
  %sx = graph.constant dense<0.5> : tensor<f32>
  %zx = graph.constant dense<7> : tensor<i8>
  %xq = graph.quantize %x, %sx, %zx : (tensor<2x2x4xf32>, tensor<f32>, tensor<i8>) -> tensor<2x2x4xi8>
  %xf = graph.dequantize %xq, %sx, %zx : (tensor<2x2x4xi8>, tensor<f32>, tensor<i8>) -> tensor<2x2x4xf32>
  %wq = graph.constant dense<[[148, 184, 216], [134, 96, 79], [108, 124, 184], [227, 18, 239]]> : tensor<4x3xui8>
  %sw = graph.constant dense<0.015625> : tensor<f32>
  %zw = graph.constant dense<100> : tensor<ui8>
  %wf = graph.dequantize %wq, %sw, %zw : (tensor<4x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<4x3xf32>
  %m = graph.matmul %xf, %wf : (tensor<2x2x4xf32>, tensor<4x3xf32>) -> tensor<2x2x3xf32>
  %sy = graph.constant dense<0.45> : tensor<f32>
  %zy = graph.constant dense<0> : tensor<i8>
  %yq = graph.quantize %m, %sy, %zy : (tensor<2x2x3xf32>, tensor<f32>, tensor<i8>) -> tensor<2x2x3xi8>
  %y = graph.dequantize %yq, %sy, %zy : (tensor<2x2x3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x2x3xf32>
  func.return %y : tensor<2x2x3xf32>
}

// -----

// Left alone: weights that are no constant, and a conv whose float result is also returned. A
// bias whose scale is not x_scale * w_scale is no integer at the sum's scale: its f32 values are
// added after the rescaling.
// CHECK-LABEL: func.func @not_constant(
// CHECK:         graph.matmul {{.*}} -> tensor<2x3xf32>
// CHECK-LABEL: func.func @other_bias_scale(
// CHECK:         %[[A:.*]] = graph.gemm {{.*}} : (tensor<2x4xi32>, tensor<3x4xi32>) -> tensor<2x3xi32>
// CHECK-NEXT:    %[[F:.*]] = graph.cast %[[A]] : tensor<2x3xi32> -> tensor<2x3xf32>
// CHECK-NEXT:    %[[S:.*]] = graph.constant dense<2.500000e-01> : tensor<f32>
// CHECK-NEXT:    %[[R:.*]] = graph.mul %[[F]], %[[S]]
// CHECK-NEXT:    %[[B:.*]] = graph.constant dense<3.000000e-01> : tensor<3xf32>
// CHECK-NEXT:    %[[T:.*]] = graph.add %[[R]], %[[B]] : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    graph.quantize %[[T]]
// CHECK-LABEL: func.func @shared(
// CHECK:         graph.matmul {{.*}} -> tensor<2x3xf32>
func.func @not_constant(%x: tensor<2x4xi8>, %w: tensor<4x3xi8>) -> tensor<2x3xi8> {
  %s = graph.constant dense<0.5> : tensor<f32>
  %z = graph.constant dense<0> : tensor<i8>
  %xf = graph.dequantize %x, %s, %z : (tensor<2x4xi8>, tensor<f32>, tensor<i8>) -> tensor<2x4xf32>
  %wf = graph.dequantize %w, %s, %z : (tensor<4x3xi8>, tensor<f32>, tensor<i8>) -> tensor<4x3xf32>
  %m = graph.matmul %xf, %wf : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %y = graph.quantize %m, %s, %z : (tensor<2x3xf32>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  func.return %y : tensor<2x3xi8>
}
func.func @other_bias_scale(%x: tensor<2x4xi8>) -> tensor<2x3xi8> {
  %s = graph.constant dense<0.5> : tensor<f32>
  %z = graph.constant dense<0> : tensor<i8>
  %xf = graph.dequantize %x, %s, %z : (tensor<2x4xi8>, tensor<f32>, tensor<i8>) -> tensor<2x4xf32>
  %w = graph.constant dense<3> : tensor<3x4xi8>
  %wf = graph.dequantize %w, %s, %z : (tensor<3x4xi8>, tensor<f32>, tensor<i8>) -> tensor<3x4xf32>
  %bq = graph.constant dense<1> : tensor<3xi32>
  %sb = graph.constant dense<0.3> : tensor<f32>
  %zb = graph.constant dense<0> : tensor<i32>
  %bf = graph.dequantize %bq, %sb, %zb : (tensor<3xi32>, tensor<f32>, tensor<i32>) -> tensor<3xf32>
  %g = graph.gemm %xf, %wf, %bf {trans_b = true} : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %y = graph.quantize %g, %s, %z : (tensor<2x3xf32>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  func.return %y : tensor<2x3xi8>
}
func.func @shared(%x: tensor<2x4xi8>) -> (tensor<2x3xi8>, tensor<2x3xf32>) {
  %s = graph.constant dense<0.5> : tensor<f32>
  %z = graph.constant dense<0> : tensor<i8>
  %xf = graph.dequantize %x, %s, %z : (tensor<2x4xi8>, tensor<f32>, tensor<i8>) -> tensor<2x4xf32>
  %w = graph.constant dense<3> : tensor<4x3xi8>
  %wf = graph.dequantize %w, %s, %z : (tensor<4x3xi8>, tensor<f32>, tensor<i8>) -> tensor<4x3xf32>
  %m = graph.matmul %xf, %wf : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %y = graph.quantize %m, %s, %z : (tensor<2x3xf32>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  func.return %y, %m : tensor<2x3xi8>, tensor<2x3xf32>
}
