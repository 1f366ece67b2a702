"""Converters for ONNX's signal operators: DFT and STFT, as matmuls with constant DFT matrices, and
the window and mel-filter generators, whose outputs are constants of their (constant) sizes.
"""

from __future__ import annotations

import numpy as np
import onnx
from xdsl.ir import SSAValue

from ziggurat.dialects import graph
from ziggurat.dialects.graph import f32_attr, i64_attr, int_array
from ziggurat.dtypes import to_numpy_dtype
from ziggurat.frontends.onnx.node import NodeContext, element_type_of
from ziggurat.frontends.onnx.ops import converts, reshape, shape_of, slice_along


def _to_length(ctx: NodeContext, value: SSAValue, length: int) -> SSAValue:
    """`value` truncated or zero-padded to `length` along its last axis."""
    size = shape_of(value)[-1]
    if size > length:
        return slice_along(ctx, value, len(shape_of(value)) - 1, 0, length)
    if size < length:
        rank = len(shape_of(value))
        pads = [0] * (2 * rank)
        pads[2 * rank - 1] = length - size
        return ctx.emit(graph.PadOp, [value], {"pads": int_array(pads), "value": f32_attr(0.0)})
    return value


def _matrices(length: int, rows: int, columns: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of 2*pi*n*k/length for n < rows, k < columns."""
    n, k = np.arange(rows)[:, None], np.arange(columns)[None, :]
    angle = 2 * np.pi * ((n * k) % length) / length
    cos, sin = np.cos(angle), np.sin(angle)
    # Angles that are multiples of pi/2 give exact zeros and ones, as the FFT's do.
    cos[np.isclose(cos, 0, atol=1e-12)] = 0
    sin[np.isclose(sin, 0, atol=1e-12)] = 0
    return cos.astype(dtype), sin.astype(dtype)


def _transform(
    ctx: NodeContext, x: SSAValue, axis: int, length: int | None, inverse: bool, onesided: bool
) -> SSAValue:
    """ONNX DFT of `x` (..., 1 or 2) along `axis`: the reference's fft, ifft, rfft (onesided) or irfft
    (inverse and onesided)."""
    shape = shape_of(x)
    rank = len(shape)
    axis = axis % rank
    if axis == rank - 1:
        raise ctx.error(
            "the axis of the transform cannot be the last one (it holds the real and imaginary parts)"
        )
    if shape[-1] not in (1, 2):
        raise ctx.error(f"the last dimension must be 1 (real) or 2 (complex), not {shape[-1]}")
    if length is None:
        length = 2 * (shape[axis] - 1) if inverse and onesided else shape[axis]
    if length < 1:
        raise ctx.error(f"dft_length must be positive, not {length}")
    dtype = ctx.dtype(0)
    # Parts with the signal axis last: (..., N).
    order = [d for d in range(rank - 1) if d != axis] + [axis]
    parts = []
    for index in range(shape[-1]):
        part = reshape(ctx, slice_along(ctx, x, rank - 1, index, index + 1), shape[:-1])
        parts.append(ctx.emit(graph.TransposeOp, [part], {"perm": int_array(order)}))
    real, imaginary = parts[0], parts[1] if len(parts) == 2 else None

    if inverse and onesided:
        # irfft: the first L/2 + 1 coefficients stand for the Hermitian whole; the others count twice.
        bins = length // 2 + 1
        real = _to_length(ctx, real, bins)
        cos, sin = _matrices(length, bins, length, dtype)
        weights = np.full((bins, 1), 2.0)
        weights[0] = 1
        if length % 2 == 0:
            weights[-1] = 1
        cos, sin = (cos * weights / length).astype(dtype), (sin * weights / length).astype(dtype)
        result = ctx.emit(graph.MatMulOp, [real, ctx.constant_value(cos)])
        if imaginary is not None:
            product = ctx.emit(
                graph.MatMulOp, [_to_length(ctx, imaginary, bins), ctx.constant_value(sin)]
            )
            result = ctx.emit(graph.SubOp, [result, product])
        outputs = [result]
    else:
        columns = length // 2 + 1 if onesided and not inverse else length
        cos, sin = _matrices(length, length, columns, dtype)
        if inverse:
            cos, sin = (cos / length).astype(dtype), (sin / length).astype(dtype)
        sign = 1.0 if inverse else -1.0  # e^{+-i theta} = cos theta +- i sin theta
        real = _to_length(ctx, real, length)
        re = ctx.emit(graph.MatMulOp, [real, ctx.constant_value(cos)])
        im = ctx.emit(graph.MatMulOp, [real, ctx.constant_value((sign * sin).astype(dtype))])
        if imaginary is not None:
            imaginary = _to_length(ctx, imaginary, length)
            # (a + ib)(cos +- i sin) = a cos -+ b sin + i(b cos +- a sin)
            re = ctx.emit(
                graph.SubOp,
                [
                    re,
                    ctx.emit(
                        graph.MatMulOp, [imaginary, ctx.constant_value((sign * sin).astype(dtype))]
                    ),
                ],
            )
            im = ctx.emit(
                graph.AddOp, [im, ctx.emit(graph.MatMulOp, [imaginary, ctx.constant_value(cos)])]
            )
        outputs = [re, im]
    # Back to the input's axis order, the parts stacked last.
    inverse_order = [order.index(d) for d in range(rank - 1)]
    stacked = [
        ctx.emit(
            graph.UnsqueezeOp,
            [ctx.emit(graph.TransposeOp, [o], {"perm": int_array(inverse_order)})],
            {"axes": int_array([rank - 1])},
        )
        for o in outputs
    ]
    return (
        stacked[0]
        if len(stacked) == 1
        else ctx.emit(graph.ConcatOp, stacked, {"axis": i64_attr(rank - 1)})
    )


@converts("DFT", newest=20)
def convert_dft(ctx: NodeContext):
    if ctx.opset >= 20:
        axis = ctx.optional_constant(2, "axis")
        axis = -2 if axis is None else int(axis.reshape(-1)[0])
    else:
        axis = ctx.attribute("axis", 1)
    length = ctx.optional_constant(1, "dft_length")
    length = None if length is None else int(length.reshape(-1)[0])
    inverse, onesided = bool(ctx.attribute("inverse", 0)), bool(ctx.attribute("onesided", 0))
    if onesided and not inverse and ctx.shape(0)[-1] != 1:
        raise ctx.error("a one-sided transform takes a real input (last dimension 1)")
    return [_transform(ctx, ctx.input(0), axis, length, inverse, onesided)]


@converts("STFT", newest=17)
def convert_stft(ctx: NodeContext):
    x = ctx.input(0)
    shape = ctx.shape(0)
    if len(shape) != 3:
        raise ctx.error(f"the signal must be (batch, length, 1 or 2), not {list(shape)}")
    step = int(ctx.constant(1, "frame_step").reshape(-1)[0])
    window = ctx.optional_input(2)
    frame_length = ctx.optional_constant(3, "frame_length")
    if frame_length is not None:
        frame_length = int(frame_length.reshape(-1)[0])
    elif window is not None:
        frame_length = ctx.shape(2)[0]
    else:
        frame_length = shape[1]
    if step < 1 or not 1 <= frame_length <= shape[1]:
        raise ctx.error(
            f"frame_step {step} and frame_length {frame_length} do not fit a signal of length {shape[1]}"
        )
    frames = 1 + (shape[1] - frame_length) // step
    # (batch, frames, frame_length, parts)
    pieces = [
        ctx.emit(
            graph.UnsqueezeOp,
            [slice_along(ctx, x, 1, f * step, f * step + frame_length)],
            {"axes": int_array([1])},
        )
        for f in range(frames)
    ]
    framed = pieces[0] if frames == 1 else ctx.emit(graph.ConcatOp, pieces, {"axis": i64_attr(1)})
    if window is not None:
        framed = ctx.emit(graph.MulOp, [framed, reshape(ctx, window, [1, 1, frame_length, 1])])
    onesided = bool(ctx.attribute("onesided", 1))
    if onesided and shape[2] != 1:
        raise ctx.error("a one-sided transform takes a real signal (last dimension 1)")
    return [_transform(ctx, framed, 2, frame_length, False, onesided)]


def _window_size(ctx: NodeContext) -> int:
    size = int(ctx.constant(0, "size").reshape(-1)[0])
    if size < 0:
        raise ctx.error(f"size must not be negative, not {size}")
    return size


def _window(ctx: NodeContext, size: int, values) -> SSAValue:
    """A window of `size` samples from `values(n, period)` (f64), in `output_datatype` (default f32)."""
    dtype = to_numpy_dtype(
        element_type_of(ctx.attribute("output_datatype", onnx.TensorProto.FLOAT), "output_datatype")
    )
    period = size if ctx.attribute("periodic", 1) else size - 1
    n = np.arange(size, dtype=np.float64)
    with np.errstate(
        all="ignore"
    ):  # a symmetric window of one sample divides by zero, as the reference does
        return ctx.constant_value(values(n, period).astype(dtype))


@converts("HannWindow", newest=17)
def convert_hann_window(ctx: NodeContext):
    return [_window(ctx, _window_size(ctx), lambda n, period: np.sin(np.pi * n / period) ** 2)]


@converts("HammingWindow", newest=17)
def convert_hamming_window(ctx: NodeContext):
    alpha = 25 / 46  # the spec's coefficients: alpha = 25/46, beta = 1 - alpha
    return [
        _window(
            ctx,
            _window_size(ctx),
            lambda n, period: alpha - (1 - alpha) * np.cos(2 * np.pi * n / period),
        )
    ]


@converts("BlackmanWindow", newest=17)
def convert_blackman_window(ctx: NodeContext):
    def blackman(n, period):
        return 0.42 - 0.5 * np.cos(2 * np.pi * n / period) + 0.08 * np.cos(4 * np.pi * n / period)

    return [_window(ctx, _window_size(ctx), blackman)]


@converts("MelWeightMatrix", newest=17)
def convert_mel_weight_matrix(ctx: NodeContext):
    """Triangular filters on the mel scale, each rising to 1 at its centre bin and falling to 0."""
    bins, dft_length, sample_rate = (
        int(ctx.constant(i, name).reshape(-1)[0])
        for i, name in enumerate(("num_mel_bins", "dft_length", "sample_rate"))
    )
    low, high = (
        float(ctx.constant(i, name).reshape(-1)[0])
        for i, name in ((3, "lower_edge_hertz"), (4, "upper_edge_hertz"))
    )
    if bins < 1 or dft_length < 1 or sample_rate < 1:
        raise ctx.error("num_mel_bins, dft_length and sample_rate must be positive")

    def to_mel(hertz: float) -> float:
        return 2595 * np.log10(1 + hertz / 700)

    # bins + 2 edges evenly spaced in mel over (bins + 2) steps, as the spec's function body places them.
    step = (to_mel(high) - to_mel(low)) / (bins + 2)
    hertz = 700 * (10 ** ((np.arange(bins + 2) * step + to_mel(low)) / 2595) - 1)
    edges = ((dft_length + 1) * hertz // sample_rate).astype(np.int64)
    matrix = np.zeros((dft_length // 2 + 1, bins))
    for i in range(bins):
        left, centre, right = edges[i : i + 3]
        if centre == left:
            matrix[centre, i] = 1
        else:
            matrix[left : centre + 1, i] = (np.arange(left, centre + 1) - left) / (centre - left)
        if right > centre:
            matrix[centre:right, i] = (right - np.arange(centre, right)) / (right - centre)
    dtype = to_numpy_dtype(
        element_type_of(ctx.attribute("output_datatype", onnx.TensorProto.FLOAT), "output_datatype")
    )
    return [ctx.constant_value(matrix.astype(dtype))]
