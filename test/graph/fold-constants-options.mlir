// RUN: not ziggurat-opt %s -p 'graph-fold-constants{max-elements=-1}' 2>&1 | filecheck %s --check-prefix=NEGATIVE
// RUN: not ziggurat-opt %s -p 'graph-fold-constants{max-elements=many}' 2>&1 | filecheck %s --check-prefix=NOT-INT
// RUN: not ziggurat-opt %s -p 'graph-fold-constants{max-elems=4}' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not ziggurat-opt %s -p 'graph-canonicalize{max-elements=-5}' 2>&1 | filecheck %s --check-prefix=CANON

// Option values the passes refuse, reported before any IR is touched.

// NEGATIVE: error: invalid options for pass 'graph-fold-constants': max-elements must be >= 0, got -1
// NOT-INT: error: invalid value 'many' for option 'max-elements' of pass 'graph-fold-constants': expected int
// UNKNOWN: error: pass 'graph-fold-constants' has no option 'max-elems'; did you mean 'max-elements'? (options: max-elements)
// CANON: error: invalid options for pass 'graph-canonicalize': max-elements must be >= 0, got -5

func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}
