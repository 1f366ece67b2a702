"""Gather selection for `loop-to-npu`: a generic whose body loads rows of a buffer at indices it reads
(an embedding lookup) becomes, per index, an `npu.load` of the index on the scalar unit, the body's
index arithmetic, and one `npu.dma` of the row it names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import IndexType, IntegerType, MemRefType, StringAttr
from xdsl.dialects.linalg.ops import GenericOp, IndexOp
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr
from xdsl.rewriter import InsertPoint

from ziggurat.diagnostics import error_at
from ziggurat.dialects.npu import LoadOp
from ziggurat.lowering.loop_to_npu_dma import emit_dma
from ziggurat.lowering.loop_to_npu_views import Dim, Emitter, Linear, View, view_of
from ziggurat.machine import Machine
from ziggurat.transforms.loop.memory_routes import describe_paths, route

# The integer ops the scalar unit computes an index with (npu_interpreter's scalar program).
_SCALAR_OPS = (
    arith.ConstantOp,
    arith.IndexCastOp,
    arith.CmpiOp,
    arith.SelectOp,
    arith.AddiOp,
    arith.SubiOp,
    arith.MuliOp,
    arith.FloorDivSIOp,
    arith.CeilDivSIOp,
    arith.DivSIOp,
    arith.DivUIOp,
    arith.RemSIOp,
    arith.RemUIOp,
    arith.MinSIOp,
    arith.MaxSIOp,
    arith.MinUIOp,
    arith.MaxUIOp,
    arith.CeilDivUIOp,
    arith.AndIOp,
    arith.OrIOp,
    arith.XOrIOp,
    arith.ShLIOp,
    arith.ShRSIOp,
    arith.ShRUIOp,
)


@dataclass(frozen=True)
class Gather:
    """A generic that yields `load`, an element of a buffer defined outside it, whose last `row`
    indices are the generic's last `row` loop indices (`linalg.index`) in order: each point of the
    other loops copies one row, at the leading indices the body computes."""

    op: GenericOp
    load: memref.LoadOp
    row: int


def match_gather(op: Operation) -> Gather | None:
    """The gather `op` is, or None for any other op; an error at `op` for a gather the scalar unit
    cannot address (index arithmetic it does not compute, an index map it cannot follow)."""
    if not isinstance(op, GenericOp) or len(op.outputs) != 1:
        return None
    block = op.body.block
    yielded = block.last_op.operands if block.last_op is not None else ()
    load = yielded[0].owner if len(yielded) == 1 else None
    if not isinstance(load, memref.LoadOp):
        return None
    table = load.memref
    defining = table.block.parent_op() if isinstance(table, BlockArgument) else table.owner
    if defining is not None and op.is_ancestor(defining):
        return None
    loops = op.get_indexing_maps().data[0].data.num_dims
    if any(str(it.data) != "parallel" for it in op.get_iterator_types()):
        raise error_at(op, f"{op.name}: loop-to-npu gathers rows in parallel loops only")
    output_map = op.get_indexing_maps().data[-1].data
    if list(output_map.results) != [AffineDimExpr(d) for d in range(loops)]:
        raise error_at(
            op,
            f"{op.name}: loop-to-npu gathers into an output read in loop order, got {output_map}",
        )
    indices = list(load.indices)
    row = 0
    while row < min(len(indices), loops):
        index = indices[-1 - row].owner
        if not (
            isinstance(index, IndexOp)
            and index.dim.value.data == loops - 1 - row
            and index.result.has_one_use()
        ):
            break
        row += 1
    for body_op in block.ops:
        if body_op is load or body_op is block.last_op or isinstance(body_op, IndexOp):
            continue
        if not isinstance(body_op, _SCALAR_OPS) or not all(
            isinstance(r.type, IntegerType | IndexType) for r in body_op.results
        ):
            raise error_at(
                op,
                f"{op.name}: loop-to-npu computes a gather's index on the scalar unit, which has no "
                f"{body_op.name} on {', '.join(str(o.type) for o in body_op.operands)}",
            )
    # A loop that anything but the row's own index reads (an index per element) is no row loop:
    # the gather copies shorter rows, down to single elements.
    used = set()
    for body_op in block.ops:
        if isinstance(body_op, IndexOp) and body_op.result.uses:
            if not any(body_op.result is index for index in indices[len(indices) - row :]):
                used.add(body_op.dim.value.data)
    for arg, operand_map in zip(block.args, op.get_indexing_maps().data):
        if not arg.uses or arg.index >= len(op.inputs):
            continue
        results = operand_map.data.results
        if not all(isinstance(e, AffineDimExpr) for e in results):
            raise error_at(
                op,
                f"{op.name}: loop-to-npu reads a gather's indices through a projected permutation "
                f"of its loops, got {operand_map.data} for input #{arg.index}",
            )
        used.update(e.position for e in results)
    while row and max(used, default=-1) >= loops - row:
        row -= 1
    return Gather(op, load, row)


def lower_gather(emitter: Emitter, gather: Gather, machine: Machine) -> None:
    """Loops over the gather's outer dims; in them, an `npu.load` of each index the body reads, the
    body's index arithmetic, and an `npu.dma` of the row from the table to the output.

    Where no engine moves the table's space to the output's (tensorcore: gm reaches rf only through
    smem), the rows are gathered into a buffer one hop along the route, and the whole of it copied on.
    """
    op, load, row = gather.op, gather.load, gather.row
    table = view_of(load.memref, op)
    output = view_of(op.outputs[0], op)
    chain = route(machine, table.space, output.space)
    if chain is None:
        raise error_at(
            op,
            f"{op.name}: machine '{machine.name}' has no DMA route from '{table.space}' to "
            f"'{output.space}' for the gathered rows (its paths: {describe_paths(machine)})",
        )
    element_type = output.base_type.get_element_type()
    staged = [_temporary(emitter, space, output.shape, element_type) for space in chain[1:-1]] or [
        output
    ]
    target = staged[0]

    block = op.body.block
    values: dict[SSAValue, SSAValue] = {}
    for body_op in block.ops:
        if isinstance(body_op, arith.ConstantOp):  # once, before the loops
            values[body_op.result] = emitter.insert(body_op.clone()).results[0]

    loops = len(output.dims)
    inner = emitter
    outer: list[Linear] = []
    for dim in output.dims[: loops - row]:
        if dim.size == 1:
            outer.append(Linear())
            continue
        inner, iv = inner.loop(dim.size)
        outer.append(Linear.of(iv))

    for arg, operand, operand_map in zip(block.args, op.inputs, op.get_indexing_maps().data):
        if not arg.uses:
            continue
        if not isinstance(operand.type, MemRefType):
            values[arg] = operand
            continue
        view = view_of(operand, op)
        for dim, expr in zip(view.dims, operand_map.data.results):
            view = view.shifted(dim, outer[expr.position])
        values[arg] = inner.insert(LoadOp(view.base, inner.indices(view))).results[0]
    for body_op in block.ops:
        if body_op is load or body_op is block.last_op or body_op.results[0] in values:
            continue
        if isinstance(body_op, IndexOp):
            if body_op.dim.value.data < loops - row:
                index = inner.index(outer[body_op.dim.value.data])
                values[body_op.result] = inner.constant(index) if isinstance(index, int) else index
            continue
        values.update(zip(body_op.results, inner.insert(body_op.clone(values)).results))

    leading = len(table.dims) - row
    src = table
    for dim, index in zip(table.dims[:leading], load.indices):
        src = src.shifted(dim, Linear.of(values.get(index, index)))
    src = src.with_dims(
        [
            Dim(d.base_dim, size.size, d.step)
            for d, size in zip(table.dims[leading:], output.dims[loops - row :])
        ]
    )
    dst = target
    for dim, offset in zip(target.dims[: loops - row], outer):
        dst = dst.shifted(dim, offset)
    dst = dst.with_dims(dst.dims[loops - row :])
    emit_dma(inner, op, machine, src, dst)
    for source, destination in zip(staged, [*staged[1:], output]):
        if source is not output:
            emit_dma(emitter, op, machine, source, destination)


def _temporary(emitter: Emitter, space: str, shape: Sequence[int], element_type: Attribute) -> View:
    """A new buffer in `space`, allocated at the top of the function (npu-plan-memory places it)."""
    point = emitter.point.block.parent_op()
    while not isinstance(point, func.FuncOp):
        point = point.parent_op()
    alloc = memref.AllocOp(
        [], [], MemRefType(element_type, list(shape), memory_space=StringAttr(space))
    )
    emitter.at(InsertPoint.at_start(point.body.block)).insert(alloc)
    return view_of(alloc.memref, alloc)
