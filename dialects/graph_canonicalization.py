"""Canonicalization patterns of `graph` ops, used by xDSL's `canonicalize` and by `graph-canonicalize`.

Each op's patterns are listed in `PATTERNS` under its class, where the `GraphCanonicalization`
trait of every graph op looks them up. The patterns keep every computed value but the sign of a
zero result (fast-math's "no signed zeros", as ONNX Runtime and TVM): `x + 0.0 -> x` fires,
`x * 0 -> 0` only for integers, so NaN and infinity survive. A pattern that drops a constant
operand fires only when the result has the type of the operand it keeps.
"""

from __future__ import annotations

from collections.abc import Sequence

import ml_dtypes
import numpy as np
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from ziggurat.dialects.graph import (
    AddOp,
    AvgPoolOp,
    BroadcastToOp,
    CastOp,
    ClipOp,
    ConcatOp,
    ConstantOp,
    DivOp,
    FlattenOp,
    GatherOp,
    GlobalAvgPoolOp,
    GlobalMaxPoolOp,
    MaxPoolOp,
    MulOp,
    NegOp,
    PadOp,
    PowOp,
    Relu6Op,
    ReluOp,
    ReshapeOp,
    SliceOp,
    SqueezeOp,
    SubOp,
    TransposeOp,
    UnsqueezeOp,
    element_dtype,
    int_array,
)
from ziggurat.ir.tensor_constants import constant_array, splat_elements, splat_value


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
# Binary arithmetic with a neutral or absorbing operand
# --------------------------------------------------------------------------- #


class AddZero(RewritePattern):
    """`x + 0 -> x` and `0 + x -> x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AddOp, rewriter: PatternRewriter, /):
        if is_splat_of(op.rhs, 0) and replace_by_operand(op, op.lhs, rewriter):
            return
        if is_splat_of(op.lhs, 0):
            replace_by_operand(op, op.rhs, rewriter)


class SubZero(RewritePattern):
    """`x - 0 -> x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SubOp, rewriter: PatternRewriter, /):
        if is_splat_of(op.rhs, 0):
            replace_by_operand(op, op.lhs, rewriter)


class MulOne(RewritePattern):
    """`x * 1 -> x` and `1 * x -> x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: MulOp, rewriter: PatternRewriter, /):
        if is_splat_of(op.rhs, 1) and replace_by_operand(op, op.lhs, rewriter):
            return
        if is_splat_of(op.lhs, 1):
            replace_by_operand(op, op.rhs, rewriter)


class MulZero(RewritePattern):
    """`x * 0 -> 0` and `0 * x -> 0` for integers, as a zero constant of the result type
    (for floats `inf * 0` and `NaN * 0` are NaN)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: MulOp, rewriter: PatternRewriter, /):
        if element_dtype(op.output.type).kind not in "iub":
            return
        if is_splat_of(op.lhs, 0) or is_splat_of(op.rhs, 0):
            rewriter.replace(op, ConstantOp(splat_elements(0, op.output.type)))


class DivOne(RewritePattern):
    """`x / 1 -> x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DivOp, rewriter: PatternRewriter, /):
        if is_splat_of(op.rhs, 1):
            replace_by_operand(op, op.lhs, rewriter)


class PowOne(RewritePattern):
    """`x ** 1 -> x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PowOp, rewriter: PatternRewriter, /):
        if is_splat_of(op.rhs, 1):
            replace_by_operand(op, op.lhs, rewriter)


# --------------------------------------------------------------------------- #
# Unary elementwise
# --------------------------------------------------------------------------- #


class NegOfNeg(RewritePattern):
    """`neg(neg(x)) -> x` (integers too: negation wraps around both times)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: NegOp, rewriter: PatternRewriter, /):
        if isinstance(inner := op.input.owner, NegOp):
            rewriter.replace(op, [], [inner.input])


class ReluOfRelu(RewritePattern):
    """`relu(relu(x))`, `relu(relu6(x))`, `relu6(relu6(x))` -> the inner result, which is
    already in the outer op's range; `relu6(relu(x)) -> relu6(x)`, which clamps at 0 too."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReluOp | Relu6Op, rewriter: PatternRewriter, /):
        inner = op.input.owner
        if not isinstance(inner, ReluOp | Relu6Op):
            return
        if isinstance(op, ReluOp) or isinstance(inner, Relu6Op):
            rewriter.replace(op, [], [op.input])
        else:
            rewriter.replace(op, Relu6Op(inner.input))


class UnboundedClip(RewritePattern):
    """`clip(x)` with neither `min` nor `max` -> `x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ClipOp, rewriter: PatternRewriter, /):
        if op.min is None and op.max is None:
            rewriter.replace(op, [], [op.input])


# --------------------------------------------------------------------------- #
# Casts
# --------------------------------------------------------------------------- #


def widens_exactly(source: np.dtype, target: np.dtype) -> bool:
    """Whether `target` holds every value of `source` exactly, both being integers (bool
    included) or both floats. Across the two kinds the answer is False: `graph.cast`
    converts integer and float sources differently (only floats saturate to fp8), so
    going through an exact float would not be the same as converting the integer."""
    source_int, target_int = source.kind in "iub", target.kind in "iub"
    if source_int != target_int:
        return False
    if source == target or source == np.bool_:
        return True
    if target == np.bool_:
        return False
    if source_int:
        s, t = np.iinfo(source), np.iinfo(target)
        return t.min <= s.min and s.max <= t.max
    s, t = ml_dtypes.finfo(source), ml_dtypes.finfo(target)
    # More mantissa, more range, and subnormals at least as small (2**(minexp - nmant)).
    return t.nmant >= s.nmant and t.maxexp >= s.maxexp and t.minexp - t.nmant <= s.minexp - s.nmant


class CastToSameType(RewritePattern):
    """`cast(x : T -> T) -> x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CastOp, rewriter: PatternRewriter, /):
        replace_by_operand(op, op.input, rewriter)


class CastOfExactCast(RewritePattern):
    """`cast(cast(x : A -> B) : B -> C) -> cast(x : A -> C)`, or `x` if C is A, when B
    holds every A exactly (see `widens_exactly`), so the outer cast sees x's value."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CastOp, rewriter: PatternRewriter, /):
        inner = op.input.owner
        if not isinstance(inner, CastOp):
            return
        if not widens_exactly(element_dtype(inner.input.type), element_dtype(inner.output.type)):
            return
        if not replace_by_operand(op, inner.input, rewriter):
            rewriter.replace(op, CastOp(inner.input, op.output.type))


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


def _one_element_constant(value: SSAValue) -> bool:
    return isinstance(value.owner, ConstantOp) and all(d == 1 for d in value.type.get_shape())


class ScalarOpOfTranspose(RewritePattern):
    """`op(transpose(x, p), c) -> transpose(op(x, c), p)` for `op` add, sub, mul or div and `c` a
    constant of one element, where the transpose has no other use: the transpose moves next to
    its consumer, where a matrix product reads it as a transposed operand (attention's
    `q @ (k^T * scale)`) or another transpose cancels it, instead of an elementwise op reading a
    transposed view."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AddOp | SubOp | MulOp | DivOp, rewriter: PatternRewriter, /):
        operands = (op.lhs, op.rhs)
        for index, operand in enumerate(operands):
            other = operands[1 - index]
            transpose = operand.owner
            if (
                isinstance(transpose, TransposeOp)
                and operand.has_one_use()
                and _one_element_constant(other)
                and op.output.type == transpose.output.type
                and len(other.type.get_shape()) <= len(transpose.input.type.get_shape())
            ):
                inner = [transpose.input, other] if index == 0 else [other, transpose.input]
                # `c`'s dims are 1 and no more than `x`'s: the op keeps `x`'s shape.
                moved = type(op).build_inferred(inner)
                rewriter.insert_op(moved)
                rewriter.replace(
                    op, TransposeOp.build_inferred([moved.results[0]], {"perm": transpose.perm})
                )
                rewriter.erase_op(transpose)
                return


class LeadingUnitsOfTranspose(RewritePattern):
    """`reshape(transpose(x, p))` that only puts k dims of size 1 in front ->
    `transpose(reshape(x), [0..k-1] + [k + i for i in p])`, where the transpose has no other use:
    the transpose moves next to its consumer (attention's heads, transposed then given a batch
    dim before the matrix product), and the reshape next to the op that makes `x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReshapeOp | UnsqueezeOp, rewriter: PatternRewriter, /):
        transpose = op.input.owner
        if not isinstance(transpose, TransposeOp) or not op.input.has_one_use():
            return
        before = tuple(transpose.output.type.get_shape())
        after = tuple(op.results[0].type.get_shape())
        units = len(after) - len(before)
        if units <= 0 or after[units:] != before or any(d != 1 for d in after[:units]):
            return
        axes = {"axes": int_array(list(range(units)))}
        expanded = UnsqueezeOp.build_inferred([transpose.input], axes)
        perm = [*range(units), *(units + axis for axis in transpose.perm.get_values())]
        rewriter.insert_op(expanded)
        rewriter.replace(
            op, TransposeOp.build_inferred([expanded.results[0]], {"perm": int_array(perm)})
        )
        rewriter.erase_op(transpose)


RESHAPES = (ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp)
"""Ops that only regroup the dimensions of a row-major tensor."""


class IdentityReshape(RewritePattern):
    """A reshape, flatten, squeeze or unsqueeze to its input's own type -> its input."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: ReshapeOp | FlattenOp | SqueezeOp | UnsqueezeOp, rewriter: PatternRewriter, /
    ):
        replace_by_operand(op, op.input, rewriter)


class ReshapeOfReshape(RewritePattern):
    """Two reshapes in a row (reshape, flatten, squeeze, unsqueeze, in any pairing) -> one
    `graph.reshape` of the first one's input, or that input if the shapes cancel."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: ReshapeOp | FlattenOp | SqueezeOp | UnsqueezeOp, rewriter: PatternRewriter, /
    ):
        inner = op.input.owner
        if not isinstance(inner, RESHAPES):
            return
        if not replace_by_operand(op, inner.input, rewriter):
            rewriter.replace(op, ReshapeOp(inner.input, op.output.type))


class GatherOfConstantRun(RewritePattern):
    """`gather(x, k)` with constant indices that count up by one (`k, k+1, ...`, negative ones
    from the end, all in range) -> `slice(x, k, k+n)` along the axis, then a reshape to the
    indices' shape: a view of `x` instead of an indexed read (`qkv[0]` of an attention)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GatherOp, rewriter: PatternRewriter, /):
        indices = constant_array(op.indices)
        if indices is None or indices.size == 0:
            return
        shape = op.data.type.get_shape()
        axis = op.axis.value.data % len(shape)
        dim = shape[axis]
        run = indices.reshape(-1).astype(np.int64)
        if run.min() < -dim or run.max() >= dim:
            return
        run = np.where(run < 0, run + dim, run)
        start = int(run[0])
        if not np.array_equal(run, np.arange(start, start + run.size)):
            return
        properties = {
            "starts": int_array([start]),
            "ends": int_array([start + run.size]),
            "axes": int_array([axis]),
        }
        sliced = SliceOp.build_inferred([op.data], properties)
        if sliced.output.type == op.output.type:
            rewriter.replace(op, sliced)
        else:
            rewriter.replace(op, [sliced, ReshapeOp(sliced.output, op.output.type)])


class IdentityBroadcast(RewritePattern):
    """`broadcast_to(x : T -> T) -> x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: BroadcastToOp, rewriter: PatternRewriter, /):
        replace_by_operand(op, op.input, rewriter)


class BroadcastOfBroadcast(RewritePattern):
    """`broadcast_to(broadcast_to(x)) -> broadcast_to(x)` to the outer shape."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: BroadcastToOp, rewriter: PatternRewriter, /):
        if isinstance(inner := op.input.owner, BroadcastToOp):
            rewriter.replace(op, BroadcastToOp(inner.input, op.output.type))


class IdentitySlice(RewritePattern):
    """A slice with positive steps that keeps every element -> its input."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SliceOp, rewriter: PatternRewriter, /):
        # Same shape and forward steps leave no room for an offset or a stride.
        if op.steps is None or all(step > 0 for step in op.steps.get_values()):
            replace_by_operand(op, op.input, rewriter)


class ZeroPad(RewritePattern):
    """A pad of zero widths on every side -> its input (in every mode)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PadOp, rewriter: PatternRewriter, /):
        if not any(op.pads.get_values()):
            rewriter.replace(op, [], [op.input])


class ConcatOfOne(RewritePattern):
    """`concat(x) -> x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ConcatOp, rewriter: PatternRewriter, /):
        if len(op.inputs) == 1:
            rewriter.replace(op, [], [op.inputs[0]])


# --------------------------------------------------------------------------- #
# Pooling
# --------------------------------------------------------------------------- #


class IdentityPool(RewritePattern):
    """A max or average pool with a 1x1 kernel, unit strides and no padding -> its input."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: MaxPoolOp | AvgPoolOp, rewriter: PatternRewriter, /):
        if (
            op.kernel.get_values() == (1, 1)
            and op.strides.get_values() == (1, 1)
            and not any(op.pads.get_values())
        ):
            replace_by_operand(op, op.input, rewriter)


class WholeWindowPool(RewritePattern):
    """A max or average pool whose one window covers its whole input, unpadded and undilated ->
    the global pool (ResNet's 7x7 average pool before its classifier, as torchvision's
    `AdaptiveAvgPool2d(1)` exports it on a 7x7 map): the window's taps are then the reduction of
    a global pool, which splits by channel among cores and reads each channel's map in one
    transfer, not one transfer per tap."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: MaxPoolOp | AvgPoolOp, rewriter: PatternRewriter, /):
        kernel, _, pads, dilations = op.window(op.properties)
        shape = op.input.type.get_shape()
        layout = op.layout.data
        spatial = list(shape[2:4]) if layout == "NCHW" else list(shape[1:3])
        if any(pads) or list(dilations) != [1, 1] or list(kernel) != spatial:
            return
        kind = GlobalAvgPoolOp if isinstance(op, AvgPoolOp) else GlobalMaxPoolOp
        pool = kind.build_inferred([op.input], {"layout": op.layout})
        if pool.results[0].type == op.results[0].type:
            rewriter.replace_matched_op(pool)


class GlobalPoolOfOne(RewritePattern):
    """A global pool over spatial dimensions that are all 1 -> its input."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: GlobalAvgPoolOp | GlobalMaxPoolOp, rewriter: PatternRewriter, /
    ):
        replace_by_operand(op, op.input, rewriter)


_RESHAPE_PATTERNS = (IdentityReshape(), ReshapeOfReshape())
_EXPAND_PATTERNS = (*_RESHAPE_PATTERNS, LeadingUnitsOfTranspose())
_RELU_PATTERNS = (ReluOfRelu(),)
_POOL_PATTERNS = (IdentityPool(), WholeWindowPool())
_GLOBAL_POOL_PATTERNS = (GlobalPoolOfOne(),)

PATTERNS: dict[type[Operation], tuple[RewritePattern, ...]] = {
    AddOp: (AddZero(), ScalarOpOfTranspose()),
    SubOp: (SubZero(), ScalarOpOfTranspose()),
    MulOp: (MulOne(), MulZero(), ScalarOpOfTranspose()),
    DivOp: (DivOne(), ScalarOpOfTranspose()),
    PowOp: (PowOne(),),
    NegOp: (NegOfNeg(),),
    ReluOp: _RELU_PATTERNS,
    Relu6Op: _RELU_PATTERNS,
    ClipOp: (UnboundedClip(),),
    CastOp: (CastToSameType(), CastOfExactCast()),
    TransposeOp: (IdentityTranspose(), TransposeOfTranspose()),
    ReshapeOp: _EXPAND_PATTERNS,
    FlattenOp: _RESHAPE_PATTERNS,
    SqueezeOp: _RESHAPE_PATTERNS,
    UnsqueezeOp: _EXPAND_PATTERNS,
    BroadcastToOp: (IdentityBroadcast(), BroadcastOfBroadcast()),
    SliceOp: (IdentitySlice(),),
    GatherOp: (GatherOfConstantRun(),),
    PadOp: (ZeroPad(),),
    ConcatOp: (ConcatOfOne(),),
    MaxPoolOp: _POOL_PATTERNS,
    AvgPoolOp: _POOL_PATTERNS,
    GlobalAvgPoolOp: _GLOBAL_POOL_PATTERNS,
    GlobalMaxPoolOp: _GLOBAL_POOL_PATTERNS,
}


def patterns_for(op_type: type[Operation]) -> tuple[RewritePattern, ...]:
    """The canonicalization patterns rooted at `op_type`."""
    return PATTERNS.get(op_type, ())
