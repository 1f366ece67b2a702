// RUN: ziggurat-opt %s --split-input-file -p 'graph-fuse,graph-to-tile,tile-and-fuse{sizes=32,64,16}' | filecheck %s
// RUN: ziggurat-opt %s --split-input-file -p 'graph-fuse,graph-to-tile,tile-and-fuse{sizes=32,64,16}' | ziggurat-opt --split-input-file | filecheck %s
// RUN: ziggurat-opt %s --split-input-file -p 'graph-fuse,graph-to-tile,tile-and-fuse{machine=davinci}' | filecheck %s --check-prefix=DAVINCI

// matmul + relu: the relu is tiled over rows (32 of 64) and columns (64, the whole
// 64: no loop), the matmul fused into the tile with its fill, its K (48) tiled by 16
// in an inner loop accumulating through iter_args.
// CHECK-LABEL: func.func @matmul_relu(
// CHECK:         %[[DEST:.*]] = tensor.empty() : tensor<64x64xf32>
// CHECK:         %{{.*}} = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[O:.*]] = %[[DEST]]) -> (tensor<64x64xf32>) {
// CHECK:           %[[F:.*]] = linalg.fill {{.*}} outs(%{{.*}} : tensor<32x64xf32>) -> tensor<32x64xf32>
// CHECK:           %[[ACC:.*]] = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %[[F]]) -> (tensor<32x64xf32>) {
// CHECK-NEXT:        %[[AS:.*]] = tensor.extract_slice %a[%[[I]], %[[K]]] [32, 16] [1, 1] : tensor<64x48xf32> to tensor<32x16xf32>
// CHECK-NEXT:        %[[BS:.*]] = tensor.extract_slice %b[%[[K]], 0] [16, 64] [1, 1] : tensor<48x64xf32> to tensor<16x64xf32>
// CHECK-NEXT:        %[[M:.*]] = linalg.matmul {{.*}} ins(%[[AS]], %[[BS]] : tensor<32x16xf32>, tensor<16x64xf32>) outs(%[[A]] : tensor<32x64xf32>) -> tensor<32x64xf32>
// CHECK-NEXT:        scf.yield %[[M]] : tensor<32x64xf32>
// CHECK-NEXT:      }
// CHECK:           %[[R:.*]] = linalg.generic {{.*}} ins(%[[ACC]] : tensor<32x64xf32>) outs(%{{.*}} : tensor<32x64xf32>)
// CHECK:             arith.maximumf
// CHECK:           %[[N:.*]] = tensor.insert_slice %[[R]] into %[[O]][%[[I]], 0] [32, 64] [1, 1] : tensor<32x64xf32> into tensor<64x64xf32>
// CHECK-NEXT:      scf.yield %[[N]] : tensor<64x64xf32>
// CHECK-NEXT:    }
// CHECK-NOT:     linalg.matmul
// DAVINCI-LABEL: func.func @matmul_relu(
// DAVINCI-NOT:   scf.for
// DAVINCI:       linalg.matmul
func.func @matmul_relu(%a: tensor<64x48xf32>, %b: tensor<48x64xf32>) -> tensor<64x64xf32> {
  %y = graph.matmul %a, %b : (tensor<64x48xf32>, tensor<48x64xf32>) -> tensor<64x64xf32>
  %r = graph.relu %y : tensor<64x64xf32>
  func.return %r : tensor<64x64xf32>
}

// -----

// conv 3x3 pad 1 + relu, f16, sizes over the conv's (n, o, oh, ow | c, kh, kw):
// rows of 4 of 10 are tiles at 0 (peeled: its pad is static, low 1), 4 (peeled: the
// last full tile) and the remainder 8 (high pad 1), each straight-line code; the
// conv reads each tile's halo (4 + 2 rows), its 16 input channels in an inner loop
// by 8 (the pad fused into it), the window whole. The tile.sizes attribute wins
// over the sizes option (and the machine).
// CHECK-LABEL: func.func @conv_relu(
// CHECK:         %[[DEST:.*]] = tensor.empty() : tensor<1x8x10x10xf16>
// CHECK:         %[[F0:.*]] = linalg.fill {{.*}} -> tensor<1x8x4x10xf32>
// CHECK:         %[[T0:.*]] = scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %[[F0]]) -> (tensor<1x8x4x10xf32>) {
// CHECK-NEXT:      %[[XS:.*]] = tensor.extract_slice %x[0, %[[C]], 0, 0] [1, 8, 5, 10] [1, 1, 1, 1] : tensor<1x16x10x10xf16> to tensor<1x8x5x10xf16>
// CHECK-NEXT:      %[[P:.*]] = tensor.pad %[[XS]] low[0, 0, 1, 1] high[0, 0, 0, 1] {
// CHECK:           } : tensor<1x8x5x10xf16> to tensor<1x8x6x12xf16>
// CHECK-NEXT:      %[[WS:.*]] = tensor.extract_slice %w[0, %[[C]], 0, 0] [8, 8, 3, 3] [1, 1, 1, 1] : tensor<8x16x3x3xf16> to tensor<8x8x3x3xf16>
// CHECK-NEXT:      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, (d2 + d5), (d3 + d6))>
// CHECK-SAME:        ins(%[[P]], %[[WS]] : tensor<1x8x6x12xf16>, tensor<8x8x3x3xf16>) outs(%[[A]] : tensor<1x8x4x10xf32>)
// CHECK:         arith.maximumf
// CHECK:         %[[D1:.*]] = tensor.insert_slice %{{.*}} into %[[DEST]][0, 0, 0, 0] [1, 8, 4, 10] [1, 1, 1, 1] : tensor<1x8x4x10xf16> into tensor<1x8x10x10xf16>
// CHECK:           tensor.extract_slice %x[0, %{{.*}}, 3, 0] [1, 8, 6, 10] [1, 1, 1, 1] : tensor<1x16x10x10xf16> to tensor<1x8x6x10xf16>
// CHECK-NEXT:      tensor.pad %{{.*}} low[0, 0, 0, 1] high[0, 0, 0, 1] {
// CHECK:         %[[D2:.*]] = tensor.insert_slice %{{.*}} into %[[D1]][0, 0, 4, 0] [1, 8, 4, 10] [1, 1, 1, 1]
// CHECK:           tensor.extract_slice %x[0, %{{.*}}, 7, 0] [1, 8, 3, 10] [1, 1, 1, 1] : tensor<1x16x10x10xf16> to tensor<1x8x3x10xf16>
// CHECK-NEXT:      tensor.pad %{{.*}} low[0, 0, 0, 1] high[0, 0, 1, 1] {
// CHECK:         %[[R:.*]] = tensor.insert_slice %{{.*}} into %[[D2]][0, 0, 8, 0] [1, 8, 2, 10] [1, 1, 1, 1] : tensor<1x8x2x10xf16> into tensor<1x8x10x10xf16>
// CHECK-NEXT:    func.return %[[R]]
// DAVINCI-LABEL: func.func @conv_relu(
// DAVINCI:       scf.for
func.func @conv_relu(%x: tensor<1x16x10x10xf16>, %w: tensor<8x16x3x3xf16>) -> tensor<1x8x10x10xf16> {
  %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, tile.sizes = array<i64: 1, 8, 4, 10, 8, 3, 3>} : (tensor<1x16x10x10xf16>, tensor<8x16x3x3xf16>) -> tensor<1x8x10x10xf16>
  %r = graph.relu %y : tensor<1x8x10x10xf16>
  func.return %r : tensor<1x8x10x10xf16>
}

// -----

// tile.interchange on the root nests its loop 1 (N) outside loop 0 (M), which the default
// nests the other way round; the reduction (48, whole) has no loop.
// CHECK-LABEL: func.func @matmul_interchange(
// CHECK:         scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK:           scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK-NEXT:        tensor.extract_slice %a[%[[I]], 0] [32, 48] [1, 1] : tensor<64x48xf16> to tensor<32x48xf16>
// CHECK-NEXT:        tensor.extract_slice %b[0, %[[J]]] [48, 48] [1, 1] : tensor<48x96xf16> to tensor<48x48xf16>
// CHECK:             tensor.insert_slice %{{.*}} into %{{.*}}[%[[I]], %[[J]]] [32, 48] [1, 1]
// DAVINCI-LABEL: func.func @matmul_interchange(
// DAVINCI:         scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// DAVINCI:           scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// DAVINCI:             tensor.insert_slice %{{.*}} into %{{.*}}[%[[I]], %[[J]]] [32, 48] [1, 1]
func.func @matmul_interchange(%a: tensor<64x48xf16>, %b: tensor<48x96xf16>) -> tensor<64x96xf16> {
  %y = graph.matmul %a, %b {tile.sizes = array<i64: 32, 48, 0>, tile.interchange = array<i64: 1, 0>} : (tensor<64x48xf16>, tensor<48x96xf16>) -> tensor<64x96xf16>
  %r = graph.relu %y : tensor<64x96xf16>
  func.return %r : tensor<64x96xf16>
}
