// tile-and-fuse{cores=N} splits a vector group's tile until it has N tiles; the innermost loop of
// its output keeps whole lanes, except where the group reduces its operands' innermost dim: a
// global pool's lanes run along the rows it sums, and its output's innermost dim (the channels)
// splits down to one. Of the splits on the way, the one whose busiest core has least to do wins,
// the larger tile on a tie. A RegNet SE block's pool (48 channels of 56x56): one core takes 6
// channels at a time; on 32 cores 24 cores take 2 channels each, where 8 cores took 6 and 24 none
// (48 tiles of one channel would give 16 cores two). On davinci 2,239 -> 659 cycles with the
// result written in place (tile-to-loop-expand-result.mlir).
// RUN: ziggurat-opt %s -p 'graph-to-tile,tile-and-fuse{machine=davinci cores=32}' | filecheck %s
// RUN: ziggurat-opt %s -p 'graph-to-tile,tile-and-fuse{machine=davinci}' | filecheck %s --check-prefix=ONE
// RUN: ziggurat-run %s --outputs %t.graph.npz
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=davinci cores=32}' | ziggurat-run - --machine davinci --cores 32 --expect %t.graph.npz | filecheck %s --check-prefix=NUMBERS

// CHECK: tensor.extract_slice %x[0, %{{.*}}, 0, 0] [1, 2, 56, 56] [1, 1, 1, 1] : tensor<1x48x56x56xf16> to tensor<1x2x56x56xf16>
// ONE:   tensor.extract_slice %x[0, %{{.*}}, 0, 0] [1, 6, 56, 56] [1, 1, 1, 1] : tensor<1x48x56x56xf16> to tensor<1x6x56x56xf16>

// NUMBERS: result0: float16[1, 48, 1, 1] {{.*}} ok{{$}}

func.func @main(%x: tensor<1x48x56x56xf16>) -> tensor<1x48x1x1xf16> {
  %y = graph.global_avg_pool %x : tensor<1x48x56x56xf16> -> tensor<1x48x1x1xf16>
  func.return %y : tensor<1x48x1x1xf16>
}
