// `-f` takes xDSL's frontend spec, `name{option=value ...}`; the mlir frontend is ziggurat's parser.
// RUN: ziggurat-opt %s -f mlir | filecheck %s
// RUN: ziggurat-opt %s -f 'mlir{no_implicit_module=false}' | filecheck %s
// RUN: not ziggurat-opt %s -f 'mlir{no_implicit_module=true}' 2>&1 | filecheck %s --check-prefix EXPLICIT
// RUN: not ziggurat-opt %s -f 'mlir{bogus=1}' 2>&1 | filecheck %s --check-prefix OPTION
// RUN: not ziggurat-opt %s -f 'mlir{' 2>&1 | filecheck %s --check-prefix MALFORMED
// RUN: not ziggurat-opt %s -f nonesuch 2>&1 | filecheck %s --check-prefix UNKNOWN

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  func.return %x : tensor<4xf32>
}

// CHECK: func.func @f

// EXPLICIT: frontend.mlir:{{[0-9]+}}:{{[0-9]+}}: error: builtin.module operation expected
// EXPLICIT-NOT: internal error

// OPTION: error: invalid options for frontend 'mlir': Provided arguments ["bogus"] not found
// OPTION-NOT: internal error

// MALFORMED: error: argument -f/--frontend: malformed frontend 'mlir{': Expected argument name here
// MALFORMED-NOT: Traceback

// UNKNOWN: error: argument -f/--frontend: invalid choice: 'nonesuch'
