// RUN: not ziggurat-opt %s -p toy-crash 2>&1 | filecheck %s
// RUN: not ziggurat-opt %s -p toy-crash --debug 2>&1 | filecheck %s --check-prefix DEBUG
// RUN: env ZIGGURAT_DEBUG=1 not ziggurat-opt %s -p toy-crash 2>&1 | filecheck %s --check-prefix DEBUG

// A pass that crashes (toy-crash, from the example plugin in test/plugin) is an
// internal error, not a diagnostic about the input: the message names the pass
// and the op it was rewriting, and the traceback comes only with --debug or
// ZIGGURAT_DEBUG=1. The exit code (2) is checked in test/unit/test_internal_errors.py.

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.relu %x : tensor<4xf32>
  %1 = toy.double %0 : tensor<4xf32>
  func.return %1 : tensor<4xf32>
}

// CHECK-NOT:  Traceback
// CHECK:      {{^}}internal error, please report: KeyError: 'a bug in toy-crash' (while running pass 'toy-crash' on op 'toy.double' at {{.*}}internal-error.mlir:12:3){{$}}
// CHECK-NEXT: {{^}}(run with --debug or ZIGGURAT_DEBUG=1 for a traceback){{$}}
// CHECK-NOT:  error:

// DEBUG:      Traceback (most recent call last):
// DEBUG:      match_and_rewrite
// DEBUG:      KeyError: 'a bug in toy-crash'
// DEBUG:      internal error, please report: KeyError: 'a bug in toy-crash' (while running pass 'toy-crash' on op 'toy.double' at {{.*}}:12:3)
// DEBUG-NOT:  (run with --debug
