// Inserts into one buffer that write the same elements keep their order: the part
// inserted second (%y, computed first) overlaps the first one (rows 2..3), so it is
// not computed into the destination ahead of the first insert; it is copied in at
// its insert, after the first part, and the program computes what the tensor one does.
// RUN: ziggurat-run %s --seed 4 --print > %t.tensor
// RUN: ziggurat-opt %s -p "tile-to-loop{machine=davinci}" > %t.loop.mlir
// RUN: ziggurat-run %t.loop.mlir --seed 4 --print | sed -e 's/memref<\(.*\), "gm">/tensor<\1>/' > %t.loop
// RUN: diff %t.tensor %t.loop
// RUN: filecheck %s --input-file %t.loop.mlir

// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[Y:.*]] = memref.alloc() : memref<4x4xi32, "gm">
// CHECK-NEXT:    linalg.generic {{.*}} ins(%b, %b : {{.*}}) outs(%[[Y]] : memref<4x4xi32, "gm">)
// CHECK:         %[[X:.*]] = memref.subview %result0[0, 0] [4, 4] [1, 1]
// CHECK-NEXT:    linalg.generic {{.*}} ins(%a, %a : {{.*}}) outs(%[[X]] :
// CHECK:         %[[AT:.*]] = memref.subview %result0[2, 0] [4, 4] [1, 1]
// CHECK-NEXT:    loop.copy %[[Y]] -> %[[AT]]
func.func @main(%a: tensor<4x4xi32>, %b: tensor<4x4xi32>) -> tensor<6x4xi32> {
  %ey = tensor.empty() : tensor<4x4xi32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%b, %b : tensor<4x4xi32>, tensor<4x4xi32>) outs(%ey : tensor<4x4xi32>) {
  ^bb0(%p: i32, %q: i32, %o: i32):
    %s = arith.muli %p, %q : i32
    linalg.yield %s : i32
  } -> tensor<4x4xi32>
  %ex = tensor.empty() : tensor<4x4xi32>
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %a : tensor<4x4xi32>, tensor<4x4xi32>) outs(%ex : tensor<4x4xi32>) {
  ^bb0(%p: i32, %q: i32, %o: i32):
    %s = arith.addi %p, %q : i32
    linalg.yield %s : i32
  } -> tensor<4x4xi32>
  %e = tensor.empty() : tensor<6x4xi32>
  %c0 = tensor.insert_slice %x into %e[0, 0] [4, 4] [1, 1] : tensor<4x4xi32> into tensor<6x4xi32>
  %c1 = tensor.insert_slice %y into %c0[2, 0] [4, 4] [1, 1] : tensor<4x4xi32> into tensor<6x4xi32>
  func.return %c1 : tensor<6x4xi32>
}
