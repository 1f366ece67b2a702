"""Several cores running one npu program: npu.core_id splits the work, global memory is shared, races are found."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from test_npu_interpreter import TINY, diagnose, run

from ziggurat.interpreters.report import build_report, format_report
from ziggurat.interpreters.trace import trace_events
from ziggurat.machine import Machine

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


# Phase 1: each core writes relu of its own 16 rows of x to y (core 0 also scales them twice
# more, so it arrives late). npu.sync_cores. Phase 2: each core copies the rows the next core
# wrote in phase 1 to its own rows of z.
TWO_PHASES = """
func.func @main(%x: memref<64x64xf32, "gm">, %y: memref<64x64xf32, "gm">, %z: memref<64x64xf32, "gm">) {
  %core = npu.core_id
  %cores = npu.num_cores
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %row = arith.muli %core, %c16 : index
  %next = arith.addi %core, %c1 : index
  %wrapped = arith.remui %next, %cores : index
  %next_row = arith.muli %wrapped, %c16 : index
  %first = arith.cmpi eq, %core, %c0 : index
  %t = npu.buffer offset 0 : memref<16x64xf32, "ub">
  npu.dma "mte2" %x[%row, 0] -> %t[0, 0] {shape = array<i64: 16, 64>} : memref<64x64xf32, "gm"> -> memref<16x64xf32, "ub">
  npu.set_flag "mte2" -> "vector", 0
  npu.wait_flag "mte2" -> "vector", 0
  npu.vec.relu %t[0, 0] -> %t[0, 0] {repeat = 16 : i64} : memref<16x64xf32, "ub"> -> memref<16x64xf32, "ub">
  scf.if %first {
    npu.vec.muls %t[0, 0] -> %t[0, 0] {scalar = 1.0 : f64, repeat = 16 : i64} : memref<16x64xf32, "ub"> -> memref<16x64xf32, "ub">
    npu.vec.muls %t[0, 0] -> %t[0, 0] {scalar = 1.0 : f64, repeat = 16 : i64} : memref<16x64xf32, "ub"> -> memref<16x64xf32, "ub">
  }
  npu.set_flag "vector" -> "mte3", 0
  npu.wait_flag "vector" -> "mte3", 0
  npu.dma "mte3" %t[0, 0] -> %y[%row, 0] {shape = array<i64: 16, 64>} : memref<16x64xf32, "ub"> -> memref<64x64xf32, "gm">
  npu.sync_cores
  npu.dma "mte2" %y[%next_row, 0] -> %t[0, 0] {shape = array<i64: 16, 64>} : memref<64x64xf32, "gm"> -> memref<16x64xf32, "ub">
  npu.set_flag "mte2" -> "mte3", 0
  npu.wait_flag "mte2" -> "mte3", 0
  npu.dma "mte3" %t[0, 0] -> %z[%row, 0] {shape = array<i64: 16, 64>} : memref<16x64xf32, "ub"> -> memref<64x64xf32, "gm">
  func.return
}
"""


def test_sync_cores_orders_the_phases():
    x = np.random.default_rng(1).standard_normal((64, 64)).astype(np.float32)
    result = run(TWO_PHASES, [x], cores=4)
    y, z = result.outputs
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    np.testing.assert_array_equal(z, np.roll(np.maximum(x, 0), -16, axis=0))


def test_without_sync_cores_the_phases_race():
    # each core still drains its own pipes, but does not wait for the others
    text = TWO_PHASES.replace("npu.sync_cores", "npu.barrier")
    message = diagnose(text, [np.zeros((64, 64), np.float32)], cores=4)
    assert "error: npu.dma on core 0 reads 'gm' bytes" in message
    assert "or an npu.sync_cores must separate them" in message


def test_sync_cores_aligns_the_clocks_at_the_latest_core():
    machine = dataclasses.replace(TINY, sync_cores_latency=7)
    result = run(TWO_PHASES, [np.zeros((64, 64), np.float32)], machine, cores=4)
    # each core's phase 1 ends when its store to y does; core 0, with two more vector
    # instructions, is the latest
    arrivals = [
        [e.end for e in core.events if e.name == "npu.dma" and e.pipe == "mte3"][0]
        for core in result.core_stats
    ]
    assert arrivals[0] > max(arrivals[1:])
    starts = [
        [e.start for e in core.events if e.name == "npu.dma" and e.pipe == "mte2"][1]
        for core in result.core_stats
    ]
    # every core issues its first phase-2 instruction at the release (the scalar unit
    # spends a cycle per op it walks before the DMA)
    assert starts == [starts[0]] * 4
    assert arrivals[0] + 7 < starts[0] <= arrivals[0] + 7 + 2


def test_one_core_pays_the_barrier_latency_too():
    machine = dataclasses.replace(TINY, sync_cores_latency=500)
    with_sync = run(TWO_PHASES, [np.zeros((64, 64), np.float32)], machine, cores=1).stats
    without = run(
        TWO_PHASES.replace("npu.sync_cores", "npu.barrier"),
        [np.zeros((64, 64), np.float32)],
        machine,
        cores=1,
    ).stats
    assert with_sync.total_cycles == without.total_cycles + 500


def test_sync_cores_under_a_branch_on_the_core_is_refused():
    text = TWO_PHASES.replace(
        "  npu.sync_cores\n", "  npu.barrier\n  scf.if %first {\n    npu.sync_cores\n  }\n"
    )
    message = diagnose(text, [np.zeros((64, 64), np.float32)], cores=2)
    assert (
        "test.mlir:28:5: error: 'npu.sync_cores' op npu.sync_cores under an scf.if on npu.core_id"
        in message
    )


def test_a_core_that_ends_before_a_sync_cores_is_a_deadlock():
    # core 0 passes one barrier, core 1 none (an scf.if on npu.core_id is refused by the verifier)
    text = TWO_PHASES.replace(
        "  npu.sync_cores\n",
        "  npu.barrier\n  scf.for %i = %core to %c1 step %c1 {\n    npu.sync_cores\n  }\n",
    )
    message = diagnose(text, [np.zeros((64, 64), np.float32)], cores=2)
    assert message.startswith(
        "test.mlir:28:5: error: npu.sync_cores on core 0 waits for core 1, which ended without "
        "reaching it (deadlock)"
    )


# Cores below %n load their 16 rows of x (after %delay scalar cycles per core number); the
# others transfer nothing.
SOME_CORES_LOAD = """
func.func @main(%x: memref<64x64xf32, "gm">) {
  %core = npu.core_id
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %n = arith.constant N : index
  %delay = arith.constant DELAY : index
  %wait = arith.muli %core, %delay : index
  scf.for %i = %c0 to %wait step %c1 {
  }
  %row = arith.muli %core, %c16 : index
  %loads = arith.cmpi ult, %core, %n : index
  %t = npu.buffer offset 0 : memref<16x64xf32, "ub">
  scf.if %loads {
    npu.dma "mte2" %x[%row, 0] -> %t[0, 0] {shape = array<i64: 16, 64>} : memref<64x64xf32, "gm"> -> memref<16x64xf32, "ub">
  }
  func.return
}
"""


def _narrow_gm() -> Machine:
    """TINY with global memory as fast as one mte2 (32 B/cycle): any sharing shows."""
    memories = dict(TINY.memories)
    memories["gm"] = dataclasses.replace(
        memories["gm"], read_bytes_per_cycle=32, write_bytes_per_cycle=32
    )
    return dataclasses.replace(TINY, memories=memories)


def _load_cycles(loading: int, delay: int = 0) -> list[float]:
    text = SOME_CORES_LOAD.replace("N :", f"{loading} :").replace("DELAY :", f"{delay} :")
    result = run(text, [np.zeros((64, 64), np.float32)], _narrow_gm(), cores=4)
    return [e.end - e.start for core in result.core_stats for e in core.events if e.pipe == "mte2"]


def test_a_core_transferring_alone_gets_the_whole_bandwidth():
    # the 3 idle cores take no share: 32 B/cycle, not 32 / 4
    assert _load_cycles(1) == [100 + 16 * 64 * 4 / 32]


def test_cores_transferring_at_once_share_the_bandwidth():
    assert _load_cycles(2) == [100 + 16 * 64 * 4 / 16] * 2
    assert _load_cycles(4) == [100 + 16 * 64 * 4 / 8] * 4


def test_cores_transferring_one_after_another_each_get_it_all():
    # core 1 starts its load after core 0's has ended
    assert _load_cycles(2, delay=400) == [100 + 16 * 64 * 4 / 32] * 2


def test_a_given_count_of_active_cores_shares_statically():
    result = run(
        SOME_CORES_LOAD.replace("N :", "1 :").replace("DELAY :", "0 :"),
        [np.zeros((64, 64), np.float32)],
        _narrow_gm(),
        cores=4,
        active_cores=4,
    )
    assert [e.end - e.start for e in result.core_stats[0].events if e.pipe == "mte2"] == [
        100 + 16 * 64 * 4 / 8
    ]


def test_report_per_core_imbalance_and_chip_roofline():
    # core 0 alone loads: it is the only busy core of the layer
    text = SOME_CORES_LOAD.replace("N :", "1 :").replace("DELAY :", "0 :")
    result = run(text, [np.zeros((64, 64), np.float32)], TINY, cores=4)
    report = build_report(result.stats, TINY, layers=True)
    mte2 = [core["busy_cycles"].get("mte2", 0.0) for core in report["per_core"]]
    assert mte2 == [100 + 16 * 64 * 4 / 32, 0.0, 0.0, 0.0]
    (layer,) = [layer for layer in report["layers"] if layer["busy_cycles"].get("mte2")]
    assert layer["imbalance"] == 4.0
    # 4 KiB read at the chip's 64 B/cycle
    assert report["chip_roofline"]["global_memory_cycles"] == 16 * 64 * 4 / 64
    assert "per core" in format_report(report)
    assert "chip_roofline" not in build_report(
        run(text, [np.zeros((64, 64), np.float32)]).stats, TINY
    )
