// ziggurat-tune's layout search on a max pool between the function's own transposes to
// and from NHWC: the pool is measured in NHWC too (its heuristic, and the winner's tile
// for its loops), then each transpose a change of layout needs; in NHWC the pool is
// faster and the transposes cancel, so the minimum cut converts it. The tuned IR lowers
// and computes what the input does (a maximum is exact: the outputs are the same).
// RUN: ziggurat-tune %s --machine davinci --jobs 1 --top-k 2 --bufferings '' -o %t.mlir 2>&1 | filecheck %s --check-prefix=LOG
// RUN: filecheck %s --check-prefix=IR < %t.mlir
// RUN: ziggurat-run %s --outputs %t.graph.npz
// RUN: ziggurat-opt %t.mlir -p 'lower-to-npu{machine=davinci}' | ziggurat-run - --machine davinci --expect %t.graph.npz | filecheck %s --check-prefix=LOWERED

func.func @main(%x: tensor<1x56x56x64xbf16>) -> tensor<1x28x28x64xbf16> {
  %t = graph.transpose %x {perm = array<i64: 0, 3, 1, 2>} : tensor<1x56x56x64xbf16> -> tensor<1x64x56x56xbf16>
  %p = graph.max_pool %t {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x64x56x56xbf16> -> tensor<1x64x28x28xbf16>
  %r = graph.transpose %p {perm = array<i64: 0, 2, 3, 1>} : tensor<1x64x28x28xbf16> -> tensor<1x28x28x64xbf16>
  func.return %r : tensor<1x28x28x64xbf16>
}

// LOG-DAG:  tune: [{{[0-9]+}}/{{[0-9]+}}] max_pool:{{[0-9]+}} NHWC default: {{[0-9,]+}} cycles
// LOG-DAG:  tune: [{{[0-9]+}}/{{[0-9]+}}] max_pool:{{[0-9]+}} NHWC 1x{{[0-9x]+}}: {{[0-9,]+}} cycles
// LOG-DAG:  tune: [{{[0-9]+}}] transpose tensor<1x64x56x56xbf16> default: {{[0-9,]+}} cycles
// LOG-DAG:  tune: [{{[0-9]+}}] transpose tensor<1x56x56x64xbf16> default: {{[0-9,]+}} cycles
// LOG:      group {{ +}}default cycles {{ +}}tuned cycles  speedup  layout, tile.sizes
// LOG:      max_pool:{{[0-9]+ +}}[[DEFAULT:[0-9,]+]] {{ +}}{{[0-9,]+}} {{ +}}{{[0-9.]+}}x  NHWC

// The pool in NHWC reads the argument and writes the result: no transpose is left.
// IR:       func.func @main(%x: tensor<1x56x56x64xbf16>) -> tensor<1x28x28x64xbf16> {
// IR-NEXT:    %{{.*}} = graph.max_pool %x {{{.*}}layout = "NHWC"{{.*}}} : tensor<1x56x56x64xbf16> -> tensor<1x28x28x64xbf16>
// IR-NEXT:    func.return
// IR-NOT:     graph.transpose

// LOWERED:  result0: {{.*}}  max abs error 0  {{.*}}  ok
