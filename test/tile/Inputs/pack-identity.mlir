// The reference for pack-ops.mlir: the same inputs, returned twice.
func.func @main(%a: tensor<40x24xf16>) -> (tensor<40x24xf16>, tensor<40x24xf16>) {
  func.return %a, %a : tensor<40x24xf16>, tensor<40x24xf16>
}
