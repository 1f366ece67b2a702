"""`npu.load` (the scalar unit reads an index) and the gathers loop-to-npu builds from it: numerics
against the graph interpreter, out-of-range indices, the scalar unit's stall and its flags."""

from __future__ import annotations

import numpy as np
import pytest
from test_npu_interpreter import diagnose, run

from ziggurat.context import default_context
from ziggurat.diagnostics import DiagnosticError
from ziggurat.interpreters.interpreter import run_function
from ziggurat.interpreters.npu_interpreter import run_npu
from ziggurat.parsing import parse_source
from ziggurat.testing.differential import apply_pipeline

# One row of a 4x8 table per index read from ub: the index wrapped when negative, as ONNX's Gather.
LOOKUP = """
func.func @main(%table: memref<4x8xf32, "gm">, %ids: memref<3xi64, "gm">, %out: memref<3x8xf32, "gm">) {
  %i = npu.buffer offset 0 : memref<3xi64, "ub">
  %rows = npu.buffer offset 32 : memref<3x8xf32, "ub">
  npu.dma "mte2" %ids[0] -> %i[0] {shape = array<i64: 3>} : memref<3xi64, "gm"> -> memref<3xi64, "ub">
  npu.set_flag "mte2" -> "scalar", 0
  npu.wait_flag "mte2" -> "scalar", 0
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  scf.for %j = %c0 to %c3 step %c1 {
    %v = npu.load %i[%j] : memref<3xi64, "ub"> -> i64
    %x = arith.index_cast %v : i64 to index
    %neg = arith.cmpi slt, %x, %c0 : index
    %up = arith.addi %x, %c4 : index
    %row = arith.select %neg, %up, %x : index
    npu.dma "mte2" %table[%row, 0] -> %rows[%j, 0] {shape = array<i64: 8>} : memref<4x8xf32, "gm"> -> memref<3x8xf32, "ub">
  }
  npu.set_flag "mte2" -> "mte3", 0
  npu.wait_flag "mte2" -> "mte3", 0
  npu.dma "mte3" %rows[0, 0] -> %out[0, 0] {shape = array<i64: 3, 8>} : memref<3x8xf32, "ub"> -> memref<3x8xf32, "gm">
  func.return
}
"""

TABLE = np.arange(32, dtype=np.float32).reshape(4, 8)


def test_a_lookup_copies_the_rows_its_indices_name_negative_ones_wrapped():
    ids = np.array([2, -1, 0], np.int64)
    (out,) = run(LOOKUP, [TABLE, ids]).outputs
    np.testing.assert_array_equal(out, TABLE[[2, 3, 0]])


@pytest.mark.parametrize("bad", [4, -5])
def test_an_index_outside_the_table_is_an_error_at_the_row_copy(bad):
    message = diagnose(LOOKUP, [TABLE, np.array([0, bad, 1], np.int64)])
    wrapped = bad + 4 if bad < 0 else bad
    assert (
        f"test.mlir:18:5: error: index {wrapped} of the source is out of bounds: "
        "dimension 0 has size 4" in message
    )


def test_the_scalar_unit_waits_for_each_load_before_it_issues_the_row_copy():
    stats = run(LOOKUP, [TABLE, np.zeros(3, np.int64)]).stats
    rows = [e for e in stats.events if e.name == "npu.dma" and e.pipe == "mte2"][1:]
    loads = [e for e in stats.events if e.name == "npu.load"]
    assert len(loads) == 3 and all(e.pipe == "scalar" for e in loads)
    for load, row in zip(loads, rows):
        assert row.start >= load.end  # the row's address is the loaded value
    assert stats.bytes_read["ub"] >= 3 * 8  # the three indices, read by the scalar unit


def test_a_load_of_bytes_a_dma_may_still_be_writing_is_a_hazard():
    text = LOOKUP.replace('  npu.wait_flag "mte2" -> "scalar", 0\n', "").replace(
        '  npu.set_flag "mte2" -> "scalar", 0\n', ""
    )
    message = diagnose(text, [TABLE, np.zeros(3, np.int64)])
    assert "error: npu.load on pipe 'scalar' reads 'ub'" in message
    assert "npu.dma on pipe 'mte2' may still be writing" in message


GATHER = """
func.func @main(%table: tensor<16x64xf16>, %ids: tensor<2x5xi64>) -> tensor<2x5x64xf16> {
  %g = graph.gather %table, %ids {axis = 0 : i64} : (tensor<16x64xf16>, tensor<2x5xi64>) -> tensor<2x5x64xf16>
  func.return %g : tensor<2x5x64xf16>
}
"""


@pytest.mark.parametrize("machine", ["davinci", "tensorcore", "systolic"])
def test_lowered_gather_matches_the_graph_interpreter_exactly(machine):
    rng = np.random.default_rng(0)
    table = rng.standard_normal((16, 64)).astype(np.float16)
    ids = rng.integers(-16, 16, (2, 5)).astype(np.int64)
    context = default_context()
    (expected,) = run_function(parse_source(context, GATHER, "gather.mlir"), [table, ids])
    module = parse_source(context, GATHER, "gather.mlir")
    apply_pipeline(module, f"lower-to-npu{{machine={machine}}}")
    (out,) = run_npu(module, machine, [table, ids]).outputs
    np.testing.assert_array_equal(out, expected)
    with pytest.raises(DiagnosticError, match="index 16 of the source is out of bounds"):
        run_npu(module, machine, [table, np.full((2, 5), 16, np.int64)])
