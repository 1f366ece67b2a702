// RUN: ziggurat-opt %s -p 'graph-fuse,graph-to-tile,tile-and-fuse{machine=davinci}' | filecheck %s
// RUN: ziggurat-opt %s -p 'graph-fuse,graph-to-tile,tile-and-fuse{machine=davinci},tile-decompose-conv,tile-vectorize{machine=davinci},canonicalize,tile-to-loop{machine=davinci}' | filecheck %s --check-prefix=LOOP

// A relu fused with a channel shuffle (ShuffleNet: relu, reshape, transpose, reshape)
// is read by the group's last op through a reshape, so the transpose's tile loop
// cannot compute it: it is tiled on its own (its 1x112x56x56 f16 would not fit
// davinci's ub whole), and the buffer between them, too large for one tile, is global.
// CHECK-LABEL: func.func @relu_shuffle(
// CHECK:         scf.for
// CHECK:           arith.maximumf
// CHECK:         tensor.expand_shape
// CHECK:         linalg.transpose
// LOOP-LABEL: func.func @relu_shuffle(
// LOOP:         memref.alloc() : memref<1x112x56x56xf16, "gm">
// LOOP-NOT:     memref.alloc() : memref<1x112x56x56xf16>
func.func @relu_shuffle(%x: tensor<1x112x56x56xf16>) -> tensor<1x112x56x56xf16> {
  %r = graph.relu %x : tensor<1x112x56x56xf16>
  %a = graph.reshape %r : tensor<1x112x56x56xf16> -> tensor<1x4x28x56x56xf16>
  %t = graph.transpose %a {perm = array<i64: 0, 2, 1, 3, 4>} : tensor<1x4x28x56x56xf16> -> tensor<1x28x4x56x56xf16>
  %y = graph.reshape %t : tensor<1x28x4x56x56xf16> -> tensor<1x112x56x56xf16>
  func.return %y : tensor<1x112x56x56xf16>
}
