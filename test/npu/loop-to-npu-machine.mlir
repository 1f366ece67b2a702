// What a machine's units lack is an error at the op naming the machine (a davinci without exp and
// without padding on MTE2), and the tensorcore preset's 2-d engines split a 3-d copy into a loop.
// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics -p 'loop-to-npu{machine="%S/Inputs/davinci-no-exp.toml"}'

func.func @no_exp(%x: memref<64xf32, "ub">, %y: memref<64xf32, "ub">) {
  // expected-error@+1 {{linalg.generic: the vector unit 'vector' of machine 'davinci-no-exp' has no 'exp'}}
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : memref<64xf32, "ub">) outs(%y : memref<64xf32, "ub">) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  }
  func.return
}

// -----

func.func @no_pad(%X: memref<14x14xf16, "gm">, %x: memref<16x16xf16, "l1">) {
  // expected-error@+1 {{loop.copy: engine 'mte2' of machine 'davinci-no-exp' cannot pad in flight from 'gm' to 'l1'}}
  loop.copy %X -> %x {pad = array<i64: 1, 1, 1, 1>} : memref<14x14xf16, "gm"> -> memref<16x16xf16, "l1">
  func.return
}
