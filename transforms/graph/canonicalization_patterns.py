"""Canonicalization patterns of `graph` ops, used by xDSL's `canonicalize` and by `graph-canonicalize`.

Each op's patterns are listed in `PATTERNS` under its class; the
`GraphCanonicalization` trait of every graph op looks them up there.

The patterns keep every computed value, with one exception: like fast-math's
"no signed zeros" (and ONNX Runtime and TVM), they do not preserve the sign of
a zero result, so `x + 0.0 -> x` fires although `-0.0 + 0.0` is `+0.0`. They
never change a NaN or an infinity, which is why `x * 0 -> 0` fires only for
integers (for floats `inf * 0` and `NaN * 0` are NaN).

A constant operand counts as a scalar when all its elements are equal, but a
pattern that drops it fires only when the result has the type of the operand
it keeps: `x + zeros` where `zeros` broadcasts `x` to a bigger shape stays.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from ziggurat.dialects.graph import AddOp, ReluOp, TransposeOp, int_array
from ziggurat.transforms.graph.constants import splat_value


def is_splat_of(value: SSAValue, scalar: float) -> bool:
    """Whether `value` is a tensor constant whose elements all equal `scalar` (either sign for 0)."""
    element = splat_value(value)
    return element is not None and bool(element == scalar)


def replace_by_operand(op: Operation, kept: SSAValue, rewriter: PatternRewriter) -> bool:
    """Replace `op`'s only result by `kept` if it has the same type (so no broadcast is lost)."""
    if kept.type != op.results[0].type:
        return False
    rewriter.replace(op, [], [kept])
    return True


# --------------------------------------------------------------------------- #
# Binary arithmetic with a neutral operand
# --------------------------------------------------------------------------- #


class AddZero(RewritePattern):
    """`x + 0 -> x` and `0 + x -> x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AddOp, rewriter: PatternRewriter, /):
        if is_splat_of(op.rhs, 0) and replace_by_operand(op, op.lhs, rewriter):
            return
        if is_splat_of(op.lhs, 0):
            replace_by_operand(op, op.rhs, rewriter)


# --------------------------------------------------------------------------- #
# Activations
# --------------------------------------------------------------------------- #


class ReluOfRelu(RewritePattern):
    """`relu(relu(x)) -> relu(x)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReluOp, rewriter: PatternRewriter, /):
        if isinstance(op.input.owner, ReluOp):
            rewriter.replace(op, [], [op.input])


# --------------------------------------------------------------------------- #
# Shape manipulation
# --------------------------------------------------------------------------- #


def compose_permutations(inner: Sequence[int], outer: Sequence[int]) -> tuple[int, ...]:
    """The permutation of `transpose(transpose(x, inner), outer)` as one transpose of `x`."""
    return tuple(inner[axis] for axis in outer)


class IdentityTranspose(RewritePattern):
    """`transpose(x, [0, 1, ..., n-1]) -> x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter, /):
        perm = tuple(op.perm.get_values())
        if perm == tuple(range(len(perm))):
            rewriter.replace(op, [], [op.input])


class TransposeOfTranspose(RewritePattern):
    """`transpose(transpose(x, p), q) -> transpose(x, [p[i] for i in q])`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter, /):
        inner = op.input.owner
        if not isinstance(inner, TransposeOp):
            return
        perm = compose_permutations(inner.perm.get_values(), op.perm.get_values())
        rewriter.replace(op, TransposeOp.build_inferred([inner.input], {"perm": int_array(perm)}))


PATTERNS: dict[type[Operation], tuple[RewritePattern, ...]] = {
    AddOp: (AddZero(),),
    ReluOp: (ReluOfRelu(),),
    TransposeOp: (IdentityTranspose(), TransposeOfTranspose()),
}


def patterns_for(op_type: type[Operation]) -> tuple[RewritePattern, ...]:
    """The canonicalization patterns rooted at `op_type`."""
    return PATTERNS.get(op_type, ())
