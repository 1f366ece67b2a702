// One chunk per verifier rule of tile.pack / tile.unpack.
// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics

func.func @shape(%a: tensor<32x32xf16>, %e: tensor<2x2x16x8xf16>) {
  // expected-error@+1 {{packed type tensor<2x2x16x8xf16> does not match the layout: expected shape [2, 2, 16, 16]}}
  %p = tile.pack %a inner_dims_pos = [0, 1] inner_tiles = [16, 16] into %e : tensor<32x32xf16> -> tensor<2x2x16x8xf16>
  func.return
}

// -----

func.func @padding_needed(%a: tensor<20x32xf16>, %e: tensor<2x2x16x16xf16>) {
  // expected-error@+1 {{needs a padding_value: tile 16 does not divide dim 0 of size 20}}
  %p = tile.pack %a inner_dims_pos = [0, 1] inner_tiles = [16, 16] into %e : tensor<20x32xf16> -> tensor<2x2x16x16xf16>
  func.return
}

// -----

func.func @padding_type(%a: tensor<20x32xf16>, %e: tensor<2x2x16x16xf16>, %z: f32) {
  // expected-error@+1 {{padding_value is f32, the element type is f16}}
  %p = tile.pack %a padding_value(%z : f32) inner_dims_pos = [0, 1] inner_tiles = [16, 16] into %e : tensor<20x32xf16> -> tensor<2x2x16x16xf16>
  func.return
}

// -----

func.func @positions(%a: tensor<32x32xf16>, %e: tensor<32x2x16xf16>) {
  // expected-error@+1 {{inner_dims_pos [1, 1] must be distinct dims of a rank-2 tensor}}
  %p = tile.pack %a inner_dims_pos = [1, 1] inner_tiles = [16, 16] into %e : tensor<32x32xf16> -> tensor<32x2x16xf16>
  func.return
}

// -----

func.func @counts(%a: tensor<32x32xf16>, %e: tensor<32x2x16xf16>) {
  // expected-error@+1 {{inner_dims_pos has 1 dims but inner_tiles 2 sizes}}
  %p = tile.pack %a inner_dims_pos = [1] inner_tiles = [16, 16] into %e : tensor<32x32xf16> -> tensor<32x2x16xf16>
  func.return
}

// -----

func.func @perm(%p: tensor<2x2x16x16xf16>, %e: tensor<32x32xf16>) {
  // expected-error@+1 {{outer_dims_perm [0, 0] is not a permutation of 2 dims}}
  %u = tile.unpack %p outer_dims_perm = [0, 0] inner_dims_pos = [0, 1] inner_tiles = [16, 16] into %e : tensor<2x2x16x16xf16> -> tensor<32x32xf16>
  func.return
}

// -----

func.func @dynamic(%p: tensor<2x2x16x16xf16>, %e: tensor<?x32xf16>) {
  // expected-error@+1 {{shapes must be static, got tensor<?x32xf16> and tensor<2x2x16x16xf16>}}
  %u = tile.unpack %p inner_dims_pos = [0, 1] inner_tiles = [16, 16] into %e : tensor<2x2x16x16xf16> -> tensor<?x32xf16>
  func.return
}

// -----

func.func @element_type(%p: tensor<2x2x16x16xf16>, %e: tensor<32x32xf32>) {
  // expected-error@+1 {{element types differ: tensor<32x32xf32> and tensor<2x2x16x16xf16>}}
  %u = tile.unpack %p inner_dims_pos = [0, 1] inner_tiles = [16, 16] into %e : tensor<2x2x16x16xf16> -> tensor<32x32xf32>
  func.return
}
