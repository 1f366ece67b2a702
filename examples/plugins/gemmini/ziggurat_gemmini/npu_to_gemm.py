"""`npu-to-gemm`: the gemm commands for the npu instructions ziggurat's loop-to-npu selected.

The lowering from the loop level is ziggurat's own up to `loop-to-npu{machine=gemmini}`:
the machine file says where operands live (scratchpad, accumulator), which engine
moves what, and the array's instruction shape, so placement, tiling, padding and
view folding come for free. This pass maps what that produced onto Gemmini's
commands, one for one, and refuses what Gemmini cannot do:

    npu.dma "load" %A[%i, 0] -> %a[0, 0] {shape = array<i64: 16, 64>}   =>  gemm.load %A[%i, 0] -> %a[0, 0] {rows = 16, cols = 64}
    npu.mma %a[0, 0], %b[0, 0] -> %c[0, 0] {m = 16, n = 16, k = 64}     =>  gemm.compute ...
    npu.vec.relu %c[0, 0] -> %d[0, 0] {repeat = 8}                       =>  gemm.alu "relu" %c[0, 0] -> %d[0, 0] {rows, cols}
    npu.vec.cast (f32 -> f16 in the accumulator)                         =>  gemm.alu "cast" ...
    npu.dma "store" %c[0, 0] -> %C[%i, 0] {shape = array<i64: 16, 16>}  =>  gemm.store ...

Flags and buffers are untouched; `npu-plan-memory` and `npu-insert-sync` handle the
gemm commands through the pipe and windows they declare.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DYNAMIC_INDEX, DenseArrayBase, ModuleOp, i64
from xdsl.dialects.utils.dynamic_index_list import get_dynamic_index_list
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from ziggurat.diagnostics import error_at
from ziggurat.dialects import npu
from ziggurat_gemmini.gemm import AluOp, ComputeOp, LoadOp, StoreOp

_TRANSFERS = {"load": LoadOp, "store": StoreOp}
_ALU_FUNCTIONS = {npu.VecReluOp: "relu", npu.VecCastOp: "cast"}


def _indices(static, dynamic) -> list:
    return get_dynamic_index_list(static.get_values(), dynamic, DYNAMIC_INDEX)


def _flat_rows(elements: int, *buffers) -> tuple[int, int]:
    """A contiguous run of `elements` as rows x cols, cols dividing every buffer's row length
    so the rows line up in each."""
    cols = math.gcd(elements, *(buffer.type.get_shape()[-1] for buffer in buffers))
    return elements // cols, cols


class DmaToTransfer(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: npu.DmaOp, rewriter: PatternRewriter) -> None:
        command = _TRANSFERS.get(op.engine.data)
        if command is None:
            raise error_at(op, f"gemmini has no command for DMA engine '{op.engine.data}'")
        src, dst = (
            _indices(op.static_src_indices, op.src_indices),
            _indices(op.static_dst_indices, op.dst_indices),
        )
        if (
            op.pad is not None
            or op.transpose is not None
            or min(op.src.type.get_num_dims(), op.dst.type.get_num_dims()) < 2
        ):
            raise error_at(
                op,
                f"{command.name} moves tiles of 2-d or larger buffers, without padding or transposition",
            )
        strides = {side: getattr(op, f"{side}_strides") for side in ("src", "dst")}
        if len(op.src_shape) == 1 and all(
            s is None or s.get_values() == (1,) for s in strides.values()
        ):
            rows, cols = _flat_rows(op.src_shape[0], op.src, op.dst)
            flat = DenseArrayBase.from_list(i64, [cols, 1])
            rewriter.replace_op(
                op,
                command(op.src, src, op.dst, dst, rows, cols, src_strides=flat, dst_strides=flat),
            )
            return
        if len(op.src_shape) != 2:
            raise error_at(
                op, f"{command.name} moves 2-d tiles, got a {len(op.src_shape)}-d window"
            )
        rows, cols = op.src_shape
        given = {f"{side}_strides": value for side, value in strides.items() if value is not None}
        rewriter.replace_op(op, command(op.src, src, op.dst, dst, rows, cols, **given))


class MmaToCompute(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: npu.MmaOp, rewriter: PatternRewriter) -> None:
        operands = []
        for key in "abc":
            operands += [
                getattr(op, key),
                _indices(getattr(op, f"static_{key}_indices"), getattr(op, f"{key}_indices")),
            ]
        rewriter.replace_op(op, ComputeOp(*operands, *op.mnk, accumulate=op.accumulate is not None))


@dataclass
class VectorToAlu(RewritePattern):
    machine: object

    def match_and_rewrite(self, op, rewriter: PatternRewriter) -> None:
        if not isinstance(op, npu.VectorOperation):
            return
        function = _ALU_FUNCTIONS.get(type(op))
        if function is None:
            raise error_at(op, f"gemmini's ALU applies relu and casts only, not '{op.name}'")
        if op.mask is not None or op.stride is not None:
            raise error_at(
                op, "gemm.alu works on contiguous accumulator elements: no mask or stride"
            )
        (src_buffer, src_static, src_dynamic), (dst_buffer, dst_static, dst_dynamic) = op.buffers()
        rows, cols = _flat_rows(op.repeats * op.lanes(self.machine), src_buffer, dst_buffer)
        flat = DenseArrayBase.from_list(i64, [cols, 1])
        src, dst = _indices(src_static, src_dynamic), _indices(dst_static, dst_dynamic)
        alu = AluOp(function, src_buffer, src, dst_buffer, dst, rows, cols)
        alu.properties["src_strides"] = alu.properties["dst_strides"] = flat
        rewriter.replace_op(op, alu)


@dataclass(frozen=True)
class NpuToGemm(ModulePass):
    """Replace npu.dma/npu.mma/npu.vec.relu/npu.vec.cast by the gemm commands that do the same on gemmini."""

    name = "npu-to-gemm"

    machine: str = "gemmini"
    """The machine whose vector lanes the npu.vec instructions were sized for."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from ziggurat.machine import load_machine

        patterns = [DmaToTransfer(), MmaToCompute(), VectorToAlu(load_machine(self.machine))]
        for pattern in patterns:
            PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(op)


def lower_to_gemmini(options) -> str:
    """ziggurat's lower-to-npu for the gemmini machine, with npu-to-gemm after instruction selection."""
    from ziggurat.lowering.pipelines import check_options, expand_pipeline

    check_options("lower-to-gemmini", options, {})
    passes = expand_pipeline("lower-to-npu{machine=gemmini}").split(",")
    at = next(i for i, name in enumerate(passes) if name.startswith("loop-to-npu")) + 1
    return ",".join([*passes[:at], "npu-to-gemm", *passes[at:]])
