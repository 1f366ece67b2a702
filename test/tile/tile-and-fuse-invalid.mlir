// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics -p 'tile-and-fuse{sizes=4,4}'

// Tiles are static: a dynamic shape is refused at the op that has it.
func.func @dynamic(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error@+1 {{tile-and-fuse: dynamic shapes are not supported, got tensor<?x8xf32>}}
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x8xf32>) outs(%x : tensor<?x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<?x8xf32>
  func.return %y : tensor<?x8xf32>
}

// -----

// tile.interchange orders parallel loops: the matmul's loop 2 is its reduction.
func.func @interchange_reduction(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error@+1 {{tile.interchange must list distinct parallel loops of this op (0 to 2, reductions excluded), outermost first; got array<i64: 2, 0>}}
  %y = linalg.matmul {tile.interchange = array<i64: 2, 0>} ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %y : tensor<8x8xf32>
}

// -----

// Each loop once.
func.func @interchange_repeated(%a: tensor<8x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error@+1 {{tile.interchange must list distinct parallel loops of this op (0 to 2, reductions excluded), outermost first; got array<i64: 1, 1>}}
  %y = linalg.matmul {tile.interchange = array<i64: 1, 1>} ins(%a, %b : tensor<8x8xf32>, tensor<8x8xf32>) outs(%c : tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %y : tensor<8x8xf32>
}
