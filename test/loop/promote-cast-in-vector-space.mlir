// A copy that casts from ub into ub (what a cast folded into a copy becomes once a fused op
// has moved its source into ub) is the vector unit's cast in place where both views start
// aligned; a slice at an odd offset (a concat's part at channel 136 of 7x7 planes, 16 bytes
// past a 32-byte boundary) is cast into a buffer of its own and moved by the DMA engines,
// which need no alignment, out to gm and back. Both keep the numbers.
// RUN: ziggurat-opt %s -p 'loop-promote-to-memory-space{machine=davinci},loop-legalize-copies{machine=davinci}' | filecheck %s
// RUN: ziggurat-run %s --function aligned --seed 1 --print > %t.aligned.before
// RUN: ziggurat-opt %s -p 'loop-promote-to-memory-space{machine=davinci},loop-legalize-copies{machine=davinci}' | ziggurat-run - --function aligned --seed 1 --print > %t.aligned.after
// RUN: diff %t.aligned.before %t.aligned.after
// RUN: ziggurat-run %s --function odd_slice --seed 1 --print > %t.odd.before
// RUN: ziggurat-opt %s -p 'loop-promote-to-memory-space{machine=davinci},loop-legalize-copies{machine=davinci}' | ziggurat-run - --function odd_slice --seed 1 --print > %t.odd.after
// RUN: diff %t.odd.before %t.odd.after

// CHECK-LABEL: func.func @aligned
// CHECK:         %[[V:.*]] = memref.subview %b[1, 0, 0]
// CHECK-NEXT:    linalg.generic {{.*}} ins(%a : memref<16x64xf32, "ub">) outs(%[[V]] : memref<16x64xbf16, strided<[64, 1], offset: 1024>, "ub">)
// CHECK:           arith.truncf
// CHECK-NOT:     "gm">
// CHECK:         loop.copy_async %b -> %result0
func.func @aligned(%x: memref<16x64xf32, "gm">, %result0: memref<2x16x64xbf16, "gm">) {
  %a = memref.alloc() : memref<16x64xf32, "ub">
  %b = memref.alloc() : memref<2x16x64xbf16, "ub">
  %t0 = loop.copy_async %x -> %a : memref<16x64xf32, "gm"> -> memref<16x64xf32, "ub">
  loop.wait %t0 : !loop.token
  %v = memref.subview %b[1, 0, 0] [1, 16, 64] [1, 1, 1] : memref<2x16x64xbf16, "ub"> to memref<16x64xbf16, strided<[64, 1], offset: 1024>, "ub">
  %t1 = loop.copy_async %a -> %v : memref<16x64xf32, "ub"> -> memref<16x64xbf16, strided<[64, 1], offset: 1024>, "ub">
  loop.wait %t1 : !loop.token
  %t2 = loop.copy_async %b -> %result0 : memref<2x16x64xbf16, "ub"> -> memref<2x16x64xbf16, "gm">
  loop.wait %t2 : !loop.token
  func.return
}

// CHECK-LABEL: func.func @odd_slice
// CHECK:         %[[V:.*]] = memref.subview %b[0, 136, 0, 0]
// CHECK-NEXT:    linalg.generic {{.*}} ins(%a : memref<1x8x7x7xf32, "ub">) outs(%[[C:.*]] : memref<1x8x7x7xbf16, "ub">)
// CHECK:           arith.truncf
// CHECK:         loop.copy_async %[[C]] -> %[[G:.*]] : memref<1x8x7x7xbf16, "ub"> -> memref<1x8x7x7xbf16, "gm">
// CHECK:         loop.copy_async %[[G]] -> %[[V]] : memref<1x8x7x7xbf16, "gm"> -> memref<1x8x7x7xbf16, strided<[7056, 49, 7, 1], offset: 6664>, "ub">
func.func @odd_slice(%x: memref<1x8x7x7xf32, "gm">, %result0: memref<1x144x7x7xbf16, "gm">) {
  %a = memref.alloc() : memref<1x8x7x7xf32, "ub">
  %b = memref.alloc() : memref<1x144x7x7xbf16, "ub">
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%b : memref<1x144x7x7xbf16, "ub">)
  %t0 = loop.copy_async %x -> %a : memref<1x8x7x7xf32, "gm"> -> memref<1x8x7x7xf32, "ub">
  loop.wait %t0 : !loop.token
  %v = memref.subview %b[0, 136, 0, 0] [1, 8, 7, 7] [1, 1, 1, 1] : memref<1x144x7x7xbf16, "ub"> to memref<1x8x7x7xbf16, strided<[7056, 49, 7, 1], offset: 6664>, "ub">
  %t1 = loop.copy_async %a -> %v : memref<1x8x7x7xf32, "ub"> -> memref<1x8x7x7xbf16, strided<[7056, 49, 7, 1], offset: 6664>, "ub">
  loop.wait %t1 : !loop.token
  %t2 = loop.copy_async %b -> %result0 : memref<1x144x7x7xbf16, "ub"> -> memref<1x144x7x7xbf16, "gm">
  loop.wait %t2 : !loop.token
  func.return
}
