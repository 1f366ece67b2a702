// xDSL's driver flags keep working in ziggurat-opt.
// RUN: ziggurat-opt %s -p dce,cse --print-between-passes | filecheck %s --check-prefix BETWEEN
// RUN: ziggurat-opt %s -p cse,dce --time-passes | filecheck %s --check-prefix TIME
// RUN: ziggurat-opt %s -p cse,dce --no-verify-each | filecheck %s
// RUN: ziggurat-opt %s -p cse,canonicalize,dce | filecheck %s

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.relu %x : tensor<4xf32>
  %1 = graph.relu %x : tensor<4xf32>
  %dead = graph.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = graph.add %0, %1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}

// dce drops the unused add, cse merges the two relus.
// CHECK:      %0 = graph.relu %x : tensor<4xf32>
// CHECK-NEXT: %1 = graph.add %0, %0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: func.return %1 : tensor<4xf32>

// BETWEEN:      IR after dce:
// BETWEEN-NOT:  %dead
// BETWEEN:      %1 = graph.relu %x
// BETWEEN:      builtin.module
// BETWEEN-NOT:  %1 = graph.relu

// TIME: Pass cse took {{.*}} seconds
// TIME: Pass dce took {{.*}} seconds
