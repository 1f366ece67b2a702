"""`graph-unfuse`: inline every `graph.fused` group back into its function.

The inverse of `graph-fuse`, for looking at or testing what a pass after fusion
would see without the groups.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from ziggurat.dialects.graph import FusedOp, YieldOp


class InlineFusedOp(RewritePattern):
    """Replace a `graph.fused` by its body's ops and its results by what it yields."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: FusedOp, rewriter: PatternRewriter, /):
        body = op.body.clone().block
        terminator = body.last_op
        assert isinstance(terminator, YieldOp)  # the verifier guarantees it
        values = list(terminator.values)
        rewriter.erase(terminator)
        rewriter.inline_block(body, InsertPoint.before(op), op.inputs)
        rewriter.replace(op, [], values)


@dataclass(frozen=True)
class GraphUnfusePass(ModulePass):
    """Inline every `graph.fused` group back into its function: the inverse of `graph-fuse`."""

    name = "graph-unfuse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(InlineFusedOp()).rewrite_module(op)
