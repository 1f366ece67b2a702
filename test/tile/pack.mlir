// RUN: ziggurat-opt %s --split-input-file -p "tile-pack{machine=davinci}" | filecheck %s
// RUN: ziggurat-opt %s --split-input-file -p "tile-pack{machine=davinci}" | ziggurat-opt --split-input-file | filecheck %s

// A matmul on davinci's 16x16x16 blocks: lhs MxK, rhs KxN and the accumulator MxN
// packed (the 40 rows padded with zeros), the contraction over (blocks, in-block
// positions), its result unpacked. The zero fill is packed by filling the blocks.
// CHECK-LABEL: func.func @matmul(
// CHECK:         %[[EA:.*]] = tensor.empty() : tensor<3x3x16x16xf16>
// CHECK-NEXT:    %[[ZA:.*]] = arith.constant 0.000000e+00 : f16
// CHECK-NEXT:    %[[PA:.*]] = tile.pack %a padding_value(%[[ZA]] : f16) inner_dims_pos = [0, 1] inner_tiles = [16, 16] into %[[EA]] : tensor<40x48xf16> -> tensor<3x3x16x16xf16>
// CHECK-NEXT:    %[[EB:.*]] = tensor.empty() : tensor<3x4x16x16xf16>
// CHECK-NEXT:    %[[PB:.*]] = tile.pack %b inner_dims_pos = [0, 1] inner_tiles = [16, 16] into %[[EB]] : tensor<48x64xf16> -> tensor<3x4x16x16xf16>
// CHECK-NEXT:    %[[EC:.*]] = tensor.empty() : tensor<3x4x16x16xf32>
// CHECK-NEXT:    %[[FC:.*]] = linalg.fill ins(%zero : f32) outs(%[[EC]] : tensor<3x4x16x16xf32>) -> tensor<3x4x16x16xf32>
// CHECK-NEXT:    %[[MM:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d2, d1, d5, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d3, d4)>], iterator_types = ["parallel", "parallel", "reduction", "parallel", "parallel", "reduction"]} ins(%[[PA]], %[[PB]] : tensor<3x3x16x16xf16>, tensor<3x4x16x16xf16>) outs(%[[FC]] : tensor<3x4x16x16xf32>)
// CHECK:         %[[EY:.*]] = tensor.empty() : tensor<40x64xf32>
// CHECK-NEXT:    %[[Y:.*]] = tile.unpack %[[MM]] inner_dims_pos = [0, 1] inner_tiles = [16, 16] into %[[EY]] : tensor<3x4x16x16xf32> -> tensor<40x64xf32>
// CHECK-NEXT:    func.return %[[Y]] : tensor<40x64xf32>
func.func @matmul(%a: tensor<40x48xf16>, %b: tensor<48x64xf16>) -> tensor<40x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<40x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<40x64xf32>) -> tensor<40x64xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<40x48xf16>, tensor<48x64xf16>) outs(%acc : tensor<40x64xf32>) {
  ^bb0(%x: f16, %w: f16, %s: f32):
    %ex = arith.extf %x : f16 to f32
    %ew = arith.extf %w : f16 to f32
    %p = arith.mulf %ex, %ew : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<40x64xf32>
  func.return %y : tensor<40x64xf32>
}

// -----

// Between two matmuls the truncf runs on the blocks (the unpack sinks below it) and
// pack(unpack(x)) cancels: the second matmul reads the first one's blocks.
// CHECK-LABEL: func.func @chain(
// CHECK:         %[[M1:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x2x16x16xf16>, tensor<2x2x16x16xf16>)
// CHECK:         %[[T:.*]] = linalg.generic {{.*}} ins(%[[M1]] : tensor<2x2x16x16xf32>) outs(%{{.*}} : tensor<2x2x16x16xf16>)
// CHECK:           arith.truncf
// CHECK-NOT:     tile.unpack
// CHECK:         linalg.generic {{.*}} ins(%[[T]], %{{.*}} : tensor<2x2x16x16xf16>, tensor<2x2x16x16xf16>)
// CHECK:         tile.unpack
// CHECK-NOT:     tile.unpack
func.func @chain(%a: tensor<32x32xf16>, %b: tensor<32x32xf16>, %c: tensor<32x32xf16>) -> tensor<32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<32x32xf32>) -> tensor<32x32xf32>
  %m1 = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<32x32xf16>, tensor<32x32xf16>) outs(%acc : tensor<32x32xf32>) {
  ^bb0(%x: f16, %w: f16, %s: f32):
    %ex = arith.extf %x : f16 to f32
    %ew = arith.extf %w : f16 to f32
    %p = arith.mulf %ex, %ew : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<32x32xf32>
  %e16 = tensor.empty() : tensor<32x32xf16>
  %h = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%m1 : tensor<32x32xf32>) outs(%e16 : tensor<32x32xf16>) {
  ^bb0(%v: f32, %o: f16):
    %r = arith.truncf %v : f32 to f16
    linalg.yield %r : f16
  } -> tensor<32x32xf16>
  %m2 = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%h, %c : tensor<32x32xf16>, tensor<32x32xf16>) outs(%acc : tensor<32x32xf32>) {
  ^bb0(%x: f16, %w: f16, %s: f32):
    %ex = arith.extf %x : f16 to f32
    %ew = arith.extf %w : f16 to f32
    %p = arith.mulf %ex, %ew : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<32x32xf32>
  func.return %m2 : tensor<32x32xf32>
}

// -----

// Not matmul-like (a matrix-vector product has no N dim): left alone.
// CHECK-LABEL: func.func @matvec(
// CHECK-NOT:     tile.pack
func.func @matvec(%a: tensor<32x32xf32>, %v: tensor<32xf32>, %acc: tensor<32xf32>) -> tensor<32xf32> {
  %y = linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (k)>, affine_map<(i, k) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%a, %v : tensor<32x32xf32>, tensor<32xf32>) outs(%acc : tensor<32xf32>) {
  ^bb0(%x: f32, %w: f32, %s: f32):
    %p = arith.mulf %x, %w : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<32xf32>
  func.return %y : tensor<32xf32>
}

// -----

// Loop-level (memref) contractions are not the tensor level's: left alone.
// CHECK-LABEL: func.func @on_memrefs(
// CHECK-NOT:     tile.pack
// CHECK:         linalg.generic {{.*}} ins(%a, %b : memref<32x32xf16>, memref<32x32xf16>) outs(%c : memref<32x32xf32>)
func.func @on_memrefs(%a: memref<32x32xf16>, %b: memref<32x32xf16>, %c: memref<32x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<32x32xf16>, memref<32x32xf16>) outs(%c : memref<32x32xf32>) {
  ^bb0(%x: f16, %w: f16, %s: f32):
    %ex = arith.extf %x : f16 to f32
    %ew = arith.extf %w : f16 to f32
    %p = arith.mulf %ex, %ew : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  }
  func.return
}
