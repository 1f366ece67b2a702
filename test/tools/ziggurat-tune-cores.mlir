// ziggurat-tune --cores N tunes for N cores, as lower-to-npu{cores=N} divides each layer's tiles
// among them: the heuristic's tile for N cores is the default, each candidate tile also comes split
// until the layer has a tile per core (the split is searched with the tile), and every candidate is
// lowered for N cores and timed running on them. The cache keeps one core's and N cores' schedules
// apart ("davinci x32" in the key). A 1x1 conv of ResNet-50's fourth stage on davinci's 32 cores:
// the winner lowers and runs right on 32 cores.
// RUN: rm -f %t.cache.json
// RUN: ziggurat-tune %s --machine davinci --cores 32 --jobs 1 --top-k 2 --bufferings '' --no-stage --cache %t.cache.json -o %t.mlir 2>&1 | filecheck %s --check-prefix=LOG
// RUN: filecheck %s --check-prefix=CACHE < %t.cache.json
// RUN: ziggurat-run %s --outputs %t.graph.npz
// RUN: ziggurat-opt %t.mlir -p 'lower-to-npu{machine=davinci cores=32}' | ziggurat-run - --machine davinci --cores 32 --expect %t.graph.npz | filecheck %s --check-prefix=LOWERED
// One core's tuning is not served from the 32 cores' cache entries: it measures.
// RUN: ziggurat-tune %s --machine davinci --jobs 1 --top-k 2 --bufferings '' --no-stage --cache %t.cache.json -o %t.one.mlir 2>&1 | filecheck %s --check-prefix=ONE
// RUN: not ziggurat-tune %s --machine davinci --cores 33 2>&1 | filecheck %s --check-prefix=BAD-CORES
// RUN: not ziggurat-tune %s --machine davinci --cores 0 2>&1 | filecheck %s --check-prefix=BAD-CORES-0

// LOG:      tune: [{{[0-9]+}}/{{[0-9]+}}] conv2d:{{[0-9]+}} default: {{[0-9,]+}} cycles
// LOG:      group {{ +}}default cycles {{ +}}tuned cycles
// LOG-NEXT: conv2d:{{[0-9]+}} {{ +}}{{[0-9,]+}} {{ +}}{{[0-9,]+}} {{ +}}{{[0-9.]+}}x

// CACHE: "v{{[0-9]+}}|davinci x32|conv2d|

// LOWERED: result0: bfloat16[1, 1024, 14, 14] {{.*}} ok{{$}}

// ONE:      tune: [{{[0-9]+}}/{{[0-9]+}}] conv2d:{{[0-9]+}} default: {{[0-9,]+}} cycles
// ONE-NOT:  (cached)

// BAD-CORES: error: --cores 33: machine 'davinci' has 32 cores (give 1 to 32)
// BAD-CORES-0: error: --cores 0: machine 'davinci' has 32 cores (give 1 to 32)

func.func @main(%x: tensor<1x256x14x14xbf16>, %w: tensor<1024x256x1x1xbf16>) -> tensor<1x1024x14x14xbf16> {
  %y = graph.conv2d %x, %w : (tensor<1x256x14x14xbf16>, tensor<1024x256x1x1xbf16>) -> tensor<1x1024x14x14xbf16>
  func.return %y : tensor<1x1024x14x14xbf16>
}
