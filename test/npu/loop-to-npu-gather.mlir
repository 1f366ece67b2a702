// loop-to-npu on gathers (ONNX Gather at the loop level): per index, an `npu.load` of it on the
// scalar unit, the body's index arithmetic, and one `npu.dma` of the row it names; the constants
// of the arithmetic go before the loops, unit loops go.
// RUN: ziggurat-opt %s --split-input-file -p 'loop-to-npu{machine=davinci}' | filecheck %s

// An embedding lookup: a [16, 64] table, [2, 5] indices.
// CHECK-LABEL: func.func @embedding
// CHECK:         npu.dma "mte2" %ids[0, 0] -> %[[IDS:.*]][0, 0] {shape = array<i64: 2, 5>}
// CHECK-NEXT:    %[[V:.*]] = arith.constant 16 : index
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK:         scf.for %[[B:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           scf.for %[[S:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        %[[I:.*]] = npu.load %[[IDS]][%[[B]], %[[S]]] : memref<2x5xi64, "ub"> -> i64
// CHECK-NEXT:        %[[X:.*]] = arith.index_cast %[[I]] : i64 to index
// CHECK-NEXT:        %[[NEG:.*]] = arith.cmpi slt, %[[X]], %[[ZERO]] : index
// CHECK-NEXT:        %[[UP:.*]] = arith.addi %[[X]], %[[V]] : index
// CHECK-NEXT:        %[[ROW:.*]] = arith.select %[[NEG]], %[[UP]], %[[X]] : index
// CHECK-NEXT:        npu.dma "mte2" %table[%[[ROW]], 0] -> %{{.*}}[%[[B]], %[[S]], 0] {shape = array<i64: 64>} : memref<16x64xf16, "gm"> -> memref<2x5x64xf16, "ub">
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    npu.dma "mte3"
func.func @embedding(%table: memref<16x64xf16, "gm">, %ids: memref<2x5xi64, "gm">, %result0: memref<2x5x64xf16, "gm">) {
  %0 = memref.alloc() : memref<2x5xi64, "ub">
  %1 = memref.alloc() : memref<2x5x64xf16, "ub">
  loop.copy %ids -> %0 : memref<2x5xi64, "gm"> -> memref<2x5xi64, "ub">
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%0 : memref<2x5xi64, "ub">) outs(%1 : memref<2x5x64xf16, "ub">) {
  ^bb0(%i: i64, %o: f16):
    %x = arith.index_cast %i : i64 to index
    %c16 = arith.constant 16 : index
    %c0 = arith.constant 0 : index
    %neg = arith.cmpi slt, %x, %c0 : index
    %up = arith.addi %x, %c16 : index
    %row = arith.select %neg, %up, %x : index
    %d2 = linalg.index 2 : index
    %v = memref.load %table[%row, %d2] : memref<16x64xf16, "gm">
    linalg.yield %v : f16
  }
  loop.copy %1 -> %result0 : memref<2x5x64xf16, "ub"> -> memref<2x5x64xf16, "gm">
  func.return
}

// -----

// Gather on axis 1 of a [3, 16, 8] table: the leading table index is the outer loop's; the unit
// batch dim of the [1, 4] indices is no loop.
// CHECK-LABEL: func.func @axis1
// CHECK:         scf.for %[[A:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        %[[I:.*]] = npu.load %{{.*}}[0, %[[J]]] : memref<1x4xi32, "ub"> -> i32
// CHECK-NEXT:        %[[X:.*]] = arith.index_cast %[[I]] : i32 to index
// CHECK-NEXT:        npu.dma "mte2" %table[%[[A]], %[[X]], 0] -> %{{.*}}[%[[A]], 0, %[[J]], 0] {shape = array<i64: 8>} : memref<3x16x8xf32, "gm"> -> memref<3x1x4x8xf32, "ub">
func.func @axis1(%table: memref<3x16x8xf32, "gm">, %ids: memref<1x4xi32, "ub">, %out: memref<3x1x4x8xf32, "ub">) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ids : memref<1x4xi32, "ub">) outs(%out : memref<3x1x4x8xf32, "ub">) {
  ^bb0(%i: i32, %o: f32):
    %x = arith.index_cast %i : i32 to index
    %d0 = linalg.index 0 : index
    %d3 = linalg.index 3 : index
    %v = memref.load %table[%d0, %x, %d3] : memref<3x16x8xf32, "gm">
    linalg.yield %v : f32
  }
  func.return
}

// -----

// An index per element (ONNX GatherElements' form): no loop is a row loop, each element is a
// one-element DMA at the index read for it.
// CHECK-LABEL: func.func @per_element
// CHECK:         scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:           scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        %[[I:.*]] = npu.load %ids[%[[R]], %[[C]]] : memref<4x8xi64, "ub"> -> i64
// CHECK-NEXT:        %[[X:.*]] = arith.index_cast %[[I]] : i64 to index
// CHECK-NEXT:        npu.dma "mte2" %table[%[[X]], %[[C]]] -> %out[%[[R]], %[[C]]] {shape = array<i64: 1>} : memref<16x8xf32, "gm"> -> memref<4x8xf32, "ub">
func.func @per_element(%table: memref<16x8xf32, "gm">, %ids: memref<4x8xi64, "ub">, %out: memref<4x8xf32, "ub">) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ids : memref<4x8xi64, "ub">) outs(%out : memref<4x8xf32, "ub">) {
  ^bb0(%i: i64, %o: f32):
    %x = arith.index_cast %i : i64 to index
    %d1 = linalg.index 1 : index
    %v = memref.load %table[%x, %d1] : memref<16x8xf32, "gm">
    linalg.yield %v : f32
  }
  func.return
}
