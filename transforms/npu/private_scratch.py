"""`npu-private-scratch`: each core its own copy of the global-memory scratch buffers that a
distributed program uses within one phase (docs/lowering.md, section 5).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from ziggurat.diagnostics import error_at
from ziggurat.dialects import npu
from ziggurat.dialects.npu import CORES_ATTR
from ziggurat.locations import locate
from ziggurat.transforms.npu import defined_functions, pass_machine


def _mixed(static: DenseArrayBase, dynamic: tuple[SSAValue, ...]) -> list[SSAValue | int]:
    """MLIR's mixed index list from its static and dynamic parts."""
    values = iter(dynamic)
    return [next(values) if i == DYNAMIC_INDEX else i for i in static.get_values()]


def _phase(op: Operation, block_ops: dict[Operation, int]) -> int:
    """The phase (`npu.sync_cores` passed before it) of the top-level op around `op`."""
    while op not in block_ops:
        parent = op.parent_op()
        assert parent is not None
        op = parent
    return block_ops[op]


def _per_core(use: Operation, value: SSAValue, core: SSAValue) -> Operation:
    """`use` (an `npu.dma` or `npu.load`) with the core's index first wherever it addresses `value`."""
    if isinstance(use, npu.LoadOp):
        new: Operation = npu.LoadOp(
            use.buffer, [core, *_mixed(use.static_indices, tuple(use.indices))]
        )
    else:
        assert isinstance(use, npu.DmaOp)
        src = _mixed(use.static_src_indices, tuple(use.src_indices))
        dst = _mixed(use.static_dst_indices, tuple(use.dst_indices))
        src = [core, *src] if use.src is value else src
        dst = [core, *dst] if use.dst is value else dst
        new = npu.DmaOp(use.engine.data, use.src, src, use.dst, dst, list(use.shape.get_values()))
        for key in ("src_strides", "dst_strides", "pad", "pad_value", "transpose"):
            if key in use.properties:
                new.properties[key] = use.properties[key]
    new.attributes.update(use.attributes)
    locate(new, use.location)
    return new


@dataclass(frozen=True)
class PrivateScratchPass(ModulePass):
    """Give each core its own copy of the global-memory scratch of a distributed program.

    A buffer the program allocates in global memory (a `memref.alloc`, not an argument or a
    global, in a space of the module's `npu.machine` with `level = "global"`) and uses only
    between two `npu.sync_cores` (one phase: a convolution's padded input, a double-buffered
    staging copy) holds what one core writes and then reads itself;
    the cores of a phase run at once, so one buffer for all of them would be a race. In a
    module compiled for N cores (`npu.cores = N`, set by `loop-distribute`) each such buffer
    becomes N copies, `memref<N x T>`, and every `npu.dma` or `npu.load` of it addresses
    copy `npu.core_id` by a leading index:

        %pad = memref.alloc() : memref<1x64x6x58xf16, "gm">
        npu.dma "mte3" %t[0, 0, 0, 0] -> %pad[0, 0, %r, 0] ...

    becomes

        %pad = memref.alloc() : memref<4x1x64x6x58xf16, "gm">
        npu.dma "mte3" %t[0, 0, 0, 0] -> %pad[%core, 0, 0, %r, 0] ...

    A buffer that another phase reads (a layer's output, which the next layer reads after
    the barrier) stays shared. Without `npu.cores` nothing changes.
    """

    name = "npu-private-scratch"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        attribute = op.attributes.get(CORES_ATTR)
        if attribute is None:
            return
        if not isinstance(attribute, IntegerAttr) or attribute.value.data < 1:
            raise error_at(op, f"npu-private-scratch: {CORES_ATTR} must be an integer >= 1")
        cores = attribute.value.data
        if cores == 1:
            return
        machine = pass_machine(op, None, self.name)
        shared = {name for name, space in machine.memories.items() if space.level == "global"}
        for function in defined_functions(op):
            self.privatize(function, cores, shared)

    def privatize(self, function: FuncOp, cores: int, shared: set[str]) -> None:
        block = function.body.block
        core_ids = [op for op in block.ops if isinstance(op, npu.CoreIdOp)]
        if not core_ids:
            return
        core = core_ids[0]
        # first, so that it stands before every use it gets
        core.detach()
        Rewriter.insert_op(core, InsertPoint.at_start(block))
        phases: dict[Operation, int] = {}
        phase = 0
        for top in block.ops:
            phase += isinstance(top, npu.SyncCoresOp)
            phases[top] = phase
        for alloc in [op for op in block.ops if isinstance(op, memref.AllocOp)]:
            memref_type = alloc.memref.type
            space = memref_type.memory_space if isinstance(memref_type, MemRefType) else None
            if alloc.operands or not isinstance(space, StringAttr) or space.data not in shared:
                continue
            uses = [use.operation for use in alloc.memref.uses]
            if not uses or not all(isinstance(u, npu.DmaOp | npu.LoadOp) for u in uses):
                continue
            if len({_phase(u, phases) for u in uses}) != 1:
                continue
            copies = MemRefType(
                memref_type.element_type,
                [cores, *memref_type.get_shape()],
                memory_space=memref_type.memory_space,
            )
            new_alloc = memref.AllocOp([], [], copies)
            Rewriter.replace_op(alloc, new_alloc, [new_alloc.memref])
            for use in set(uses):
                Rewriter.replace_op(use, _per_core(use, new_alloc.memref, core.result), [])
