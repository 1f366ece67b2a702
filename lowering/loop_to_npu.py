"""`loop-to-npu{machine=NAME}`: instruction selection, from the loop level (docs/lowering.md, section 5)
to the machine's npu instructions (section 6); `loop_to_npu_dma`, `loop_to_npu_matrix` and
`loop_to_npu_vector` select for each unit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, linalg, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    FloatAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StridedLayoutAttr,
    StringAttr,
    i64,
)
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from ziggurat.diagnostics import error_at
from ziggurat.dialects.loop import CopyAsyncOp, CopyOp, WaitOp
from ziggurat.dialects.npu import MACHINE_ATTR, row_major_strides
from ziggurat.ir.contraction import is_contraction
from ziggurat.lowering.loop_to_npu_gather import lower_gather, match_gather
from ziggurat.lowering.loop_to_npu_matrix import lower_contraction
from ziggurat.lowering.loop_to_npu_vector import copy_layout, emit_copy, lower_vector_op
from ziggurat.lowering.loop_to_npu_views import Emitter, view_of
from ziggurat.machine import Machine, load_machine
from ziggurat.transforms.npu import pass_machine
from ziggurat.transforms.tile.builders import reassociation_groups


def emitter_before(op: Operation, rewriter: PatternRewriter) -> Emitter:
    return Emitter(rewriter, InsertPoint.before(op), op.location)


@dataclass
class LowerCopy(RewritePattern):
    """`loop.copy_async` / `loop.copy` -> `npu.dma` (a vector cast inside the vector spaces where no
    engine serves the pair); the waits on the copy's token go with it."""

    machine: Machine

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, CopyAsyncOp | CopyOp):
            return
        src, dst = view_of(op.source, op), view_of(op.destination, op)
        pad_value = None if op.pad_value is None else op.pad_value.value.data
        emit_copy(emitter_before(op, rewriter), op, self.machine, src, dst, op.padding(), pad_value)
        if isinstance(op, CopyAsyncOp):
            for use in list(op.token.uses):
                rewriter.erase(use.operation)
        rewriter.erase(op)


class DropWait(RewritePattern):
    """`loop.wait` -> nothing: the flags between pipes come from the dependences (npu-insert-sync)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: WaitOp, rewriter: PatternRewriter, /):
        rewriter.erase(op)


@dataclass
class LowerContraction(RewritePattern):
    """A matmul-like contraction -> `npu.mma` (see `loop_to_npu_matrix.py`); remembers the fills it absorbed."""

    machine: Machine
    absorbed_fills: set[Operation] = field(default_factory=set)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if is_contraction(op):
            fill = lower_contraction(emitter_before(op, rewriter), op, self.machine)
            if fill is not None:
                self.absorbed_fills.add(fill)
            rewriter.erase(op)


@dataclass
class FoldTransposedCopy(RewritePattern):
    """A transposing copy between two local buffers of one vector space that no engine serves (K^T of
    an attention in davinci's ub): the ops that read its result read the source through a transposed
    view instead.

    The vector unit reads blocks of adjacent elements and no engine copies ub -> ub, so the data is
    not moved at all. Only where that means the same: every reader of the destination up to its next
    write comes after the copy in its block and before the next write of the source.
    """

    machine: Machine

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, LinalgStructuredOperation) or not all(
            _local(v, self.machine) for v in op.operands
        ):
            return
        strides = copy_layout(op)
        src, dst = op.operands if strides is not None else (None, None)
        if src is None or self.machine.dma_for(space_name(src), space_name(dst)) is not None:
            return
        readers = _readers_until_rewritten(src, dst, op)
        if readers is None:
            return
        shape = dst.type.get_shape()
        buffer, offset = _slot(src)
        layout = StridedLayoutAttr(strides, offset)
        view_type = MemRefType(dst.type.get_element_type(), shape, layout, dst.type.memory_space)
        view = memref.ReinterpretCastOp(buffer, [], [], [], [offset], shape, strides, view_type)
        Emitter(rewriter, InsertPoint.before(op), op.location).insert(view)
        for user, index in readers:
            user.operands[index] = view.result
        rewriter.erase(op)


def space_name(value: SSAValue) -> str:
    space = value.type.memory_space
    return space.data if isinstance(space, StringAttr) else ""


def _slot(value: SSAValue) -> tuple[SSAValue, int]:
    """The alloc that `value` is, or is a contiguous static part of (a slot loop-double-buffer made), and
    the element offset of `value` in it; (value, -1) for anything else."""
    owner = value.owner
    if isinstance(owner, memref.AllocOp):
        return value, 0
    if not isinstance(owner, memref.SubviewOp) or not isinstance(
        owner.source.owner, memref.AllocOp
    ):
        return value, -1
    layout = value.type.layout
    if not isinstance(layout, StridedLayoutAttr):
        return value, -1
    strides, offset = layout.get_strides(), layout.get_offset()
    contiguous = list(strides) == row_major_strides(value.type.get_shape())
    return (
        (owner.source, offset)
        if contiguous and offset not in (None, DYNAMIC_INDEX)
        else (value, -1)
    )


def _local(value: SSAValue, machine: Machine) -> bool:
    """A local buffer in a vector space (a `memref.alloc`), or a contiguous static slot of one."""
    return _slot(value)[1] >= 0 and space_name(value) in machine.vector.spaces


def _writes(op: Operation, buffer: SSAValue) -> bool:
    """Whether `op` may write `buffer` (any use but a copy's source or a linalg input may)."""
    if isinstance(op, CopyAsyncOp | CopyOp):
        return op.destination is buffer
    return not isinstance(op, LinalgStructuredOperation) or buffer in op.outputs


def _reads_output(op: Operation, index: int) -> bool:
    """Whether `op` may read its operand `index` that it also writes: a copy's destination and the
    outputs of a linalg.generic whose body ignores them or of a fill or transpose are written only."""
    if isinstance(op, CopyAsyncOp | CopyOp):
        return op.operands[index] is not op.destination
    if isinstance(op, linalg.GenericOp):
        return bool(op.body.block.args[index].uses)
    return not isinstance(op, linalg.FillOp | linalg.TransposeOp)


def _readers_until_rewritten(
    src: SSAValue, dst: SSAValue, copy: Operation
) -> list[tuple[Operation, int]] | None:
    """The (op, operand index) uses of `dst` that read what `copy` wrote (those after it in its block, up
    to the next write of `dst`), or None unless all come before the next write of `src` and every use
    of either buffer is in that block."""
    block = copy.parent_block()
    start = block.get_operation_index(copy)
    uses: list[
        tuple[SSAValue, Operation, int, int]
    ] = []  # (buffer, user, operand index, position in block)
    for buffer in (src, dst):
        for use in buffer.uses:
            ancestor = block.find_ancestor_op_in_block(use.operation)
            if ancestor is None:
                return None
            uses.append((buffer, use.operation, use.index, block.get_operation_index(ancestor)))

    def next_write(buffer: SSAValue) -> float:
        writes = [
            p for b, user, _, p in uses if b is buffer and p > start and _writes(user, buffer)
        ]
        return min(writes, default=math.inf)

    dst_written, src_written = next_write(dst), next_write(src)
    readers = [(user, i, p) for b, user, i, p in uses if b is dst and start < p < dst_written]
    for b, user, i, p in uses:
        if b is not dst or p != dst_written or user is copy:
            continue
        # the op that overwrites the result reads it first (an in-place elementwise op): the copy
        # stays (it is lowered through global memory)
        if isinstance(user, LinalgStructuredOperation) and i < len(user.inputs):
            return None
        if _reads_output(user, i):
            return None
    if any(p >= src_written for _, _, p in readers):
        return None  # read after the source changed
    return [(user, i) for user, i, _ in readers]


@dataclass
class LowerGather(RewritePattern):
    """A generic that loads rows of a buffer at indices it reads (an embedding lookup) -> per index,
    an `npu.load` of it, the body's index arithmetic, and an `npu.dma` of the row (`loop_to_npu_gather`)."""

    machine: Machine

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        gather = match_gather(op)
        if gather is not None:
            lower_gather(emitter_before(op, rewriter), gather, self.machine)
            rewriter.erase(op)


@dataclass
class LowerVectorOp(RewritePattern):
    """An elementwise, reduction, fill or copy-like linalg op -> `npu.vec.*` or `npu.dma`."""

    machine: Machine

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if isinstance(op, LinalgStructuredOperation):
            lower_vector_op(emitter_before(op, rewriter), op, self.machine)
            rewriter.erase(op)


class RegroupCollapsedAlloc(RewritePattern):
    """A `memref.collapse_shape` that merges two non-unit dims of a local `memref.alloc` (a channel
    shuffle's [c/g, g] buffer read as [c]): the buffer is allocated in the collapsed shape, the same
    bytes, and its other users read it through a `memref.expand_shape`.

    A view walks each buffer dim on its own, so a slice of the merged dim that crosses the inner
    dim's boundary (3 of 28x4 channels from channel 3) is no view of the old buffer; of the new
    one it is, and the expansion is (each expanded dim walks the one merged buffer dim).
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.CollapseShapeOp, rewriter: PatternRewriter, /):
        alloc = op.src.owner
        if not isinstance(alloc, memref.AllocOp) or alloc.memref.type.layout != NoneAttr():
            return
        shape = alloc.memref.type.get_shape()
        if all(sum(shape[d] > 1 for d in group) < 2 for group in reassociation_groups(op)):
            return
        buffer = memref.AllocOp([], [], op.result.type)
        buffer.memref.name_hint = alloc.memref.name_hint
        expanded = memref.ExpandShapeOp(
            operands=[buffer.memref, []],
            result_types=[alloc.memref.type],
            properties={
                "reassociation": op.reassociation,
                "static_output_shape": DenseArrayBase.from_list(i64, shape),
            },
        )
        rewriter.insert([buffer, expanded], InsertPoint.before(alloc))
        rewriter.replace_all_uses_with(op.result, buffer.memref)
        rewriter.erase(op)
        rewriter.replace_all_uses_with(alloc.memref, expanded.result)
        rewriter.erase(alloc)


class EraseDeadValue(RewritePattern):
    """A memref view or float `arith.constant` nothing reads any more (views became npu indices,
    scalars instruction properties); the scalar unit computes on integers only."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        view = isinstance(
            op, memref.SubviewOp | memref.AlterShapeOperation | memref.ReinterpretCastOp
        )
        dead = view or isinstance(op, arith.ConstantOp) and isinstance(op.value, FloatAttr)
        if dead and not op.results[0].uses:
            rewriter.erase(op)


@dataclass(frozen=True)
class LoopToNpuPass(ModulePass):
    """Select npu instructions for the loop level on `machine` (a preset name or a machine TOML file;
    default: the module's `npu.machine`), and name that machine on the module (`npu.machine`) so the
    result verifies against it and runs without naming it again.

    * `loop.copy_async`/`loop.copy` become `npu.dma` on the engine serving the
      (source space, destination space) pair, views folded into indices and
      strides, pad and cast carried, split into `scf.for` loops past the engine's
      `max_dims`; a copy inside the vector spaces that no engine serves is a vector
      cast. `loop.wait` is dropped: `npu-insert-sync` orders the pipes.
    * matmul-like contractions on the matrix unit's spaces become `npu.mma`, batch
      dims as loops; a zero fill of the accumulator is absorbed into the first
      `npu.mma`, which overwrites instead of accumulating.
    * a generic that loads rows of a buffer at indices it reads (a gather) becomes,
      per index, an `npu.load` of it on the scalar unit, the body's index arithmetic
      (the wrap of negative indices) and an `npu.dma` of the row, whose source index
      is the computed value.
    * single-op elementwise, reduction and fill generics in a vector space become
      `npu.vec.*` with repeat/mask/stride from the machine's lanes; copy-like
      generics become DMAs, or fold into their readers' strides.
    * `memref.alloc` stays, for `npu-plan-memory` to place.

    What no unit of the machine can do is an error at the op, naming the machine
    and what it lacks.

        %t = loop.copy_async %sub -> %a1 : memref<64x64xf16, strided<[512, 1], offset: ?>, "gm"> -> ...
        loop.wait %t : !loop.token
        linalg.matmul ins(%a0, %b0 : memref<64x64xf16, "l0a">, memref<64x64xf16, "l0b">) outs(%c : ...)

    becomes

        npu.dma "mte2" %A[%i, 0] -> %a1[0, 0] {shape = array<i64: 64, 64>} : memref<256x512xf16, "gm"> -> ...
        npu.mma %a0[0, 0], %b0[0, 0] -> %c[0, 0] {m = 64 : i64, n = 64 : i64, k = 64 : i64, accumulate} : ...
    """

    name = "loop-to-npu"

    machine: str | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        machine = pass_machine(op, self.machine, self.name)
        named = op.attributes.get(MACHINE_ATTR)
        if isinstance(named, StringAttr) and load_machine(named.data).name != machine.name:
            raise error_at(
                op,
                f"{self.name}{{machine={self.machine}}}: the module targets machine '{named.data}' "
                f"({MACHINE_ATTR})",
            )
        PatternRewriteWalker(RegroupCollapsedAlloc(), apply_recursively=False).rewrite_module(op)
        contractions = LowerContraction(machine)
        # Contractions first: they look back for the zero fill of their accumulator.
        PatternRewriteWalker(contractions, apply_recursively=False).rewrite_module(op)
        for fill in contractions.absorbed_fills:
            fill.detach()
            fill.erase()
        PatternRewriteWalker(
            GreedyRewritePatternApplier(
                [
                    LowerCopy(machine),
                    DropWait(),
                    FoldTransposedCopy(machine),
                    LowerGather(machine),
                    LowerVectorOp(machine),
                ]
            ),
            apply_recursively=False,
        ).rewrite_module(op)
        PatternRewriteWalker(EraseDeadValue(), walk_reverse=True).rewrite_module(op)
        if named is None:
            op.attributes[MACHINE_ATTR] = StringAttr(self.machine or machine.name)
