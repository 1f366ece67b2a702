"""The hand-written kernels of examples/npu on each machine preset: numbers against numpy, and what they cost.

Each preset has a single- and a double-buffered GEMM and a row softmax (an elementwise + reduce
kernel on the vector unit), written for that machine's own spaces and engines; the davinci ones
sit at the top of examples/npu, the others in a folder named after their preset.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ziggurat.context import default_context
from ziggurat.diagnostics import DiagnosticError
from ziggurat.interpreters.npu_interpreter import run_npu
from ziggurat.interpreters.report import build_report
from ziggurat.interpreters.timing import systolic_cycles
from ziggurat.machine import load_machine
from ziggurat.parsing import parse_source

EXAMPLES = Path(__file__).parents[2] / "examples" / "npu"
PRESETS = ("davinci", "systolic", "tensorcore")
# (M, K, N) and input dtype of each preset's example GEMMs
GEMMS = {
    "davinci": ((256, 512, 256), np.float16),
    "systolic": ((128, 512, 128), np.int8),
    "tensorcore": ((128, 512, 128), np.float16),
}


def example(preset: str, name: str) -> Path:
    return EXAMPLES / name if preset == "davinci" else EXAMPLES / preset / name


def run_example(preset: str, name: str, inputs):
    path = example(preset, name)
    return run_npu(parse_source(default_context(), path.read_text(), str(path)), None, inputs)


def gemm_inputs(preset: str):
    (m, k, n), dtype = GEMMS[preset]
    rng = np.random.default_rng(0)
    if dtype == np.int8:
        return rng.integers(-128, 128, (m, k)).astype(dtype), rng.integers(
            -128, 128, (k, n)
        ).astype(dtype)
    return rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)


@pytest.fixture(scope="module")
def gemm_reports():
    """The --report json data of both GEMMs of each preset (davinci's are checked numerically in test_npu_gemm)."""
    reports = {}
    for preset in PRESETS:
        for kind in ("single", "double"):
            a, b = gemm_inputs(preset)
            result = run_example(preset, f"gemm_{kind}_buffered.mlir", [a, b])
            if preset != "davinci":
                (c,) = result.outputs
                wide = np.int64 if a.dtype == np.int8 else np.float32
                expected = a.astype(wide) @ b.astype(wide)
                np.testing.assert_allclose(c, expected, rtol=1e-4, atol=1e-3)
            machine = load_machine(preset)
            reports[preset, kind] = json.loads(json.dumps(build_report(result.stats, machine)))
    return reports


@pytest.mark.parametrize("preset", PRESETS)
def test_double_buffering_raises_matrix_unit_utilization(gemm_reports, preset):
    single, double = gemm_reports[preset, "single"], gemm_reports[preset, "double"]
    pipe = load_machine(preset).matrix.pipe
    (m, k, n), _ = GEMMS[preset]
    assert single["flops"] == double["flops"] == 2 * m * n * k
    assert single["busy_cycles"][pipe] == pytest.approx(double["busy_cycles"][pipe])
    assert double["total_cycles"] < single["total_cycles"]
    assert double["utilization"][pipe] > single["utilization"][pipe] + 0.1
    assert double["roofline"]["achieved"] > single["roofline"]["achieved"]
    # both read A and B from global memory once and write C once
    gm = next(
        name for name, space in load_machine(preset).memories.items() if space.level == "global"
    )
    in_bytes = np.dtype(GEMMS[preset][1]).itemsize
    assert single["bytes_read"][gm] == double["bytes_read"][gm] == (m * k + k * n) * in_bytes
    assert single["bytes_written"][gm] == double["bytes_written"][gm] == m * n * 4


@pytest.mark.parametrize(
    "preset, wait", [("systolic", '"load" -> "array", 1'), ("tensorcore", '"ldmatrix" -> "mma", 1')]
)
def test_without_the_pong_wait_the_double_buffered_gemm_reports_a_hazard(preset, wait):
    path = example(preset, "gemm_double_buffered.mlir")
    lines = path.read_text().split("\n")
    line = lines.index(f"      npu.wait_flag {wait}")
    del lines[line]
    module = parse_source(default_context(), "\n".join(lines), str(path))
    with pytest.raises(DiagnosticError) as info:
        run_npu(module, None, list(gemm_inputs(preset)))
    message = info.value.format()
    # reported at the pong mma (which moved up into the wait's line), reading what a DMA may still be writing
    assert message.startswith(
        f"{path}:{line + 1}:7: error: npu.mma on pipe '{load_machine(preset).matrix.pipe}' reads"
    )
    assert "may still be writing" in message and "note: the earlier access on pipe" in message


def test_the_systolic_gemm_costs_the_folds_of_its_array(gemm_reports):
    # each 128x128x128 npu.mma on the 32x32 output-stationary array: 4 x 4 folds of 32 + 32 + 128 - 2 cycles
    assert gemm_reports["systolic", "single"]["busy_cycles"]["array"] == pytest.approx(
        4 * 16 * (32 + 32 + 128 - 2)
    )


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("preset", PRESETS)
def test_the_softmax_kernel_matches_numpy(preset):
    x = np.random.default_rng(2).standard_normal((32, 256)).astype(np.float32) * 4
    result = run_example(preset, "elementwise_reduce.mlir", [x])
    (y,) = result.outputs
    np.testing.assert_allclose(y, softmax(x), rtol=1e-5, atol=1e-7)
    machine = load_machine(preset)
    stats = result.stats
    assert stats.busy_cycles[machine.vector.pipe] > 0 and not stats.macs
    # X in once, Y out once; the vector unit does the rest
    gm = next(name for name, space in machine.memories.items() if space.level == "global")
    assert stats.bytes_read[gm] == stats.bytes_written[gm] == 32 * 256 * 4


# A 32x32x32 f16 GEMM on the systolic array: DRAM -> ifmap/filter scratchpads, the array
# writes ofmap, the store engine takes it back.
SYSTOLIC = """
module attributes {npu.machine = "systolic"} {
  func.func @main(%a: memref<32x32xf16, "dram">, %b: memref<32x32xf16, "dram">, %c: memref<32x32xf32, "dram">) {
    %ia = npu.buffer offset 0 : memref<32x32xf16, "ifmap">
    %fb = npu.buffer offset 0 : memref<32x32xf16, "filter">
    %oc = npu.buffer offset 0 : memref<32x32xf32, "ofmap">
    npu.dma "load" %a[0, 0] -> %ia[0, 0] {shape = array<i64: 32, 32>} : memref<32x32xf16, "dram"> -> memref<32x32xf16, "ifmap">
    npu.dma "load" %b[0, 0] -> %fb[0, 0] {shape = array<i64: 32, 32>} : memref<32x32xf16, "dram"> -> memref<32x32xf16, "filter">
    npu.set_flag "load" -> "array", 0
    npu.wait_flag "load" -> "array", 0
    npu.mma %ia[0, 0], %fb[0, 0] -> %oc[0, 0] {m = 32 : i64, n = 32 : i64, k = 32 : i64} : memref<32x32xf16, "ifmap">, memref<32x32xf16, "filter"> -> memref<32x32xf32, "ofmap">
    npu.set_flag "array" -> "store", 0
    npu.wait_flag "array" -> "store", 0
    npu.dma "store" %oc[0, 0] -> %c[0, 0] {shape = array<i64: 32, 32>} : memref<32x32xf32, "ofmap"> -> memref<32x32xf32, "dram">
    func.return
  }
}
"""

# One m16n8k16 f16 tile on an SM: cp.async into shared memory, ldmatrix into registers (B transposed on
# the way, from its N-major copy), mma, and a store of the f32 accumulators.
TENSORCORE = """
module attributes {npu.machine = "tensorcore"} {
  func.func @main(%a: memref<16x16xf16, "gm">, %bt: memref<8x16xf16, "gm">, %c: memref<16x8xf32, "gm">) {
    %sa = npu.buffer offset 0 : memref<16x16xf16, "smem">
    %sb = npu.buffer offset 512 : memref<8x16xf16, "smem">
    %ra = npu.buffer offset 0 : memref<16x16xf16, "rf">
    %rb = npu.buffer offset 512 : memref<16x8xf16, "rf">
    %rc = npu.buffer offset 768 : memref<16x8xf32, "rf">
    npu.dma "cp_async" %a[0, 0] -> %sa[0, 0] {shape = array<i64: 16, 16>} : memref<16x16xf16, "gm"> -> memref<16x16xf16, "smem">
    npu.dma "cp_async" %bt[0, 0] -> %sb[0, 0] {shape = array<i64: 8, 16>} : memref<8x16xf16, "gm"> -> memref<8x16xf16, "smem">
    npu.set_flag "cp_async" -> "ldmatrix", 0
    npu.wait_flag "cp_async" -> "ldmatrix", 0
    npu.dma "ldmatrix" %sa[0, 0] -> %ra[0, 0] {shape = array<i64: 16, 16>} : memref<16x16xf16, "smem"> -> memref<16x16xf16, "rf">
    npu.dma "ldmatrix" %sb[0, 0] -> %rb[0, 0] {shape = array<i64: 8, 16>, transpose} : memref<8x16xf16, "smem"> -> memref<16x8xf16, "rf">
    npu.set_flag "ldmatrix" -> "mma", 0
    npu.wait_flag "ldmatrix" -> "mma", 0
    npu.mma %ra[0, 0], %rb[0, 0] -> %rc[0, 0] {m = 16 : i64, n = 8 : i64, k = 16 : i64} : memref<16x16xf16, "rf">, memref<16x8xf16, "rf"> -> memref<16x8xf32, "rf">
    npu.set_flag "mma" -> "st", 0
    npu.wait_flag "mma" -> "st", 0
    npu.dma "st" %rc[0, 0] -> %c[0, 0] {shape = array<i64: 16, 8>} : memref<16x8xf32, "rf"> -> memref<16x8xf32, "gm">
    func.return
  }
}
"""


@pytest.mark.parametrize(
    "text, a_shape, b_shape, b_transposed",
    [(SYSTOLIC, (32, 32), (32, 32), False), (TENSORCORE, (16, 16), (8, 16), True)],
    ids=["systolic", "tensorcore"],
)
def test_a_gemm_on_each_preset(text, a_shape, b_shape, b_transposed):
    module = parse_source(default_context(), text, "preset.mlir")
    rng = np.random.default_rng(0)
    a = rng.standard_normal(a_shape).astype(np.float16)
    b = rng.standard_normal(b_shape).astype(np.float16)
    result = run_npu(module, None, [a, b])
    b_matrix = b.T if b_transposed else b
    np.testing.assert_allclose(
        result.outputs[0], a.astype(np.float32) @ b_matrix.astype(np.float32), rtol=1e-5, atol=1e-4
    )
    unit = load_machine(module.attributes["npu.machine"].data).matrix
    m, k = a_shape
    n = b_matrix.shape[1]
    if unit.dataflow is None:
        expected = unit.latency + m * n * k / unit.dtypes[("f16", "f32")]
    else:  # one fold of the 32x32 array: 32 + 32 + 32 - 2 cycles output-stationary
        expected = systolic_cycles(unit.dataflow, unit.rows, unit.cols, m, n, k)
        assert expected == 94
    assert result.stats.busy_cycles[unit.pipe] == expected
    assert result.stats.flops == 2 * m * n * k
