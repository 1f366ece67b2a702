// graph-to-tile: a splat constant read by an elementwise generic is one scalar, an
// `arith.constant` in the body, not a tensor operand (a 0-d softmax scale once became
// a 2-byte buffer that overflowed systolic's ofmap). Non-splat constants, reductions
// and contractions, and generics of splats only keep their tensor operands.
// RUN: ziggurat-opt %s -p graph-to-tile | filecheck %s
// The numbers do not change (integer data, so the comparison is exact):
// RUN: ziggurat-run %s --function numerics --seed 4 --print > %t.graph
// RUN: ziggurat-opt %s -p graph-to-tile | ziggurat-run - --function numerics --seed 4 --print > %t.tile
// RUN: diff %t.graph %t.tile

// CHECK-LABEL: func.func @scale_0d(
// CHECK-NOT:     arith.constant dense
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x32xf16>)
// CHECK-NEXT:    ^bb0(%{{.*}}: f16, %{{.*}}: f16):
// CHECK-NEXT:      %[[X:.*]] = arith.extf
// The constant's extf is folded too: the f16 scale, exactly, in f32.
// CHECK-NEXT:      %[[C:.*]] = arith.constant 1.250000e-01 : f32
// CHECK-NEXT:      arith.mulf %[[X]], %[[C]] : f32
func.func @scale_0d(%x: tensor<4x32xf16>) -> tensor<4x32xf16> {
  %scale = graph.constant dense<0.125> : tensor<f16>
  %y = graph.mul %x, %scale : (tensor<4x32xf16>, tensor<f16>) -> tensor<4x32xf16>
  func.return %y : tensor<4x32xf16>
}

// A full-size splat and a broadcast one, in either operand position, any type.
// CHECK-LABEL: func.func @splats_any_position(
// CHECK-NOT:     arith.constant dense
// CHECK:         linalg.generic {{.*}} ins(%x : tensor<4x8xi32>)
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      %[[SEVEN:.*]] = arith.constant 7 : i32
// CHECK-NEXT:      arith.subi %[[SEVEN]], %{{.*}} : i32
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<4x8xi32>)
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      %[[M:.*]] = arith.constant -3 : i32
// CHECK-NEXT:      arith.maxsi %{{.*}}, %[[M]] : i32
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<4x8xbf16>)
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      arith.extf
// CHECK-NEXT:      arith.constant 1.500000e+00 : f32
func.func @splats_any_position(%x: tensor<4x8xi32>, %h: tensor<4x8xbf16>) -> (tensor<4x8xi32>, tensor<4x8xbf16>) {
  %seven = graph.constant dense<7> : tensor<4x8xi32>
  %low = graph.constant dense<-3> : tensor<1x8xi32>
  %a = graph.sub %seven, %x : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
  %b = graph.max %a, %low : (tensor<4x8xi32>, tensor<1x8xi32>) -> tensor<4x8xi32>
  %k = graph.constant dense<1.5> : tensor<8xbf16>
  %c = graph.add %h, %k : (tensor<4x8xbf16>, tensor<8xbf16>) -> tensor<4x8xbf16>
  func.return %b, %c : tensor<4x8xi32>, tensor<4x8xbf16>
}

// A boolean splat condition of a where is a scalar too.
// CHECK-LABEL: func.func @where_condition(
// CHECK:         linalg.generic {{.*}} ins(%a, %b : tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      %[[T:.*]] = arith.constant true
// CHECK-NEXT:      arith.select %[[T]]
func.func @where_condition(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = graph.constant dense<true> : tensor<2x3xi1>
  %y = graph.where %c, %a, %b : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// Ops on constants only are folded: a batch norm of splat parameters multiplies by
// scale / sqrt(var + eps) computed once, in f32 as the body computes it.
// CHECK-LABEL: func.func @batch_norm_splats(
// CHECK:         linalg.generic {{.*}} ins(%x : tensor<1x4x2x2xf16>)
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      arith.extf
// CHECK-NEXT:      arith.constant 2.500000e-01 : f32
// CHECK-NEXT:      arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      arith.constant 0.999998808 : f32
// CHECK-NEXT:      arith.subf
// CHECK-NEXT:      arith.mulf
// CHECK-NEXT:      arith.addf
// CHECK-NEXT:      arith.truncf
// CHECK-NEXT:      linalg.yield
func.func @batch_norm_splats(%x: tensor<1x4x2x2xf16>) -> tensor<1x4x2x2xf16> {
  %scale = graph.constant dense<2.0> : tensor<4xf16>
  %shift = graph.constant dense<0.25> : tensor<4xf16>
  %mean = graph.constant dense<0.5> : tensor<4xf16>
  %var = graph.constant dense<4.0> : tensor<4xf16>
  %y = graph.batch_norm %x, %scale, %shift, %mean, %var : (tensor<1x4x2x2xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>, tensor<4xf16>) -> tensor<1x4x2x2xf16>
  func.return %y : tensor<1x4x2x2xf16>
}

// Kept as tensors: a non-splat constant, a contraction's splat weights, and a
// generic whose inputs are all splats (nothing would be left to iterate over).
// CHECK-LABEL: func.func @kept(
// CHECK:         %[[K:.*]] = arith.constant dense<[1, 2, 3]> : tensor<3xi32>
// CHECK:         linalg.generic {{.*}} ins(%x, %[[K]] : tensor<2x3xi32>, tensor<3xi32>)
// CHECK:         %[[W:.*]] = arith.constant dense<2> : tensor<3x4xi32>
// CHECK:         linalg.matmul ins(%x, %[[W]] : tensor<2x3xi32>, tensor<3x4xi32>)
// CHECK:         %[[ONE:.*]] = arith.constant dense<1> : tensor<2xi32>
// CHECK:         linalg.generic {{.*}} ins(%[[ONE]], %[[ONE]] : tensor<2xi32>, tensor<2xi32>)
func.func @kept(%x: tensor<2x3xi32>) -> (tensor<2x3xi32>, tensor<2x4xi32>, tensor<2xi32>) {
  %k = graph.constant dense<[1, 2, 3]> : tensor<3xi32>
  %a = graph.add %x, %k : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %w = graph.constant dense<2> : tensor<3x4xi32>
  %m = graph.matmul %x, %w : (tensor<2x3xi32>, tensor<3x4xi32>) -> tensor<2x4xi32>
  %one = graph.constant dense<1> : tensor<2xi32>
  %two = graph.add %one, %one : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  func.return %a, %m, %two : tensor<2x3xi32>, tensor<2x4xi32>, tensor<2xi32>
}

func.func @numerics(%x: tensor<4x8xi32>, %c: tensor<4x8xi1>) -> (tensor<4x8xi32>, tensor<4x8xi32>) {
  %seven = graph.constant dense<7> : tensor<4x8xi32>
  %low = graph.constant dense<-3> : tensor<1x8xi32>
  %three = graph.constant dense<3> : tensor<i32>
  %a = graph.sub %seven, %x : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
  %b = graph.max %a, %low : (tensor<4x8xi32>, tensor<1x8xi32>) -> tensor<4x8xi32>
  %d = graph.mul %three, %b : (tensor<i32>, tensor<4x8xi32>) -> tensor<4x8xi32>
  %y = graph.where %c, %d, %seven : (tensor<4x8xi1>, tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
  func.return %d, %y : tensor<4x8xi32>, tensor<4x8xi32>
}
