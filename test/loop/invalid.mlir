// One chunk per verifier rule of the loop dialect.
// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics

func.func @rank(%a: memref<4x4xf32>, %b: memref<16xf32>) {
  // expected-error@+1 {{source and destination must have the same rank, got memref<4x4xf32> and memref<16xf32>}}
  loop.copy %a -> %b : memref<4x4xf32> -> memref<16xf32>
  func.return
}

// -----

func.func @shape(%a: memref<4x4xf32>, %b: memref<4x8xf32>) {
  // expected-error@+1 {{destination shape [4, 8] must be the source shape [4, 4] plus the padding, [4, 4] (dimension 1 differs)}}
  %t = loop.copy_async %a -> %b : memref<4x4xf32> -> memref<4x8xf32>
  func.return
}

// -----

func.func @padded_shape(%a: memref<4x4xf32>, %b: memref<6x6xf32>) {
  // expected-error@+1 {{destination shape [6, 6] must be the source shape [4, 4] plus the padding, [6, 5] (dimension 1 differs)}}
  loop.copy %a -> %b {pad = array<i64: 1, 1, 0, 1>} : memref<4x4xf32> -> memref<6x6xf32>
  func.return
}

// -----

func.func @pad_length(%a: memref<4x4xf32>, %b: memref<6x4xf32>) {
  // expected-error@+1 {{pad takes a non-negative (low, high) pair per dimension of memref<4x4xf32>, got [1, 1]}}
  loop.copy %a -> %b {pad = array<i64: 1, 1>} : memref<4x4xf32> -> memref<6x4xf32>
  func.return
}

// -----

func.func @pad_negative(%a: memref<4x4xf32>, %b: memref<4x4xf32>) {
  // expected-error@+1 {{pad takes a non-negative (low, high) pair per dimension of memref<4x4xf32>, got [1, -1, 0, 0]}}
  loop.copy %a -> %b {pad = array<i64: 1, -1, 0, 0>} : memref<4x4xf32> -> memref<4x4xf32>
  func.return
}

// -----

func.func @pad_value(%a: memref<4x4xf32>, %b: memref<4x4xf32>) {
  // expected-error@+1 {{pad_value is the value of the padding and needs pad}}
  loop.copy %a -> %b {pad_value = 1.0 : f64} : memref<4x4xf32> -> memref<4x4xf32>
  func.return
}
