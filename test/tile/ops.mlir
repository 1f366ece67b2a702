// RUN: ziggurat-opt %s | ziggurat-opt | filecheck %s

// tile ops print back as written.
// CHECK-LABEL: func.func @bitcast(
// CHECK-NEXT:    %s = tile.bitcast %x : tensor<2x4xui8> to tensor<2x4xi8>
// CHECK-NEXT:    %h = tile.bitcast %y : tensor<3xf16> to tensor<3xi16>
// CHECK-NEXT:    func.return %s, %h : tensor<2x4xi8>, tensor<3xi16>
func.func @bitcast(%x: tensor<2x4xui8>, %y: tensor<3xf16>) -> (tensor<2x4xi8>, tensor<3xi16>) {
  %s = tile.bitcast %x : tensor<2x4xui8> to tensor<2x4xi8>
  %h = tile.bitcast %y : tensor<3xf16> to tensor<3xi16>
  func.return %s, %h : tensor<2x4xi8>, tensor<3xi16>
}
