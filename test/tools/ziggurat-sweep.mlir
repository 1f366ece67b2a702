// ziggurat-sweep: a 2x2 grid over davinci's L1 size and cube shape on a GEMM + relu, each point
// compiled, run with timing and checked against the graph interpreter; the table, CSV and JSON;
// a bad key or value is one diagnostic naming the point, before anything runs.
// RUN: rm -rf %t && ziggurat-sweep %s --machine davinci --set memory.l1.capacity=512KiB,1MiB --set 'matrix.shape=[16,16,16],[32,32,16]' --jobs 2 -o %t 2>&1 | filecheck %s --check-prefix=TABLE
// RUN: filecheck %s --check-prefix=CSV < %t/sweep.csv
// RUN: filecheck %s --check-prefix=JSON < %t/sweep.json
// RUN: not ziggurat-sweep %s --machine davinci --set memory.l1.capacity=512KiB,lots 2>&1 | filecheck %s --check-prefix=BAD-VALUE
// RUN: not ziggurat-sweep %s --machine davinci --set memory.l9.capacity=1MiB 2>&1 | filecheck %s --check-prefix=BAD-KEY
// RUN: not ziggurat-sweep %s --machine davinci --set memory.l1.capacity 2>&1 | filecheck %s --check-prefix=BAD-SET

func.func @main(%a: tensor<128x256xf16>, %b: tensor<256x128xf16>) -> tensor<128x128xf16> {
  %c = graph.matmul %a, %b : (tensor<128x256xf16>, tensor<256x128xf16>) -> tensor<128x128xf16>
  %r = graph.relu %c : tensor<128x128xf16>
  func.return %r : tensor<128x128xf16>
}

// TABLE:      model {{ +}}memory.l1.capacity  matrix.shape  cycles {{ +}}time (us)  numerics
// TABLE-NEXT: ziggurat-sweep  512KiB {{ +}}[16, 16, 16] {{ +}}[[SMALL:[0-9,]+]] {{ +}}{{[0-9.]+}} {{ +}}ok
// TABLE-NEXT: ziggurat-sweep  512KiB {{ +}}[32, 32, 16] {{ +}}[[LARGE:[0-9,]+]] {{ +}}{{[0-9.]+}} {{ +}}ok
// TABLE-NEXT: ziggurat-sweep  1MiB {{ +}}[16, 16, 16] {{ +}}[[SMALL]] {{ +}}{{[0-9.]+}} {{ +}}ok
// TABLE-NEXT: ziggurat-sweep  1MiB {{ +}}[32, 32, 16] {{ +}}[[LARGE]] {{ +}}{{[0-9.]+}} {{ +}}ok

// CSV:      model,memory.l1.capacity,matrix.shape,cycles,microseconds,numerics,max_abs_error,error
// CSV-NEXT: ziggurat-sweep,512KiB,"[16, 16, 16]",{{[0-9.]+}},{{[0-9.]+}},ok,{{[0-9.e-]+}},
// CSV-COUNT-3: ziggurat-sweep,{{.*}},ok,

// JSON:     "grid": {
// JSON:       "memory.l1.capacity": [
// JSON:       "matrix.shape": [

// BAD-VALUE: error: machine point capacity=lots: 'capacity' in [memory.l1] must be a size like "512 KiB"
// BAD-KEY:   error: machine point capacity=1MiB: [memory.l9] is missing
// BAD-SET:   error: argument --set: expected KEY=V1,V2 with KEY a dotted path such as memory.l1.capacity
