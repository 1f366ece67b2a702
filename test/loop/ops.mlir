// The loop dialect's ops print as they parse, generic form included.
// RUN: ziggurat-opt %s | ziggurat-opt | filecheck %s
// RUN: ziggurat-opt %s --print-op-generic | ziggurat-opt | filecheck %s

// CHECK-LABEL: func.func @copies
func.func @copies(%a: memref<256x512xf16, "gm">, %l1: memref<128x64xf16, "l1">, %x: memref<4x4xf32>, %xp: memref<6x8xf16, "ub">) {
  %v = memref.subview %a[0, 64] [128, 64] [1, 1] : memref<256x512xf16, "gm"> to memref<128x64xf16, strided<[512, 1], offset: 64>, "gm">
  // CHECK: %{{.*}} = loop.copy_async %{{.*}} -> %{{.*}} : memref<128x64xf16, strided<[512, 1], offset: 64>, "gm"> -> memref<128x64xf16, "l1">
  %t = loop.copy_async %v -> %l1 : memref<128x64xf16, strided<[512, 1], offset: 64>, "gm"> -> memref<128x64xf16, "l1">
  // CHECK-NEXT: loop.wait %{{.*}} : !loop.token
  loop.wait %t : !loop.token
  // CHECK-NEXT: loop.copy %{{.*}} -> %{{.*}} {pad = array<i64: 1, 1, 2, 2>, pad_value = -1.000000e+00 : f64} : memref<4x4xf32> -> memref<6x8xf16, "ub">
  loop.copy %x -> %xp {pad = array<i64: 1, 1, 2, 2>, pad_value = -1.0 : f64} : memref<4x4xf32> -> memref<6x8xf16, "ub">
  // CHECK-NEXT: %{{.*}} = loop.copy_async %{{.*}} -> %{{.*}} {pad = array<i64: 1, 1, 2, 2>} : memref<4x4xf32> -> memref<6x8xf16, "ub">
  %t2 = loop.copy_async %x -> %xp {pad = array<i64: 1, 1, 2, 2>} : memref<4x4xf32> -> memref<6x8xf16, "ub">
  loop.wait %t2 : !loop.token
  func.return
}
