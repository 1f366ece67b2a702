"""Converters for ONNX's Transformer building blocks: Attention, RotaryEmbedding, RMSNormalization,
TensorScatter, each an exact decomposition into graph ops following the operator's ONNX function
body (and onnx's reference implementation where the body leaves a choice).
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from xdsl.ir import SSAValue

from ziggurat.dialects import graph
from ziggurat.dialects.graph import i64_attr, int_array
from ziggurat.dtypes import from_numpy_dtype
from ziggurat.frontends.onnx.node import NodeContext, element_type_of
from ziggurat.frontends.onnx.ops import (
    cast_to,
    converts,
    dtype_of,
    reshape,
    shape_of,
    slice_along,
    tensor_type,
    transpose,
)

F32 = from_numpy_dtype(np.float32)


# --------------------------------------------------------------------------- #
# RMSNormalization
# --------------------------------------------------------------------------- #


@converts("RMSNormalization", newest=23)
def convert_rms_norm(ctx: NodeContext):
    """x / sqrt(mean(x^2) + epsilon) in float (stash_type), then `* scale`."""
    if ctx.attribute("stash_type", 1) != onnx.TensorProto.FLOAT:
        raise ctx.error(
            f"stash_type {ctx.attribute('stash_type')} is not supported (only float, 1)"
        )
    x = ctx.input(0)
    rank = len(shape_of(x))
    axis = ctx.attribute("axis", -1)
    if not -rank <= axis < rank:
        raise ctx.error(f"axis {axis} is out of range for a rank-{rank} input")
    wide = cast_to(ctx, x, F32)
    axes = {"axes": int_array(list(range(axis % rank, rank)))}
    mean_square = ctx.emit(graph.ReduceMeanOp, [ctx.emit(graph.MulOp, [wide, wide])], axes)
    shifted = ctx.emit(
        graph.AddOp, [mean_square, ctx.scalar_like(ctx.attribute("epsilon", 1e-5), mean_square)]
    )
    normalized = ctx.emit(graph.DivOp, [wide, ctx.emit(graph.SqrtOp, [shifted])])
    normalized = cast_to(ctx, normalized, tensor_type(x).get_element_type())
    return [ctx.emit(graph.MulOp, [normalized, ctx.input(1)])]


# --------------------------------------------------------------------------- #
# RotaryEmbedding
# --------------------------------------------------------------------------- #


@converts("RotaryEmbedding", newest=23)
def convert_rotary_embedding(ctx: NodeContext):
    """Slices of the rotated part (halves, or even and odd elements when interleaved), `x1 * cos - x2 * sin`
    and `x1 * sin + x2 * cos`, put back with concat; the caches are gathered at `position_ids` when given.
    """
    x = ctx.input(0)
    shape = shape_of(x)
    if len(shape) == 4:
        batch, heads, sequence, head_size = shape
    elif len(shape) == 3:
        heads = ctx.attribute("num_heads", 0)
        batch, sequence, hidden = shape
        if not heads or hidden % heads:
            raise ctx.error(
                f"a 3-D input needs num_heads dividing its hidden size {hidden} (num_heads = {heads})"
            )
        head_size = hidden // heads
        # (batch, sequence, heads, head_size): the caches broadcast over the heads at axis 2.
        x = reshape(ctx, x, [batch, sequence, heads, head_size])
    else:
        raise ctx.error(f"the input must be 3-D or 4-D, not {len(shape)}-D")
    rotated = ctx.attribute("rotary_embedding_dim", 0) or head_size
    if rotated % 2 or rotated > head_size:
        raise ctx.error(
            f"rotary_embedding_dim {rotated} must be even and at most the head size {head_size}"
        )
    half = rotated // 2

    cos, sin = ctx.input(1), ctx.input(2)
    if ctx.has_input(3):
        positions = ctx.input(3)
        cos, sin = (
            ctx.emit(graph.GatherOp, [cache, positions], {"axis": i64_attr(0)})
            for cache in (cos, sin)
        )
    if shape_of(cos) != [batch, sequence, half] or shape_of(sin) != [batch, sequence, half]:
        raise ctx.error(
            f"the cos and sin caches give {shape_of(cos)} and {shape_of(sin)} per token, "
            f"not [batch, sequence, rotary_embedding_dim / 2] = {[batch, sequence, half]}"
        )
    # Broadcast over the heads: axis 1 of (batch, heads, sequence, d), axis 2 of (batch, sequence, heads, d).
    per_head = [batch, 1, sequence, half] if len(shape) == 4 else [batch, sequence, 1, half]
    cos, sin = reshape(ctx, cos, per_head), reshape(ctx, sin, per_head)

    interleaved = bool(ctx.attribute("interleaved", 0))
    if interleaved:
        x1, x2 = slice_along(ctx, x, -1, 0, rotated, 2), slice_along(ctx, x, -1, 1, rotated, 2)
    else:
        x1, x2 = slice_along(ctx, x, -1, 0, half), slice_along(ctx, x, -1, half, rotated)
    real = ctx.emit(
        graph.SubOp, [ctx.emit(graph.MulOp, [cos, x1]), ctx.emit(graph.MulOp, [sin, x2])]
    )
    imaginary = ctx.emit(
        graph.AddOp, [ctx.emit(graph.MulOp, [sin, x1]), ctx.emit(graph.MulOp, [cos, x2])]
    )
    if interleaved:
        pairs = [
            ctx.emit(graph.UnsqueezeOp, [part], {"axes": int_array([-1])})
            for part in (real, imaginary)
        ]
        joined = ctx.emit(graph.ConcatOp, pairs, {"axis": i64_attr(-1)})
        parts = [reshape(ctx, joined, [*shape_of(real)[:-1], rotated])]
    else:
        parts = [real, imaginary]
    if rotated < head_size:
        parts.append(slice_along(ctx, x, -1, rotated, head_size))
    result = ctx.emit(graph.ConcatOp, parts, {"axis": i64_attr(-1)})
    return [reshape(ctx, result, shape) if len(shape) == 3 else result]


# --------------------------------------------------------------------------- #
# Attention
# --------------------------------------------------------------------------- #

NEG_INF = -np.inf


def split_heads(ctx: NodeContext, value: SSAValue, heads: int, what: str) -> SSAValue:
    """(batch, sequence, heads * size) as (batch, heads, sequence, size)."""
    batch, sequence, hidden = shape_of(value)
    if hidden % heads:
        raise ctx.error(
            f"the hidden size {hidden} of {what} is not a multiple of its {heads} heads"
        )
    return transpose(
        ctx, reshape(ctx, value, [batch, sequence, heads, hidden // heads]), [0, 2, 1, 3]
    )


def masked_bias(ctx: NodeContext, disallowed, dtype: np.dtype):
    """0 where allowed, -inf where `disallowed` (a numpy array or a boolean SSA value)."""
    if isinstance(disallowed, np.ndarray):
        return np.where(disallowed, dtype.type(NEG_INF), dtype.type(0))
    zero, minus_inf = (ctx.constant_value(np.asarray(v, dtype)) for v in (0, NEG_INF))
    return ctx.emit(graph.WhereOp, [disallowed, minus_inf, zero])


def add_bias(ctx: NodeContext, total, part):
    """The sum of two bias parts, numpy while both are known at import time."""
    if total is None:
        return part
    if isinstance(total, np.ndarray) and isinstance(part, np.ndarray):
        return total + part
    as_value = [ctx.constant_value(p) if isinstance(p, np.ndarray) else p for p in (total, part)]
    return ctx.emit(graph.AddOp, as_value)


def frontier_bias(
    ctx: NodeContext, dtype, sequence: int, total: int, offset, causal: bool, left: int, right: int
):
    """The causal and sliding-window bias: query i (at absolute position i + offset) may attend key j
    iff j <= i + offset (causal), i + offset - j <= left and j - (i + offset) <= right (windows of
    size >= 0). `offset` is an int or a per-batch (batch,) int64 SSA value; the result is
    (sequence, total) or (batch, 1, sequence, total)."""
    relative = np.arange(sequence).reshape(sequence, 1) - np.arange(total).reshape(1, total)
    if isinstance(offset, int):
        difference = relative + offset
        limits = [
            (difference < 0, causal),
            (difference > left, left >= 0),
            (-difference > right, right >= 0),
        ]
        disallowed = np.logical_or.reduce([bad for bad, active in limits if active])
        return masked_bias(ctx, disallowed, dtype)
    batch = shape_of(offset)[0]
    per_batch = reshape(ctx, offset, [batch, 1, 1, 1])
    difference = ctx.emit(
        graph.AddOp, [ctx.constant_value(relative.reshape(1, 1, sequence, total)), per_batch]
    )
    bias = None
    limits = (
        (causal, graph.LessOp, 0),
        (left >= 0, graph.GreaterOp, left),
        (right >= 0, graph.LessOp, -right),
    )
    for active, op_type, bound in limits:
        if active:
            disallowed = ctx.emit(
                op_type, [difference, ctx.constant_value(np.asarray(bound, np.int64))]
            )
            bias = add_bias(ctx, bias, masked_bias(ctx, disallowed, dtype))
    return bias


def attention_bias(ctx: NodeContext, dtype, batch: int, sequence: int, total: int, past: int):
    """The additive bias of the scores (None without one): mask + frontier + padding, in that order."""
    bias = None
    if ctx.has_input(3):
        mask = ctx.input(3)
        mask_shape = shape_of(mask)
        if dtype_of(mask) == np.bool_:
            mask = masked_bias(ctx, ctx.emit(graph.NotOp, [mask]), dtype)
        elif dtype_of(mask) != dtype:
            raise ctx.error(
                f"a float attn_mask must have the query's type {dtype}, not {dtype_of(mask)}"
            )
        if mask_shape[-1] < total:
            # A shorter mask is padded with -inf (or false) to the total sequence length.
            padding = ctx.constant_value(
                np.full([*mask_shape[:-1], total - mask_shape[-1]], NEG_INF, dtype)
            )
            mask = ctx.emit(graph.ConcatOp, [mask, padding], {"axis": i64_attr(-1)})
        elif mask_shape[-1] > total:
            raise ctx.error(
                f"attn_mask has {mask_shape[-1]} keys, more than the {total} of past and present"
            )
        bias = mask
    nonpad = ctx.optional_input(6)
    if nonpad is not None and shape_of(nonpad) != [batch]:
        raise ctx.error(f"nonpad_kv_seqlen must have shape [{batch}], not {shape_of(nonpad)}")
    causal = bool(ctx.attribute("is_causal", 0))
    left, right = ctx.attribute("left_window_size", -1), ctx.attribute("right_window_size", -1)
    if left < -1 or right < -1:
        raise ctx.error(f"window sizes must be -1 or non-negative, not {left} and {right}")
    if causal or left >= 0 or right >= 0:
        # Bottom-right alignment: the past keys, or the valid keys of an external cache, precede the queries.
        if nonpad is not None:
            offset = ctx.emit(
                graph.SubOp, [nonpad, ctx.constant_value(np.asarray(sequence, np.int64))]
            )
        else:
            offset = past
        bias = add_bias(
            ctx, bias, frontier_bias(ctx, dtype, sequence, total, offset, causal, left, right)
        )
    if nonpad is not None:
        # Key j is padding where nonpad_kv_seqlen <= j, i.e. nonpad_kv_seqlen < j + 1.
        keys_through = ctx.constant_value(
            np.arange(1, total + 1, dtype=np.int64).reshape(1, 1, 1, total)
        )
        beyond = ctx.emit(graph.LessOp, [reshape(ctx, nonpad, [batch, 1, 1, 1]), keys_through])
        bias = add_bias(ctx, bias, masked_bias(ctx, beyond, dtype))
    return bias


def grouped_matmul(
    ctx: NodeContext, per_query_head: SSAValue, per_kv_head: SSAValue, groups: int
) -> SSAValue:
    """`per_query_head @ per_kv_head` where each key and value head serves `groups` consecutive query
    heads: (batch, heads / groups, groups, ...) against (batch, heads / groups, 1, ...), a matmul that
    broadcasts the key and value heads instead of repeating them."""
    if groups == 1:
        return ctx.emit(graph.MatMulOp, [per_query_head, per_kv_head])
    batch, heads, rows, inner = shape_of(per_query_head)
    lhs = reshape(ctx, per_query_head, [batch, heads // groups, groups, rows, inner])
    rhs = ctx.emit(graph.UnsqueezeOp, [per_kv_head], {"axes": int_array([2])})
    product = ctx.emit(graph.MatMulOp, [lhs, rhs])
    return reshape(ctx, product, [batch, heads, rows, shape_of(product)[-1]])


@converts("Attention", newest=25)
def convert_attention(ctx: NodeContext):
    """The scores `(Q * sqrt(scale)) @ (K * sqrt(scale))^T`, softcap, an additive bias made of the mask,
    the causal / sliding-window frontier (bottom-right aligned) and the padding of `nonpad_kv_seqlen`,
    softmax, a zero row where the bias masks every key, then `@ V`. Grouped query heads share their key
    and value head through a broadcasting matmul.
    """
    q, k, v = ctx.input(0), ctx.input(1), ctx.input(2)
    rank = len(shape_of(q))
    if rank == 3:
        q_heads, kv_heads = ctx.attribute("q_num_heads", 0), ctx.attribute("kv_num_heads", 0)
        if not q_heads or not kv_heads:
            raise ctx.error("3-D inputs need the q_num_heads and kv_num_heads attributes")
        q = split_heads(ctx, q, q_heads, "Q")
        k, v = split_heads(ctx, k, kv_heads, "K"), split_heads(ctx, v, kv_heads, "V")
    elif rank != 4 or len(shape_of(k)) != 4 or len(shape_of(v)) != 4:
        raise ctx.error("Q, K and V must all be 3-D or all 4-D")
    dtype = dtype_of(q)
    batch, q_heads, sequence, head_size = shape_of(q)
    kv_heads = shape_of(k)[1]
    if q_heads % kv_heads or shape_of(v)[1] != kv_heads:
        raise ctx.error(
            f"{q_heads} query heads cannot share {kv_heads} key and {shape_of(v)[1]} value heads"
        )

    if ctx.has_input(4) != ctx.has_input(5):
        raise ctx.error("past_key and past_value must be given together")
    past = 0
    if ctx.has_input(4):
        if ctx.has_input(6):
            raise ctx.error("nonpad_kv_seqlen cannot be combined with past_key and past_value")
        past = shape_of(ctx.input(4))[2]
        k = ctx.emit(graph.ConcatOp, [ctx.input(4), k], {"axis": i64_attr(2)})
        v = ctx.emit(graph.ConcatOp, [ctx.input(5), v], {"axis": i64_attr(2)})
    total = shape_of(k)[2]

    # Q and K are each scaled by sqrt(scale) (rounded to their type) against overflow.
    scale = ctx.attribute("scale", 1 / math.sqrt(head_size))
    root = ctx.constant_value(np.asarray(np.sqrt(np.float64(scale)), dtype))
    q_scaled = ctx.emit(graph.MulOp, [q, root])
    k_scaled = transpose(ctx, ctx.emit(graph.MulOp, [k, root]), [0, 1, 3, 2])
    groups = q_heads // kv_heads
    scores = grouped_matmul(ctx, q_scaled, k_scaled, groups)
    raw_scores = scores
    softcap = ctx.attribute("softcap", 0.0)
    if softcap > 0:
        cap = ctx.scalar_like(softcap, scores)
        scores = ctx.emit(
            graph.MulOp, [ctx.emit(graph.TanhOp, [ctx.emit(graph.DivOp, [scores, cap])]), cap]
        )
    capped = scores

    bias = attention_bias(ctx, dtype, batch, sequence, total, past)
    if bias is not None:
        scores = ctx.emit(
            graph.AddOp,
            [scores, ctx.constant_value(bias) if isinstance(bias, np.ndarray) else bias],
        )
    biased = scores
    precision = ctx.attribute("softmax_precision", 0)
    if precision:
        scores = cast_to(ctx, scores, element_type_of(precision, f"{ctx.label} softmax_precision"))
    probabilities = ctx.emit(graph.SoftmaxOp, [scores], {"axis": i64_attr(-1)})
    probabilities = zero_fully_masked_rows(ctx, probabilities, bias)
    probabilities = cast_to(ctx, probabilities, tensor_type(q).get_element_type())

    y = grouped_matmul(ctx, probabilities, v, groups)
    value_size = shape_of(v)[3]
    if rank == 3:
        y = reshape(ctx, transpose(ctx, y, [0, 2, 1, 3]), [batch, sequence, q_heads * value_size])

    mode = ctx.attribute("qk_matmul_output_mode", 0)
    if mode not in (0, 1, 2, 3):
        raise ctx.error(f"qk_matmul_output_mode {mode} is not one of 0, 1, 2, 3")
    wanted = len(ctx.node.output) > 3 and ctx.node.output[3]
    qk_output = [raw_scores, capped, biased, probabilities][mode] if wanted else None
    return [y, k, v, qk_output]


def zero_fully_masked_rows(ctx: NodeContext, probabilities: SSAValue, bias) -> SSAValue:
    """A zero row where the bias is -inf for every key (the softmax of such a row is NaN)."""
    if bias is None:
        return probabilities
    zero = ctx.scalar_like(0, probabilities)
    if isinstance(bias, np.ndarray):
        masked = np.isneginf(bias.max(axis=-1, keepdims=True))
        if not masked.any():
            return probabilities
        return ctx.emit(graph.WhereOp, [ctx.constant_value(masked), zero, probabilities])
    largest = ctx.emit(graph.ReduceMaxOp, [bias], {"axes": int_array([-1])})
    masked = ctx.emit(graph.EqualOp, [largest, ctx.scalar_like(NEG_INF, largest)])
    return ctx.emit(graph.WhereOp, [masked, zero, probabilities])


# --------------------------------------------------------------------------- #
# TensorScatter
# --------------------------------------------------------------------------- #


@converts("TensorScatter", newest=24)
def convert_tensor_scatter(ctx: NodeContext):
    # Cache position p of sample b takes update[..., p - w[b], ...] (mod the cache length when
    # circular) where that index is in [0, sequence): a gather of the flattened update at computed
    # flat positions, selected where written.
    cache, update = ctx.input(0), ctx.input(1)
    shape, update_shape = shape_of(cache), shape_of(update)
    rank = len(shape)
    axis = ctx.attribute("axis", -2)
    if not -rank <= axis < rank or axis % rank == 0:
        raise ctx.error(f"axis {axis} must name a non-batch dimension of the rank-{rank} cache")
    axis %= rank
    mode = ctx.attribute("mode", "linear")
    if mode not in ("linear", "circular"):
        raise ctx.error(f"mode '{mode}' is not one of linear, circular")
    if len(update_shape) != rank or any(
        a != b for i, (a, b) in enumerate(zip(shape, update_shape)) if i != axis
    ):
        raise ctx.error(
            f"the update {update_shape} must match the cache {shape} outside axis {axis}"
        )
    length, sequence = shape[axis], update_shape[axis]
    if sequence > length:
        raise ctx.error(f"the update's {sequence} positions do not fit the cache's {length}")
    if sequence == 0:
        return [cache]
    batch = shape[0]
    positions = np.arange(length, dtype=np.int64).reshape(1, length)
    if ctx.has_input(2):
        source = ctx.emit(
            graph.SubOp, [ctx.constant_value(positions), reshape(ctx, ctx.input(2), [batch, 1])]
        )
    else:
        source = ctx.constant_value(np.broadcast_to(positions, (batch, length)).copy())
    if mode == "circular":
        source = ctx.emit(graph.ModOp, [source, ctx.constant_value(np.asarray(length, np.int64))])
    written = ctx.emit(
        graph.WhereOp,
        [
            ctx.emit(graph.LessOp, [source, ctx.constant_value(np.asarray(0, np.int64))]),
            ctx.constant_value(np.asarray(False)),
            ctx.emit(graph.LessOp, [source, ctx.constant_value(np.asarray(sequence, np.int64))]),
        ],
    )
    at_least_0 = ctx.emit(graph.MaxOp, [source, ctx.constant_value(np.asarray(0, np.int64))])
    clamped = ctx.emit(
        graph.MinOp, [at_least_0, ctx.constant_value(np.asarray(sequence - 1, np.int64))]
    )
    # The flat index in the update of element (b, d1, ..., p, ..., dn) of the cache.
    inner = math.prod(update_shape[axis + 1 :])
    per_sample = [batch] + [1] * (axis - 1) + [length] + [1] * (rank - axis - 1)
    strides = np.cumprod([1, *reversed(update_shape[1:])])[::-1]
    base = sum(
        np.arange(size, dtype=np.int64).reshape([size if i == dim else 1 for i in range(rank)])
        * int(stride)
        for dim, (size, stride) in enumerate(zip(update_shape, strides))
        if dim != axis
    )
    inner_stride = ctx.constant_value(np.asarray(inner, np.int64))
    offsets = ctx.emit(graph.MulOp, [reshape(ctx, clamped, per_sample), inner_stride])
    flat = ctx.emit(graph.AddOp, [offsets, ctx.constant_value(np.asarray(base, np.int64))])
    gathered = ctx.emit(
        graph.GatherOp,
        [reshape(ctx, update, [math.prod(update_shape)]), flat],
        {"axis": i64_attr(0)},
    )
    selected = reshape(ctx, written, per_sample)
    return [ctx.emit(graph.WhereOp, [selected, gathered, cache])]
