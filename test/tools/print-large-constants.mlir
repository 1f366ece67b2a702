// Every tool's printed IR parses back: a splat of more elements than the parser expands
// from a number (MAX_SPLAT_ELEMENTS, 2**24; VGG-19's fc6 weights) prints as the hex of
// one element through ziggurat-opt's output (-t mlir, the default, and -o),
// --print-between-passes and ziggurat-tune, and the printed text is read again by
// ziggurat-opt. (xDSL's printer writes `dense<3>`, which the parser refuses at this size.)
// RUN: ziggurat-opt %s | ziggurat-opt | filecheck %s
// RUN: ziggurat-opt %s -t mlir -o %t.mlir
// RUN: ziggurat-opt %t.mlir | filecheck %s
// RUN: ziggurat-opt %s -p cse,dce --print-between-passes | filecheck %s --check-prefix=BETWEEN
// RUN: ziggurat-opt %s -p cse,dce --print-between-passes | sed -n '2,/^}$/p' | ziggurat-opt | filecheck %s
// RUN: ziggurat-tune %s --machine davinci --jobs 1 2>/dev/null | ziggurat-opt | filecheck %s

func.func @main(%x: tensor<4097x4096xi8>) -> tensor<4097x4096xi8> {
  %w = graph.constant dense<"0x03"> : tensor<4097x4096xi8>
  %y = graph.add %x, %w : (tensor<4097x4096xi8>, tensor<4097x4096xi8>) -> tensor<4097x4096xi8>
  func.return %y : tensor<4097x4096xi8>
}

// CHECK:      %w = graph.constant dense<"0x03"> : tensor<4097x4096xi8>
// CHECK-NEXT: %y = graph.add %x, %w

// BETWEEN:      IR after cse:
// BETWEEN:      %w = graph.constant dense<"0x03"> : tensor<4097x4096xi8>
// BETWEEN:      %w = graph.constant dense<"0x03"> : tensor<4097x4096xi8>
