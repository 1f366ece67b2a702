// Every npu op prints in its custom form and round-trips through it and through the generic form.
// RUN: ziggurat-opt %s | ziggurat-opt | filecheck %s
// RUN: ziggurat-opt %s --print-op-generic | ziggurat-opt | filecheck %s

func.func @all_ops(%gm: memref<64x256xf16, "gm">, %out: memref<16x16xf32, "gm">) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  // CHECK: %l1 = npu.buffer offset 0 : memref<2x16x256xf16, "l1">
  %l1 = npu.buffer offset 0 : memref<2x16x256xf16, "l1">
  %a = npu.buffer offset 0 : memref<16x16xf16, "l0a">
  %b = npu.buffer offset 0 : memref<16x16xf16, "l0b">
  %c = npu.buffer offset 0 : memref<16x16xf32, "l0c">
  %ub = npu.buffer offset 0 : memref<16x16xf32, "ub">
  %h = npu.buffer offset 1024 : memref<16x16xf16, "ub">
  %m = npu.buffer offset 2048 : memref<16x16xi8, "ub">
  %r = npu.buffer offset 4096 : memref<16xf32, "ub">
  scf.for %i = %c0 to %c64 step %c16 {
    // CHECK: npu.dma "mte2" %gm[%i, 0] -> %l1[1, 0, 0] {shape = array<i64: 16, 256>} : memref<64x256xf16, "gm"> -> memref<2x16x256xf16, "l1">
    npu.dma "mte2" %gm[%i, 0] -> %l1[1, 0, 0] {shape = array<i64: 16, 256>} : memref<64x256xf16, "gm"> -> memref<2x16x256xf16, "l1">
  }
  // CHECK-NEXT: }
  // CHECK-NEXT: npu.set_flag "mte2" -> "mte1", 0
  // CHECK-NEXT: npu.wait_flag "mte2" -> "mte1", 0
  npu.set_flag "mte2" -> "mte1", 0
  npu.wait_flag "mte2" -> "mte1", 0
  // CHECK-NEXT: npu.dma "mte1" %l1[0, 0, 16] -> %a[0, 0] {shape = array<i64: 14, 16>, src_strides = array<i64: 256, 1>, dst_strides = array<i64: 16, 1>, pad = array<i64: 1, 1, 0, 0>, pad_value = -1.000000e+00 : f64, transpose} : memref<2x16x256xf16, "l1"> -> memref<16x16xf16, "l0a">
  npu.dma "mte1" %l1[0, 0, 16] -> %a[0, 0] {shape = array<i64: 14, 16>, src_strides = array<i64: 256, 1>, dst_strides = array<i64: 16, 1>, pad = array<i64: 1, 1, 0, 0>, pad_value = -1.0 : f64, transpose} : memref<2x16x256xf16, "l1"> -> memref<16x16xf16, "l0a">
  // CHECK-NEXT: npu.mma %a[0, 0], %b[0, 0] -> %c[0, 0] {m = 16 : i64, n = 16 : i64, k = 16 : i64, accumulate} : memref<16x16xf16, "l0a">, memref<16x16xf16, "l0b"> -> memref<16x16xf32, "l0c">
  npu.mma %a[0, 0], %b[0, 0] -> %c[0, 0] {m = 16 : i64, n = 16 : i64, k = 16 : i64, accumulate} : memref<16x16xf16, "l0a">, memref<16x16xf16, "l0b"> -> memref<16x16xf32, "l0c">
  // CHECK-NEXT: npu.mma %a[0, 0], %b[0, 0] -> %c[0, 0] {m = 16 : i64, n = 16 : i64, k = 16 : i64} :
  npu.mma %a[0, 0], %b[0, 0] -> %c[0, 0] {m = 16 : i64, n = 16 : i64, k = 16 : i64} : memref<16x16xf16, "l0a">, memref<16x16xf16, "l0b"> -> memref<16x16xf32, "l0c">
  // CHECK-NEXT: npu.vec.add %ub[0, 0], %ub[8, 0] -> %ub[0, 0] {repeat = 2 : i64, mask = 64 : i64, stride = array<i64: 64, 64, 64>} : memref<16x16xf32, "ub">, memref<16x16xf32, "ub"> -> memref<16x16xf32, "ub">
  npu.vec.add %ub[0, 0], %ub[8, 0] -> %ub[0, 0] {repeat = 2 : i64, mask = 64 : i64, stride = array<i64: 64, 64, 64>} : memref<16x16xf32, "ub">, memref<16x16xf32, "ub"> -> memref<16x16xf32, "ub">
  // CHECK-NEXT: npu.vec.mul %ub[0, 0], %ub[0, 0] -> %ub[0, 0] : memref<16x16xf32, "ub">, memref<16x16xf32, "ub"> -> memref<16x16xf32, "ub">
  npu.vec.mul %ub[0, 0], %ub[0, 0] -> %ub[0, 0] : memref<16x16xf32, "ub">, memref<16x16xf32, "ub"> -> memref<16x16xf32, "ub">
  // CHECK-NEXT: npu.vec.max %ub[0, 0], %ub[0, 0] -> %ub[0, 0] {mask = 16 : i64}
  npu.vec.max %ub[0, 0], %ub[0, 0] -> %ub[0, 0] {mask = 16 : i64} : memref<16x16xf32, "ub">, memref<16x16xf32, "ub"> -> memref<16x16xf32, "ub">
  // CHECK-NEXT: npu.vec.min %ub[0, 0], %ub[0, 0] -> %ub[0, 0] :
  npu.vec.min %ub[0, 0], %ub[0, 0] -> %ub[0, 0] : memref<16x16xf32, "ub">, memref<16x16xf32, "ub"> -> memref<16x16xf32, "ub">
  // CHECK-NEXT: npu.vec.sub %ub[0, 0], %ub[0, 0] -> %ub[0, 0] :
  npu.vec.sub %ub[0, 0], %ub[0, 0] -> %ub[0, 0] : memref<16x16xf32, "ub">, memref<16x16xf32, "ub"> -> memref<16x16xf32, "ub">
  // CHECK-NEXT: npu.vec.div %ub[0, 0], %ub[0, 0] -> %ub[0, 0] :
  npu.vec.div %ub[0, 0], %ub[0, 0] -> %ub[0, 0] : memref<16x16xf32, "ub">, memref<16x16xf32, "ub"> -> memref<16x16xf32, "ub">
  // CHECK-NEXT: npu.vec.adds %ub[0, 0] -> %ub[0, 0] {scalar = 5.000000e-01 : f64} : memref<16x16xf32, "ub"> -> memref<16x16xf32, "ub">
  npu.vec.adds %ub[0, 0] -> %ub[0, 0] {scalar = 0.5 : f64} : memref<16x16xf32, "ub"> -> memref<16x16xf32, "ub">
  // CHECK-NEXT: npu.vec.muls %ub[0, 0] -> %ub[0, 0] {scalar = -2.000000e+00 : f64, repeat = 4 : i64} :
  npu.vec.muls %ub[0, 0] -> %ub[0, 0] {scalar = -2.0 : f64, repeat = 4 : i64} : memref<16x16xf32, "ub"> -> memref<16x16xf32, "ub">
  // CHECK-NEXT: npu.vec.dup %ub[0, 0] {scalar = 0.000000e+00 : f64, repeat = 4 : i64} : memref<16x16xf32, "ub">
  npu.vec.dup %ub[0, 0] {scalar = 0.0 : f64, repeat = 4 : i64} : memref<16x16xf32, "ub">
  // CHECK-NEXT: npu.vec.exp %ub[0, 0] -> %ub[0, 0] : memref<16x16xf32, "ub"> -> memref<16x16xf32, "ub">
  npu.vec.exp %ub[0, 0] -> %ub[0, 0] : memref<16x16xf32, "ub"> -> memref<16x16xf32, "ub">
  // CHECK-NEXT: npu.vec.rsqrt %ub[0, 0] -> %ub[0, 0] :
  npu.vec.rsqrt %ub[0, 0] -> %ub[0, 0] : memref<16x16xf32, "ub"> -> memref<16x16xf32, "ub">
  // CHECK-NEXT: npu.vec.relu %ub[%c0, 0] -> %ub[0, 0] :
  npu.vec.relu %ub[%c0, 0] -> %ub[0, 0] : memref<16x16xf32, "ub"> -> memref<16x16xf32, "ub">
  // CHECK-NEXT: npu.vec.cast %ub[0, 0] -> %h[0, 0] {repeat = 2 : i64} : memref<16x16xf32, "ub"> -> memref<16x16xf16, "ub">
  npu.vec.cast %ub[0, 0] -> %h[0, 0] {repeat = 2 : i64} : memref<16x16xf32, "ub"> -> memref<16x16xf16, "ub">
  // CHECK-NEXT: npu.vec.reduce "max" %ub[0, 0] -> %r[0] {repeat = 16 : i64, mask = 16 : i64, stride = array<i64: 16, 1>} : memref<16x16xf32, "ub"> -> memref<16xf32, "ub">
  npu.vec.reduce "max" %ub[0, 0] -> %r[0] {repeat = 16 : i64, mask = 16 : i64, stride = array<i64: 16, 1>} : memref<16x16xf32, "ub"> -> memref<16xf32, "ub">
  // CHECK-NEXT: npu.vec.broadcast %r[0] -> %ub[0, 0] {repeat = 16 : i64, mask = 16 : i64, stride = array<i64: 1, 16>} : memref<16xf32, "ub"> -> memref<16x16xf32, "ub">
  npu.vec.broadcast %r[0] -> %ub[0, 0] {repeat = 16 : i64, mask = 16 : i64, stride = array<i64: 1, 16>} : memref<16xf32, "ub"> -> memref<16x16xf32, "ub">
  // CHECK-NEXT: npu.vec.select %m[0, 0], %ub[0, 0], %ub[0, 0] -> %ub[0, 0] : memref<16x16xi8, "ub">, memref<16x16xf32, "ub">, memref<16x16xf32, "ub"> -> memref<16x16xf32, "ub">
  npu.vec.select %m[0, 0], %ub[0, 0], %ub[0, 0] -> %ub[0, 0] : memref<16x16xi8, "ub">, memref<16x16xf32, "ub">, memref<16x16xf32, "ub"> -> memref<16x16xf32, "ub">
  // CHECK-NEXT: %core = npu.core_id
  // CHECK-NEXT: %cores = npu.num_cores
  %core = npu.core_id
  %cores = npu.num_cores
  // CHECK-NEXT: %n = npu.load %m[3, %core] : memref<16x16xi8, "ub"> -> i8
  %n = npu.load %m[3, %core] : memref<16x16xi8, "ub"> -> i8
  // CHECK-NEXT: npu.barrier{{$}}
  npu.barrier
  // CHECK-NEXT: npu.barrier "v"
  npu.barrier "v"
  // CHECK-NEXT: npu.sync_cores{{$}}
  npu.sync_cores
  // CHECK-NEXT: npu.dma "fixpipe" %c[0, 0] -> %out[0, 0] {shape = array<i64: 16, 16>} : memref<16x16xf32, "l0c"> -> memref<16x16xf32, "gm">
  npu.dma "fixpipe" %c[0, 0] -> %out[0, 0] {shape = array<i64: 16, 16>} : memref<16x16xf32, "l0c"> -> memref<16x16xf32, "gm">
  func.return
}
