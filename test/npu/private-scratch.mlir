// npu-private-scratch: in a module compiled for 4 cores, a global-memory scratch buffer used
// only within one phase (here staged through by each core's DMAs) becomes 4 copies addressed
// by npu.core_id; the buffer the second phase reads after npu.sync_cores stays shared, and so
// do the arguments. Without npu.cores nothing changes. End to end, the padded input of a
// convolution that tensorcore keeps in global memory is each core's own, so 4 cores give the
// graph interpreter's result without a race; running on another count is refused.
// RUN: ziggurat-opt %s -p 'npu-private-scratch' | filecheck %s
// RUN: python -c "import sys; t = open(sys.argv[1]).read(); open(sys.argv[2], 'w').write(t.replace('npu.cores = 4 : i64, ', ''))" %s %t.single.mlir
// RUN: ziggurat-opt %t.single.mlir -p 'npu-private-scratch' -o %t.after.mlir
// RUN: ziggurat-opt %t.single.mlir -o %t.before.mlir
// RUN: diff %t.before.mlir %t.after.mlir
// RUN: ziggurat-run %S/Inputs/conv-pad-gm.mlir --outputs %t.graph.npz
// RUN: ziggurat-opt %S/Inputs/conv-pad-gm.mlir -p 'compile{machine=tensorcore cores=4}' -o %t.tc.mlir
// RUN: filecheck %s --check-prefix=COMPILED < %t.tc.mlir
// RUN: ziggurat-run %t.tc.mlir --expect %t.graph.npz | filecheck %s --check-prefix=NUMBERS
// RUN: not ziggurat-run %t.tc.mlir --cores 2 2>&1 | filecheck %s --check-prefix=COUNT

// CHECK:       func.func @main
// CHECK-NEXT:    %[[CORE:.*]] = npu.core_id
// CHECK:         %[[SCRATCH:.*]] = memref.alloc() : memref<4x16x64xf32, "gm">
// CHECK:         %[[SHARED:.*]] = memref.alloc() : memref<64x64xf32, "gm">
// CHECK:         npu.dma "mte3" %{{.*}}[0, 0] -> %[[SCRATCH]][%[[CORE]], 0, 0]
// CHECK:         npu.dma "mte2" %[[SCRATCH]][%[[CORE]], 0, 0] -> %{{.*}}[0, 0]
// CHECK:         npu.dma "mte3" %{{.*}}[0, 0] -> %[[SHARED]][%{{.*}}, 0]
// CHECK:         npu.sync_cores
// CHECK:         npu.dma "mte2" %[[SHARED]][%{{.*}}, 0]

// COMPILED:    module attributes {ziggurat.useful_macs = {{.*}}, npu.cores = 4 : i64, npu.machine = "tensorcore"}
// COMPILED:    npu.buffer offset {{[0-9]+}} : memref<4x1x32x{{[0-9]+}}x30xf16, "gm">
// NUMBERS:     result0: float16[1, 64, 28, 28] {{.*}} ok{{$}}
// COUNT:       error: cannot run on 2 cores: the program was compiled for 4 (npu.cores = 4)

module attributes {npu.cores = 4 : i64, npu.machine = "davinci"} {
  func.func @main(%x: memref<64x64xf32, "gm">, %z: memref<64x64xf32, "gm">) {
    %c16 = arith.constant 16 : index
    %scratch = memref.alloc() : memref<16x64xf32, "gm">
    %shared = memref.alloc() : memref<64x64xf32, "gm">
    %core = npu.core_id
    %row = arith.muli %core, %c16 : index
    %t = npu.buffer offset 0 : memref<16x64xf32, "ub">
    npu.dma "mte2" %x[%row, 0] -> %t[0, 0] {shape = array<i64: 16, 64>} : memref<64x64xf32, "gm"> -> memref<16x64xf32, "ub">
    npu.dma "mte3" %t[0, 0] -> %scratch[0, 0] {shape = array<i64: 16, 64>} : memref<16x64xf32, "ub"> -> memref<16x64xf32, "gm">
    npu.dma "mte2" %scratch[0, 0] -> %t[0, 0] {shape = array<i64: 16, 64>} : memref<16x64xf32, "gm"> -> memref<16x64xf32, "ub">
    npu.dma "mte3" %t[0, 0] -> %shared[%row, 0] {shape = array<i64: 16, 64>} : memref<16x64xf32, "ub"> -> memref<64x64xf32, "gm">
    npu.sync_cores
    npu.dma "mte2" %shared[%row, 0] -> %t[0, 0] {shape = array<i64: 16, 64>} : memref<64x64xf32, "gm"> -> memref<16x64xf32, "ub">
    npu.dma "mte3" %t[0, 0] -> %z[%row, 0] {shape = array<i64: 16, 64>} : memref<16x64xf32, "ub"> -> memref<64x64xf32, "gm">
    func.return
  }
}
