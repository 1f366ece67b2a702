"""`loop-promote-to-memory-space{machine=NAME}`: give every compute op its operands in the spaces its unit
reads, staged there with DMA copies, and place every buffer in a memory space of the machine.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, MemRefType, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.ir import Block, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from ziggurat.diagnostics import error_at
from ziggurat.dialects.loop import SHARED_BY_CORES_ATTR, CopyAsyncOp, CopyOp, WaitOp
from ziggurat.dialects.tile import GROUP_ATTR
from ziggurat.dtypes import is_float
from ziggurat.ir.contraction import is_contraction, matrix_operands
from ziggurat.locations import locate
from ziggurat.machine import Machine, load_machine
from ziggurat.transforms.loop.buffers import (
    VIEW_OPS,
    byte_size,
    contiguous,
    hoist_allocs,
    in_space,
    move_to_space,
    root_of,
    space_of,
    users_through_views,
    valid_region,
    written_buffers,
)
from ziggurat.transforms.loop.hoist_copies import invariant_definitions
from ziggurat.transforms.loop.memory_routes import hops, route
from ziggurat.transforms.loop.staging import (
    StagingBuffers,
    aligned,
    async_copy,
    check_fits,
    checked_route,
    copy_route,
    engine_can,
    static_shape,
)
from ziggurat.transforms.tile.tile_sizes import round_product

CAST_OPS = (
    arith.ExtFOp,
    arith.TruncFOp,
    arith.ExtSIOp,
    arith.ExtUIOp,
    arith.TruncIOp,
    arith.SIToFPOp,
    arith.FPToSIOp,
)


def is_cast_only(op: Operation) -> bool:
    """A generic that only converts its one input's element type, element by element."""
    if not isinstance(op, linalg.GenericOp) or len(op.inputs) != 1 or len(op.outputs) != 1:
        return False
    maps = [m.data for m in op.indexing_maps]
    if any(m != AffineMap.identity(m.num_dims) for m in maps):
        return False
    body = list(op.body.block.ops)
    return (
        len(body) == 2
        and isinstance(body[0], CAST_OPS)
        and body[0].operands[0] == op.body.block.args[0]
        and body[1].operands[0] == body[0].results[0]
    )


def contraction_shapes(op: LinalgStructuredOperation, machine: Machine) -> list[tuple[int, ...]]:
    """The operands' shapes (in operand order) rounded up to the matrix unit's M, N, K multiples.

    Which input is A (M x K) and which B (K x N) is `matrix_operands`.

    Where the M (N, K) dims together are not a multiple of the unit's m (n, k), some of
    them are rounded up, padding least (`tile_sizes.round_product`: a conv tile's 7x7 output
    points to 8x8, not 7x16); an operand whose map is not a projected permutation keeps its
    shape.
    """
    maps = [m.data for m in op.get_indexing_maps()]
    operands = list(op.operands)
    if not all(all(isinstance(r, AffineDimExpr) for r in m.results) for m in maps):
        return [static_shape(v) for v in operands]
    extents: dict[int, int] = {}
    for value, indexing in zip(operands, maps):
        for size, result in zip(static_shape(value), indexing.results):
            extents[result.position] = size
    dims = [{r.position for r in m.results} for m in maps]
    a, b = matrix_operands(op)
    lhs, rhs, acc = dims[a], dims[b], dims[2]
    in_type = str(op.inputs[0].type.element_type)
    acc_type = str(op.outputs[0].type.element_type)
    unit = machine.matrix
    unit_m, unit_n, unit_k = unit.instruction_shape(in_type, acc_type)
    for kind, multiple in (
        ((lhs & acc) - rhs, unit_m),
        ((rhs & acc) - lhs, unit_n),
        ((lhs & rhs) - acc, unit_k),
    ):
        if kind and math.prod(extents[d] for d in kind) % multiple:
            extents.update(round_product(extents, sorted(kind), multiple))
    return [tuple(extents[r.position] for r in indexing.results) for indexing in maps]


def _padding(shape: Sequence[int], padded: Sequence[int]) -> list[int]:
    return [v for size, target in zip(shape, padded) for v in (0, target - size)]


def _zero(element_type) -> arith.ConstantOp:
    if is_float(element_type):
        return arith.ConstantOp(FloatAttr(0.0, element_type))
    return arith.ConstantOp(IntegerAttr(0, element_type))


def _insert(ops: Operation | Sequence[Operation], point: InsertPoint, anchor: Operation) -> None:
    """Insert ops that serve `anchor`, with its location (MLIR's convention)."""
    ops = [ops] if isinstance(ops, Operation) else list(ops)
    for created in ops:
        locate(created, anchor.location)
    Rewriter.insert_op(ops, point)


def _copy(
    source: SSAValue,
    destination: SSAValue,
    at: InsertPoint,
    anchor: Operation,
    pad: list[int] | None = None,
) -> InsertPoint:
    """Insert a copy and its wait at `at`; the point after them."""
    copy, wait = async_copy(source, destination, pad)
    _insert([copy, wait], at, anchor)
    return InsertPoint.after(wait)


@dataclass
class _Want:
    """Where one operand of a compute op must be: the space, and its (padded) shape there."""

    space: str
    shape: tuple[int, ...]


class _Promoter:
    def __init__(self, machine: Machine, func: FuncOp):
        self.machine = machine
        self.func = func
        self.vector_space = machine.vector.spaces[0]
        self.buffers = StagingBuffers(machine, func)
        self.full: dict[SSAValue, SSAValue] = {}
        """Valid-region view of a padded accumulator -> the whole padded buffer."""
        self.readers: Counter[tuple] = Counter()
        """How many compute ops read each view of a buffer nothing writes, by `_view_key` and group."""
        self.unwritten: dict[SSAValue, bool] = {}
        """`_read_only` by root, asked once: staging only adds reads of a buffer nothing writes
        (and keeps the writes of one that is written), so the answer holds for the whole run."""
        self.resident: dict[tuple, tuple[SSAValue, Operation]] = {}
        """Staged copies of unchanging operands by what they hold (`_view_key`, group): the buffer, and
        the op it was staged for, so a later op reading the same bytes reads that buffer."""

    def run(self) -> None:
        for op in self.func.walk():
            for value in list(op.operands) + list(op.results):
                if isinstance(value.type, MemRefType) and any(
                    d < 0 for d in value.type.get_shape()
                ):
                    raise error_at(
                        op, f"loop-promote-to-memory-space needs static shapes, got {value.type}"
                    )
        hoist_allocs(self.func)
        compute = [
            op
            for op in self.func.walk()
            if isinstance(op, LinalgStructuredOperation)
            and any(isinstance(v.type, MemRefType) for v in op.operands)
        ]
        for op in compute:
            if is_contraction(op):
                self.place_accumulator(op)
        compute = [op for op in compute if not self.fold_cast(op)]
        self.place_unplaced(compute)
        self.readers = Counter(
            (_view_key(value), op.attributes.get(GROUP_ATTR))
            for op in compute
            for value in op.operands
            if isinstance(value.type, MemRefType) and self.read_only(root_of(value))
        )
        for op in compute:
            self.stage(op)

    # -- placement

    def place_accumulator(self, op: LinalgStructuredOperation) -> None:
        acc = op.outputs[0]
        root = root_of(acc)
        c_space = self.machine.matrix.c_space
        global_space = self.machine.global_memory().name
        # tile-to-loop's intermediates: unplaced inside tile loops, in the global space outside them.
        if space_of(root) not in (None, global_space) or not isinstance(root.owner, memref.AllocOp):
            return
        padded = contraction_shapes(op, self.machine)[2]
        if root is not acc or padded == static_shape(root):
            check_fits(self.machine, op, "the accumulator", in_space(root.type, c_space))
            move_to_space(root, c_space)
            return
        assert isinstance(root.type, MemRefType)
        full = self.buffers.top.alloc(
            contiguous(root.type.element_type, padded, c_space), op.location
        )
        check_fits(self.machine, op, "the accumulator", full.type)
        view = valid_region(full, static_shape(root))
        _insert(view, InsertPoint.after(full.owner), op)
        root.replace_all_uses_with(view.result)
        Rewriter.erase_op(root.owner)
        self.full[view.result] = full

    def fold_cast(self, op: Operation) -> bool:
        """Replace a cast-only generic between two spaces by a copy, when the engine casts."""
        if not is_cast_only(op):
            return False
        source, target = op.operands
        source_space = space_of(source)
        target_space = space_of(target) or self.vector_space
        engine = self.machine.dma_for(source_space, target_space) if source_space else None
        if engine is None or not engine.cast or source_space == target_space:
            return False
        if space_of(target) is None:
            move_to_space(root_of(target), target_space)
        copy = CopyAsyncOp(op.operands[0], op.operands[1])
        wait = WaitOp(copy.token)
        for created in (copy, wait):
            locate(created, op.location)
        Rewriter.replace_op(op, [copy, wait], [])
        return True

    def place_unplaced(self, compute: list[Operation]) -> None:
        global_space = self.machine.global_memory().name
        allocs = [
            op.memref
            for op in self.func.walk()
            if isinstance(op, memref.AllocOp) and space_of(op.memref) in (None, global_space)
        ]
        computing = set(compute)  # asked of every user of every buffer
        for buffer in allocs:
            if SHARED_BY_CORES_ATTR in buffer.owner.attributes:
                # several cores read it: global memory, which they all see
                if space_of(buffer) is None:
                    move_to_space(buffer, global_space)
                continue
            space = self.space_for(buffer, computing)
            if space is not None and space != space_of(buffer):
                move_to_space(buffer, space)

    def space_for(self, buffer: SSAValue, compute: set[Operation]) -> str | None:
        """Where an intermediate goes; None leaves one in the global space where it is."""
        users = list(users_through_views(buffer))
        writers = [op for op, view in users if view in written_buffers(op)]
        placed = space_of(buffer) is not None
        if not placed and any(op in compute for op in writers):
            return self.vector_space
        copies = [op for op in writers if isinstance(op, CopyOp | CopyAsyncOp)]
        readers = [(op, view) for op, view in users if op in compute]
        if copies and len(copies) == len(writers) and readers:
            space = self.next_to_readers(buffer, copies, readers)
            if space is not None:
                return space
        return None if placed else self.machine.global_memory().name

    def next_to_readers(
        self, buffer: SSAValue, copies: list[Operation], readers: list[tuple[Operation, SSAValue]]
    ) -> str | None:
        """For a buffer only copies fill (e.g. a padded conv input): the first space on the route
        from the copies' source to its first reader's space, if that engine can do the copies
        (pad, cast) and the buffer fits there."""
        sources = {space_of(copy.source) for copy in copies}
        op, view = readers[0]
        want = self.wanted(op)[list(op.operands).index(view)]
        if len(sources) != 1 or None in sources or want is None:
            return None
        source = sources.pop()
        chain = route(self.machine, source, want.space)
        if chain is None:
            return None
        space = chain[min(1, len(chain) - 1)]
        engine = self.machine.dma_for(source, space)
        if engine is None or any(not engine_can(engine, copy) for copy in copies):
            return None
        if byte_size(in_space(buffer.type, space)) > self.machine.memories[space].capacity:
            return None
        if space == want.space and not all(
            aligned(self.machine, view, space) for _, view in readers
        ):
            return (
                None  # its units would read windows at unaligned starts: stage each window instead
            )
        return space

    # -- staging

    def wanted(self, op: Operation) -> list[_Want | None]:
        """Per operand of a compute op: where it must be and in what shape (None for scalars)."""
        operands = list(op.operands)
        if is_contraction(op):
            unit = self.machine.matrix
            shapes = contraction_shapes(op, self.machine)
            a, _ = matrix_operands(op)
            spaces = (unit.a_space, unit.b_space) if a == 0 else (unit.b_space, unit.a_space)
            return [_Want(s, shape) for s, shape in zip((*spaces, unit.c_space), shapes)]
        if isinstance(op, linalg.FillOp) and space_of(op.outputs[0]) == self.machine.matrix.c_space:
            # The accumulator's zero fill stays in c_space: loop-to-npu makes it a non-accumulating mma.
            full = self.full.get(op.outputs[0], op.outputs[0])
            return [None] * len(op.inputs) + [
                _Want(self.machine.matrix.c_space, static_shape(full))
            ]
        return [
            _Want(
                self.vector_space if space_of(v) not in self.machine.vector.spaces else space_of(v),
                static_shape(v),
            )
            if isinstance(v.type, MemRefType)
            else None
            for v in operands
        ]

    def stage(self, op: LinalgStructuredOperation) -> None:
        """Give each operand of `op` a buffer where its unit reads it; a value the op uses twice
        (e.g. in place, as input and output) gets one buffer, copied in and out as needed."""
        staged: dict[SSAValue, SSAValue] = {}
        self.buffers.start()
        after = InsertPoint.after(op)
        operands = list(op.operands)
        outputs = set(range(len(op.inputs), len(operands)))
        reads = {i: is_contraction(op) or bool(op.body.block.args[i].uses) for i in outputs}
        for index, (value, want) in enumerate(zip(operands, self.wanted(op))):
            if want is None:
                continue
            full = self.full.get(value)
            if (
                full is not None
                and space_of(full) == want.space
                and static_shape(full) == want.shape
            ):
                op.operands[index] = full
                continue
            if space_of(value) == want.space and static_shape(value) == want.shape:
                continue
            if value not in staged:
                uses = [i for i, v in enumerate(operands) if v is value]
                read = any(i not in outputs or reads[i] for i in uses)
                written = any(i in outputs for i in uses)
                staged[value], after = self.stage_operand(op, index, want, read, written, after)
            op.operands[index] = staged[value]

    def stage_operand(
        self, op: Operation, index: int, want: _Want, reads: bool, writes: bool, after: InsertPoint
    ) -> tuple[SSAValue, InsertPoint]:
        """Copy operand `index` in along its route (if the op reads it) and back out (if it writes it).

        Returns the buffer the op uses and the point after the copies out.
        """
        value = op.operands[index]
        shape = static_shape(value)
        element_type = value.type.element_type
        source = space_of(value) or self.machine.global_memory().name
        what = f"operand #{index} of {op.name}"
        if source != want.space:
            chain = checked_route(self.machine, op, source, want.space, what)
        else:
            chain = copy_route(self.machine, op, source, source)
        steps = hops(self.machine, chain)
        needs_pad = tuple(want.shape) != shape
        pad_hop = (
            next((h for h, (_, _, e) in enumerate(steps) if e.pad), None) if needs_pad else None
        )
        if not reads:
            buffer = self.new_buffer(op, what, element_type, want.shape, want.space)
            return buffer, self.copy_out(op, buffer, value, needs_pad, after, what)
        current = value
        own = len(steps) > 1 and not writes and self.read_only(root_of(value))
        key = self.resident_key(op, value) if own else None
        for h, (_, space, _) in enumerate(steps):
            last = h == len(steps) - 1
            padded_here = pad_hop is not None and h >= pad_hop or (last and needs_pad)
            staged_shape = want.shape if padded_here else shape
            if key is not None and h == 0:
                staged = self.resident.get(key)
                # what an op of this block (or one it holds) staged is there whenever `op` runs
                if (
                    staged is not None
                    and staged[1].parent_block().find_ancestor_op_in_block(op) is not None
                ):
                    current = staged[0]  # the same bytes, staged by an earlier op: read them there
                    continue
                buffer = self.resident_buffer(op, what, element_type, staged_shape, space)
            else:
                buffer = self.new_buffer(
                    op, what, element_type, staged_shape, space, alternate=own and h == 0
                )
            pad = _padding(shape, want.shape) if pad_hop == h else None
            target = buffer
            if last and needs_pad and pad_hop is None:
                # No engine on the route pads: zero the buffer, then copy into its valid region.
                if space not in self.machine.vector.spaces:
                    raise error_at(
                        op,
                        f"{what} ({list(shape)}) must be padded to {list(want.shape)} for the matrix unit, but no "
                        f"engine on the route {' -> '.join(chain)} pads and no vector unit can zero '{space}' "
                        f"on machine '{self.machine.name}'; choose tile sizes that are multiples of the unit's",
                    )
                zero = _zero(element_type)
                _insert(
                    [zero, linalg.FillOp([zero.result], [buffer], res=[])],
                    InsertPoint.before(op),
                    op,
                )
                view = valid_region(buffer, shape)
                _insert(view, InsertPoint.before(op), op)
                target = view.result
            _copy(current, target, InsertPoint.before(op), op, pad)
            if key is not None and h == 0:
                self.resident[key] = (buffer, op)
            current = buffer
        if writes:
            after = self.copy_out(op, buffer, value, needs_pad, after, what)
        return buffer, after

    def copy_out(
        self,
        op: Operation,
        buffer: SSAValue,
        value: SSAValue,
        padded: bool,
        after: InsertPoint,
        what: str,
    ) -> InsertPoint:
        shape = static_shape(value)
        current = buffer
        if padded:
            view = valid_region(buffer, shape)
            _insert(view, after, op)
            after = InsertPoint.after(view)
            current = view.result
        home = space_of(value) or self.machine.global_memory().name
        if route(self.machine, space_of(buffer), home) is None and self.redirect_later_uses(
            op, value, buffer
        ):
            return after
        chain = checked_route(self.machine, op, space_of(buffer), home, what)
        for _, space, _ in hops(self.machine, chain)[:-1]:
            hop = self.new_buffer(op, what, value.type.element_type, shape, space)
            after = _copy(current, hop, after, op)
            current = hop
        return _copy(current, value, after, op)

    def redirect_later_uses(self, op: Operation, value: SSAValue, buffer: SSAValue) -> bool:
        """Where an op updates an intermediate in place that cannot be copied back (davinci: a bias
        added to the accumulator in ub cannot return to l0c), the ops after it in its block read
        the new buffer instead. Only when every use of the buffer is in this block (nested ops
        included), the later ones through `value` itself, and, in a loop body, the first use is a
        fill (so nothing is carried from one iteration to the next through the old buffer)."""
        root = root_of(value)
        block = op.parent_block()
        if not isinstance(root.owner, memref.AllocOp) or block is None:
            return False
        anchored = [
            (block.find_ancestor_op_in_block(user), user, view)
            for user, view in users_through_views(root)
        ]
        if any(a is None for a, _, _ in anchored):
            return False
        position = _positions_around(op, {a for a, _, _ in anchored})
        later = [(user, view) for a, user, view in anchored if position[a] > position[op]]
        if any(view is not value for _, view in later):
            return False
        first = min(anchored, key=lambda entry: position[entry[0]])[1]
        if isinstance(block.parent_op(), scf.ForOp) and not isinstance(first, linalg.FillOp):
            return False
        for user, _ in later:
            for index, operand in enumerate(user.operands):
                if operand is value:
                    user.operands[index] = buffer
        self.buffers.forget(buffer)
        return True

    # -- buffers

    def new_buffer(
        self,
        op: Operation,
        what: str,
        element_type,
        shape: Sequence[int],
        space: str,
        alternate: bool = False,
    ) -> SSAValue:
        """A staging buffer from the pool of `op`'s block and fusion group (`StagingBuffers.take`)."""
        return self.buffers.take(
            op, what, element_type, shape, space, op.attributes.get(GROUP_ATTR), alternate
        )

    def read_only(self, root: SSAValue) -> bool:
        if root not in self.unwritten:
            self.unwritten[root] = _read_only(root)
        return self.unwritten[root]

    def resident_key(self, op: Operation, value: SSAValue) -> tuple | None:
        """For an operand whose bytes nothing writes (`read_only`, which the caller checked: a view
        of a weight) and that is worth keeping (the same in every iteration of the loop around
        `op`, or, in straight-line code, read by another op of the group too): what identifies
        those bytes within the group; None for any other."""
        key = _view_key(value), op.attributes.get(GROUP_ATTR)
        loop = op.parent_op()
        if isinstance(loop, scf.ForOp):
            return key if invariant_definitions(value, loop, []) else None
        return (
            key if self.readers[key] > 1 else None
        )  # straight-line: only if another op reads them too

    def resident_buffer(
        self, op: Operation, what: str, element_type, shape: Sequence[int], space: str
    ) -> SSAValue:
        """A staging buffer of its own for an operand whose bytes do not change while its group
        runs (`resident_key`): `loop-hoist-copies` can then load it once before the loop around `op`
        instead of every iteration, and later ops reading the same bytes (a conv's peeled row
        tiles) read it there, where a pooled buffer would be overwritten by the next op's operand
        (a conv's window points share one type). Only the first hop of a route, the staging space
        that the tile sizes budget for every window point's weights (`tile_sizes.conv_options`)."""
        memref_type = contiguous(element_type, shape, space)
        check_fits(self.machine, op, f"the buffer for {what}", memref_type)
        return self.buffers.top.alloc(memref_type, op.location)


def _positions_around(op: Operation, ops: set[Operation]) -> dict[Operation, int]:
    """The positions of `ops`, ops of `op`'s block, and of `op` itself, relative to `op`: a walk
    out from `op` both ways until it has found them all (they are near it, in a block that may
    hold a whole network)."""
    position = {op: 0}
    missing = ops - {op}
    before, after, distance = op.prev_op, op.next_op, 0
    while missing and (before is not None or after is not None):
        distance += 1
        if before is not None:
            if before in missing:
                position[before] = -distance
                missing.discard(before)
            before = before.prev_op
        if after is not None:
            if after in missing:
                position[after] = distance
                missing.discard(after)
            after = after.next_op
    return position


def _view_key(value: SSAValue) -> tuple:
    """The root of a view and each view op on the way to it, with its index operands and
    properties: equal keys are views of the same bytes."""
    parts: list = []
    while isinstance(value.owner, VIEW_OPS):
        owner = value.owner
        properties = tuple(sorted((name, str(attr)) for name, attr in owner.properties.items()))
        parts.append((owner.name, tuple(owner.operands[1:]), properties, str(value.type)))
        value = owner.operands[0]
    return value, tuple(parts)


def _read_only(root: SSAValue) -> bool:
    """Whether nothing writes `root` (a function argument, or a global, that no op writes)."""
    owner = root.owner
    argument = isinstance(owner, Block) and isinstance(owner.parent_op(), FuncOp)
    if not (isinstance(owner, memref.GetGlobalOp) or argument):
        return False
    return not any(view in written_buffers(user) for user, view in users_through_views(root))


@dataclass(frozen=True)
class PromoteToMemorySpacePass(ModulePass):
    """Place every buffer in a memory space of the machine and stage compute operands with DMA copies.

    A contraction (`ziggurat.ir.contraction.is_contraction`) reads its A operand in the
    matrix unit's `a_space`, its B operand in `b_space` and accumulates in `c_space`;
    every other `linalg` op on memrefs (elementwise, reduction, fill) works in the
    vector unit's first space. An operand elsewhere is staged along the shortest chain
    of DMA paths (`memory_routes.route`) with `loop.copy_async` + `loop.wait` right
    before its use, one local buffer per hop; an output is copied back along the route
    to where it was. Contraction buffers are rounded up to multiples of the unit's
    M/N/K (the copy in pads with zeros at the first engine that pads; the accumulator
    is read back through a subview of its valid region). Staging buffers are shared by
    the ops of a group in turn, except at the first hop of an operand whose bytes
    nothing writes (a conv window point's weight tile): there the points take two
    buffers in turn, as conv tile sizes budget for every point's weights, so the next
    point's load from global memory need not wait for this one's copy onwards; and
    where the enclosing loop reads those bytes unchanged (while it walks output rows)
    or another op of the group reads them too (the conv's peeled row tiles), they get
    a buffer of their own, staged once: later ops read them there and `loop-hoist-copies`
    loads them once before the loop.

    Unplaced allocs (tile-to-loop's intermediates) are placed: a contraction's
    accumulator in `c_space` (so an elementwise consumer in the same tile reads it with
    one copy c_space -> vector space, never through global memory), a buffer a vector
    op writes in the vector space, a buffer only copies fill next to its readers (one
    hop from the copy's source towards them), anything else in the global space. A
    cast-only generic from one space to another becomes a copy when the engine between
    them casts (`cast = true`). All allocs end up at the top of the function; there
    are no deallocs. The program's own copies keep their spaces: `loop-legalize-copies`
    then splits those that no single engine does. On davinci, after tile-to-loop:

        scf.for %i = ... {
          %acc = memref.alloc() : memref<32x32xf32>
          linalg.fill ins(%zero : f32) outs(%acc : memref<32x32xf32>)
          scf.for %k = ... {
            %a = memref.subview %A[%i, %k] [32, 32] [1, 1] : ... "gm"> to ... "gm">
            linalg.generic {contraction} ins(%a, %b : ...) outs(%acc : memref<32x32xf32>)
          }
          ...
        }

    becomes

        %acc = memref.alloc() : memref<32x32xf32, "l0c">
        %l1a = memref.alloc() : memref<32x32xf16, "l1">
        %l0a = memref.alloc() : memref<32x32xf16, "l0a">
        ...
        scf.for %i = ... {
          linalg.fill ins(%zero : f32) outs(%acc : memref<32x32xf32, "l0c">)
          scf.for %k = ... {
            %a = memref.subview %A[%i, %k] [32, 32] [1, 1] : ...
            %t0 = loop.copy_async %a -> %l1a : ... "gm"> -> memref<32x32xf16, "l1">
            loop.wait %t0 : !loop.token
            %t1 = loop.copy_async %l1a -> %l0a : memref<32x32xf16, "l1"> -> memref<32x32xf16, "l0a">
            loop.wait %t1 : !loop.token
            ...
            linalg.generic {contraction} ins(%l0a, %l0b : ...) outs(%acc : memref<32x32xf32, "l0c">)
          }
        }

    Errors, at the op: a space the value cannot reach by DMA, a buffer larger than its
    space, a dynamic shape.
    """

    name = "loop-promote-to-memory-space"

    machine: str
    """A preset name (davinci, systolic, tensorcore) or a machine TOML file."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        machine = load_machine(self.machine)
        for func in [f for f in op.walk() if isinstance(f, FuncOp) and f.body.blocks]:
            _Promoter(machine, func).run()
