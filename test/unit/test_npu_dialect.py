"""The npu dialect's Python builders, as lowering passes use them: the ops they build verify and print as written."""

from __future__ import annotations

from io import StringIO

import pytest
from xdsl.builder import Builder
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    IndexType,
    MemRefType,
    ModuleOp,
    StringAttr,
)
from xdsl.printer import Printer
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import VerifyException

from ziggurat.dialects import npu
from ziggurat.machine import VECTOR_OPS


def buffer(shape, element, space):
    return MemRefType(element, shape, memory_space=StringAttr(space))


def build_kernel() -> ModuleOp:
    f16, f32 = Float16Type(), Float32Type()
    gm_type = buffer((64, 256), f16, "gm")
    function = func.FuncOp("main", ((gm_type,), ()))
    builder = Builder(InsertPoint.at_end(function.body.block))
    (gm,) = function.args
    i = builder.insert(arith.ConstantOp.from_int_and_width(16, IndexType())).result
    l1 = builder.insert(npu.BufferOp(buffer((16, 256), f16, "l1"), 0)).result
    a = builder.insert(npu.BufferOp(buffer((16, 16), f16, "l0a"), 0)).result
    b = builder.insert(npu.BufferOp(buffer((16, 16), f16, "l0b"), 0)).result
    c = builder.insert(npu.BufferOp(buffer((16, 16), f32, "l0c"), 0)).result
    ub = builder.insert(npu.BufferOp(buffer((16, 16), f32, "ub"), 0)).result
    builder.insert(npu.DmaOp("mte2", gm, [i, 0], l1, [0, 0], [16, 256]))
    builder.insert(npu.SetFlagOp("mte2", "mte1", 0))
    builder.insert(npu.WaitFlagOp("mte2", "mte1", 0))
    builder.insert(
        npu.DmaOp("mte1", l1, [0, 16], a, [0, 0], [16, 16], transpose=True, pad=[0, 0, 0, 0])
    )
    builder.insert(npu.MmaOp(a, [0, 0], b, [0, 0], c, [0, 0], 16, 16, 16, accumulate=True))
    builder.insert(
        npu.VecAddOp.from_buffers([(ub, [0, 0]), (ub, [8, 0])], (ub, [0, 0]), repeat=2, mask=64)
    )
    builder.insert(
        npu.VecReduceOp.from_buffers([(ub, [0, 0])], (ub, [0, 0]), combiner=StringAttr("max"))
    )
    builder.insert(npu.BarrierOp())
    builder.insert(func.ReturnOp())
    return ModuleOp([function])


def printed(op) -> str:
    stream = StringIO()
    Printer(stream).print_op(op)
    return stream.getvalue()


def test_builders_make_ops_that_verify_and_print_as_written():
    module = build_kernel()
    module.verify()
    text = printed(module)
    assert 'npu.buffer offset 0 : memref<16x256xf16, "l1">' in text
    assert 'npu.dma "mte2" %0[%1, 0] -> %2[0, 0] {shape = array<i64: 16, 256>}' in text
    assert 'npu.set_flag "mte2" -> "mte1", 0' in text
    assert "{shape = array<i64: 16, 16>, pad = array<i64: 0, 0, 0, 0>, transpose}" in text
    assert (
        "npu.mma %3[0, 0], %4[0, 0] -> %5[0, 0] {m = 16 : i64, n = 16 : i64, k = 16 : i64, accumulate}"
        in text
    )
    assert "npu.vec.add %6[0, 0], %6[8, 0] -> %6[0, 0] {repeat = 2 : i64, mask = 64 : i64}" in text
    assert 'npu.vec.reduce "max" %6[0, 0] -> %6[0, 0]' in text
    assert "npu.barrier\n" in text


def test_the_module_machine_attribute_turns_on_machine_rules():
    module = build_kernel()
    module.attributes[npu.MACHINE_ATTR] = StringAttr("davinci")
    # davinci's L0A is aligned to 512 bytes, its cube reads 16x16x16 f16 tiles: all legal
    module.verify()
    dma = next(op for op in module.walk() if isinstance(op, npu.DmaOp) and op.engine.data == "mte1")
    dma.properties["engine"] = StringAttr("mte2")
    with pytest.raises(
        VerifyException,
        match=r"engine 'mte2' cannot move data from 'l1' to 'l0a' \(it serves gm->l1, gm->ub\)",
    ):
        module.verify()


def test_vector_kinds_are_the_vector_ops():
    kinds = {
        op.name.removeprefix("npu.vec.")
        for op in npu.Npu.operations
        if op.name.startswith("npu.vec.")
    }
    assert kinds == set(VECTOR_OPS)
