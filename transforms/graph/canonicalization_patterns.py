"""Canonicalization patterns of `graph` ops, used by xDSL's `canonicalize` and by `graph-canonicalize`."""

from xdsl.ir import Operation
from xdsl.pattern_rewriter import RewritePattern

PATTERNS: dict[type[Operation], tuple[RewritePattern, ...]] = {}


def patterns_for(op_type: type[Operation]) -> tuple[RewritePattern, ...]:
    """The canonicalization patterns rooted at `op_type`."""
    return PATTERNS.get(op_type, ())
