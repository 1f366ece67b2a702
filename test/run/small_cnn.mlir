// The README's example CNN runs, gives class probabilities, and its simplified
// form (constants folded, dead and duplicated work removed) computes the same.
// RUN: ziggurat-run %examples/graph/small_cnn.mlir | filecheck %s --check-prefix=SUMMARY
// RUN: ziggurat-run %examples/graph/small_cnn.mlir --outputs %t.before.npz
// RUN: ziggurat-opt %examples/graph/small_cnn.mlir -p graph-fold-constants,graph-canonicalize,cse,dce -o %t.simplified.mlir
// RUN: filecheck %s --check-prefix=SIMPLIFIED --input-file=%t.simplified.mlir
// RUN: ziggurat-run %t.simplified.mlir --outputs %t.after.npz
// RUN: python -c "import numpy as np; a, b = (np.load(f)['result0'] for f in ('%t.before.npz', '%t.after.npz')); np.testing.assert_allclose(a, b, rtol=1e-6); print('sum', round(float(a.sum()), 5), 'equal after simplification')" | filecheck %s

// SUMMARY: result0: tensor<1x4xf32>  min 0.0985282 max 0.48174 mean 0.25
// SUMMARY-NEXT: 0.48174 0.142789 0.276943 0.0985282

// CHECK: sum 1.0 equal after simplification

// SIMPLIFIED-NOT: graph.transpose
// SIMPLIFIED-NOT: graph.add %bn1
// SIMPLIFIED:     %relu1 = graph.relu %bn1
// SIMPLIFIED-NOT: graph.relu %relu1
// SIMPLIFIED:     %w2 = graph.constant {{.*}} : tensor<8x4x1x1xf32>
// SIMPLIFIED:     %branch_a = graph.relu %conv2
// SIMPLIFIED-NEXT: graph.add %branch_a, %branch_a
// SIMPLIFIED:     %fc = graph.constant {{.*}} : tensor<8x4xf32>
// SIMPLIFIED-NOT: graph.transpose
