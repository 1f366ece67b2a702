"""Converters for ONNX's indexing and data movement operators (gathers, scatters, triangles, top-k,
resizing, einsum, ...): TopK is `graph.top_k`, the others exact decompositions into graph ops, mostly
one `graph.gather` from the flattened data at positions computed from the indices.
"""

from __future__ import annotations

import math
import string
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import TensorType, f32, i64
from xdsl.ir import SSAValue

from ziggurat.dialects import graph
from ziggurat.dialects.graph import bool_attr, i64_attr, int_array, lowest_value
from ziggurat.dtypes import to_numpy_dtype
from ziggurat.frontends.onnx.node import (
    FOLD_AT_IMPORT_MAX_ELEMENTS,
    NodeContext,
    element_type_of,
    location_name,
)
from ziggurat.frontends.onnx.ops import cast_to, converts, dtype_of, reshape, shape_of, tensor_type


def strides_of(shape: Sequence[int]) -> list[int]:
    """Row-major element strides."""
    return [math.prod(shape[i + 1 :]) for i in range(len(shape))]


def wrapped(ctx: NodeContext, index: SSAValue, sizes) -> SSAValue:
    """i64 `index` with negative entries counted from the end of `sizes` (broadcast with it)."""
    index = cast_to(ctx, index, i64)
    sizes = ctx.constant_value(np.asarray(sizes, dtype=np.int64))
    negative = ctx.emit(graph.LessOp, [index, ctx.scalar_like(0, index)])
    return ctx.emit(graph.WhereOp, [negative, ctx.emit(graph.AddOp, [index, sizes]), index])


def flat_positions(
    ctx: NodeContext, shape: Sequence[int], index: SSAValue, axis: int, out_shape
) -> SSAValue:
    """Flat positions in a tensor of `shape` of the elements that take `index` (i64, in range,
    broadcast to `out_shape`) along `axis` and their own position in `out_shape` along the others."""
    strides = strides_of(shape)
    grid = np.indices(out_shape, dtype=np.int64)
    base = sum(
        (grid[d] * strides[d] for d in range(len(shape)) if d != axis),
        np.zeros(out_shape, np.int64),
    )
    scaled = ctx.emit(graph.MulOp, [index, ctx.scalar_like(strides[axis], index)])
    return ctx.emit(graph.AddOp, [scaled, ctx.constant_value(base)])


def flat_gather(ctx: NodeContext, data: SSAValue, positions: SSAValue) -> SSAValue:
    """`data.reshape(-1)[positions]`."""
    flat = reshape(ctx, data, [math.prod(shape_of(data))])
    return ctx.emit(graph.GatherOp, [flat, positions], {"axis": i64_attr(0)})


def zeros_like(ctx: NodeContext, value: SSAValue) -> SSAValue:
    return ctx.scalar_like(0, value)


SCATTER_REDUCTIONS = ("none", "add", "mul", "max", "min")


def scatter(
    ctx: NodeContext, data: SSAValue, index: SSAValue, updates: SSAValue, axis: int, reduction: str
) -> SSAValue:
    """`data` with `updates` written along `axis` (or combined by `reduction`) at `index` (i64, in range,
    broadcast to the updates' shape, which is the data's but along `axis`). Each data element reduces
    over the m updates of its line: a comparison of its position with their indices, [..., n, m, ...]."""
    if reduction not in SCATTER_REDUCTIONS:
        raise ctx.error(f"reduction '{reduction}' is not one of {', '.join(SCATTER_REDUCTIONS)}")
    if reduction != "none" and dtype_of(data) == np.bool_:
        raise ctx.error(f"reduction '{reduction}' of bool tensors is not supported")
    shape, update_shape = shape_of(data), shape_of(updates)
    rank, n, m = len(shape), shape[axis], update_shape[axis]

    def lined(value: SSAValue) -> SSAValue:
        """`value` with its axis moved to a new axis after it (the writes' axis)."""
        dims = list(shape_of(value))
        return reshape(ctx, value, [*dims[:axis], 1, dims[axis], *dims[axis + 1 :]])

    iota = ctx.constant_value(
        np.arange(n, dtype=np.int64).reshape([1] * axis + [n, 1] + [1] * (rank - axis - 1))
    )
    hits = ctx.emit(graph.EqualOp, [iota, lined(index)])
    along = {"axes": int_array([axis + 1]), "keepdims": bool_attr(False)}
    row = lined(updates)

    def selected(fill, values=row):
        return ctx.emit(graph.WhereOp, [hits, values, ctx.scalar_like(fill, values)])

    if reduction == "add":
        return ctx.emit(graph.AddOp, [data, ctx.emit(graph.ReduceSumOp, [selected(0)], along)])
    if reduction == "mul":
        return ctx.emit(graph.MulOp, [data, ctx.emit(graph.ReduceProdOp, [selected(1)], along)])
    # The last update written to each element, -1 where none is.
    order = ctx.constant_value(
        np.arange(m, dtype=np.int64).reshape([1] * (axis + 1) + [m] + [1] * (rank - axis - 1))
    )
    last = ctx.emit(
        graph.ReduceMaxOp,
        [ctx.emit(graph.WhereOp, [hits, order, ctx.scalar_like(-1, order)])],
        along,
    )
    written = ctx.emit(graph.GreaterOp, [last, ctx.scalar_like(-1, last)])
    lowest = lowest_value(graph.compute_dtype(dtype_of(data)))
    if reduction == "none":
        first = ctx.emit(graph.MaxOp, [last, ctx.scalar_like(0, last)])
        value = flat_gather(ctx, updates, flat_positions(ctx, update_shape, first, axis, shape))
    elif reduction == "max":
        value = ctx.emit(
            graph.MaxOp, [data, ctx.emit(graph.ReduceMaxOp, [selected(lowest)], along)]
        )
    else:
        negated = ctx.emit(graph.NegOp, [row])
        best = ctx.emit(
            graph.NegOp, [ctx.emit(graph.ReduceMaxOp, [selected(lowest, negated)], along)]
        )
        value = ctx.emit(graph.MinOp, [data, best])
    return ctx.emit(graph.WhereOp, [written, value, data])


# --------------------------------------------------------------------------- #
# Gathers and scatters
# --------------------------------------------------------------------------- #


def element_axis(ctx: NodeContext, rank: int) -> int:
    axis = ctx.attribute("axis", 0)
    if not -rank <= axis < rank:
        raise ctx.error(f"axis {axis} is out of range for rank {rank}")
    return axis % rank


def element_indices(
    ctx: NodeContext, shape: Sequence[int]
) -> tuple[int, tuple[int, ...], SSAValue]:
    """The axis, the shape of the indices (input #1, of the data's rank) and the indices wrapped to it."""
    axis = element_axis(ctx, len(shape))
    index_shape = ctx.shape(1)
    if len(index_shape) != len(shape):
        raise ctx.error(
            f"indices of rank {len(index_shape)} do not match data of rank {len(shape)}"
        )
    return axis, index_shape, wrapped(ctx, ctx.input(1), shape[axis])


@converts("GatherElements", newest=13)
def convert_gather_elements(ctx: NodeContext):
    data, shape = ctx.input(0), ctx.shape(0)
    axis, index_shape, index = element_indices(ctx, shape)
    return [flat_gather(ctx, data, flat_positions(ctx, shape, index, axis, index_shape))]


@converts("ScatterElements", newest=18)
@converts("Scatter", newest=11)
def convert_scatter_elements(ctx: NodeContext):
    """Each data position along the axis is compared with the indices written to its line, and the
    selected updates reduced over the writes (`scatter`); with no reduction the last write wins, as
    onnxruntime applies the updates in order.
    """
    data, shape = ctx.input(0), ctx.shape(0)
    axis, index_shape, index = element_indices(ctx, shape)
    updates = ctx.input(2)
    if ctx.shape(2) != index_shape:
        raise ctx.error(
            f"updates of shape {list(ctx.shape(2))} do not match indices of shape {list(index_shape)}"
        )
    reduction = ctx.attribute("reduction", "none")
    if any(i > d for a, (i, d) in enumerate(zip(index_shape, shape)) if a != axis):
        raise ctx.error(
            f"indices of shape {list(index_shape)} are larger than the data {list(shape)} off axis {axis}"
        )
    if any(i != d for a, (i, d) in enumerate(zip(index_shape, shape)) if a != axis):
        # Indices smaller than the data off the axis update the leading block only.
        block = [d if a == axis else i for a, (i, d) in enumerate(zip(index_shape, shape))]
        properties = {"starts": int_array([0] * len(shape)), "ends": int_array(block)}
        part = scatter(
            ctx, ctx.emit(graph.SliceOp, [data], properties), index, updates, axis, reduction
        )
        grown = ctx.emit(
            graph.PadOp,
            [part],
            {"pads": int_array([0] * len(shape) + [d - b for d, b in zip(shape, block)])},
        )
        inside = np.zeros(shape, np.bool_)
        inside[tuple(slice(0, b) for b in block)] = True
        return [ctx.emit(graph.WhereOp, [ctx.constant_value(inside), grown, data])]
    return [scatter(ctx, data, index, updates, axis, reduction)]


def nd_positions(
    ctx: NodeContext, shape: Sequence[int], indices: SSAValue, batch_dims: int
) -> SSAValue:
    """Flat positions in `shape[:batch_dims + q]` of GatherND/ScatterND's index tuples ([..., q])."""
    index_shape = shape_of(indices)
    q = index_shape[-1] if index_shape else 0
    if not index_shape or not 1 <= q <= len(shape) - batch_dims:
        raise ctx.error(
            f"the last dimension of indices {list(index_shape)} must be in [1, {len(shape) - batch_dims}]"
        )
    if list(index_shape[:batch_dims]) != list(shape[:batch_dims]):
        raise ctx.error(
            f"the batch dimensions of indices {list(index_shape)} and data {list(shape)} differ"
        )
    inner = list(shape[batch_dims : batch_dims + q])
    index = wrapped(ctx, indices, inner)
    strides = ctx.constant_value(np.asarray(strides_of(inner), dtype=np.int64))
    properties = {"axes": int_array([-1]), "keepdims": bool_attr(False)}
    positions = ctx.emit(graph.ReduceSumOp, [ctx.emit(graph.MulOp, [index, strides])], properties)
    if batch_dims:
        batch = index_shape[:batch_dims]
        base = np.arange(math.prod(batch), dtype=np.int64) * math.prod(inner)
        base = base.reshape(*batch, *[1] * (len(index_shape) - 1 - batch_dims))
        positions = ctx.emit(graph.AddOp, [positions, ctx.constant_value(base)])
    return positions


@converts("GatherND", newest=13)
def convert_gather_nd(ctx: NodeContext):
    data, shape = ctx.input(0), ctx.shape(0)
    batch_dims = ctx.attribute("batch_dims", 0)
    positions = nd_positions(ctx, shape, ctx.input(1), batch_dims)
    q = ctx.shape(1)[-1]
    rows = reshape(ctx, data, [math.prod(shape[: batch_dims + q]), *shape[batch_dims + q :]])
    return [ctx.emit(graph.GatherOp, [rows, positions], {"axis": i64_attr(0)})]


@converts("ScatterND", newest=18)
def convert_scatter_nd(ctx: NodeContext):
    data, shape = ctx.input(0), ctx.shape(0)
    positions = nd_positions(ctx, shape, ctx.input(1), 0)
    q = ctx.shape(1)[-1]
    # Each index tuple writes a row of shape[q:]: a scatter along the first axis of [rows, row size].
    rows, size, count = math.prod(shape[:q]), math.prod(shape[q:]), math.prod(shape_of(positions))
    expected = [*shape_of(positions), *shape[q:]]
    if list(ctx.shape(2)) != expected:
        raise ctx.error(
            f"updates of shape {list(ctx.shape(2))} do not match the indices (expected {expected})"
        )
    updates = reshape(ctx, ctx.input(2), [count, size])
    index = reshape(ctx, positions, [count, 1])
    result = scatter(
        ctx, reshape(ctx, data, [rows, size]), index, updates, 0, ctx.attribute("reduction", "none")
    )
    return [reshape(ctx, result, shape)]


@converts("MaxUnpool", newest=22)
def convert_max_unpool(ctx: NodeContext):
    x, shape = ctx.input(0), ctx.shape(0)
    spatial = len(shape) - 2
    kernel = ctx.attribute("kernel_shape")
    strides = ctx.attribute("strides", [1] * spatial)
    pads = ctx.attribute("pads", [0] * (2 * spatial))
    inferred = [
        *shape[:2],
        *(
            (shape[2 + i] - 1) * strides[i] - pads[i] - pads[i + spatial] + kernel[i]
            for i in range(spatial)
        ),
    ]
    zeros = ctx.constant_value(np.zeros(inferred, dtype=ctx.dtype(0)))
    # The indices are flat positions in the whole output (not only in their own plane).
    total = math.prod(inferred)
    flat_index = reshape(ctx, cast_to(ctx, ctx.input(1), i64), [math.prod(shape)])
    written = scatter(
        ctx,
        reshape(ctx, zeros, [total]),
        flat_index,
        reshape(ctx, x, [math.prod(shape)]),
        0,
        "none",
    )
    result = reshape(ctx, written, inferred)
    if ctx.has_input(2):
        # The indices address the inferred shape; a larger output_shape pads it at the end (ONNX's reference).
        out_shape = [int(d) for d in ctx.constant(2, "output_shape").reshape(-1)]
        if len(out_shape) != len(inferred) or any(o < i for o, i in zip(out_shape, inferred)):
            raise ctx.error(
                f"output_shape {out_shape} is smaller than the unpooled shape {inferred}"
            )
        ends = [o - i for o, i in zip(out_shape, inferred)]
        if any(ends):
            result = ctx.emit(
                graph.PadOp, [result], {"pads": int_array([0] * len(inferred) + ends)}
            )
    return [result]


@converts("ReverseSequence", newest=28)
def convert_reverse_sequence(ctx: NodeContext):
    x, shape = ctx.input(0), ctx.shape(0)
    time_axis, batch_axis = ctx.attribute("time_axis", 0), ctx.attribute("batch_axis", 1)
    if {time_axis, batch_axis} != {0, 1}:
        raise ctx.error(f"time_axis {time_axis} and batch_axis {batch_axis} must be 0 and 1")
    steps, batch = shape[time_axis], shape[batch_axis]
    grid = [1] * len(shape)
    grid[batch_axis] = batch
    lengths = reshape(ctx, cast_to(ctx, ctx.input(1), i64), grid)
    grid = [1] * len(shape)
    grid[time_axis] = steps
    time = ctx.constant_value(np.arange(steps, dtype=np.int64).reshape(grid))
    # Within its sequence, step t reads step length - 1 - t; past it, itself.
    reversed_ = ctx.emit(
        graph.SubOp, [ctx.emit(graph.SubOp, [lengths, ctx.scalar_like(1, lengths)]), time]
    )
    inside = ctx.emit(graph.LessOp, [time, lengths])
    source = ctx.emit(graph.WhereOp, [inside, reversed_, time])
    return [flat_gather(ctx, x, flat_positions(ctx, shape, source, time_axis, shape))]


@converts("Compress", newest=28)
def convert_compress(ctx: NodeContext):
    x, shape = ctx.input(0), ctx.shape(0)
    condition = ctx.constant(1, "the condition").reshape(-1).astype(bool)
    if ctx.has_attribute("axis"):
        axis = element_axis(ctx, len(shape))
    else:
        x, axis, shape = reshape(ctx, x, [math.prod(shape)]), 0, (math.prod(shape),)
    if condition.size > shape[axis]:
        raise ctx.error(
            f"the condition has {condition.size} entries, more than dimension {axis} ({shape[axis]})"
        )
    selected = ctx.constant_value(np.flatnonzero(condition).astype(np.int64))
    return [ctx.emit(graph.GatherOp, [x, selected], {"axis": i64_attr(axis)})]


@converts("TopK", newest=24)
def convert_top_k(ctx: NodeContext):
    if ctx.opset < 10:
        k = ctx.attribute("k")
    else:
        given = ctx.constant(1, "k").reshape(-1)
        if given.size != 1:
            raise ctx.error(f"k must be a single integer, got {given.size} values")
        k = int(given[0])
    # sorted = 0 leaves the order unspecified: the sorted order is one.
    properties = {
        "k": i64_attr(k),
        "axis": i64_attr(ctx.attribute("axis", -1)),
        "largest": bool_attr(bool(ctx.attribute("largest", 1))),
    }
    op = graph.TopKOp.build_inferred([ctx.input(0)], properties)
    op.verify_()
    x = ctx.importer.constant_array(ctx.input(0))
    if x is not None and x.size <= FOLD_AT_IMPORT_MAX_ELEMENTS:
        return [ctx.constant_value(array) for array in op.evaluate(x)]
    ctx.importer.insert(op, location_name(ctx.node))
    return list(op.results)


@converts("Col2Im", newest=18)
def convert_col2im(ctx: NodeContext):
    """Each kernel offset's blocks spread by the strides (pad + reshape), placed by a pad and added."""
    x, shape = ctx.input(0), ctx.shape(0)
    image = [int(d) for d in ctx.constant(1, "image_shape").reshape(-1)]
    block = [int(d) for d in ctx.constant(2, "block_shape").reshape(-1)]
    spatial = len(image)
    dilations = ctx.attribute("dilations", [1] * spatial)
    pads = ctx.attribute("pads", [0] * (2 * spatial))
    strides = ctx.attribute("strides", [1] * spatial)
    kernel = math.prod(block)
    if len(shape) != 3 or len(block) != spatial or shape[1] % kernel:
        raise ctx.error(
            f"input {list(shape)} is not [N, C * {kernel}, L] for blocks {block} of image {image}"
        )
    blocks = [
        (image[i] + pads[i] + pads[i + spatial] - dilations[i] * (block[i] - 1) - 1) // strides[i]
        + 1
        for i in range(spatial)
    ]
    if math.prod(blocks) != shape[2] or min(blocks) < 1:
        raise ctx.error(
            f"{shape[2]} blocks do not tile image {image} ({blocks} with these pads, strides, dilations)"
        )
    n, channels = shape[0], shape[1] // kernel
    columns = reshape(ctx, x, [n, channels, kernel, *blocks])
    total = None
    # Each kernel offset's blocks are spread by the strides and placed at the offset: a pad.
    for k, offsets in enumerate(np.ndindex(*block)):
        begins = [offsets[i] * dilations[i] - pads[i] for i in range(spatial)]
        spread = [(blocks[i] - 1) * strides[i] + 1 for i in range(spatial)]
        if any(b >= image[i] or b + spread[i] <= 0 for i, b in enumerate(begins)):
            continue
        properties = {"starts": int_array([k]), "ends": int_array([k + 1]), "axes": int_array([2])}
        part = reshape(ctx, ctx.emit(graph.SliceOp, [columns], properties), [n, channels, *blocks])
        for i in range(spatial):
            part = spread_out(ctx, part, 2 + i, strides[i])
        ends = [image[i] - begins[i] - spread[i] for i in range(spatial)]
        part = ctx.emit(graph.PadOp, [part], {"pads": int_array([0, 0, *begins, 0, 0, *ends])})
        total = part if total is None else ctx.emit(graph.AddOp, [total, part])
    if total is None:
        return [ctx.constant_value(np.zeros([n, channels, *image], dtype=ctx.dtype(0)))]
    return [total]


def spread_out(ctx: NodeContext, value: SSAValue, axis: int, stride: int) -> SSAValue:
    """`stride - 1` zeros between neighbours along `axis`."""
    if stride == 1:
        return value
    shape = list(shape_of(value))
    size = shape[axis]
    pads = [0] * (2 * (len(shape) + 1))
    pads[len(shape) + 1 + axis + 1] = stride - 1
    split = reshape(ctx, value, [*shape[: axis + 1], 1, *shape[axis + 1 :]])
    padded = ctx.emit(graph.PadOp, [split], {"pads": int_array(pads)})
    merged = reshape(ctx, padded, [*shape[:axis], size * stride, *shape[axis + 1 :]])
    properties = {
        "starts": int_array([0]),
        "ends": int_array([(size - 1) * stride + 1]),
        "axes": int_array([axis]),
    }
    return ctx.emit(graph.SliceOp, [merged], properties)


@converts("AffineGrid", newest=20)
def convert_affine_grid(ctx: NodeContext):
    theta, theta_shape = ctx.input(0), ctx.shape(0)
    size = [int(d) for d in ctx.constant(1, "size").reshape(-1)]
    spatial = size[2:]
    if len(spatial) not in (2, 3) or list(theta_shape) != [size[0], len(spatial), len(spatial) + 1]:
        raise ctx.error(f"theta {list(theta_shape)} does not fit size {size} (2-D or 3-D)")
    align = bool(ctx.attribute("align_corners", 0))

    def normalized(length: int) -> np.ndarray:
        if align:
            return -1 + 2 * np.arange(length) / (length - 1) if length > 1 else np.full(1, -1.0)
        return -1 + (2 * np.arange(length) + 1) / length

    # Homogeneous coordinates (x, y[, z], 1) of every output position, x along the last dimension.
    axes = np.meshgrid(*(normalized(d) for d in spatial), indexing="ij")
    base = np.stack([*reversed(axes), np.ones(spatial)], axis=-1).reshape(1, -1, len(spatial) + 1)
    moved = ctx.emit(graph.TransposeOp, [theta], {"perm": int_array([0, 2, 1])})
    grid = ctx.emit(graph.MatMulOp, [ctx.constant_value(base.astype(ctx.dtype(0))), moved])
    return [reshape(ctx, grid, [size[0], *spatial, len(spatial)])]


GRID_SAMPLE_TAPS = {"nearest": [0], "linear": [0, 1], "cubic": [-1, 0, 1, 2]}


def reflected(ctx: NodeContext, x: SSAValue, low: float, high: float) -> SSAValue:
    """x folded back into [low, high] by reflections at the borders (GridSample's reflection padding)."""
    width = high - low

    def fold(distance: SSAValue, near: float, far: float, sign: int) -> SSAValue:
        # distance = n * width + rest: an even n leaves rest past `near`, an odd one rest before `far`.
        turns = ctx.emit(
            graph.FloorOp, [ctx.emit(graph.DivOp, [distance, ctx.scalar_like(width, x)])]
        )
        rest = ctx.emit(
            graph.SubOp, [distance, ctx.emit(graph.MulOp, [turns, ctx.scalar_like(width, x)])]
        )
        half = ctx.emit(graph.MulOp, [turns, ctx.scalar_like(0.5, x)])
        odd = ctx.emit(
            graph.GreaterOp,
            [
                ctx.emit(graph.SubOp, [half, ctx.emit(graph.FloorOp, [half])]),
                ctx.scalar_like(0.25, x),
            ],
        )
        from_near = ctx.emit(
            graph.AddOp if sign > 0 else graph.SubOp, [ctx.scalar_like(near, x), rest]
        )
        from_far = ctx.emit(
            graph.SubOp if sign > 0 else graph.AddOp, [ctx.scalar_like(far, x), rest]
        )
        return ctx.emit(graph.WhereOp, [odd, from_far, from_near])

    below = fold(ctx.emit(graph.SubOp, [ctx.scalar_like(low, x), x]), low, high, 1)
    above = fold(ctx.emit(graph.SubOp, [x, ctx.scalar_like(high, x)]), high, low, -1)
    result = ctx.emit(
        graph.WhereOp, [ctx.emit(graph.GreaterOp, [x, ctx.scalar_like(high, x)]), above, x]
    )
    return ctx.emit(
        graph.WhereOp, [ctx.emit(graph.LessOp, [x, ctx.scalar_like(low, x)]), below, result]
    )


def cubic_weights(ctx: NodeContext, t: SSAValue, a: float = -0.75) -> list[SSAValue]:
    """Keys' cubic convolution weights of the taps at -1, 0, 1, 2 for a fraction t in [0, 1)."""

    def near(d: SSAValue) -> SSAValue:  # |d| <= 1: ((a + 2) d - (a + 3)) d d + 1
        scaled = ctx.emit(graph.MulOp, [ctx.scalar_like(a + 2, d), d])
        inner = ctx.emit(graph.SubOp, [scaled, ctx.scalar_like(a + 3, d)])
        squared = ctx.emit(graph.MulOp, [ctx.emit(graph.MulOp, [inner, d]), d])
        return ctx.emit(graph.AddOp, [squared, ctx.scalar_like(1, d)])

    def far(d: SSAValue) -> SSAValue:  # 1 < |d| < 2: ((a d - 5 a) d + 8 a) d - 4 a
        inner = ctx.emit(
            graph.SubOp,
            [ctx.emit(graph.MulOp, [ctx.scalar_like(a, d), d]), ctx.scalar_like(5 * a, d)],
        )
        inner = ctx.emit(
            graph.AddOp, [ctx.emit(graph.MulOp, [inner, d]), ctx.scalar_like(8 * a, d)]
        )
        return ctx.emit(graph.SubOp, [ctx.emit(graph.MulOp, [inner, d]), ctx.scalar_like(4 * a, d)])

    one = ctx.scalar_like(1, t)
    rest = ctx.emit(graph.SubOp, [one, t])
    return [
        far(ctx.emit(graph.AddOp, [t, one])),
        near(t),
        near(rest),
        far(ctx.emit(graph.AddOp, [rest, one])),
    ]


@converts("GridSample", newest=22)
def convert_grid_sample(ctx: NodeContext):
    """A `gather` of each output point's taps from the flattened input, the taps and their weights computed
    from the grid at run time as Resize's tables are at import.
    """
    x, shape = ctx.input(0), ctx.shape(0)
    grid, grid_shape = ctx.input(1), ctx.shape(1)
    spatial = len(shape) - 2
    mode = ctx.attribute("mode", "linear")
    mode = {"bilinear": "linear", "bicubic": "cubic"}.get(mode, mode)  # GridSample-16's names
    padding = ctx.attribute("padding_mode", "zeros")
    align = bool(ctx.attribute("align_corners", 0))
    if mode not in GRID_SAMPLE_TAPS:
        raise ctx.error(f"mode '{mode}' is not nearest, linear or cubic")
    if padding not in ("zeros", "border", "reflection"):
        raise ctx.error(f"padding_mode '{padding}' is not zeros, border or reflection")
    if (
        spatial < 1
        or len(grid_shape) != spatial + 2
        or grid_shape[0] != shape[0]
        or grid_shape[-1] != spatial
    ):
        raise ctx.error(f"grid {list(grid_shape)} does not fit input {list(shape)}")
    if dtype_of(x).kind not in "fV" or dtype_of(grid).kind not in "fV":
        raise ctx.error("the input and the grid must be floating-point")
    n, channels, sizes = shape[0], shape[1], shape[2:]
    out = list(grid_shape[1:-1])
    taps = GRID_SAMPLE_TAPS[mode]
    strides = strides_of(sizes)
    tap_axes = len(out) + 1
    positions = valid = weights = None
    for i, size in enumerate(sizes):
        # The grid's last dimension lists x (the innermost input dimension) first.
        properties = {
            "starts": int_array([spatial - 1 - i]),
            "ends": int_array([spatial - i]),
            "axes": int_array([-1]),
        }
        coordinate = ctx.emit(graph.SliceOp, [grid], properties)
        one = ctx.scalar_like(1, coordinate)
        shifted = ctx.emit(graph.AddOp, [coordinate, one])
        if align:
            low, high = 0.0, size - 1.0
            c = ctx.emit(
                graph.MulOp,
                [
                    ctx.emit(graph.DivOp, [shifted, ctx.scalar_like(2, one)]),
                    ctx.scalar_like(size - 1, one),
                ],
            )
        else:
            low, high = -0.5, size - 0.5
            scaled = ctx.emit(
                graph.SubOp, [ctx.emit(graph.MulOp, [shifted, ctx.scalar_like(size, one)]), one]
            )
            c = ctx.emit(graph.DivOp, [scaled, ctx.scalar_like(2, one)])
        if mode == "nearest":
            c = ctx.emit(graph.RoundOp, [c])
        if padding == "border":
            outside = ctx.emit(
                graph.WhereOp,
                [
                    ctx.emit(graph.LessOp, [c, ctx.scalar_like(low, c)]),
                    ctx.constant_value(np.ones((), np.bool_)),
                    ctx.emit(graph.GreaterOp, [c, ctx.scalar_like(high, c)]),
                ],
            )
            clipped = ctx.emit(
                graph.MinOp,
                [ctx.emit(graph.MaxOp, [c, ctx.scalar_like(0, c)]), ctx.scalar_like(size - 1, c)],
            )
            c = ctx.emit(graph.WhereOp, [outside, clipped, c])
        elif padding == "reflection":
            if high == low:
                raise ctx.error(
                    f"reflection padding of a dimension of size {size} with align_corners"
                )
            c = reflected(ctx, c, low, high)
        start = ctx.emit(graph.FloorOp, [c])
        tap_shape = [n, *out, *[1] * spatial]
        tap_shape[tap_axes + i] = len(taps)
        offsets = ctx.constant_value(np.asarray(taps, dtype=dtype_of(grid)))
        where = reshape(ctx, ctx.emit(graph.AddOp, [start, offsets]), tap_shape)
        if mode != "nearest":
            t = ctx.emit(graph.SubOp, [c, start])
            parts = (
                [ctx.emit(graph.SubOp, [one, t]), t] if mode == "linear" else cubic_weights(ctx, t)
            )
            tap_weights = reshape(
                ctx, ctx.emit(graph.ConcatOp, parts, {"axis": i64_attr(-1)}), tap_shape
            )
            weights = (
                tap_weights if weights is None else ctx.emit(graph.MulOp, [weights, tap_weights])
            )
        inside = None
        if padding == "zeros":
            inside = ctx.emit(
                graph.WhereOp,
                [
                    ctx.emit(graph.LessOp, [where, ctx.scalar_like(0, where)]),
                    ctx.constant_value(np.zeros((), np.bool_)),
                    ctx.emit(graph.LessOp, [where, ctx.scalar_like(size, where)]),
                ],
            )
        elif padding == "reflection":
            where = reflected(ctx, where, low, high)
        clamped = ctx.emit(
            graph.MinOp,
            [
                ctx.emit(graph.MaxOp, [where, ctx.scalar_like(0, where)]),
                ctx.scalar_like(size - 1, where),
            ],
        )
        # Floor of a non-negative value: the reflection's truncation toward zero.
        index = cast_to(ctx, ctx.emit(graph.FloorOp, [clamped]), i64)
        term = ctx.emit(graph.MulOp, [index, ctx.scalar_like(strides[i], index)])
        positions = term if positions is None else ctx.emit(graph.AddOp, [positions, term])
        if inside is not None:
            valid = inside if valid is None else ctx.emit(graph.WhereOp, [valid, inside, valid])
    # One gather of the flattened input: (batch, channel) offsets plus the spatial positions.
    plane = math.prod(sizes)
    base = (np.arange(n * channels, dtype=np.int64) * plane).reshape(
        n, channels, *[1] * (len(out) + spatial)
    )
    everywhere = reshape(ctx, positions, [n, 1, *shape_of(positions)[1:]])
    values = flat_gather(ctx, x, ctx.emit(graph.AddOp, [everywhere, ctx.constant_value(base)]))
    if valid is not None:
        inside = reshape(ctx, valid, [n, 1, *shape_of(valid)[1:]])
        values = ctx.emit(graph.WhereOp, [inside, values, zeros_like(ctx, x)])
    if weights is not None:
        if dtype_of(grid) != dtype_of(x):
            weights = ctx.emit_typed(
                graph.CastOp,
                weights,
                TensorType(tensor_type(x).get_element_type(), shape_of(weights)),
            )
        values = ctx.emit(
            graph.MulOp, [values, reshape(ctx, weights, [n, 1, *shape_of(weights)[1:]])]
        )
    summed = {
        "axes": int_array(list(range(2 + len(out), 2 + len(out) + spatial))),
        "keepdims": bool_attr(False),
    }
    return [ctx.emit(graph.ReduceSumOp, [values], summed)]


# --------------------------------------------------------------------------- #
# Triangles, identities, crops
# --------------------------------------------------------------------------- #


@converts("Trilu", newest=14)
def convert_trilu(ctx: NodeContext):
    x, shape = ctx.input(0), ctx.shape(0)
    if len(shape) < 2:
        raise ctx.error(f"the input must have rank 2 or more, got {list(shape)}")
    rows, columns = shape[-2:]
    upper = bool(ctx.attribute("upper", 1))
    offset = np.arange(columns, dtype=np.int64)[None, :] - np.arange(rows, dtype=np.int64)[:, None]
    k = ctx.importer.constant_array(ctx.input(1)) if ctx.has_input(1) else np.zeros((), np.int64)
    zero = zeros_like(ctx, x)
    if k is not None:
        k = int(k.reshape(-1)[0])
        keep = offset >= k if upper else offset <= k
        return [ctx.emit(graph.WhereOp, [ctx.constant_value(keep), x, zero])]
    # k known only at run time: compare the offsets with it.
    k = reshape(ctx, cast_to(ctx, ctx.input(1), i64), [])
    offsets = ctx.constant_value(offset)
    drop = ctx.emit(graph.LessOp if upper else graph.GreaterOp, [offsets, k])
    return [ctx.emit(graph.WhereOp, [drop, zero, x])]


@converts("OneHot", newest=28)
def convert_one_hot(ctx: NodeContext):
    """where(index == position along `axis`, on, off); an index outside [-depth, depth) matches nowhere."""
    indices, values = ctx.input(0), ctx.input(2)
    depth = float(ctx.constant(1, "depth").reshape(-1)[0])
    if depth != int(depth) or depth < 1:
        raise ctx.error(f"depth must be a positive integer, got {depth}")
    depth = int(depth)
    if ctx.shape(2) != (2,):
        raise ctx.error(f"values must hold [off, on], got shape {list(ctx.shape(2))}")
    rank = len(ctx.shape(0)) + 1
    axis = ctx.attribute("axis", -1)
    if not -rank <= axis < rank:
        raise ctx.error(f"axis {axis} is out of range for a rank-{rank} output")
    axis %= rank
    # Indices of any numeric type count as integers (a float index truncates, as the reference casts it).
    index = ctx.emit(graph.UnsqueezeOp, [wrapped(ctx, indices, depth)], {"axes": int_array([axis])})
    positions = np.arange(depth, dtype=np.int64).reshape(
        [depth if d == axis else 1 for d in range(rank)]
    )
    hot = ctx.emit(graph.EqualOp, [index, ctx.constant_value(positions)])
    off = reshape(
        ctx,
        ctx.emit(graph.SliceOp, [values], {"starts": int_array([0]), "ends": int_array([1])}),
        [],
    )
    on = reshape(
        ctx,
        ctx.emit(graph.SliceOp, [values], {"starts": int_array([1]), "ends": int_array([2])}),
        [],
    )
    return [ctx.emit(graph.WhereOp, [hot, on, off])]


@converts("EyeLike", newest=22)
def convert_eye_like(ctx: NodeContext):
    shape = ctx.shape(0)
    if len(shape) != 2:
        raise ctx.error(f"the input must be 2-D, got {list(shape)}")
    dtype = ctx.dtype(0)
    if ctx.has_attribute("dtype"):
        dtype = to_numpy_dtype(
            element_type_of(ctx.attribute("dtype"), f"{ctx.label} (EyeLike) dtype")
        )
    return [ctx.constant_value(np.eye(*shape, k=ctx.attribute("k", 0), dtype=dtype))]


@converts("CenterCropPad", newest=18)
def convert_center_crop_pad(ctx: NodeContext):
    x, shape = ctx.input(0), ctx.shape(0)
    rank = len(shape)
    target = [int(d) for d in ctx.constant(1, "the shape").reshape(-1)]
    axes = [a % rank for a in ctx.attribute("axes", list(range(rank)))]
    if len(axes) != len(target):
        raise ctx.error(f"{len(target)} target sizes for {len(axes)} axes")
    starts, ends, crop_axes = [], [], []
    pads = [0] * (2 * rank)
    for axis, size in zip(axes, target):
        if size < shape[axis]:
            start = (shape[axis] - size) // 2
            starts.append(start)
            ends.append(start + size)
            crop_axes.append(axis)
        elif size > shape[axis]:
            pads[axis] = (size - shape[axis]) // 2
            pads[axis + rank] = size - shape[axis] - pads[axis]
    if crop_axes:
        properties = {
            "starts": int_array(starts),
            "ends": int_array(ends),
            "axes": int_array(crop_axes),
        }
        x = ctx.emit(graph.SliceOp, [x], properties)
    if any(pads):
        x = ctx.emit(graph.PadOp, [x], {"pads": int_array(pads)})
    return [x]


# --------------------------------------------------------------------------- #
# Values known at import time
# --------------------------------------------------------------------------- #


def constant_input(ctx: NodeContext, what: str, index: int = 0) -> np.ndarray:
    array = ctx.importer.constant_array(ctx.input(index))
    if array is None:
        raise ctx.not_constant(
            index,
            f"the output shape depends on the values of the input ({what}), which static shapes cannot "
            "express; only a constant input is supported",
        )
    return array


@converts("NonZero", newest=13)
def convert_non_zero(ctx: NodeContext):
    array = constant_input(ctx, "the number of non-zero elements")
    return [
        ctx.constant_value(np.asarray(np.nonzero(array), dtype=np.int64).reshape(array.ndim, -1))
    ]


def box_extent(box: np.ndarray, center_point_box: bool) -> tuple[float, float, float, float]:
    """(y_min, x_min, y_max, x_max) of a [y1, x1, y2, x2] box (corners in either order) or an
    [x_center, y_center, width, height] one."""
    if center_point_box:
        x, y, width, height = (float(v) for v in box)
        return y - height / 2, x - width / 2, y + height / 2, x + width / 2
    y1, x1, y2, x2 = (float(v) for v in box)
    return min(y1, y2), min(x1, x2), max(y1, y2), max(x1, x2)


def overlaps(a, b, iou_threshold: float) -> bool:
    """Whether boxes a and b (extents) overlap by more than `iou_threshold` (ONNX's reference)."""
    height = min(a[2], b[2]) - max(a[0], b[0])
    width = min(a[3], b[3]) - max(a[1], b[1])
    if height <= 0 or width <= 0:
        return False
    intersection = height * width
    area_a, area_b = (a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1])
    union = area_a + area_b - intersection
    if area_a <= 0 or area_b <= 0 or union <= 0:
        return False
    return intersection / union > iou_threshold


@converts("NonMaxSuppression", newest=11)
def convert_non_max_suppression(ctx: NodeContext):
    boxes = constant_input(ctx, "the number of boxes selected", 0)
    scores = constant_input(ctx, "the number of boxes selected", 1)

    def scalar(index: int, what: str):
        value = ctx.optional_constant(index, what)
        return None if value is None or value.size == 0 else value.reshape(-1)[0]

    limit = max(int(scalar(2, "max_output_boxes_per_class") or 0), 0)
    iou_threshold = float(scalar(3, "iou_threshold") or 0.0)
    score_threshold = scalar(4, "score_threshold")
    center = bool(ctx.attribute("center_point_box", 0))
    selected = []
    for batch in range(boxes.shape[0]):
        extents = [box_extent(box, center) for box in boxes[batch]]
        for klass in range(scores.shape[1]):
            class_scores = scores[batch, klass]
            candidates = [
                i
                for i in range(boxes.shape[1])
                if score_threshold is None or class_scores[i] > score_threshold
            ]
            # Highest score first, equal scores by lower box index.
            candidates.sort(key=lambda i: (-class_scores[i], i))
            kept: list[int] = []
            for box in candidates:
                if len(kept) >= limit:
                    break
                if not any(overlaps(extents[box], extents[other], iou_threshold) for other in kept):
                    kept.append(box)
                    selected.append((batch, klass, box))
    return [ctx.constant_value(np.asarray(selected, dtype=np.int64).reshape(-1, 3))]


@converts("Unique", newest=28)
def convert_unique(ctx: NodeContext):
    x = constant_input(ctx, "the number of distinct elements")
    axis = ctx.attribute("axis")
    if axis is None:
        y, first, inverse, counts = np.unique(x.reshape(-1), True, True, True)
    else:
        y, first, inverse, counts = np.unique(x, True, True, True, axis=axis)
    inverse = inverse.reshape(-1)
    if not ctx.attribute("sorted", 1):
        # In order of first occurrence.
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        first, counts, inverse = first[order], counts[order], rank[inverse]
        y = np.take(x.reshape(-1) if axis is None else x, first, axis=0 if axis is None else axis)
    outputs = [y, first.astype(np.int64), inverse.astype(np.int64), counts.astype(np.int64)]
    return [
        ctx.constant_value(np.ascontiguousarray(array)) for array in outputs[: len(ctx.node.output)]
    ]


# --------------------------------------------------------------------------- #
# Einsum
# --------------------------------------------------------------------------- #


def einsum_terms(ctx: NodeContext, shapes: Sequence[Sequence[int]]) -> tuple[list[str], str]:
    """The equation's input and output terms, each a string of letters (an ellipsis spelled out
    with upper-case letters for its dimensions, aligned at the end as in numpy)."""
    equation = ctx.attribute("equation", "").replace(" ", "")
    inputs, arrow, output = equation.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(shapes):
        raise ctx.error(f"equation '{equation}' has {len(terms)} operands, the node {len(shapes)}")
    ellipsis_rank = max(
        (len(s) - len(t.replace("...", "")) for t, s in zip(terms, shapes) if "..." in t), default=0
    )
    spare = string.ascii_uppercase[::-1][:ellipsis_rank]
    if any(c in spare for c in equation):
        raise ctx.error(
            f"equation '{equation}': upper-case labels with an ellipsis are not supported"
        )
    spelled = []
    for term, shape in zip(terms, shapes):
        if "..." in term:
            own = len(shape) - len(term.replace("...", ""))
            term = term.replace("...", spare[ellipsis_rank - own :])
        if len(term) != len(shape) or not all(c.isalpha() for c in term):
            raise ctx.error(
                f"equation term '{term}' does not describe an operand of shape {list(shape)}"
            )
        spelled.append(term)
    if arrow:
        output = output.replace("...", spare)
    else:
        letters = "".join(spelled)
        output = spare + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1 and c not in spare)
        )
    if any(c not in "".join(spelled) for c in output) or len(set(output)) != len(output):
        raise ctx.error(
            f"equation '{equation}' has an output label that no operand has, or one twice"
        )
    return spelled, output


def take_diagonals(ctx: NodeContext, value: SSAValue, term: str) -> tuple[SSAValue, str]:
    """Diagonals for labels repeated within one term (`ii->i`): the pair of axes moved last,
    flattened, and gathered at the positions i * (n + 1)."""
    while len(set(term)) != len(term):
        label = next(c for c in term if term.count(c) > 1)
        first, second = term.index(label), term.index(label, term.index(label) + 1)
        shape = shape_of(value)
        if shape[first] != shape[second]:
            raise ctx.error(
                f"label '{label}' names dimensions of sizes {shape[first]} and {shape[second]}"
            )
        rest = [i for i in range(len(term)) if i not in (first, second)]
        moved = ctx.emit(graph.TransposeOp, [value], {"perm": int_array([*rest, first, second])})
        n = shape[first]
        flat = reshape(ctx, moved, [*(shape[i] for i in rest), n * n])
        positions = ctx.constant_value(np.arange(n, dtype=np.int64) * (n + 1))
        value = ctx.emit(graph.GatherOp, [flat, positions], {"axis": i64_attr(len(rest))})
        term = "".join(term[i] for i in rest) + label
    return value, term


def sum_labels(ctx: NodeContext, value: SSAValue, term: str, keep: str) -> tuple[SSAValue, str]:
    axes = [i for i, c in enumerate(term) if c not in keep]
    if not axes:
        return value, term
    summed = ctx.emit(
        graph.ReduceSumOp, [value], {"axes": int_array(axes), "keepdims": bool_attr(False)}
    )
    return summed, "".join(c for c in term if c in keep)


def arranged(ctx: NodeContext, value: SSAValue, term: str, order: str) -> SSAValue:
    if term == order:
        return value
    return ctx.emit(graph.TransposeOp, [value], {"perm": int_array([term.index(c) for c in order])})


def contract(ctx: NodeContext, a: SSAValue, a_term: str, b: SSAValue, b_term: str, keep: str):
    """a and b multiplied over their shared labels, those not in `keep` summed: one batched matmul
    of [batch..., left, shared] by [batch..., shared, right]."""
    a_shape = dict(zip(a_term, shape_of(a)))
    b_shape = dict(zip(b_term, shape_of(b)))
    batch = "".join(c for c in a_term if c in b_term and c in keep)
    shared = "".join(c for c in a_term if c in b_term and c not in keep)
    left = "".join(c for c in a_term if c not in b_term)
    right = "".join(c for c in b_term if c not in a_term)
    for c in shared:
        if a_shape[c] != b_shape[c]:
            raise ctx.error(
                f"label '{c}' is summed over dimensions of sizes {a_shape[c]} and {b_shape[c]}"
            )
    k = math.prod(a_shape[c] for c in shared)
    a_rows = reshape(
        ctx,
        arranged(ctx, a, a_term, batch + left + shared),
        [*(a_shape[c] for c in batch), math.prod(a_shape[c] for c in left), k],
    )
    b_rows = reshape(
        ctx,
        arranged(ctx, b, b_term, batch + shared + right),
        [*(b_shape[c] for c in batch), k, math.prod(b_shape[c] for c in right)],
    )
    product = ctx.emit(graph.MatMulOp, [a_rows, b_rows])
    batch_sizes = shape_of(product)[: len(batch)]
    sizes = [*batch_sizes, *(a_shape[c] for c in left), *(b_shape[c] for c in right)]
    return reshape(ctx, product, sizes), batch + left + right


@converts("Einsum", newest=28)
def convert_einsum(ctx: NodeContext):
    """Diagonals (a gather of the flattened pair of axes), sums, transposes, reshapes and matmuls."""
    operands = [ctx.input(i) for i in range(ctx.input_count)]
    terms, output = einsum_terms(ctx, [shape_of(v) for v in operands])
    values = []
    for position, (value, term) in enumerate(zip(operands, terms)):
        value, term = take_diagonals(ctx, value, term)
        others = output + "".join(t for i, t in enumerate(terms) if i != position)
        values.append(sum_labels(ctx, value, term, others))
    value, term = values[0]
    for position in range(1, len(values)):
        later = output + "".join(t for t in terms[position + 1 :])
        other, other_term = values[position]
        value, term = contract(ctx, value, term, other, other_term, later)
    value, term = sum_labels(ctx, value, term, output)
    return [arranged(ctx, value, term, output)]


# --------------------------------------------------------------------------- #
# Resize
# --------------------------------------------------------------------------- #

COORDINATE_MODES = (
    "half_pixel",
    "half_pixel_symmetric",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
    "tf_crop_and_resize",
    "tf_half_pixel_for_nn",
)
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def source_coordinates(
    mode: str, size: int, out: int, scale: float, roi
) -> tuple[np.ndarray, np.ndarray | None]:
    """Where each output position along an axis samples the input (ONNX's coordinate_transformation_mode),
    and for tf_crop_and_resize which positions fall outside it."""
    y = np.arange(out, dtype=np.float64)
    width = scale * size
    if mode == "align_corners":
        return (np.zeros(out) if width == 1 else y * (size - 1) / (width - 1)), None
    if mode == "asymmetric":
        return y / scale, None
    if mode == "tf_crop_and_resize":
        start, end = roi
        if width == 1:
            x = np.full(out, (end - start) * (size - 1) / 2)
        else:
            x = y * (end - start) * (size - 1) / (width - 1)
        x = x + start * (size - 1)
        return x, (x < 0) | (x > size - 1)
    if mode == "pytorch_half_pixel":
        return (np.full(out, -0.5) if width == 1 else (y + 0.5) / scale - 0.5), None
    if mode == "half_pixel":
        return (y + 0.5) / scale - 0.5, None
    if mode == "tf_half_pixel_for_nn":
        return (y + 0.5) / scale, None
    # half_pixel_symmetric: the centre of the input maps to the centre of the output.
    offset = size / 2 * (1 - out / width)
    return offset + (y + 0.5) / scale - 0.5, None


def interpolation_coefficients(
    mode: str, ratio: float, scale: float, cubic_a: float, antialias: bool, nearest_mode: str
) -> np.ndarray:
    """The weights of an output position's taps, ratio in (0, 1] past the tap left of it (ONNX's reference)."""
    if mode == "nearest":
        if ratio == 1:
            return np.array([0.0, 1.0])
        up = {
            "round_prefer_floor": ratio > 0.5,
            "round_prefer_ceil": ratio >= 0.5,
            "floor": False,
            "ceil": True,
        }
        return np.array([0.0, 1.0]) if up[nearest_mode] else np.array([1.0, 0.0])
    if mode == "linear":
        if not antialias:
            return np.array([1 - ratio, ratio])
        scale = min(scale, 1.0)
        start = int(np.floor(-1 / scale) + 1)
        weights = np.clip(1 - np.abs((np.arange(start, 2 - start) - ratio) * scale), 0, 1)
        return weights / weights.sum()
    a = cubic_a
    if not antialias:
        return np.array(
            [
                ((a * (ratio + 1) - 5 * a) * (ratio + 1) + 8 * a) * (ratio + 1) - 4 * a,
                ((a + 2) * ratio - (a + 3)) * ratio * ratio + 1,
                ((a + 2) * (1 - ratio) - (a + 3)) * (1 - ratio) * (1 - ratio) + 1,
                ((a * (2 - ratio) - 5 * a) * (2 - ratio) + 8 * a) * (2 - ratio) - 4 * a,
            ]
        )
    scale = min(scale, 1.0)
    start = int(np.floor(-2 / scale) + 1)
    x = np.abs(scale * (np.arange(start, 2 - start) - ratio))
    weights = np.where(
        x <= 1,
        (a + 2) * x**3 - (a + 3) * x**2 + 1,
        np.where(x < 2, a * x**3 - 5 * a * x**2 + 8 * a * x - 4 * a, 0.0),
    )
    return weights / weights.sum()


def resize_taps(ctx: NodeContext, size: int, out: int, scale: float, roi, simple_nearest: bool):
    """For one axis: the input positions each output position reads ([out, taps], edge-clamped),
    their weights ([out, taps]) and the positions outside a tf_crop_and_resize region (or None)."""
    mode = ctx.attribute("mode", "nearest")
    transform = (
        "asymmetric"
        if simple_nearest
        else ctx.attribute("coordinate_transformation_mode", "half_pixel")
    )
    x, outside = source_coordinates(transform, size, out, scale, roi)
    if simple_nearest and mode == "nearest":
        # Resize before opset 11 and Upsample (onnxruntime's "simple" rounding): down when
        # enlarging, up when shrinking.
        index = np.ceil(x) if scale < 1 else np.floor(x)
        return np.clip(index, 0, size - 1).astype(np.int64)[:, None], np.ones((out, 1)), None
    floor = np.floor(x)
    ratios = np.where(x == floor, 1.0, x - floor)
    args = (
        mode,
        scale,
        ctx.attribute("cubic_coeff_a", -0.75),
        bool(ctx.attribute("antialias", 0)),
        ctx.attribute("nearest_mode", "round_prefer_floor"),
    )
    weights = np.stack([interpolation_coefficients(args[0], float(r), *args[1:]) for r in ratios])
    taps = weights.shape[1]
    # The `taps` input positions nearest x, ties to the lower one (the reference's edge-padded window).
    pad = -(-taps // 2)
    padded = x + pad
    start = np.floor(padded).astype(np.int64)
    fraction = padded - start
    if taps % 2 == 0:
        start += np.where(fraction == 0, -(taps // 2), -(taps // 2) + 1)
    else:
        start += np.where(fraction <= 0.5, -((taps - 1) // 2), -((taps - 1) // 2) + 1)
    index = start[:, None] + np.arange(taps)[None, :] - pad
    if ctx.attribute("exclude_outside", 0):
        weights = np.where((index < 0) | (index >= size), 0.0, weights)
        total = weights.sum(axis=1, keepdims=True)
        weights = weights / np.where(total == 0, 1.0, total)
    return np.clip(index, 0, size - 1), weights, outside


def resize_axis(
    ctx: NodeContext, x: SSAValue, axis: int, out: int, scale: float, roi, simple: bool
) -> SSAValue:
    shape = shape_of(x)
    index, weights, outside = resize_taps(ctx, shape[axis], out, scale, roi, simple)
    if ctx.attribute("mode", "nearest") == "nearest":
        chosen = index[np.arange(out), np.argmax(weights, axis=1)]
        result = ctx.emit(graph.GatherOp, [x, ctx.constant_value(chosen)], {"axis": i64_attr(axis)})
    else:
        trailing = [1] * (len(shape) - axis - 1)
        gathered = ctx.emit(
            graph.GatherOp, [x, ctx.constant_value(index)], {"axis": i64_attr(axis)}
        )
        weighted = ctx.emit(
            graph.MulOp,
            [
                gathered,
                ctx.constant_value(weights.astype(dtype_of(x)).reshape(*weights.shape, *trailing)),
            ],
        )
        summed = {"axes": int_array([axis + 1]), "keepdims": bool_attr(False)}
        result = ctx.emit(graph.ReduceSumOp, [weighted], summed)
    if outside is not None and outside.any():
        mask = ctx.constant_value(outside.reshape(out, *[1] * (len(shape) - axis - 1)))
        fill = ctx.scalar_like(ctx.attribute("extrapolation_value", 0.0), result)
        result = ctx.emit(graph.WhereOp, [mask, fill, result])
    return result


def resize_operands(ctx: NodeContext, rank: int):
    """Scales (or None), sizes (or None), axes and roi ([2 * rank]) of Resize or Upsample, any opset."""
    if ctx.node.op_type == "Upsample" and ctx.opset < 7:
        if rank != 4:
            raise ctx.error(f"Upsample-1 takes a 4-D input, got rank {rank}")
        scales = [
            1.0,
            1.0,
            float(ctx.attribute("height_scale")),
            float(ctx.attribute("width_scale")),
        ]
        return scales, None, list(range(rank)), None
    if ctx.node.op_type == "Upsample" and ctx.opset < 9:
        return [float(s) for s in ctx.attribute("scales")], None, list(range(rank)), None
    if ctx.node.op_type == "Upsample" or ctx.opset < 11:
        return (
            [float(s) for s in ctx.constant(1, "scales").reshape(-1)],
            None,
            list(range(rank)),
            None,
        )
    axes = [a % rank for a in ctx.attribute("axes", list(range(rank)))]
    scales = ctx.optional_constant(2, "scales")
    sizes = ctx.optional_constant(3, "sizes")
    if scales is not None and scales.size == 0:
        scales = None
    if (scales is None) == (sizes is None or sizes.size == 0):
        raise ctx.error("exactly one of scales and sizes must be given")
    roi = None
    if ctx.attribute("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize":
        given = [float(v) for v in ctx.constant(1, "roi").reshape(-1)]
        if len(given) != 2 * len(axes):
            raise ctx.error(f"roi has {len(given)} values for {len(axes)} axes")
        roi = [0.0] * rank + [1.0] * rank
        for i, axis in enumerate(axes):
            roi[axis], roi[axis + rank] = given[i], given[i + len(axes)]
    if scales is not None:
        return [float(s) for s in scales.reshape(-1)], None, axes, roi
    return None, [int(s) for s in sizes.reshape(-1)], axes, roi


@converts("Resize", newest=19)
@converts("Upsample", newest=10)
def convert_resize(ctx: NodeContext):
    """One axis after another, as ONNX's reference does: nearest is one `gather` along the axis; linear
    and cubic gather their taps (a constant [out, taps] index table, edge-clamped) and sum them weighted
    by a constant [out, taps] table of coefficients (antialias and exclude_outside only change tables).
    """
    x, shape = ctx.input(0), ctx.shape(0)
    rank = len(shape)
    mode = ctx.attribute("mode", "nearest")
    simple = ctx.node.op_type == "Upsample" or ctx.opset < 11
    if simple and mode == "bilinear":
        mode = "linear"
    if mode not in ("nearest", "linear", "cubic"):
        raise ctx.error(f"mode '{mode}' is not supported (nearest, linear or cubic)")
    transform = ctx.attribute("coordinate_transformation_mode", "half_pixel")
    if transform not in COORDINATE_MODES:
        raise ctx.error(
            f"coordinate_transformation_mode '{transform}' is not one of {', '.join(COORDINATE_MODES)}"
        )
    if ctx.attribute("nearest_mode", "round_prefer_floor") not in NEAREST_MODES:
        raise ctx.error(
            f"nearest_mode '{ctx.attribute('nearest_mode')}' is not one of {', '.join(NEAREST_MODES)}"
        )
    if mode == "nearest" and ctx.attribute("antialias", 0):
        raise ctx.error("antialias applies to linear and cubic modes, not nearest")
    if mode != "nearest" and dtype_of(x).kind not in "fViu":
        raise ctx.error(f"{mode} interpolation of {dtype_of(x)} tensors is not supported")
    scales, sizes, axes, roi = resize_operands(ctx, rank)
    given = scales if scales is not None else sizes
    if len(given) != len(axes):
        raise ctx.error(f"{len(given)} scales or sizes for {len(axes)} axes")
    if scales is not None:
        factors = [1.0] * rank
        for axis, scale in zip(axes, scales):
            if scale <= 0:
                raise ctx.error(f"scales must be positive, got {scales}")
            factors[axis] = scale
        out = [int(factor * d) for factor, d in zip(factors, shape)]
    else:
        out = list(shape)
        for axis, size in zip(axes, sizes):
            out[axis] = size
        factors = [o / d for o, d in zip(out, shape)]
        policy = ctx.attribute("keep_aspect_ratio_policy", "stretch")
        if policy != "stretch":
            if policy not in ("not_larger", "not_smaller"):
                raise ctx.error(
                    f"keep_aspect_ratio_policy '{policy}' is not stretch, not_larger or not_smaller"
                )
            scale = (min if policy == "not_larger" else max)(factors[a] for a in axes)
            factors = [scale if i in axes else 1.0 for i in range(rank)]
            out = [int(scale * d + 0.5) if i in axes else d for i, d in enumerate(shape)]
    result = x
    narrow = dtype_of(x) not in (np.float32, np.float64) and mode != "nearest"
    if narrow:
        # Interpolate in f32 (as the reference does in f64), rounding once at the end.
        result = ctx.emit_typed(graph.CastOp, x, TensorType(f32, shape))
    # One axis after another, in the order `axes` names them, as ONNX's reference does.
    for axis in axes:
        crop = None if roi is None else (roi[axis], roi[axis + rank])
        if (
            math.isclose(factors[axis], 1.0)
            and out[axis] == shape[axis]
            and (crop is None or (math.isclose(crop[0], 0.0) and math.isclose(crop[1], 1.0)))
        ):
            continue
        if out[axis] == 0 or shape[axis] == 0:
            raise ctx.error(f"resizing dimension {axis} from {shape[axis]} to {out[axis]} elements")
        result = resize_axis(ctx, result, axis, out[axis], factors[axis], crop, simple)
    if narrow and dtype_of(x).kind in "iu":
        # Integers round to nearest (halves to even) and saturate, as ONNX's reference casts.
        limits = np.iinfo(dtype_of(x))
        result = ctx.emit(graph.RoundOp, [result])
        result = ctx.emit(
            graph.MinOp,
            [
                ctx.emit(graph.MaxOp, [result, ctx.scalar_like(float(limits.min), result)]),
                ctx.scalar_like(float(limits.max), result),
            ],
        )
    if narrow:
        result = ctx.emit_typed(
            graph.CastOp, result, TensorType(tensor_type(x).get_element_type(), out)
        )
    return [result]
