"""What the gemm commands compute and cost on ziggurat's machine model.

Registered through the `ziggurat.npu_instructions` entry point: each function
takes the interpreter's `InstructionContext`, does the numerics on checked
views of the buffers and queues the command on its pipe with the cycles the
machine file's rates give (`ziggurat.interpreters.timing`), so hazards, flags,
reports and traces treat these commands like ziggurat's own.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import DYNAMIC_INDEX
from xdsl.dialects.utils.dynamic_index_list import get_dynamic_index_list

from ziggurat.dialects.npu import element_bytes, space_of
from ziggurat.interpreters.npu_interpreter import convert
from ziggurat.interpreters.timing import dma_cycles, mma_cycles, vector_cycles
from ziggurat_gemmini.gemm import (
    AluOp,
    ComputeOp,
    LoadOp,
    StoreOp,
    TileOperation,
    TransferOperation,
)


def _window(ctx, op, key: str, shape: tuple[int, int], what: str, aligned: bool = True):
    buffer = getattr(op, key)
    static = getattr(op, f"static_{key}_indices").get_values()
    dynamic = getattr(op, f"{key}_indices")
    indices = [ctx.index(i) for i in get_dynamic_index_list(static, dynamic, DYNAMIC_INDEX)]
    strides = op.strides(key) if isinstance(op, TileOperation) else None
    return ctx.window(op, buffer, indices, shape, strides, what=what, aligned=aligned)


def run_transfer(ctx, op: TransferOperation) -> None:
    # like ziggurat's DMA engines, mvin and mvout move bytes: their tiles start anywhere
    source, read = _window(ctx, op, "src", op.tile, "source", aligned=False)
    target, write = _window(ctx, op, "dst", op.tile, "destination", aligned=False)
    target[...] = convert(np.array(source), target.dtype)
    engine = ctx.machine.dmas[op.ENGINE]
    cycles = dma_cycles(
        ctx.machine, engine, space_of(op.src), space_of(op.dst), read.bytes, write.bytes
    )
    ctx.issue(op, engine.pipe, cycles, [read], [write])


def run_compute(ctx, op: ComputeOp) -> None:
    m, n, k = op.mnk
    a, read_a = _window(ctx, op, "a", (m, k), "operand A")
    b, read_b = _window(ctx, op, "b", (k, n), "operand B")
    c, write = _window(ctx, op, "c", (m, n), "operand C")
    wide = np.int32 if c.dtype.kind == "i" else np.float32
    product = np.matmul(a.astype(wide), b.astype(wide))
    reads = [read_a, read_b]
    if op.accumulate is not None:
        product += c
        reads.append(write)
    c[...] = product.astype(c.dtype)
    pair = (str(op.a.type.get_element_type()), str(op.c.type.get_element_type()))
    ctx.issue(
        op,
        ctx.machine.matrix.pipe,
        mma_cycles(ctx.machine, m, n, k, *pair),
        reads,
        [write],
        flops=2 * m * n * k,
    )


def run_alu(ctx, op: AluOp) -> None:
    rows, cols = op.tile
    source, read = _window(ctx, op, "src", op.tile, "source")
    target, write = _window(ctx, op, "dst", op.tile, "destination")
    function = op.function.data
    target[...] = convert(
        np.maximum(source, 0) if function == "relu" else np.array(source), target.dtype
    )
    block = cols * max(
        element_bytes(op.src.type.get_element_type()), element_bytes(op.dst.type.get_element_type())
    )
    ctx.issue(
        op,
        ctx.machine.vector.pipe,
        vector_cycles(ctx.machine, function, rows, block),
        [read],
        [write],
        rows * cols,
    )


INSTRUCTIONS = {LoadOp: run_transfer, StoreOp: run_transfer, ComputeOp: run_compute, AluOp: run_alu}
