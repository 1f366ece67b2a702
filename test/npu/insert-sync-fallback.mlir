// Where flags cannot be placed, npu-insert-sync orders instructions with npu.barrier and says so.
// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics -p 'npu-insert-sync{machine="%S/Inputs/davinci-one-flag.toml"}'
// RUN: ziggurat-opt %s --split-input-file -p 'npu-insert-sync{machine="%S/Inputs/davinci-one-flag.toml"}' 2>/dev/null | filecheck %s

// One event id per pipe pair: the two slots' "buffer free again" flags from mte1 to mte2 would both be
// pending around the loop; the second slot's falls back to a barrier on mte1.
// CHECK-LABEL: func.func @slots
// CHECK:         npu.set_flag "mte1" -> "mte2", 0
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      npu.wait_flag "mte1" -> "mte2", 0
// CHECK-NEXT:      npu.dma "mte2" %X[%i, 0] -> %x[0, 0]
// CHECK:           npu.set_flag "mte1" -> "mte2", 0
// CHECK-NEXT:      npu.barrier "mte1"
// CHECK-NEXT:      npu.dma "mte2" %X[%i, 0] -> %x[1, 0]
// CHECK-NOT:       npu.set_flag "mte1" -> "mte2"
// CHECK:         {{^    }$}}
// CHECK-NEXT:    npu.wait_flag "mte1" -> "mte2", 0
func.func @slots(%X: memref<8x64xf16, "gm">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %x = npu.buffer offset 0 : memref<2x64xf16, "l1">
  %y = npu.buffer offset 0 : memref<2x64xf16, "ub">
  scf.for %i = %c0 to %c8 step %c1 {
    npu.dma "mte2" %X[%i, 0] -> %x[0, 0] {shape = array<i64: 64>} : memref<8x64xf16, "gm"> -> memref<2x64xf16, "l1">
    npu.dma "mte1" %x[0, 0] -> %y[0, 0] {shape = array<i64: 64>} : memref<2x64xf16, "l1"> -> memref<2x64xf16, "ub">
    // expected-remark@+1 {{npu-insert-sync: no event id left for "mte1" -> "mte2" (machine 'davinci-one-flag' has 1); npu.barrier "mte1" orders this instead}}
    npu.dma "mte2" %X[%i, 0] -> %x[1, 0] {shape = array<i64: 64>} : memref<8x64xf16, "gm"> -> memref<2x64xf16, "l1">
    npu.dma "mte1" %x[1, 0] -> %y[1, 0] {shape = array<i64: 64>} : memref<2x64xf16, "l1"> -> memref<2x64xf16, "ub">
  }
  func.return
}

// -----

// Control flow other than scf.for and scf.if: a barrier before each step inside it.
// CHECK-LABEL: func.func @while
// CHECK:         scf.while
// CHECK:           npu.barrier
// CHECK-NEXT:      npu.dma "mte2"
// CHECK-NEXT:      npu.barrier
// CHECK-NEXT:      npu.dma "mte3"
func.func @while(%X: memref<64xf16, "gm">, %n: index) {
  %c1 = arith.constant 1 : index
  %x = npu.buffer offset 0 : memref<64xf16, "ub">
  // expected-remark@+1 {{npu-insert-sync: scf.while is not scf.for or scf.if; a barrier orders every instruction in it}}
  %r = scf.while (%i = %c1) : (index) -> index {
    %go = arith.cmpi slt, %i, %n : index
    scf.condition(%go) %i : index
  } do {
  ^bb0(%j: index):
    npu.dma "mte2" %X[0] -> %x[0] {shape = array<i64: 64>} : memref<64xf16, "gm"> -> memref<64xf16, "ub">
    npu.dma "mte3" %x[0] -> %X[0] {shape = array<i64: 64>} : memref<64xf16, "ub"> -> memref<64xf16, "gm">
    %k = arith.addi %j, %c1 : index
    scf.yield %k : index
  }
  func.return
}

// -----

// Flags written by hand are kept as they are.
// expected-remark@+1 {{npu-insert-sync: this function already has flags; it is left as it is}}
func.func @synchronized(%X: memref<64xf16, "gm">) {
  %x = npu.buffer offset 0 : memref<64xf16, "ub">
  npu.dma "mte2" %X[0] -> %x[0] {shape = array<i64: 64>} : memref<64xf16, "gm"> -> memref<64xf16, "ub">
  npu.set_flag "mte2" -> "mte3", 0
  npu.wait_flag "mte2" -> "mte3", 0
  npu.dma "mte3" %x[0] -> %X[0] {shape = array<i64: 64>} : memref<64xf16, "ub"> -> memref<64xf16, "gm">
  func.return
}
