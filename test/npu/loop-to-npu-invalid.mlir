// What loop-to-npu refuses: each error is at the op, names the machine and what it lacks.
// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics -p 'loop-to-npu{machine=davinci}'

func.func @no_engine(%A: memref<64x64xf16, "gm">, %a: memref<64x64xf16, "l0a">) {
  // expected-error@+1 {{loop.copy: machine 'davinci' has no DMA engine from 'gm' to 'l0a' (its paths: gm->l1, gm->ub, l1->l0a, l1->l0b, ub->gm, l0c->ub, l0c->gm)}}
  loop.copy %A -> %a : memref<64x64xf16, "gm"> -> memref<64x64xf16, "l0a">
  func.return
}

// -----

func.func @no_cast(%A: memref<64x64xf32, "gm">, %a: memref<64x64xf16, "l1">) {
  // expected-error@+1 {{loop.copy: engine 'mte2' of machine 'davinci' cannot cast f32 to f16 in flight from 'gm' to 'l1'}}
  loop.copy %A -> %a : memref<64x64xf32, "gm"> -> memref<64x64xf16, "l1">
  func.return
}

// -----

func.func @no_pad(%c: memref<16x16xf32, "l0c">, %u: memref<16x32xf32, "ub">) {
  // expected-error@+1 {{loop.copy_async: engine 'fixpipe' of machine 'davinci' cannot pad in flight from 'l0c' to 'ub'}}
  %t = loop.copy_async %c -> %u {pad = array<i64: 0, 0, 0, 16>} : memref<16x16xf32, "l0c"> -> memref<16x32xf32, "ub">
  loop.wait %t : !loop.token
  func.return
}

// -----

func.func @matmul_in_l1(%a: memref<16x16xf16, "l1">, %b: memref<16x16xf16, "l0b">, %c: memref<16x16xf32, "l0c">) {
  // expected-error@+1 {{linalg.generic: operand A is in 'l1'; the matrix unit 'cube' of machine 'davinci' reads A from 'l0a' (run loop-promote-to-memory-space first)}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<16x16xf16, "l1">, memref<16x16xf16, "l0b">) outs(%c : memref<16x16xf32, "l0c">) {
  ^bb0(%x: f16, %w: f16, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %we = arith.extf %w : f16 to f32
    %p = arith.mulf %xe, %we : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

func.func @f32_matmul(%a: memref<16x16xf32, "l0a">, %b: memref<16x16xf32, "l0b">, %c: memref<16x16xf32, "l0c">) {
  // expected-error@+1 {{linalg.matmul: the matrix unit 'cube' of machine 'davinci' has no f32->f32 instruction (it has f16->f32, bf16->f32, i8->i32)}}
  linalg.matmul ins(%a, %b : memref<16x16xf32, "l0a">, memref<16x16xf32, "l0b">) outs(%c : memref<16x16xf32, "l0c">)
  func.return
}

// -----

func.func @transposed_a(%a: memref<32x16xf16, "l0a">, %b: memref<32x16xf16, "l0b">, %c: memref<16x16xf32, "l0c">) {
  // expected-error@+1 {{linalg.generic: operand A must be a row-major tile of the two innermost dimensions of its buffer memref<32x16xf16, "l0a"> for the matrix unit}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<32x16xf16, "l0a">, memref<32x16xf16, "l0b">) outs(%c : memref<16x16xf32, "l0c">) {
  ^bb0(%x: f16, %w: f16, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %we = arith.extf %w : f16 to f32
    %p = arith.mulf %xe, %we : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

func.func @unpadded(%a: memref<100x64xf16, "l0a">, %b: memref<64x16xf16, "l0b">, %c: memref<112x16xf32, "l0c">) {
  %cv = memref.subview %c[0, 0] [100, 16] [1, 1] : memref<112x16xf32, "l0c"> to memref<100x16xf32, strided<[16, 1]>, "l0c">
  // expected-error@+1 {{linalg.generic: the 112x16x64 instruction (rounded up to the unit's shape) reads a 112x64 tile of operand A past its buffer memref<100x64xf16, "l0a">; loop-promote-to-memory-space rounds buffers up to the unit's multiples}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<100x64xf16, "l0a">, memref<64x16xf16, "l0b">) outs(%cv : memref<100x16xf32, strided<[16, 1]>, "l0c">) {
  ^bb0(%x: f16, %w: f16, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %we = arith.extf %w : f16 to f32
    %p = arith.mulf %xe, %we : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

func.func @vector_in_gm(%x: memref<64xf16, "gm">, %y: memref<64xf16, "gm">) {
  // expected-error@+1 {{linalg.generic: operand #0 is in 'gm'; the vector unit 'vector' of machine 'davinci' works in ub (run loop-promote-to-memory-space first)}}
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<64xf16, "gm">) outs(%y : memref<64xf16, "gm">) {
  ^bb0(%in: f16, %out: f16):
    %e = math.exp %in : f16
    linalg.yield %e : f16
  }
  func.return
}

// -----

func.func @no_instruction(%x: memref<64xf32, "ub">, %y: memref<64xf32, "ub">) {
  // expected-error@+1 {{linalg.generic: machine 'davinci' has no vector instruction for math.log}}
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<64xf32, "ub">) outs(%y : memref<64xf32, "ub">) {
  ^bb0(%a: f32, %out: f32):
    %r = math.log %a : f32
    linalg.yield %r : f32
  }
  func.return
}

// -----

func.func @not_vectorized(%x: memref<64xf32, "ub">, %y: memref<64xf32, "ub">) {
  // expected-error@+1 {{linalg.generic: loop-to-npu maps one body op to one vector instruction, got math.exp, arith.addf (run tile-vectorize first)}}
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<64xf32, "ub">) outs(%y : memref<64xf32, "ub">) {
  ^bb0(%a: f32, %out: f32):
    %e = math.exp %a : f32
    %r = arith.addf %e, %a : f32
    linalg.yield %r : f32
  }
  func.return
}

// -----

func.func @outer_reduction(%x: memref<16x64xf32, "ub">, %y: memref<64xf32, "ub">) {
  // expected-error@+1 {{linalg.generic: the vector unit of machine 'davinci' reduces the innermost dimension only (loop dims [0] are reductions)}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%x : memref<16x64xf32, "ub">) outs(%y : memref<64xf32, "ub">) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  }
  func.return
}

// -----

// expected-error@+1 {{loop-to-npu{machine=davinci}: the module targets machine 'tensorcore' (npu.machine)}}
module attributes {npu.machine = "tensorcore"} {
  func.func @other_machine() {
    func.return
  }
}

// -----

// A reinterpreted view must stay inside its buffer: offset 4096 of 64x32 elements is past its end.
func.func @view_past_the_buffer(%a: memref<64x32xf16, "ub">, %result0: memref<32x64xf16, "gm">) {
  // expected-error@+1 {{loop-to-npu folds only static memref.reinterpret_cast views inside a whole buffer}}
  %t = memref.reinterpret_cast %a to offset: [4096], sizes: [32, 64], strides: [1, 32] : memref<64x32xf16, "ub"> to memref<32x64xf16, strided<[1, 32], offset: 4096>, "ub">
  loop.copy %t -> %result0 : memref<32x64xf16, strided<[1, 32], offset: 4096>, "ub"> -> memref<32x64xf16, "gm">
  func.return
}
