// tile-to-loop bufferizes in destination-passing style: results become %resultN
// arguments, slices become subviews, an insert_slice of a value computed for it
// disappears (the value is computed into the destination's subview), tensor
// iter_args disappear, and nothing is copied that need not be.
// RUN: ziggurat-opt %s --split-input-file -p "tile-to-loop{machine=davinci}" | filecheck %s

// A tiled matmul + relu as tile-and-fuse writes it (docs/lowering.md, section 2).
// CHECK-LABEL: func.func @matmul_relu(%A: memref<256x512xf16, "gm">, %B: memref<512x256xf16, "gm">, %result0: memref<256x256xf16, "gm">) {
// CHECK:         scf.for %i = %c0 to %c256 step %c128 {
// CHECK-NEXT:      %[[ACC:.*]] = memref.alloc() : memref<128x256xf32>
// CHECK-NEXT:      linalg.fill ins(%cst : f32) outs(%[[ACC]] : memref<128x256xf32>)
// CHECK-NEXT:      scf.for %k = %c0 to %c512 step %c64 {
// CHECK-NEXT:        %[[AS:.*]] = memref.subview %A[%i, %k] [128, 64] [1, 1] : memref<256x512xf16, "gm"> to memref<128x64xf16, strided<[512, 1], offset: ?>, "gm">
// CHECK-NEXT:        %[[BS:.*]] = memref.subview %B[%k, 0] [64, 256] [1, 1] : memref<512x256xf16, "gm"> to memref<64x256xf16, strided<[256, 1], offset: ?>, "gm">
// CHECK-NEXT:        linalg.generic {{.*}} ins(%[[AS]], %[[BS]] : {{.*}}) outs(%[[ACC]] : memref<128x256xf32>) {
// CHECK:             linalg.yield
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[T:.*]] = memref.alloc() : memref<128x256xf16>
// CHECK-NEXT:      linalg.generic {{.*}} ins(%[[ACC]] : memref<128x256xf32>) outs(%[[T]] : memref<128x256xf16>) {
// CHECK:           %[[OUT:.*]] = memref.subview %result0[%i, 0] [128, 256] [1, 1] : memref<256x256xf16, "gm"> to memref<128x256xf16, strided<[256, 1], offset: ?>, "gm">
// CHECK-NEXT:      linalg.generic {{.*}} ins(%[[T]] : memref<128x256xf16>) outs(%[[OUT]] : memref<128x256xf16, strided<[256, 1], offset: ?>, "gm">) {
// CHECK-NOT:     loop.copy
// CHECK-NOT:     tensor
// CHECK:         func.return
// CHECK-NEXT:  }
func.func @matmul_relu(%A: tensor<256x512xf16>, %B: tensor<512x256xf16>) -> tensor<256x256xf16> {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  %cst = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<256x256xf16>
  %r = scf.for %i = %c0 to %c256 step %c128 iter_args(%o = %init) -> (tensor<256x256xf16>) {
    %e = tensor.empty() : tensor<128x256xf32>
    %zero = linalg.fill ins(%cst : f32) outs(%e : tensor<128x256xf32>) -> tensor<128x256xf32>
    %acc = scf.for %k = %c0 to %c512 step %c64 iter_args(%a = %zero) -> (tensor<128x256xf32>) {
      %as = tensor.extract_slice %A[%i, %k] [128, 64] [1, 1] : tensor<256x512xf16> to tensor<128x64xf16>
      %bs = tensor.extract_slice %B[%k, 0] [64, 256] [1, 1] : tensor<512x256xf16> to tensor<64x256xf16>
      %m = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%as, %bs : tensor<128x64xf16>, tensor<64x256xf16>) outs(%a : tensor<128x256xf32>) {
      ^bb0(%x: f16, %y: f16, %z: f32):
        %xe = arith.extf %x : f16 to f32
        %ye = arith.extf %y : f16 to f32
        %p = arith.mulf %xe, %ye : f32
        %s = arith.addf %p, %z : f32
        linalg.yield %s : f32
      } -> tensor<128x256xf32>
      scf.yield %m : tensor<128x256xf32>
    }
    %e1 = tensor.empty() : tensor<128x256xf16>
    %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%acc : tensor<128x256xf32>) outs(%e1 : tensor<128x256xf16>) {
    ^bb0(%x: f32, %y: f16):
      %tr = arith.truncf %x : f32 to f16
      linalg.yield %tr : f16
    } -> tensor<128x256xf16>
    %e2 = tensor.empty() : tensor<128x256xf16>
    %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<128x256xf16>) outs(%e2 : tensor<128x256xf16>) {
    ^bb0(%x: f16, %y0: f16):
      %zf = arith.constant 0.0 : f16
      %mx = arith.maximumf %x, %zf : f16
      linalg.yield %mx : f16
    } -> tensor<128x256xf16>
    %n = tensor.insert_slice %y into %o[%i, 0] [128, 256] [1, 1] : tensor<128x256xf16> into tensor<256x256xf16>
    scf.yield %n : tensor<256x256xf16>
  }
  func.return %r : tensor<256x256xf16>
}

// -----

// A padded convolution: the pad is a padding loop.copy into a global buffer
// (outside any loop), the conv accumulates straight into %result0.
// CHECK-LABEL: func.func @conv(%x: memref<1x4x6x6xf32, "gm">, %w: memref<8x4x3x3xf32, "gm">, %result0: memref<1x8x6x6xf32, "gm">) {
// CHECK-NEXT:    %[[P:.*]] = memref.alloc() : memref<1x4x8x8xf32, "gm">
// CHECK-NEXT:    loop.copy %x -> %[[P]] {pad = array<i64: 0, 0, 0, 0, 1, 1, 1, 1>, pad_value = 0.000000e+00 : f64} : memref<1x4x6x6xf32, "gm"> -> memref<1x4x8x8xf32, "gm">
// CHECK-NEXT:    %{{.*}} = arith.constant
// CHECK-NEXT:    linalg.fill ins(%{{.*}} : f32) outs(%result0 : memref<1x8x6x6xf32, "gm">)
// CHECK-NEXT:    linalg.conv_2d_nchw_fchw {{.*}} ins(%[[P]], %w : memref<1x4x8x8xf32, "gm">, memref<8x4x3x3xf32, "gm">) outs(%result0 : memref<1x8x6x6xf32, "gm">)
// CHECK-NEXT:    func.return
func.func @conv(%x: tensor<1x4x6x6xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32> {
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    %z = arith.constant 0.0 : f32
    tensor.yield %z : f32
  } : tensor<1x4x6x6xf32> to tensor<1x4x8x8xf32>
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x6x6xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  %c = linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) outs(%f : tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  func.return %c : tensor<1x8x6x6xf32>
}

// -----

// Reshapes are views; a strided slice is copied to a row-major buffer before it
// is collapsed. A returned argument is copied to its %resultN.
// CHECK-LABEL: func.func @reshape(%x: memref<2x3x4xi32, "gm">, %result0: memref<6x4xi32, "gm">, %result1: memref<2x3x2x2xi32, "gm">, %result2: memref<2xi32, "gm">, %result3: memref<2x3x4xi32, "gm">) {
// CHECK-NEXT:    %[[C:.*]] = memref.collapse_shape %x {{\[}}[0 : i64, 1 : i64], [2 : i64]] : memref<2x3x4xi32, "gm"> into memref<6x4xi32, "gm">
// CHECK-NEXT:    %[[E:.*]] = memref.expand_shape %x {{\[}}[0 : i64], [1 : i64], [2 : i64, 3 : i64]] output_shape [2, 3, 2, 2] : memref<2x3x4xi32, "gm"> into memref<2x3x2x2xi32, "gm">
// CHECK-NEXT:    %[[S:.*]] = memref.subview %x[0, 1, 2] [2, 1, 1] [1, 1, 1] : memref<2x3x4xi32, "gm"> to memref<2x1x1xi32, strided<[12, 4, 1], offset: 6>, "gm">
// CHECK-NEXT:    %[[R:.*]] = memref.alloc() : memref<2x1x1xi32, "gm">
// CHECK-NEXT:    loop.copy %[[S]] -> %[[R]]
// CHECK-NEXT:    %[[V:.*]] = memref.collapse_shape %[[R]]
// CHECK-NEXT:    loop.copy %[[C]] -> %result0
// CHECK-NEXT:    loop.copy %[[E]] -> %result1
// CHECK-NEXT:    loop.copy %[[V]] -> %result2
// CHECK-NEXT:    loop.copy %x -> %result3
// CHECK-NEXT:    func.return
func.func @reshape(%x: tensor<2x3x4xi32>) -> (tensor<6x4xi32>, tensor<2x3x2x2xi32>, tensor<2xi32>, tensor<2x3x4xi32>) {
  %c = tensor.collapse_shape %x [[0, 1], [2]] : tensor<2x3x4xi32> into tensor<6x4xi32>
  %e = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [2, 3, 2, 2] : tensor<2x3x4xi32> into tensor<2x3x2x2xi32>
  %s = tensor.extract_slice %x[0, 1, 2] [2, 1, 1] [1, 1, 1] : tensor<2x3x4xi32> to tensor<2x1x1xi32>
  %v = tensor.collapse_shape %s [[0, 1, 2]] : tensor<2x1x1xi32> into tensor<2xi32>
  func.return %c, %e, %v, %x : tensor<6x4xi32>, tensor<2x3x2x2xi32>, tensor<2xi32>, tensor<2x3x4xi32>
}

// -----

// Constants: a splat of a whole tensor outside tile loops (weights exported as
// ConstantOfShape) is a read-only global like any other constant, not a fill of a
// buffer that would have to fit the vector unit's memory; a splat inside a tile
// loop is a fill of its (small) buffer.
// CHECK:       "memref.global"() <{sym_name = "[[G:constant[0-9]+]]", type = memref<1000x2048xf32, "gm">, initial_value = dense<1.000000e+00> : tensor<1000x2048xf32>, {{.*}}constant}>
// CHECK-LABEL: func.func @splat_weights(
// CHECK:         %[[W:.*]] = memref.get_global @[[G]] : memref<1000x2048xf32, "gm">
// CHECK-NOT:     linalg.fill
// CHECK:         scf.for
// CHECK:           linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : memref<16xf32>)
// CHECK:         loop.copy %[[W]] -> %result0
func.func @splat_weights(%x: tensor<4x1024xf32>) -> (tensor<1000x2048xf32>, tensor<4x1024xf32>) {
  %w = arith.constant dense<1.0> : tensor<1000x2048xf32>
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c1024 = arith.constant 1024 : index
  %r = scf.for %i = %c0 to %c1024 step %c16 iter_args(%acc = %x) -> (tensor<4x1024xf32>) {
    %ones = arith.constant dense<2.0> : tensor<16xf32>
    %e = tensor.empty() : tensor<4x16xf32>
    %b = linalg.broadcast ins(%ones : tensor<16xf32>) outs(%e : tensor<4x16xf32>) dimensions = [0]
    %u = tensor.insert_slice %b into %acc[0, %i] [4, 16] [1, 1] : tensor<4x16xf32> into tensor<4x1024xf32>
    scf.yield %u : tensor<4x1024xf32>
  }
  func.return %w, %r : tensor<1000x2048xf32>, tensor<4x1024xf32>
}

// -----

// A splat constant of one group is filled where that group first uses it, not
// where the constant sits (the top of the function): its buffer is live only
// from there.
// CHECK-LABEL: func.func @fill_at_first_use(
// CHECK:         linalg.generic {{.*}} attrs =  {tile.group = "first"}
// CHECK:         %[[B:.*]] = memref.alloc() : memref<16xf32>
// CHECK-NEXT:    %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT:    linalg.fill ins(%[[TWO]] : f32) outs(%[[B]] : memref<16xf32>)
// CHECK-NEXT:    linalg.generic {{.*}} ins(%{{.*}}, %[[B]] : memref<16xf32, "gm">, memref<16xf32>) outs(%result0 : memref<16xf32, "gm">) attrs =  {tile.group = "second"}
func.func @fill_at_first_use(%x: tensor<16xf32>) -> tensor<16xf32> {
  %b = arith.constant dense<2.0> : tensor<16xf32>
  %e = tensor.empty() : tensor<16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) attrs = {tile.group = "first"} {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<16xf32>
  %e2 = tensor.empty() : tensor<16xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%r, %b : tensor<16xf32>, tensor<16xf32>) outs(%e2 : tensor<16xf32>) attrs = {tile.group = "second"} {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<16xf32>
  func.return %s : tensor<16xf32>
}
