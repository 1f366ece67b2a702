// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics -p 'graph-layout{marked=true}' | filecheck %s
// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics -p 'graph-layout{layout=NHWC}' | filecheck %s --check-prefix=ALL

// With marked=true only the pool marked tile.layout = "NHWC" is converted; it keeps
// its other attributes (the schedule ziggurat-tune chose for it in that layout), and
// the transposes around it cancel with the function's own.
// CHECK-LABEL: func.func @marked
// CHECK-NEXT:    %[[P:.*]] = graph.max_pool %x {tile.sizes = array<i64: 1, 4, 8, 16>, {{.*}}layout = "NHWC"{{.*}}} : tensor<1x8x8x16xf32> -> tensor<1x8x8x16xf32>
// CHECK-NOT:     tile.layout
// CHECK-NEXT:    %[[T:.*]] = graph.transpose %[[P]] {perm = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:    %[[Q:.*]] = graph.max_pool %[[T]] {kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x16x8x8xf32>
// CHECK-NEXT:    graph.transpose %[[Q]] {perm = array<i64: 0, 2, 3, 1>}
// Without it, every spatial op is converted and no transpose is left.
// ALL-LABEL:   func.func @marked
// ALL-NOT:       graph.transpose
// ALL:           func.return
func.func @marked(%x: tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32> {
  %t = graph.transpose %x {perm = array<i64: 0, 3, 1, 2>} : tensor<1x8x8x16xf32> -> tensor<1x16x8x8xf32>
  %p = graph.max_pool %t {kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, tile.layout = "NHWC", tile.sizes = array<i64: 1, 4, 8, 16>} : tensor<1x16x8x8xf32> -> tensor<1x16x8x8xf32>
  %q = graph.max_pool %p {kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x16x8x8xf32> -> tensor<1x16x8x8xf32>
  %r = graph.transpose %q {perm = array<i64: 0, 2, 3, 1>} : tensor<1x16x8x8xf32> -> tensor<1x8x8x16xf32>
  func.return %r : tensor<1x8x8x16xf32>
}

// -----

// A mark that names no layout is an error at the op, with or without `marked`.
func.func @bad_mark(%x: tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> {
  // expected-error@+1 {{graph-layout: tile.layout must be NHWC or NCHW, got 'CHWN'}}
  %p = graph.max_pool %x {kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, tile.layout = "CHWN"} : tensor<1x16x8x8xf32> -> tensor<1x16x8x8xf32>
  func.return %p : tensor<1x16x8x8xf32>
}
