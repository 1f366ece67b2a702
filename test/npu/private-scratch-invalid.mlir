// npu-private-scratch reads the core count from the module's npu.cores; a count that is not an
// integer >= 1 is refused at the module.
// RUN: ziggurat-opt %s -p 'npu-private-scratch' --verify-diagnostics

// expected-error@+1 {{npu-private-scratch: npu.cores must be an integer >= 1}}
builtin.module attributes {npu.cores = 0 : i64} {
  func.func @f() {
    func.return
  }
}
