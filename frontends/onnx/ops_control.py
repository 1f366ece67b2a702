"""Converters for ONNX's control flow where shapes stay static, as straight-line graph ops: If inlines
the branch its condition (known at import) takes, or computes both and selects with `graph.where`;
Loop and Scan are unrolled over counts known at import.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from ziggurat.dialects import graph
from ziggurat.dialects.graph import i64_attr, int_array
from ziggurat.dtypes import to_numpy_dtype
from ziggurat.frontends.onnx.node import NodeContext
from ziggurat.frontends.onnx.ops import converts, reshape, tensor_type

MAX_UNROLLED_ITERATIONS = 4096
"""Loops and scans longer than this are refused rather than unrolled into a huge function."""


def scope(ctx: NodeContext, what: str) -> str:
    """How diagnostics place a node of the subgraph `what` of this node: " in the body of node #3 (Loop)"."""
    return f" in the {what} of {ctx.described}"


@converts("If", newest=25)
def convert_if(ctx: NodeContext):
    condition = ctx.importer.constant_array(ctx.input(0))
    then_branch, else_branch = ctx.attribute("then_branch"), ctx.attribute("else_branch")
    if condition is not None:
        if condition.size != 1:
            raise ctx.error(
                f"the condition must have one element, got shape {list(condition.shape)}"
            )
        taken, name = (
            (then_branch, "then_branch")
            if condition.reshape(-1)[0]
            else (else_branch, "else_branch")
        )
        return ctx.importer.import_subgraph(taken, [], scope(ctx, name))
    then_values = ctx.importer.import_subgraph(then_branch, [], scope(ctx, "then_branch"))
    else_values = ctx.importer.import_subgraph(else_branch, [], scope(ctx, "else_branch"))
    if [v.type for v in then_values] != [v.type for v in else_values]:
        # The node's types would depend on the run-time condition: the error names it (and, for a
        # graph input, the --bind that fixes it). The condition is not constant here, so this raises.
        ctx.constant(0, "the condition (its branches give values of different types)")
    if int(np.prod(ctx.shape(0))) != 1:
        raise ctx.error(f"the condition must have one element, got shape {list(ctx.shape(0))}")
    # Both branches are pure graph ops: computing both and selecting is the same as branching.
    condition_value = reshape(ctx, ctx.input(0), [])
    return [
        ctx.emit(graph.WhereOp, [condition_value, a, b]) for a, b in zip(then_values, else_values)
    ]


def stacked(ctx: NodeContext, values: Sequence[SSAValue], axis: int) -> SSAValue:
    """`values` (of one type) stacked along a new axis `axis` (negative: counted in the result's rank)."""
    rank = len(tensor_type(values[0]).get_shape()) + 1
    axis = axis + rank if axis < 0 else axis
    if not 0 <= axis < rank:
        raise ctx.error(f"scan output axis {axis} is out of range for rank {rank}")
    expanded = [ctx.emit(graph.UnsqueezeOp, [v], {"axes": int_array([axis])}) for v in values]
    return (
        expanded[0]
        if len(expanded) == 1
        else ctx.emit(graph.ConcatOp, expanded, {"axis": i64_attr(axis)})
    )


def element(ctx: NodeContext, value: SSAValue, index: int, axis: int) -> SSAValue:
    """`value[index]` along `axis`, that axis dropped."""
    indices = ctx.constant_value(np.asarray(index, dtype=np.int64))
    return ctx.emit(graph.GatherOp, [value, indices], {"axis": i64_attr(axis)})


@converts("Loop", newest=25)
def convert_loop(ctx: NodeContext):
    # Inputs: M (trip count), cond, v_initial...; the body takes (iteration, cond, v...) and gives
    # (cond, v..., scan outputs...).
    body = ctx.attribute("body")
    trip_count = ctx.optional_constant(0, "the trip count (the loop is unrolled)")
    condition = ctx.optional_constant(1, "the initial condition (the loop is unrolled)")
    trip_count = None if trip_count is None else int(trip_count.reshape(-1)[0])
    carried = [ctx.input(i) for i in range(2, ctx.input_count)]
    scan_count = len(body.output) - 1 - len(carried)
    if scan_count < 0:
        raise ctx.error(
            f"the body gives {len(body.output)} outputs for {len(carried)} loop-carried values"
        )
    if trip_count is None and condition is None:
        raise ctx.error("a loop with neither a trip count nor a condition never ends")
    running = True if condition is None else bool(condition.reshape(-1)[0])
    scans: list[list[SSAValue]] = [[] for _ in range(scan_count)]
    iteration = 0
    while running and (trip_count is None or iteration < trip_count):
        if iteration == MAX_UNROLLED_ITERATIONS:
            raise ctx.error(
                f"the loop runs more than {MAX_UNROLLED_ITERATIONS} iterations, too many to unroll"
            )
        inputs = [
            ctx.constant_value(np.asarray(iteration, dtype=np.int64)),
            ctx.constant_value(np.asarray(running, dtype=np.bool_)),
            *carried,
        ]
        outputs = ctx.importer.import_subgraph(
            body, inputs, scope(ctx, f"body (iteration {iteration})")
        )
        carried = outputs[1 : 1 + len(carried)]
        for values, value in zip(scans, outputs[1 + len(carried) :]):
            values.append(value)
        iteration += 1
        value = ctx.importer.constant_array(outputs[0])
        if condition is None:
            # A for loop: ONNX ignores the body's condition, onnxruntime stops where it is false.
            if iteration < trip_count and (value is None or not np.asarray(value).reshape(-1)[0]):
                raise ctx.error(
                    "without a condition input, the body's condition output must stay true (ONNX ignores it, "
                    "onnxruntime stops where it is false)"
                )
            continue
        if value is None:
            raise ctx.error(
                "the body's condition output depends on run-time values: the loop cannot be unrolled into static shapes"
            )
        running = bool(np.asarray(value).reshape(-1)[0])
    if scans and iteration == 0:
        # No iteration: empty scan outputs, of the shapes the body would give.
        inputs = [
            ctx.constant_value(np.asarray(0, np.int64)),
            ctx.constant_value(np.asarray(running)),
            *carried,
        ]
        outputs = ctx.importer.import_subgraph(body, inputs, scope(ctx, "body"))[1 + len(carried) :]
        return [*carried, *(empty_stack(ctx, value) for value in outputs)]
    return [*carried, *(stacked(ctx, values, 0) for values in scans)]


def empty_stack(ctx: NodeContext, value: SSAValue) -> SSAValue:
    """A stack of no values like `value` ([0, *shape]); the ops that computed `value` are left unused."""
    value_type = tensor_type(value)
    return ctx.constant_value(
        np.zeros((0, *value_type.get_shape()), to_numpy_dtype(value_type.get_element_type()))
    )


def scan(
    ctx: NodeContext,
    body,
    states: list[SSAValue],
    sequences: list[SSAValue],
    input_axes: Sequence[int],
    input_reversed: Sequence[bool],
    output_axes: Sequence[int],
    output_reversed: Sequence[bool],
    label: str,
) -> list[SSAValue]:
    """The final states and the stacked scan outputs of `body` unrolled over `sequences`."""
    lengths = {tensor_type(s).get_shape()[axis] for s, axis in zip(sequences, input_axes)}
    if len(lengths) != 1:
        raise ctx.error(
            f"the scanned inputs have different lengths {sorted(lengths)} along their scan axes"
        )
    (length,) = lengths
    if length > MAX_UNROLLED_ITERATIONS:
        raise ctx.error(
            f"the scan runs {length} iterations, more than the {MAX_UNROLLED_ITERATIONS} unrolled"
        )
    scan_count = len(body.output) - len(states)
    if length == 0 and scan_count:
        raise ctx.error(
            "the scanned inputs are empty, so the scan outputs' shapes are unknown at import"
        )
    outputs: list[list[SSAValue]] = [[] for _ in range(scan_count)]
    for t in range(length):
        elements = [
            element(ctx, s, length - 1 - t if backwards else t, axis)
            for s, axis, backwards in zip(sequences, input_axes, input_reversed)
        ]
        results = ctx.importer.import_subgraph(
            body, [*states, *elements], f"{label} (iteration {t})"
        )
        states = results[: len(states)]
        for values, value in zip(outputs, results[len(states) :]):
            values.append(value)
    scanned = []
    for values, axis, backwards in zip(outputs, output_axes, output_reversed):
        scanned.append(stacked(ctx, values[::-1] if backwards else values, axis))
    return [*states, *scanned]


def scan_attributes(
    ctx: NodeContext, name: str, count: int, ranks: Sequence[int] | None, default: int
) -> list[int]:
    values = list(ctx.attribute(name, [default] * count))
    if len(values) != count:
        raise ctx.error(f"{name} has {len(values)} entries for {count} values")
    if ranks is not None:
        for value, rank in zip(values, ranks):
            if not -rank <= value < rank:
                raise ctx.error(f"{name} entry {value} is out of range for rank {rank}")
        values = [v + rank if v < 0 else v for v, rank in zip(values, ranks)]
    return values


@converts("Scan", newest=25)
def convert_scan(ctx: NodeContext):
    body = ctx.attribute("body")
    scan_inputs = ctx.attribute("num_scan_inputs")
    if ctx.opset < 9:
        return convert_scan8(ctx, body, scan_inputs)
    operands = [ctx.input(i) for i in range(ctx.input_count)]
    states, sequences = (
        operands[: len(operands) - scan_inputs],
        operands[len(operands) - scan_inputs :],
    )
    scan_outputs = len(body.output) - len(states)
    input_ranks = [len(tensor_type(s).get_shape()) for s in sequences]
    input_axes = scan_attributes(ctx, "scan_input_axes", scan_inputs, input_ranks, 0)
    input_reversed = [
        bool(d) for d in scan_attributes(ctx, "scan_input_directions", scan_inputs, None, 0)
    ]
    output_axes = scan_attributes(ctx, "scan_output_axes", scan_outputs, None, 0)
    output_reversed = [
        bool(d) for d in scan_attributes(ctx, "scan_output_directions", scan_outputs, None, 0)
    ]
    return scan(
        ctx,
        body,
        states,
        sequences,
        input_axes,
        input_reversed,
        output_axes,
        output_reversed,
        scope(ctx, "body"),
    )


def convert_scan8(ctx: NodeContext, body, scan_inputs: int):
    # Opset 8: input 0 is sequence_lens, every operand has a batch axis 0 and the scanned ones
    # scan along axis 1; each batch entry is a scan of its own.
    operands = [ctx.input(i) for i in range(1, ctx.input_count)]
    states, sequences = (
        operands[: len(operands) - scan_inputs],
        operands[len(operands) - scan_inputs :],
    )
    batch = tensor_type(operands[0]).get_shape()[0]
    steps = tensor_type(sequences[0]).get_shape()[1] if sequences else 0
    lengths = ctx.optional_constant(0, "sequence_lens")
    if lengths is not None and not np.all(lengths == steps):
        raise ctx.error(
            f"sequence_lens {lengths.tolist()} shorter than the scanned axis ({steps}) are not supported"
        )
    input_reversed = [bool(d) for d in scan_attributes(ctx, "directions", scan_inputs, None, 0)]
    scan_outputs = len(body.output) - len(states)
    per_batch = []
    for b in range(batch):
        results = scan(
            ctx,
            body,
            [element(ctx, s, b, 0) for s in states],
            [element(ctx, s, b, 0) for s in sequences],
            [0] * scan_inputs,
            input_reversed,
            [0] * scan_outputs,
            [False] * scan_outputs,
            scope(ctx, f"body (batch {b})"),
        )
        per_batch.append(results)
    return [stacked(ctx, [results[i] for results in per_batch], 0) for i in range(len(body.output))]
