// RUN: ziggurat-opt %s | ziggurat-opt | filecheck %s
// RUN: ziggurat-opt %s | ziggurat-run - --print | filecheck %s --check-prefix=OUT

// xDSL prints NaN and infinities in dense literals as hex bit patterns; xDSL 0.74
// read them back as integers (xDSL issue #3370), so 0x7fc00000 became 2.14e9.

// CHECK:      arith.constant dense<[0x7fc00000, 0x7f800000, 0xff800000, 1.000000e+00]> : tensor<4xf32>
// CHECK-NEXT: arith.constant dense<0xfff0000000000000> : tensor<2xf64>
// CHECK-NEXT: graph.constant dense<[0x7e00, 0xfc00, -0.000000e+00]> : tensor<3xf16>
// CHECK-NEXT: arith.constant dense<[0x7fc0, 0xff80]> : tensor<2xbf16>
// CHECK-NEXT: arith.constant dense<[16, 255]> : tensor<2xi32>
// OUT:      result0: tensor<4xf32>
// OUT-NEXT: [ nan  inf -inf   1.]
// OUT-NEXT: result1: tensor<2xf64>
// OUT-NEXT: [-inf -inf]
// OUT-NEXT: result2: tensor<3xf16>
// OUT-NEXT: [ nan -inf  -0.]
// OUT-NEXT: result3: tensor<2xbf16>
// OUT-NEXT: [nan -inf]
// OUT-NEXT: result4: tensor<2xi32>
// OUT-NEXT: [ 16 255]
func.func @main() -> (tensor<4xf32>, tensor<2xf64>, tensor<3xf16>, tensor<2xbf16>, tensor<2xi32>) {
  %f32 = arith.constant dense<[0x7FC00000, 0x7F800000, 0xFF800000, 1.0]> : tensor<4xf32>
  %f64 = arith.constant dense<0xFFF0000000000000> : tensor<2xf64>
  %f16 = graph.constant dense<[0x7E00, 0xFC00, -0.0]> : tensor<3xf16>
  %bf16 = arith.constant dense<[0x7FC0, 0xFF80]> : tensor<2xbf16>
  // Hex stays an integer for integer element types.
  %i32 = arith.constant dense<[0x10, 0xFF]> : tensor<2xi32>
  func.return %f32, %f64, %f16, %bf16, %i32 : tensor<4xf32>, tensor<2xf64>, tensor<3xf16>, tensor<2xbf16>, tensor<2xi32>
}

