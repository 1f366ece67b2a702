// What stays refused next to rows of one element: a source read with a stride along an innermost
// dimension of more than one element (the vector unit reads blocks of adjacent elements; a
// transpose belongs to a copy, which the DMA engines do).
// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics -p 'loop-to-npu{machine=tensorcore}'

func.func @strided_rows(%a: memref<16x8xf32, "rf">, %b: memref<8x16xf32, "rf">) {
  // expected-error@+1 {{linalg.generic: operand #0 is not contiguous in its innermost dimension (stride 8); the vector unit reads blocks of adjacent elements}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %b : memref<16x8xf32, "rf">, memref<8x16xf32, "rf">) outs(%b : memref<8x16xf32, "rf">) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  }
  func.return
}
