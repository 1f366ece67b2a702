"""`loop-legalize-copies{machine=NAME}`: split every copy that no single DMA engine of the machine does
into copies that one engine each does, along the route between the two spaces.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import AffineMapAttr, FloatAttr, IntegerAttr, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.rewriter import InsertPoint

from ziggurat.diagnostics import error_at
from ziggurat.dialects.loop import CopyAsyncOp, CopyOp
from ziggurat.dialects.tile import GROUP_ATTR
from ziggurat.dtypes import is_float
from ziggurat.locations import Located
from ziggurat.machine import DmaEngine, Machine, load_machine
from ziggurat.transforms.loop.buffers import byte_size, space_of, valid_region
from ziggurat.transforms.loop.memory_routes import hops, route
from ziggurat.transforms.loop.staging import (
    StagingBuffers,
    aligned,
    async_copy,
    copy_route,
    engine_can,
    static_shape,
)

Copy = CopyOp | CopyAsyncOp
Hops = list[tuple[str, str, DmaEngine]]


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
        [source],
        [destination],
        Region(block),
        [identity, identity],
        [IteratorTypeAttr.parallel()] * rank,
    )


def _pads(copy: Copy) -> bool:
    return any(p for pair in copy.padding() for p in pair)


def _casts(copy: Copy) -> bool:
    return copy.source.type.element_type != copy.destination.type.element_type


def _writes_back(copy: Copy) -> bool:
    """Whether `copy` is how loop-promote-to-memory-space writes the valid region of a padded staging
    buffer back to a buffer in the same space: an async copy from a view that neither pads nor
    casts. loop-to-npu moves it with the vector unit; it is left as it is."""
    return (
        isinstance(copy, CopyAsyncOp)
        and isinstance(copy.source.owner, memref.SubviewOp)
        and not _pads(copy)
        and not _casts(copy)
    )


def _first_hop(steps: Hops, accepts) -> int | None:
    """The index of the first hop whose (engine, destination space) `accepts`."""
    return next((h for h, (_, space, engine) in enumerate(steps) if accepts(engine, space)), None)


def _pad_constant(copy: Copy, element_type: Attribute) -> arith.ConstantOp:
    """The copy's padding value as a constant of `element_type` (zero when it names none)."""
    value = copy.pad_value.value.data if copy.pad_value is not None else 0.0
    return arith.ConstantOp(
        FloatAttr(value, element_type)
        if is_float(element_type)
        else IntegerAttr(int(value), element_type)
    )


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
            (
                [*index, start, *[0] * (len(shape) - d - 1)],
                [1] * d + [min(run, extent - start), *shape[d + 1 :]],
            )
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


def padding_chunks(
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
        offsets[d], sizes[d], pads[d] = (
            start,
            stop - start,
            (lo if start == 0 else 0, hi if stop == shape[d] else 0),
        )
        chunks.append((offsets, sizes, pads))
    return chunks


@dataclass
class _Copies:
    """What the patterns share within one function: the machine, its staging buffers, and for
    each piece of a split copy the program's copy it is part of (whose pieces share buffers)."""

    machine: Machine
    buffers: StagingBuffers
    program_copy: dict[Operation, Operation] = field(default_factory=dict)

    def illegal(self, op: Operation) -> bool:
        """Whether `op` is a copy that no single engine does (no path, or a pad or cast it lacks)."""
        if not isinstance(op, Copy):
            return False
        source, destination = self.space(op.source), self.space(op.destination)
        if source == destination and _writes_back(op):
            return False
        direct = self.machine.dma_for(source, destination) if source != destination else None
        return direct is None or not engine_can(direct, op)

    def space(self, value: SSAValue) -> str:
        """The space of a buffer; an unplaced one (a function argument) is in the global space."""
        return space_of(value) or self.machine.global_memory().name

    def hops(self, copy: Copy) -> Hops:
        """The hops of the route from the copy's source space to its destination's (`copy_route`)."""
        return hops(
            self.machine,
            copy_route(self.machine, copy, self.space(copy.source), self.space(copy.destination)),
        )

    def buffer(
        self, copy: Copy, what: str, element_type: Attribute, shape: Sequence[int], space: str
    ) -> SSAValue:
        """A staging buffer for `copy`, shared with the other pieces of its program copy only
        (or with the copies of its fusion group): a buffer shared by two layers would live
        across the layers between, where npu-plan-memory cannot reuse its bytes."""
        owner = copy.attributes.get(GROUP_ATTR) or self.program_copy.get(copy, copy)
        return self.buffers.take(copy, what, element_type, shape, space, owner)

    def replace(
        self,
        copy: Copy,
        pieces: Sequence[tuple[Sequence[Operation], Copy]],
        rewriter: PatternRewriter,
    ) -> None:
        """Replace `copy` by `pieces` (each the ops it needs, then a copy), which are legalized
        in turn: inserted last to first, so that the walker's stack pops the first first."""
        at = InsertPoint.before(copy)
        for ops, piece in reversed(pieces):
            self.program_copy[piece] = self.program_copy.get(copy, copy)
            rewriter.insert([*ops, piece], at)
            at = InsertPoint.before(ops[0] if ops else piece)
        rewriter.erase(copy)

    @staticmethod
    def erase(copy: Copy, rewriter: PatternRewriter) -> None:
        """Drop a copy whose work the ops before it do (a copy_async's waits go too)."""
        if isinstance(copy, CopyAsyncOp):
            for use in list(copy.token.uses):
                rewriter.erase(use.operation)
        rewriter.erase(copy)


@dataclass
class _CopyPattern(RewritePattern):
    """A way to legalize a copy that no single engine does; `rewrite` leaves the copy alone
    when it is not this pattern's case."""

    copies: _Copies

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if self.copies.illegal(op):
            for value in (op.source, op.destination):
                if any(d < 0 for d in value.type.get_shape()):
                    raise error_at(
                        op, f"loop-legalize-copies needs static shapes, got {value.type}"
                    )
            self.copies.buffers.start()
            self.rewrite(op, rewriter)

    def rewrite(self, copy: Copy, rewriter: PatternRewriter) -> None:
        raise NotImplementedError

    @property
    def machine(self) -> Machine:
        return self.copies.machine


class CastWithinVectorSpace(_CopyPattern):
    """A casting copy from a vector space into the same space (a cast folded into a copy whose
    source a fused op then moved next to it, e.g. a bias added in ub before the truncation) is a
    cast generic in place: no engine moves within one space, and bouncing through another space
    (ub -> gm -> ub) would cost two DMAs and the global memory's latency. Only where both views
    start aligned, as the vector unit's instructions must."""

    def rewrite(self, copy: Copy, rewriter: PatternRewriter) -> None:
        space = self.copies.space(copy.source)
        if (
            space not in self.machine.vector.spaces
            or self.copies.space(copy.destination) != space
            or not _casts(copy)
        ):
            return
        if not (
            aligned(self.machine, copy.source, space)
            and aligned(self.machine, copy.destination, space)
        ):
            return  # a slice of a concat at an odd channel: the DMA engines move it, unaligned
        if _pads(copy):
            return
        rewriter.insert(cast_generic(copy.source, copy.destination), InsertPoint.before(copy))
        self.copies.erase(copy, rewriter)


class CastInVectorSpace(_CopyPattern):
    """A casting copy out of a vector space whose engines do not cast: the vector unit casts
    first (a cast generic into a buffer of the destination's element type), the copy moves."""

    def rewrite(self, copy: Copy, rewriter: PatternRewriter) -> None:
        space = self.copies.space(copy.source)
        if not _casts(copy) or space not in self.machine.vector.spaces or _pads(copy):
            return
        chain = route(self.machine, space, self.copies.space(copy.destination))
        if chain is not None and any(engine.cast for _, _, engine in hops(self.machine, chain)):
            return
        element_type = copy.destination.type.element_type
        converted = self.copies.buffer(
            copy, "a cast", element_type, static_shape(copy.source), space
        )
        rewriter.insert(cast_generic(copy.source, converted), InsertPoint.before(copy))
        copy.operands[0] = converted
        rewriter.notify_op_modified(copy)


class SplitOversizedCopy(_CopyPattern):
    """A synchronous copy whose staging buffers would not fit their space (a concat's part
    moved within global memory, a channel pad, a padded input) becomes copies of static
    chunks (`padding_chunks`), each half that space at most (a chunk still too big is split
    again)."""

    def rewrite(self, copy: Copy, rewriter: PatternRewriter) -> None:
        steps = self.copies.hops(copy)
        staged = [space for _, space, _ in steps[:-1]]
        if not staged or not isinstance(copy, CopyOp):
            return
        widest = max(
            byte_size(v.type) // max(1, math.prod(static_shape(v)))
            for v in (copy.source, copy.destination)
        )
        smallest = min(staged, key=lambda space: self.machine.memories[space].capacity)
        budget = self.machine.memories[smallest].capacity // 2
        padding = copy.padding()
        if math.prod(static_shape(copy.destination)) * widest <= budget:
            return
        chunks = padding_chunks(static_shape(copy.source), padding, budget // widest)
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
        self.copies.replace(copy, pieces, rewriter)


def _route_plan(copies: _Copies, copy: Copy) -> tuple[Hops, int | None, int | None, int | None]:
    """The hops of `copy`'s route, and the first that pads, the first into a vector space (when
    it pads and none pads) and the first that casts, each only where the copy needs it."""
    machine = copies.machine
    steps = copies.hops(copy)
    pad_hop = _first_hop(steps, lambda e, d: e.pad) if _pads(copy) else None
    fill_hop = (
        _first_hop(steps, lambda e, d: d in machine.vector.spaces)
        if _pads(copy) and pad_hop is None
        else None
    )
    cast_hop = _first_hop(steps, lambda e, d: e.cast) if _casts(copy) else None
    return steps, pad_hop, fill_hop, cast_hop


class PadInSourceSpace(_CopyPattern):
    """A padding copy out of a vector space whose route neither pads nor passes a vector
    space (ub -> gm): the vector unit fills a padded buffer next to the source, the
    interior is copied in, and the padded buffer is copied out whole."""

    def rewrite(self, copy: Copy, rewriter: PatternRewriter) -> None:
        _, pad_hop, fill_hop, _ = _route_plan(self.copies, copy)
        source = self.copies.space(copy.source)
        if not _pads(copy) or pad_hop is not None or fill_hop is not None:
            return
        if not isinstance(copy, CopyOp) or source not in self.machine.vector.spaces:
            return
        element_type = copy.source.type.element_type
        padded = self.copies.buffer(
            copy, "a padded copy", element_type, static_shape(copy.destination), source
        )
        constant = _pad_constant(copy, element_type)
        interior = valid_region(
            padded, static_shape(copy.source), [low for low, _ in copy.padding()]
        )
        fill = linalg.FillOp([constant.result], [padded], res=[])
        into_interior, out_whole = (
            CopyOp(copy.source, interior.result),
            CopyOp(padded, copy.destination),
        )
        self.copies.replace(
            copy, [([constant, fill, interior], into_interior), ([], out_whole)], rewriter
        )


class SplitCopyAlongRoute(_CopyPattern):
    """Any other copy: one copy per hop of its route, through a staging buffer in each space on
    the way; the first engine that pads pads (else the first vector space on the route is
    filled and the copy writes its interior), the first that casts casts. An error when no
    engine on the route pads or casts as the copy must."""

    def rewrite(self, copy: Copy, rewriter: PatternRewriter) -> None:
        steps, pad_hop, fill_hop, cast_hop = _route_plan(self.copies, copy)
        pads, casts = _pads(copy), _casts(copy)
        if (pads and pad_hop is None and fill_hop is None) or (casts and cast_hop is None):
            source = self.copies.space(copy.source)
            missing = "pads" if pads and pad_hop is None and fill_hop is None else "casts"
            raise error_at(
                copy,
                f"no engine on the route {' -> '.join([source] + [d for _, d, _ in steps])} {missing} "
                f"on machine '{self.machine.name}'",
            )
        padded_from = pad_hop if pad_hop is not None else fill_hop
        pad = [p for pair in copy.padding() for p in pair]
        current = copy.source
        at = InsertPoint.before(copy)
        for h, (_, space, _) in enumerate(steps):
            if h == len(steps) - 1:
                target = copy.destination
            else:
                element_type = (
                    copy.destination if casts and h >= cast_hop else copy.source
                ).type.element_type
                shape = static_shape(copy.destination if pads and h >= padded_from else copy.source)
                target = self.copies.buffer(copy, "a copy's hop", element_type, shape, space)
            if h == fill_hop:
                constant = _pad_constant(copy, target.type.element_type)
                interior = valid_region(
                    target, static_shape(current), [low for low, _ in copy.padding()]
                )
                rewriter.insert(
                    [constant, linalg.FillOp([constant.result], [target], res=[]), interior], at
                )
                ops = async_copy(current, interior.result)
            else:
                ops = async_copy(current, target, pad if h == pad_hop else None, copy.pad_value)
            rewriter.insert(ops, at)
            current = target
        self.copies.erase(copy, rewriter)


@dataclass(frozen=True)
class LegalizeCopiesPass(ModulePass):
    """Split every `loop.copy` and `loop.copy_async` that no single DMA engine of the machine does
    (no path between the two spaces, or a pad or a cast the engine on the path lacks) into one
    copy per hop of the shortest route between the spaces (out and back through the nearest
    space when both are the same), through a staging buffer in each space on the way.

    The first engine that pads pads (else the first vector space on the route is filled and the
    copy writes its interior); the first that casts casts (else the vector unit casts, in the
    source's vector space). A synchronous copy whose staging buffers would not fit is first split
    into chunks. An unplaced buffer is in the global space; a copy one engine does stays, as does
    loop-promote-to-memory-space's write-back of a padded buffer's valid region within one space.
    On davinci (no path from gm to gm; mte2 pads on gm -> ub):

        loop.copy %x -> %y {pad = array<i64: 0, 0, 1, 1>, pad_value = -1.0 : f64}
          : memref<4x8xf32, "gm"> -> memref<4x10xf32, "gm">

    becomes

        %u = memref.alloc() : memref<4x10xf32, "ub">
        %t0 = loop.copy_async %x -> %u {pad = array<i64: 0, 0, 1, 1>, pad_value = -1.0 : f64}
          : memref<4x8xf32, "gm"> -> memref<4x10xf32, "ub">
        loop.wait %t0 : !loop.token
        %t1 = loop.copy_async %u -> %y : memref<4x10xf32, "ub"> -> memref<4x10xf32, "gm">
        loop.wait %t1 : !loop.token

    Errors, at the copy: no route between its spaces, no engine on the route that pads or
    casts as it must, a staging buffer larger than its space, a chunk that cannot be split.
    """

    name = "loop-legalize-copies"

    machine: str
    """A preset name (davinci, systolic, tensorcore) or a machine TOML file."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        machine = load_machine(self.machine)
        for func in [f for f in op.walk() if isinstance(f, FuncOp) and f.body.blocks]:
            copies = _Copies(machine, StagingBuffers(machine, func))
            patterns = [
                CastWithinVectorSpace(copies),
                CastInVectorSpace(copies),
                SplitOversizedCopy(copies),
                PadInSourceSpace(copies),
                SplitCopyAlongRoute(copies),
            ]
            # no dead-code elimination: this pass changes copies only
            applier = GreedyRewritePatternApplier(patterns, dce_enabled=False)
            PatternRewriteWalker(Located(applier)).rewrite_region(func.body)


__all__ = ["LegalizeCopiesPass", "cast_generic", "padding_chunks"]
