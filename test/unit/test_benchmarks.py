"""Smoke tests of the helpers of benchmarks/ (`make bench` runs the scripts themselves)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from benchmark_scripts import load_benchmark

from ziggurat.interpreters.timing import systolic_cycles
from ziggurat.machine import load_machine

scalesim_validation = load_benchmark("scalesim_validation")
roofline_validation = load_benchmark("roofline_validation")


def test_a_conv_layer_is_its_im2col_gemm():
    layer = scalesim_validation.Layer.convolution("c", 17, 17, 3, 3, 32, 64, 2)
    assert (layer.m, layer.n, layer.k) == (8 * 8, 64, 3 * 3 * 32)
    assert layer.topology_csv().splitlines()[1] == "c, 17, 17, 3, 3, 32, 64, 2,"
    assert scalesim_validation.Layer("g", 1, 2, 3).topology_csv().splitlines()[1] == "g, 1, 2, 3,"


@pytest.mark.parametrize("dataflow", ["ws", "os", "is"])
def test_the_layer_kernel_costs_the_folds_of_the_whole_layer(dataflow, tmp_path):
    # 300 x 200 x 250 needs a loop over whole tiles and a ragged one on both laid-out dimensions
    layer = scalesim_validation.Layer("g", 300, 200, 250)
    path = scalesim_validation.machine_file(layer, dataflow, tmp_path)
    machine = load_machine(path)
    assert machine.matrix.dataflow == dataflow
    assert all(
        machine.memories[space].capacity == 64 * 1024 for space in ("ifmap", "filter", "ofmap")
    )
    tiles = scalesim_validation.tile_sizes(layer, machine)
    assert "scf.for" in scalesim_validation.gemm_kernel(layer, tiles)
    cycles, (wall, cpu) = scalesim_validation.our_cycles(layer, path)  # also checks C against numpy
    assert cycles == pytest.approx(systolic_cycles(dataflow, 32, 32, 300, 200, 250))
    assert wall > 0 and cpu > 0


def test_a_layer_too_long_to_stream_gets_larger_scratchpads(tmp_path):
    layer = scalesim_validation.Layer(
        "g", 4096, 32, 32
    )  # 4096 x 32 i32 outputs: 512 KiB, 4096 x 32 inputs: 128 KiB
    path = scalesim_validation.machine_file(layer, "ws", tmp_path)
    machine = load_machine(path)
    capacities = {
        space: machine.memories[space].capacity // 1024 for space in ("ifmap", "filter", "ofmap")
    }
    assert capacities == {"ifmap": 128, "filter": 64, "ofmap": 512}
    assert scalesim_validation.our_cycles(layer, path)[0] == pytest.approx(
        systolic_cycles("ws", 32, 32, 4096, 32, 32)
    )


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # SCALE-Sim's own int() of arrays
def test_scalesim_agrees_on_a_small_gemm():
    pytest.importorskip("scalesim")
    machine = load_machine("systolic")
    cycles = scalesim_validation.scalesim_cycles(
        scalesim_validation.Layer("g", 64, 64, 64), machine
    )
    assert cycles == math.ceil(64 / 32) ** 2 * (32 + 32 + 64 - 2) - 1


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_scalesims_compute_cycles_do_not_depend_on_its_scratchpads(tmp_path):
    pytest.importorskip("scalesim")
    layer = scalesim_validation.Layer("g", 1024, 32, 32)  # ws: 128 KiB of ofmap
    larger = load_machine(scalesim_validation.machine_file(layer, "ws", tmp_path))
    assert larger.memories["ofmap"].capacity == 128 * 1024
    preset = load_machine(
        scalesim_validation.machine_file(scalesim_validation.Layer("h", 32, 32, 32), "ws", tmp_path)
    )
    cycles = [scalesim_validation.scalesim_cycles(layer, machine) for machine in (preset, larger)]
    assert cycles == [systolic_cycles("ws", 32, 32, 1024, 32, 32) - 1] * 2


def scalesim_row(ours: int, ours_seconds: float):
    return scalesim_validation.Row(
        "g", 64, 64, 64, "os", "systolic", ours, 503, ours_seconds, 1.0, ours_seconds, 1.0
    )


def test_the_summary_fails_a_cycle_ratio_or_a_speedup_off_target():
    assert scalesim_validation.summary([scalesim_row(504, 0.005)])[1] == []
    (cycles,) = scalesim_validation.summary([scalesim_row(600, 0.005)])[1]
    assert "outside 1 +- 0.1" in cycles
    (speed,) = scalesim_validation.summary([scalesim_row(504, 0.05)])[1]
    assert "20x faster than SCALE-Sim overall, below the 100x target" in speed


@pytest.mark.parametrize("preset", ["davinci", "systolic", "tensorcore"])
def test_the_streaming_sum_reads_at_the_memory_roof(preset):
    stream, machine = roofline_validation.STREAMS[preset], load_machine(preset)
    x = np.random.default_rng(0).standard_normal((8, stream.tile_bytes // 4)).astype(np.float32)
    text = roofline_validation.sum_kernel(stream, machine, 8)
    row, (y,) = roofline_validation.run(preset, "sum", text, [x], machine.cores)
    np.testing.assert_allclose(y, x.reshape(8, y.size, -1).sum(axis=(0, 2)), rtol=1e-4, atol=1e-4)
    assert row.bound_by == "global memory"
    # 8 tiles: the pipeline's fill and drain cost about a tile more than the bound
    assert 0.8 < row.achieved <= 1


def test_the_long_gemm_stretches_k():
    text = roofline_validation.long_gemm("systolic", 1024)
    assert 'memref<128x1024xi8, "dram">' in text and "arith.constant 1024 : index" in text
    assert "x512x" not in text and "constant 512" not in text


scalesim_bandwidth = load_benchmark("scalesim_bandwidth")


def test_the_folds_go_in_scalesims_order():
    """Column folds outer, row folds inner: os walks M for each N tile; ws and is walk K."""
    layer = scalesim_validation.Layer("g", 70, 40, 50)
    os_folds = scalesim_bandwidth.folds(layer, "os", 32, 32)
    assert [(f.a[0], f.b[1]) for f in os_folds] == [
        (0, 0),
        (32, 0),
        (64, 0),
        (0, 32),
        (32, 32),
        (64, 32),
    ]
    ws_folds = scalesim_bandwidth.folds(layer, "ws", 32, 32)
    assert [(f.b[0], f.b[1], f.accumulate) for f in ws_folds] == [
        (0, 0, False), (32, 0, True), (0, 32, False), (32, 32, True),
    ]  # fmt: skip
    is_folds = scalesim_bandwidth.folds(layer, "is", 32, 32)
    assert [(f.a[0], f.a[1]) for f in is_folds] == [
        (0, 0),
        (0, 32),
        (32, 0),
        (32, 32),
        (64, 0),
        (64, 32),
    ]


@pytest.mark.parametrize("dataflow", ["os", "ws", "is"])
def test_the_bandwidth_kernel_overlaps_loads_with_the_array(dataflow, tmp_path):
    # A (256 x 300) does not fit half of a 64 KiB ifmap: os and ws stream its tiles again for each
    # column fold; the kernel's C is exact and it moves exactly what `dram_traffic` counts
    layer = scalesim_validation.Layer("g", 256, 96, 300)
    path = scalesim_bandwidth.machine_file(layer, dataflow, 2, tmp_path)
    machine = load_machine(path)
    assert machine.dma_for("dram", "ifmap").pipe != machine.dma_for("dram", "filter").pipe
    a, b = scalesim_validation.layer_inputs(layer)
    result = scalesim_validation.run_kernel(
        scalesim_bandwidth.kernel(layer, dataflow, machine), "g", path, [a, b]
    )
    assert np.array_equal(result.outputs[0], a.astype(np.int32) @ b.astype(np.int32))
    traffic = scalesim_bandwidth.dram_traffic(layer, dataflow, machine)
    assert traffic["a"] == (3 * 256 * 300 if dataflow != "is" else 256 * 300)
    assert result.stats.bytes_written["ifmap"] == traffic["a"]
    assert result.stats.bytes_written["filter"] == traffic["b"]
    # the two loads stream side by side at 2 bytes/cycle each, under the array's folds and the
    # stores: the run takes the longer stream and at most the folds and stores more (all of the
    # shorter stream hidden), not everything one after the other
    busy = result.stats.busy_cycles
    longest = max(busy["load"], busy["load_filter"])
    assert longest == max(traffic["a"], traffic["b"]) / 2
    assert longest <= result.stats.total_cycles <= longest + busy["array"] + busy["store"]


def test_a_difference_must_be_explained_by_the_traffic():
    def row(ours: float, theirs: int, words: int) -> object:
        return scalesim_bandwidth.Row(
            "g", 1, 1, 1, "os", 2, "m", ours, ours, theirs, theirs, 0, 100,
            {"a": 100, "b": 100, "c": 10}, {"a": words, "b": 100, "c": 10},
        )  # fmt: skip

    assert (row(95, 100, 100).traffic, row(95, 100, 100).unexplained) == ("", False)
    assert (row(95, 100, 120).traffic, row(95, 100, 120).unexplained) == (
        "S-Sim reads A 1.20x",
        False,
    )
    assert (row(50, 100, 200).traffic, row(50, 100, 200).unexplained) == (
        "S-Sim reads A 2.00x",
        False,
    )
    assert row(50, 100, 100).unexplained
