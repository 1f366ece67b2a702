"""Converters for ONNX's losses that are defined at inference, NegativeLogLikelihoodLoss and
SoftmaxCrossEntropyLoss: the negated input at each position's target class, taken with one
`graph.gather`, weighted, `ignore_index` positions counting zero.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import SSAValue

from ziggurat.dialects import graph
from ziggurat.dialects.graph import bool_attr, i64_attr
from ziggurat.frontends.onnx.node import NodeContext
from ziggurat.frontends.onnx.ops import converts, reshape, tensor_type


def negative_log_likelihood(
    ctx: NodeContext, scores: SSAValue, target: SSAValue, weight: SSAValue | None
) -> SSAValue:
    """The loss of `scores` [N, C, d...] (log-probabilities) at `target` [N, d...], reduced as the node says."""
    shape = tensor_type(scores).get_shape()
    target_shape = tensor_type(target).get_shape()
    if len(shape) < 2 or tuple(target_shape) != (shape[0], *shape[2:]):
        raise ctx.error(
            f"the target's shape {list(target_shape)} must be the input's {list(shape)} without axis 1"
        )
    reduction = ctx.attribute("reduction", "mean")
    if reduction not in ("none", "sum", "mean"):
        raise ctx.error(f"reduction '{reduction}' is not one of none, sum, mean")
    n, classes, positions = shape[0], shape[1], math.prod(shape[2:])
    target = reshape(ctx, target, [n, positions])
    if tensor_type(target).get_element_type() != IntegerType(64):
        target = ctx.emit_typed(graph.CastOp, target, TensorType(IntegerType(64), [n, positions]))
    ignore_index = ctx.attribute("ignore_index")
    valid = None
    if ignore_index is not None:
        ignored = ctx.emit(graph.EqualOp, [target, ctx.scalar_like(ignore_index, target)])
        valid = ctx.emit(graph.NotOp, [ignored])
        # Ignored positions may hold any value: read class 0 there, then count zero.
        target = ctx.emit(graph.WhereOp, [ignored, ctx.scalar_like(0, target), target])
    base = (np.arange(n)[:, None] * classes * positions + np.arange(positions)[None, :]).astype(
        np.int64
    )
    indices = ctx.emit(
        graph.AddOp,
        [
            ctx.emit(graph.MulOp, [target, ctx.scalar_like(positions, target)]),
            ctx.constant_value(base),
        ],
    )
    flat = reshape(ctx, scores, [n * classes * positions])
    loss = ctx.emit(graph.NegOp, [ctx.emit(graph.GatherOp, [flat, indices], {"axis": i64_attr(0)})])
    zero = ctx.scalar_like(0, loss)
    if valid is not None:
        loss = ctx.emit(graph.WhereOp, [valid, loss, zero])
    weights = None
    if weight is not None:
        weights = ctx.emit(graph.GatherOp, [weight, target], {"axis": i64_attr(0)})
        if valid is not None:
            weights = ctx.emit(graph.WhereOp, [valid, weights, zero])
        loss = ctx.emit(graph.MulOp, [weights, loss])
    elif valid is not None:
        weights = ctx.emit(graph.WhereOp, [valid, ctx.scalar_like(1, loss), zero])
    everything = {"keepdims": bool_attr(False)}
    if reduction == "none":
        return reshape(ctx, loss, target_shape)
    if reduction == "sum":
        return ctx.emit(graph.ReduceSumOp, [loss], everything)
    if weights is None:
        return ctx.emit(graph.ReduceMeanOp, [loss], everything)
    total = ctx.emit(graph.ReduceSumOp, [loss], everything)
    return ctx.emit(graph.DivOp, [total, ctx.emit(graph.ReduceSumOp, [weights], everything)])


@converts("NegativeLogLikelihoodLoss", newest=22)
def convert_negative_log_likelihood_loss(ctx: NodeContext):
    return [negative_log_likelihood(ctx, ctx.input(0), ctx.input(1), ctx.optional_input(2))]


@converts("SoftmaxCrossEntropyLoss", newest=13)
def convert_softmax_cross_entropy_loss(ctx: NodeContext):
    if len(ctx.shape(0)) < 2:
        raise ctx.error(
            f"scores must have a batch and a class axis, got shape {list(ctx.shape(0))}"
        )
    log_probabilities = ctx.emit(graph.LogSoftmaxOp, [ctx.input(0)], {"axis": i64_attr(1)})
    loss = negative_log_likelihood(ctx, log_probabilities, ctx.input(1), ctx.optional_input(2))
    return [loss, log_probabilities]
