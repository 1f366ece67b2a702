// Resource bounds: --max-cycles (machine cycles) and --timeout (seconds) stop a run with a
// diagnostic at the op it was at. The loop below would take minutes to run to its end.
// RUN: not ziggurat-run %s --max-cycles 2000 2>&1 | filecheck %s --check-prefix=CYCLES
// RUN: not ziggurat-run %s --timeout 0.3 2>&1 | filecheck %s --check-prefix=TIMEOUT
// A run too short for the limit to be checked while it runs (@short) is checked at its end.
// RUN: not ziggurat-run %s --function short --max-cycles 10 --report text 2>&1 | filecheck %s --check-prefix=AT-END
// RUN: ziggurat-run %examples/npu/gemm_single_buffered.mlir --max-cycles 100000 --timeout 600 --report text | filecheck %s --check-prefix=WITHIN

// CYCLES:      npu_limits.mlir:[[# @LINE + 16]]:7: error: the run passed its limit of 2,000 cycles: stopped at cycle {{[0-9,]+}} on core 0
// CYCLES-NOT:  Traceback
// TIMEOUT:     npu_limits.mlir:[[# @LINE + 14]]:7: error: the run exceeded --timeout 0.3 s: stopped at cycle {{[0-9,]+}}
// TIMEOUT-NOT: Traceback
// AT-END:      npu_limits.mlir:[[# @LINE + 17]]:3: error: the run passed its limit of 10 cycles: stopped at cycle {{[0-9,]+}} on core 0
// AT-END-NEXT: func.func @short
// AT-END-NOT:  machine davinci
// WITHIN:      total {{ +[0-9,]+}} cycles

module attributes {npu.machine = "davinci"} {
  func.func @main(%x: memref<64xf32, "gm">) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 100000000 : index
    %u = npu.buffer offset 0 : memref<64xf32, "ub">
    scf.for %i = %c0 to %n step %c1 {
      npu.vec.relu %u[0] -> %u[0] : memref<64xf32, "ub"> -> memref<64xf32, "ub">
    }
    func.return
  }

  func.func @short(%x: memref<64xf32, "gm">) {
    %u = npu.buffer offset 0 : memref<64xf32, "ub">
    npu.vec.relu %u[0] -> %u[0] : memref<64xf32, "ub"> -> memref<64xf32, "ub">
    func.return
  }
}
