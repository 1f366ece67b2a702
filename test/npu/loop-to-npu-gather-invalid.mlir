// The gathers loop-to-npu refuses, each with an error at the generic saying why.
// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics -p 'loop-to-npu{machine=davinci}'

func.func @float_index(%table: memref<16x8xf32, "gm">, %ids: memref<4xf32, "ub">, %out: memref<4x8xf32, "ub">) {
  // expected-error@+1 {{linalg.generic: loop-to-npu computes a gather's index on the scalar unit, which has no arith.fptosi on f32}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ids : memref<4xf32, "ub">) outs(%out : memref<4x8xf32, "ub">) {
  ^bb0(%i: f32, %o: f32):
    %n = arith.fptosi %i : f32 to i32
    %x = arith.index_cast %n : i32 to index
    %d1 = linalg.index 1 : index
    %v = memref.load %table[%x, %d1] : memref<16x8xf32, "gm">
    linalg.yield %v : f32
  }
  func.return
}

// -----

func.func @index_expression(%table: memref<16x8xf32, "gm">, %ids: memref<8xi64, "ub">, %out: memref<4x8xf32, "ub">) {
  // expected-error@+1 {{linalg.generic: loop-to-npu reads a gather's indices through a projected permutation of its loops, got (d0, d1) -> ((d0 * 2)) for input #0}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0 * 2)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ids : memref<8xi64, "ub">) outs(%out : memref<4x8xf32, "ub">) {
  ^bb0(%i: i64, %o: f32):
    %x = arith.index_cast %i : i64 to index
    %d1 = linalg.index 1 : index
    %v = memref.load %table[%x, %d1] : memref<16x8xf32, "gm">
    linalg.yield %v : f32
  }
  func.return
}

// -----

func.func @transposed_output(%table: memref<16x8xf32, "gm">, %ids: memref<4xi64, "ub">, %out: memref<8x4xf32, "ub">) {
  // expected-error@+1 {{linalg.generic: loop-to-npu gathers into an output read in loop order, got (d0, d1) -> (d1, d0)}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1, d0)>], iterator_types = ["parallel", "parallel"]} ins(%ids : memref<4xi64, "ub">) outs(%out : memref<8x4xf32, "ub">) {
  ^bb0(%i: i64, %o: f32):
    %x = arith.index_cast %i : i64 to index
    %d1 = linalg.index 1 : index
    %v = memref.load %table[%x, %d1] : memref<16x8xf32, "gm">
    linalg.yield %v : f32
  }
  func.return
}

// -----

func.func @summed(%table: memref<16x8xf32, "gm">, %ids: memref<4xi64, "ub">, %w: memref<4x8xf32, "ub">, %out: memref<4xf32, "ub">) {
  // expected-error@+1 {{linalg.generic: loop-to-npu gathers rows in parallel loops only}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%ids, %w : memref<4xi64, "ub">, memref<4x8xf32, "ub">) outs(%out : memref<4xf32, "ub">) {
  ^bb0(%i: i64, %u: f32, %o: f32):
    %x = arith.index_cast %i : i64 to index
    %d1 = linalg.index 1 : index
    %v = memref.load %table[%x, %d1] : memref<16x8xf32, "gm">
    linalg.yield %v : f32
  }
  func.return
}

// -----

func.func @no_route(%table: memref<16x8xf16, "l0a">, %ids: memref<4xi64, "ub">, %out: memref<4x8xf16, "ub">) {
  // expected-error@+1 {{linalg.generic: machine 'davinci' has no DMA route from 'l0a' to 'ub' for the gathered rows (its paths: gm -> l1, gm -> ub, l1 -> l0a, l1 -> l0b, ub -> gm, l0c -> ub, l0c -> gm)}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ids : memref<4xi64, "ub">) outs(%out : memref<4x8xf16, "ub">) {
  ^bb0(%i: i64, %o: f16):
    %x = arith.index_cast %i : i64 to index
    %d1 = linalg.index 1 : index
    %v = memref.load %table[%x, %d1] : memref<16x8xf16, "l0a">
    linalg.yield %v : f16
  }
  func.return
}
