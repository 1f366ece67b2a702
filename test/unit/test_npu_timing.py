"""The timing model's arithmetic (interpreters/timing.py) through whole programs on the test machine."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_npu_interpreter import TINY, diagnose, mma_program, run

from ziggurat.interpreters.npu_interpreter import WATCH_EVERY
from ziggurat.interpreters.report import build_report, format_report
from ziggurat.interpreters.timing import systolic_cycles
from ziggurat.interpreters.trace import write_trace

# On TINY: mte2 moves 32 B/cycle after 100 cycles of setup and shares gm's 64 B/cycle;
# mte3 likewise; the cube does 4096 f16 MACs per cycle after 8; the vector unit 256 B/cycle after 2.

LOAD = """
func.func @main(%x: memref<1024xf32, "gm">) {
  %t = npu.buffer offset 0 : memref<1024xf32, "ub">
  npu.dma "mte2" %x[0] -> %t[0] {shape = array<i64: 1024>} : memref<1024xf32, "gm"> -> memref<1024xf32, "ub">
  func.return
}
"""


def events_on(stats, pipe):
    """The instructions that ran on `pipe`, flags left out."""
    return [e for e in stats.events if e.pipe == pipe and "flag" not in e.name]


def test_a_lone_dma_takes_setup_plus_bytes_over_bandwidth():
    stats = run(LOAD, [np.zeros(1024, np.float32)]).stats
    (event,) = events_on(stats, "mte2")
    assert event.end - event.start == 100 + 4096 / 32
    assert stats.busy_cycles["mte2"] == 100 + 4096 / 32
    # issued after the scalar unit walked the buffer declaration and the dma itself
    assert event.start == 2
    assert stats.total_cycles == event.end
    assert stats.bytes_read == {"gm": 4096}
    assert stats.bytes_written == {"ub": 4096}


def test_cores_sharing_global_memory_get_a_share_of_its_bandwidth():
    # 4 active cores: gm's 64 B/cycle / 4 = 16 B/cycle, below the engine's 32
    stats = run(LOAD, [np.zeros(1024, np.float32)], active_cores=4).stats
    assert stats.busy_cycles["mte2"] == 100 + 4096 / 16


INDEPENDENT = """
func.func @main(%x: memref<1024xf32, "gm">, %y: memref<1024xf32, "gm">) {
  %t = npu.buffer offset 0 : memref<1024xf32, "ub">
  %u = npu.buffer offset 4096 : memref<1024xf32, "ub">
  npu.dma "mte2" %x[0] -> %t[0] {shape = array<i64: 1024>} : memref<1024xf32, "gm"> -> memref<1024xf32, "ub">
  npu.dma "mte3" %u[0] -> %y[0] {shape = array<i64: 1024>} : memref<1024xf32, "ub"> -> memref<1024xf32, "gm">
  func.return
}
"""


def test_independent_pipes_overlap():
    stats = run(INDEPENDENT, [np.zeros(1024, np.float32)]).stats
    (load,) = events_on(stats, "mte2")
    (store,) = events_on(stats, "mte3")
    assert store.start == load.start + 1  # issued one scalar cycle later, not after the load
    assert stats.total_cycles == store.end < stats.busy_cycles["mte2"] + stats.busy_cycles["mte3"]


def test_a_flag_serializes_two_pipes():
    text = INDEPENDENT.replace(
        '  npu.dma "mte3" %u[0]',
        '  npu.set_flag "mte2" -> "mte3", 0\n  npu.wait_flag "mte2" -> "mte3", 0\n  npu.dma "mte3" %u[0]',
    )
    stats = run(text, [np.zeros(1024, np.float32)]).stats
    (load,) = events_on(stats, "mte2")
    (store,) = events_on(stats, "mte3")
    assert store.start == load.end
    assert stats.total_cycles == load.end + 100 + 4096 / 32


def test_an_instruction_waits_for_its_pipe():
    text = LOAD.replace("  func.return", LOAD.splitlines()[3] + "\n  func.return")
    stats = run(text, [np.zeros(1024, np.float32)]).stats
    first, second = events_on(stats, "mte2")
    assert second.start == first.end
    assert stats.busy_cycles["mte2"] == 2 * (100 + 4096 / 32)


def test_a_barrier_holds_the_next_issue_until_the_pipes_drain():
    text = INDEPENDENT.replace('  npu.dma "mte3" %u[0]', '  npu.barrier\n  npu.dma "mte3" %u[0]')
    stats = run(text, [np.zeros(1024, np.float32)]).stats
    (load,) = events_on(stats, "mte2")
    (store,) = events_on(stats, "mte3")
    assert store.start == load.end + 1  # the scalar unit then spends a cycle issuing the store


def test_mma_and_vector_costs():
    stats = run(
        mma_program("f16", "f32"), [np.zeros((16, 32), np.float16), np.zeros((32, 16), np.float16)]
    ).stats
    cube = events_on(stats, "cube")
    assert [e.end - e.start for e in cube] == [8 + 16 * 16 * 16 / 4096] * 2
    assert stats.flops == 2 * 2 * 16 * 16 * 16

    vector = """
func.func @main() {
  %x = npu.buffer offset 0 : memref<4x64xf32, "ub">
  npu.vec.add %x[0, 0], %x[0, 0] -> %x[0, 0] {repeat = 4 : i64} : memref<4x64xf32, "ub">, memref<4x64xf32, "ub"> -> memref<4x64xf32, "ub">
  npu.vec.exp %x[0, 0] -> %x[0, 0] {repeat = 4 : i64} : memref<4x64xf32, "ub"> -> memref<4x64xf32, "ub">
  func.return
}
"""
    add, exp = (e.end - e.start for e in events_on(run(vector).stats, "vector"))
    assert add == 2 + 4 * 1  # a repeat is one 256-byte block: one cycle
    assert exp == 2 + 4 * 4  # transcendental cost 4


# Stall-free cycles SCALE-Sim 3.0 reported for GEMM layers (M, N, K) on a 32x32 array, one more
# each (it counts from cycle 0): partial folds cost whole ones, the temporal dimension streams.
@pytest.mark.parametrize(
    "dataflow, mnk, scalesim",
    [
        ("os", (64, 64, 64), 503),
        ("os", (100, 70, 50), 1343),
        ("os", (128, 32, 300), 1447),
        ("ws", (100, 70, 50), 1163),
        ("ws", (128, 32, 300), 2219),
        ("is", (100, 70, 50), 1311),
        ("is", (128, 32, 300), 5039),
    ],
)
def test_systolic_cycles_are_scalesims(dataflow, mnk, scalesim):
    assert systolic_cycles(dataflow, 32, 32, *mnk) == scalesim + 1


def test_systolic_cycles_rejects_an_unknown_dataflow():
    with pytest.raises(ValueError, match="unknown dataflow 'rs'"):
        systolic_cycles("rs", 32, 32, 1, 1, 1)


def test_utilization_and_report():
    stats = run(LOAD, [np.zeros(1024, np.float32)]).stats
    report = stats.to_dict()
    assert report["utilization"]["mte2"] == pytest.approx((100 + 128) / (2 + 100 + 128))
    assert report["utilization"]["cube"] == 0
    assert report["seconds"] == pytest.approx(stats.total_cycles / TINY.clock_hz)


def test_report_roofline_and_text():
    load = build_report(run(LOAD, [np.zeros(1024, np.float32)]).stats, TINY)
    # 4096 bytes of gm at its 64 B/cycle: 64 cycles; no matrix work
    assert load["roofline"]["global_memory_cycles"] == 4096 / 64
    assert load["roofline"]["compute_cycles"] == 0
    assert load["roofline"]["bound_by"] == "global memory"
    assert load["roofline"]["achieved"] == pytest.approx(64 / (2 + 100 + 128))

    stats = run(
        mma_program("i8", "i32"), [np.zeros((16, 32), np.int8), np.zeros((32, 16), np.int8)]
    ).stats
    assert stats.macs == {("i8", "i32"): 2 * 16 * 16 * 16}
    assert build_report(stats, TINY)["roofline"]["compute_cycles"] == 2 * 16 * 16 * 16 / 8192

    # reads and writes stream side by side (mte2 and mte3 at once), so the slower direction binds
    copy = build_report(run(INDEPENDENT, [np.zeros(1024, np.float32)]).stats, TINY)
    assert copy["roofline"]["global_memory_cycles"] == 4096 / 64

    text = format_report(load)
    assert "machine tiny: 1 core(s) run, 1 of 4 sharing global memory, 1 GHz" in text
    assert "roofline" in text and "bound by global memory, 27.8% achieved" in text
    assert [line.split()[:2] for line in text.splitlines() if line.startswith("mte2")] == [
        ["mte2", "228"]
    ]


def test_trace_has_a_track_per_pipe_and_a_slice_per_instruction(tmp_path):
    stats = run(
        INDEPENDENT.replace('  npu.dma "mte3"', '  npu.barrier\n  npu.dma "mte3"'),
        [np.zeros(1024, np.float32)],
    ).stats
    path = tmp_path / "trace.json"
    write_trace(stats, path)
    events = json.loads(path.read_text())["traceEvents"]
    tracks = {e["args"]["name"]: e["tid"] for e in events if e["name"] == "thread_name"}
    assert set(tracks) == set(TINY.pipes)
    load, store = (e for e in events if e.get("ph") == "X")
    assert (load["tid"], store["tid"]) == (tracks["mte2"], tracks["mte3"])
    # 1 GHz: a cycle is a nanosecond
    assert load["ts"] == pytest.approx(3e-3) and load["dur"] == pytest.approx(0.228)
    assert load["args"]["loc"] == "test.mlir:5:3"


LOOP = """
func.func @main(%x: memref<1024xf32, "gm">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 200 : index
  %t = npu.buffer offset 0 : memref<1024xf32, "ub">
  scf.for %i = %c0 to %n step %c1 {
    npu.dma "mte2" %x[0] -> %t[0] {shape = array<i64: 1024>} : memref<1024xf32, "gm"> -> memref<1024xf32, "ub">
  }
  func.return
}
"""


def test_a_run_past_max_cycles_stops_at_the_op_it_reached():
    # 200 loads of 228 cycles each: 45,600 cycles
    message = diagnose(LOOP, [np.zeros(1024, np.float32)], max_cycles=10_000)
    assert "error: the run passed its limit of 10,000 cycles: stopped at cycle" in message
    assert "on core 0" in message
    # the check runs every WATCH_EVERY walked ops and at the end, so a limit just short of the total still stops it
    total = run(LOOP, [np.zeros(1024, np.float32)]).stats.total_cycles
    assert "the run passed its limit" in diagnose(
        LOOP, [np.zeros(1024, np.float32)], max_cycles=total - 1
    )
    run(LOOP, [np.zeros(1024, np.float32)], max_cycles=total)


def test_watch_sees_the_run_progress():
    seen = []
    run(
        LOOP,
        [np.zeros(1024, np.float32)],
        watch=lambda timeline, op: seen.append((timeline.core, timeline.cycles, op.name)),
    )
    # ops walked: 4 before the loop, the loop, the dma and the yield of each of 200 iterations, the return
    assert len(seen) == (4 + 1 + 200 * 2 + 1) // WATCH_EVERY
    assert [core for core, _, _ in seen] == [0] * len(seen)
    cycles = [c for _, c, _ in seen]
    assert cycles == sorted(cycles) and cycles[0] > 0
