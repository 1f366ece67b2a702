"""`graph-fold-constants`: evaluate graph ops whose operands are all constants at compile time."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
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
from xdsl.traits import Pure

from ziggurat.diagnostics import emit_warning
from ziggurat.dialects.graph import ConstantOp, GraphOp
from ziggurat.dtypes import is_splat
from ziggurat.interpreters.graph_interpreter import check_evaluated
from ziggurat.ir.tensor_constants import (
    constant_array,
    dense_attr_of,
    dense_elements,
    element_count,
    is_array_type,
)
from ziggurat.locations import Located

DEFAULT_MAX_ELEMENTS = 1 << 20


def check_max_elements(max_elements: int) -> None:
    """Reject a negative `max-elements` option (the driver reports the ValueError)."""
    if max_elements < 0:
        raise ValueError(f"max-elements must be >= 0, got {max_elements}")


@dataclass(frozen=True)
class FoldConstantOp(RewritePattern):
    """Replace a pure graph op whose operands are all tensor constants by `graph.constant`s of its results.

    The values come from the op's own `evaluate`, the same numpy semantics the
    graph interpreter runs, and keep the result types exactly.
    """

    max_elements: int = DEFAULT_MAX_ELEMENTS
    """Leave the op alone if any operand or result has more elements than this."""

    _failed: set[Operation] = field(default_factory=set, init=False, compare=False)
    """Ops whose evaluation failed: warned about once, not evaluated again when the
    rewrite walker revisits them."""

    def within_limit(self, op: Operation) -> bool:
        """Every operand and result within `max_elements`, or no result larger than a dense
        operand already held in full (a weight transposed into another layout: folding it
        makes no larger tensor, and left alone it would run on the device at every call)."""
        values = (*op.operands, *op.results)
        if all(element_count(v.type) <= self.max_elements for v in values):
            return True
        dense = [
            element_count(v.type)
            for v in op.operands
            if (attr := dense_attr_of(v)) is not None and not is_splat(attr)
        ]
        return bool(dense) and all(element_count(r.type) <= max(dense) for r in op.results)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        # Zero operands: constants themselves, or ops whose value is not fixed by operands.
        if (
            not isinstance(op, GraphOp)
            or not op.has_trait(Pure)
            or not op.operands
            or op in self._failed
        ):
            return
        if any(dense_attr_of(operand) is None for operand in op.operands):
            return
        if not self.within_limit(op):
            return
        inputs = [constant_array(operand) for operand in op.operands]
        if not all(is_array_type(r.type) for r in op.results) or any(a is None for a in inputs):
            return

        try:
            # IEEE results (inf, NaN) are what the op computes at run time too: fold them silently.
            with np.errstate(all="ignore"):
                results = op.evaluate(*inputs)
        except Exception as error:  # evaluate is numpy code; whatever fails is left to run time
            self._failed.add(op)
            emit_warning(
                op, f"'{op.name}' not folded: evaluating it failed: {type(error).__name__}: {error}"
            )
            return

        constants = [
            ConstantOp(dense_elements(array, result.type))
            for array, result in zip(check_evaluated(op, results), op.results)
        ]
        rewriter.replace(op, constants, [c.output for c in constants])


@dataclass(frozen=True)
class GraphFoldConstantsPass(ModulePass):
    """Replace graph ops whose operands are all constants by `graph.constant`s of their values.

    Operands count as constants when they come from `graph.constant` or from an
    `arith.constant` of a dense tensor; chains fold in one run. Values are
    computed with the op's `evaluate` and keep the result's element type. Ops
    left unused (the constants folding consumed, and any other dead pure op)
    are erased, as in every greedy rewrite. An op whose evaluation fails (e.g. a
    gather out of range) stays, with a warning.

        %a = graph.constant dense<[1.0, -2.0]> : tensor<2xf32>
        %0 = graph.relu %a : tensor<2xf32>
        %1 = graph.add %x, %0 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>

    becomes

        %0 = graph.constant dense<[1.000000e+00, 0.000000e+00]> : tensor<2xf32>
        %1 = graph.add %x, %0 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>

    Option `max-elements` (default 2**20): an op with an operand or a result of
    more elements than this is not folded, so folding never materialises huge
    tensors in the IR, unless no result is larger than a dense (not splat) operand,
    which the IR holds in full already (a large weight transposed into another
    layout); results whose elements are all equal are stored as splats.
    """

    name = "graph-fold-constants"

    max_elements: int = DEFAULT_MAX_ELEMENTS
    """Largest operand or result, in elements, of an op the pass folds."""

    def __post_init__(self):
        check_max_elements(self.max_elements)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # The greedy applier also erases ops as they become dead.
        patterns = GreedyRewritePatternApplier([FoldConstantOp(self.max_elements)])
        PatternRewriteWalker(Located(patterns)).rewrite_module(op)
