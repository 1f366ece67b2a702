// ziggurat-tune on a GEMM + relu: each measurement logged (not a terminal), the winner
// written as tile.sizes on the group's root, the cache making a second run measure
// nothing, the tuned IR lowering and running right; bad options are diagnostics.
// (ziggurat-tune is a console script: `make install` puts it on PATH.)
// RUN: rm -f %t.cache.json %t.compile-cache.json
// RUN: ziggurat-tune %s --machine davinci --jobs 1 --top-k 2 --bufferings 3 --no-stage --cache %t.cache.json -o %t.mlir 2>&1 | filecheck %s --check-prefix=LOG
// RUN: filecheck %s --check-prefix=IR < %t.mlir
// RUN: ziggurat-tune %s --machine davinci --jobs 1 --top-k 2 --bufferings 3 --no-stage --cache %t.cache.json -o %t.again.mlir 2>&1 | filecheck %s --check-prefix=CACHED
// RUN: diff %t.mlir %t.again.mlir
// RUN: ziggurat-run %s --outputs %t.graph.npz
// RUN: ziggurat-opt %t.mlir -p 'lower-to-npu{machine=davinci}' | ziggurat-run - --machine davinci --expect %t.graph.npz | filecheck %s --check-prefix=LOWERED
// Without --no-stage, both candidates (each tiles K) are measured again with their reduction staged.
// RUN: ziggurat-tune %s --machine davinci --jobs 1 --top-k 2 --bufferings '' -o %t.staged.mlir 2>&1 | filecheck %s --check-prefix=STAGED
// RUN: ziggurat-opt %t.staged.mlir -p 'lower-to-npu{machine=davinci}' | ziggurat-run - --machine davinci --expect %t.graph.npz | filecheck %s --check-prefix=LOWERED
// RUN: not ziggurat-tune %s --machine davinci --top-k 0 2>&1 | filecheck %s --check-prefix=BAD-K
// RUN: not ziggurat-tune %s --machine davinci --bufferings 2,0 2>&1 | filecheck %s --check-prefix=BAD-DEPTH
// RUN: not ziggurat-tune %t.missing.mlir --machine davinci 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not ziggurat-tune %s --machine davinci --cluster dask 2>&1 | filecheck %s --check-prefix=BAD-CLUSTER
// RUN: not ziggurat-tune %s --machine davinci --task-timeout 0 2>&1 | filecheck %s --check-prefix=BAD-TIMEOUT
// ziggurat-compile --tune: tunes the model's groups before lowering, then checks against onnxruntime.
// RUN: python %examples/models/mlp.py %t.mlp.onnx
// RUN: ziggurat-compile %t.mlp.onnx --machine davinci --tune %t.compile-cache.json --check 2>&1 | filecheck %s --check-prefix=COMPILE
// RUN: not ziggurat-compile %t.mlp.onnx --tune 2>&1 | filecheck %s --check-prefix=COMPILE-NO-MACHINE
// RUN: not ziggurat-compile %t.mlp.onnx --machine davinci --tune --cluster dask 2>&1 | filecheck %s --check-prefix=BAD-CLUSTER

func.func @main(%a: tensor<128x256xf16>, %b: tensor<256x128xf16>) -> tensor<128x128xf16> {
  %c = graph.matmul %a, %b : (tensor<128x256xf16>, tensor<256x128xf16>) -> tensor<128x128xf16>
  %r = graph.relu %c : tensor<128x128xf16>
  func.return %r : tensor<128x128xf16>
}

// The tile sizes first (the heuristic's and the best estimate), then the winner at depth 3.
// LOG:      tune: [{{[12]}}/3] matmul_relu:{{[0-9]+}} {{default|[0-9x]+}}: {{[0-9,]+}} cycles
// LOG:      tune: [{{[12]}}/3] matmul_relu:{{[0-9]+}} {{default|[0-9x]+}}: {{[0-9,]+}} cycles
// LOG:      tune: [3/3] matmul_relu:{{[0-9]+}} {{default|[0-9x]+}} buffering 3: {{[0-9,]+}} cycles
// LOG:      group {{ +}}default cycles {{ +}}tuned cycles
// LOG-NEXT: matmul_relu:{{[0-9]+}} {{ +}}[[DEFAULT:[0-9,]+]] {{ +}}{{[0-9,]+}} {{.*}}[{{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}]

// STAGED:      tune: [{{[12]}}/{{[0-9]+}}] matmul_relu:{{[0-9]+}} {{default|[0-9x]+}}: {{[0-9,]+}} cycles
// STAGED:      tune: [{{[12]}}/{{[0-9]+}}] matmul_relu:{{[0-9]+}} {{default|[0-9x]+}}: {{[0-9,]+}} cycles
// STAGED:      tune: [{{[34]}}/{{[0-9]+}}] matmul_relu:{{[0-9]+}} {{default|[0-9x]+}} staged: {{[0-9,]+}} cycles
// STAGED:      tune: [{{[34]}}/{{[0-9]+}}] matmul_relu:{{[0-9]+}} {{default|[0-9x]+}} staged: {{[0-9,]+}} cycles

// IR:       graph.matmul %a, %b {tile.sizes = array<i64: {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}>{{(, tile.buffering = 3 : i64)?}}}
// IR-NOT:   tile.tune_id

// CACHED-NOT: tune: [
// CACHED:     matmul_relu:{{[0-9]+}} {{.*}} (cached)

// LOWERED:    result0: {{.*}}  ok{{$}}
// BAD-K:      error: --top-k must be at least 1, got 0
// BAD-DEPTH:  buffering depths must be at least 1, got '2,0'
// MISSING:    error: cannot read '{{.*}}missing.mlir'
// BAD-CLUSTER: error: unknown --cluster 'dask': expected local, ray, ray://HOST:PORT or ray:HOST:PORT
// BAD-TIMEOUT: error: --task-timeout must be a positive number of seconds, got 0.0
// COMPILE:    tune: [{{[0-9]+}}/{{[0-9]+}}] gemm
// COMPILE:    check passed
// COMPILE-NO-MACHINE: error: --tune tunes for a machine: give --machine NAME
