"""`promote-to-memory-space{machine=NAME}`: give every compute op its operands in the spaces its unit reads.

docs/lowering.md, section 5. A contraction (a `linalg.matmul`, or a generic
with two inputs, a reduction and a multiplication) reads its lhs in the matrix
unit's `a_space`, its rhs in `b_space` and accumulates in `c_space`; every
other `linalg` op on memrefs (elementwise, reduction, fill) works in the vector
unit's first space. An operand elsewhere is staged along the shortest chain of
DMA paths (`memory_routes.route`) with `loop.copy_async` + `loop.wait` right
before its use, one local buffer per hop; an output is copied back along the
route to where it was. Contraction buffers are rounded up to multiples of the
unit's M/N/K (the copy in pads with zeros at the first engine that pads; the
accumulator is read back through a subview of its valid region). Staging
buffers are shared by the ops of a group in turn, except at the first hop of
an operand whose bytes nothing writes (a conv window point's weight tile): there
the points take two buffers in turn, as conv tile sizes budget for every point's
weights, so the next point's load from global memory need not wait for this
one's copy onwards; and where the enclosing loop reads those bytes unchanged
(while it walks output rows) or another op of the group reads them too (the
conv's peeled row tiles), they get a buffer of their own, staged once: later
ops read them there and `hoist-copies` loads them once before the loop.

Unplaced allocs (tile-to-loop's intermediates) are placed: a contraction's
accumulator in `c_space` (so an elementwise consumer in the same tile reads it
with one copy c_space -> vector space, never through global memory), a buffer
a vector op writes in the vector space, a buffer only copies fill next to its
readers (one hop from the copy's source towards them), anything else in the
global space. A cast-only generic from one space to another becomes a copy
when the engine between them casts (`cast = true`). All allocs end up at the
top of the function; there are no deallocs.

Before (davinci), after tile-to-loop:

    scf.for %i = ... {
      %acc = memref.alloc() : memref<32x32xf32>
      linalg.fill ins(%zero : f32) outs(%acc : memref<32x32xf32>)
      scf.for %k = ... {
        %a = memref.subview %A[%i, %k] [32, 32] [1, 1] : ... "gm"> to ... "gm">
        linalg.generic {contraction} ins(%a, %b : ...) outs(%acc : memref<32x32xf32>)
      }
      ...
    }

After:

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

Errors, at the op: a space the value cannot reach by DMA, a buffer larger than
its space, a dynamic shape.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import AffineMapAttr, FloatAttr, IntegerAttr, MemRefType, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from ziggurat.machine import DmaEngine, Machine, load_machine
from ziggurat.diagnostics import error_at
from ziggurat.dialects.loop import CopyAsyncOp, CopyOp, WaitOp
from ziggurat.dtypes import is_float
from ziggurat.lowering.loop_to_npu_matrix import contraction_roles
from ziggurat.lowering.loop_to_npu_matrix import is_contraction as is_matmul_like
from ziggurat.locations import locate
from ziggurat.transforms.loop.buffers import (
    VIEW_OPS,
    alloc_at_top,
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
from ziggurat.transforms.loop.memory_routes import describe_paths, hops, route
from ziggurat.transforms.tile.fit import does_not_fit
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


def is_contraction(op: Operation) -> bool:
    """What loop-to-npu lowers to the matrix unit (its own test, so both passes agree)."""
    return isinstance(op, LinalgStructuredOperation) and is_matmul_like(op)


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


def engine_can(engine: DmaEngine, copy: CopyOp | CopyAsyncOp) -> bool:
    """Whether `engine` does `copy` in one go: it pads if the copy pads, casts if it casts."""
    pads = any(p for pair in copy.padding() for p in pair)
    casts = copy.source.type.element_type != copy.destination.type.element_type
    return (engine.pad or not pads) and (engine.cast or not casts)


def first_hop(steps: list[tuple[str, str, DmaEngine]], accepts) -> int | None:
    """The index of the first hop whose (engine, destination space) `accepts`."""
    return next((h for h, (_, space, engine) in enumerate(steps) if accepts(engine, space)), None)


def cast_generic(source: SSAValue, destination: SSAValue) -> linalg.GenericOp:
    """An elementwise generic converting `source`'s elements into `destination`'s element type."""
    from_type, to_type = source.type.element_type, destination.type.element_type
    if is_float(from_type) and is_float(to_type):
        cast = arith.ExtFOp if to_type.bitwidth > from_type.bitwidth else arith.TruncFOp
    elif is_float(to_type):
        cast = arith.SIToFPOp
    elif is_float(from_type):
        cast = arith.FPToSIOp
    else:
        cast = arith.ExtSIOp if to_type.bitwidth > from_type.bitwidth else arith.TruncIOp
    block = Block(arg_types=[from_type, to_type])
    converted = cast(block.args[0], to_type)
    block.add_ops([converted, linalg.YieldOp(converted.result)])
    rank = source.type.get_num_dims()
    identity = AffineMapAttr(AffineMap.identity(rank))
    return linalg.GenericOp(
        [source], [destination], Region(block), [identity, identity], [IteratorTypeAttr.parallel()] * rank
    )


def static_shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, MemRefType)
    return tuple(value.type.get_shape())


def contraction_shapes(op: LinalgStructuredOperation, machine: Machine) -> list[tuple[int, ...]]:
    """The operands' shapes (in operand order) rounded up to the matrix unit's M, N, K multiples.

    Which input is A (M x K) and which B (K x N) is loop-to-npu's `contraction_roles`.

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
    a, b = contraction_roles(op)
    lhs, rhs, acc = dims[a], dims[b], dims[2]
    in_type = str(op.inputs[0].type.element_type)
    acc_type = str(op.outputs[0].type.element_type)
    unit = machine.matrix
    unit_m, unit_n, unit_k = unit.instruction_shape(in_type, acc_type)
    for kind, multiple in ((lhs & acc) - rhs, unit_m), ((rhs & acc) - lhs, unit_n), ((lhs & rhs) - acc, unit_k):
        if kind and math.prod(extents[d] for d in kind) % multiple:
            extents.update(round_product(extents, sorted(kind), multiple))
    return [tuple(extents[r.position] for r in indexing.results) for indexing in maps]


def ping_pongs(machine: Machine, space: str, tile_bytes: int) -> bool:
    """Whether consecutive ops of a block (a convolution's window points, the unrolled steps of
    a reduction) get two staging buffers of `tile_bytes` in `space`, used in turn, rather than
    one: in the matrix unit's operand spaces, where tile sizes leave room for two of each tile,
    so the DMA loading one op's operand overlaps the instruction reading the previous op's."""
    unit = machine.matrix
    return space in (unit.a_space, unit.b_space) and 2 * tile_bytes <= machine.memories[space].capacity


def _padding(shape: Sequence[int], padded: Sequence[int]) -> list[int]:
    return [v for size, target in zip(shape, padded) for v in (0, target - size)]


def _zero(element_type) -> arith.ConstantOp:
    if is_float(element_type):
        return arith.ConstantOp(FloatAttr(0.0, element_type))
    return arith.ConstantOp(IntegerAttr(0, element_type))


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
        self.full: dict[SSAValue, SSAValue] = {}
        """Valid-region view of a padded accumulator -> the whole padded buffer."""
        self.pool: dict[tuple[MemRefType, Block | None, Attribute | Operation | None, bool], list[SSAValue]] = {}
        """Staging buffers by type, block, fusion group (or program copy) and whether ops take two in
        turn (`new_buffer`'s `alternate`), shared by the ops of a block one after the other."""
        self.busy: set[SSAValue] = set()
        """The staging buffers of the op being staged."""
        self.anchor: Operation = func
        """The op that what is being inserted serves: inserted ops take its location."""
        self.folded: list[CopyAsyncOp] = []
        """Copies that cast generics became (a later redirect may change their source)."""
        self.copy_owner: Operation | None = None
        """The program's own copy being legalized: its pieces share staging buffers, other copies do not."""
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
                if isinstance(value.type, MemRefType) and any(d < 0 for d in value.type.get_shape()):
                    raise error_at(op, f"promote-to-memory-space needs static shapes, got {value.type}")
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
        copies = [op for op in self.func.walk() if isinstance(op, CopyOp | CopyAsyncOp)]
        compute = [op for op in compute if not self.fold_cast(op)]
        self.place_unplaced(compute)
        self.readers = Counter(
            (_view_key(value), op.attributes.get("tile.group"))
            for op in compute
            for value in op.operands
            if isinstance(value.type, MemRefType) and self.read_only(root_of(value))
        )
        for op in compute:
            self.stage(op)
        for copy in copies + self.folded:
            self.copy_owner = copy
            self.legalize(copy)

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
        self.anchor = op
        if root is not acc or padded == static_shape(root):
            self.check_fits(op, "the accumulator", in_space(root.type, c_space))
            move_to_space(root, c_space)
            return
        assert isinstance(root.type, MemRefType)
        full = alloc_at_top(self.func, contiguous(root.type.element_type, padded, c_space), op.location)
        self.check_fits(op, "the accumulator", full.type)
        view = valid_region(full, static_shape(root))
        self.insert(view, InsertPoint.after(full.owner))
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
        self.folded.append(copy)
        return True

    def place_unplaced(self, compute: list[Operation]) -> None:
        global_space = self.machine.global_memory().name
        allocs = [
            op.memref
            for op in self.func.walk()
            if isinstance(op, memref.AllocOp) and space_of(op.memref) in (None, global_space)
        ]
        for buffer in allocs:
            space = self.space_for(buffer, compute)
            if space is not None and space != space_of(buffer):
                move_to_space(buffer, space)

    def space_for(self, buffer: SSAValue, compute: list[Operation]) -> str | None:
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
        if space == want.space and not all(self.aligned(view, space) for _, view in readers):
            return None  # its units would read windows at unaligned starts: stage each window instead
        return space

    def aligned(self, view: SSAValue, space: str) -> bool:
        """Whether a view starts at a static offset that `space`'s alignment allows (units need it; DMAs do not)."""
        offset = view.type.get_offset()
        element_bytes = (view.type.element_type.bitwidth + 7) // 8
        return offset is not None and offset * element_bytes % self.machine.memories[space].alignment == 0

    # -- staging

    def wanted(self, op: Operation) -> list[_Want | None]:
        """Per operand of a compute op: where it must be and in what shape (None for scalars)."""
        operands = list(op.operands)
        if is_contraction(op):
            unit = self.machine.matrix
            shapes = contraction_shapes(op, self.machine)
            a, _ = contraction_roles(op)
            spaces = (unit.a_space, unit.b_space) if a == 0 else (unit.b_space, unit.a_space)
            return [_Want(s, shape) for s, shape in zip((*spaces, unit.c_space), shapes)]
        if isinstance(op, linalg.FillOp) and space_of(op.outputs[0]) == self.machine.matrix.c_space:
            # The accumulator's zero fill stays in c_space: loop-to-npu makes it a non-accumulating mma.
            full = self.full.get(op.outputs[0], op.outputs[0])
            return [None] * len(op.inputs) + [_Want(self.machine.matrix.c_space, static_shape(full))]
        return [
            _Want(self.vector_space if space_of(v) not in self.machine.vector.spaces else space_of(v), static_shape(v))
            if isinstance(v.type, MemRefType)
            else None
            for v in operands
        ]

    def stage(self, op: LinalgStructuredOperation) -> None:
        """Give each operand of `op` a buffer where its unit reads it; a value the op uses twice
        (e.g. in place, as input and output) gets one buffer, copied in and out as needed."""
        staged: dict[SSAValue, SSAValue] = {}
        self.busy = set()
        self.anchor = op
        after = InsertPoint.after(op)
        operands = list(op.operands)
        outputs = set(range(len(op.inputs), len(operands)))
        reads = {i: is_contraction(op) or bool(op.body.block.args[i].uses) for i in outputs}
        for index, (value, want) in enumerate(zip(operands, self.wanted(op))):
            if want is None:
                continue
            full = self.full.get(value)
            if full is not None and space_of(full) == want.space and static_shape(full) == want.shape:
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
        chain = self.route(op, source, want.space, what) if source != want.space else self.copy_route(op, source, source)
        steps = hops(self.machine, chain)
        needs_pad = tuple(want.shape) != shape
        pad_hop = next((h for h, (_, _, e) in enumerate(steps) if e.pad), None) if needs_pad else None
        if not reads:
            buffer = self.new_buffer(op, what, element_type, want.shape, want.space)
            return buffer, self.copy_out(op, buffer, value, needs_pad, after, what)
        current = value
        own = len(steps) > 1 and not writes and self.read_only(root_of(value))
        key = self.resident_key(op, value) if own else None
        for h, (_, space, engine) in enumerate(steps):
            last = h == len(steps) - 1
            padded_here = pad_hop is not None and h >= pad_hop or (last and needs_pad)
            staged_shape = want.shape if padded_here else shape
            if key is not None and h == 0:
                staged = self.resident.get(key)
                # what an op of this block (or one it holds) staged is there whenever `op` runs
                if staged is not None and staged[1].parent_block().find_ancestor_op_in_block(op) is not None:
                    current = staged[0]  # the same bytes, staged by an earlier op: read them there
                    continue
                buffer = self.resident_buffer(op, what, element_type, staged_shape, space)
            else:
                buffer = self.new_buffer(op, what, element_type, staged_shape, space, alternate=own and h == 0)
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
                self.insert([zero, linalg.FillOp([zero.result], [buffer], res=[])], InsertPoint.before(op))
                view = valid_region(buffer, shape)
                self.insert(view, InsertPoint.before(op))
                target = view.result
            self.copy(current, target, InsertPoint.before(op), pad)
            if key is not None and h == 0:
                self.resident[key] = (buffer, op)
            current = buffer
        if writes:
            after = self.copy_out(op, buffer, value, needs_pad, after, what)
        return buffer, after

    def copy_out(
        self, op: Operation, buffer: SSAValue, value: SSAValue, padded: bool, after: InsertPoint, what: str
    ) -> InsertPoint:
        shape = static_shape(value)
        current = buffer
        if padded:
            view = valid_region(buffer, shape)
            self.insert(view, after)
            after = InsertPoint.after(view)
            current = view.result
        home = space_of(value) or self.machine.global_memory().name
        if route(self.machine, space_of(buffer), home) is None and self.redirect_later_uses(op, value, buffer):
            return after
        chain = self.route(op, space_of(buffer), home, what)
        for _, space, _ in hops(self.machine, chain)[:-1]:
            hop = self.new_buffer(op, what, value.type.element_type, shape, space)
            after = self.copy(current, hop, after)
            current = hop
        return self.copy(current, value, after)

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
        position = {o: i for i, o in enumerate(block.ops)}
        anchored = [(block.find_ancestor_op_in_block(user), user, view) for user, view in users_through_views(root)]
        if any(a is None for a, _, _ in anchored):
            return False
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
        for pool in self.pool.values():
            if buffer in pool:
                pool.remove(buffer)
        return True

    # -- the program's own copies

    def legalize(self, copy: CopyOp | CopyAsyncOp) -> None:
        """Split a copy that no single engine does (no path, or a pad or cast the engine lacks)
        along its route: the first engine that pads pads (else the first vector space on the
        route is zero-filled and the copy writes its interior), the first that casts casts."""
        source, destination = space_of(copy.source), space_of(copy.destination)
        direct = self.machine.dma_for(source, destination) if source != destination else None
        if direct is not None and engine_can(direct, copy):
            return
        self.busy = set()
        self.anchor = copy
        if self.cast_within_vector_space(copy):
            return
        if self.cast_in_vector_space(copy):
            return self.legalize(copy)
        steps = hops(self.machine, self.copy_route(copy, source, destination))
        if self.split_oversized(copy, steps):
            return
        pads = any(p for pair in copy.padding() for p in pair)
        casts = copy.source.type.element_type != copy.destination.type.element_type
        pad_hop = first_hop(steps, lambda e, d: e.pad) if pads else None
        fill_hop = first_hop(steps, lambda e, d: d in self.machine.vector.spaces) if pads and pad_hop is None else None
        cast_hop = first_hop(steps, lambda e, d: e.cast) if casts else None
        if pads and pad_hop is None and fill_hop is None and self.pad_in_source_space(copy, source):
            return
        if (pads and pad_hop is None and fill_hop is None) or (casts and cast_hop is None):
            missing = "pads" if pads and pad_hop is None and fill_hop is None else "casts"
            raise error_at(
                copy,
                f"no engine on the route {' -> '.join([source] + [d for _, d, _ in steps])} {missing} "
                f"on machine '{self.machine.name}'",
            )
        padded_from = pad_hop if pad_hop is not None else fill_hop
        current = copy.source
        at = InsertPoint.before(copy)
        for h, (_, space, _) in enumerate(steps):
            if h == len(steps) - 1:
                target = copy.destination
            else:
                element_type = (copy.destination if casts and h >= cast_hop else copy.source).type.element_type
                shape = static_shape(copy.destination if pads and h >= padded_from else copy.source)
                target = self.new_buffer(copy, "a copy's hop", element_type, shape, space)
            if h == fill_hop:
                at = self.fill_then_copy_interior(copy, current, target, at)
            else:
                at = self.copy(current, target, at, [p for pair in copy.padding() for p in pair] if h == pad_hop else None, copy.pad_value)
            current = target
        self.replace_copy(copy)

    def pad_in_source_space(self, copy: CopyOp | CopyAsyncOp, source: str) -> bool:
        """A padding copy out of a vector space whose route neither pads nor passes a vector
        space (ub -> gm): the vector unit zero-fills a padded buffer next to the source, the
        interior is copied in, and the padded buffer is copied out whole."""
        if not isinstance(copy, CopyOp) or source not in self.machine.vector.spaces:
            return False
        source_type = copy.source.type
        padded = self.new_buffer(copy, "a padded copy", source_type.element_type, static_shape(copy.destination), source)
        value = copy.pad_value.value.data if copy.pad_value is not None else 0.0
        element_type = source_type.element_type
        constant = arith.ConstantOp(
            FloatAttr(value, element_type) if is_float(element_type) else IntegerAttr(int(value), element_type)
        )
        interior = valid_region(padded, static_shape(copy.source), [low for low, _ in copy.padding()])
        pieces = [CopyOp(copy.source, interior.result), CopyOp(padded, copy.destination)]
        self.insert([constant, linalg.FillOp([constant.result], [padded], res=[]), interior, *pieces], InsertPoint.before(copy))
        Rewriter.erase_op(copy)
        for piece in pieces:
            self.legalize(piece)
        return True

    def split_oversized(self, copy: CopyOp | CopyAsyncOp, steps) -> bool:
        """A synchronous copy whose staging buffers would not fit their space (a concat's part
        moved within global memory, a channel pad, a padded input) becomes copies of static
        chunks (`_padding_chunks`), each half that space at most, legalized one by one (a chunk
        still too big is split again)."""
        staged = [space for _, space, _ in steps[:-1]]
        if not staged or not isinstance(copy, CopyOp):
            return False
        widest = max(byte_size(v.type) // max(1, math.prod(static_shape(v))) for v in (copy.source, copy.destination))
        smallest = min(staged, key=lambda space: self.machine.memories[space].capacity)
        budget = self.machine.memories[smallest].capacity // 2
        padding = copy.padding()
        if math.prod(static_shape(copy.destination)) * widest <= budget:
            return False
        chunks = _padding_chunks(static_shape(copy.source), padding, budget // widest)
        if not chunks:
            raise error_at(
                copy,
                f"this copy needs a staging buffer of {byte_size(copy.destination.type)} bytes in "
                f"'{smallest}', more than half of it ({budget} bytes), and has no dim left to split",
            )
        pieces = []
        for offsets, sizes, pads in chunks:
            source = valid_region(copy.source, sizes, offsets)
            target = valid_region(
                copy.destination,
                [n + lo + hi for n, (lo, hi) in zip(sizes, pads)],
                [o + lo - low for o, (lo, _), (low, _) in zip(offsets, padding, pads)],
            )
            pad = [p for pair in pads for p in pair]
            piece = CopyOp(source.result, target.result, pad=pad if any(pad) else None)
            piece.pad_value = copy.pad_value if any(pad) else None
            pieces.append(([source, target], piece))
        for views, piece in pieces:
            self.insert([*views, piece], InsertPoint.before(copy))
        Rewriter.erase_op(copy)
        for _, piece in pieces:
            self.legalize(piece)
        return True

    def cast_within_vector_space(self, copy: CopyOp | CopyAsyncOp) -> bool:
        """A casting copy from a vector space into the same space (a cast folded into a copy whose
        source a fused op then moved next to it, e.g. a bias added in ub before the truncation) is a
        cast generic in place: no engine moves within one space, and bouncing through another space
        (ub -> gm -> ub) would cost two DMAs and the global memory's latency. Only where both views
        start aligned, as the vector unit's instructions must."""
        space = space_of(copy.source)
        if space not in self.machine.vector.spaces or space_of(copy.destination) != space:
            return False
        if copy.source.type.element_type == copy.destination.type.element_type:
            return False
        if not (self.aligned(copy.source, space) and self.aligned(copy.destination, space)):
            return False  # a slice of a concat at an odd channel: the DMA engines move it, unaligned
        if any(p for pair in copy.padding() for p in pair):
            return False
        self.insert(cast_generic(copy.source, copy.destination), InsertPoint.before(copy))
        self.replace_copy(copy)
        return True

    def cast_in_vector_space(self, copy: CopyOp | CopyAsyncOp) -> bool:
        """A casting copy out of a vector space whose engines do not cast: the vector unit casts
        first (a cast generic into a buffer of the destination's element type), the copy moves."""
        source, target = copy.source.type, copy.destination.type
        space = space_of(copy.source)
        if source.element_type == target.element_type or space not in self.machine.vector.spaces:
            return False
        if any(p for pair in copy.padding() for p in pair):
            return False
        chain = route(self.machine, space, space_of(copy.destination))
        if chain is not None and any(engine.cast for _, _, engine in hops(self.machine, chain)):
            return False
        converted = self.new_buffer(copy, "a cast", target.element_type, static_shape(copy.source), space)
        self.insert(cast_generic(copy.source, converted), InsertPoint.before(copy))
        copy.operands[0] = converted
        return True

    def copy_route(self, copy: Operation, source: str, destination: str) -> tuple[str, ...]:
        """The route between two spaces, or out of a space and back into it (through the nearest space)."""
        if source != destination:
            return self.route(copy, source, destination, "the copy")
        bounces = [
            there + back[1:]
            for space in self.machine.memories
            if space != source
            and (there := route(self.machine, source, space)) is not None
            and (back := route(self.machine, space, source)) is not None
        ]
        if not bounces:
            raise error_at(copy, f"no DMA route out of '{source}' and back on machine '{self.machine.name}'")
        return min(bounces, key=len)

    def fill_then_copy_interior(self, copy: CopyOp | CopyAsyncOp, source: SSAValue, target: SSAValue, at: InsertPoint) -> InsertPoint:
        element_type = target.type.element_type
        value = copy.pad_value.value.data if copy.pad_value is not None else 0.0
        constant = arith.ConstantOp(
            FloatAttr(value, element_type) if is_float(element_type) else IntegerAttr(int(value), element_type)
        )
        interior = valid_region(target, static_shape(source), [low for low, _ in copy.padding()])
        ops = [constant, linalg.FillOp([constant.result], [target], res=[]), interior]
        self.insert(ops, at)
        return self.copy(source, interior.result, InsertPoint.after(interior))

    @staticmethod
    def replace_copy(copy: CopyOp | CopyAsyncOp) -> None:
        """Drop the original copy; the copies before it did its work (a copy_async's waits go too)."""
        if isinstance(copy, CopyAsyncOp):
            for use in list(copy.token.uses):
                Rewriter.erase_op(use.operation)
        Rewriter.erase_op(copy)

    def route(self, op: Operation, source: str, destination: str, what: str) -> tuple[str, ...]:
        if source not in self.machine.memories:
            raise error_at(
                op,
                f"{what} is in memory space '{source}', which machine '{self.machine.name}' does not have "
                f"(spaces: {', '.join(self.machine.memories)})",
            )
        chain = route(self.machine, source, destination)
        if chain is None:
            raise error_at(
                op,
                f"no DMA route from '{source}' to '{destination}' on machine '{self.machine.name}' for {what} "
                f"(paths: {describe_paths(self.machine)})",
            )
        return chain

    def insert(self, ops: Operation | Sequence[Operation], point: InsertPoint) -> None:
        """Insert ops that serve `self.anchor`, with its location (MLIR's convention)."""
        ops = [ops] if isinstance(ops, Operation) else list(ops)
        for created in ops:
            locate(created, self.anchor.location)
        Rewriter.insert_op(ops, point)

    def new_buffer(
        self, op: Operation, what: str, element_type, shape: Sequence[int], space: str, alternate: bool = False
    ) -> SSAValue:
        """A staging buffer: one of an earlier op's in the same block and fusion group when one of
        the type is free (each op's copies and compute are done before the next op's start), else a
        new alloc; with `alternate` (a weight tile's first hop) or in the matrix unit's operand
        spaces (`ping_pongs`), consecutive ops take two in turn, so that one op's load overlaps
        the previous op's use. Not across groups: a buffer shared by two layers lives from the
        first to the last, across the layers between, and npu-plan-memory cannot reuse its bytes
        there. For the same reason the program's own copies outside groups (a concat's parts)
        share only between the pieces of one copy."""
        memref_type = contiguous(element_type, shape, space)
        self.check_fits(op, f"the buffer for {what}", memref_type)
        owner = op.attributes.get("tile.group") or self.copy_owner
        pool = self.pool.setdefault((memref_type, op.parent_block(), owner, alternate), [])
        free = [b for b in pool if b not in self.busy]
        if free and not (len(pool) == 1 and (alternate or self.ping_pong(memref_type))):
            buffer = free[0]
            pool.remove(buffer)  # least recently used first: consecutive ops alternate
        else:
            buffer = alloc_at_top(self.func, memref_type, op.location)
        pool.append(buffer)
        self.busy.add(buffer)
        return buffer

    def read_only(self, root: SSAValue) -> bool:
        if root not in self.unwritten:
            self.unwritten[root] = _read_only(root)
        return self.unwritten[root]

    def resident_key(self, op: Operation, value: SSAValue) -> tuple | None:
        """For an operand whose bytes nothing writes (`read_only`, which the caller checked: a view
        of a weight) and that is worth keeping (the same in every iteration of the loop around
        `op`, or, in straight-line code, read by another op of the group too): what identifies
        those bytes within the group; None for any other."""
        key = _view_key(value), op.attributes.get("tile.group")
        loop = op.parent_op()
        if isinstance(loop, scf.ForOp):
            return key if invariant_definitions(value, loop, []) else None
        return key if self.readers[key] > 1 else None  # straight-line: only if another op reads them too

    def resident_buffer(self, op: Operation, what: str, element_type, shape: Sequence[int], space: str) -> SSAValue:
        """A staging buffer of its own for an operand whose bytes do not change while its group
        runs (`resident_key`): `hoist-copies` can then load it once before the loop around `op`
        instead of every iteration, and later ops reading the same bytes (a conv's peeled row
        tiles) read it there, where a pooled buffer would be overwritten by the next op's operand
        (a conv's window points share one type). Only the first hop of a route, the staging space
        that the tile sizes budget for every window point's weights (`tile_sizes.conv_options`)."""
        memref_type = contiguous(element_type, shape, space)
        self.check_fits(op, f"the buffer for {what}", memref_type)
        return alloc_at_top(self.func, memref_type, op.location)

    def ping_pong(self, memref_type: MemRefType) -> bool:
        return ping_pongs(self.machine, memref_type.memory_space.data, byte_size(memref_type))

    def check_fits(self, op: Operation, what: str, memref_type: MemRefType) -> None:
        space = memref_type.memory_space.data
        capacity = self.machine.memories[space].capacity
        if byte_size(memref_type) > capacity:
            raise does_not_fit(
                op,
                f"{what}, {memref_type} ({byte_size(memref_type)} bytes), does not fit "
                f"'{space}' ({capacity} bytes) on machine '{self.machine.name}'",
                space,
            )

    def copy(
        self,
        source: SSAValue,
        destination: SSAValue,
        at: InsertPoint,
        pad: list[int] | None = None,
        pad_value: FloatAttr | None = None,
    ) -> InsertPoint:
        padded = pad is not None and any(pad)
        copy = CopyAsyncOp(
            source,
            destination,
            pad=pad if padded else None,
            pad_value=pad_value.value.data if padded and pad_value is not None else None,
        )
        wait = WaitOp(copy.token)
        self.insert([copy, wait], at)
        return InsertPoint.after(wait)


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
    if not (isinstance(owner, memref.GetGlobalOp) or isinstance(owner, Block) and isinstance(owner.parent_op(), FuncOp)):
        return False
    return not any(view in written_buffers(user) for user, view in users_through_views(root))


def _chunks(shape: Sequence[int], elements: int) -> list[tuple[list[int], list[int]]]:
    """(offsets, sizes) of boxes that tile `shape` in row-major order, each of at most
    `elements` elements (or one innermost row): the outermost dim that must be split
    is cut into runs that fit, the dims outside it into single indices."""
    inner = math.prod(shape)
    for d, extent in enumerate(shape):
        inner //= extent
        run = max(1, elements // inner) if inner else extent
        if run >= extent and d < len(shape) - 1:
            continue
        outer = [range(n) for n in shape[:d]]
        return [
            ([*index, start, *[0] * (len(shape) - d - 1)], [1] * d + [min(run, extent - start), *shape[d + 1 :]])
            for index in itertools.product(*outer)
            for start in range(0, extent, run)
        ]
    return [([0] * len(shape), list(shape))]


def _unpadded_chunks(
    shape: Sequence[int], padding: Sequence[tuple[int, int]], elements: int
) -> list[tuple[list[int], list[int]]]:
    """_chunks of a padding copy's source over its unpadded dims, each padded chunk at most
    `elements`: a padded dim is whole in every chunk (its offset 0 in source and destination)."""
    padded = [d for d, (lo, hi) in enumerate(padding) if lo or hi]
    free = [d for d in range(len(shape)) if d not in padded]
    whole = math.prod(shape[d] + sum(padding[d]) for d in padded)
    boxes = []
    for offsets, sizes in _chunks([shape[d] for d in free], max(1, elements // whole)):
        box_offsets, box_sizes = [0] * len(shape), list(shape)
        for d, offset, size in zip(free, offsets, sizes):
            box_offsets[d], box_sizes[d] = offset, size
        boxes.append((box_offsets, box_sizes))
    return boxes


def _padding_chunks(
    shape: Sequence[int], padding: Sequence[tuple[int, int]], elements: int
) -> list[tuple[list[int], list[int], list[tuple[int, int]]]]:
    """(source offsets, sizes, padding) of the chunks of a copy: along its unpadded dims first
    (`_unpadded_chunks`, each chunk padded as the copy is); once those are single elements, along
    the outermost padded dim longer than one, in runs of rows that fit `elements` with the other
    dims whole, the first run taking the dim's low padding and the last its high padding (a
    224x224 input padded by 3 in ofmap's half, 16384 elements: runs of 65, 65, 65 and 29 rows).
    Empty when nothing is left to split."""
    boxes = _unpadded_chunks(shape, padding, elements)
    if len(boxes) > 1:
        return [(offsets, sizes, list(padding)) for offsets, sizes in boxes]
    split = [d for d, (n, (lo, hi)) in enumerate(zip(shape, padding)) if n > 1 and (lo or hi)]
    if not split:
        return []
    d, (lo, hi) = split[0], padding[split[0]]
    others = math.prod(n + a + b for i, (n, (a, b)) in enumerate(zip(shape, padding)) if i != d)
    run = max(1, elements // others - lo - hi)
    chunks = []
    for start in range(0, shape[d], run):
        stop = min(shape[d], start + run)
        offsets, sizes, pads = [0] * len(shape), list(shape), list(padding)
        offsets[d], sizes[d], pads[d] = start, stop - start, (lo if start == 0 else 0, hi if stop == shape[d] else 0)
        chunks.append((offsets, sizes, pads))
    return chunks


@dataclass(frozen=True)
class PromoteToMemorySpacePass(ModulePass):
    """Place every buffer in a memory space of the machine and stage compute operands with DMA copies."""

    name = "promote-to-memory-space"

    machine: str
    """A preset name (davinci, systolic, tensorcore) or a machine TOML file."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        machine = load_machine(self.machine)
        for func in [f for f in op.walk() if isinstance(f, FuncOp) and f.body.blocks]:
            _Promoter(machine, func).run()
