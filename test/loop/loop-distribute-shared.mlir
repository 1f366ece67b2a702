// Groups split differently among the cores, or that run on one core each (taking the cores in
// turn), read what another core wrote. Such a buffer (here the 1x1 conv's output, split by rows
// over the cores, which the pooling reads split by channels, and the pooled vector, which the
// matrix product reads on one core) is marked loop.shared_by_cores, and
// loop-promote-to-memory-space keeps it in global memory, which every core sees, instead of the
// writing core's unified buffer. Compiled for 2 cores, the program gives the graph interpreter's
// result (it gave zeros when such buffers stayed in one core's "ub").
// RUN: ziggurat-opt %s -p 'graph-fuse,graph-to-tile,tile-and-fuse{machine=davinci cores=2},tile-decompose-conv,tile-vectorize{machine=davinci},canonicalize,tile-to-loop{machine=davinci},loop-distribute{machine=davinci cores=2}' | filecheck %s
// RUN: ziggurat-opt %s -p 'graph-fuse,graph-to-tile,tile-and-fuse{machine=davinci cores=2},tile-decompose-conv,tile-vectorize{machine=davinci},canonicalize,tile-to-loop{machine=davinci},loop-distribute{machine=davinci cores=2},loop-promote-to-memory-space{machine=davinci}' | filecheck %s --check-prefix=PLACED
// RUN: ziggurat-run %s --outputs %t.graph.npz
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=davinci cores=2}' | ziggurat-run - --machine davinci --cores 2 --expect %t.graph.npz | filecheck %s --check-prefix=NUMBERS

// CHECK:       func.func @main
// CHECK:         memref.alloc() {loop.shared_by_cores} : memref<1x16x6x6xf16, "gm">
// CHECK:         memref.alloc() {loop.shared_by_cores} : memref<1x16xf16, "gm">
// CHECK:         npu.sync_cores
// CHECK:         npu.sync_cores
// CHECK:         scf.if

// PLACED:      memref.alloc() {loop.shared_by_cores} : memref<1x16xf16, "gm">

// NUMBERS: result0: float16[1, 10] {{.*}} ok{{$}}

func.func @main(%x: tensor<1x8x6x6xf16>) -> tensor<1x10xf16> {
  %w = graph.constant dense<[[[[0.1251]], [[0.3972]], [[0.2757]], [[-0.2748]], [[-0.1998]], [[0.3736]], [[-0.4947]], [[0.3212]]], [[[0.2971]], [[-0.0321]], [[-0.1970]], [[-0.2216]], [[-0.2451]], [[-0.0549]], [[0.0045]], [[0.0535]]], [[[0.4955]], [[0.2927]], [[0.1222]], [[0.4890]], [[-0.2847]], [[-0.3398]], [[0.1125]], [[-0.4561]]], [[[-0.4643]], [[0.0149]], [[-0.0338]], [[0.4172]], [[0.1292]], [[0.0141]], [[-0.0031]], [[-0.2525]]], [[[-0.4882]], [[-0.3076]], [[0.1920]], [[-0.2994]], [[-0.1305]], [[-0.4963]], [[0.3300]], [[-0.3455]]], [[[-0.2324]], [[0.3803]], [[0.0098]], [[0.3472]], [[0.1397]], [[0.2418]], [[-0.4085]], [[0.0411]]], [[[0.0078]], [[0.3713]], [[-0.1387]], [[0.0982]], [[-0.4407]], [[-0.1124]], [[-0.1770]], [[-0.3498]]], [[[0.3163]], [[-0.1206]], [[0.4787]], [[0.0900]], [[0.1051]], [[0.1380]], [[0.1765]], [[-0.3492]]], [[[-0.0597]], [[-0.2604]], [[-0.0975]], [[-0.4033]], [[0.4678]], [[-0.2850]], [[0.1718]], [[-0.1996]]], [[[0.3741]], [[0.1622]], [[-0.3684]], [[0.3451]], [[0.4449]], [[0.4039]], [[0.0697]], [[-0.3545]]], [[[-0.3075]], [[0.4279]], [[0.0523]], [[-0.3194]], [[0.3841]], [[0.1416]], [[0.0697]], [[-0.1237]]], [[[-0.0890]], [[-0.2605]], [[-0.4619]], [[0.3762]], [[-0.0323]], [[0.0476]], [[-0.1778]], [[0.2513]]], [[[-0.4748]], [[-0.1278]], [[-0.4696]], [[-0.3771]], [[0.4671]], [[0.1578]], [[-0.0718]], [[0.0237]]], [[[0.3728]], [[-0.1558]], [[0.0903]], [[0.1837]], [[-0.1446]], [[0.0191]], [[0.2652]], [[0.4092]]], [[[-0.3489]], [[0.4334]], [[-0.4948]], [[0.2530]], [[0.3105]], [[-0.3632]], [[-0.0811]], [[0.3153]]], [[[-0.4857]], [[0.1285]], [[0.2930]], [[0.0130]], [[0.2258]], [[-0.2736]], [[-0.3015]], [[-0.1369]]]]> : tensor<16x8x1x1xf16>
  %y = graph.conv2d %x, %w : (tensor<1x8x6x6xf16>, tensor<16x8x1x1xf16>) -> tensor<1x16x6x6xf16>
  %r = graph.relu %y : tensor<1x16x6x6xf16>
  %p = graph.global_avg_pool %r : tensor<1x16x6x6xf16> -> tensor<1x16x1x1xf16>
  %f = graph.flatten %p : tensor<1x16x1x1xf16> -> tensor<1x16xf16>
  %fc = graph.constant dense<[[-0.3206, -0.1539, 0.4481, 0.0733, -0.1599, -0.2285, 0.4520, -0.0555, 0.4804, 0.0155, 0.0212, 0.3965, 0.2428, 0.0807, -0.0734, 0.3782], [-0.0884, 0.4228, -0.4313, -0.0700, 0.0195, 0.4509, -0.2490, 0.3060, 0.1765, 0.2171, 0.1296, 0.4716, -0.1673, -0.1017, -0.2971, -0.4493], [-0.2871, 0.4155, 0.3402, -0.3876, 0.1038, -0.0208, 0.0947, 0.1593, -0.1933, 0.4614, -0.0342, 0.1281, 0.1352, -0.3161, -0.4381, -0.0885], [0.2640, 0.3152, 0.2300, -0.3868, 0.4134, 0.3020, 0.3777, 0.0233, 0.4156, -0.4533, -0.4697, -0.4798, -0.2472, -0.2514, -0.3125, 0.0671], [-0.4610, 0.0904, -0.3340, 0.1779, -0.4789, -0.1894, 0.4383, 0.0384, 0.3116, 0.1580, 0.1108, -0.3087, 0.0744, -0.4603, 0.3017, 0.4601], [0.3540, -0.4493, -0.1613, -0.1820, -0.3873, 0.1266, 0.2975, -0.1863, 0.3628, 0.2971, -0.3709, 0.2669, 0.3826, -0.3027, 0.0736, 0.1387], [0.1093, -0.4038, 0.1612, 0.1320, 0.3239, 0.3035, -0.1728, 0.2220, 0.3673, 0.3929, -0.3385, -0.4733, 0.1508, -0.2853, 0.0637, 0.4448], [-0.1207, -0.2472, -0.0435, 0.1572, -0.3989, -0.1194, -0.3663, 0.1624, 0.3306, -0.1231, -0.1283, 0.0395, -0.2849, -0.2526, -0.1701, -0.0426], [-0.4185, 0.2527, 0.0791, -0.2003, -0.4225, 0.2632, -0.3689, -0.3668, -0.3693, -0.4187, 0.4064, -0.2308, -0.1936, 0.3328, 0.1199, -0.3129], [-0.0652, 0.3839, -0.1246, 0.2109, -0.4032, 0.2273, 0.2765, 0.3258, 0.1742, -0.1293, -0.4358, 0.0188, 0.2575, -0.3092, -0.2338, 0.0361]]> : tensor<10x16xf16>
  %z = graph.gemm %f, %fc {trans_b = true} : (tensor<1x16xf16>, tensor<10x16xf16>) -> tensor<1x10xf16>
  func.return %z : tensor<1x10xf16>
}
