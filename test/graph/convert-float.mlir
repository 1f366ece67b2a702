// graph-convert-float computes in f16 inside the function and keeps its f32 interface.
// RUN: ziggurat-opt %s --split-input-file -p graph-convert-float | filecheck %s
// RUN: ziggurat-opt %s --split-input-file -p 'graph-convert-float{source=f32 target=bf16}' | filecheck %s --check-prefix=BF16
// The numbers stay within f16 of the f32 ones.
// RUN: ziggurat-run %s --function scale --save-inputs %t.in.npz --outputs %t.ref.npz
// RUN: ziggurat-opt %s -p graph-convert-float | ziggurat-run - --function scale --inputs %t.in.npz --expect %t.ref.npz --rtol 2e-3 --atol 2e-3

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
