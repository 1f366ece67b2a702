// RUN: ziggurat-opt %s -p 'graph-fuse,graph-to-tile,tile-and-fuse{machine=davinci}' | filecheck %s
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=davinci}' | filecheck %s --check-prefix=NPU

// A matmul of a 1x32x128 activation (a transformer's MLP) has two M dims, the unit
// batch of the sequence and its rows: the unit dim is tiled 1 and the rows are the
// matrix unit's M, so the weight is tiled (whole, 128x512 f16 is 128 KiB: davinci's
// l0b holds 64 KiB).
// CHECK-LABEL: func.func @mlp_up(
// CHECK:         scf.for
// CHECK:           tensor.extract_slice %w[{{.*}}] : tensor<128x512xf16> to tensor<{{[0-9]+}}x{{[0-9]+}}xf16>
// NPU-LABEL: func.func @mlp_up(
// NPU-NOT:     memref<128x512xf16, "l0b">
// NPU:         npu.mma
func.func @mlp_up(%x: tensor<1x32x128xf16>, %w: tensor<128x512xf16>) -> tensor<1x32x512xf16> {
  %y = graph.matmul %x, %w : (tensor<1x32x128xf16>, tensor<128x512xf16>) -> tensor<1x32x512xf16>
  func.return %y : tensor<1x32x512xf16>
}

// Rows in two non-unit dims (4 planes of 16 rows) tile the outer one by 1: each tile is
// one plane, a row-major tile for the matrix unit.
// CHECK-LABEL: func.func @planes(
// CHECK:         scf.for
// CHECK:           tensor.extract_slice %x[%{{.*}}, 0, {{.*}}] [1, 16, {{[0-9]+}}] [1, 1, 1] : tensor<4x16x256xf16> to tensor<1x16x{{[0-9]+}}xf16>
// NPU-LABEL: func.func @planes(
// NPU:         npu.mma
func.func @planes(%x: tensor<4x16x256xf16>, %w: tensor<256x512xf16>) -> tensor<4x16x512xf16> {
  %y = graph.matmul %x, %w : (tensor<4x16x256xf16>, tensor<256x512xf16>) -> tensor<4x16x512xf16>
  func.return %y : tensor<4x16x512xf16>
}
