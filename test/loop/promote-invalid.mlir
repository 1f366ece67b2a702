// loop-promote-to-memory-space refuses, at the op, what the machine cannot hold or reach.
// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics -p 'loop-promote-to-memory-space{machine=davinci},loop-legalize-copies{machine=davinci}'

// A 256x256 f16 lhs tile is 128 KiB; davinci's l0a holds 64 KiB.
func.func @too_big(%A: memref<256x256xf16, "gm">, %B: memref<256x16xf16, "gm">, %result0: memref<256x16xf32, "gm">) {
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<256x16xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<256x16xf32>)
  // expected-error@+1 {{the buffer for operand #0 of linalg.generic, memref<256x256xf16, "l0a"> (131072 bytes), does not fit 'l0a' (65536 bytes) on machine 'davinci'}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%A, %B : memref<256x256xf16, "gm">, memref<256x16xf16, "gm">) outs(%acc : memref<256x16xf32>) {
  ^bb0(%x: f16, %y: f16, %o: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  loop.copy %acc -> %result0 : memref<256x16xf32> -> memref<256x16xf32, "gm">
  func.return
}

// -----

// An accumulator that is a function argument would have to be read gm -> l0c: no engine does that.
func.func @no_route(%A: memref<16x16xf16, "gm">, %B: memref<16x16xf16, "gm">, %result0: memref<16x16xf32, "gm">) {
  // expected-error@+1 {{no DMA route from 'gm' to 'l0c' on machine 'davinci' for operand #2 of linalg.generic (paths: gm -> l1, gm -> ub, l1 -> l0a, l1 -> l0b, ub -> gm, l0c -> ub, l0c -> gm)}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%A, %B : memref<16x16xf16, "gm">, memref<16x16xf16, "gm">) outs(%result0 : memref<16x16xf32, "gm">) {
  ^bb0(%x: f16, %y: f16, %o: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  func.return
}

// -----

// A memory space the machine does not have (systolic's global memory is "dram").
func.func @unknown_space(%x: memref<16x16xf16, "dram">, %result0: memref<16x16xf16, "gm">) {
  // expected-error@+1 {{operand #0 of linalg.generic is in memory space 'dram', which machine 'davinci' does not have (spaces: gm, l1, l0a, l0b, l0c, ub)}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<16x16xf16, "dram">) outs(%result0 : memref<16x16xf16, "gm">) {
  ^bb0(%a: f16, %o: f16):
    %r = math.exp %a : f16
    linalg.yield %r : f16
  }
  func.return
}

// -----

func.func @dynamic(%x: memref<?x16xf16, "gm">) {
  %c0 = arith.constant 0 : index
  // expected-error@+1 {{loop-promote-to-memory-space needs static shapes, got memref<?x16xf16, "gm">}}
  %d = memref.dim %x, %c0 : memref<?x16xf16, "gm">
  func.return
}

// -----

// A casting copy where no engine on the route casts (davinci's mte2 does not).
func.func @no_cast(%x: memref<16xf16, "gm">, %result0: memref<16xf32, "gm">) {
  %u = memref.alloc() : memref<16xf32, "ub">
  // expected-error@+1 {{no engine on the route gm -> ub casts on machine 'davinci'}}
  loop.copy %x -> %u : memref<16xf16, "gm"> -> memref<16xf32, "ub">
  loop.copy %u -> %result0 : memref<16xf32, "ub"> -> memref<16xf32, "gm">
  func.return
}
