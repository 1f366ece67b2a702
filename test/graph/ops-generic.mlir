// Every op of ops.mlir through the generic form and back: the custom form printed at the end is unchanged.
// RUN: ziggurat-opt %S/ops.mlir --print-op-generic | ziggurat-opt | filecheck %S/ops.mlir

// Ops written in the generic form: properties left out take their defaults,
// which the generic printer spells out and the custom printer leaves out.
// RUN: ziggurat-opt %s --print-op-generic | ziggurat-opt --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: ziggurat-opt %s | filecheck %s

// GENERIC-LABEL: "func.func"() <{sym_name = "generic"
// GENERIC:      %conv = "graph.conv2d"(%x, %w) <{groups = 3 : i64, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, layout = "NCHW"}> : (tensor<1x3x5x5xf32>, tensor<3x1x3x3xf32>) -> tensor<1x3x3x3xf32>
// GENERIC-NEXT: %conv_bias = "graph.conv2d"(%x, %w, %b) <{groups = 3 : i64, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, layout = "NCHW"}> : (tensor<1x3x5x5xf32>, tensor<3x1x3x3xf32>, tensor<3xf32>) -> tensor<1x3x3x3xf32>
// GENERIC-NEXT: %concat = "graph.concat"(%x, %x) <{axis = 0 : i64}> : (tensor<1x3x5x5xf32>, tensor<1x3x5x5xf32>) -> tensor<2x3x5x5xf32>
// GENERIC-NEXT: %clip = "graph.clip"(%x) <{max = 6.000000e+00 : f32}> : (tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32>
// GENERIC-NEXT: %sum = "graph.reduce_sum"(%x) <{keepdims = true}> : (tensor<1x3x5x5xf32>) -> tensor<1x1x1x1xf32>
// GENERIC-NEXT: %pool = "graph.avg_pool"(%x) <{kernel = array<i64: 2, 2>, count_include_pad = false, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, ceil_mode = false, layout = "NCHW"}> : (tensor<1x3x5x5xf32>) -> tensor<1x3x4x4xf32>
// GENERIC-NEXT: %reshape = "graph.reshape"(%x) : (tensor<1x3x5x5xf32>) -> tensor<75xf32>

// CHECK-LABEL: func.func @generic(
// CHECK-NEXT:    %conv = graph.conv2d %x, %w {groups = 3 : i64} : (tensor<1x3x5x5xf32>, tensor<3x1x3x3xf32>) -> tensor<1x3x3x3xf32>
// CHECK-NEXT:    %conv_bias = graph.conv2d %x, %w, %b {groups = 3 : i64} : (tensor<1x3x5x5xf32>, tensor<3x1x3x3xf32>, tensor<3xf32>) -> tensor<1x3x3x3xf32>
// CHECK-NEXT:    %concat = graph.concat %x, %x {axis = 0 : i64} : (tensor<1x3x5x5xf32>, tensor<1x3x5x5xf32>) -> tensor<2x3x5x5xf32>
// CHECK-NEXT:    %clip = graph.clip %x {max = 6.000000e+00 : f32} : tensor<1x3x5x5xf32>
// CHECK-NEXT:    %sum = graph.reduce_sum %x : tensor<1x3x5x5xf32> -> tensor<1x1x1x1xf32>
// CHECK-NEXT:    %pool = graph.avg_pool %x {kernel = array<i64: 2, 2>} : tensor<1x3x5x5xf32> -> tensor<1x3x4x4xf32>
// CHECK-NEXT:    %reshape = graph.reshape %x : tensor<1x3x5x5xf32> -> tensor<75xf32>
"func.func"() <{sym_name = "generic", function_type = (tensor<1x3x5x5xf32>, tensor<3x1x3x3xf32>, tensor<3xf32>) -> tensor<75xf32>}> ({
^bb0(%x: tensor<1x3x5x5xf32>, %w: tensor<3x1x3x3xf32>, %b: tensor<3xf32>):
  %conv = "graph.conv2d"(%x, %w) <{groups = 3 : i64}> : (tensor<1x3x5x5xf32>, tensor<3x1x3x3xf32>) -> tensor<1x3x3x3xf32>
  %conv_bias = "graph.conv2d"(%x, %w, %b) <{groups = 3 : i64}> : (tensor<1x3x5x5xf32>, tensor<3x1x3x3xf32>, tensor<3xf32>) -> tensor<1x3x3x3xf32>
  %concat = "graph.concat"(%x, %x) <{axis = 0 : i64}> : (tensor<1x3x5x5xf32>, tensor<1x3x5x5xf32>) -> tensor<2x3x5x5xf32>
  %clip = "graph.clip"(%x) <{max = 6.000000e+00 : f32}> : (tensor<1x3x5x5xf32>) -> tensor<1x3x5x5xf32>
  %sum = "graph.reduce_sum"(%x) : (tensor<1x3x5x5xf32>) -> tensor<1x1x1x1xf32>
  %pool = "graph.avg_pool"(%x) <{kernel = array<i64: 2, 2>}> : (tensor<1x3x5x5xf32>) -> tensor<1x3x4x4xf32>
  %reshape = "graph.reshape"(%x) : (tensor<1x3x5x5xf32>) -> tensor<75xf32>
  "func.return"(%reshape) : (tensor<75xf32>) -> ()
}) : () -> ()
