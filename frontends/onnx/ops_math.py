"""Converters for ONNX's elementwise math, logic and bitwise operators, and the reductions built from
them. The trigonometric and rounding functions, Mod, the bitwise ops, BitShift and CumProd have graph
ops of their own; the others decompose exactly into graph ops.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import IntegerType, Signedness, StringAttr, TensorType, f32, f64
from xdsl.ir import SSAValue

from ziggurat.dialects import graph
from ziggurat.dialects.graph import bool_attr, i64_attr, int_array, window_output_size
from ziggurat.dtypes import to_numpy_dtype
from ziggurat.frontends.onnx.node import NodeContext
from ziggurat.frontends.onnx.ops import (
    as_2d,
    convert_cumulative,
    converts,
    depth_windows,
    from_2d,
    legacy_broadcast,
    reshape,
    spatial_rank,
    tensor_type,
    window_attributes,
)

# --------------------------------------------------------------------------- #
# Elementwise math
# --------------------------------------------------------------------------- #


@converts("Mod", newest=28)
def convert_mod(ctx: NodeContext):
    fmod = bool(ctx.attribute("fmod", 0))
    return [ctx.emit(graph.ModOp, [ctx.input(0), ctx.input(1)], {"fmod": bool_attr(fmod)})]


BITWISE: dict[str, type[graph.GraphOp]] = {
    "BitwiseAnd": graph.BitwiseAndOp,
    "BitwiseOr": graph.BitwiseOrOp,
    "BitwiseXor": graph.BitwiseXorOp,
}


@converts(*BITWISE, newest=18)
def convert_bitwise(ctx: NodeContext):
    return [ctx.emit(BITWISE[ctx.node.op_type], [ctx.input(0), ctx.input(1)])]


@converts("BitShift", newest=28)
def convert_bit_shift(ctx: NodeContext):
    direction = ctx.attribute("direction", "")
    if direction not in ("LEFT", "RIGHT"):
        raise ctx.error(f"direction must be LEFT or RIGHT, got '{direction}'")
    properties = {"direction": StringAttr(direction.lower())}
    return [ctx.emit(graph.BitShiftOp, [ctx.input(0), ctx.input(1)], properties)]


@converts("And", "Or", "Xor", newest=7)
def convert_logical(ctx: NodeContext):
    # On booleans: a and b = where(a, b, a), a or b = where(a, a, b), a xor b = a != b.
    a = ctx.input(0)
    b = legacy_broadcast(ctx, a, ctx.input(1))
    if ctx.node.op_type == "And":
        return [ctx.emit(graph.WhereOp, [a, b, a])]
    if ctx.node.op_type == "Or":
        return [ctx.emit(graph.WhereOp, [a, a, b])]
    return [ctx.emit(graph.NotOp, [ctx.emit(graph.EqualOp, [a, b])])]


def is_unsigned(value: SSAValue) -> bool:
    element_type = tensor_type(value).get_element_type()
    return (
        isinstance(element_type, IntegerType)
        and element_type.signedness.data == Signedness.UNSIGNED
    )


@converts("Sign", newest=13)
def convert_sign(ctx: NodeContext):
    x = ctx.input(0)
    if is_unsigned(x):
        # Compared as unsigned numbers only by equality (the graph ops compare widened values).
        nonzero = ctx.emit(graph.NotOp, [ctx.emit(graph.EqualOp, [x, ctx.scalar_like(0, x)])])
        return [ctx.emit_typed(graph.CastOp, nonzero, tensor_type(x))]
    # Zeros (of either sign) and NaN are their own sign.
    zero = ctx.scalar_like(0, x)
    negative = ctx.emit(
        graph.WhereOp, [ctx.emit(graph.LessOp, [x, zero]), ctx.scalar_like(-1, x), x]
    )
    return [
        ctx.emit(
            graph.WhereOp, [ctx.emit(graph.GreaterOp, [x, zero]), ctx.scalar_like(1, x), negative]
        )
    ]


@converts("IsNaN", newest=20)
def convert_is_nan(ctx: NodeContext):
    x = ctx.input(0)
    return [ctx.emit(graph.NotOp, [ctx.emit(graph.EqualOp, [x, x])])]


@converts("IsInf", newest=20)
def convert_is_inf(ctx: NodeContext):
    x = ctx.input(0)
    positive, negative = (
        bool(ctx.attribute("detect_positive", 1)),
        bool(ctx.attribute("detect_negative", 1)),
    )
    if not positive and not negative:
        return [ctx.constant_value(np.zeros(ctx.shape(0), np.bool_))]
    if positive and negative:
        x = ctx.emit(graph.AbsOp, [x])
    # A type without infinities (float8e4m3fn) makes this NaN, which equals nothing.
    return [ctx.emit(graph.EqualOp, [x, ctx.scalar_like(np.inf if positive else -np.inf, x)])]


# --------------------------------------------------------------------------- #
# Activations defined by formulas (ONNX's reference computes them so)
# --------------------------------------------------------------------------- #


def in_float32(ctx: NodeContext, x: SSAValue) -> SSAValue:
    """A float narrower than f32 (f16, bf16, fp8) as f32, the type the graph ops compute it in:
    a formula of several ops then rounds once, at the end (`like`), as one op would."""
    x_type = tensor_type(x)
    dtype = to_numpy_dtype(x_type.get_element_type())
    if dtype == np.float32 or graph.compute_dtype(dtype) != np.float32:
        return x
    return ctx.emit_typed(graph.CastOp, x, TensorType(f32, x_type.get_shape()))


def like(ctx: NodeContext, y: SSAValue, x: SSAValue) -> SSAValue:
    """`y` in `x`'s element type (undoing `in_float32`)."""
    x_element = tensor_type(x).get_element_type()
    if tensor_type(y).get_element_type() == x_element:
        return y
    return ctx.emit_typed(graph.CastOp, y, TensorType(x_element, tensor_type(y).get_shape()))


@converts("Celu", newest=28)
def convert_celu(ctx: NodeContext):
    # max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
    x = in_float32(ctx, ctx.input(0))
    alpha = ctx.scalar_like(ctx.attribute("alpha", 1.0), x)
    zero = ctx.scalar_like(0, x)
    exponential = ctx.emit(graph.ExpOp, [ctx.emit(graph.DivOp, [x, alpha])])
    negative = ctx.emit(
        graph.MulOp, [alpha, ctx.emit(graph.SubOp, [exponential, ctx.scalar_like(1, x)])]
    )
    y = ctx.emit(
        graph.AddOp, [ctx.emit(graph.MaxOp, [x, zero]), ctx.emit(graph.MinOp, [negative, zero])]
    )
    return [like(ctx, y, ctx.input(0))]


@converts("ThresholdedRelu", newest=22)
def convert_thresholded_relu(ctx: NodeContext):
    x = ctx.input(0)
    above = ctx.emit(graph.GreaterOp, [x, ctx.scalar_like(ctx.attribute("alpha", 1.0), x)])
    return [ctx.emit(graph.WhereOp, [above, x, ctx.scalar_like(0, x)])]


@converts("Shrink", newest=9)
def convert_shrink(ctx: NodeContext):
    # x + bias below -lambd, x - bias above lambd, else 0, compared in x's type and computed
    # in f32 (for narrow floats) as ONNX's reference; integers in float64, truncated back.
    x = ctx.input(0)
    x_type = tensor_type(x)
    if isinstance(x_type.get_element_type(), IntegerType):
        x = ctx.emit_typed(graph.CastOp, x, TensorType(f64, x_type.get_shape()))
    lambd, bias = ctx.attribute("lambd", 0.5), ctx.attribute("bias", 0.0)
    below = ctx.emit(graph.LessOp, [x, ctx.scalar_like(-lambd, x)])
    above = ctx.emit(graph.GreaterOp, [x, ctx.scalar_like(lambd, x)])
    x = in_float32(ctx, x)
    bias, zero = ctx.scalar_like(bias, x), ctx.scalar_like(0, x)
    upper = ctx.emit(graph.WhereOp, [above, ctx.emit(graph.SubOp, [x, bias]), zero])
    y = ctx.emit(graph.WhereOp, [below, ctx.emit(graph.AddOp, [x, bias]), upper])
    return [like(ctx, y, ctx.input(0))]


@converts("Swish", newest=24)
def convert_swish(ctx: NodeContext):
    x = ctx.input(0)
    alpha = ctx.attribute("alpha", 1.0)
    if alpha == 1.0:
        return [ctx.emit(graph.SiluOp, [x])]
    x = in_float32(ctx, x)
    scaled = ctx.emit(graph.MulOp, [x, ctx.scalar_like(alpha, x)])
    return [
        like(ctx, ctx.emit(graph.MulOp, [x, ctx.emit(graph.SigmoidOp, [scaled])]), ctx.input(0))
    ]


@converts("Hardmax", newest=13)
def convert_hardmax(ctx: NodeContext):
    # One where the arg max along the axis is (its first position), zero elsewhere.
    x = ctx.input(0)
    shape = ctx.shape(0)
    rank = len(shape)
    if math.prod(shape) == 0:
        return [x]
    axis = ctx.attribute("axis", -1 if ctx.opset >= 13 else 1)
    axis = axis + rank if axis < 0 else axis
    if not 0 <= axis < max(rank, 1):
        raise ctx.error(f"axis {ctx.attribute('axis')} is out of range for rank {rank}")
    if ctx.opset < 13 and axis != rank - 1:
        # Before opset 13 the input is seen as 2-D, [prod(shape[:axis]), prod(shape[axis:])].
        flat = reshape(ctx, x, [math.prod(shape[:axis]), math.prod(shape[axis:])])
        return [reshape(ctx, one_hot_arg_max(ctx, flat, 1), shape)]
    return [one_hot_arg_max(ctx, x, axis)]


def one_hot_arg_max(ctx: NodeContext, x: SSAValue, axis: int) -> SSAValue:
    x_type = tensor_type(x)
    shape = x_type.get_shape()
    index = ctx.emit(graph.ArgMaxOp, [x], {"axis": i64_attr(axis), "keepdims": bool_attr(True)})
    positions = np.arange(shape[axis], dtype=np.int64).reshape(
        [-1 if i == axis else 1 for i in range(len(shape))]
    )
    hits = ctx.emit(graph.EqualOp, [ctx.constant_value(positions), index])
    return ctx.emit_typed(graph.CastOp, hits, x_type)


# --------------------------------------------------------------------------- #
# Reductions and normalizations
# --------------------------------------------------------------------------- #


def order_reversed(ctx: NodeContext, x: SSAValue) -> SSAValue:
    """x under an exact order-reversing map, so that a max of it is a min of x: -x for
    floats, ~x (-x - 1, which never overflows) for integers."""
    if isinstance(tensor_type(x).get_element_type(), IntegerType):
        return ctx.emit(graph.BitwiseNotOp, [x])
    return ctx.emit(graph.NegOp, [x])


@converts("ArgMin", newest=13)
def convert_arg_min(ctx: NodeContext):
    # The arg max of the order reversed exactly (-x for floats, ~x for integers).
    properties = {
        "axis": i64_attr(ctx.attribute("axis", 0)),
        "keepdims": bool_attr(bool(ctx.attribute("keepdims", 1))),
        "select_last_index": bool_attr(bool(ctx.attribute("select_last_index", 0))),
    }
    return [ctx.emit(graph.ArgMaxOp, [order_reversed(ctx, ctx.input(0))], properties)]


# CumProd-26 is CumSum-14's converter with a product (ops.CUMULATIVE).
converts("CumProd", newest=26)(convert_cumulative)


@converts("LpNormalization", newest=22)
def convert_lp_normalization(ctx: NodeContext):
    # x / ||x||_p along the axis, and 0 where the norm is 0 (as onnxruntime).
    x = in_float32(ctx, ctx.input(0))
    p = ctx.attribute("p", 2)
    if p not in (1, 2):
        raise ctx.error(f"p must be 1 or 2, got {p}")
    magnitudes = ctx.emit(graph.AbsOp, [x]) if p == 1 else ctx.emit(graph.MulOp, [x, x])
    properties = {"axes": int_array([ctx.attribute("axis", -1)]), "keepdims": bool_attr(True)}
    norm = ctx.emit(graph.ReduceSumOp, [magnitudes], properties)
    if p == 2:
        norm = ctx.emit(graph.SqrtOp, [norm])
    zero = ctx.scalar_like(0, x)
    is_zero = ctx.emit(graph.EqualOp, [norm, zero])
    return [
        like(
            ctx,
            ctx.emit(graph.WhereOp, [is_zero, zero, ctx.emit(graph.DivOp, [x, norm])]),
            ctx.input(0),
        )
    ]


@converts("LpPool", newest=22)
def convert_lp_pool(ctx: NodeContext):
    # (sum of |x|**p over the window) ** (1/p): the sums are a depthwise convolution with
    # ones of the powers, padded with zeros (which add nothing, so ceil_mode only pads more).
    rank = spatial_rank(ctx, 0, most=3)
    x = in_float32(ctx, ctx.input(0))
    p = ctx.attribute("p", 2)
    if p <= 0:
        raise ctx.error(f"p must be positive, got {p}")
    if p == 2:
        powers = ctx.emit(graph.MulOp, [x, x])
    else:
        powers = ctx.emit(graph.PowOp, [ctx.emit(graph.AbsOp, [x]), ctx.scalar_like(p, x)])
    kernel, strides, pads, dilations = window_attributes(ctx, rank, ctx.attribute("kernel_shape"))
    ceil_mode = bool(ctx.attribute("ceil_mode", 0))
    if rank == 3:
        sums = lp_pool3d_sums(ctx, powers, kernel, strides, pads, dilations, ceil_mode)
    else:
        planes = as_2d(ctx, powers, rank)
        sums = from_2d(
            ctx, window_sums(ctx, planes, kernel, strides, pads, dilations, ceil_mode), rank
        )
    return [like(ctx, ctx.emit(graph.PowOp, [sums, ctx.scalar_like(1.0 / p, x)]), ctx.input(0))]


def window_sums(
    ctx: NodeContext, x: SSAValue, kernel, strides, pads, dilations, ceil_mode: bool
) -> SSAValue:
    """The sums of an (N, C, H, W) tensor over 2-D windows, zero padded."""
    n, channels, height, width = tensor_type(x).get_shape()
    pads = list(pads)
    if ceil_mode:
        for axis, size in enumerate((height, width)):
            out = window_output_size(
                size,
                kernel[axis],
                strides[axis],
                dilations[axis],
                pads[axis],
                pads[axis + 2],
                True,
                "spatial",
            )
            span = dilations[axis] * (kernel[axis] - 1) + 1
            pads[axis + 2] += max(
                (out - 1) * strides[axis] + span - (size + pads[axis] + pads[axis + 2]), 0
            )
    ones = ctx.constant_value(
        np.ones([channels, 1, *kernel], dtype=to_numpy_dtype(tensor_type(x).get_element_type()))
    )
    properties = {
        "strides": int_array(strides),
        "pads": int_array(pads),
        "dilations": int_array(dilations),
        "groups": i64_attr(channels),
    }
    return ctx.emit(graph.Conv2dOp, [x, ones, None], properties)


def lp_pool3d_sums(
    ctx: NodeContext, x: SSAValue, kernel, strides, pads, dilations, ceil_mode: bool
) -> SSAValue:
    # The depth slices each window reads, added, then summed over (H, W) as 2-D windows.
    n, channels, _, height, width = tensor_type(x).get_shape()
    slices, depth = depth_windows(
        ctx, x, kernel[0], strides[0], dilations[0], (pads[0], pads[3]), ceil_mode, 0.0
    )
    total = slices[0]
    for window in slices[1:]:
        total = ctx.emit(graph.AddOp, [total, window])
    planes = reshape(ctx, total, [n, channels * depth, height, width])
    sums = window_sums(
        ctx,
        planes,
        kernel[1:],
        strides[1:],
        [pads[1], pads[2], pads[4], pads[5]],
        dilations[1:],
        ceil_mode,
    )
    out_height, out_width = tensor_type(sums).get_shape()[2:]
    return reshape(ctx, sums, [n, channels, depth, out_height, out_width])
