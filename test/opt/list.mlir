// RUN: ziggurat-opt --list-passes | filecheck %s --check-prefix PASSES
// RUN: ziggurat-opt --list-dialects | filecheck %s --check-prefix DIALECTS

// Passes come with the first line of their docstring and their options (type, default),
// xDSL's, ziggurat's and plugins' alike.
// PASSES:      Available passes:
// PASSES:      {{^}}  canonicalize  - Applies all canonicalization patterns.{{$}}
// PASSES:      {{^}}  cse{{$}}
// PASSES:      {{^}}  toy-double-to-add  - Rewrite toy.double on tensors to graph.add of the operand with itself.{{$}}
// PASSES-NEXT: {{^}}      strict: bool (default: false){{$}}
// PASSES-NEXT: {{^}}      report: bool (default: false){{$}}

// DIALECTS:      Available dialects:
// DIALECTS:      {{^}}  builtin  ({{[0-9]+}} ops){{$}}
// DIALECTS:      {{^}}  func  ({{[0-9]+}} ops){{$}}
// DIALECTS:      {{^}}  graph  ({{[0-9]+}} ops){{$}}
// DIALECTS:      {{^}}  toy  (1 op){{$}}
