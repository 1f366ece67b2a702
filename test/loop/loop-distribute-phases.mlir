// A group whose later part reads what its earlier part wrote (a space-to-depth: the input cast into
// a scratch buffer, then rearranged from it) runs in phases: each part divided among the cores on
// its own, npu.sync_cores between them, where one core ran the whole group. The scratch buffer,
// written in one phase and read in the next, stays one buffer for all cores; compiled for 4
// cores, the program gives the graph interpreter's result without a race.
// RUN: ziggurat-opt %s -p 'graph-fuse,graph-to-tile,tile-and-fuse{machine=davinci cores=4},tile-decompose-conv,tile-vectorize{machine=davinci},canonicalize,tile-to-loop{machine=davinci},loop-distribute{machine=davinci cores=4}' | filecheck %s
// RUN: ziggurat-run %s --outputs %t.graph.npz
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=davinci cores=4}' | ziggurat-run - --machine davinci --cores 4 --expect %t.graph.npz --report text | filecheck %s --check-prefix=NUMBERS

// CHECK:       func.func @main
// CHECK-NEXT:    %[[CORE:.*]] = npu.core_id
// The cast, one channel on each of cores 0-2.
// CHECK:         arith.cmpi ult, %[[CORE]], %{{.*}} : index
// CHECK-NEXT:    arith.muli %[[CORE]]
// CHECK:         scf.if
// CHECK:           linalg.generic
// CHECK:         npu.sync_cores
// The rearrangement, from the core after the cast's last: r = (core + 1) mod 4.
// CHECK:         arith.remui
// CHECK:         scf.if
// CHECK:           linalg.transpose
// CHECK-NOT:     npu.sync_cores
// CHECK:         func.return

// NUMBERS: result0: bfloat16[1, 12, 8, 8] {{.*}} ok{{$}}
// NUMBERS: per core       min    mean     max
// NUMBERS-NEXT: mte2 {{ +[1-9][0-9]?\.[0-9]%}}

func.func @main(%x: tensor<1x3x16x16xf32>) -> tensor<1x12x8x8xbf16> {
  %c = graph.cast %x : tensor<1x3x16x16xf32> -> tensor<1x3x16x16xbf16>
  %r = graph.reshape %c : tensor<1x3x16x16xbf16> -> tensor<1x3x8x2x8x2xbf16>
  %t = graph.transpose %r {perm = array<i64: 0, 1, 3, 5, 2, 4>} : tensor<1x3x8x2x8x2xbf16> -> tensor<1x3x2x2x8x8xbf16>
  %y = graph.reshape %t : tensor<1x3x2x2x8x8xbf16> -> tensor<1x12x8x8xbf16>
  func.return %y : tensor<1x12x8x8xbf16>
}
