// npu-plan-memory{reuse=false}: every buffer gets bytes of its own, even where the space is short.
// RUN: ziggurat-opt %s --verify-diagnostics -p 'npu-plan-memory{machine=davinci reuse=false}'

func.func @short(%X: memref<64x1024xf16, "gm">, %Y: memref<64x1024xf16, "gm">) {
  %x = memref.alloc() : memref<64x1024xf16, "ub">
  %y = memref.alloc() : memref<64x1024xf16, "ub">
  // expected-error@+1 {{buffer %z of 131072 bytes does not fit in 'ub' (capacity 262144 bytes on machine 'davinci'): live with it are %x (131072 bytes at [0, 131072)), %y (131072 bytes at [131072, 262144)); 393216 bytes in all}}
  %z = memref.alloc() : memref<64x1024xf16, "ub">
  npu.dma "mte2" %X[0, 0] -> %x[0, 0] {shape = array<i64: 64, 1024>} : memref<64x1024xf16, "gm"> -> memref<64x1024xf16, "ub">
  npu.vec.relu %x[0, 0] -> %y[0, 0] {repeat = 512 : i64} : memref<64x1024xf16, "ub"> -> memref<64x1024xf16, "ub">
  npu.vec.relu %y[0, 0] -> %z[0, 0] {repeat = 512 : i64} : memref<64x1024xf16, "ub"> -> memref<64x1024xf16, "ub">
  npu.dma "mte3" %z[0, 0] -> %Y[0, 0] {shape = array<i64: 64, 1024>} : memref<64x1024xf16, "ub"> -> memref<64x1024xf16, "gm">
  func.return
}
