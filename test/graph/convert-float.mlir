// graph-convert-float computes in f16 inside the function and keeps its f32 interface.
// RUN: ziggurat-opt %s --split-input-file -p graph-convert-float | filecheck %s
// RUN: ziggurat-opt %s --split-input-file -p 'graph-convert-float{source=f32 target=bf16}' | filecheck %s --check-prefix=BF16
// The numbers stay within f16 of the f32 ones.
// RUN: ziggurat-run %s --function scale --save-inputs %t.in.npz --outputs %t.ref.npz
// RUN: ziggurat-opt %s -p graph-convert-float | ziggurat-run - --function scale --inputs %t.in.npz --expect %t.ref.npz --rtol 2e-3 --atol 2e-3
// An op with its own graph.precision computes in bf16 where f16 would overflow: within bf16 of f32.
// RUN: ziggurat-run %s --function mixed --save-inputs %t.mixed.npz --outputs %t.mixed-ref.npz
// RUN: ziggurat-opt %s -p graph-convert-float | ziggurat-run - --function mixed --inputs %t.mixed.npz --expect %t.mixed-ref.npz --rtol 2e-2 --atol 2e-2

// CHECK-LABEL: func.func @scale(%x: tensor<4x8xf32>) -> tensor<32xf32>
// CHECK-NEXT:    %[[X:.*]] = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xf16>
// CHECK-NEXT:    %c = graph.constant dense<{{.*}}> : tensor<8xf16>
// CHECK-NEXT:    %y = graph.mul %[[X]], %c : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
// CHECK-NEXT:    %z = graph.reshape %y : tensor<4x8xf16> -> tensor<32xf16>
// CHECK-NEXT:    %[[R:.*]] = graph.cast %z : tensor<32xf16> -> tensor<32xf32>
// CHECK-NEXT:    func.return %[[R]] : tensor<32xf32>
// BF16:          graph.mul {{.*}} -> tensor<4x8xbf16>
func.func @scale(%x: tensor<4x8xf32>) -> tensor<32xf32> {
  %c = graph.constant dense<[0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0]> : tensor<8xf32>
  %y = graph.mul %x, %c : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %z = graph.reshape %y : tensor<4x8xf32> -> tensor<32xf32>
  func.return %z : tensor<32xf32>
}

// -----

// Integer tensors and casts to other types are left alone; a cast to f32 now casts to f16.
// CHECK-LABEL: func.func @ints
// CHECK:         graph.add %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK:         graph.cast %{{.*}} : tensor<4xi32> -> tensor<4xf16>
func.func @ints(%i: tensor<4xi32>) -> tensor<4xf32> {
  %s = graph.add %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %f = graph.cast %s : tensor<4xi32> -> tensor<4xf32>
  func.return %f : tensor<4xf32>
}

// -----

// A finite constant beyond the target's range saturates to its largest finite value (a mask's
// "minus infinity" written as f32's lowest stays finite, so 0 times it is 0, not NaN); an
// infinite one stays infinite.
// CHECK-LABEL: func.func @saturate
// CHECK:         graph.constant dense<[-6.550400e+04, 0x7c00, 1.000000e+00]> : tensor<3xf16>
// BF16-LABEL:  func.func @saturate
// BF16:          graph.constant dense<[-3.389530e+38, 0x7f80, 1.000000e+00]> : tensor<3xbf16>
func.func @saturate() -> tensor<3xf32> {
  %c = graph.constant dense<[-3.40282347e+38, 0x7F800000, 1.0]> : tensor<3xf32>
  func.return %c : tensor<3xf32>
}

// -----

// An op with a graph.precision attribute computes in that type; its operands are cast to it once
// per value and type, where they are defined, and the ops after it cast its results back.
// CHECK-LABEL: func.func @mixed
// CHECK-NEXT:    %[[H:.*]] = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xf16>
// CHECK-NEXT:    %[[B:.*]] = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK-NEXT:    %c = graph.constant dense<{{.*}}> : tensor<8xbf16>
// CHECK-NEXT:    %m = graph.mul %[[B]], %c : (tensor<4x8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16>
// CHECK-NEXT:    %d = graph.constant dense<{{.*}}> : tensor<8xbf16>
// CHECK-NEXT:    %r = graph.mul %m, %d : (tensor<4x8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16>
// CHECK-NEXT:    %[[R:.*]] = graph.cast %r : tensor<4x8xbf16> -> tensor<4x8xf16>
// CHECK-NEXT:    %y = graph.add %[[R]], %[[H]] : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
func.func @mixed(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = graph.constant {graph.precision = bf16} dense<1.0e+05> : tensor<8xf32>
  %m = graph.mul %x, %c {graph.precision = bf16} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %d = graph.constant {graph.precision = bf16} dense<1.0e-05> : tensor<8xf32>
  %r = graph.mul %m, %d {graph.precision = bf16} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %y = graph.add %r, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
