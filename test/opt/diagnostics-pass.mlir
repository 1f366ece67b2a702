// RUN: not ziggurat-opt %s -p cse,canonicalise 2>&1 | filecheck %s --check-prefix UNKNOWN
// RUN: not ziggurat-opt %s -p 'toy-double-to-add{strikt=true}' 2>&1 | filecheck %s --check-prefix OPTION
// RUN: not ziggurat-opt %s -p 'toy-double-to-add{strict=maybe}' 2>&1 | filecheck %s --check-prefix VALUE
// RUN: not ziggurat-opt %s -p 'cse{' 2>&1 | filecheck %s --check-prefix SYNTAX --strict-whitespace
// RUN: not ziggurat-opt %s -p 'toy-double-to-add{strict=true}' 2>&1 | filecheck %s --check-prefix FAILED --strict-whitespace
// RUN: ziggurat-opt %s -p toy-double-to-add 2>&1 | filecheck %s --check-prefix WARNING

// UNKNOWN:     error: unknown pass 'canonicalise'; did you mean 'canonicalize'?
// UNKNOWN-NOT: Traceback
// OPTION:      error: pass 'toy-double-to-add' has no option 'strikt'; did you mean 'strict'? (options: strict, report)
// VALUE:       error: invalid value 'maybe' for option 'strict' of pass 'toy-double-to-add': expected bool
// SYNTAX:      {{^}}error: malformed pass pipeline: Expected argument name here{{$}}
// SYNTAX-NEXT: {{^cse\{$}}
// SYNTAX-NEXT: {{^}}    ^{{$}}

// A pass fails by raising a DiagnosticError at the op it cannot handle.
func.func @f(%x: f32) -> f32 {
// FAILED:      {{^}}{{.*}}diagnostics-pass.mlir:[[# @LINE + 5]]:3: error: cannot rewrite toy.double of f32: graph.add takes tensors{{$}}
// FAILED-NEXT: {{^}}  %0 = toy.double %x : f32{{$}}
// FAILED-NEXT: {{^}}  ^{{$}}
// FAILED-NOT:  builtin.module
// WARNING:     diagnostics-pass.mlir:[[# @LINE + 1]]:3: warning: cannot rewrite toy.double of f32
  %0 = toy.double %x : f32
  func.return %0 : f32
}
// WARNING: toy.double %x : f32
