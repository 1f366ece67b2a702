// RUN: ziggurat-opt %s --split-input-file -p "tile-vectorize{machine=davinci}" | filecheck %s
// RUN: ziggurat-opt %s --split-input-file -p "tile-vectorize{machine=davinci}" | ziggurat-opt --split-input-file | filecheck %s

// f16 relu: davinci's vector unit has 128 f16 lanes, so extf/truncf go and the
// max runs in f16 with the zero as a scalar operand.
// CHECK-LABEL: func.func @relu_f16(
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0.000000e+00 : f16
// CHECK-NEXT:    %[[Y:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %[[Z]] : tensor<4x16xf16>, f16) outs(%e : tensor<4x16xf16>) attrs = {{.*}}tile.group = "relu"
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f16, %[[B:.*]]: f16, %{{.*}}: f16):
// CHECK-NEXT:      %[[M:.*]] = arith.maximumf %[[A]], %[[B]] : f16
// CHECK-NEXT:      linalg.yield %[[M]] : f16
// CHECK-NEXT:    } -> tensor<4x16xf16>
// CHECK-NEXT:    func.return %[[Y]] : tensor<4x16xf16>
func.func @relu_f16(%x: tensor<4x16xf16>, %e: tensor<4x16xf16>) -> tensor<4x16xf16> {
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x16xf16>) outs(%e : tensor<4x16xf16>) attrs = {tile.group = "relu"} {
  ^bb0(%a: f16, %o: f16):
    %w = arith.extf %a : f16 to f32
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %w, %z : f32
    %t = arith.truncf %m : f32 to f16
    linalg.yield %t : f16
  } -> tensor<4x16xf16>
  func.return %y : tensor<4x16xf16>
}

// -----

// A sum of squares of centered f16 data: cast to the f32 accumulator type, subtract
// the row's mean (broadcast through its map), square, then the reduction alone.
// CHECK-LABEL: func.func @sum_of_squares(
// CHECK:         %[[E0:.*]] = tensor.empty() : tensor<4x16xf32>
// CHECK-NEXT:    %[[X32:.*]] = linalg.generic {{.*}} ins(%x : tensor<4x16xf16>) outs(%[[E0]] : tensor<4x16xf32>)
// CHECK:           arith.extf
// CHECK:         %[[E1:.*]] = tensor.empty() : tensor<4x16xf32>
// CHECK-NEXT:    %[[D:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%[[X32]], %mean : tensor<4x16xf32>, tensor<4xf32>) outs(%[[E1]] : tensor<4x16xf32>)
// CHECK:           arith.subf
// CHECK:         %[[E2:.*]] = tensor.empty() : tensor<4x16xf32>
// CHECK-NEXT:    %[[S:.*]] = linalg.generic {{.*}} ins(%[[D]] : tensor<4x16xf32>) outs(%[[E2]] : tensor<4x16xf32>)
// CHECK-NEXT:    ^bb0(%[[V:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      arith.mulf %[[V]], %[[V]] : f32
// CHECK:         %[[R:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[S]] : tensor<4x16xf32>) outs(%init : tensor<4xf32>)
// CHECK-NEXT:    ^bb0(%[[C:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[C]], %[[ACC]] : f32
// CHECK-NEXT:      linalg.yield %[[SUM]] : f32
// CHECK:         func.return %[[R]]
func.func @sum_of_squares(%x: tensor<4x16xf16>, %mean: tensor<4xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x, %mean : tensor<4x16xf16>, tensor<4xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f16, %m: f32, %acc: f32):
    %w = arith.extf %a : f16 to f32
    %d = arith.subf %w, %m : f32
    %s = arith.mulf %d, %d : f32
    %r = arith.addf %s, %acc : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// -----

// A row statistic stays per row: mean = sum / 16 over d0 only, then x - mean.
// CHECK-LABEL: func.func @center(
// CHECK:         %[[C:.*]] = arith.constant 1.600000e+01 : f32
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT:    %[[MEAN:.*]] = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%sum, %[[C]] : tensor<4xf32>, f32)
// CHECK:           arith.divf
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %[[MEAN]] : tensor<4x16xf32>, tensor<4xf32>) outs(%e : tensor<4x16xf32>)
// CHECK:           arith.subf
func.func @center(%x: tensor<4x16xf32>, %sum: tensor<4xf32>, %e: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %sum : tensor<4x16xf32>, tensor<4xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %n = arith.constant 16.0 : f32
    %m = arith.divf %s, %n : f32
    %d = arith.subf %a, %m : f32
    linalg.yield %d : f32
  } -> tensor<4x16xf32>
  func.return %y : tensor<4x16xf32>
}

// -----

// Contractions, single-op generics and bodies with linalg.index stay as they are.
// CHECK-LABEL: func.func @untouched(
// CHECK:         arith.extf
// CHECK-NEXT:    arith.extf
// CHECK-NEXT:    arith.mulf
// CHECK-NEXT:    arith.addf
// CHECK:         linalg.index
// CHECK-NEXT:    arith.index_cast
// CHECK-NEXT:    arith.sitofp
func.func @untouched(%a: tensor<4x8xf16>, %b: tensor<8x3xf16>, %acc: tensor<4x3xf32>, %e: tensor<4xf32>) -> (tensor<4x3xf32>, tensor<4xf32>) {
  %m = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<4x8xf16>, tensor<8x3xf16>) outs(%acc : tensor<4x3xf32>) {
  ^bb0(%x: f16, %y: f16, %s: f32):
    %ex = arith.extf %x : f16 to f32
    %ey = arith.extf %y : f16 to f32
    %p = arith.mulf %ex, %ey : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<4x3xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]} outs(%e : tensor<4xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i64
    %f = arith.sitofp %c : i64 to f32
    linalg.yield %f : f32
  } -> tensor<4xf32>
  func.return %m, %r : tensor<4x3xf32>, tensor<4xf32>
}

// -----

// Loop-level (memref) generics are not the tensor level's: left alone.
// CHECK-LABEL: func.func @on_memrefs(
// CHECK-NEXT:    linalg.generic {{.*}} ins(%x : memref<4x16xf16>) outs(%y : memref<4x16xf16>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.extf
// CHECK-NEXT:      arith.constant
// CHECK-NEXT:      arith.maximumf
// CHECK-NEXT:      arith.truncf
func.func @on_memrefs(%x: memref<4x16xf16>, %y: memref<4x16xf16>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<4x16xf16>) outs(%y : memref<4x16xf16>) {
  ^bb0(%a: f16, %o: f16):
    %w = arith.extf %a : f16 to f32
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %w, %z : f32
    %t = arith.truncf %m : f32 to f16
    linalg.yield %t : f16
  }
  func.return
}
