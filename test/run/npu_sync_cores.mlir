// npu.sync_cores between two phases: each core writes relu of its own rows of x to y, then,
// after the barrier, copies the rows the next core wrote to its own rows of z. Without the
// barrier that read is a race between cores; with it the outputs are right on any core count.
// RUN: python -c "import numpy as np; np.savez('%t.in.npz', x=np.arange(64 * 64, dtype=np.float32).reshape(64, 64) - 2048)"
// RUN: ziggurat-run %s --cores 4 --inputs %t.in.npz --outputs %t.out.npz --report text | filecheck %s
// RUN: python -c "import numpy as np; x, z = np.load('%t.in.npz')['x'], np.load('%t.out.npz')['z']; print('rolled' if np.array_equal(z, np.roll(np.maximum(x, 0), -16, axis=0)) else 'wrong')" | filecheck %s --check-prefix=NUMBERS
// RUN: python -c "import sys; t = open(sys.argv[1]).read(); open(sys.argv[2], 'w').write(t.replace('npu.sync_cores', 'npu.barrier'))" %s %t.race.mlir
// RUN: not ziggurat-run %t.race.mlir --cores 4 --inputs %t.in.npz 2>&1 | filecheck %s --check-prefix=RACE

// CHECK:      machine davinci: 4 core(s) run, 4 of [[#]] sharing global memory
// NUMBERS:    rolled
// RACE:       error: npu.dma on core 0 reads 'gm' bytes [20480, 24576) that npu.dma on core 1 writes [20480, 24576)
// RACE-SAME:  or an npu.sync_cores must separate them

module attributes {npu.machine = "davinci"} {
  func.func @main(%x: memref<64x64xf32, "gm">, %y: memref<64x64xf32, "gm">, %z: memref<64x64xf32, "gm">) {
    %core = npu.core_id
    %cores = npu.num_cores
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %row = arith.muli %core, %c16 : index
    %next = arith.addi %core, %c1 : index
    %wrapped = arith.remui %next, %cores : index
    %next_row = arith.muli %wrapped, %c16 : index
    %first = arith.cmpi eq, %core, %c0 : index
    %t = npu.buffer offset 0 : memref<16x64xf32, "ub">
    npu.dma "mte2" %x[%row, 0] -> %t[0, 0] {shape = array<i64: 16, 64>} : memref<64x64xf32, "gm"> -> memref<16x64xf32, "ub">
    npu.set_flag "mte2" -> "vector", 0
    npu.wait_flag "mte2" -> "vector", 0
    npu.vec.relu %t[0, 0] -> %t[0, 0] {repeat = 16 : i64} : memref<16x64xf32, "ub"> -> memref<16x64xf32, "ub">
    scf.if %first {
      npu.vec.muls %t[0, 0] -> %t[0, 0] {scalar = 1.0 : f64, repeat = 16 : i64} : memref<16x64xf32, "ub"> -> memref<16x64xf32, "ub">
      npu.vec.muls %t[0, 0] -> %t[0, 0] {scalar = 1.0 : f64, repeat = 16 : i64} : memref<16x64xf32, "ub"> -> memref<16x64xf32, "ub">
    }
    npu.set_flag "vector" -> "mte3", 0
    npu.wait_flag "vector" -> "mte3", 0
    npu.dma "mte3" %t[0, 0] -> %y[%row, 0] {shape = array<i64: 16, 64>} : memref<16x64xf32, "ub"> -> memref<64x64xf32, "gm">
    npu.sync_cores
    npu.dma "mte2" %y[%next_row, 0] -> %t[0, 0] {shape = array<i64: 16, 64>} : memref<64x64xf32, "gm"> -> memref<16x64xf32, "ub">
    npu.set_flag "mte2" -> "mte3", 0
    npu.wait_flag "mte2" -> "mte3", 0
    npu.dma "mte3" %t[0, 0] -> %z[%row, 0] {shape = array<i64: 16, 64>} : memref<16x64xf32, "ub"> -> memref<64x64xf32, "gm">
    func.return
  }
}
