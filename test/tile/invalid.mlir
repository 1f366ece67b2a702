// One chunk per verifier rule of the tile dialect.
// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics

func.func @bitcast_shape(%x: tensor<2x4xui8>) {
  // expected-error@+1 {{source and result must have the same shape, got tensor<2x4xui8> and tensor<8xi8>}}
  %s = tile.bitcast %x : tensor<2x4xui8> to tensor<8xi8>
  func.return
}

// -----

func.func @bitcast_width(%x: tensor<4xi1>) {
  // expected-error@+1 {{element types must be integers or floats of the same bit width, got i1 and i8}}
  %s = tile.bitcast %x : tensor<4xi1> to tensor<4xi8>
  func.return
}
