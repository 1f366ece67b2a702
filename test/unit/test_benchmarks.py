"""Smoke tests of the helpers of benchmarks/ (`make bench` runs the scripts themselves)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from benchmark_scripts import load_benchmark

from ziggurat.backends.machine import load_machine
from ziggurat.backends.timing import systolic_cycles



scalesim_validation = load_benchmark("scalesim_validation")
roofline_validation = load_benchmark("roofline_validation")


def test_a_conv_layer_is_its_im2col_gemm():
    layer = scalesim_validation.Layer.convolution("c", 17, 17, 3, 3, 32, 64, 2)
    assert (layer.m, layer.n, layer.k) == (8 * 8, 64, 3 * 3 * 32)
    assert layer.topology_csv().splitlines()[1] == "c, 17, 17, 3, 3, 32, 64, 2,"
    assert scalesim_validation.Layer("g", 1, 2, 3).topology_csv().splitlines()[1] == "g, 1, 2, 3,"


@pytest.mark.parametrize("dataflow", ["ws", "os", "is"])
def test_the_layer_kernel_costs_the_folds_of_the_whole_layer(dataflow, tmp_path):
    machine = scalesim_validation.systolic_machine(dataflow, tmp_path)
    assert machine.matrix.dataflow == dataflow
    # 200 x 96 x 300 needs several tiles on the array's two laid-out dimensions
    layer = scalesim_validation.Layer("g", 200, 96, 300)
    (tm, tn, tk), fits = scalesim_validation.tile_sizes(layer, machine)
    assert fits and tm * tn * tk < layer.m * layer.n * layer.k
    cycles, source = scalesim_validation.our_cycles(layer, machine)  # also checks C against numpy
    assert source == "interpreter"
    assert cycles == systolic_cycles(dataflow, 32, 32, 200, 96, 300)


def test_a_layer_too_long_to_stream_is_costed_by_the_model(tmp_path):
    machine = scalesim_validation.systolic_machine("ws", tmp_path)
    layer = scalesim_validation.Layer("g", 4096, 32, 32)  # 4096 x 32 i32 outputs overflow the 64 KiB ofmap
    assert scalesim_validation.our_cycles(layer, machine) == (systolic_cycles("ws", 32, 32, 4096, 32, 32), "model")


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # SCALE-Sim's own int() of arrays
def test_scalesim_agrees_on_a_small_gemm():
    pytest.importorskip("scalesim")
    machine = load_machine("systolic")
    cycles = scalesim_validation.scalesim_cycles(scalesim_validation.Layer("g", 64, 64, 64), machine)
    assert cycles == math.ceil(64 / 32) ** 2 * (32 + 32 + 64 - 2) - 1


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
