"""Vector-unit selection for `loop-to-npu`: single-op linalg ops in a vector space become `npu.vec.*`
instructions laid over the unit's lanes.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import gcd, prod

from xdsl.dialects import arith, func, math, memref
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType, MemRefType, StringAttr
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.dialects.linalg.ops import FillOp, YieldOp
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr
from xdsl.rewriter import InsertPoint

from ziggurat.diagnostics import error_at
from ziggurat.dialects import npu
from ziggurat.dtypes import to_numpy_dtype
from ziggurat.lowering.loop_to_npu_dma import emit_dma
from ziggurat.lowering.loop_to_npu_views import (
    Dim,
    Emitter,
    Linear,
    View,
    group_extent,
    loop_over,
    merged_groups,
    squeezed,
    view_of,
)
from ziggurat.machine import Machine
from ziggurat.transforms.loop.memory_routes import route

_BINARY: dict[type[Operation], type[npu.VectorOperation]] = {
    arith.AddfOp: npu.VecAddOp, arith.AddiOp: npu.VecAddOp,
    arith.SubfOp: npu.VecSubOp, arith.SubiOp: npu.VecSubOp,
    arith.MulfOp: npu.VecMulOp, arith.MuliOp: npu.VecMulOp,
    arith.DivfOp: npu.VecDivOp,
    arith.MaximumfOp: npu.VecMaxOp, arith.MaxnumfOp: npu.VecMaxOp, arith.MaxSIOp: npu.VecMaxOp,
    arith.MinimumfOp: npu.VecMinOp, arith.MinnumfOp: npu.VecMinOp, arith.MinSIOp: npu.VecMinOp,
}  # fmt: skip
_UNARY: dict[type[Operation], type[npu.VectorOperation]] = {
    math.ExpOp: npu.VecExpOp, math.RsqrtOp: npu.VecRsqrtOp,
    arith.ExtFOp: npu.VecCastOp, arith.TruncFOp: npu.VecCastOp, arith.SIToFPOp: npu.VecCastOp,
    arith.FPToSIOp: npu.VecCastOp, arith.ExtSIOp: npu.VecCastOp, arith.TruncIOp: npu.VecCastOp,
}  # fmt: skip
_UNSIGNED_CASTS = (arith.ExtUIOp, arith.UIToFPOp, arith.FPToUIOp)
"""Conversions from or to unsigned integers: `npu.vec.cast` with `unsigned` (buffers are signless)."""
_REDUCTIONS: dict[type[Operation], tuple[str, type[npu.VectorOperation]]] = {
    arith.AddfOp: ("sum", npu.VecAddOp), arith.AddiOp: ("sum", npu.VecAddOp),
    arith.MaximumfOp: ("max", npu.VecMaxOp), arith.MaxnumfOp: ("max", npu.VecMaxOp),
    arith.MaxSIOp: ("max", npu.VecMaxOp),
}  # fmt: skip


def lower_vector_op(emitter: Emitter, op: LinalgStructuredOperation, machine: Machine) -> None:
    """Emit the instructions of a fill, copy-like, elementwise or reduction linalg op on `machine`.

    The op's loop dimensions are laid over each operand's view (a dimension an
    operand lacks is a broadcast, stride 0), unit dimensions dropped and dimensions
    every operand walks contiguously merged. The innermost merged dimension is the
    block (the lanes; `mask` when shorter), the one before it the repetitions
    (`repeat`, with each operand's `stride`), and the rest `scf.for` loops. A
    source broadcast along the block is first spread into a buffer with
    `npu.vec.broadcast`; a scalar constant becomes `adds`/`muls`/`relu` where one
    fits, else a `dup`-filled buffer. An innermost-dimension reduction reduces each
    row into a buffer (`npu.vec.reduce`) and combines it into the output. A fill is
    `npu.vec.dup`; copy-like ops are DMAs, or `npu.vec.cast` inside one vector space.

        linalg.generic {maximumf(x, 0.0)} ins(%x : memref<64x64xf16, "ub">) outs(%y : memref<64x64xf16, "ub">)

    becomes (128 f16 lanes on davinci: the 64x64 tile is 32 whole blocks)

        npu.vec.relu %x[0, 0] -> %y[0, 0] {repeat = 32 : i64} : ...
    """
    if isinstance(op, FillOp):
        dst = view_of(op.outputs[0], op)
        _require_vector(op, machine, npu.VecDupOp, [dst])
        emit_vector(
            emitter, op, machine, npu.VecDupOp, [], dst, scalar=_scalar_attr(op.inputs[0], op)
        )
        return
    body = [o for o in op.body.block.ops if not isinstance(o, YieldOp)]
    operands = _loop_operands(op)
    if len(body) == 0:
        _lower_copy_like(emitter, op, machine, operands)
    elif any(str(it.data) == "reduction" for it in op.get_iterator_types()):
        _lower_reduction(emitter, op, machine, body, [v for v in operands if isinstance(v, View)])
    elif len(body) == 1:
        _lower_elementwise(emitter, op, machine, body[0], operands)
    else:
        raise error_at(
            op,
            f"{op.name}: loop-to-npu maps one body op to one vector instruction, got "
            f"{', '.join(o.name for o in body)} (run tile-vectorize first)",
        )


Operand = View | float | None
"""A linalg operand as an instruction sees it: a view with one dimension per loop (Dim(None, size)
where it broadcasts), a scalar constant, or None for a scalar that is not a constant."""


def _loop_operands(op: LinalgStructuredOperation) -> list[Operand]:
    """`op`'s operands (inputs, then outputs) laid over its loops."""
    maps = [m.data for m in op.get_indexing_maps()]
    views = {i: view_of(v, op) for i, v in enumerate(op.operands) if isinstance(v.type, MemRefType)}
    sizes = [1] * maps[0].num_dims
    for index, view in views.items():
        for result, expr in enumerate(maps[index].results):
            if not isinstance(expr, AffineDimExpr):
                raise error_at(
                    op,
                    f"{op.name}: loop-to-npu needs projected-permutation maps, got {maps[index]}",
                )
            sizes[expr.position] = view.shape[result]
    operands: list[Operand] = []
    for index, value in enumerate(op.operands):
        if index not in views:
            operands.append(_constant(value))
            continue
        dims = [Dim(None, size) for size in sizes]
        for result, expr in enumerate(maps[index].results):
            dims[expr.position] = views[index].dims[result]
        operands.append(views[index].with_dims(dims))
    return operands


def _require_vector(
    op: Operation, machine: Machine, kind: type[npu.VectorOperation], views: Sequence[View]
) -> None:
    unit = machine.vector
    name = kind.name.removeprefix("npu.vec.")
    if name not in unit.ops:
        raise error_at(
            op,
            f"{op.name}: the vector unit '{unit.name}' of machine '{machine.name}' has no '{name}'",
        )
    for index, view in enumerate(views):
        if view.space not in unit.spaces:
            raise error_at(
                op,
                f"{op.name}: operand #{index} is in '{view.space}'; the vector unit '{unit.name}' of machine "
                f"'{machine.name}' works in {', '.join(unit.spaces)} (run loop-promote-to-memory-space first)",
            )


def _scalar_attr(value: SSAValue, op: Operation) -> FloatAttr:
    constant = _constant(value)
    if constant is None:
        raise error_at(op, f"{op.name}: loop-to-npu needs a constant scalar operand")
    return FloatAttr(constant, 64)


def _constant(value: SSAValue) -> float | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, FloatAttr | IntegerAttr):
        return float(owner.value.value.data)
    return None


# -- copies ------------------------------------------------------------- #


def _lower_copy_like(
    emitter: Emitter, op: Operation, machine: Machine, operands: list[Operand]
) -> None:
    """A body that yields an input: a DMA between the views (a same-space vector cast where no engine
    serves the space), or a dup of a yielded constant."""
    yielded = op.body.block.last_op.operands[0]
    dst = operands[-1]
    source = operands[yielded.index] if isinstance(yielded, BlockArgument) else _constant(yielded)
    if isinstance(source, float):
        _require_vector(op, machine, npu.VecDupOp, [dst])
        emit_vector(emitter, op, machine, npu.VecDupOp, [], dst, scalar=FloatAttr(source, 64))
    elif not isinstance(source, View):
        raise error_at(
            op, f"{op.name}: loop-to-npu cannot select an instruction for a body yielding {yielded}"
        )
    else:
        emit_copy(emitter, op, machine, source, dst)


def copy_layout(op: LinalgStructuredOperation) -> list[int] | None:
    """For a copy-like op (its body yields its one input): the element strides, inside the source
    buffer, of the source element each destination element receives; None for any other op."""
    body = list(op.body.block.ops)
    yielded = body[-1].operands[0] if len(body) == 1 and body[-1].operands else None
    if len(op.operands) != 2 or not isinstance(yielded, BlockArgument) or yielded.index != 0:
        return None
    src, dst = _loop_operands(op)
    if not isinstance(src, View) or not isinstance(dst, View):
        return None
    order = [expr.position for expr in op.get_indexing_maps().data[1].data.results]
    return [src.element_strides()[d] for d in order]


def emit_copy(
    emitter: Emitter,
    op: Operation,
    machine: Machine,
    src: View,
    dst: View,
    pad: Sequence[tuple[int, int]] | None = None,
    pad_value: float | None = None,
) -> None:
    """A DMA from `src` to `dst`, or a vector cast where no engine serves a copy inside the vector spaces
    (out of the space and back on the DMA engines where the cast's instructions would start misaligned
    or read a strided source)."""
    unpadded = pad is None or not any(lo or hi for lo, hi in pad)
    vector = machine.vector.spaces
    if (
        machine.dma_for(src.space, dst.space) is None
        and unpadded
        and src.space in vector
        and dst.space in vector
    ):
        _require_vector(op, machine, npu.VecCastOp, [src, dst])
        ordered = _in_destination_order(squeezed([src, dst]))
        stride = ordered[0].element_strides()[-1] if ordered[0].dims else 1
        # A source read with a stride (a transpose) or instructions that would start misaligned:
        # the DMA engines copy any strided window, out of the space and back.
        if (stride != 1 or not _starts_aligned(ordered, machine)) and _bounced(
            emitter, op, machine, src, dst
        ):
            return
        if stride != 1:
            raise error_at(
                op,
                f"{op.name}: machine '{machine.name}' has no DMA engine from '{src.space}' to '{dst.space}', "
                f"and its vector unit copies blocks of adjacent elements, not a source read with stride {stride}",
            )
        emit_vector(emitter, op, machine, npu.VecCastOp, [src], dst)
    else:
        emit_dma(emitter, op, machine, src, dst, pad, pad_value)


def _starts_aligned(views: Sequence[View], machine: Machine) -> bool:
    """Whether every vector instruction on the views starts at an aligned byte of its space: each view's
    offset (and its steps with the loop indices), and its stride along every run of contiguous
    dimensions but the innermost, are multiples of the space's alignment."""
    outer = [group[-1] for group in merged_groups(views)[:-1]]
    return all(_steps_aligned(view, outer, machine, with_indices=True) for view in views)


def _steps_aligned(view: View, dims: Sequence[int], machine: Machine, with_indices: bool) -> bool:
    """Whether `view`'s offset, its steps along `dims` and (`with_indices`) its steps with the
    enclosing loops' indices are all multiples of its space's alignment, in bytes."""
    itemsize = to_numpy_dtype(view.base_type.get_element_type()).itemsize
    alignment = machine.memories[view.space].alignment
    base = npu.row_major_strides(view.base_type.get_shape())
    offset = sum((o.scaled(s) for o, s in zip(view.offsets, base)), Linear())
    indices = [c for _, c in offset.terms] if with_indices else []
    steps = [offset.constant, *indices, *(view.element_strides()[d] for d in dims)]
    return not any(step * itemsize % alignment for step in steps)


def _bounced(emitter: Emitter, op: Operation, machine: Machine, src: View, dst: View) -> bool:
    """Copy `src` to `dst` out of its space and back on the DMA engines, the first hop reading `src`
    with its strides: through the space with the fewest hops back that holds the copy (davinci's ub
    through gm, a GPU's registers through shared memory); False (nothing emitted) where no engines
    make the round trip."""
    element_type = dst.base_type.get_element_type()
    size = prod(dst.shape) * npu.element_bytes(element_type)
    chain: tuple[str, ...] | None = None
    for engine in machine.dmas.values():
        for start, middle in engine.paths:
            if start != src.space or size > machine.memories[middle].capacity:
                continue
            back = route(machine, middle, dst.space)
            if back is not None and (chain is None or len(back) < len(chain)):
                chain = back
    if chain is None:
        return False
    current = src
    for space in chain[:-1]:
        scratch = _temporary(emitter, space, dst.shape, element_type)
        emit_dma(emitter, op, machine, current, scratch)
        current = scratch
    emit_dma(emitter, op, machine, current, dst)
    return True


# -- elementwise -------------------------------------------------------- #


def _lower_elementwise(
    emitter: Emitter, op: Operation, machine: Machine, body_op: Operation, operands: list[Operand]
):
    sources: list[View | float] = []
    for value in body_op.operands:
        source = operands[value.index] if isinstance(value, BlockArgument) else _constant(value)
        if source is None:
            raise error_at(
                op,
                f"{op.name}: loop-to-npu reads only buffers and constants into a vector instruction",
            )
        sources.append(source)
    dst = operands[-1]
    if isinstance(body_op, math.AbsFOp | math.ExpM1Op) and isinstance(sources[0], View):
        _two_step(emitter, op, machine, body_op, sources[0], dst)
        return
    if isinstance(body_op, math.RoundEvenOp) and isinstance(sources[0], View):
        _round_even(emitter, op, machine, sources[0], dst)
        return
    if isinstance(body_op, _UNSIGNED_CASTS) and isinstance(sources[0], View):
        _require_vector(op, machine, npu.VecCastOp, [sources[0], dst])
        side = StringAttr("dst" if isinstance(body_op, arith.FPToUIOp) else "src")
        _emit_aligned(emitter, op, machine, npu.VecCastOp, [sources[0]], dst, {"unsigned": side})
        return
    kind, sources, props = _instruction(op, emitter, machine, body_op, sources, dst)
    buffers = [s for s in sources if isinstance(s, View)]
    _require_vector(op, machine, kind, [*buffers, dst])
    _emit_aligned(emitter, op, machine, kind, buffers, dst, props)


def _emit_aligned(
    emitter: Emitter,
    op: Operation,
    machine: Machine,
    kind: type[npu.VectorOperation],
    sources: list[View],
    dst: View,
    props: dict[str, Attribute],
) -> None:
    """`emit_vector`, except that an operand whose instructions would start misaligned (a tile of
    9x9 f16 planes: 162 bytes each, so every other channel's instruction starts off a 4-byte
    boundary) is read from or written to a temporary whose rows start aligned, copied by
    `emit_copy` (on the DMA engines, out of the space and back, where the vector unit cannot)."""
    views = squeezed([*sources, dst])
    loops = [group[-1] for group in merged_groups(views)[:-2]]
    misaligned = [not _instructions_start_aligned(v, loops, machine) for v in views]
    if not any(misaligned):
        emit_vector(emitter, op, machine, kind, sources, dst, **props)
        return
    aligned = []
    for source, bad in zip(sources, misaligned, strict=False):
        if not bad:
            aligned.append(source)
            continue
        element_type = source.base_type.get_element_type()
        copy = _aligned_temporary(emitter, machine, source.space, source.shape, element_type)
        emit_copy(emitter, op, machine, source, copy)
        aligned.append(copy)
    if not misaligned[-1]:
        emit_vector(emitter, op, machine, kind, aligned, dst, **props)
        return
    element_type = dst.base_type.get_element_type()
    result = _aligned_temporary(emitter, machine, dst.space, dst.shape, element_type)
    emit_vector(emitter, op, machine, kind, aligned, result, **props)
    emit_copy(emitter, op, machine, result, dst)


def _instructions_start_aligned(view: View, loops: Sequence[int], machine: Machine) -> bool:
    """Whether every instruction `emit_vector` makes on `view` (unit dims dropped) starts at an
    aligned byte: one per iteration of the `loops` it makes over the merged dims outside the block
    and the repetitions, from the view's offset. A broadcast operand is spread into a buffer of
    its own first, and so is not checked."""
    if any(d.base_dim is None for d in view.dims):
        return True
    # The enclosing loops' indices step by their tiles, which the tile sizes keep aligned.
    return _steps_aligned(view, loops, machine, with_indices=False)


def _aligned_temporary(
    emitter: Emitter, machine: Machine, space: str, shape: Sequence[int], element_type: Attribute
) -> View:
    """A `_temporary` of `shape` whose rows start aligned: its innermost dim padded to a multiple
    of the space's alignment (a 9x9 f16 tile in 4-byte-aligned registers: rows of 10)."""
    itemsize = npu.element_bytes(element_type)
    alignment = machine.memories[space].alignment
    multiple = alignment // gcd(alignment, itemsize)
    padded = [*shape[:-1], -(-shape[-1] // multiple) * multiple] if shape else []
    whole = _temporary(emitter, space, padded, element_type)
    return whole.with_dims([Dim(d, size, 1) for d, size in enumerate(shape)])


def _two_step(
    emitter: Emitter, op: Operation, machine: Machine, body_op: Operation, x: View, dst: View
) -> None:
    """abs(x) = max(x, -x) and expm1(x) = exp(x) - 1: two instructions the unit has."""
    if isinstance(body_op, math.AbsFOp):
        negated = _temporary(emitter, dst.space, dst.shape, x.base_type.get_element_type())
        _require_vector(op, machine, npu.VecMulsOp, [x, negated])
        _require_vector(op, machine, npu.VecMaxOp, [x, negated, dst])
        emit_vector(emitter, op, machine, npu.VecMulsOp, [x], negated, scalar=FloatAttr(-1.0, 64))
        emit_vector(emitter, op, machine, npu.VecMaxOp, [x, negated], dst)
    else:
        _require_vector(op, machine, npu.VecExpOp, [x, dst])
        _require_vector(op, machine, npu.VecAddsOp, [dst])
        emit_vector(emitter, op, machine, npu.VecExpOp, [x], dst)
        emit_vector(emitter, op, machine, npu.VecAddsOp, [dst], dst, scalar=FloatAttr(-1.0, 64))


def _round_even(emitter: Emitter, op: Operation, machine: Machine, x: View, dst: View) -> None:
    """roundeven(x) = f32(i32(x)): the conversion to integers rounds half to even. Exact where
    |x| < 2**31 (QuantizeLinear's lowering bounds what it rounds); beyond, it saturates."""
    integers = _temporary(emitter, dst.space, dst.shape, IntegerType(32))
    _require_vector(op, machine, npu.VecCastOp, [x, integers, dst])
    emit_vector(emitter, op, machine, npu.VecCastOp, [x], integers)
    emit_vector(emitter, op, machine, npu.VecCastOp, [integers], dst)


def _instruction(
    op: Operation, emitter: Emitter, machine: Machine, body_op: Operation, sources: list, dst: View
) -> tuple[type[npu.VectorOperation], list, dict[str, Attribute]]:
    """The vector instruction computing `body_op`, its buffer sources, and its scalar property."""
    kind = type(body_op)
    constants = [s for s in sources if not isinstance(s, View)]
    if kind in _UNARY and not constants:
        return _UNARY[kind], sources, {}
    if isinstance(body_op, arith.NegfOp) and not constants:
        return npu.VecMulsOp, sources, {"scalar": FloatAttr(-1.0, 64)}
    if isinstance(body_op, arith.SelectOp) and isinstance(sources[0], View):
        # a constant branch (a mask's fill value) is a dup-filled buffer the select reads
        return npu.VecSelectOp, [_filled(emitter, op, machine, s, dst) for s in sources], {}
    if kind not in _BINARY:
        raise error_at(
            op, f"{op.name}: machine '{machine.name}' has no vector instruction for {body_op.name}"
        )
    if not constants:
        return _BINARY[kind], sources, {}
    if len(constants) == 2:
        raise error_at(
            op, f"{op.name}: both operands of {body_op.name} are constants (run canonicalize first)"
        )
    constant = constants[0]
    x = next(s for s in sources if isinstance(s, View))
    scalar_first = not isinstance(sources[0], View)
    target = _BINARY[kind]
    if target is npu.VecAddOp or target is npu.VecSubOp and not scalar_first:
        return (
            npu.VecAddsOp,
            [x],
            {"scalar": FloatAttr(constant if target is npu.VecAddOp else -constant, 64)},
        )
    if target is npu.VecMulOp or target is npu.VecDivOp and not scalar_first and constant != 0:
        return (
            npu.VecMulsOp,
            [x],
            {"scalar": FloatAttr(constant if target is npu.VecMulOp else 1 / constant, 64)},
        )
    if target is npu.VecMaxOp and constant == 0 and "relu" in machine.vector.ops:
        return npu.VecReluOp, [x], {}
    spread = _temporary(emitter, dst.space, dst.shape, dst.base_type.get_element_type())
    emit_vector(emitter, op, machine, npu.VecDupOp, [], spread, scalar=FloatAttr(constant, 64))
    return target, [spread if not isinstance(s, View) else s for s in sources], {}


def _filled(
    emitter: Emitter, op: Operation, machine: Machine, source: View | float, dst: View
) -> View:
    """`source`, or for a constant a buffer shaped as `dst` that `npu.vec.dup` fills with it."""
    if isinstance(source, View):
        return source
    filled = _temporary(emitter, dst.space, dst.shape, dst.base_type.get_element_type())
    _require_vector(op, machine, npu.VecDupOp, [filled])
    emit_vector(emitter, op, machine, npu.VecDupOp, [], filled, scalar=FloatAttr(source, 64))
    return filled


def _temporary(emitter: Emitter, space: str, shape: Sequence[int], element_type: Attribute) -> View:
    """A new buffer in `space`, allocated at the top of the function (npu-plan-memory places it)."""
    function = _enclosing_function(emitter.point)
    alloc = memref.AllocOp(
        [], [], MemRefType(element_type, list(shape), memory_space=StringAttr(space))
    )
    emitter.at(InsertPoint.at_start(function.body.block)).insert(alloc)
    return view_of(alloc.memref, alloc)


def _enclosing_function(point: InsertPoint) -> func.FuncOp:
    op = point.block.parent_op()
    while not isinstance(op, func.FuncOp):
        op = op.parent_op()
    return op


# -- reductions --------------------------------------------------------- #


def _lower_reduction(
    emitter: Emitter, op: Operation, machine: Machine, body: list[Operation], loops: list[View]
):
    """out[r] (+|max)= reduce(x[r, :]) over the innermost loop dimension (`loops`: the input and output
    views): reduce into a buffer, then combine."""
    reduced = [d for d, it in enumerate(op.get_iterator_types()) if str(it.data) == "reduction"]
    if len(body) != 1 or type(body[0]) not in _REDUCTIONS or len(loops) != 2:
        raise error_at(
            op, f"{op.name}: machine '{machine.name}' has no vector reduction for this body"
        )
    if reduced != [len(loops[0].dims) - 1]:
        raise error_at(
            op,
            f"{op.name}: the vector unit of machine '{machine.name}' reduces the innermost dimension only "
            f"(loop dims {reduced} are reductions)",
        )
    combiner, combine = _REDUCTIONS[type(body[0])]
    src, dst = loops
    out = dst.with_dims(dst.dims[:-1])
    if src.dims[-1].size == 1:
        # Rows of one element (a pool of a 1x1 map): each is its own reduction, combined into `out`
        # elementwise. A reduce instruction would read the rows as one block once the unit dim goes.
        _require_vector(op, machine, combine, [src, dst])
        emit_vector(emitter, op, machine, combine, [out, src.with_dims(src.dims[:-1])], out)
        return
    _require_vector(op, machine, npu.VecReduceOp, [src, dst])
    _require_vector(op, machine, combine, [dst])
    partial = _temporary(emitter, dst.space, out.shape, dst.base_type.get_element_type())
    partial_loops = partial.with_dims([*partial.dims, dst.dims[-1]])
    width = src.dims[-1].size
    lanes = machine.vector.lanes(max(_element_bytes(src), _element_bytes(dst)))
    props = {"combiner": StringAttr(combiner)}
    if width <= lanes:
        emit_vector(emitter, op, machine, npu.VecReduceOp, [src], partial_loops, single=1, **props)
    elif _whole_block_levels(width, lanes):
        _reduce_long_rows(emitter, src, partial, lanes, props)
    else:
        _reduce_columns(emitter, op, machine, src, out, combine, lanes, props)
        return
    emit_vector(emitter, op, machine, combine, [out, partial], out)


def _whole_block_levels(width: int, lanes: int) -> bool:
    """Whether rows of `width` reduce to at most `lanes` partials by levels of whole blocks."""
    while width > lanes:
        if width % lanes:
            return False
        width //= lanes
    return True


def _reduce_long_rows(
    emitter: Emitter, src: View, partial: View, lanes: int, props: dict[str, Attribute]
) -> None:
    """Rows longer than the lanes: one partial per block, level by level, then each row's last partials into `partial`.

    Every step writes from an aligned start (element 0 of a buffer, or a row of
    partials); a row's single result at an arbitrary element would not be.
    """
    rows = prod(src.shape[:-1])
    element_type = partial.base_type.get_element_type()
    width = src.dims[-1].size // lanes
    partials = _temporary(emitter, partial.space, [rows * width], element_type)
    if (
        len(merged_groups(squeezed([src]))) == 1
    ):  # rows back to back: every block in one instruction
        _insert(emitter, npu.VecReduceOp, [src], partials, repeat=rows * width, **props)
    else:
        sizes = src.shape[:-1]
        slots = partials.with_dims(
            [Dim(0, size, prod(sizes[d + 1 :]) * width) for d, size in enumerate(sizes)]
        )
        inner, (row, slot) = loop_over(emitter, [src, slots], list(range(len(sizes))))
        _insert(inner, npu.VecReduceOp, [row], slot, repeat=width, **props)
    while width > lanes:
        width //= lanes
        fewer = _temporary(emitter, partial.space, [rows * width], element_type)
        _insert(emitter, npu.VecReduceOp, [partials], fewer, repeat=rows * width, **props)
        partials = fewer
    stride = {"stride": [width, 1]} if rows > 1 else {}
    repeat = rows if rows > 1 else None
    _insert(
        emitter, npu.VecReduceOp, [partials], partial, repeat=repeat, mask=width, **stride, **props
    )


def _reduce_columns(
    emitter: Emitter,
    op: Operation,
    machine: Machine,
    src: View,
    out: View,
    combine: type[npu.VectorOperation],
    lanes: int,
    props: dict[str, Attribute],
) -> None:
    """Rows that are not whole blocks: per block column, one partial per row (each reduce starts in row 0,
    aligned), each column of partials then combined into `out`."""
    views = squeezed([src, out.with_dims([*out.dims, Dim(None, src.dims[-1].size)])])
    groups = merged_groups(views)
    if len(groups) > 2:
        raise error_at(op, f"{op.name}: loop-to-npu reduces rows of evenly spaced elements only")
    rows, (row_stride, _) = group_extent(views, groups[0]) if len(groups) == 2 else (1, (0, 0))
    width = views[0].dims[-1].size
    element_type = out.base_type.get_element_type()
    per_block = max(1, machine.memories[out.space].alignment // npu.element_bytes(element_type))
    pitch = -(-rows // per_block) * per_block  # each column of partials starts aligned
    columns = -(-width // lanes)
    partials = _temporary(emitter, out.space, [columns, pitch], element_type)
    row_dims = [
        Dim(1, d.size, prod(d2.size for d2 in out.dims[i + 1 :])) for i, d in enumerate(out.dims)
    ]
    for column in range(columns):
        start, active = column * lanes, min(lanes, width - column * lanes)
        (block,) = _shift_flat(views[:1], groups[-1], start)
        slot = partials.shifted(partials.dims[0], Linear(column))
        _insert(
            emitter,
            npu.VecReduceOp,
            [block],
            slot,
            repeat=rows if rows > 1 else None,
            mask=active if active < lanes else None,
            stride=[row_stride, 1] if rows > 1 else None,
            **props,
        )
        emit_vector(emitter, op, machine, combine, [out, slot.with_dims(row_dims)], out)


def _element_bytes(view: View) -> int:
    return npu.element_bytes(view.base_type.get_element_type())


# -- instruction emission ------------------------------------------------ #


def emit_vector(
    emitter: Emitter,
    op: Operation,
    machine: Machine,
    kind: type[npu.VectorOperation],
    sources: list[View],
    dst: View,
    single: int | None = None,
    **props: Attribute,
) -> None:
    """`kind` over views sharing one (loop) shape; operand `single` takes one element per repetition."""
    if single is None:
        sources = [
            _spread(emitter, op, machine, s, dst) if _broadcasts_in_block(s, dst) else s
            for s in sources
        ]
    ordered = _in_destination_order([*sources, dst])
    views = squeezed(ordered)
    lanes = machine.vector.lanes(max(_element_bytes(v) for v in views))
    groups = merged_groups(views)
    if not groups:
        _insert(emitter, kind, views[:-1], views[-1], mask=1 if lanes > 1 else None, **props)
        return
    width, inner = group_extent(views, groups[-1])
    strided = any(index != single and stride != 1 for index, stride in enumerate(inner))
    if strided and ordered[-1].dims[-1].size == 1:
        # Rows of one element (a 1x1 map's channels in a matrix accumulator padded along the map,
        # `n` apart): one masked lane per repetition, the repetitions walking the rows.
        inner_emitter, views = loop_over(
            emitter, views, [d for group in groups[:-1] for d in group]
        )
        _insert(
            inner_emitter,
            kind,
            views[:-1],
            views[-1],
            repeat=width if width > 1 else None,
            mask=1 if lanes > 1 else None,
            stride=inner if width > 1 else None,
            **props,
        )
        return
    for index, stride in enumerate(inner):
        if index != single and stride != 1:
            raise error_at(
                op,
                f"{op.name}: operand #{index} is not contiguous in its innermost dimension "
                f"(stride {stride}); the vector unit reads blocks of adjacent elements",
            )
    rows, row_strides = group_extent(views, groups[-2]) if len(groups) > 1 else (1, None)
    if rows == 1 and width > lanes:  # one long row: whole blocks back to back, then a masked tail
        inner_emitter, views = loop_over(
            emitter, views, [d for group in groups[:-1] for d in group]
        )
        full, tail = divmod(width, lanes)
        strides = (
            None if single is None else [0 if i == single else lanes for i in range(len(views))]
        )
        _insert(
            inner_emitter,
            kind,
            views[:-1],
            views[-1],
            repeat=full if full > 1 else None,
            stride=strides,
            **props,
        )
        if tail:
            views = _shift_flat(views, groups[-1], full * lanes)
            _insert(inner_emitter, kind, views[:-1], views[-1], mask=tail, **props)
        return
    # Rows: one instruction per block column, repeating down the rows, so each starts in row 0 (aligned).
    inner_emitter, views = loop_over(emitter, views, [d for group in groups[:-2] for d in group])
    for start in range(0, width, lanes):
        active = min(lanes, width - start)
        _insert(
            inner_emitter,
            kind,
            *_split(_shift_flat(views, groups[-1], start)),
            repeat=rows if rows > 1 else None,
            mask=active if active < lanes else None,
            stride=row_strides if rows > 1 else None,
            **props,
        )


def _in_destination_order(views: list[View]) -> list[View]:
    """The views with their dims ordered as the destination lays them out (outermost first), so a
    transposed buffer is still walked in blocks of adjacent elements; elementwise order is free."""
    strides = views[-1].element_strides()
    order = sorted(range(len(strides)), key=lambda d: -strides[d])
    return [v.with_dims([v.dims[d] for d in order]) for v in views]


def _split(views: list[View]) -> tuple[list[View], View]:
    return views[:-1], views[-1]


def _insert(
    emitter: Emitter, kind: type[npu.VectorOperation], sources: Sequence[View], dst: View, **props
) -> None:
    options = {key: props.pop(key) for key in ("repeat", "mask", "stride") if key in props}
    emitter.insert(
        kind.from_buffers(
            [(s.base, emitter.indices(s)) for s in sources],
            (dst.base, emitter.indices(dst)),
            **options,
            **props,
        )
    )


def _shift_flat(views: list[View], group: list[int], elements: int) -> list[View]:
    """The views moved `elements` along a merged (row-major contiguous) group of dimensions."""
    for dim in reversed(group):
        size = views[0].dims[dim].size
        elements, remainder = divmod(elements, size)
        views = [v.shifted(v.dims[dim], Linear(remainder)) for v in views]
    return views


def _broadcasts_in_block(source: View, dst: View) -> bool:
    """Whether `source` repeats one element along the innermost non-unit dimension of `dst`."""
    dims = [d for d, dim in enumerate(dst.dims) if dim.size > 1]
    return bool(dims) and source.element_strides()[dims[-1]] == 0


def _spread(emitter: Emitter, op: Operation, machine: Machine, source: View, dst: View) -> View:
    """`source` broadcast into a new buffer shaped like `dst`, with `npu.vec.broadcast`."""
    spread = _temporary(emitter, dst.space, dst.shape, source.base_type.get_element_type())
    _require_vector(op, machine, npu.VecBroadcastOp, [source, spread])
    emit_vector(emitter, op, machine, npu.VecBroadcastOp, [source], spread, single=0)
    return spread
