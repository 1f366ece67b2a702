"""Converters for ONNX's gated and state-carrying sequence operators (SwiGLU, CausalConvWithState,
LinearAttention), each a composition of graph ops following the onnx package's reference
implementation step by step.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from ziggurat.dialects import graph
from ziggurat.dialects.graph import i64_attr, int_array
from ziggurat.frontends.onnx.node import NodeContext
from ziggurat.frontends.onnx.ops import cast_to, converts, reshape, slice_along, tensor_type
from ziggurat.frontends.onnx.ops_transformer import split_heads


def _swish(ctx: NodeContext, x: SSAValue, alpha: float) -> SSAValue:
    """x * sigmoid(alpha * x), the sigmoid rounded to x's type first as ONNX's Swish reference does."""
    scaled = x if alpha == 1.0 else ctx.emit(graph.MulOp, [x, ctx.scalar_like(alpha, x)])
    return ctx.emit(graph.MulOp, [x, ctx.emit(graph.SigmoidOp, [scaled])])


@converts("SwiGLU", newest=28)
def convert_swiglu(ctx: NodeContext):
    a, b = ctx.input(0), ctx.input(1)
    if ctx.shape(0) != ctx.shape(1):
        raise ctx.error(
            f"A {list(ctx.shape(0))} and B {list(ctx.shape(1))} must have the same shape (no broadcasting)"
        )
    return [ctx.emit(graph.MulOp, [_swish(ctx, a, float(ctx.attribute("alpha", 1.0))), b])]


@converts("CausalConvWithState", newest=27)
def convert_causal_conv_with_state(ctx: NodeContext):
    x, weight = ctx.input(0), ctx.input(1)
    activation = ctx.attribute("activation", "none")
    if activation not in ("none", "silu", "swish"):
        raise ctx.error(f"activation '{activation}' is not one of 'none', 'silu', 'swish'")
    if len(ctx.shape(0)) != 3 or len(ctx.shape(1)) != 3 or ctx.shape(1)[1] != 1:
        raise ctx.error(
            f"input {list(ctx.shape(0))} must be (batch, channels, length) and weight {list(ctx.shape(1))} "
            "(channels, 1, k)"
        )
    batch, channels, length = ctx.shape(0)
    k = ctx.shape(1)[2]
    past = ctx.optional_input(3)
    if past is None:
        past = ctx.constant_value(np.zeros((batch, channels, k - 1), dtype=ctx.dtype(0)))
    padded = ctx.emit(graph.ConcatOp, [past, x], {"axis": i64_attr(2)}) if k > 1 else x
    # Depthwise: one group per channel, a unit height so that the 2-D conv covers the 1-D one.
    unit_height = {"axes": int_array([2])}
    conv = ctx.emit(
        graph.Conv2dOp,
        [
            ctx.emit(graph.UnsqueezeOp, [padded], unit_height),
            ctx.emit(graph.UnsqueezeOp, [weight], unit_height),
            ctx.optional_input(2),
        ],
        {"groups": i64_attr(channels)},
    )
    output = ctx.emit(graph.SqueezeOp, [conv], unit_height)
    if activation != "none":
        output = cast_to(
            ctx, _swish(ctx, cast_to(ctx, output, graph.f32), 1.0), ctx.type(0).get_element_type()
        )
    present = slice_along(ctx, padded, 2, length, length + k - 1)
    return [output, present]


def _step(ctx: NodeContext, x: SSAValue, index: int) -> SSAValue:
    """Position `index` of (B, H, T, D) as (B, H, D)."""
    b, h, _, d = tensor_type(x).get_shape()
    return reshape(ctx, slice_along(ctx, x, 2, index, index + 1), [b, h, d])


def _matmul(ctx: NodeContext, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    return ctx.emit(graph.MatMulOp, [lhs, rhs])


def _per_head(ctx: NodeContext, x: SSAValue, heads: int, b: int, t: int) -> SSAValue:
    """decay or beta (B, T, H) as (B, H, T, 1), or (B, T, H*Dk) as (B, H, T, Dk)."""
    last = tensor_type(x).get_shape()[-1]
    if last == heads or last == 1:
        return ctx.emit(
            graph.TransposeOp, [reshape(ctx, x, [b, t, last, 1])], {"perm": int_array([0, 2, 1, 3])}
        )
    return split_heads(ctx, x, heads, "decay")


@converts("LinearAttention", newest=27)
def convert_linear_attention(ctx: NodeContext):
    rule = ctx.attribute("update_rule", "gated_delta")
    if rule not in ("linear", "gated", "delta", "gated_delta"):
        raise ctx.error(f"update_rule '{rule}' is not one of linear, gated, delta, gated_delta")
    q_heads, kv_heads = ctx.attribute("q_num_heads"), ctx.attribute("kv_num_heads")
    if not q_heads or not kv_heads or q_heads % kv_heads:
        raise ctx.error(
            "q_num_heads and kv_num_heads are required, q_num_heads a multiple of kv_num_heads"
        )
    gating, delta = rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")
    for index, name, needed in ((4, "decay", gating), (5, "beta", delta)):
        if ctx.has_input(index) != needed:
            raise ctx.error(
                f"update_rule '{rule}' {'requires' if needed else 'forbids'} the {name} input"
            )
    if any(len(ctx.shape(i)) != 3 for i in range(3)):
        raise ctx.error("query, key and value must be (batch, sequence, heads * head size)")
    query, key, value = ctx.input(0), ctx.input(1), ctx.input(2)
    b, t, _ = ctx.shape(0)
    q4, k4, v4 = (
        cast_to(ctx, split_heads(ctx, x, h, name), graph.f32)
        for x, h, name in (
            (query, q_heads, "query"),
            (key, kv_heads, "key"),
            (value, kv_heads, "value"),
        )
    )
    d_k, d_v = tensor_type(q4).get_shape()[3], tensor_type(v4).get_shape()[3]
    decay = (
        cast_to(ctx, _per_head(ctx, ctx.input(4), kv_heads, b, t), graph.f32) if gating else None
    )
    beta = cast_to(ctx, _per_head(ctx, ctx.input(5), kv_heads, b, t), graph.f32) if delta else None
    past = ctx.optional_input(3)
    if past is not None and ctx.shape(3) != (b, kv_heads, d_k, d_v):
        raise ctx.error(f"past_state {list(ctx.shape(3))} must be {[b, kv_heads, d_k, d_v]}")
    state = (
        cast_to(ctx, past, graph.f32)
        if past is not None
        else ctx.constant_value(np.zeros((b, kv_heads, d_k, d_v), np.float32))
    )
    scale = ctx.attribute("scale", 0.0)
    scale = 1.0 / np.sqrt(d_k) if not scale else scale
    group = q_heads // kv_heads

    outputs = []
    for i in range(t):
        q_t, k_t, v_t = _step(ctx, q4, i), _step(ctx, k4, i), _step(ctx, v4, i)
        if gating:
            # state *= exp(g_t), g_t per head (B, H, 1) or per key dimension (B, H, Dk), over Dv.
            g_t = reshape(
                ctx,
                slice_along(ctx, decay, 2, i, i + 1),
                [b, kv_heads, tensor_type(decay).get_shape()[3], 1],
            )
            state = ctx.emit(graph.MulOp, [state, ctx.emit(graph.ExpOp, [g_t])])
        k_column = reshape(ctx, k_t, [b, kv_heads, d_k, 1])
        if delta:
            # v_t <- beta_t * (v_t - S^T k_t): (B, H, 1, Dk) @ (B, H, Dk, Dv).
            retrieved = reshape(
                ctx,
                _matmul(ctx, reshape(ctx, k_t, [b, kv_heads, 1, d_k]), state),
                [b, kv_heads, d_v],
            )
            beta_t = reshape(
                ctx, slice_along(ctx, beta, 2, i, i + 1), [b, tensor_type(beta).get_shape()[1], 1]
            )
            v_t = ctx.emit(graph.MulOp, [beta_t, ctx.emit(graph.SubOp, [v_t, retrieved])])
        update = ctx.emit(graph.MulOp, [k_column, reshape(ctx, v_t, [b, kv_heads, 1, d_v])])
        state = ctx.emit(graph.AddOp, [state, update])
        read = state
        if group > 1:
            # Each KV head's state serves `group` query heads in turn (np.repeat along heads).
            copies = [reshape(ctx, state, [b, kv_heads, 1, d_k, d_v])] * group
            expanded = ctx.emit(graph.ConcatOp, copies, {"axis": i64_attr(2)})
            read = reshape(ctx, expanded, [b, q_heads, d_k, d_v])
        o_t = _matmul(ctx, reshape(ctx, q_t, [b, q_heads, 1, d_k]), read)
        outputs.append(ctx.emit(graph.MulOp, [o_t, ctx.scalar_like(scale, o_t)]))
    # (B, H, 1, Dv) per step -> (B, H, T, Dv) -> (B, T, H*Dv)
    stacked = outputs[0] if t == 1 else ctx.emit(graph.ConcatOp, outputs, {"axis": i64_attr(2)})
    output = ctx.emit(graph.TransposeOp, [stacked], {"perm": int_array([0, 2, 1, 3])})
    output = cast_to(
        ctx, reshape(ctx, output, [b, t, q_heads * d_v]), ctx.type(0).get_element_type()
    )
    present = cast_to(
        ctx, state, tensor_type(past if past is not None else query).get_element_type()
    )
    return [output, present]
