"""The systolic timing model against SCALE-Sim 3.0: compute cycles of GEMM and conv layers, ws/os/is.

    python benchmarks/scalesim_validation.py      # or `make bench`

For each layer and dataflow, on the `systolic` preset (its dataflow replaced by
a machine file that extends it):

* ours: the array's busy cycles when an npu kernel for the layer runs through
  the interpreter (`run_npu`; its result is checked against numpy). The kernel
  tiles the two dimensions the dataflow lays out on the array by multiples of
  the array's rows and columns and keeps the one it streams whole, so each
  tile fits the 64 KiB scratchpads. A layer whose streamed dimension is too
  long to fit is not run: "ours" is then the timing model's cost
  (`mma_cycles`) of the same npu.mma instructions, summed (column "from").
* SCALE-Sim: the `scalesim` package run on `to_scalesim_config(machine)` and a
  topology CSV (GEMM layers as M, N, K; conv layers as SCALE-Sim's own conv
  rows, which it maps to the array as im2col GEMMs), in a temporary directory;
  its compute cycles are its total cycles less its memory stall cycles.

Both wall times are measured around the whole of each simulator's work for the
layer (ours: parse, verify and run the kernel). The results go to
benchmarks/results/scalesim_validation.json; the script exits 1 when any ratio
is outside 1 +- TOLERANCE.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ziggurat.backends.machine import Machine, load_machine
from ziggurat.backends.npu_interpreter import run_npu
from ziggurat.backends.scalesim import to_scalesim_config
from ziggurat.backends.timing import mma_cycles
from ziggurat.context import default_context
from ziggurat.diagnostics import parse_source

TOLERANCE = 0.10
DATAFLOWS = ("ws", "os", "is")
RESULTS = Path(__file__).parent / "results"


@dataclass(frozen=True)
class Layer:
    """A GEMM C (MxN) = A (MxK) x B (KxN), or a conv layer seen as its im2col GEMM."""

    name: str
    m: int
    n: int
    k: int
    conv: tuple[int, int, int, int, int, int, int] | None = None
    """(ifmap height, width, filter height, width, channels, filters, stride) of a conv layer."""

    @classmethod
    def convolution(cls, name: str, h: int, w: int, fh: int, fw: int, channels: int, filters: int, stride: int):
        # SCALE-Sim's output size: no padding
        oh, ow = (h - fh + stride) // stride, (w - fw + stride) // stride
        return cls(name, oh * ow, filters, fh * fw * channels, (h, w, fh, fw, channels, filters, stride))

    def topology_csv(self) -> str:
        """The layer as a SCALE-Sim topology file (its GEMM form or its conv form)."""
        if self.conv is None:
            return f"Layer, M, N, K,\n{self.name}, {self.m}, {self.n}, {self.k},\n"
        fields = ", ".join(map(str, self.conv))
        return (
            "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,\n"
            f"{self.name}, {fields},\n"
        )


LAYERS = (
    Layer("gemm64", 64, 64, 64),
    Layer("gemm128", 128, 128, 128),
    Layer("gemm_tall", 256, 64, 128),
    Layer("gemm_ragged", 100, 70, 50),
    Layer("gemm_ragged_k", 200, 96, 300),
    Layer("gemm_wide", 32, 512, 256),
    Layer("gemm_skinny", 512, 32, 64),
    Layer.convolution("conv3x3", 18, 18, 3, 3, 16, 32, 1),
    Layer.convolution("conv1x1", 16, 16, 1, 1, 64, 64, 1),
    Layer.convolution("conv3x3_s2", 17, 17, 3, 3, 32, 64, 2),
    Layer.convolution("conv5x5_rgb", 32, 32, 5, 5, 3, 16, 1),
    Layer.convolution("conv3x3_deep", 10, 10, 3, 3, 64, 128, 1),
)


# --------------------------------------------------------------------------- #
# Our side: an npu kernel per layer
# --------------------------------------------------------------------------- #


def systolic_machine(dataflow: str, directory: Path) -> Machine:
    """The systolic preset with `dataflow`."""
    if dataflow == load_machine("systolic").matrix.dataflow:
        return load_machine("systolic")
    path = directory / f"systolic-{dataflow}.toml"
    path.write_text(f'extends = "systolic"\nname = "systolic-{dataflow}"\n\n[matrix]\ndataflow = "{dataflow}"\n')
    return load_machine(path)


def tile_sizes(layer: Layer, machine: Machine) -> tuple[tuple[int, int, int], bool]:
    """((M, N, K) tile sizes, whether the tiles fit the scratchpads) for the kernel of `layer`.

    The streamed dimension stays whole (splitting it would pay the array's fill and
    drain once more per piece); the two on the array are cut at multiples of rows
    and columns, as large as the scratchpads allow (i8 operands, i32 accumulators).
    """
    unit = machine.matrix
    capacity = {name: machine.memories[name].capacity for name in (unit.a_space, unit.b_space, unit.c_space)}
    a_cap, b_cap, c_cap = capacity[unit.a_space], capacity[unit.b_space], capacity[unit.c_space] // 4
    m, n, k = layer.m, layer.n, layer.k

    def largest(step: int, extent: int, limit: int) -> int:
        return min(math.ceil(extent / step) * step, max(step, limit // step * step))

    if unit.dataflow == "os":  # M x N on the array, K streams
        tm = largest(unit.rows, m, min(a_cap // k, c_cap // unit.cols))
        tn = largest(unit.cols, n, min(b_cap // k, c_cap // tm))
        tiles = (tm, tn, k)
    elif unit.dataflow == "ws":  # K x N on the array, M streams
        tk = largest(unit.rows, k, a_cap // m)
        tn = largest(unit.cols, n, min(b_cap // tk, c_cap // m))
        tiles = (m, tn, tk)
    else:  # is: K x M on the array, N streams
        tk = largest(unit.rows, k, b_cap // n)
        tm = largest(unit.cols, m, min(a_cap // tk, c_cap // n))
        tiles = (tm, n, tk)
    tm, tn, tk = tiles
    fits = tm * tk <= a_cap and tk * tn <= b_cap and tm * tn <= c_cap
    return tiles, fits


def _tiles(extent: int, size: int) -> list[tuple[int, int]]:
    return [(start, min(size, extent - start)) for start in range(0, extent, size)]


def mma_shapes(layer: Layer, tiles: tuple[int, int, int]) -> list[tuple[int, int, int]]:
    """The (m, n, k) of each npu.mma the kernel issues, in order."""
    tm, tn, tk = tiles
    return [
        (rows, cols, depth)
        for _, rows in _tiles(layer.m, tm)
        for _, cols in _tiles(layer.n, tn)
        for _, depth in _tiles(layer.k, tk)
    ]


def gemm_kernel(layer: Layer, tiles: tuple[int, int, int]) -> str:
    """An npu kernel for C = A @ B on the systolic machine: per output tile, load, multiply, store.

    Straight-line code with `npu.barrier` between the phases: the validation is about
    the array's cycles, which no overlap of DMA and compute changes.
    """
    m, n, k = layer.m, layer.n, layer.k
    tm, tn, tk = tiles
    a_type, b_type, c_type = (
        f'memref<{m}x{k}xi8, "dram">',
        f'memref<{k}x{n}xi8, "dram">',
        f'memref<{m}x{n}xi32, "dram">',
    )
    ta, tb, tc = (
        f'memref<{tm}x{tk}xi8, "ifmap">',
        f'memref<{tk}x{tn}xi8, "filter">',
        f'memref<{tm}x{tn}xi32, "ofmap">',
    )
    lines = [
        f"func.func @main(%A: {a_type}, %B: {b_type}, %C: {c_type}) {{",
        f"  %a = npu.buffer offset 0 : {ta}",
        f"  %b = npu.buffer offset 0 : {tb}",
        f"  %c = npu.buffer offset 0 : {tc}",
    ]
    for i, rows in _tiles(m, tm):
        for j, cols in _tiles(n, tn):
            for kk, depth in _tiles(k, tk):
                lines += [
                    f'  npu.dma "load" %A[{i}, {kk}] -> %a[0, 0] {{shape = array<i64: {rows}, {depth}>}} : {a_type} -> {ta}',
                    f'  npu.dma "load" %B[{kk}, {j}] -> %b[0, 0] {{shape = array<i64: {depth}, {cols}>}} : {b_type} -> {tb}',
                    "  npu.barrier",
                    (
                        f"  npu.mma %a[0, 0], %b[0, 0] -> %c[0, 0] {{m = {rows} : i64, n = {cols} : i64, k = {depth} : i64"
                        f"{', accumulate' if kk else ''}}} : {ta}, {tb} -> {tc}"
                    ),
                    "  npu.barrier",
                ]
            lines += [
                f'  npu.dma "store" %c[0, 0] -> %C[{i}, {j}] {{shape = array<i64: {rows}, {cols}>}} : {tc} -> {c_type}',
                "  npu.barrier",
            ]
    return "\n".join([*lines, "  func.return", "}", ""])


def our_cycles(layer: Layer, machine: Machine) -> tuple[float, str]:
    """(the array's cycles for the layer, "interpreter" or "model")."""
    tiles, fits = tile_sizes(layer, machine)
    if not fits:
        return sum(mma_cycles(machine, *shape, "i8", "i32") for shape in mma_shapes(layer, tiles)), "model"
    module = parse_source(default_context(), gemm_kernel(layer, tiles), f"{layer.name}.mlir")
    rng = np.random.default_rng(0)
    a = rng.integers(-128, 128, (layer.m, layer.k)).astype(np.int8)
    b = rng.integers(-128, 128, (layer.k, layer.n)).astype(np.int8)
    result = run_npu(module, machine, [a, b])
    (c,) = result.outputs
    if not np.array_equal(c, a.astype(np.int32) @ b.astype(np.int32)):
        raise AssertionError(f"the kernel of {layer.name} on {machine.name} computed a wrong C")
    return result.stats.busy_cycles[machine.matrix.pipe], "interpreter"


# --------------------------------------------------------------------------- #
# SCALE-Sim's side
# --------------------------------------------------------------------------- #


def scalesim_cycles(layer: Layer, machine: Machine) -> int:
    """SCALE-Sim 3.0's compute cycles (total less memory stalls) for the layer on `machine`'s array."""
    from scalesim.scale_sim import scalesim

    with tempfile.TemporaryDirectory() as work:
        directory = Path(work)
        (directory / "scale.cfg").write_text(to_scalesim_config(machine))
        (directory / "topology.csv").write_text(layer.topology_csv())
        (directory / "layout.csv").write_text("Layer name,\n")  # no custom layout, but SCALE-Sim reads the file
        with contextlib.redirect_stdout(io.StringIO()):
            simulator = scalesim(
                save_disk_space=True,
                verbose=False,
                config=str(directory / "scale.cfg"),
                topology=str(directory / "topology.csv"),
                layout=str(directory / "layout.csv"),
                input_type_gemm=layer.conv is None,
            )
            simulator.run_scale(top_path=str(directory))
        (single_layer,) = simulator.runner.single_layer_sim_object_list
        _, total, stalls, *_ = single_layer.get_compute_report_items()
    return total - stalls


# --------------------------------------------------------------------------- #


@dataclass
class Row:
    layer: str
    m: int
    n: int
    k: int
    dataflow: str
    source: str
    ours: float
    scalesim: int
    ours_seconds: float
    scalesim_seconds: float

    @property
    def ratio(self) -> float:
        return self.ours / self.scalesim


def measure(layer: Layer, machine: Machine) -> Row:
    start = time.perf_counter()
    ours, source = our_cycles(layer, machine)
    middle = time.perf_counter()
    theirs = scalesim_cycles(layer, machine)
    end = time.perf_counter()
    return Row(
        layer.name, layer.m, layer.n, layer.k, machine.matrix.dataflow, source, ours, theirs,
        middle - start, end - middle,
    )  # fmt: skip


def format_table(rows: list[Row]) -> str:
    header = (
        f"{'layer':<14} {'M':>5} {'N':>5} {'K':>5} {'df':>3} {'ours from':<12} {'ours':>9} {'SCALE-Sim':>9} "
        f"{'ratio':>7} {'ours s':>7} {'S-Sim s':>8} {'faster':>7}"
    )
    lines = [header]
    for r in rows:
        lines.append(
            f"{r.layer:<14} {r.m:>5} {r.n:>5} {r.k:>5} {r.dataflow:>3} {r.source:<12} {r.ours:>9,.0f} "
            f"{r.scalesim:>9,} {r.ratio:>7.4f} {r.ours_seconds:>7.3f} {r.scalesim_seconds:>8.3f} "
            f"{r.scalesim_seconds / r.ours_seconds:>6.0f}x"
        )
    return "\n".join(lines)


def main() -> int:
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for dataflow in DATAFLOWS:
            machine = systolic_machine(dataflow, Path(work))
            for layer in LAYERS:
                rows.append(measure(layer, machine))
                print(format_table(rows[-1:]).splitlines()[1], flush=True)
    print()
    print(format_table(rows))
    ours = sum(r.ours_seconds for r in rows)
    theirs = sum(r.scalesim_seconds for r in rows)
    ratios = [r.ratio for r in rows]
    print(
        f"\n{len(rows)} layer runs: ratio {min(ratios):.4f} .. {max(ratios):.4f}; wall time ours {ours:.1f} s, "
        f"SCALE-Sim {theirs:.1f} s ({theirs / ours:.0f}x)"
    )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "scalesim_validation.json").write_text(
        json.dumps([asdict(r) | {"ratio": r.ratio} for r in rows], indent=2) + "\n"
    )
    outside = [r for r in rows if abs(r.ratio - 1) > TOLERANCE]
    for r in outside:
        print(
            f"FAIL: {r.layer} ({r.dataflow}): ours {r.ours:,.0f} vs SCALE-Sim {r.scalesim:,} cycles, "
            f"ratio {r.ratio:.3f} outside 1 +- {TOLERANCE}",
            file=sys.stderr,
        )
    return 1 if outside else 0


if __name__ == "__main__":
    sys.exit(main())
