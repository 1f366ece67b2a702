// Machine rules: checked when the module names its machine (here the davinci preset), one per chunk.
// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics

module attributes {npu.machine = "davinci"} {
  func.func @f() {
    // expected-error@+1 {{npu.buffer is in memory space 'l2', which machine 'davinci' does not have (it has gm, l1, l0a, l0b, l0c, ub)}}
    %a = npu.buffer offset 0 : memref<16xf16, "l2">
    func.return
  }
}

// -----

module attributes {npu.machine = "davinci"} {
  func.func @f() {
    // expected-error@+1 {{npu.buffer starts at byte 256 of 'l0a', which is not a multiple of its 512-byte alignment}}
    %a = npu.buffer offset 256 : memref<16x16xf16, "l0a">
    func.return
  }
}

// -----

module attributes {npu.machine = "davinci"} {
  func.func @f() {
    // expected-error@+1 {{npu.buffer [1024, 263168) does not fit in 'ub' (capacity 262144 bytes on machine 'davinci')}}
    %a = npu.buffer offset 1024 : memref<256x256xf32, "ub">
    func.return
  }
}

// -----

module attributes {npu.machine = "davinci"} {
  func.func @f(%gm: memref<16x16xf16, "gm">) {
    %l1 = npu.buffer offset 0 : memref<16x16xf16, "l1">
    // expected-error@+1 {{machine 'davinci' has no DMA engine 'mte4' (its engines: mte2, mte1, mte3, fixpipe)}}
    npu.dma "mte4" %gm[0, 0] -> %l1[0, 0] {shape = array<i64: 16, 16>} : memref<16x16xf16, "gm"> -> memref<16x16xf16, "l1">
    func.return
  }
}

// -----

module attributes {npu.machine = "davinci"} {
  func.func @f(%gm: memref<16x16xf16, "gm">) {
    %a = npu.buffer offset 0 : memref<16x16xf16, "l0a">
    // expected-error@+1 {{engine 'mte1' cannot move data from 'gm' to 'l0a' (it serves l1->l0a, l1->l0b)}}
    npu.dma "mte1" %gm[0, 0] -> %a[0, 0] {shape = array<i64: 16, 16>} : memref<16x16xf16, "gm"> -> memref<16x16xf16, "l0a">
    func.return
  }
}

// -----

module attributes {npu.machine = "davinci"} {
  func.func @f(%gm: memref<2x16x16xf32, "gm">) {
    %c = npu.buffer offset 0 : memref<2x16x16xf32, "l0c">
    // expected-error@+1 {{engine 'fixpipe' moves at most 2-d windows, got shape [2, 16, 16]}}
    npu.dma "fixpipe" %c[0, 0, 0] -> %gm[0, 0, 0] {shape = array<i64: 2, 16, 16>} : memref<2x16x16xf32, "l0c"> -> memref<2x16x16xf32, "gm">
    func.return
  }
}

// -----

module attributes {npu.machine = "davinci"} {
  func.func @f(%gm: memref<16x16xf16, "gm">) {
    %l1 = npu.buffer offset 0 : memref<16x16xf16, "l1">
    // expected-error@+1 {{engine 'mte2' cannot transpose in flight}}
    npu.dma "mte2" %gm[0, 0] -> %l1[0, 0] {shape = array<i64: 16, 16>, transpose} : memref<16x16xf16, "gm"> -> memref<16x16xf16, "l1">
    func.return
  }
}

// -----

module attributes {npu.machine = "davinci"} {
  func.func @f(%gm: memref<16x16xf32, "gm">) {
    %l1 = npu.buffer offset 0 : memref<16x16xf16, "l1">
    // expected-error@+1 {{engine 'mte2' cannot cast in flight}}
    npu.dma "mte2" %gm[0, 0] -> %l1[0, 0] {shape = array<i64: 16, 16>} : memref<16x16xf32, "gm"> -> memref<16x16xf16, "l1">
    func.return
  }
}

// -----

module attributes {npu.machine = "davinci"} {
  func.func @f() {
    %a = npu.buffer offset 0 : memref<16x16xf16, "l1">
    %b = npu.buffer offset 0 : memref<16x16xf16, "l0b">
    %c = npu.buffer offset 0 : memref<16x16xf32, "l0c">
    // expected-error@+1 {{npu.mma operand A must be in 'l0a' on machine 'davinci', got 'l1'}}
    npu.mma %a[0, 0], %b[0, 0] -> %c[0, 0] {m = 16 : i64, n = 16 : i64, k = 16 : i64} : memref<16x16xf16, "l1">, memref<16x16xf16, "l0b"> -> memref<16x16xf32, "l0c">
    func.return
  }
}

// -----

module attributes {npu.machine = "davinci"} {
  func.func @f() {
    %a = npu.buffer offset 0 : memref<16x16xf8E4M3FN, "l0a">
    %b = npu.buffer offset 0 : memref<16x16xf8E4M3FN, "l0b">
    %c = npu.buffer offset 0 : memref<16x16xf32, "l0c">
    // expected-error@+1 {{matrix unit 'cube' has no f8E4M3FN->f32 instruction (it has f16->f32, bf16->f32, i8->i32)}}
    npu.mma %a[0, 0], %b[0, 0] -> %c[0, 0] {m = 16 : i64, n = 16 : i64, k = 16 : i64} : memref<16x16xf8E4M3FN, "l0a">, memref<16x16xf8E4M3FN, "l0b"> -> memref<16x16xf32, "l0c">
    func.return
  }
}

// -----

module attributes {npu.machine = "davinci"} {
  func.func @f() {
    %a = npu.buffer offset 0 : memref<16x16xi8, "l0a">
    %b = npu.buffer offset 0 : memref<16x16xi8, "l0b">
    %c = npu.buffer offset 0 : memref<16x16xi32, "l0c">
    // expected-error@+1 {{npu.mma shape 16x16x16 must be a multiple of the i8->i32 instruction shape 16x16x32}}
    npu.mma %a[0, 0], %b[0, 0] -> %c[0, 0] {m = 16 : i64, n = 16 : i64, k = 16 : i64} : memref<16x16xi8, "l0a">, memref<16x16xi8, "l0b"> -> memref<16x16xi32, "l0c">
    func.return
  }
}

// -----

module attributes {npu.machine = "davinci"} {
  func.func @f() {
    %x = npu.buffer offset 0 : memref<64xf32, "l1">
    // expected-error@+1 {{npu.vec.relu operand #0 is in 'l1'; the vector unit reads and writes ub}}
    npu.vec.relu %x[0] -> %x[0] : memref<64xf32, "l1"> -> memref<64xf32, "l1">
    func.return
  }
}

// -----

module attributes {npu.machine = "davinci"} {
  func.func @f() {
    %x = npu.buffer offset 0 : memref<128xf32, "ub">
    // expected-error@+1 {{npu.vec.relu mask 128 exceeds the 64 lanes of the vector unit}}
    npu.vec.relu %x[0] -> %x[0] {mask = 128 : i64} : memref<128xf32, "ub"> -> memref<128xf32, "ub">
    func.return
  }
}

// -----

module attributes {npu.machine = "davinci"} {
  func.func @f() {
    %x = npu.buffer offset 0 : memref<128xf32, "ub">
    // expected-error@+1 {{npu.vec.relu window of shape [3, 64] with strides [64, 1] at element 0 ends at element 192, past the 128 elements of memref<128xf32, "ub">}}
    npu.vec.relu %x[0] -> %x[0] {repeat = 3 : i64} : memref<128xf32, "ub"> -> memref<128xf32, "ub">
    func.return
  }
}

// -----

module attributes {npu.machine = "davinci"} {
  func.func @f() {
    // expected-error@+1 {{npu.set_flag source pipe 'mte9' is not a pipe of machine 'davinci' (its pipes: scalar, mte2, mte1, mte3, fixpipe, cube, vector)}}
    npu.set_flag "mte9" -> "vector", 0
    func.return
  }
}

// -----

module attributes {npu.machine = "davinci"} {
  func.func @f() {
    // expected-error@+1 {{npu.wait_flag event id 8 is out of range: machine 'davinci' has 8 per pipe pair}}
    npu.wait_flag "mte2" -> "vector", 8
    func.return
  }
}

// -----

module attributes {npu.machine = "davinci"} {
  func.func @f() {
    // expected-error@+1 {{npu.barrier pipe 'v' is not a pipe of machine 'davinci'}}
    npu.barrier "v"
    func.return
  }
}

// -----

module attributes {npu.machine = "davincii"} {
  func.func @f() {
    // expected-error@+1 {{npu.machine = "davincii": unknown machine 'davincii'}}
    npu.barrier
    func.return
  }
}

// -----

module attributes {npu.machine = "davinci"} {
  func.func @f(%ids: memref<4xi64, "l2">) {
    // expected-error@+1 {{npu.load buffer is in memory space 'l2', which machine 'davinci' does not have (it has gm, l1, l0a, l0b, l0c, ub)}}
    %v = npu.load %ids[0] : memref<4xi64, "l2"> -> i64
    func.return
  }
}
