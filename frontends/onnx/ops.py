"""Converters from ONNX operators to `graph` ops, one function per operator family, registered in
`CONVERTERS` with `converts`. Where the graph dialect has no op for an operator but existing ops
express it exactly, the converter decomposes it; operators whose attributes moved to inputs across
opsets accept both forms. `MISSING_GRAPH_OPS` names the graph op an unsupported operator waits for.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import ml_dtypes
import numpy as np
import onnx
from xdsl.dialects.builtin import StringAttr, TensorType
from xdsl.ir import SSAValue

from ziggurat.dialects import graph
from ziggurat.dialects.graph import bool_attr, f32_attr, i64_attr, int_array
from ziggurat.dtypes import from_numpy_dtype, to_numpy_dtype
from ziggurat.frontends.onnx.node import NodeContext, element_type_of

Converter = Callable[[NodeContext], Sequence[SSAValue | None]]

CONVERTERS: dict[str, Converter] = {}

MISSING_GRAPH_OPS: dict[str, str] = {
    "MaxRoiPool": "graph.roi_pool",
}


NEWEST_VERSIONS: dict[str, int] = {}
"""Op type -> the newest version (schema `since_version`) of the op that its converter is known to
handle; the importer rejects a node whose opset resolves it to a newer one. Op types left out are
not checked."""


def converts(*op_types: str, newest: int | None = None):
    """Register a converter for `op_types`; `newest` is the newest version of them it handles
    (checked against each version's changes in the ONNX changelog).

    The importer refuses a node whose opset makes it a newer version
    (`NEWEST_VERSIONS`), so that a new onnx release's operator versions are
    reviewed before they are imported.
    """

    def register(function: Converter) -> Converter:
        for op_type in op_types:
            CONVERTERS[op_type] = function
            if newest is None:
                NEWEST_VERSIONS.pop(op_type, None)
            else:
                NEWEST_VERSIONS[op_type] = newest
        return function

    return register


def tensor_type(value: SSAValue) -> TensorType:
    assert isinstance(value.type, TensorType)
    return value.type


def shape_of(value: SSAValue) -> list[int]:
    return list(tensor_type(value).get_shape())


def dtype_of(value: SSAValue) -> np.dtype:
    return to_numpy_dtype(tensor_type(value).get_element_type())


def transpose(ctx: NodeContext, value: SSAValue, perm: Sequence[int]) -> SSAValue:
    return ctx.emit(graph.TransposeOp, [value], {"perm": int_array(perm)})


def slice_along(
    ctx: NodeContext, value: SSAValue, axis: int, start: int, end: int, step: int = 1
) -> SSAValue:
    """`value[start:end:step]` along `axis`."""
    properties = {
        "starts": int_array([start]),
        "ends": int_array([end]),
        "axes": int_array([axis]),
        "steps": int_array([step]),
    }
    return ctx.emit(graph.SliceOp, [value], properties)


def reshape(ctx: NodeContext, value: SSAValue, shape: Sequence[int]) -> SSAValue:
    return ctx.emit_typed(
        graph.ReshapeOp, value, TensorType(tensor_type(value).get_element_type(), shape)
    )


# --------------------------------------------------------------------------- #
# Elementwise
# --------------------------------------------------------------------------- #

UNARY: dict[str, type[graph.GraphOp]] = {
    "Relu": graph.ReluOp,
    "Sigmoid": graph.SigmoidOp,
    "Tanh": graph.TanhOp,
    "Exp": graph.ExpOp,
    "Log": graph.LogOp,
    "Sqrt": graph.SqrtOp,
    "Neg": graph.NegOp,
    "Abs": graph.AbsOp,
    "Erf": graph.ErfOp,
    "Reciprocal": graph.ReciprocalOp,
    "Softplus": graph.SoftplusOp,
    "HardSwish": graph.HardSwishOp,
    "Sin": graph.SinOp,
    "Cos": graph.CosOp,
    "Tan": graph.TanOp,
    "Asin": graph.AsinOp,
    "Acos": graph.AcosOp,
    "Atan": graph.AtanOp,
    "Sinh": graph.SinhOp,
    "Cosh": graph.CoshOp,
    "Asinh": graph.AsinhOp,
    "Acosh": graph.AcoshOp,
    "Atanh": graph.AtanhOp,
    "Floor": graph.FloorOp,
    "Ceil": graph.CeilOp,
    "Round": graph.RoundOp,
    "BitwiseNot": graph.BitwiseNotOp,
}


@converts(*UNARY, newest=22)
def convert_unary(ctx: NodeContext):
    return [ctx.emit(UNARY[ctx.node.op_type], [ctx.input(0)])]


@converts("LeakyRelu", newest=16)
def convert_leaky_relu(ctx: NodeContext):
    return [
        ctx.emit(
            graph.LeakyReluOp, [ctx.input(0)], {"alpha": f32_attr(ctx.attribute("alpha", 0.01))}
        )
    ]


@converts("Elu", newest=22)
def convert_elu(ctx: NodeContext):
    return [ctx.emit(graph.EluOp, [ctx.input(0)], {"alpha": f32_attr(ctx.attribute("alpha", 1.0))})]


@converts("Selu", newest=22)
def convert_selu(ctx: NodeContext):
    # selu = gamma * elu_alpha(x), exactly.
    alpha = ctx.attribute("alpha", 1.67326319217681884765625)
    gamma = ctx.attribute("gamma", 1.05070102214813232421875)
    elu = ctx.emit(graph.EluOp, [ctx.input(0)], {"alpha": f32_attr(alpha)})
    return [ctx.emit(graph.MulOp, [elu, ctx.scalar_like(gamma, elu)])]


@converts("HardSigmoid", newest=22)
def convert_hard_sigmoid(ctx: NodeContext):
    properties = {
        "alpha": f32_attr(ctx.attribute("alpha", 0.2)),
        "beta": f32_attr(ctx.attribute("beta", 0.5)),
    }
    return [ctx.emit(graph.HardSigmoidOp, [ctx.input(0)], properties)]


@converts("Gelu", newest=20)
def convert_gelu(ctx: NodeContext):
    approximate = ctx.attribute("approximate", "none")
    return [ctx.emit(graph.GeluOp, [ctx.input(0)], {"approximate": StringAttr(approximate)})]


@converts("Mish", newest=22)
def convert_mish(ctx: NodeContext):
    x = ctx.input(0)
    return [ctx.emit(graph.MulOp, [x, ctx.emit(graph.TanhOp, [ctx.emit(graph.SoftplusOp, [x])])])]


@converts("Softsign", newest=22)
def convert_softsign(ctx: NodeContext):
    x = ctx.input(0)
    denominator = ctx.emit(graph.AddOp, [ctx.emit(graph.AbsOp, [x]), ctx.scalar_like(1, x)])
    return [ctx.emit(graph.DivOp, [x, denominator])]


@converts("Clip", newest=13)
def convert_clip(ctx: NodeContext):
    x = ctx.input(0)
    if ctx.opset < 11:
        low, high = ctx.attribute("min"), ctx.attribute("max")
    else:
        bounds = [
            ctx.importer.constant_array(ctx.input(i)) if ctx.has_input(i) else None for i in (1, 2)
        ]
        if any(ctx.has_input(i) and bounds[i - 1] is None for i in (1, 2)):
            # Bounds computed at run time: max and min with broadcasting say the same thing.
            result = x
            if ctx.has_input(1):
                result = ctx.emit(graph.MaxOp, [result, ctx.input(1)])
            if ctx.has_input(2):
                result = ctx.emit(graph.MinOp, [result, ctx.input(2)])
            return [result]
        low, high = (None if b is None else float(b.reshape(-1)[0]) for b in bounds)
    properties = {
        "min": None if low is None or low == -np.inf else f32_attr(low),
        "max": None if high is None or high == np.inf else f32_attr(high),
    }
    return [ctx.emit(graph.ClipOp, [x], properties)]


BINARY: dict[str, type[graph.GraphOp]] = {
    "Add": graph.AddOp,
    "Sub": graph.SubOp,
    "Mul": graph.MulOp,
    "Div": graph.DivOp,
    "Pow": graph.PowOp,
}


def legacy_broadcast(ctx: NodeContext, lhs: SSAValue, rhs: SSAValue) -> SSAValue:
    """Opsets before 7 broadcast `rhs` only with `broadcast = 1`, aligned at `axis` rather than at the end."""
    if ctx.opset >= 7 or not ctx.attribute("broadcast", 0):
        return rhs
    lhs_rank, rhs_shape = len(tensor_type(lhs).get_shape()), list(tensor_type(rhs).get_shape())
    axis = ctx.attribute("axis", lhs_rank - len(rhs_shape))
    axis = axis + lhs_rank if axis < 0 else axis
    trailing = lhs_rank - axis - len(rhs_shape)
    return reshape(ctx, rhs, rhs_shape + [1] * trailing) if trailing > 0 else rhs


@converts(*BINARY, newest=15)
def convert_binary(ctx: NodeContext):
    lhs, rhs = ctx.input(0), ctx.input(1)
    rhs = legacy_broadcast(ctx, lhs, rhs)
    if (
        ctx.node.op_type == "Pow"
        and tensor_type(rhs).get_element_type() != tensor_type(lhs).get_element_type()
    ):
        # ONNX lets the exponent's type differ from the base's; graph.pow takes one element type.
        rhs = ctx.emit_typed(
            graph.CastOp,
            rhs,
            TensorType(tensor_type(lhs).get_element_type(), tensor_type(rhs).get_shape()),
        )
    return [ctx.emit(BINARY[ctx.node.op_type], [lhs, rhs])]


VARIADIC: dict[str, type[graph.GraphOp]] = {
    "Sum": graph.AddOp,
    "Mean": graph.AddOp,
    "Max": graph.MaxOp,
    "Min": graph.MinOp,
}


@converts(*VARIADIC, newest=13)
def convert_variadic(ctx: NodeContext):
    operands = [ctx.input(i) for i in range(ctx.input_count) if ctx.has_input(i)]
    result = operands[0]
    for operand in operands[1:]:
        result = ctx.emit(VARIADIC[ctx.node.op_type], [result, operand])
    if ctx.node.op_type == "Mean" and len(operands) > 1:
        result = ctx.emit(graph.DivOp, [result, ctx.scalar_like(len(operands), result)])
    return [result]


@converts("PRelu", newest=16)
def convert_prelu(ctx: NodeContext):
    x, slope = ctx.input(0), ctx.input(1)
    x_shape, slope_shape = ctx.shape(0), ctx.shape(1)
    if len(slope_shape) == 1 and len(x_shape) > 2 and slope_shape[0] == x_shape[1] != x_shape[-1]:
        # Per-channel slopes given as [C] (as opsets before 7 and some exporters write them).
        slope = reshape(ctx, slope, [slope_shape[0]] + [1] * (len(x_shape) - 2))
    return [ctx.emit(graph.PReluOp, [x, slope])]


@converts("Where", newest=16)
def convert_where(ctx: NodeContext):
    return [ctx.emit(graph.WhereOp, [ctx.input(0), ctx.input(1), ctx.input(2)])]


COMPARISONS: dict[str, type[graph.GraphOp]] = {
    "Equal": graph.EqualOp,
    "Greater": graph.GreaterOp,
    "Less": graph.LessOp,
}
ORDERED_OR_EQUAL: dict[str, type[graph.GraphOp]] = {
    "GreaterOrEqual": graph.GreaterOp,
    "LessOrEqual": graph.LessOp,
}


@converts(*COMPARISONS, *ORDERED_OR_EQUAL, newest=19)
def convert_comparison(ctx: NodeContext):
    """Equal, Greater, Less; GreaterOrEqual and LessOrEqual as `where(equal, equal, greater/less)`,
    which keeps NaN unordered (not(less) would call NaN >= x true).
    """
    lhs = ctx.input(0)
    rhs = legacy_broadcast(ctx, lhs, ctx.input(1))
    if ctx.node.op_type in COMPARISONS:
        return [ctx.emit(COMPARISONS[ctx.node.op_type], [lhs, rhs])]
    equal = ctx.emit(graph.EqualOp, [lhs, rhs])
    ordered = ctx.emit(ORDERED_OR_EQUAL[ctx.node.op_type], [lhs, rhs])
    return [ctx.emit(graph.WhereOp, [equal, equal, ordered])]


@converts("Not", newest=1)
def convert_not(ctx: NodeContext):
    return [ctx.emit(graph.NotOp, [ctx.input(0)])]


@converts("Identity", "Dropout", newest=25)
def convert_identity(ctx: NodeContext):
    x = ctx.input(0)
    if ctx.node.op_type == "Dropout" and ctx.has_input(2):
        # Opset 12 made training a run-time input: in training mode a ratio > 0 drops at random.
        training = bool(ctx.constant(2, "training_mode").reshape(-1)[0])
        ratio = ctx.optional_constant(1, "ratio")
        if training and (ratio is None or float(ratio.reshape(-1)[0]) > 0):
            raise ctx.error(
                "training_mode = true drops values at random; the importer handles inference graphs"
            )
    if ctx.node.op_type == "Dropout" and len(ctx.node.output) > 1 and ctx.node.output[1]:
        # Inference: nothing is dropped, so the mask is all true.
        return [x, ctx.constant_value(np.ones(ctx.shape(0), np.bool_))]
    return [x]


@converts("Cast", newest=28)
def convert_cast(ctx: NodeContext):
    element_type = element_type_of(ctx.attribute("to"), f"{ctx.label} (Cast) target")
    return [cast(ctx, ctx.input(0), element_type)]


def cast(ctx: NodeContext, x: SSAValue, element_type) -> SSAValue:
    """Cast and CastLike: `x` in `element_type`; graph.cast saturates float -> fp8 (ONNX's saturate = 1)."""
    to_narrow_float = to_numpy_dtype(element_type).kind == "V"
    from_float = to_numpy_dtype(tensor_type(x).get_element_type()).kind == "f"
    if to_narrow_float and from_float and not ctx.attribute("saturate", 1):
        raise ctx.error(
            "saturate = 0 is not supported: graph.cast saturates out-of-range values when casting to fp8"
        )
    return ctx.emit_typed(graph.CastOp, x, TensorType(element_type, tensor_type(x).get_shape()))


@converts("CastLike", newest=25)
def convert_cast_like(ctx: NodeContext):
    # Cast to the element type of the second input, whose values are not read.
    return [cast(ctx, ctx.input(0), ctx.type(1).get_element_type())]


# --------------------------------------------------------------------------- #
# Contractions, convolution and pooling
# --------------------------------------------------------------------------- #


@converts("MatMul", newest=13)
def convert_matmul(ctx: NodeContext):
    return [ctx.emit(graph.MatMulOp, [ctx.input(0), ctx.input(1)])]


@converts("Gemm", newest=13)
def convert_gemm(ctx: NodeContext):
    properties = {
        "alpha": f32_attr(ctx.attribute("alpha", 1.0)),
        "beta": f32_attr(ctx.attribute("beta", 1.0)),
        "trans_a": bool_attr(bool(ctx.attribute("transA", 0))),
        "trans_b": bool_attr(bool(ctx.attribute("transB", 0))),
    }
    return [ctx.emit(graph.GemmOp, [ctx.input(0), ctx.input(1), ctx.optional_input(2)], properties)]


def window_pads(
    ctx: NodeContext, spatial: Sequence[int], kernel: Sequence[int], strides, dilations
) -> list[int]:
    """ONNX pads ([begins..., ends...]) with `auto_pad` resolved against the input's spatial shape."""
    auto_pad = ctx.attribute("auto_pad", "NOTSET")
    rank = len(spatial)
    if auto_pad in ("NOTSET", ""):
        return list(ctx.attribute("pads", [0] * (2 * rank)))
    if auto_pad == "VALID":
        return [0] * (2 * rank)
    if auto_pad not in ("SAME_UPPER", "SAME_LOWER"):
        raise ctx.error(
            f"auto_pad '{auto_pad}' is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER"
        )
    begins, ends = [], []
    for size, k, stride, dilation in zip(spatial, kernel, strides, dilations):
        out = -(-size // stride)
        total = max((out - 1) * stride + (k - 1) * dilation + 1 - size, 0)
        small, large = total // 2, total - total // 2
        begins.append(small if auto_pad == "SAME_UPPER" else large)
        ends.append(large if auto_pad == "SAME_UPPER" else small)
    return begins + ends


def as_2d(ctx: NodeContext, value: SSAValue, spatial_rank: int) -> SSAValue:
    """A 1-D spatial tensor (N, C, W) as 2-D (N, C, 1, W), so the 2-D ops cover Conv1d and pools on sequences."""
    if spatial_rank == 2:
        return value
    return ctx.emit(graph.UnsqueezeOp, [value], {"axes": int_array([2])})


def spatial_rank(ctx: NodeContext, index: int, most: int = 2) -> int:
    rank = len(ctx.shape(index)) - 2
    if not 1 <= rank <= most:
        raise ctx.error(
            f"{rank}-D {ctx.node.op_type} is not supported: it is imported through the graph dialect's 2-D ops "
            f"(1-D{' and 3-D' if most == 3 else ''} only)"
        )
    return rank


def window_attributes(ctx: NodeContext, rank: int, kernel: Sequence[int]):
    """kernel, strides, pads, dilations in the 2-D form the graph ops take."""
    strides = list(ctx.attribute("strides", [1] * rank))
    dilations = list(ctx.attribute("dilations", [1] * rank))
    spatial = ctx.shape(0)[2:]
    pads = window_pads(ctx, spatial, kernel, strides, dilations)
    if rank == 1:
        return [1, kernel[0]], [1, strides[0]], [0, pads[0], 0, pads[1]], [1, dilations[0]]
    return list(kernel), strides, pads, dilations


def from_2d(ctx: NodeContext, value: SSAValue, rank: int) -> SSAValue:
    if rank == 2:
        return value
    return ctx.emit(graph.SqueezeOp, [value], {"axes": int_array([2])})


@converts("Conv", newest=22)
def convert_conv(ctx: NodeContext):
    return [convolution(ctx, ctx.input(0), ctx.input(1), ctx.optional_input(2))]


def convolution(ctx: NodeContext, x: SSAValue, w: SSAValue, bias: SSAValue | None) -> SSAValue:
    """ONNX Conv of `x` (shaped as the node's input 0) and `w` with the node's attributes; also the
    integer convolutions' (ConvInteger, QLinearConv) once their zero points are subtracted."""
    rank = spatial_rank(ctx, 0, most=3)
    weight_shape = tensor_type(w).get_shape()
    kernel = list(ctx.attribute("kernel_shape", weight_shape[2:]))
    _, strides, pads, dilations = window_attributes(ctx, rank, kernel)
    if rank == 3:
        return convert_conv3d(ctx, strides, pads, dilations, x, w, bias)
    properties = {
        "strides": int_array(strides),
        "pads": int_array(pads),
        "dilations": int_array(dilations),
        "groups": i64_attr(ctx.attribute("group", 1)),
    }
    y = ctx.emit(graph.Conv2dOp, [as_2d(ctx, x, rank), as_2d(ctx, w, rank), bias], properties)
    return from_2d(ctx, y, rank)


def depth_windows(
    ctx: NodeContext,
    x: SSAValue,
    kernel: int,
    stride: int,
    dilation: int,
    pads: tuple[int, int],
    ceil_mode: bool,
    fill,
) -> tuple[list[SSAValue], int]:
    """The `kernel` slices [N, C, OD, ...] of an (N, C, D, ...) input that a window reads along
    axis 2 (depth), one per kernel offset, after padding that axis with `fill`; and OD."""
    depth = tensor_type(x).get_shape()[2]
    begin, end = pads
    padded, span = depth + begin + end, dilation * (kernel - 1) + 1
    if ceil_mode:
        out = -(-(padded - span) // stride) + 1
        # As for the spatial axes: the last window must start inside the input or its begin padding.
        out -= (out - 1) * stride >= depth + begin
    else:
        out = (padded - span) // stride + 1
    end += max((out - 1) * stride + span - padded, 0)
    if begin or end:
        rank = len(tensor_type(x).get_shape())
        depth_pads = [0] * (2 * rank)
        depth_pads[2], depth_pads[rank + 2] = begin, end
        x = ctx.emit(graph.PadOp, [x], {"pads": int_array(depth_pads), "value": f32_attr(fill)})
    return [
        ctx.emit(
            graph.SliceOp,
            [x],
            {
                "starts": int_array([k * dilation]),
                "ends": int_array([k * dilation + (out - 1) * stride + 1]),
                "axes": int_array([2]),
                "steps": int_array([stride]),
            },
        )
        for k in range(kernel)
    ], out


def convert_conv3d(
    ctx: NodeContext, strides, pads, dilations, x: SSAValue, w: SSAValue, bias
) -> SSAValue:
    # A 2-D convolution of every output depth at once: the depth offsets of the kernel join the
    # channels (grouped as the weights are), the output depths join the batch.
    n, channels, _, height, width = tensor_type(x).get_shape()
    out_channels, per_group, kd, kh, kw = tensor_type(w).get_shape()
    groups = ctx.attribute("group", 1)
    slices, depth = depth_windows(
        ctx, x, kd, strides[0], dilations[0], (pads[0], pads[3]), False, 0.0
    )
    stacked = [ctx.emit(graph.UnsqueezeOp, [s], {"axes": int_array([1])}) for s in slices]
    stacked = stacked[0] if kd == 1 else ctx.emit(graph.ConcatOp, stacked, {"axis": i64_attr(1)})
    grouped = reshape(ctx, stacked, [n, kd, groups, per_group, depth, height, width])
    moved = ctx.emit(graph.TransposeOp, [grouped], {"perm": int_array([0, 4, 2, 1, 3, 5, 6])})
    planes = reshape(ctx, moved, [n * depth, groups * kd * per_group, height, width])
    weights = ctx.emit(graph.TransposeOp, [w], {"perm": int_array([0, 2, 1, 3, 4])})
    weights = reshape(ctx, weights, [out_channels, kd * per_group, kh, kw])
    properties = {
        "strides": int_array(strides[1:]),
        "pads": int_array([pads[1], pads[2], pads[4], pads[5]]),
        "dilations": int_array(dilations[1:]),
        "groups": i64_attr(groups),
    }
    y = ctx.emit(graph.Conv2dOp, [planes, weights, bias], properties)
    out_height, out_width = tensor_type(y).get_shape()[2:]
    y = reshape(ctx, y, [n, depth, out_channels, out_height, out_width])
    return ctx.emit(graph.TransposeOp, [y], {"perm": int_array([0, 2, 1, 3, 4])})


INT64_MIN = -(2**63)


def transposed_pads(
    ctx: NodeContext, spatial, kernel, strides, dilations, output_padding
) -> list[int]:
    """ConvTranspose's [begins..., ends...] pads, resolved from `output_shape` or `auto_pad` where given."""
    auto_pad = ctx.attribute("auto_pad", "NOTSET")
    output_shape = ctx.attribute("output_shape")
    rank = len(spatial)
    if output_shape is None and auto_pad in ("NOTSET", ""):
        return list(ctx.attribute("pads", [0] * (2 * rank)))
    if output_shape is None and auto_pad == "VALID":
        return [0] * (2 * rank)
    targets = (
        list(output_shape)[-rank:]
        if output_shape is not None
        else [n * s for n, s in zip(spatial, strides)]
    )
    begins, ends = [], []
    for size, k, stride, dilation, extra, target in zip(
        spatial, kernel, strides, dilations, output_padding, targets
    ):
        total = stride * (size - 1) + extra + (k - 1) * dilation + 1 - target
        if total < 0:
            # An output_shape past the full result: onnxruntime adds the missing positions at the end.
            begins.append(0)
            ends.append(total)
            continue
        small, large = total // 2, total - total // 2
        begins.append(small if auto_pad == "SAME_UPPER" else large)
        ends.append(large if auto_pad == "SAME_UPPER" else small)
    return begins + ends


@converts("ConvTranspose", newest=22)
def convert_conv_transpose(ctx: NodeContext):
    # Exactly a stride-1 conv2d of the input with (stride - 1) zeros between its pixels, padded by
    # dilation * (kernel - 1) - pads, with the weights flipped and their channel roles swapped.
    rank = spatial_rank(ctx, 0)
    x, w = as_2d(ctx, ctx.input(0), rank), as_2d(ctx, ctx.input(1), rank)
    n, channels, height, width = tensor_type(x).get_shape()
    _, out_per_group, kh, kw = tensor_type(w).get_shape()
    groups = ctx.attribute("group", 1)

    def spatial_attribute(name: str, default: int) -> list[int]:
        values = list(ctx.attribute(name, [default] * rank))
        return [default, *values] if rank == 1 else values

    strides, dilations = spatial_attribute("strides", 1), spatial_attribute("dilations", 1)
    output_padding = spatial_attribute("output_padding", 0)
    kernel = [kh, kw]
    pads = transposed_pads(
        ctx,
        [height, width][2 - rank :],
        kernel[2 - rank :],
        strides[2 - rank :],
        dilations[2 - rank :],
        output_padding[2 - rank :],
    )
    if rank == 1:
        pads = [0, pads[0], 0, pads[1]]

    if strides != [1, 1]:
        spread = ctx.emit(graph.UnsqueezeOp, [x], {"axes": int_array([3, 5])})
        zeros = [0, 0, 0, strides[0] - 1, 0, strides[1] - 1]
        spread = ctx.emit(graph.PadOp, [spread], {"pads": int_array([0] * 6 + zeros)})
        x = reshape(ctx, spread, [n, channels, height * strides[0], width * strides[1]])
    begins = [d * (k - 1) - p for d, k, p in zip(dilations, kernel, pads[:2])]
    # The spread input ends with stride - 1 zeros too many per axis.
    ends = [
        d * (k - 1) - p + extra - (s - 1)
        for d, k, p, extra, s in zip(dilations, kernel, pads[2:], output_padding, strides)
    ]
    if any(begins + ends):
        x = ctx.emit(graph.PadOp, [x], {"pads": int_array([0, 0, *begins, 0, 0, *ends])})

    grouped = reshape(ctx, w, [groups, channels // groups, out_per_group, kh, kw])
    swapped = ctx.emit(graph.TransposeOp, [grouped], {"perm": int_array([0, 2, 1, 3, 4])})
    swapped = reshape(ctx, swapped, [groups * out_per_group, channels // groups, kh, kw])
    flip = {
        "starts": int_array([-1, -1]),
        "ends": int_array([INT64_MIN] * 2),
        "axes": int_array([2, 3]),
        "steps": int_array([-1, -1]),
    }
    flipped = ctx.emit(graph.SliceOp, [swapped], flip)
    properties = {"dilations": int_array(dilations), "groups": i64_attr(groups)}
    y = ctx.emit(graph.Conv2dOp, [x, flipped, ctx.optional_input(2)], properties)
    return [from_2d(ctx, y, rank)]


@converts("MaxPool", "AveragePool", newest=22)
def convert_pool(ctx: NodeContext):
    rank = spatial_rank(ctx, 0, most=3)
    with_indices = len(ctx.node.output) > 1 and ctx.node.output[1]
    if with_indices and rank == 3:
        raise ctx.error("the Indices output of a 3-D MaxPool is not supported")
    kernel, strides, pads, dilations = window_attributes(ctx, rank, ctx.attribute("kernel_shape"))
    ceil_mode = bool(ctx.attribute("ceil_mode", 0))
    count_include_pad = bool(ctx.attribute("count_include_pad", 0))
    # AveragePool has no Indices output, and a 3-D MaxPool's was refused above
    if ctx.node.op_type == "AveragePool" and any(d != 1 for d in dilations):
        return [
            dilated_average_pool(
                ctx, kernel, strides, pads, dilations, ceil_mode, count_include_pad
            )
        ]
    if rank == 3:
        return [convert_pool3d(ctx, kernel, strides, pads, dilations, ceil_mode, count_include_pad)]
    x = as_2d(ctx, ctx.input(0), rank)
    y = pool2d(ctx, x, kernel, strides, pads, dilations, ceil_mode, count_include_pad)
    if not with_indices:
        return [from_2d(ctx, y, rank)]
    indices = max_pool_indices(ctx, x, y, kernel, strides, pads, dilations)
    return [from_2d(ctx, y, rank), from_2d(ctx, indices, rank)]


def max_pool_indices(
    ctx: NodeContext, x: SSAValue, y: SSAValue, kernel, strides, pads, dilations
) -> SSAValue:
    """MaxPool's Indices: the flat index in x (row-major, or column-major over (H, W) with
    storage_order = 1) of each window's first largest element, padding skipped, as the ONNX
    reference scans: one comparison per kernel offset, the strictly greater one taking over."""
    n, channels, height, width = tensor_type(x).get_shape()
    out_height, out_width = tensor_type(y).get_shape()[2:]
    top, left = pads[0], pads[1]
    outs = (out_height, out_width)
    spans = [
        (out - 1) * s + (k - 1) * d + 1 for out, s, k, d in zip(outs, strides, kernel, dilations)
    ]
    bottom, right = (
        max(span - begin - size, 0)
        for span, begin, size in zip(spans, (top, left), (height, width))
    )
    padded = ctx.emit(graph.PadOp, [x], {"pads": int_array([0, 0, top, left, 0, 0, bottom, right])})
    rows, columns = (
        np.arange(-top, height + bottom).reshape(-1, 1),
        np.arange(-left, width + right).reshape(1, -1),
    )
    real = (rows >= 0) & (rows < height) & (columns >= 0) & (columns < width)
    grid = (
        rows * width + columns if not ctx.attribute("storage_order", 0) else rows + columns * height
    )
    best = index = None
    best_real = np.zeros((out_height, out_width), np.bool_)
    for kh in range(kernel[0]):
        for kw in range(kernel[1]):
            h0, w0 = kh * dilations[0], kw * dilations[1]
            window = (
                slice(h0, h0 + (out_height - 1) * strides[0] + 1, strides[0]),
                slice(w0, w0 + (out_width - 1) * strides[1] + 1, strides[1]),
            )
            properties = {
                "starts": int_array([h0, w0]),
                "ends": int_array([window[0].stop, window[1].stop]),
                "axes": int_array([2, 3]),
                "steps": int_array(list(strides)),
            }
            values = ctx.emit(graph.SliceOp, [padded], properties)
            candidate = ctx.constant_value(grid[window].astype(np.int64))
            is_real = real[window]
            if best is None:
                best, index, best_real = values, candidate, is_real
                continue
            # Take the candidate where it is real and the best so far is padding or smaller.
            greater = ctx.emit(graph.GreaterOp, [values, best])
            true, false = (
                ctx.constant_value(np.asarray(True)),
                ctx.constant_value(np.asarray(False)),
            )
            take = ctx.emit(graph.WhereOp, [ctx.constant_value(best_real), greater, true])
            take = ctx.emit(graph.WhereOp, [ctx.constant_value(is_real), take, false])
            best = ctx.emit(graph.WhereOp, [take, values, best])
            index = ctx.emit(graph.WhereOp, [take, candidate, index])
            best_real = best_real | is_real
    planes = np.arange(n * channels, dtype=np.int64).reshape(n, channels, 1, 1) * (height * width)
    return ctx.emit(graph.AddOp, [index, ctx.constant_value(planes)])


def dilated_average_pool(
    ctx: NodeContext, kernel, strides, pads, dilations, ceil_mode, count_include_pad
) -> SSAValue:
    # graph.avg_pool has no dilations. A box window is separable: sum the window's strided slices
    # along each spatial axis in turn (moved to axis 2 for `depth_windows`), then divide by the
    # product of the per-axis counts of the positions counted.
    x = ctx.input(0)
    shape = ctx.shape(0)
    rank = len(shape) - 2
    pads = (
        list(pads) if len(kernel) == rank else [pads[1], pads[3]]
    )  # 1-D: window_attributes' 2-D form
    kernel, strides, dilations = (list(v)[-rank:] for v in (kernel, strides, dilations))
    divisor = np.ones([1] * (rank + 2), ctx.dtype(0))
    for i in range(rank):
        axis = 2 + i
        perm = list(range(rank + 2))
        perm[2], perm[axis] = axis, 2
        moved = x if axis == 2 else ctx.emit(graph.TransposeOp, [x], {"perm": int_array(perm)})
        begin, end = pads[i], pads[i + rank]
        slices, out = depth_windows(
            ctx, moved, kernel[i], strides[i], dilations[i], (begin, end), ceil_mode, 0.0
        )
        total = slices[0]
        for window in slices[1:]:
            total = ctx.emit(graph.AddOp, [total, window])
        x = total if axis == 2 else ctx.emit(graph.TransposeOp, [total], {"perm": int_array(perm)})
        size = shape[axis]
        low, high = (0, size + begin + end) if count_include_pad else (begin, begin + size)
        counts = [
            sum(low <= o * strides[i] + k * dilations[i] < high for k in range(kernel[i]))
            for o in range(out)
        ]
        along_axis = [out if d == axis else 1 for d in range(rank + 2)]
        divisor = divisor * np.asarray(counts, divisor.dtype).reshape(along_axis)
    return ctx.emit(graph.DivOp, [x, ctx.constant_value(divisor)])


def pool2d(
    ctx: NodeContext, x: SSAValue, kernel, strides, pads, dilations, ceil_mode, count_include_pad
) -> SSAValue:
    properties = {
        "kernel": int_array(kernel),
        "strides": int_array(strides),
        "pads": int_array(pads),
        "ceil_mode": bool_attr(ceil_mode),
    }
    if ctx.node.op_type == "MaxPool":
        return ctx.emit(graph.MaxPoolOp, [x], properties | {"dilations": int_array(dilations)})
    return ctx.emit(
        graph.AvgPoolOp, [x], properties | {"count_include_pad": bool_attr(count_include_pad)}
    )


def convert_pool3d(
    ctx: NodeContext, kernel, strides, pads, dilations, ceil_mode, count_include_pad
) -> SSAValue:
    # A box window is separable: pool each depth slice over (H, W) with the 2-D op, then take the
    # max (or the sum, divided by the number of depth positions counted) across the slices.
    x = ctx.input(0)
    n, channels, depth, height, width = ctx.shape(0)
    is_max = ctx.node.op_type == "MaxPool"
    dtype = ctx.dtype(0)
    fill = (-np.inf if dtype.kind == "f" else float(np.iinfo(dtype).min)) if is_max else 0.0
    slices, out_depth = depth_windows(
        ctx, x, kernel[0], strides[0], dilations[0], (pads[0], pads[3]), ceil_mode, fill
    )
    planar = [1, 2, 4, 5]  # pads of (H, W) among [d0, h0, w0, d1, h1, w1]
    pads2d = [pads[i] for i in planar]
    pooled = [
        pool2d(
            ctx,
            reshape(ctx, s, [n, channels * out_depth, height, width]),
            kernel[1:],
            strides[1:],
            pads2d,
            dilations[1:],
            ceil_mode,
            count_include_pad,
        )
        for s in slices
    ]
    combined = pooled[0]
    for plane in pooled[1:]:
        combined = ctx.emit(graph.MaxOp if is_max else graph.AddOp, [combined, plane])
    out_height, out_width = tensor_type(combined).get_shape()[2:]
    result = reshape(ctx, combined, [n, channels, out_depth, out_height, out_width])
    if is_max:
        return result
    low, high = (0, depth + pads[0] + pads[3]) if count_include_pad else (pads[0], pads[0] + depth)
    counts = [
        sum(low <= o * strides[0] + k * dilations[0] < high for k in range(kernel[0]))
        for o in range(out_depth)
    ]
    divisor = ctx.constant_value(np.asarray(counts, dtype=dtype).reshape(out_depth, 1, 1))
    return ctx.emit(graph.DivOp, [result, divisor])


@converts("GlobalAveragePool", "GlobalMaxPool", newest=22)
def convert_global_pool(ctx: NodeContext):
    op_type = (
        graph.GlobalAvgPoolOp if ctx.node.op_type == "GlobalAveragePool" else graph.GlobalMaxPoolOp
    )
    return [ctx.emit(op_type, [ctx.input(0)])]


# --------------------------------------------------------------------------- #
# Normalization and softmax
# --------------------------------------------------------------------------- #


@converts("BatchNormalization", newest=15)
def convert_batch_norm(ctx: NodeContext):
    if ctx.attribute("training_mode", 0):
        raise ctx.error("training_mode = 1 is not supported: the importer handles inference graphs")
    if ctx.opset < 9 and ctx.attribute("spatial", 1) != 1:
        raise ctx.error("spatial = 0 (per-activation statistics) is not supported")
    operands = [ctx.input(i) for i in range(5)]
    return [
        ctx.emit(graph.BatchNormOp, operands, {"epsilon": f32_attr(ctx.attribute("epsilon", 1e-5))})
    ]


@converts("LayerNormalization", newest=17)
def convert_layer_norm(ctx: NodeContext):
    if ctx.attribute("stash_type", 1) != onnx.TensorProto.FLOAT:
        raise ctx.error(
            f"stash_type {ctx.attribute('stash_type')} is not supported: graph.layer_norm computes in float"
        )
    axis, epsilon = ctx.attribute("axis", -1), ctx.attribute("epsilon", 1e-5)
    properties = {"axis": i64_attr(axis), "epsilon": f32_attr(epsilon)}
    y = ctx.emit(graph.LayerNormOp, [ctx.input(0), ctx.input(1), ctx.optional_input(2)], properties)
    if not any(ctx.node.output[1:]):
        return [y]
    # Mean and InvStdDev (used, training graphs' outputs) are computed again, in float as stash_type says.
    x = cast_to(ctx, ctx.input(0), from_numpy_dtype(np.float32))
    rank = len(ctx.shape(0))
    reduced = {"axes": int_array(list(range(axis % rank, rank)))}
    mean = ctx.emit(graph.ReduceMeanOp, [x], reduced)
    centered = ctx.emit(graph.SubOp, [x, mean])
    variance = ctx.emit(graph.ReduceMeanOp, [ctx.emit(graph.MulOp, [centered, centered])], reduced)
    deviation = ctx.emit(
        graph.SqrtOp, [ctx.emit(graph.AddOp, [variance, ctx.scalar_like(epsilon, variance)])]
    )
    return [y, mean, ctx.emit(graph.ReciprocalOp, [deviation])]


def normalize(ctx: NodeContext, x: SSAValue, axes: Sequence[int], epsilon: float) -> SSAValue:
    """(x - mean) / sqrt(var + epsilon), the statistics over `axes` (kept as size-1 dimensions)."""
    reduced = {"axes": int_array(axes)}
    centered = ctx.emit(graph.SubOp, [x, ctx.emit(graph.ReduceMeanOp, [x], reduced)])
    variance = ctx.emit(graph.ReduceMeanOp, [ctx.emit(graph.MulOp, [centered, centered])], reduced)
    shifted = ctx.emit(graph.AddOp, [variance, ctx.scalar_like(epsilon, x)])
    return ctx.emit(graph.MulOp, [centered, ctx.emit(graph.RsqrtOp, [shifted])])


def scale_and_shift(ctx: NodeContext, x: SSAValue, shape: Sequence[int]) -> SSAValue:
    """x * scale + bias, the node's inputs 1 and 2 reshaped to `shape`."""
    scaled = ctx.emit(graph.MulOp, [x, reshape(ctx, ctx.input(1), shape)])
    return ctx.emit(graph.AddOp, [scaled, reshape(ctx, ctx.input(2), shape)])


@converts("InstanceNormalization", newest=22)
def convert_instance_norm(ctx: NodeContext):
    # Statistics over the spatial axes of each (n, c).
    rank = len(ctx.shape(0))
    normalized = normalize(ctx, ctx.input(0), list(range(2, rank)), ctx.attribute("epsilon", 1e-5))
    return [scale_and_shift(ctx, normalized, [ctx.shape(1)[0]] + [1] * (rank - 2))]


@converts("GroupNormalization", newest=21)
def convert_group_norm(ctx: NodeContext):
    # Statistics over each group of C / num_groups channels and the spatial axes; scale and bias
    # are per group before opset 21, per channel from it.
    shape = ctx.shape(0)
    groups = ctx.attribute("num_groups")
    n, channels = shape[:2]
    if channels % groups:
        raise ctx.error(f"{channels} channels do not split into {groups} groups")
    grouped = reshape(ctx, ctx.input(0), [n, groups, math.prod(shape[1:]) // groups])
    normalized = normalize(ctx, grouped, [2], ctx.attribute("epsilon", 1e-5))
    if ctx.opset < 21:
        return [reshape(ctx, scale_and_shift(ctx, normalized, [groups, 1]), shape)]
    return [
        scale_and_shift(ctx, reshape(ctx, normalized, shape), [channels] + [1] * (len(shape) - 2))
    ]


@converts("MeanVarianceNormalization", newest=13)
def convert_mean_variance_norm(ctx: NodeContext):
    # ONNX's function body: (x - mean) / (sqrt(mean(x^2) - mean^2) + 1e-9).
    x = ctx.input(0)
    reduced = {"axes": int_array(ctx.attribute("axes", [0, 2, 3]))}
    mean = ctx.emit(graph.ReduceMeanOp, [x], reduced)
    mean_of_squares = ctx.emit(graph.ReduceMeanOp, [ctx.emit(graph.MulOp, [x, x])], reduced)
    variance = ctx.emit(graph.SubOp, [mean_of_squares, ctx.emit(graph.MulOp, [mean, mean])])
    deviation = ctx.emit(
        graph.AddOp, [ctx.emit(graph.SqrtOp, [variance]), ctx.scalar_like(1e-9, x)]
    )
    return [ctx.emit(graph.DivOp, [ctx.emit(graph.SubOp, [x, mean]), deviation])]


@converts("LRN", newest=13)
def convert_lrn(ctx: NodeContext):
    # x / (bias + alpha / size * sum of squares over `size` neighbouring channels) ** beta.
    x = ctx.input(0)
    shape = ctx.shape(0)
    size = ctx.attribute("size")
    alpha, beta, bias = (
        ctx.attribute("alpha", 1e-4),
        ctx.attribute("beta", 0.75),
        ctx.attribute("bias", 1.0),
    )
    squares = ctx.emit(graph.MulOp, [x, x])
    before, after = (size - 1) // 2, size // 2
    pads = [0] * (2 * len(shape))
    pads[1], pads[1 + len(shape)] = before, after
    padded = ctx.emit(graph.PadOp, [squares], {"pads": int_array(pads)})
    total = None
    for offset in range(size):
        window = ctx.emit(
            graph.SliceOp,
            [padded],
            {
                "starts": int_array([offset]),
                "ends": int_array([offset + shape[1]]),
                "axes": int_array([1]),
            },
        )
        total = window if total is None else ctx.emit(graph.AddOp, [total, window])
    scaled = ctx.emit(graph.MulOp, [total, ctx.scalar_like(alpha / size, x)])
    base = ctx.emit(graph.AddOp, [scaled, ctx.scalar_like(bias, x)])
    return [ctx.emit(graph.DivOp, [x, ctx.emit(graph.PowOp, [base, ctx.scalar_like(beta, x)])])]


@converts("Softmax", "LogSoftmax", newest=13)
def convert_softmax(ctx: NodeContext):
    op_type = graph.SoftmaxOp if ctx.node.op_type == "Softmax" else graph.LogSoftmaxOp
    x = ctx.input(0)
    shape = ctx.shape(0)
    rank = len(shape)
    if ctx.opset >= 13:
        return [ctx.emit(op_type, [x], {"axis": i64_attr(ctx.attribute("axis", -1))})]
    # Before opset 13 the input is seen as 2-D, [prod(shape[:axis]), prod(shape[axis:])].
    axis = ctx.attribute("axis", 1)
    axis = axis + rank if axis < 0 else axis
    if axis == rank - 1:
        return [ctx.emit(op_type, [x], {"axis": i64_attr(-1)})]
    flat = reshape(ctx, x, [math.prod(shape[:axis]), math.prod(shape[axis:])])
    return [reshape(ctx, ctx.emit(op_type, [flat], {"axis": i64_attr(1)}), shape)]


# --------------------------------------------------------------------------- #
# Reductions
# --------------------------------------------------------------------------- #

REDUCTIONS: dict[str, tuple[type[graph.GraphOp], int]] = {
    # op type -> (graph op, first opset whose axes are an input)
    "ReduceSum": (graph.ReduceSumOp, 13),
    "ReduceMean": (graph.ReduceMeanOp, 18),
    "ReduceMax": (graph.ReduceMaxOp, 18),
    "ReduceProd": (graph.ReduceProdOp, 18),
    # min(x) = -max(-x); the norms and log-sums reduce an elementwise op's result or take one of theirs.
    "ReduceMin": (graph.ReduceMaxOp, 18),
    "ReduceL1": (graph.ReduceSumOp, 18),
    "ReduceL2": (graph.ReduceSumOp, 18),
    "ReduceSumSquare": (graph.ReduceSumOp, 18),
    "ReduceLogSum": (graph.ReduceSumOp, 18),
    "ReduceLogSumExp": (graph.ReduceSumOp, 18),
}


@converts(*REDUCTIONS, newest=28)
def convert_reduce(ctx: NodeContext):
    op_type, since = REDUCTIONS[ctx.node.op_type]
    axes = ctx.ints_from_input_or_attribute(1, "axes", since, "axes")
    x = ctx.input(0)
    if not axes and ctx.attribute("noop_with_empty_axes", 0):
        return [x]
    keepdims = bool(ctx.attribute("keepdims", 1))
    properties = {"axes": int_array(axes) if axes else None, "keepdims": bool_attr(keepdims)}
    dtype = ctx.dtype(0)
    if dtype == np.bool_ and ctx.node.op_type in ("ReduceMax", "ReduceMin"):
        # Boolean max is any(x), min is not any(not x): counts of true elements (empty sets give false, true).
        counted = x if ctx.node.op_type == "ReduceMax" else ctx.emit(graph.NotOp, [x])
        count = ctx.emit(
            graph.ReduceSumOp, [cast_to(ctx, counted, from_numpy_dtype(np.int64))], properties
        )
        compare = graph.GreaterOp if ctx.node.op_type == "ReduceMax" else graph.EqualOp
        return [ctx.emit(compare, [count, ctx.scalar_like(0, count)])]
    if ctx.node.op_type == "ReduceMin" and dtype.kind in "iu":
        # min(x) = c - max(c - x) with c = -1 (bitwise not) for signed, the largest value for unsigned
        # integers: order-reversing without the overflow of -x.
        c = ctx.scalar_like(-1 if dtype.kind == "i" else np.iinfo(dtype).max, x)
        peak = ctx.emit(graph.ReduceMaxOp, [ctx.emit(graph.SubOp, [c, x])], properties)
        return [ctx.emit(graph.SubOp, [c, peak])]
    reduced = {
        "ReduceMin": lambda: ctx.emit(graph.NegOp, [x]),
        "ReduceL1": lambda: ctx.emit(graph.AbsOp, [x]),
        "ReduceL2": lambda: ctx.emit(graph.MulOp, [x, x]),
        "ReduceSumSquare": lambda: ctx.emit(graph.MulOp, [x, x]),
    }.get(ctx.node.op_type, lambda: x)()
    if ctx.node.op_type == "ReduceLogSumExp":
        # max + log(sum(exp(x - max))): no overflow, as onnxruntime computes it, with the max of
        # the finite elements (0 if none): an infinity would make x - max NaN.
        if dtype.kind in "iub":
            raise ctx.error(f"{dtype} input is not supported: graph.exp and graph.log take floats")
        infinite = ctx.emit(graph.EqualOp, [ctx.emit(graph.AbsOp, [x]), ctx.scalar_like(np.inf, x)])
        finite = ctx.emit(graph.WhereOp, [infinite, ctx.scalar_like(-np.inf, x), x])
        peak = ctx.emit(graph.ReduceMaxOp, [finite], properties | {"keepdims": bool_attr(True)})
        none = ctx.emit(graph.EqualOp, [peak, ctx.scalar_like(-np.inf, x)])
        peak = ctx.emit(graph.WhereOp, [none, ctx.scalar_like(0, x), peak])
        exponentials = ctx.emit(graph.ExpOp, [ctx.emit(graph.SubOp, [x, peak])])
        total = ctx.emit(graph.ReduceSumOp, [exponentials], properties)
        peak = peak if keepdims else reshape(ctx, peak, tensor_type(total).get_shape())
        return [ctx.emit(graph.AddOp, [ctx.emit(graph.LogOp, [total]), peak])]
    result = ctx.emit(op_type, [reduced], properties)
    if ctx.node.op_type == "ReduceMin":
        return [ctx.emit(graph.NegOp, [result])]
    if ctx.node.op_type == "ReduceL2":
        return [ctx.emit(graph.SqrtOp, [result])]
    if ctx.node.op_type == "ReduceLogSum":
        return [ctx.emit(graph.LogOp, [result])]
    return [result]


@converts("ArgMax", newest=13)
def convert_arg_max(ctx: NodeContext):
    properties = {
        "axis": i64_attr(ctx.attribute("axis", 0)),
        "keepdims": bool_attr(bool(ctx.attribute("keepdims", 1))),
        "select_last_index": bool_attr(bool(ctx.attribute("select_last_index", 0))),
    }
    return [ctx.emit(graph.ArgMaxOp, [ctx.input(0)], properties)]


CUMULATIVE: dict[str, type[graph.GraphOp]] = {"CumSum": graph.CumSumOp, "CumProd": graph.CumProdOp}


@converts("CumSum", newest=14)
def convert_cumulative(ctx: NodeContext):
    axis = ctx.constant(1, "the axis").reshape(-1)
    if axis.size != 1:
        raise ctx.error(f"the axis must be a single integer, got {axis.size} values")
    properties = {
        "axis": i64_attr(int(axis[0])),
        "exclusive": bool_attr(bool(ctx.attribute("exclusive", 0))),
        "reverse": bool_attr(bool(ctx.attribute("reverse", 0))),
    }
    return [ctx.emit(CUMULATIVE[ctx.node.op_type], [ctx.input(0)], properties)]


# --------------------------------------------------------------------------- #
# Shapes and data movement
# --------------------------------------------------------------------------- #


@converts("Reshape", newest=25)
def convert_reshape(ctx: NodeContext):
    target = ctx.attribute("shape") if ctx.opset < 5 else list(ctx.constant(1, "the target shape"))
    shape = ctx.shape(0)
    allow_zero = ctx.attribute("allowzero", 0)
    resolved = [shape[i] if d == 0 and not allow_zero else int(d) for i, d in enumerate(target)]
    if resolved.count(-1) > 1:
        raise ctx.error(f"target shape {list(target)} has more than one -1")
    if -1 in resolved:
        known = math.prod(d for d in resolved if d != -1)
        if known == 0 or math.prod(shape) % known:
            raise ctx.error(f"cannot reshape {list(shape)} to {list(target)}")
        resolved[resolved.index(-1)] = math.prod(shape) // known
    return [reshape(ctx, ctx.input(0), resolved)]


@converts("Flatten", newest=25)
def convert_flatten(ctx: NodeContext):
    return [ctx.emit(graph.FlattenOp, [ctx.input(0)], {"axis": i64_attr(ctx.attribute("axis", 1))})]


@converts("Squeeze", newest=25)
def convert_squeeze(ctx: NodeContext):
    axes = ctx.ints_from_input_or_attribute(1, "axes", 13, "axes")
    return [
        ctx.emit(
            graph.SqueezeOp, [ctx.input(0)], {"axes": None if axes is None else int_array(axes)}
        )
    ]


@converts("Unsqueeze", newest=25)
def convert_unsqueeze(ctx: NodeContext):
    axes = ctx.ints_from_input_or_attribute(1, "axes", 13, "axes")
    if axes is None:
        raise ctx.error("axes are required")
    return [ctx.emit(graph.UnsqueezeOp, [ctx.input(0)], {"axes": int_array(axes)})]


@converts("Transpose", newest=25)
def convert_transpose(ctx: NodeContext):
    perm = ctx.attribute("perm", list(reversed(range(len(ctx.shape(0))))))
    return [ctx.emit(graph.TransposeOp, [ctx.input(0)], {"perm": int_array(perm)})]


@converts("Concat", newest=13)
def convert_concat(ctx: NodeContext):
    operands = [ctx.input(i) for i in range(ctx.input_count) if ctx.has_input(i)]
    return [ctx.emit(graph.ConcatOp, operands, {"axis": i64_attr(ctx.attribute("axis", 1))})]


@converts("Split", newest=18)
def convert_split(ctx: NodeContext):
    shape = ctx.shape(0)
    axis = ctx.attribute("axis", 0)
    axis = axis + len(shape) if axis < 0 else axis
    sizes = ctx.ints_from_input_or_attribute(1, "split", 13, "the split sizes")
    outputs = len(ctx.node.output)
    if sizes is None:
        # Even parts; from opset 18 `num_outputs` parts with a smaller last one.
        parts = ctx.attribute("num_outputs", outputs)
        size = -(-shape[axis] // parts)
        sizes = [min(size, shape[axis] - i * size) for i in range(parts)]
    if sum(sizes) != shape[axis] or len(sizes) != outputs:
        raise ctx.error(
            f"split sizes {sizes} do not cut dimension {axis} ({shape[axis]}) into {outputs} outputs"
        )
    results, start = [], 0
    for size in sizes:
        properties = {
            "starts": int_array([start]),
            "ends": int_array([start + size]),
            "axes": int_array([axis]),
        }
        results.append(ctx.emit(graph.SliceOp, [ctx.input(0)], properties))
        start += size
    return results


@converts("Slice", newest=13)
def convert_slice(ctx: NodeContext):
    if ctx.opset < 10:
        starts, ends, axes, steps = (
            ctx.attribute("starts"),
            ctx.attribute("ends"),
            ctx.attribute("axes"),
            None,
        )
    else:
        starts, ends, axes, steps = (
            None if values is None else [int(v) for v in values.reshape(-1)]
            for values in (
                ctx.constant(1, "starts"),
                ctx.constant(2, "ends"),
                ctx.optional_constant(3, "axes"),
                ctx.optional_constant(4, "steps"),
            )
        )
    properties = {
        "starts": int_array(starts),
        "ends": int_array(ends),
        "axes": None if axes is None else int_array(axes),
        "steps": None if steps is None else int_array(steps),
    }
    return [ctx.emit(graph.SliceOp, [ctx.input(0)], properties)]


@converts("Pad", newest=25)
def convert_pad(ctx: NodeContext):
    rank = len(ctx.shape(0))
    mode = ctx.attribute("mode", "constant")
    if ctx.opset < 11:
        pads = list(ctx.attribute("pads", ctx.attribute("paddings", [])))
        value = ctx.attribute("value", 0.0)
    else:
        pads = [int(v) for v in ctx.constant(1, "pads").reshape(-1)]
        constant = ctx.optional_constant(2, "the padding value")
        value = 0.0 if constant is None or constant.size == 0 else float(constant.reshape(-1)[0])
        axes = ctx.optional_constant(3, "axes")
        if axes is not None:
            # Pads given for some axes only (opset 18): spread them over all.
            full = [0] * (2 * rank)
            for position, axis in enumerate(int(a) % rank for a in axes.reshape(-1)):
                full[axis], full[axis + rank] = pads[position], pads[position + len(axes)]
            pads = full
    if mode == "wrap":
        # Opset 19's wrap: output position i of an axis of size n reads (i - begin) mod n, a gather.
        if any(p < 0 for p in pads):
            raise ctx.error(f"negative pads {pads} (cropping) with mode 'wrap' are not supported")
        result = ctx.input(0)
        for axis, size in enumerate(ctx.shape(0)):
            begin, end = pads[axis], pads[axis + rank]
            if begin or end:
                sources = np.mod(np.arange(-begin, size + end, dtype=np.int64), size)
                result = ctx.emit(
                    graph.GatherOp, [result, ctx.constant_value(sources)], {"axis": i64_attr(axis)}
                )
        return [result]
    if mode not in graph.PadOp.MODES:
        raise ctx.error(
            f"mode '{mode}' is not supported (graph.pad has {', '.join(graph.PadOp.MODES)}, and wrap)"
        )
    properties = {"pads": int_array(pads), "mode": StringAttr(mode), "value": f32_attr(value)}
    return [ctx.emit(graph.PadOp, [ctx.input(0)], properties)]


@converts("Gather", newest=13)
def convert_gather(ctx: NodeContext):
    return [
        ctx.emit(
            graph.GatherOp,
            [ctx.input(0), ctx.input(1)],
            {"axis": i64_attr(ctx.attribute("axis", 0))},
        )
    ]


@converts("Expand", newest=13)
def convert_expand(ctx: NodeContext):
    target = [int(d) for d in ctx.constant(1, "the target shape")]
    shape = ctx.shape(0)
    result_shape = list(np.broadcast_shapes(tuple(shape), tuple(target)))
    return [
        ctx.emit_typed(
            graph.BroadcastToOp,
            ctx.input(0),
            TensorType(ctx.type(0).get_element_type(), result_shape),
        )
    ]


@converts("Tile", newest=13)
def convert_tile(ctx: NodeContext):
    repeats = [int(r) for r in ctx.constant(1, "repeats")]
    result = ctx.input(0)
    for axis, count in enumerate(repeats):
        if count != 1:
            result = ctx.emit(graph.ConcatOp, [result] * count, {"axis": i64_attr(axis)})
    return [result]


@converts("DepthToSpace", "SpaceToDepth", newest=28)
def convert_depth_space(ctx: NodeContext):
    n, c, h, w = ctx.shape(0)
    b = ctx.attribute("blocksize")
    x = ctx.input(0)
    mode = ctx.attribute("mode", "DCR")
    if mode not in ("DCR", "CRD"):
        raise ctx.error(f"mode '{mode}' is not one of DCR, CRD")
    if ctx.node.op_type == "SpaceToDepth":
        # `mode` from opset 28: the blocks go before (DCR) or after (CRD) the channels.
        blocks = reshape(ctx, x, [n, c, h // b, b, w // b, b])
        perm = [0, 3, 5, 1, 2, 4] if mode == "DCR" else [0, 1, 3, 5, 2, 4]
        moved = ctx.emit(graph.TransposeOp, [blocks], {"perm": int_array(perm)})
        return [reshape(ctx, moved, [n, c * b * b, h // b, w // b])]
    if mode == "DCR":
        blocks, perm = reshape(ctx, x, [n, b, b, c // (b * b), h, w]), [0, 3, 4, 1, 5, 2]
    else:
        blocks, perm = reshape(ctx, x, [n, c // (b * b), b, b, h, w]), [0, 1, 4, 2, 5, 3]
    moved = ctx.emit(graph.TransposeOp, [blocks], {"perm": int_array(perm)})
    return [reshape(ctx, moved, [n, c // (b * b), h * b, w * b])]


# --------------------------------------------------------------------------- #
# Constants and shapes known at import time
# --------------------------------------------------------------------------- #


@converts("Constant", newest=25)
def convert_constant(ctx: NodeContext):
    for name, dtype in (
        ("value", None),
        ("value_float", np.float32),
        ("value_floats", np.float32),
        ("value_int", np.int64),
        ("value_ints", np.int64),
    ):
        if ctx.has_attribute(name):
            value = ctx.attribute(name)
            return [ctx.constant_value(np.asarray(value, dtype=dtype))]
    raise ctx.error(
        "only dense tensor, float(s) and int(s) values are supported (not sparse or strings)"
    )


@converts("ConstantOfShape", newest=25)
def convert_constant_of_shape(ctx: NodeContext):
    shape = [int(d) for d in ctx.constant(0, "the shape")]
    value = ctx.attribute("value")
    fill = np.zeros((), np.float32) if value is None else value.reshape(())
    return [ctx.constant_value(np.full(shape, fill, dtype=fill.dtype))]


@converts("Shape", newest=25)
def convert_shape(ctx: NodeContext):
    shape = ctx.shape(0)
    start, end = ctx.attribute("start", 0), ctx.attribute("end", len(shape))
    return [ctx.constant_value(np.asarray(shape[slice(start, end)], dtype=np.int64))]


@converts("Size", newest=25)
def convert_size(ctx: NodeContext):
    return [ctx.constant_value(np.asarray(math.prod(ctx.shape(0)), dtype=np.int64))]


@converts("Range", newest=27)
def convert_range(ctx: NodeContext):
    start, limit, delta = (
        ctx.constant(i, name).reshape(()) for i, name in enumerate(("start", "limit", "delta"))
    )
    dtype = start.dtype
    if ctx.opset >= 27 and dtype in (np.float16, ml_dtypes.bfloat16):
        # From opset 27 a 16-bit range is computed in `stash_type` (float or double) and rounded once.
        stashes = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.DOUBLE: np.float64}
        stash = stashes.get(ctx.attribute("stash_type", 1))
        if stash is None:
            raise ctx.error(
                f"stash_type {ctx.attribute('stash_type')} is not FLOAT (1) or DOUBLE (11)"
            )
        values = np.arange(start.astype(stash), float(limit), float(delta), dtype=stash)
        return [ctx.constant_value(values.astype(dtype))]
    return [ctx.constant_value(np.arange(start, limit, delta, dtype=dtype))]


# --------------------------------------------------------------------------- #
# Quantization
# --------------------------------------------------------------------------- #


@converts("QuantizeLinear", "DequantizeLinear", newest=28)
def convert_quantization(ctx: NodeContext):
    x, scale = ctx.input(0), ctx.input(1)
    zero_point = ctx.optional_input(2)
    if zero_point is None:
        if ctx.node.op_type == "QuantizeLinear":
            # uint8 unless opset 21's output_dtype says otherwise.
            target = ctx.attribute("output_dtype", 0) or onnx.TensorProto.UINT8
            dtype = to_numpy_dtype(element_type_of(target, f"{ctx.label} output_dtype"))
            zero_point = ctx.constant_value(np.zeros(ctx.shape(1), dtype=dtype))
        else:
            zero_point = ctx.constant_value(np.zeros(ctx.shape(1), dtype=ctx.dtype(0)))
    properties = {"axis": i64_attr(ctx.attribute("axis", 1))}
    shape = ctx.shape(0)
    if block_size := ctx.attribute("block_size", 0):
        # Blocked (opset 21): every element has its own parameters, so x is one channel per element.
        axis = ctx.attribute("axis", 1) % len(shape)
        scale, zero_point = (
            per_element(ctx, p, shape, axis, block_size) for p in (scale, zero_point)
        )
        x, properties = reshape(ctx, x, [math.prod(shape)]), {"axis": i64_attr(0)}
    if ctx.node.op_type == "DequantizeLinear":
        # From opset 23 `output_dtype` sets the result type, which is also the multiplication's precision.
        if ctx.attribute("output_dtype", 0):
            target = element_type_of(ctx.attribute("output_dtype"), f"{ctx.label} output_dtype")
            scale = cast_to(ctx, scale, target)
        return [
            reshape(ctx, ctx.emit(graph.DequantizeOp, [x, scale, zero_point], properties), shape)
        ]
    # From opset 23 x and the scale may differ in type: the division is in `precision` if given, else
    # in the scale's type.
    precision = ctx.attribute("precision", 0)
    if precision:
        target = element_type_of(precision, f"{ctx.label} precision")
    else:
        target = tensor_type(scale).get_element_type()
    x, scale = cast_to(ctx, x, target), cast_to(ctx, scale, target)
    return [reshape(ctx, ctx.emit(graph.QuantizeOp, [x, scale, zero_point], properties), shape)]


def per_element(
    ctx: NodeContext, parameter: SSAValue, shape: Sequence[int], axis: int, block_size: int
) -> SSAValue:
    """A blocked quantization parameter (x's shape, with ceil(n / block_size) blocks along `axis`) repeated
    over its blocks and flattened: one entry per element of x."""
    blocks = list(tensor_type(parameter).get_shape())
    expected = [*shape[:axis], -(-shape[axis] // block_size), *shape[axis + 1 :]]
    if blocks != expected:
        raise ctx.error(
            f"a blocked scale or zero point of {shape} must have shape {expected}, not {blocks}"
        )
    spread = ctx.emit(graph.UnsqueezeOp, [parameter], {"axes": int_array([axis + 1])})
    spread_shape = [*blocks[: axis + 1], block_size, *blocks[axis + 1 :]]
    element_type = tensor_type(parameter).get_element_type()
    spread = ctx.emit_typed(graph.BroadcastToOp, spread, TensorType(element_type, spread_shape))
    spread = reshape(ctx, spread, [*blocks[:axis], blocks[axis] * block_size, *blocks[axis + 1 :]])
    if blocks[axis] * block_size != shape[axis]:
        kept = {
            "starts": int_array([0]),
            "ends": int_array([shape[axis]]),
            "axes": int_array([axis]),
        }
        spread = ctx.emit(graph.SliceOp, [spread], kept)
    return reshape(ctx, spread, [math.prod(shape)])


def cast_to(ctx: NodeContext, value: SSAValue, element_type) -> SSAValue:
    """`value` in `element_type` (itself if it has that type already)."""
    if tensor_type(value).get_element_type() == element_type:
        return value
    return ctx.emit_typed(
        graph.CastOp, value, TensorType(element_type, tensor_type(value).get_shape())
    )


# The operator families kept in modules of their own register their converters on import.
from ziggurat.frontends.onnx import (  # noqa: E402, F401
    ops_bits,
    ops_control,
    ops_indexing,
    ops_losses,
    ops_math,
    ops_quantized,
    ops_recurrent,
    ops_signal,
    ops_stateful,
    ops_transformer,
)
