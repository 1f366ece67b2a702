// A gather at a constant run of indices computes what its slice and reshape compute: both run on
// the same seeded inputs and print the same numbers.
// RUN: ziggurat-run %s --seed 2 --print > %t.gather
// RUN: ziggurat-opt %s -p graph-canonicalize > %t.slice.mlir
// RUN: ziggurat-run %t.slice.mlir --seed 2 --print > %t.slice
// RUN: diff %t.gather %t.slice
// RUN: filecheck %s --input-file %t.slice.mlir

// CHECK-NOT: graph.gather
func.func @main(%x: tensor<2x6x3xf32>, %z: tensor<3x4xi32>, %q: tensor<3x5x1x8xf32>)
    -> (tensor<2x2x2x3xf32>, tensor<3x2xi32>, tensor<5x1x8xf32>) {
  %k = graph.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  %y = graph.gather %x, %k {axis = 1 : i64} : (tensor<2x6x3xf32>, tensor<2x2xi64>) -> tensor<2x2x2x3xf32>
  %k2 = graph.constant dense<[-2, -1]> : tensor<2xi32>
  %y2 = graph.gather %z, %k2 {axis = -1 : i64} : (tensor<3x4xi32>, tensor<2xi32>) -> tensor<3x2xi32>
  %k3 = graph.constant dense<2> : tensor<i64>
  %y3 = graph.gather %q, %k3 : (tensor<3x5x1x8xf32>, tensor<i64>) -> tensor<5x1x8xf32>
  func.return %y, %y2, %y3 : tensor<2x2x2x3xf32>, tensor<3x2xi32>, tensor<5x1x8xf32>
}
