// ziggurat-tune measures the winner's tile sizes in the other order of their tile loops too.
// A GEMM 256x1024 by K 64 tiled M128 N256 (K whole): tile-and-fuse nests M outside, so the
// lhs tile stays across the inner N loop and each step loads an rhs tile; with N outside
// (`tile.interchange = [1, 0]`) the rhs tile stays and the smaller lhs tile moves, which is
// faster here, so the tuned IR carries the order, and lowers and runs right.
// RUN: ziggurat-tune %s --machine davinci --jobs 1 --top-k 1 --bufferings '' -o %t.mlir 2>&1 | filecheck %s --check-prefix=LOG
// RUN: filecheck %s --check-prefix=IR < %t.mlir
// RUN: ziggurat-run %s --outputs %t.graph.npz
// RUN: ziggurat-opt %t.mlir -p 'lower-to-npu{machine=davinci}' | ziggurat-run - --machine davinci --expect %t.graph.npz | filecheck %s --check-prefix=LOWERED

func.func @main(%a: tensor<256x64xf16>, %b: tensor<64x1024xf16>) -> tensor<256x1024xf16> {
  %c = graph.matmul %a, %b : (tensor<256x64xf16>, tensor<64x1024xf16>) -> tensor<256x1024xf16>
  %r = graph.relu %c : tensor<256x1024xf16>
  func.return %r : tensor<256x1024xf16>
}

// LOG:      tune: [1/2] matmul_relu:{{[0-9]+}} default: [[DEFAULT:[0-9,]+]] cycles
// LOG-NEXT: tune: [2/2] matmul_relu:{{[0-9]+}} default interchange [1, 0]: [[SWAPPED:[0-9,]+]] cycles
// LOG:      matmul_relu:{{[0-9]+}} {{ +}}[[DEFAULT]] {{ +}}[[SWAPPED]] {{.*}}[128, 256, 64], interchange [1, 0]

// IR:       graph.matmul %a, %b {tile.sizes = array<i64: 128, 256, 64>, tile.interchange = array<i64: 1, 0>}
// LOWERED:  result0: {{.*}}  ok{{$}}
