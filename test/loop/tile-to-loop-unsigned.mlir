// Buffers hold signless integers, as arith computes on them: a ui8 argument or result becomes a
// memref of i8 that says, in its `ziggurat.element_type` argument attribute, how callers read and
// write it, and a tile.bitcast between the readings of one width is the same buffer.
// RUN: ziggurat-opt %s -p "tile-to-loop{machine=davinci}" | filecheck %s
// Numerics: the loop level reads and writes the ui8 arguments as the tensor level does.
// RUN: ziggurat-run %s --function complement --save-inputs %t.in.npz --outputs %t.ref.npz
// RUN: ziggurat-opt %s -p "tile-to-loop{machine=davinci}" | ziggurat-run - --function complement --inputs %t.in.npz --expect %t.ref.npz --rtol 0 --atol 0

// A uint8 image in, its uint8 complement out (graph-to-tile's lowering of a Sub on uint8).
// CHECK-LABEL: func.func @complement(%x: memref<1x16xi8, "gm"> {ziggurat.element_type = ui8}, %result0: memref<1x16xi8, "gm"> {ziggurat.element_type = ui8}) {
// CHECK-NOT:     tile.bitcast
// CHECK:         linalg.generic {{.*}} ins(%x : memref<1x16xi8, "gm">) outs(%result0 : memref<1x16xi8, "gm">)
// CHECK:         func.return
func.func @complement(%x: tensor<1x16xui8>) -> tensor<1x16xui8> {
  %s = tile.bitcast %x : tensor<1x16xui8> to tensor<1x16xi8>
  %e = tensor.empty() : tensor<1x16xi8>
  %c = arith.constant -1 : i8
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<1x16xi8>) outs(%e : tensor<1x16xi8>) {
  ^bb0(%a: i8, %b: i8):
    %d = arith.subi %c, %a : i8
    linalg.yield %d : i8
  } -> tensor<1x16xi8>
  %u = tile.bitcast %y : tensor<1x16xi8> to tensor<1x16xui8>
  func.return %u : tensor<1x16xui8>
}

// Signless and float boundaries keep no attribute.
// CHECK-LABEL: func.func @signless(%x: memref<4xi8, "gm">, %result0: memref<4xi8, "gm">) {
func.func @signless(%x: tensor<4xi8>) -> tensor<4xi8> {
  func.return %x : tensor<4xi8>
}
