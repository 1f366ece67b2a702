// --cores N runs the kernel on N cores of the machine: each applies relu to its own rows,
// told apart by npu.core_id. The report covers all of them; the trace has one process per
// core with one track per pipe in each.
// RUN: python -c "import numpy as np; np.savez('%t.in.npz', x=np.arange(64 * 64, dtype=np.float32).reshape(64, 64) - 2048)"
// RUN: ziggurat-run %s --cores 4 --inputs %t.in.npz --outputs %t.out.npz --report text --trace %t.trace.json | filecheck %s
// RUN: python -c "import numpy as np; x, y = np.load('%t.in.npz')['x'], np.load('%t.out.npz')['y']; print('relu' if np.array_equal(y, np.maximum(x, 0)) else 'wrong')" | filecheck %s --check-prefix=NUMBERS
// RUN: python -c "import json; e = json.load(open('%t.trace.json'))['traceEvents']; tracks = sorted({(x['pid'], x['tid']) for x in e if x['name'] == 'thread_name'}); print(len(tracks), sorted({p for p, _ in tracks})); print(sorted({(x['pid'], x['cat']) for x in e if x['ph'] == 'X' and x['cat'] != 'scalar'}))" | filecheck %s --check-prefix=TRACE

// CHECK:      machine davinci: 4 core(s) run, 4 of [[#]] sharing global memory
// Each element of x is read once and each of y written once, by one of the cores.
// CHECK:      gm {{ +}}16,384 {{ +}}16,384
// NUMBERS:    relu
// TRACE:      28 [0, 1, 2, 3]
// TRACE-NEXT: [(0, 'mte2'), (0, 'mte3'), (0, 'vector'), (1, 'mte2'), (1, 'mte3'), (1, 'vector'), (2, 'mte2'), (2, 'mte3'), (2, 'vector'), (3, 'mte2'), (3, 'mte3'), (3, 'vector')]

module attributes {npu.machine = "davinci"} {
  func.func @main(%x: memref<64x64xf32, "gm">, %y: memref<64x64xf32, "gm">) {
    %core = npu.core_id
    %cores = npu.num_cores
    %c64 = arith.constant 64 : index
    %rows = arith.divui %c64, %cores : index
    %row = arith.muli %core, %rows : index
    %t = npu.buffer offset 0 : memref<16x64xf32, "ub">
    npu.dma "mte2" %x[%row, 0] -> %t[0, 0] {shape = array<i64: 16, 64>} : memref<64x64xf32, "gm"> -> memref<16x64xf32, "ub">
    npu.set_flag "mte2" -> "vector", 0
    npu.wait_flag "mte2" -> "vector", 0
    npu.vec.relu %t[0, 0] -> %t[0, 0] {repeat = 16 : i64} : memref<16x64xf32, "ub"> -> memref<16x64xf32, "ub">
    npu.set_flag "vector" -> "mte3", 0
    npu.wait_flag "vector" -> "mte3", 0
    npu.dma "mte3" %t[0, 0] -> %y[%row, 0] {shape = array<i64: 16, 64>} : memref<16x64xf32, "ub"> -> memref<64x64xf32, "gm">
    func.return
  }
}
