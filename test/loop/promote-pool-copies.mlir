// The program's own copies outside fusion groups (a concat's parts, moved within global
// memory through ub) do not share staging buffers with each other, only the chunks of one
// copy do: DenseNet's 58 concat parts shared one 1x20x56x56 ub buffer, which then lived
// from the first concat to the last, across every layer between, and ub overflowed in
// npu-plan-memory. Each part is 1x40x56x56 f16 (245 KB), two 20-channel chunks.
// RUN: ziggurat-opt %s -p 'loop-promote-to-memory-space{machine=davinci},loop-legalize-copies{machine=davinci}' | filecheck %s
// RUN: ziggurat-run %s --function two_parts --seed 4 --print > %t.before
// RUN: ziggurat-opt %s -p 'loop-promote-to-memory-space{machine=davinci},loop-legalize-copies{machine=davinci}' | ziggurat-run - --function two_parts --seed 4 --print > %t.after
// RUN: diff %t.before %t.after

// CHECK-LABEL: func.func @two_parts(
// CHECK-NEXT:    %[[UB_A:.*]] = memref.alloc() : memref<1x20x56x56xf16, "ub">
// CHECK-NEXT:    %[[UB_B:.*]] = memref.alloc() : memref<1x20x56x56xf16, "ub">
// CHECK:         loop.copy_async %{{.*}} -> %[[UB_A]]
// CHECK:         loop.copy_async %[[UB_A]] -> %{{.*}}
// CHECK:         loop.copy_async %{{.*}} -> %[[UB_A]]
// CHECK:         loop.copy_async %[[UB_A]] -> %{{.*}}
// CHECK:         loop.copy_async %{{.*}} -> %[[UB_B]]
// CHECK:         loop.copy_async %[[UB_B]] -> %{{.*}}
// CHECK:         loop.copy_async %{{.*}} -> %[[UB_B]]
// CHECK:         loop.copy_async %[[UB_B]] -> %{{.*}}
// CHECK-NEXT:    loop.wait
// CHECK-NEXT:    func.return
func.func @two_parts(%a: memref<1x40x56x56xf16, "gm">, %b: memref<1x40x56x56xf16, "gm">, %result0: memref<1x80x56x56xf16, "gm">) {
  %va = memref.subview %result0[0, 0, 0, 0] [1, 40, 56, 56] [1, 1, 1, 1] : memref<1x80x56x56xf16, "gm"> to memref<1x40x56x56xf16, strided<[250880, 3136, 56, 1]>, "gm">
  %vb = memref.subview %result0[0, 40, 0, 0] [1, 40, 56, 56] [1, 1, 1, 1] : memref<1x80x56x56xf16, "gm"> to memref<1x40x56x56xf16, strided<[250880, 3136, 56, 1], offset: 125440>, "gm">
  loop.copy %a -> %va : memref<1x40x56x56xf16, "gm"> -> memref<1x40x56x56xf16, strided<[250880, 3136, 56, 1]>, "gm">
  loop.copy %b -> %vb : memref<1x40x56x56xf16, "gm"> -> memref<1x40x56x56xf16, strided<[250880, 3136, 56, 1], offset: 125440>, "gm">
  func.return
}
