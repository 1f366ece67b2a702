// Structural rules of the npu dialect, one per chunk.
// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics

func.func @f() {
  // expected-error@+1 {{must name its memory space}}
  %a = npu.buffer offset 0 : memref<16xf16>
  func.return
}

// -----

func.func @f() {
  // expected-error@+1 {{npu.buffer offset must be non-negative, got -32}}
  %a = npu.buffer offset -32 : memref<16xf16, "ub">
  func.return
}

// -----

func.func @f(%gm: memref<64x256xf16, "gm">) {
  %l1 = npu.buffer offset 0 : memref<16x256xf16, "l1">
  // expected-error@+1 {{npu.dma source takes one index per dimension of memref<64x256xf16, "gm"> (2), got 1}}
  npu.dma "mte2" %gm[0] -> %l1[0, 0] {shape = array<i64: 16, 256>} : memref<64x256xf16, "gm"> -> memref<16x256xf16, "l1">
  func.return
}

// -----

func.func @f(%gm: memref<64x256xf16, "gm">) {
  %l1 = npu.buffer offset 0 : memref<16x256xf16, "l1">
  // expected-error@+1 {{index 64 of npu.dma source is outside dimension 0 of size 64}}
  npu.dma "mte2" %gm[64, 0] -> %l1[0, 0] {shape = array<i64: 16, 256>} : memref<64x256xf16, "gm"> -> memref<16x256xf16, "l1">
  func.return
}

// -----

func.func @f(%gm: memref<64x256xf16, "gm">) {
  %l1 = npu.buffer offset 0 : memref<16x256xf16, "l1">
  // expected-error@+1 {{npu.dma destination tile of shape [32, 256] does not fit dimension 0 of memref<16x256xf16, "l1">: 0 + 32 > 16}}
  npu.dma "mte2" %gm[0, 0] -> %l1[0, 0] {shape = array<i64: 32, 256>} : memref<64x256xf16, "gm"> -> memref<16x256xf16, "l1">
  func.return
}

// -----

func.func @f(%gm: memref<64x256xf16, "gm">) {
  %l1 = npu.buffer offset 0 : memref<16x256xf16, "l1">
  // A tile does not wrap around a row, even where the buffer has room after it.
  // expected-error@+1 {{npu.dma source tile of shape [8, 300] does not fit dimension 1 of memref<64x256xf16, "gm">: 0 + 300 > 256}}
  npu.dma "mte2" %gm[0, 0] -> %l1[0, 0] {shape = array<i64: 8, 300>, dst_strides = array<i64: 300, 1>} : memref<64x256xf16, "gm"> -> memref<16x256xf16, "l1">
  func.return
}

// -----

func.func @f(%gm: memref<64x256xf16, "gm">) {
  %l1 = npu.buffer offset 0 : memref<16x256xf16, "l1">
  // expected-error@+1 {{npu.dma destination window of shape [16, 256] with strides [512, 1] at element 0 ends at element 7936, past the 4096 elements of memref<16x256xf16, "l1">}}
  npu.dma "mte2" %gm[0, 0] -> %l1[0, 0] {shape = array<i64: 16, 256>, dst_strides = array<i64: 512, 1>} : memref<64x256xf16, "gm"> -> memref<16x256xf16, "l1">
  func.return
}

// -----

func.func @f(%gm: memref<64x256xf16, "gm">) {
  %l1 = npu.buffer offset 0 : memref<16x256xf16, "l1">
  // expected-error@+1 {{npu.dma pad takes a non-negative (low, high) pair per dimension of shape [16, 16], got [1, 1]}}
  npu.dma "mte2" %gm[0, 0] -> %l1[0, 0] {shape = array<i64: 16, 16>, pad = array<i64: 1, 1>} : memref<64x256xf16, "gm"> -> memref<16x256xf16, "l1">
  func.return
}

// -----

func.func @f(%gm: memref<256xf16, "gm">) {
  %l1 = npu.buffer offset 0 : memref<256xf16, "l1">
  // expected-error@+1 {{npu.dma transpose swaps the two innermost dimensions and needs a shape of rank >= 2}}
  npu.dma "mte2" %gm[0] -> %l1[0] {shape = array<i64: 256>, transpose} : memref<256xf16, "gm"> -> memref<256xf16, "l1">
  func.return
}

// -----

func.func @f(%gm: memref<256xf16, "gm">) {
  %l1 = npu.buffer offset 0 : memref<256xf16, "l1">
  // expected-error@+1 {{npu.dma shape [16, 16] has more dimensions than memref<256xf16, "gm">; give src_strides}}
  npu.dma "mte2" %gm[0] -> %l1[0] {shape = array<i64: 16, 16>} : memref<256xf16, "gm"> -> memref<256xf16, "l1">
  func.return
}

// -----

func.func @f() {
  %a = npu.buffer offset 0 : memref<16x16xf16, "l0a">
  %b = npu.buffer offset 0 : memref<16x16xbf16, "l0b">
  %c = npu.buffer offset 0 : memref<16x16xf32, "l0c">
  // expected-error@+1 {{npu.mma operands A and B must have the same element type, got f16 and bf16}}
  npu.mma %a[0, 0], %b[0, 0] -> %c[0, 0] {m = 16 : i64, n = 16 : i64, k = 16 : i64} : memref<16x16xf16, "l0a">, memref<16x16xbf16, "l0b"> -> memref<16x16xf32, "l0c">
  func.return
}

// -----

func.func @f() {
  %a = npu.buffer offset 0 : memref<16x16xi8, "l0a">
  %b = npu.buffer offset 0 : memref<16x16xi8, "l0b">
  %c = npu.buffer offset 0 : memref<16x16xf32, "l0c">
  // expected-error@+1 {{npu.mma accumulates i8 in i32, got C of f32 (pairs: f16/bf16/f8 -> f32, i8 -> i32)}}
  npu.mma %a[0, 0], %b[0, 0] -> %c[0, 0] {m = 16 : i64, n = 16 : i64, k = 16 : i64} : memref<16x16xi8, "l0a">, memref<16x16xi8, "l0b"> -> memref<16x16xf32, "l0c">
  func.return
}

// -----

func.func @f() {
  %a = npu.buffer offset 0 : memref<16x16xf16, "l0a">
  %b = npu.buffer offset 0 : memref<16x16xf16, "l0b">
  %c = npu.buffer offset 0 : memref<16x16xf32, "l0c">
  // expected-error@+1 {{npu.mma operand A tile of shape [32, 16] does not fit dimension 0 of memref<16x16xf16, "l0a">: 0 + 32 > 16}}
  npu.mma %a[0, 0], %b[0, 0] -> %c[0, 0] {m = 32 : i64, n = 16 : i64, k = 16 : i64} : memref<16x16xf16, "l0a">, memref<16x16xf16, "l0b"> -> memref<16x16xf32, "l0c">
  func.return
}

// -----

func.func @f() {
  %a = npu.buffer offset 0 : memref<256xf16, "l0a">
  %b = npu.buffer offset 0 : memref<16x16xf16, "l0b">
  %c = npu.buffer offset 0 : memref<16x16xf32, "l0c">
  // expected-error@+1 {{npu.mma operand A must be a buffer of rank >= 2, got memref<256xf16, "l0a">}}
  npu.mma %a[0], %b[0, 0] -> %c[0, 0] {m = 16 : i64, n = 16 : i64, k = 16 : i64} : memref<256xf16, "l0a">, memref<16x16xf16, "l0b"> -> memref<16x16xf32, "l0c">
  func.return
}

// -----

func.func @f() {
  %x = npu.buffer offset 0 : memref<64xf32, "ub">
  %y = npu.buffer offset 256 : memref<64xf16, "ub">
  // expected-error@+1 {{npu.vec.add operands must share one element type, got f32, f16, f32}}
  npu.vec.add %x[0], %y[0] -> %x[0] : memref<64xf32, "ub">, memref<64xf16, "ub"> -> memref<64xf32, "ub">
  func.return
}

// -----

func.func @f() {
  %x = npu.buffer offset 0 : memref<64xf32, "ub">
  // expected-error@+1 {{npu.vec.add stride takes one non-negative stride per buffer operand (3: sources, then destination), got [64, 64]}}
  npu.vec.add %x[0], %x[0] -> %x[0] {stride = array<i64: 64, 64>} : memref<64xf32, "ub">, memref<64xf32, "ub"> -> memref<64xf32, "ub">
  func.return
}

// -----

func.func @f() {
  %x = npu.buffer offset 0 : memref<64xf32, "ub">
  // expected-error@+1 {{npu.vec.relu window of shape [2, 64] with strides [64, 1] at element 0 ends at element 128, past the 64 elements of memref<64xf32, "ub">}}
  npu.vec.relu %x[0] -> %x[0] {repeat = 2 : i64, mask = 64 : i64, stride = array<i64: 64, 64>} : memref<64xf32, "ub"> -> memref<64xf32, "ub">
  func.return
}

// -----

func.func @f() {
  %x = npu.buffer offset 0 : memref<64xf32, "ub">
  // expected-error@+1 {{npu.vec.relu repeat must be >= 1, got 0}}
  npu.vec.relu %x[0] -> %x[0] {repeat = 0 : i64} : memref<64xf32, "ub"> -> memref<64xf32, "ub">
  func.return
}

// -----

func.func @f() {
  %x = npu.buffer offset 0 : memref<64xf32, "ub">
  // expected-error@+1 {{npu.vec.relu mask must count at least one active lane, got 0}}
  npu.vec.relu %x[0] -> %x[0] {mask = 0 : i64} : memref<64xf32, "ub"> -> memref<64xf32, "ub">
  func.return
}

// -----

func.func @f() {
  %x = npu.buffer offset 0 : memref<64xi32, "ub">
  // expected-error@+1 {{npu.vec.exp computes on floats, got i32}}
  npu.vec.exp %x[0] -> %x[0] : memref<64xi32, "ub"> -> memref<64xi32, "ub">
  func.return
}

// -----

func.func @f() {
  %x = npu.buffer offset 0 : memref<64xf32, "ub">
  // expected-error@+1 {{npu.vec.reduce combines with one of sum, max, got 'prod'}}
  npu.vec.reduce "prod" %x[0] -> %x[0] : memref<64xf32, "ub"> -> memref<64xf32, "ub">
  func.return
}

// -----

func.func @f() {
  %x = npu.buffer offset 0 : memref<64xf32, "ub">
  // expected-error@+1 {{npu.vec.select condition must hold integers, got f32}}
  npu.vec.select %x[0], %x[0], %x[0] -> %x[0] : memref<64xf32, "ub">, memref<64xf32, "ub">, memref<64xf32, "ub"> -> memref<64xf32, "ub">
  func.return
}

// -----

func.func @f() {
  // expected-error@+1 {{npu.set_flag orders two different pipes; 'v' is already ordered with itself}}
  npu.set_flag "v" -> "v", 0
  func.return
}

// -----

func.func @f() {
  // expected-error@+1 {{npu.wait_flag event id must be non-negative, got -1}}
  npu.wait_flag "mte2" -> "v", -1
  func.return
}

// -----

func.func @f() {
  // expected-error@+1 {{npu.buffer result must hold numbers of a machine type (f16, bf16, f32, f8, i8, i32, ...), got memref<16xindex, "ub">}}
  %a = npu.buffer offset 0 : memref<16xindex, "ub">
  func.return
}

// -----

func.func @f() {
  // expected-error@+1 {{npu.buffer result must have a static shape, got memref<?xf32, "ub">}}
  %a = npu.buffer offset 0 : memref<?xf32, "ub">
  func.return
}

// -----

func.func @f(%x: memref<16xf32, strided<[2]>, "ub">, %y: memref<16xf32, "ub">) {
  // expected-error@+1 {{npu.vec.relu operand #0 must have the row-major (identity) layout, got memref<16xf32, strided<[2]>, "ub">}}
  npu.vec.relu %x[0] -> %y[0] : memref<16xf32, strided<[2]>, "ub"> -> memref<16xf32, "ub">
  func.return
}

// -----

func.func @f() {
  %x = npu.buffer offset 0 : memref<64xi32, "ub">
  // expected-error@+1 {{npu.vec.div computes on floats, got i32}}
  npu.vec.div %x[0], %x[0] -> %x[0] : memref<64xi32, "ub">, memref<64xi32, "ub"> -> memref<64xi32, "ub">
  func.return
}

// -----

func.func @f() {
  %x = npu.buffer offset 0 : memref<64xf32, "ub">
  // expected-error@+1 {{property 'scalar' expected in operation 'npu.vec.muls'}}
  npu.vec.muls %x[0] -> %x[0] : memref<64xf32, "ub"> -> memref<64xf32, "ub">
  func.return
}

// -----

func.func @f(%gm: memref<64x256xf16, "gm">) {
  %l1 = npu.buffer offset 0 : memref<16x256xf16, "l1">
  // expected-error@+1 {{npu.dma pad_value is the value of the padding and needs pad}}
  npu.dma "mte2" %gm[0, 0] -> %l1[0, 0] {shape = array<i64: 16, 256>, pad_value = 1.0 : f64} : memref<64x256xf16, "gm"> -> memref<16x256xf16, "l1">
  func.return
}

// -----

func.func @f(%ids: memref<4xf32, "ub">) {
  // expected-error@+1 {{npu.load reads integers for the scalar unit to compute with, got memref<4xf32, "ub">}}
  %v = npu.load %ids[0] : memref<4xf32, "ub"> -> i32
  func.return
}

// -----

func.func @f(%ids: memref<4xi64, "ub">) {
  // expected-error@+1 {{npu.load result must be the buffer's element type i64, got i32}}
  %v = npu.load %ids[0] : memref<4xi64, "ub"> -> i32
  func.return
}

// -----

func.func @f(%ids: memref<4xi64, "ub">) {
  // expected-error@+1 {{index 4 of npu.load buffer is outside dimension 0 of size 4}}
  %v = npu.load %ids[4] : memref<4xi64, "ub"> -> i64
  func.return
}

// -----

func.func @f(%ids: memref<4x2xi64, "ub">) {
  // expected-error@+1 {{npu.load buffer takes one index per dimension of memref<4x2xi64, "ub"> (2), got 1}}
  %v = npu.load %ids[0] : memref<4x2xi64, "ub"> -> i64
  func.return
}

// -----

func.func @f(%x: memref<64xf32, "gm">) {
  %core = npu.core_id
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %core, %c0 : index
  scf.if %first {
    // expected-error@+1 {{npu.sync_cores under an scf.if on npu.core_id: the cores that skip it never arrive, and those that wait there deadlock}}
    npu.sync_cores
  }
  func.return
}

// -----

func.func @f() {
  %a = npu.buffer offset 0 : memref<64xf32, "ub">
  %b = npu.buffer offset 256 : memref<64xf16, "ub">
  // expected-error@+1 {{npu.vec.cast: unsigned = "dst" needs an integer dst, got f16}}
  npu.vec.cast %a[0] -> %b[0] {unsigned = "dst"} : memref<64xf32, "ub"> -> memref<64xf16, "ub">
  func.return
}

// -----

func.func @f() {
  %a = npu.buffer offset 0 : memref<64xi8, "ub">
  %b = npu.buffer offset 256 : memref<64xf32, "ub">
  // expected-error@+1 {{npu.vec.cast: unsigned is "src" or "dst", got "both"}}
  npu.vec.cast %a[0] -> %b[0] {unsigned = "both"} : memref<64xi8, "ub"> -> memref<64xf32, "ub">
  func.return
}
