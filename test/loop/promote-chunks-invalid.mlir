// loop-legalize-copies splits a copy too large for its staging space into chunks; one with
// nothing left to split (a single element padded wider than half of ub) is an error at the op,
// not an endless split.
// RUN: ziggurat-opt %s --verify-diagnostics -p 'loop-promote-to-memory-space{machine=davinci},loop-legalize-copies{machine=davinci}'

func.func @nothing_to_split(%x: memref<1x1xf16, "gm">, %result0: memref<1x70000xf16, "gm">) {
  // expected-error@+1 {{this copy needs a staging buffer of 140000 bytes in 'ub', more than half of it (131072 bytes), and has no dim left to split}}
  loop.copy %x -> %result0 {pad = array<i64: 0, 0, 35000, 34999>, pad_value = 0.0 : f64} : memref<1x1xf16, "gm"> -> memref<1x70000xf16, "gm">
  func.return
}
