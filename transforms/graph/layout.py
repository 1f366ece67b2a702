"""`graph-layout{layout=NHWC}`: run the spatial ops in another data layout, transposing only at the edges.

Each `graph.conv2d`, pool and global pool whose `layout` differs from the
target is rebuilt in the target layout between two `graph.transpose`s: its
input goes NCHW -> NHWC (perm 0,2,3,1), its result back (perm 0,3,1,2), and
the conv weights are permuted the same way (OIHW -> OHWI; a constant weight
becomes a permuted constant). Transposes are then moved past the ops that do
not care about the layout, so that consecutive spatial ops meet and cancel:

* a unary elementwise op of a transpose (used only there) becomes the
  transpose of the elementwise op;
* a broadcast binary op whose operands are transposes with the same
  permutation used only by it, or such a transpose and a constant (permuted by the inverse; a
  constant of one element as it is), becomes the transpose of the op.

Canonicalization runs with them (transpose of transpose composes, identity
transposes vanish, constants fold), so a conv -> relu -> conv chain keeps
transposes only where it meets the function's arguments and results.
`graph.batch_norm` normalizes axis 1 by definition and so stays NCHW: run
`graph-fold-batch-norm` first to fold it into its conv.

A spatial op marked `tile.layout = "NHWC"` (or "NCHW") goes to that layout
whatever the option; with `marked=true` only marked ops are converted. This is
how `ziggurat-tune` applies the layout it chose per fusion group. The
converted op keeps the op's other attributes (its `tile.*` schedule).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.transforms.dead_code_elimination import region_dce

from ziggurat.diagnostics import error_at
from ziggurat.locations import Located
from ziggurat.dialects.graph import (
    ConstantOp,
    BinaryBroadcastOp,
    Conv2dOp,
    GlobalPoolOp,
    Pool2dOp,
    TransposeOp,
    UnaryElementwiseOp,
    int_array,
    layout_of,
)
from ziggurat.transforms.graph.canonicalize import GraphCanonicalizationPatterns
from ziggurat.ir.tensor_constants import constant_array, dense_elements, splat_value
from ziggurat.transforms.graph.fold_constants import FoldConstantOp

TO_TARGET = {"NHWC": (0, 2, 3, 1), "NCHW": (0, 3, 1, 2)}
"""The permutation taking a tensor from the other layout to the key layout."""

LAYOUT_MARK = "tile.layout"
"""A spatial op's requested layout (a string, NHWC or NCHW), set by `ziggurat-tune`."""


def transposed_type(tensor_type: TensorType, perm) -> TensorType:
    """`tensor_type` with its dims permuted by `perm`, as `graph.transpose` gives it."""
    return TransposeOp.infer_result_types([tensor_type], {"perm": int_array(list(perm))})[0]


def transpose(value: SSAValue, perm, rewriter: PatternRewriter) -> SSAValue:
    op = TransposeOp.build_inferred([value], {"perm": int_array(list(perm))})
    rewriter.insert(op)
    return op.output


def permuted(value: SSAValue, perm, rewriter: PatternRewriter) -> SSAValue:
    """`value` transposed by `perm`: a new constant when it is one, else a `graph.transpose`."""
    array = constant_array(value)
    if array is None:
        return transpose(value, perm, rewriter)
    op = ConstantOp(dense_elements(np.transpose(array, perm), transposed_type(value.type, perm)))
    rewriter.insert(op)
    return op.output


@dataclass(frozen=True)
class ConvertSpatialOp(RewritePattern):
    """conv2d / pool in another layout -> transpose, the op in `layout`, transpose back."""

    layout: str | None
    """The target of unmarked ops (None: leave them)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, Conv2dOp | Pool2dOp | GlobalPoolOp):
            return
        mark = op.attributes.get(LAYOUT_MARK)
        layout = mark.data if isinstance(mark, StringAttr) else self.layout
        current = layout_of(op.properties)
        if layout is None or current == layout:
            return
        if layout not in TO_TARGET:
            raise error_at(op, f"graph-layout: {LAYOUT_MARK} must be NHWC or NCHW, got '{layout}'")
        to_target = TO_TARGET[layout]
        operands = [transpose(op.operands[0], to_target, rewriter)]
        if isinstance(op, Conv2dOp):
            operands.append(permuted(op.weight, to_target, rewriter))
            operands += [op.bias] if op.bias is not None else []
        properties = dict(op.properties) | {"layout": StringAttr(layout)}
        converted = type(op).build_inferred(operands, properties)
        converted.attributes.update({name: value for name, value in op.attributes.items() if name != LAYOUT_MARK})
        rewriter.insert(converted)
        back = TransposeOp.build_inferred([converted.results[0]], {"perm": int_array(list(TO_TARGET[current]))})
        rewriter.replace(op, back)


def inverse(perm) -> list[int]:
    return [int(i) for i in np.argsort(perm)]


class SinkTransposeThroughElementwise(RewritePattern):
    """elementwise(transpose(x)) -> transpose(elementwise(x)), the transpose used only there."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, UnaryElementwiseOp):
            return
        inner = op.operands[0].owner
        if not isinstance(inner, TransposeOp) or not inner.output.has_one_use():
            return
        moved = type(op).build_inferred([inner.input], dict(op.properties))
        rewriter.insert(moved)
        rewriter.replace(op, TransposeOp.build_inferred([moved.results[0]], {"perm": inner.perm}))


class SinkTransposeThroughBroadcast(RewritePattern):
    """binary(transpose_p(a), transpose_p(b) | constant) -> transpose_p(binary(a, b'))."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, BinaryBroadcastOp):
            return
        transposes = [v.owner for v in op.operands if isinstance(v.owner, TransposeOp)]
        if not transposes or any(use.operation is not op for t in transposes for use in t.output.uses):
            return
        perm = list(transposes[0].perm.get_values())
        rank = len(perm)
        operands = []
        for value in op.operands:
            owner = value.owner
            if isinstance(owner, TransposeOp):
                if list(owner.perm.get_values()) != perm:
                    return
                operands.append(owner.input)
            elif constant_array(value) is not None and value.type.get_num_dims() == rank:
                operands.append(permuted(value, inverse(perm), rewriter))
            elif splat_value(value) is not None and all(d == 1 for d in value.type.get_shape()):
                operands.append(value)
            else:
                return
        moved = type(op).build_inferred(operands, dict(op.properties))
        rewriter.insert(moved)
        rewriter.replace(op, TransposeOp.build_inferred([moved.results[0]], {"perm": int_array(perm)}))


@dataclass(frozen=True)
class GraphLayoutPass(ModulePass):
    """Convert conv2d and the pools to `layout`, keeping transposes at the edges (see the module docstring).

    Option `layout` (default NHWC): NHWC or NCHW. Option `marked` (default false): convert
    only the ops marked `tile.layout`, each to the layout it names.
    """

    name = "graph-layout"

    layout: str = "NHWC"
    """The layout the spatial ops are converted to: NHWC or NCHW."""

    marked: bool = False
    """Convert only the ops marked `tile.layout` (ziggurat-tune's choices)."""

    def __post_init__(self):
        if self.layout not in TO_TARGET:
            raise ValueError(f"layout must be NHWC or NCHW, got '{self.layout}'")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = GreedyRewritePatternApplier(
            [
                ConvertSpatialOp(None if self.marked else self.layout),
                SinkTransposeThroughElementwise(),
                SinkTransposeThroughBroadcast(),
                GraphCanonicalizationPatterns(),
                FoldConstantOp(),
            ]
        )
        PatternRewriteWalker(Located(patterns), post_walk_func=region_dce).rewrite_module(op)
