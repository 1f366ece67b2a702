// loop-distribute gives the tiles that not every core runs (iterations past a multiple of the
// cores, peeled straight-line tiles) to the cores in turn across the function. This 3x3 conv is
// tiled into two row blocks of four 64-channel tiles each (the first block peeled for its top
// padding): the first block's tiles go to cores 0-3, the second's to cores 4-7, where both
// went to cores 0-3 before. Compiled for 8 cores, the program gives the graph interpreter's result.
// RUN: ziggurat-opt %s -p 'graph-to-tile,tile-and-fuse{machine=davinci cores=8},tile-decompose-conv,tile-vectorize{machine=davinci},canonicalize,tile-to-loop{machine=davinci},loop-distribute{machine=davinci cores=8}' | filecheck %s
// RUN: ziggurat-run %s --outputs %t.graph.npz
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=davinci cores=8}' | ziggurat-run - --machine davinci --cores 8 --expect %t.graph.npz | filecheck %s --check-prefix=NUMBERS

// CHECK:       func.func @main
// CHECK-NEXT:    %[[CORE:.*]] = npu.core_id
// The first block: channel tile c on core c < 4.
// CHECK:         %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[STEP:.*]] = arith.constant 64 : index
// CHECK-NEXT:    %[[BASE:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[TAKES:.*]] = arith.cmpi ult, %[[CORE]], %[[FOUR]] : index
// CHECK-NEXT:    %[[SCALED:.*]] = arith.muli %[[CORE]], %[[STEP]] : index
// CHECK-NEXT:    arith.addi %[[SCALED]], %[[BASE]] : index
// CHECK-NEXT:    scf.if %[[TAKES]] {
// The second block: channel tile r on core 4 + r, r = (core + 4) mod 8 < 4.
// CHECK:         %[[BACK:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[CORES:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[SHIFTED:.*]] = arith.addi %[[CORE]], %[[BACK]] : index
// CHECK-NEXT:    %[[RANK:.*]] = arith.remui %[[SHIFTED]], %[[CORES]] : index
// CHECK-NEXT:    %[[FOUR2:.*]] = arith.constant 4 : index
// CHECK-NEXT:    %[[STEP2:.*]] = arith.constant 64 : index
// CHECK-NEXT:    %[[BASE2:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[TAKES2:.*]] = arith.cmpi ult, %[[RANK]], %[[FOUR2]] : index
// CHECK-NEXT:    %[[SCALED2:.*]] = arith.muli %[[RANK]], %[[STEP2]] : index
// CHECK-NEXT:    arith.addi %[[SCALED2]], %[[BASE2]] : index
// CHECK-NEXT:    scf.if %[[TAKES2]] {
// CHECK:         func.return

// NUMBERS: result0: float16[1, 256, 14, 14] {{.*}} ok{{$}}

func.func @main(%x: tensor<1x32x14x14xf16>, %w: tensor<256x32x3x3xf16>) -> tensor<1x256x14x14xf16> {
  %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x14x14xf16>, tensor<256x32x3x3xf16>) -> tensor<1x256x14x14xf16>
  func.return %y : tensor<1x256x14x14xf16>
}
