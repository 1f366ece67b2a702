// The hand-written double-buffered GEMMs of examples/npu with their flags stripped and their
// buffers unplaced, as loop-to-npu leaves a kernel: npu-plan-memory and npu-insert-sync give them
// back the hand-written kernels' flags, and with them the same cycles (10,270 on davinci, 22,714
// on systolic, 10,310 on tensorcore, as test/npu/kernels-*.mlir report for the originals).
//
// RUN: grep -v -e set_flag -e wait_flag %examples/npu/gemm_double_buffered.mlir | sed -e 's/npu.buffer offset [0-9]* :/memref.alloc() :/' | ziggurat-opt -p npu-plan-memory,npu-insert-sync | filecheck %s --check-prefix=IR
// RUN: grep -v -e set_flag -e wait_flag %examples/npu/gemm_double_buffered.mlir | sed -e 's/npu.buffer offset [0-9]* :/memref.alloc() :/' | ziggurat-opt -p npu-plan-memory,npu-insert-sync | ziggurat-run - --report text | filecheck %s --check-prefix=DAVINCI
// RUN: grep -v -e set_flag -e wait_flag %examples/npu/systolic/gemm_double_buffered.mlir | sed -e 's/npu.buffer offset [0-9]* :/memref.alloc() :/' | ziggurat-opt -p npu-plan-memory,npu-insert-sync | ziggurat-run - --report text | filecheck %s --check-prefix=SYSTOLIC
// RUN: grep -v -e set_flag -e wait_flag %examples/npu/tensorcore/gemm_double_buffered.mlir | sed -e 's/npu.buffer offset [0-9]* :/memref.alloc() :/' | ziggurat-opt -p npu-plan-memory,npu-insert-sync | ziggurat-run - --report text | filecheck %s --check-prefix=TENSORCORE

// Both slots start free (a flag per slot set before the loop); each stage waits for its own slot.
// IR:      npu.set_flag "mte1" -> "mte2", 0
// IR-NEXT: npu.set_flag "cube" -> "mte1", 0
// IR-NEXT: npu.set_flag "mte1" -> "mte2", 1
// IR-NEXT: npu.set_flag "cube" -> "mte1", 1
// IR-NEXT: scf.for
// IR:        npu.wait_flag "mte1" -> "mte2", 0
// IR-NEXT:   npu.dma "mte2" %A[0, %k0] -> %a1[0, 0, 0]
// IR-NEXT:   npu.dma "mte2" %B[%k0, 0] -> %b1[0, 0, 0]
// IR-NEXT:   npu.set_flag "mte2" -> "mte1", 0
// IR-NEXT:   npu.wait_flag "mte2" -> "mte1", 0
// IR-NEXT:   npu.wait_flag "cube" -> "mte1", 0
// IR:        npu.set_flag "mte1" -> "mte2", 0
// IR:        npu.wait_flag "mte1" -> "mte2", 1
// IR-NEXT:   npu.dma "mte2" %A[0, %k1] -> %a1[1, 0, 0]
// IR:        npu.wait_flag "cube" -> "mte1", 1
// IR:        npu.set_flag "mte1" -> "mte2", 1
// IR:        npu.set_flag "cube" -> "mte1", 1
// IR-NEXT: {{^    }$}}
// IR:      npu.wait_flag "cube" -> "fixpipe", 0
// IR-NEXT: npu.dma "fixpipe"

// DAVINCI: total             10,270 cycles
// SYSTOLIC: total             22,714 cycles
// TENSORCORE: total             10,310 cycles
