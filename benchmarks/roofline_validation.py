"""The timing model against the roofline: with an ideal schedule, kernels reach the roof that binds them.

    python benchmarks/roofline_validation.py      # or `make bench`

On each preset, two kernels run through the interpreter and their report's
roofline (`ziggurat.interpreters.report`) is compared with the cycles they took:

* memory-bound: a streaming sum of 64 large tiles brought from global memory
  through the core's local spaces into the vector unit, each space
  double-buffered so every engine streams back to back. It runs on one core timed with all of the
  machine's cores active (`run_npu(..., active_cores=machine.cores)`): every
  core runs the same program, and one core alone cannot draw the chip's global
  bandwidth (its engines are narrower), so the bound is its share of it.
* compute-bound: the preset's example double-buffered GEMM
  (examples/npu/.../gemm_double_buffered.mlir) with K stretched to 8192, on one
  core running alone. On the systolic preset no GEMM whose tiles fit its 64 KiB
  scratchpads is compute-bound at 10 B/cycle of DRAM (at most 64 MACs per byte
  against a ridge of 102), so there the GEMM meets its global-memory roof.

Each run's outputs are checked against numpy. The results go to
benchmarks/results/roofline_validation.json; the script exits 1 when a kernel
lands further than TOLERANCE below its bound (or above it: a bound is a bound).
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

import ziggurat  # noqa: F401  first: it sets OPENBLAS_NUM_THREADS=1 before numpy loads (100x faster npu.mma)
from ziggurat.context import default_context
from ziggurat.interpreters.npu_interpreter import run_npu
from ziggurat.interpreters.report import build_report
from ziggurat.machine import Machine, load_machine
from ziggurat.parsing import parse_source

TOLERANCE = 0.05
RESULTS = Path(__file__).parent / "results"
EXAMPLES = Path(__file__).parents[1] / "examples" / "npu"
TILES = 64
GEMM_K = 8192


@dataclass(frozen=True)
class Stream:
    """How a preset streams data into its vector unit: (engine, source space, destination space) per hop."""

    hops: tuple[tuple[str, str, str], ...]
    store: str
    """The engine that writes the vector unit's space back to global memory."""
    tile_bytes: int
    """Each space on the way holds two tiles."""


STREAMS = {
    "davinci": Stream((("mte2", "gm", "ub"),), "mte3", 112 * 1024),
    "systolic": Stream((("load", "dram", "ofmap"),), "store", 24 * 1024),
    "tensorcore": Stream((("cp_async", "gm", "smem"), ("ldmatrix", "smem", "rf")), "st", 32 * 1024),
}
# (M, N) and input dtype of each preset's example GEMM
GEMMS = {
    "davinci": ((256, 256), np.float16),
    "systolic": ((128, 128), np.int8),
    "tensorcore": ((128, 128), np.float16),
}


def sum_kernel(stream: Stream, machine: Machine, tiles: int) -> str:
    """Y[r] = sum over t and l of X[t, r * lanes + l]: `tiles` f32 tiles streamed through the hops.

    The vector unit reduces each tile to one sum per block of its lanes and adds those
    into an accumulator, stored once at the end: the kernel reads its input once and
    writes next to nothing, so global-memory reads bind. Straight-line code: tile t
    uses buffer t % 2 of each space and event id t % 2; hop j waits for the one before
    to have filled its source ("ready") and for the one after to have drained its
    destination ("free"), then signals both.
    """
    lanes = machine.vector.lanes(4)
    vector = machine.vector.pipe
    elements = stream.tile_bytes // 4
    rows = elements // lanes
    hops = stream.hops
    gm, space = hops[0][1], hops[-1][2]
    tensor = f'memref<{tiles}x{elements}xf32, "{gm}">'
    sums = f'memref<{rows}xf32, "{space}">'
    local = {dst: f'memref<2x{elements}xf32, "{dst}">' for _, _, dst in hops}
    pipes = [engine for engine, _, _ in hops] + [vector]
    lines = [f'func.func @main(%X: {tensor}, %Y: memref<{rows}xf32, "{gm}">) {{']
    lines += [f"  %{dst} = npu.buffer offset 0 : {local[dst]}" for _, _, dst in hops]
    lines += [
        f"  %part = npu.buffer offset {2 * stream.tile_bytes} : {sums}",
        f"  %acc = npu.buffer offset {2 * stream.tile_bytes + 4 * rows} : {sums}",
        f"  npu.vec.dup %acc[0] {{scalar = 0.0 : f64, repeat = {rows // lanes} : i64}} : {sums}",
    ]
    frees = list(zip(pipes[1:], pipes[:-1]))  # (reader, writer) of each hop's destination
    lines += [
        f'  npu.set_flag "{reader}" -> "{writer}", {slot}'
        for reader, writer in frees
        for slot in (0, 1)
    ]
    for t in range(tiles):
        slot = t % 2
        for j, (engine, src, dst) in enumerate(hops):
            if j > 0:
                lines.append(f'  npu.wait_flag "{pipes[j - 1]}" -> "{engine}", {slot}')
            lines.append(f'  npu.wait_flag "{pipes[j + 1]}" -> "{engine}", {slot}')
            source, source_type = (
                (f"%X[{t}, 0]", tensor) if j == 0 else (f"%{src}[{slot}, 0]", local[src])
            )
            lines += [
                (
                    f'  npu.dma "{engine}" {source} -> %{dst}[{slot}, 0] {{shape = array<i64: {elements}>}} : '
                    f"{source_type} -> {local[dst]}"
                ),
                f'  npu.set_flag "{engine}" -> "{pipes[j + 1]}", {slot}',
            ]
            if j > 0:
                lines.append(f'  npu.set_flag "{engine}" -> "{pipes[j - 1]}", {slot}')
        lines += [
            f'  npu.wait_flag "{pipes[-2]}" -> "{vector}", {slot}',
            f'  npu.vec.reduce "sum" %{space}[{slot}, 0] -> %part[0] {{repeat = {rows} : i64}} : {local[space]} -> {sums}',
            f"  npu.vec.add %acc[0], %part[0] -> %acc[0] {{repeat = {rows // lanes} : i64}} : {sums}, {sums} -> {sums}",
            f'  npu.set_flag "{vector}" -> "{pipes[-2]}", {slot}',
        ]
    lines += [
        f'  npu.wait_flag "{reader}" -> "{writer}", {slot}'
        for reader, writer in frees
        for slot in (0, 1)
    ]
    lines += [
        f'  npu.set_flag "{vector}" -> "{stream.store}", 0',
        f'  npu.wait_flag "{vector}" -> "{stream.store}", 0',
        f'  npu.dma "{stream.store}" %acc[0] -> %Y[0] {{shape = array<i64: {rows}>}} : {sums} -> memref<{rows}xf32, "{gm}">',
    ]
    return "\n".join([*lines, "  func.return", "}", ""])


def long_gemm(preset: str, k: int) -> str:
    """The preset's example double-buffered GEMM with its K (512) stretched to `k`."""
    path = (
        EXAMPLES / "gemm_double_buffered.mlir"
        if preset == "davinci"
        else EXAMPLES / preset / "gemm_double_buffered.mlir"
    )
    (m, n), dtype = GEMMS[preset]
    element = "i8" if dtype == np.int8 else "f16"
    text = path.read_text()
    for old, new in (
        (f"{m}x512x{element}", f"{m}x{k}x{element}"),
        (f"512x{n}x{element}", f"{k}x{n}x{element}"),
        ("arith.constant 512 : index", f"arith.constant {k} : index"),
    ):
        assert old in text, f"{path} has no '{old}' to stretch"
        text = text.replace(old, new)
    return text


@dataclass
class Row:
    preset: str
    kernel: str
    bound_by: str
    bound_cycles: float
    cycles: float
    seconds: float

    @property
    def achieved(self) -> float:
        return self.bound_cycles / self.cycles


def run(
    preset: str, kernel: str, text: str, inputs, active_cores: int
) -> tuple[Row, list[np.ndarray]]:
    machine: Machine = load_machine(preset)
    start = time.perf_counter()
    module = parse_source(default_context(), text, f"{preset}-{kernel}.mlir")
    result = run_npu(module, machine, inputs, active_cores=active_cores)
    seconds = time.perf_counter() - start
    roofline = build_report(result.stats, machine)["roofline"]
    row = Row(
        preset,
        kernel,
        roofline["bound_by"],
        roofline["bound_cycles"],
        result.stats.total_cycles,
        seconds,
    )
    return row, result.outputs


def measure(preset: str) -> list[Row]:
    machine = load_machine(preset)
    rng = np.random.default_rng(0)
    stream = STREAMS[preset]
    x = rng.standard_normal((TILES, stream.tile_bytes // 4)).astype(np.float32)
    streaming, (y,) = run(
        preset, "streaming sum", sum_kernel(stream, machine, TILES), [x], machine.cores
    )
    np.testing.assert_allclose(
        y, x.reshape(TILES, y.size, -1).sum(axis=(0, 2)), rtol=1e-4, atol=1e-3
    )
    (m, n), dtype = GEMMS[preset]
    if dtype == np.int8:
        a, b = (
            rng.integers(-128, 128, (m, GEMM_K)).astype(dtype),
            rng.integers(-128, 128, (GEMM_K, n)).astype(dtype),
        )
        expected = a.astype(np.int64) @ b.astype(np.int64)
    else:
        a, b = (
            rng.standard_normal((m, GEMM_K)).astype(dtype),
            rng.standard_normal((GEMM_K, n)).astype(dtype),
        )
        expected = a.astype(np.float32) @ b.astype(np.float32)
    gemm, (c,) = run(preset, f"GEMM {m}x{n}x{GEMM_K}", long_gemm(preset, GEMM_K), [a, b], 1)
    np.testing.assert_allclose(c, expected, rtol=1e-3, atol=1e-2)
    return [streaming, gemm]


def format_table(rows: list[Row]) -> str:
    lines = [
        f"{'preset':<11} {'kernel':<20} {'bound by':<14} {'bound':>10} {'cycles':>10} {'achieved':>8} {'wall s':>7}"
    ]
    for r in rows:
        lines.append(
            f"{r.preset:<11} {r.kernel:<20} {r.bound_by:<14} {r.bound_cycles:>10,.0f} {r.cycles:>10,.0f} "
            f"{r.achieved:>8.1%} {r.seconds:>7.2f}"
        )
    return "\n".join(lines)


def main() -> int:
    rows = [row for preset in STREAMS for row in measure(preset)]
    print(format_table(rows))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "roofline_validation.json").write_text(
        json.dumps([asdict(r) | {"achieved": r.achieved} for r in rows], indent=2) + "\n"
    )
    failing = [r for r in rows if not 1 - TOLERANCE <= r.achieved <= 1]
    for r in failing:
        print(
            f"FAIL: {r.kernel} on {r.preset} reaches {r.achieved:.1%} of its {r.bound_by} bound "
            f"(wanted {1 - TOLERANCE:.0%} to 100%)",
            file=sys.stderr,
        )
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
