"""`toy-double-to-add`: rewrites `toy.double %x` on tensors to `graph.add %x, %x`.

`graph.add` takes tensors only, so a `toy.double` of a scalar stays as it is
and the pass warns about it (with `strict=true` that is an error and the pass
fails). With `report=true` the pass emits a remark at each op it rewrites.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from ziggurat.diagnostics import emit_remark, emit_warning, error_at
from ziggurat.dialects.graph import AddOp
from ziggurat_example_plugin.toy import DoubleOp


@dataclass
class DoubleToAdd(RewritePattern):
    strict: bool
    report: bool

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DoubleOp, rewriter: PatternRewriter) -> None:
        if not isinstance(op.input.type, TensorType):
            message = f"cannot rewrite toy.double of {op.input.type}: graph.add takes tensors"
            if self.strict:
                raise error_at(op, message)
            emit_warning(op, message)
            return
        add = AddOp(op.input, op.input)
        add.location = op.location
        if self.report:
            emit_remark(op, "rewritten to graph.add")
        rewriter.replace_op(op, add)


@dataclass(frozen=True)
class ToyDoubleToAdd(ModulePass):
    """Rewrite toy.double on tensors to graph.add of the operand with itself."""

    name = "toy-double-to-add"

    strict: bool = False
    """Fail on a toy.double that cannot be rewritten instead of warning."""
    report: bool = False
    """Emit a remark at each rewritten op."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            DoubleToAdd(self.strict, self.report), apply_recursively=False
        ).rewrite_module(op)
