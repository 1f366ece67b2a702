// What tile-to-loop refuses, each at the op that it cannot bufferize.
// RUN: ziggurat-opt %s --split-input-file --verify-diagnostics -p "tile-to-loop{machine=davinci}"

func.func @dynamic(%x: tensor<4x8xf32>, %n: index) -> tensor<4x8xf32> {
  // expected-error@+1 {{tile-to-loop needs static shapes; 'tensor.empty' has the dynamic type tensor<?x8xf32>}}
  %e = tensor.empty(%n) : tensor<?x8xf32>
  func.return %x : tensor<4x8xf32>
}

// -----

// expected-error@+1 {{tile-to-loop needs static shapes; 'func.func' has the dynamic type tensor<?xf32>}}
func.func @dynamic_argument(%x: tensor<?xf32>) {
  func.return
}

// -----

func.func @pad_value(%x: tensor<4xf32>, %v: f32) -> tensor<6xf32> {
  // expected-error@+1 {{tile-to-loop bufferizes tensor.pad with a constant padding value only}}
  %p = tensor.pad %x low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %v : f32
  } : tensor<4xf32> to tensor<6xf32>
  func.return %p : tensor<6xf32>
}

// -----

func.func @bitcast(%x: tensor<4xi16>) -> tensor<4xf16> {
  // expected-error@+1 {{tile-to-loop cannot bufferize a bitcast from i16 to f16}}
  %b = tile.bitcast %x : tensor<4xi16> to tensor<4xf16>
  func.return %b : tensor<4xf16>
}
