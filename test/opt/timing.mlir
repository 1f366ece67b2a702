// --timing: a table of each stage's wall and CPU time on stderr, as MLIR's -mlir-timing; the
// passes of a named pipeline by their own names, in the order they run, a pass that runs again
// on one row with its count; stdout is what it is without --timing.
// RUN: ziggurat-opt %s -p 'canonicalize,compile{machine=davinci}' --timing 2>&1 >/dev/null | filecheck %s
// RUN: ziggurat-opt %s -p 'canonicalize,compile{machine=davinci}' > %t.plain.mlir
// RUN: ziggurat-opt %s -p 'canonicalize,compile{machine=davinci}' --timing 2>/dev/null > %t.timed.mlir
// RUN: diff %t.plain.mlir %t.timed.mlir
// RUN: ziggurat-opt %s -p cse --timing --time-passes 2>/dev/null | filecheck %s --check-prefix TIME-PASSES
// RUN: ziggurat-opt %s -p cse 2>&1 | filecheck %s --check-prefix PLAIN

func.func @main(%a: tensor<32x64xf16>, %b: tensor<64x32xf16>) -> tensor<32x32xf16> {
  %c = graph.matmul %a, %b : (tensor<32x64xf16>, tensor<64x32xf16>) -> tensor<32x32xf16>
  %r = graph.relu %c : tensor<32x32xf16>
  func.return %r : tensor<32x32xf16>
}

// CHECK:      ===-------------------------------------------------------------------------===
// CHECK-NEXT: ... Execution time report ...
// CHECK-NEXT: ===-------------------------------------------------------------------------===
// CHECK-NEXT: Total Execution Time: {{[0-9.]+}} seconds
// CHECK-EMPTY:
// CHECK-NEXT: ----Wall Time----  ----CPU Time----  -Calls-  ----Name----
// CHECK-NEXT: {{[0-9.]+ \( *[0-9.]+%\) +[0-9.]+ \( *[0-9.]+%\)}} setup
// CHECK-NEXT: parse
// CHECK-NEXT: {{ [0-9]+}}  verify
// CHECK-NEXT: 2  canonicalize
// CHECK-NOT:  {{ compile$| lower-to-npu$| graph-opt$}}
// CHECK:      graph-to-tile
// CHECK:      tile-and-fuse
// CHECK:      tile-to-loop
// CHECK:      loop-to-npu
// CHECK:      npu-insert-sync
// CHECK:      print
// CHECK-NEXT: Rest
// CHECK-NEXT: {{[0-9.]+ \(100.0%\) +[0-9.]+ \(100.0%\)}} Total

// --time-passes keeps printing xDSL's lines on stdout.
// TIME-PASSES: Pass cse took {{.*}} seconds

// PLAIN-NOT: Execution time report
