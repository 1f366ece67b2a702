"""`graph-layout`: run convolutions and pools in another data layout (NHWC or NCHW), with transposes
only where the converted region meets the rest of the function.
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
from ziggurat.dialects.graph import (
    BinaryBroadcastOp,
    ConstantOp,
    Conv2dOp,
    GlobalPoolOp,
    Pool2dOp,
    TransposeOp,
    UnaryElementwiseOp,
    int_array,
    layout_of,
)
from ziggurat.dialects.tile import LAYOUT_ATTR
from ziggurat.ir.tensor_constants import constant_array, dense_elements, splat_value
from ziggurat.locations import Located
from ziggurat.transforms.graph.canonicalize import GraphCanonicalizationPatterns
from ziggurat.transforms.graph.fold_constants import FoldConstantOp

TO_TARGET = {"NHWC": (0, 2, 3, 1), "NCHW": (0, 3, 1, 2)}
"""The permutation taking a tensor from the other layout to the key layout."""


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
        mark = op.attributes.get(LAYOUT_ATTR)
        layout = mark.data if isinstance(mark, StringAttr) else self.layout
        current = layout_of(op.properties)
        if layout is None or current == layout:
            return
        if layout not in TO_TARGET:
            raise error_at(op, f"graph-layout: {LAYOUT_ATTR} must be NHWC or NCHW, got '{layout}'")
        to_target = TO_TARGET[layout]
        operands = [transpose(op.operands[0], to_target, rewriter)]
        if isinstance(op, Conv2dOp):
            operands.append(permuted(op.weight, to_target, rewriter))
            operands += [op.bias] if op.bias is not None else []
        properties = dict(op.properties) | {"layout": StringAttr(layout)}
        converted = type(op).build_inferred(operands, properties)
        converted.attributes.update(
            {name: value for name, value in op.attributes.items() if name != LAYOUT_ATTR}
        )
        rewriter.insert(converted)
        back = TransposeOp.build_inferred(
            [converted.results[0]], {"perm": int_array(list(TO_TARGET[current]))}
        )
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
        if not transposes or any(
            use.operation is not op for t in transposes for use in t.output.uses
        ):
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
        rewriter.replace(
            op, TransposeOp.build_inferred([moved.results[0]], {"perm": int_array(perm)})
        )


@dataclass(frozen=True)
class GraphLayoutPass(ModulePass):
    """Convert conv2d and the pools to `layout`, keeping transposes at the edges.

    Each `graph.conv2d`, pool and global pool in another layout is rebuilt in the
    target one between two `graph.transpose`s (input NCHW -> NHWC with perm
    0,2,3,1, result back with 0,3,1,2; conv weights OIHW -> OHWI, a constant weight
    permuted in place). Transposes then move past the ops the layout does not
    matter to: a unary elementwise op of a transpose used only there, and a
    broadcast binary op of two such transposes with the same permutation, or of one
    and a constant (permuted by the inverse). With canonicalization (transposes
    compose, identities vanish, constants fold) a conv -> relu -> conv chain keeps
    transposes only at the function's arguments and results. `graph.batch_norm`
    normalizes axis 1 by definition and stays NCHW: run `graph-fold-batch-norm`
    first.

        %c1 = graph.conv2d %x, %w1 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> ...
        %r = graph.relu %c1 : tensor<1x4x8x8xf32>
        %c2 = graph.conv2d %r, %w2 : (tensor<1x4x8x8xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x8x8xf32>

    becomes, with `layout=NHWC` and constant weights,

        %xt = graph.transpose %x {perm = array<i64: 0, 2, 3, 1>} : tensor<1x3x8x8xf32> -> tensor<1x8x8x3xf32>
        %c1 = graph.conv2d %xt, %w1t {pads = array<i64: 1, 1, 1, 1>, layout = "NHWC"} : (...) -> tensor<1x8x8x4xf32>
        %r = graph.relu %c1 : tensor<1x8x8x4xf32>
        %c2 = graph.conv2d %r, %w2t {layout = "NHWC"} : (...) -> tensor<1x8x8x2xf32>
        %y = graph.transpose %c2 {perm = array<i64: 0, 3, 1, 2>} : tensor<1x8x8x2xf32> -> tensor<1x2x8x8xf32>

    A spatial op marked `tile.layout = "NHWC"` (or "NCHW") goes to that layout
    whatever the option, keeping its other attributes (its `tile.*` schedule); this
    is how `ziggurat-tune` applies the layout it chose per fusion group.

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
