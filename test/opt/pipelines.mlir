// RUN: ziggurat-opt -p graph-opt --print-pipeline | filecheck %s --check-prefix=PIPELINE
// RUN: ziggurat-opt -p 'cse,graph-opt,graph-unfuse' --print-pipeline | filecheck %s --check-prefix=NESTED
// RUN: ziggurat-opt %s -p graph-opt --print-between-passes | filecheck %s --check-prefix=BETWEEN
// RUN: ziggurat-opt %s -p graph-opt | filecheck %s
// RUN: ziggurat-opt -p 'graph-opt{layout=NHWC}' --print-pipeline | filecheck %s --check-prefix=NHWC
// RUN: not ziggurat-opt -p 'graph-opt{fast=true}' --print-pipeline 2>&1 | filecheck %s --check-prefix=BAD-OPTION

// PIPELINE: graph-fold-constants,graph-canonicalize,graph-fold-batch-norm,graph-split-grouped-conv{min-out-per-group=17},cse,dce,graph-fuse
// NHWC: graph-fold-constants,graph-canonicalize,graph-fold-batch-norm,graph-split-grouped-conv,graph-layout{layout="NHWC"},cse,dce,graph-fuse
// NESTED: cse,graph-fold-constants,graph-canonicalize,graph-fold-batch-norm,graph-split-grouped-conv{min-out-per-group=17},cse,dce,graph-fuse,graph-unfuse

// BETWEEN:      IR after graph-fold-constants:
// BETWEEN:      IR after graph-canonicalize:
// BETWEEN:      IR after graph-fold-batch-norm:
// BETWEEN:      IR after cse:
// BETWEEN:      IR after dce:
// BETWEEN-NOT:  IR after

// BAD-OPTION: error: pipeline 'graph-opt' has no option 'fast' (options: layout

// The batch norm folds into the conv (its old constants are dropped), the
// duplicate relu is merged, and conv + add + relu form one group.
// CHECK-LABEL: func.func @block
// CHECK-NOT:     graph.batch_norm
// CHECK:         graph.fused "conv2d_relu_add"
// CHECK:           = graph.conv2d
// CHECK-NEXT:      %[[R:.*]] = graph.relu
// CHECK-NEXT:      graph.add %[[R]], %[[R]]
// CHECK:         func.return
func.func @block(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = graph.constant dense<0.5> : tensor<2x2x1x1xf32>
  %one = graph.constant dense<1.0> : tensor<2xf32>
  %c = graph.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %b = graph.batch_norm %c, %one, %one, %one, %one : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %r1 = graph.relu %b : tensor<1x2x4x4xf32>
  %r2 = graph.relu %b : tensor<1x2x4x4xf32>
  %a = graph.add %r1, %r2 : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %a : tensor<1x2x4x4xf32>
}
