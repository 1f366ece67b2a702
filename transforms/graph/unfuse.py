"""`graph-unfuse`: inline every `graph.fused` group back into its function, to look at or test what a
pass after fusion would see without the groups.
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
    """Inline every `graph.fused` group back into its function: the inverse of `graph-fuse`.

        %r = graph.fused "conv2d_relu"(%x, %w) {root = "graph.conv2d"}({
        ^bb0(%0: tensor<1x3x8x8xf32>, %1: tensor<4x3x3x3xf32>):
          %c = graph.conv2d %0, %1 : (...) -> tensor<1x4x6x6xf32>
          %2 = graph.relu %c : tensor<1x4x6x6xf32>
          graph.yield %2 : tensor<1x4x6x6xf32>
        }) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>

    becomes

        %c = graph.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
        %r = graph.relu %c : tensor<1x4x6x6xf32>
    """

    name = "graph-unfuse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(InlineFusedOp()).rewrite_module(op)
