"""Converters for ONNX's integer operators (QLinearConv, QLinearMatMul, MatMulInteger, ConvInteger,
DynamicQuantizeLinear): exact i32 products of the widened operands less their zero points, then the
QLinear ops' rescaling as ONNX's reference computes it.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import Float64Type, IntegerType
from xdsl.ir import SSAValue

from ziggurat.dialects import graph
from ziggurat.dialects.graph import i64_attr
from ziggurat.dtypes import to_numpy_dtype
from ziggurat.frontends.onnx.node import NodeContext
from ziggurat.frontends.onnx.ops import cast_to, converts, convolution, reshape, tensor_type

I32 = IntegerType(32)
EIGHT_BIT = (np.dtype(np.int8), np.dtype(np.uint8))


def eight_bit(ctx: NodeContext, index: int, what: str) -> SSAValue:
    if ctx.dtype(index) not in EIGHT_BIT:
        raise ctx.error(
            f"{what} has element type {ctx.dtype(index)}; only int8 and uint8 are supported"
        )
    return ctx.input(index)


def centered(
    ctx: NodeContext, index: int, zero_point_index: int | None, what: str, axis_shape=None
) -> SSAValue:
    """Input `index` in i32 minus its zero point (input `zero_point_index`, absent: 0); a zero point
    with one entry per element of an axis is reshaped to `axis_shape` to broadcast along it."""
    x = cast_to(ctx, eight_bit(ctx, index, what), I32)
    if zero_point_index is None or not ctx.has_input(zero_point_index):
        return x
    zero_point = cast_to(ctx, ctx.input(zero_point_index), I32)
    shape = tensor_type(zero_point).get_shape()
    if len(shape) <= 1 and (not shape or shape[0] == 1):
        zero_point = reshape(ctx, zero_point, [])
    elif axis_shape is not None and len(shape) == 1:
        zero_point = reshape(ctx, zero_point, axis_shape)
    return ctx.emit(graph.SubOp, [x, zero_point])


def check_per_tensor(ctx: NodeContext, index: int, what: str) -> None:
    if ctx.has_input(index) and int(np.prod(ctx.shape(index))) != 1:
        raise ctx.error(
            f"{what} must have one element (per-tensor quantization), got shape {list(ctx.shape(index))}"
        )


def per_tensor(ctx: NodeContext, index: int, what: str) -> SSAValue:
    """Input `index`, a scale or zero point of one element, as a 0-d value."""
    check_per_tensor(ctx, index, what)
    return reshape(ctx, ctx.input(index), [])


def requantized(
    ctx: NodeContext, accumulator: SSAValue, multiplier: SSAValue, zero_point: SSAValue
) -> SSAValue:
    """saturate(round_half_even(accumulator * multiplier + zero_point)) in the zero point's type,
    the product and the sum in f64 as ONNX's reference computes them."""
    f64 = Float64Type()
    scaled = ctx.emit(graph.MulOp, [cast_to(ctx, accumulator, f64), cast_to(ctx, multiplier, f64)])
    shifted = ctx.emit(graph.AddOp, [scaled, cast_to(ctx, zero_point, f64)])
    unit = ctx.constant_value(np.ones((), np.float64))
    zero = ctx.constant_value(
        np.zeros((), to_numpy_dtype(tensor_type(zero_point).get_element_type()))
    )
    return ctx.emit(graph.QuantizeOp, [shifted, unit, zero], {"axis": i64_attr(0)})


def multiplier(
    ctx: NodeContext, a_scale: SSAValue, b_scale: SSAValue, y_scale: SSAValue
) -> SSAValue:
    """a_scale * b_scale / y_scale in the scales' element type."""
    if tensor_type(b_scale).get_element_type() != tensor_type(a_scale).get_element_type():
        raise ctx.error("the scales must have one element type")
    return ctx.emit(graph.DivOp, [ctx.emit(graph.MulOp, [a_scale, b_scale]), y_scale])


def output_zero_point(ctx: NodeContext, index: int, like_index: int) -> SSAValue:
    """The output zero point (input `index`) as a 0-d value; absent, a zero of input `like_index`'s type."""
    if ctx.has_input(index):
        if ctx.dtype(index) not in EIGHT_BIT:
            raise ctx.error(
                f"y_zero_point has element type {ctx.dtype(index)}; only int8 and uint8 are supported"
            )
        return per_tensor(ctx, index, "y_zero_point")
    return ctx.constant_value(np.zeros((), ctx.dtype(like_index)))


@converts("MatMulInteger", newest=10)
def convert_matmul_integer(ctx: NodeContext):
    # A's zero point is per tensor or per row ([M], or [..., M, 1]); B's per tensor or per column.
    a_shape = ctx.shape(0)
    a = centered(ctx, 0, 2, "A", axis_shape=[a_shape[-2], 1] if len(a_shape) >= 2 else None)
    b = centered(ctx, 1, 3, "B")
    return [ctx.emit(graph.MatMulOp, [a, b])]


@converts("QLinearMatMul", newest=21)
def convert_qlinear_matmul(ctx: NodeContext):
    # a_scale, y_scale and their zero points per tensor; b's per tensor or per column ([N]).
    check_per_tensor(ctx, 2, "a_zero_point")
    for index, what in ((4, "b_scale"), (5, "b_zero_point")):
        if (
            ctx.has_input(index)
            and int(np.prod(ctx.shape(index))) != 1
            and ctx.shape(index) != (ctx.shape(3)[-1],)
        ):
            raise ctx.error(
                f"{what} must have one element or one per column of b, got shape {list(ctx.shape(index))}"
            )
    a = centered(ctx, 0, 2, "a")
    b = centered(ctx, 3, 5, "b")
    b_scale = ctx.input(4)
    if int(np.prod(ctx.shape(4))) == 1:
        b_scale = reshape(ctx, b_scale, [])
    accumulator = ctx.emit(graph.MatMulOp, [a, b])
    scale = multiplier(ctx, per_tensor(ctx, 1, "a_scale"), b_scale, per_tensor(ctx, 6, "y_scale"))
    return [requantized(ctx, accumulator, scale, output_zero_point(ctx, 7, 0))]


def integer_conv(ctx: NodeContext, x: SSAValue, w: SSAValue, bias: SSAValue | None) -> SSAValue:
    """The i32 convolution of zero-point-centred operands."""
    if len(ctx.shape(0)) < 3:
        raise ctx.error(
            f"x must have a batch, a channel and spatial dimensions, got shape {list(ctx.shape(0))}"
        )
    return convolution(ctx, x, w, bias)


def weight_axis_shape(ctx: NodeContext, w_index: int) -> list[int]:
    """The shape that broadcasts a per-output-channel [M] parameter over the weights [M, C, k...]."""
    w_shape = ctx.shape(w_index)
    return [w_shape[0]] + [1] * (len(w_shape) - 1)


@converts("ConvInteger", newest=10)
def convert_conv_integer(ctx: NodeContext):
    # x's zero point is per tensor; w's per tensor or per output channel ([M]).
    check_per_tensor(ctx, 2, "x_zero_point")
    x = centered(ctx, 0, 2, "x")
    w = centered(ctx, 1, 3, "w", axis_shape=weight_axis_shape(ctx, 1))
    return [integer_conv(ctx, x, w, None)]


@converts("QLinearConv", newest=10)
def convert_qlinear_conv(ctx: NodeContext):
    # Inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B (i32).
    check_per_tensor(ctx, 2, "x_zero_point")
    x = centered(ctx, 0, 2, "x")
    w = centered(ctx, 3, 5, "w", axis_shape=weight_axis_shape(ctx, 3))
    bias = ctx.optional_input(8)
    if bias is not None and tensor_type(bias).get_element_type() != I32:
        raise ctx.error(f"B must be int32, got {tensor_type(bias)}")
    accumulator = integer_conv(ctx, x, w, bias)
    w_scale = ctx.input(4)
    w_scale_shape = ctx.shape(4)
    if int(np.prod(w_scale_shape)) == 1:
        w_scale = reshape(ctx, w_scale, [])
    elif len(w_scale_shape) == 1:
        # Per output channel: broadcast along axis 1 of the [N, M, spatial...] result.
        w_scale = reshape(ctx, w_scale, [w_scale_shape[0]] + [1] * (len(ctx.shape(0)) - 2))
    else:
        raise ctx.error(
            f"w_scale must be a scalar or 1-D (per output channel), got shape {list(w_scale_shape)}"
        )
    scale = multiplier(ctx, per_tensor(ctx, 1, "x_scale"), w_scale, per_tensor(ctx, 6, "y_scale"))
    return [requantized(ctx, accumulator, scale, output_zero_point(ctx, 7, 0))]


@converts("DynamicQuantizeLinear", newest=11)
def convert_dynamic_quantize_linear(ctx: NodeContext):
    # scale = (max(x, 0) - min(x, 0)) / 255 (1 / 255 when that range is empty), zero point =
    # saturate(round(-min(x, 0) / scale)), y = QuantizeLinear(x, scale, zero point) in uint8.
    x = ctx.input(0)
    if ctx.dtype(0) != np.float32:
        raise ctx.error(f"x has element type {ctx.dtype(0)}; DynamicQuantizeLinear takes float32")
    everything = {"keepdims": graph.bool_attr(False)}
    zero = ctx.scalar_like(0, x)
    high = ctx.emit(graph.MaxOp, [ctx.emit(graph.ReduceMaxOp, [x], everything), zero])
    low = ctx.emit(
        graph.NegOp, [ctx.emit(graph.ReduceMaxOp, [ctx.emit(graph.NegOp, [x])], everything)]
    )
    low = ctx.emit(graph.MinOp, [low, zero])
    empty = ctx.emit(graph.EqualOp, [high, low])
    span = ctx.emit(
        graph.WhereOp, [empty, ctx.scalar_like(1, x), ctx.emit(graph.SubOp, [high, low])]
    )
    scale = ctx.emit(graph.DivOp, [span, ctx.scalar_like(255, x)])
    initial = ctx.emit(graph.SubOp, [zero, ctx.emit(graph.DivOp, [low, scale])])
    zero_u8 = ctx.constant_value(np.zeros((), np.uint8))
    zero_point = ctx.emit(
        graph.QuantizeOp, [initial, ctx.scalar_like(1, x), zero_u8], {"axis": i64_attr(0)}
    )
    y = ctx.emit(graph.QuantizeOp, [x, scale, zero_point], {"axis": i64_attr(0)})
    return [y, scale, zero_point]
