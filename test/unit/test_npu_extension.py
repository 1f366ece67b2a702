"""A hardware op from outside ziggurat runs on the npu interpreter through `register_instruction`.

The test dialect has one instruction, `ext.scale %buf[i, j] {factor, rows, cols}`:
multiply a window of a vector-unit buffer in place, on the vector pipe. It gets
the same bounds checks, hazard detection and timing as the built-in ones.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import arith, builtin, func, scf
from xdsl.dialects.builtin import DenseArrayBase, FloatAttr, IntegerAttr, MemRefType, i64
from xdsl.ir import Dialect
from xdsl.irdl import irdl_op_definition, operand_def, prop_def
from xdsl.parser import Parser

from ziggurat.diagnostics import DiagnosticError
from ziggurat.dialects import npu
from ziggurat.interpreters.npu_interpreter import register_instruction, run_npu


@irdl_op_definition
class ScaleOp(npu.NpuOperation):
    name = "ext.scale"
    buffer = operand_def(MemRefType)
    index = prop_def(DenseArrayBase.constr(i64))
    rows = prop_def(IntegerAttr)
    cols = prop_def(IntegerAttr)
    factor = prop_def(FloatAttr)

    def verify_machine(self, machine) -> None:
        npu._require_space(machine, npu.space_of(self.buffer), "ext.scale's buffer")


def run_scale(ctx, op: ScaleOp) -> None:
    shape = (op.rows.value.data, op.cols.value.data)
    view, access = ctx.window(op, op.buffer, list(op.index.get_values()), shape, what="buffer")
    view[...] = (view.astype(np.float32) * op.factor.value.data).astype(view.dtype)
    ctx.issue(
        op,
        ctx.machine.vector.pipe,
        cycles=shape[0] * 4,
        reads=[access],
        writes=[access],
        flops=view.size,
    )


Ext = Dialect("ext", [ScaleOp])
register_instruction(ScaleOp, run_scale)

KERNEL = """
module attributes {npu.machine = "davinci"} {
  func.func @main(%x: memref<8x128xf16, "gm">, %y: memref<8x128xf16, "gm">) {
    %ub = npu.buffer offset 0 : memref<8x128xf16, "ub">
    npu.dma "mte2" %x[0, 0] -> %ub[0, 0] {shape = array<i64: 8, 128>} : memref<8x128xf16, "gm"> -> memref<8x128xf16, "ub">
    npu.set_flag "mte2" -> "vector", 0
    npu.wait_flag "mte2" -> "vector", 0
    "ext.scale"(%ub) <{index = array<i64: ROW, 0>, rows = ROWS : i64, cols = 128 : i64, factor = 3.0 : f32}> : (memref<8x128xf16, "ub">) -> ()
    npu.set_flag "vector" -> "mte3", 0
    npu.wait_flag "vector" -> "mte3", 0
    npu.dma "mte3" %ub[0, 0] -> %y[0, 0] {shape = array<i64: 8, 128>} : memref<8x128xf16, "ub"> -> memref<8x128xf16, "gm">
    func.return
  }
}
"""


def parse(text: str) -> builtin.ModuleOp:
    ctx = Context()
    for dialect in (builtin.Builtin, func.Func, arith.Arith, scf.Scf, npu.Npu, Ext):
        ctx.load_dialect(dialect)
    return Parser(ctx, text).parse_module()


def kernel(row: int = 0, rows: int = 8, synchronized: bool = True) -> builtin.ModuleOp:
    text = KERNEL.replace("ROWS", str(rows)).replace("ROW", str(row))
    if not synchronized:
        text = "\n".join(line for line in text.splitlines() if '"mte2" -> "vector"' not in line)
    return parse(text)


def test_a_registered_instruction_computes_and_costs_time():
    x = np.arange(8 * 128, dtype=np.float16).reshape(8, 128) / 64
    result = run_npu(kernel(), inputs={"x": x})
    np.testing.assert_allclose(result.arguments["y"], (x.astype(np.float32) * 3).astype(np.float16))
    assert result.stats.busy_cycles["vector"] == 8 * 4
    assert result.stats.flops == 8 * 128


def test_a_registered_instruction_is_bounds_checked():
    with pytest.raises(DiagnosticError, match="out of bounds"):
        run_npu(kernel(row=4, rows=8), inputs={"x": np.zeros((8, 128), np.float16)})


def test_a_registered_instruction_takes_part_in_hazard_detection():
    with pytest.raises(DiagnosticError, match="hazard|still being written|before"):
        run_npu(kernel(synchronized=False), inputs={"x": np.zeros((8, 128), np.float16)})


def test_registering_twice_needs_override():
    with pytest.raises(ValueError, match="already registered"):
        register_instruction(ScaleOp, run_scale)
    register_instruction(ScaleOp, run_scale, override=True)
