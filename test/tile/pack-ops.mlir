// RUN: ziggurat-opt %s | ziggurat-opt | filecheck %s
// RUN: ziggurat-run %s --seed 5 --print > %t.packed
// RUN: ziggurat-run %S/Inputs/pack-identity.mlir --seed 5 --print | diff - %t.packed

// tile.pack / tile.unpack print back as written (MLIR's tensor.pack syntax), and
// unpack(pack(x)) gives x back, padding dropped (the run lines compare with the identity).
// CHECK-LABEL: func.func @main(
// CHECK:         %p = tile.pack %a padding_value(%z : f16) inner_dims_pos = [0, 1] inner_tiles = [16, 16] into %e : tensor<40x24xf16> -> tensor<3x2x16x16xf16>
// CHECK:         %q = tile.pack %a padding_value(%z : f16) outer_dims_perm = [1, 0] inner_dims_pos = [1, 0] inner_tiles = [8, 16] into %e2 : tensor<40x24xf16> -> tensor<3x3x8x16xf16>
// CHECK:         %u = tile.unpack %q outer_dims_perm = [1, 0] inner_dims_pos = [1, 0] inner_tiles = [8, 16] into %u0 : tensor<3x3x8x16xf16> -> tensor<40x24xf16>
// CHECK:         %r = tile.unpack %p inner_dims_pos = [0, 1] inner_tiles = [16, 16] into %u1 : tensor<3x2x16x16xf16> -> tensor<40x24xf16>
func.func @main(%a: tensor<40x24xf16>) -> (tensor<40x24xf16>, tensor<40x24xf16>) {
  %z = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<3x2x16x16xf16>
  %p = tile.pack %a padding_value(%z : f16) inner_dims_pos = [0, 1] inner_tiles = [16, 16] into %e : tensor<40x24xf16> -> tensor<3x2x16x16xf16>
  %e2 = tensor.empty() : tensor<3x3x8x16xf16>
  %q = tile.pack %a padding_value(%z : f16) outer_dims_perm = [1, 0] inner_dims_pos = [1, 0] inner_tiles = [8, 16] into %e2 : tensor<40x24xf16> -> tensor<3x3x8x16xf16>
  %u0 = tensor.empty() : tensor<40x24xf16>
  %u = tile.unpack %q outer_dims_perm = [1, 0] inner_dims_pos = [1, 0] inner_tiles = [8, 16] into %u0 : tensor<3x3x8x16xf16> -> tensor<40x24xf16>
  %u1 = tensor.empty() : tensor<40x24xf16>
  %r = tile.unpack %p inner_dims_pos = [0, 1] inner_tiles = [16, 16] into %u1 : tensor<3x2x16x16xf16> -> tensor<40x24xf16>
  func.return %u, %r : tensor<40x24xf16>, tensor<40x24xf16>
}
