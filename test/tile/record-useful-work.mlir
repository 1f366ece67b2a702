// tile-record-useful-work counts the matrix unit's MACs on whole layers, before tiling pads
// them: a ragged matmul (100x30x64), a grouped conv with padding (every window point counts, as
// ONNX profilers count) and a depthwise conv, which runs on the vector unit and is left out.
// RUN: ziggurat-opt %s -p 'graph-fuse,graph-to-tile,tile-record-useful-work' | filecheck %s
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=davinci}' | filecheck %s --check-prefix=KEPT
// RUN: ziggurat-opt %s -p 'lower-to-npu{machine=davinci}' | ziggurat-run - --seed 1 --report json | filecheck %s --check-prefix=REPORT
// RUN: ziggurat-opt %s --split-input-file -p 'graph-fuse,graph-to-tile,tile-record-useful-work' | filecheck %s --check-prefix=NONE
// The pass only records: the tile-level module computes exactly what it did before the pass.
// RUN: ziggurat-opt %s -p 'graph-fuse,graph-to-tile' | ziggurat-run - --seed 3 --outputs %t.before.npz
// RUN: ziggurat-opt %s -p 'graph-fuse,graph-to-tile,tile-record-useful-work' | ziggurat-run - --seed 3 --expect %t.before.npz --rtol 0 --atol 0

// matmul 100*30*64 = 192,000; grouped conv 1*32*10*10 outputs * 8 channels * 9 = 230,400.
// CHECK: builtin.module attributes {ziggurat.useful_macs = {"f16->f32" = 422400 : i64}}

// The count survives the lowering, and the run's report bounds the run by it: 422,400 MACs at
// davinci's 4,096 per cycle (103.125 cycles); the f16 inputs read once (a, b, x, w, d: 28,224
// bytes) and the three outputs written once (18,800).
// KEPT: builtin.module attributes {ziggurat.useful_macs = {"f16->f32" = 422400 : i64}, npu.machine = "davinci"}
// REPORT:      "useful": {
// REPORT-NEXT:   "macs": {
// REPORT-NEXT:     "f16->f32": 422400
// REPORT-NEXT:   },
// REPORT-NEXT:   "bytes_read": 28224,
// REPORT-NEXT:   "bytes_written": 18800
// REPORT:      "useful_roofline": {
// REPORT-NEXT:   "compute_cycles": 103.125,

func.func @main(%a: tensor<100x64xf16>, %b: tensor<64x30xf16>, %x: tensor<1x32x10x10xf16>, %w: tensor<32x8x3x3xf16>, %d: tensor<32x1x3x3xf16>) -> (tensor<100x30xf16>, tensor<1x32x10x10xf16>, tensor<1x32x10x10xf16>) {
  %m = graph.matmul %a, %b : (tensor<100x64xf16>, tensor<64x30xf16>) -> tensor<100x30xf16>
  %g = graph.conv2d %x, %w {groups = 4 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x10x10xf16>, tensor<32x8x3x3xf16>) -> tensor<1x32x10x10xf16>
  %dw = graph.conv2d %x, %d {groups = 32 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x10x10xf16>, tensor<32x1x3x3xf16>) -> tensor<1x32x10x10xf16>
  func.return %m, %g, %dw : tensor<100x30xf16>, tensor<1x32x10x10xf16>, tensor<1x32x10x10xf16>
}

// -----

// No contraction for the matrix unit: no attribute.
// NONE-LABEL: builtin.module {
// NONE:         func.func @elementwise
func.func @elementwise(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %y = graph.relu %x : tensor<4x8xf16>
  func.return %y : tensor<4x8xf16>
}
