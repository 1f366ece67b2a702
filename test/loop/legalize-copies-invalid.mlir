// loop-legalize-copies refuses, at the copy, what no route of davinci's engines does.
// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics -p 'loop-legalize-copies{machine=davinci}'

func.func @no_cast_on_route(%x: memref<16x16xf32, "gm">) {
  %l1 = memref.alloc() : memref<16x16xf16, "l1">
  // expected-error@+1 {{no engine on the route gm -> l1 casts on machine 'davinci'}}
  loop.copy %x -> %l1 : memref<16x16xf32, "gm"> -> memref<16x16xf16, "l1">
  func.return
}

// -----

func.func @no_pad_on_route(%result0: memref<18x16xf32, "gm">) {
  %c = memref.alloc() : memref<16x16xf32, "l0c">
  // expected-error@+1 {{no engine on the route l0c -> gm pads on machine 'davinci'}}
  loop.copy %c -> %result0 {pad = array<i64: 1, 1, 0, 0>, pad_value = 0.0 : f64} : memref<16x16xf32, "l0c"> -> memref<18x16xf32, "gm">
  func.return
}

// -----

func.func @no_route(%result0: memref<16x16xf16, "gm">) {
  %a = memref.alloc() : memref<16x16xf16, "l0a">
  // expected-error@+1 {{no DMA route from 'l0a' to 'gm' on machine 'davinci' for the copy (paths: gm -> l1, gm -> ub, l1 -> l0a, l1 -> l0b, ub -> gm, l0c -> ub, l0c -> gm)}}
  loop.copy %a -> %result0 : memref<16x16xf16, "l0a"> -> memref<16x16xf16, "gm">
  func.return
}

// -----

func.func @no_way_back() {
  %a = memref.alloc() : memref<16x16xf16, "l0a">
  %b = memref.alloc() : memref<16x16xf16, "l0a">
  // expected-error@+1 {{no DMA route out of 'l0a' and back on machine 'davinci'}}
  loop.copy %a -> %b : memref<16x16xf16, "l0a"> -> memref<16x16xf16, "l0a">
  func.return
}

// -----

func.func @unknown_space(%x: memref<16x16xf16, "dram">, %result0: memref<16x16xf16, "gm">) {
  // expected-error@+1 {{the copy is in memory space 'dram', which machine 'davinci' does not have (spaces: gm, l1, l0a, l0b, l0c, ub)}}
  loop.copy %x -> %result0 : memref<16x16xf16, "dram"> -> memref<16x16xf16, "gm">
  func.return
}

// -----

// An async copy is not split into chunks: its staging buffer must fit.
func.func @staging_too_big(%x: memref<1024x512xf32, "gm">) {
  %a = memref.alloc() : memref<1024x512xf32, "l0a">
  // expected-error@+1 {{the buffer for a copy's hop, memref<1024x512xf32, "l1"> (2097152 bytes), does not fit 'l1' (1048576 bytes) on machine 'davinci'}}
  %t = loop.copy_async %x -> %a : memref<1024x512xf32, "gm"> -> memref<1024x512xf32, "l0a">
  loop.wait %t : !loop.token
  func.return
}

// -----

func.func @dynamic(%x: memref<?x16xf16, "gm">, %y: memref<?x16xf16, "gm">) {
  // expected-error@+1 {{loop-legalize-copies needs static shapes, got memref<?x16xf16, "gm">}}
  loop.copy %x -> %y : memref<?x16xf16, "gm"> -> memref<?x16xf16, "gm">
  func.return
}
