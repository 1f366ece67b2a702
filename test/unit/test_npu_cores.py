"""Several cores running one npu program: npu.core_id splits the work, global memory is shared, races are found."""

from __future__ import annotations

import numpy as np
import pytest
from test_npu_interpreter import TINY, diagnose, run

from ziggurat.interpreters.report import build_report
from ziggurat.interpreters.trace import trace_events

# Each core applies relu to its own 16 rows of a 64x64 f32 matrix: rows [16 core, 16 core + 16).
RELU_ROWS = """
func.func @main(%x: memref<64x64xf32, "gm">, %y: memref<64x64xf32, "gm">) {
  %core = npu.core_id
  %cores = npu.num_cores
  %c64 = arith.constant 64 : index
  %rows = arith.divui %c64, %cores : index
  %row = arith.muli %core, %rows : index
  %t = npu.buffer offset 0 : memref<16x64xf32, "ub">
  npu.dma "mte2" %x[%row, 0] -> %t[0, 0] {shape = array<i64: 16, 64>} : memref<64x64xf32, "gm"> -> memref<16x64xf32, "ub">
  npu.set_flag "mte2" -> "vector", 0
  npu.wait_flag "mte2" -> "vector", 0
  npu.vec.relu %t[0, 0] -> %t[0, 0] {repeat = 16 : i64} : memref<16x64xf32, "ub"> -> memref<16x64xf32, "ub">
  npu.set_flag "vector" -> "mte3", 0
  npu.wait_flag "vector" -> "mte3", 0
  npu.dma "mte3" %t[0, 0] -> %y[%row, 0] {shape = array<i64: 16, 64>} : memref<16x64xf32, "ub"> -> memref<64x64xf32, "gm">
  func.return
}
"""


def test_cores_split_the_work_by_core_id():
    x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    result = run(RELU_ROWS, [x], cores=4)
    np.testing.assert_array_equal(result.outputs[0], np.maximum(x, 0))
    assert len(result.core_stats) == 4
    stats = result.stats
    assert stats.cores == 4
    assert stats.bytes_read["gm"] == stats.bytes_written["gm"] == 64 * 64 * 4
    assert stats.total_cycles == max(core.total_cycles for core in result.core_stats)
    # the same program on each core: the same time, so the average core is as busy as each
    assert stats.utilization("vector") == pytest.approx(result.core_stats[0].utilization("vector"))


def test_cores_share_global_bandwidth():
    x = np.zeros((64, 64), np.float32)
    four = run(RELU_ROWS, [x], cores=4).core_stats[0]
    alone = run(RELU_ROWS, [x], cores=4, active_cores=1).core_stats[0]
    load = 16 * 64 * 4
    # TINY: gm 64 B/cycle shared by 4 cores = 16 B/cycle each, below mte2's 32
    assert [e.end - e.start for e in four.events if e.name == "npu.dma" and e.pipe == "mte2"] == [
        100 + load / 16
    ]
    assert [e.end - e.start for e in alone.events if e.name == "npu.dma" and e.pipe == "mte2"] == [
        100 + load / 32
    ]


def test_a_core_touching_what_another_writes_is_a_race():
    # every core writes rows [0, 16)
    text = RELU_ROWS.replace("-> %y[%row, 0]", "-> %y[0, 0]")
    message = diagnose(text, [np.zeros((64, 64), np.float32)], cores=2)
    assert message.startswith(
        "test.mlir:15:3: error: npu.dma on core 0 writes 'gm' bytes [16384, 20480) that npu.dma on core 1 writes"
    )
    assert "cores do not synchronize, so each must keep to its own part of global memory" in message
    assert "test.mlir:15:3: note: the write on core 1" in message


def test_core_count_and_combined_report_and_trace():
    assert "cannot run on 5 cores: machine 'tiny' has 4" in diagnose(
        RELU_ROWS, [np.zeros((64, 64), np.float32)], cores=5
    )
    result = run(RELU_ROWS, [np.zeros((64, 64), np.float32)], cores=4)
    report = build_report(result.stats, TINY)
    # 16 KiB read and 16 KiB written, each direction at the full 64 B/cycle of the 4 cores together
    assert report["roofline"]["global_memory_cycles"] == 64 * 64 * 4 / 64
    processes = {
        e["pid"] for e in trace_events(result.stats)["traceEvents"] if e["name"] == "npu.vec.relu"
    }
    assert processes == {0, 1, 2, 3}
