"""One small GEMM per machine preset, written for that machine's spaces and engines: numbers and cube time."""

from __future__ import annotations

import numpy as np
import pytest

from ziggurat.backends.machine import load_machine
from ziggurat.backends.npu_interpreter import run_npu
from ziggurat.context import default_context
from ziggurat.diagnostics import parse_source

# A 32x32x32 f16 GEMM on a weight-stationary array: DRAM -> ifmap/filter scratchpads, the array
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
    machine = load_machine(module.attributes["npu.machine"].data)
    m, k = a_shape
    n = b_matrix.shape[1]
    assert (
        result.stats.busy_cycles[machine.matrix.pipe]
        == machine.matrix.latency + m * n * k / machine.matrix.dtypes[("f16", "f32")]
    )
    assert result.stats.flops == 2 * m * n * k
