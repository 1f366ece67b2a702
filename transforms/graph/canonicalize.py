"""`graph-canonicalize`: algebraic simplification of graph-level IR."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.transforms.dead_code_elimination import region_dce

from ziggurat.dialects.graph_canonicalization import patterns_for
from ziggurat.locations import Located
from ziggurat.transforms.graph.fold_constants import (
    DEFAULT_MAX_ELEMENTS,
    FoldConstantOp,
    check_max_elements,
)


class GraphCanonicalizationPatterns(RewritePattern):
    """The `graph_canonicalization.PATTERNS` of the op's type, first match wins."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        for pattern in patterns_for(type(op)):
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return


@dataclass(frozen=True)
class GraphCanonicalizePass(ModulePass):
    """Simplify graph ops algebraically, fold them on constants and erase dead ops.

    The patterns are those of `dialects/graph_canonicalization.py` (x + 0 -> x,
    transpose of transpose -> one transpose, a gather at a constant run of
    indices -> a slice, ...); folding is
    `graph-fold-constants`'s; all run together to a fixed point. xDSL's
    `canonicalize` applies the same patterns, but does not fold graph ops and
    also rewrites other dialects' ops.

        %zero = graph.constant dense<0.0> : tensor<2x3xf32>
        %0 = graph.add %x, %zero : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
        func.return %0 : tensor<2x3xf32>

    becomes

        func.return %x : tensor<2x3xf32>

    Option `max-elements` (default 2**20): as in `graph-fold-constants`, the
    largest operand or result, in elements, of an op that is folded.
    """

    name = "graph-canonicalize"

    max_elements: int = DEFAULT_MAX_ELEMENTS
    """Largest operand or result, in elements, of an op the pass folds."""

    def __post_init__(self):
        check_max_elements(self.max_elements)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = GreedyRewritePatternApplier(
            [GraphCanonicalizationPatterns(), FoldConstantOp(self.max_elements)]
        )
        PatternRewriteWalker(Located(patterns), post_walk_func=region_dce).rewrite_module(op)
