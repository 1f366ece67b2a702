// Kernel launches: @main calls two kernels, as `ziggurat-compile --kernels` writes them. A launch
// starts when every core has finished everything before it, so the second kernel reads the rows
// the first wrote on another core without flags or an npu.sync_cores of its own.
// RUN: python -c "import numpy as np; np.savez('%t.in.npz', x=np.arange(64 * 64, dtype=np.float32).reshape(64, 64) - 2048)"
// RUN: ziggurat-run %s --cores 4 --inputs %t.in.npz --outputs %t.out.npz --report text | filecheck %s
// RUN: python -c "import numpy as np; x, z = np.load('%t.in.npz')['x'], np.load('%t.out.npz')['z']; print('rolled' if np.array_equal(z, np.roll(np.maximum(x, 0), -16, axis=0)) else 'wrong')" | filecheck %s --check-prefix=NUMBERS
// RUN: python -c "import sys; t = open(sys.argv[1]).read(); open(sys.argv[2], 'w').write(t.replace('@shift_rows(%y', '@missing(%y'))" %s %t.missing.mlir
// RUN: not ziggurat-run %t.missing.mlir --cores 4 --inputs %t.in.npz 2>&1 | filecheck %s --check-prefix=MISSING

// CHECK:      machine davinci: 4 core(s) run, 4 of [[#]] sharing global memory
// NUMBERS:    rolled
// MISSING:    error: {{.*}}@missing
// MISSING-NOT: Traceback

module attributes {npu.machine = "davinci"} {
  func.func private @relu_rows(%src: memref<64x64xf32, "gm">, %dst: memref<64x64xf32, "gm">) {
    %core = npu.core_id
    %c16 = arith.constant 16 : index
    %row = arith.muli %core, %c16 : index
    %t = npu.buffer offset 0 : memref<16x64xf32, "ub">
    npu.dma "mte2" %src[%row, 0] -> %t[0, 0] {shape = array<i64: 16, 64>} : memref<64x64xf32, "gm"> -> memref<16x64xf32, "ub">
    npu.set_flag "mte2" -> "vector", 0
    npu.wait_flag "mte2" -> "vector", 0
    npu.vec.relu %t[0, 0] -> %t[0, 0] {repeat = 16 : i64} : memref<16x64xf32, "ub"> -> memref<16x64xf32, "ub">
    npu.set_flag "vector" -> "mte3", 0
    npu.wait_flag "vector" -> "mte3", 0
    npu.dma "mte3" %t[0, 0] -> %dst[%row, 0] {shape = array<i64: 16, 64>} : memref<16x64xf32, "ub"> -> memref<64x64xf32, "gm">
    func.return
  }
  func.func private @shift_rows(%src: memref<64x64xf32, "gm">, %dst: memref<64x64xf32, "gm">) {
    %core = npu.core_id
    %cores = npu.num_cores
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %row = arith.muli %core, %c16 : index
    %next = arith.addi %core, %c1 : index
    %wrapped = arith.remui %next, %cores : index
    %next_row = arith.muli %wrapped, %c16 : index
    %t = npu.buffer offset 0 : memref<16x64xf32, "ub">
    npu.dma "mte2" %src[%next_row, 0] -> %t[0, 0] {shape = array<i64: 16, 64>} : memref<64x64xf32, "gm"> -> memref<16x64xf32, "ub">
    npu.set_flag "mte2" -> "mte3", 0
    npu.wait_flag "mte2" -> "mte3", 0
    npu.dma "mte3" %t[0, 0] -> %dst[%row, 0] {shape = array<i64: 16, 64>} : memref<16x64xf32, "ub"> -> memref<64x64xf32, "gm">
    func.return
  }
  func.func @main(%x: memref<64x64xf32, "gm">, %z: memref<64x64xf32, "gm">) {
    %y = npu.buffer offset 0 : memref<64x64xf32, "gm">
    func.call @relu_rows(%x, %y) : (memref<64x64xf32, "gm">, memref<64x64xf32, "gm">) -> ()
    func.call @shift_rows(%y, %z) : (memref<64x64xf32, "gm">, memref<64x64xf32, "gm">) -> ()
    func.return
  }
}
