// tile-and-fuse{cores=N} splits a layer's output tile until it has N tiles, then grows the K tile
// into the room the smaller output tile left. A classifier GEMV (1x2048 by 2048x1000): alone, the
// widest output tile (1008 columns) leaves room for a K of 16 only; split over 32 cores into 32
// columns per core, K grows to 512, so each core runs 4 K steps instead of 128 (the light
// ResNet-50's classifier on 32 davinci cores: 31,947 -> 7,370 cycles). One core keeps its tile.
// RUN: ziggurat-opt %s -p 'graph-to-tile,tile-and-fuse{machine=davinci cores=32}' | filecheck %s
// RUN: ziggurat-opt %s -p 'graph-to-tile,tile-and-fuse{machine=davinci}' | filecheck %s --check-prefix=ONE
// RUN: ziggurat-run %s --outputs %t.graph.npz
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=davinci cores=32}' | ziggurat-run - --machine davinci --cores 32 --expect %t.graph.npz | filecheck %s --check-prefix=NUMBERS

// CHECK:      tensor.extract_slice %x[0, %{{.*}}] [1, 512] [1, 1] : tensor<1x2048xbf16> to tensor<1x512xbf16>
// CHECK-NEXT: tensor.extract_slice %w[%{{.*}}, %{{.*}}] [32, 512] [1, 1] : tensor<1000x2048xbf16> to tensor<32x512xbf16>
// The last 8 columns, a tile of their own.
// CHECK:      tensor.extract_slice %w[992, %{{.*}}] [8, 512] [1, 1] : tensor<1000x2048xbf16> to tensor<8x512xbf16>

// ONE:        tensor.extract_slice %w[0, %{{.*}}] [1000, 16] [1, 1] : tensor<1000x2048xbf16> to tensor<1000x16xbf16>

// NUMBERS: result0: bfloat16[1, 1000] {{.*}} ok{{$}}

func.func @main(%x: tensor<1x2048xbf16>, %w: tensor<1000x2048xbf16>, %b: tensor<1000xbf16>) -> tensor<1x1000xbf16> {
  %y = graph.gemm %x, %w, %b {trans_b = true} : (tensor<1x2048xbf16>, tensor<1000x2048xbf16>, tensor<1000xbf16>) -> tensor<1x1000xbf16>
  func.return %y : tensor<1x1000xbf16>
}
