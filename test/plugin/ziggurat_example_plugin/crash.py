"""`toy-crash`: a pass with a bug on purpose, to test how the tools report internal errors.

It raises `KeyError` while rewriting the first `toy.double` it meets: the
tools must say "internal error, please report: KeyError: ... (while running
pass 'toy-crash' on op 'toy.double' at FILE:LINE:COL)", exit 2, and show the
traceback only with `--debug`.
"""

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

from ziggurat_example_plugin.toy import DoubleOp


class CrashOnDouble(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DoubleOp, rewriter: PatternRewriter) -> None:
        raise KeyError("a bug in toy-crash")


@dataclass(frozen=True)
class ToyCrash(ModulePass):
    """Crash on the first toy.double (for testing internal-error reports)."""

    name = "toy-crash"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(CrashOnDouble(), apply_recursively=False).rewrite_module(op)
