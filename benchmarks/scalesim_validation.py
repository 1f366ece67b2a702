"""The systolic timing model and its simulator against SCALE-Sim 3.0: cycles and speed on GEMM and conv layers.

    python benchmarks/scalesim_validation.py      # or `make bench`

For each layer and dataflow, on the `systolic` preset with its dataflow replaced
(a machine file that extends it):

* ours: the array's busy cycles when an npu kernel for the layer runs through
  the interpreter (`run_npu`; its C is checked against numpy, outside the timed
  region). The kernel loops over tiles of the two dimensions the dataflow lays
  out on the array, cut at multiples of its rows and columns, and keeps the one
  it streams whole (splitting it would pay fill and drain once more per piece).
  Where one array-sized tile with the streamed dimension whole overflows a
  64 KiB scratchpad, that scratchpad is enlarged to the next power of two of
  KiB that holds it, in the machine file both simulators get (SCALE-Sim's
  compute cycles do not depend on SRAM sizes).
* SCALE-Sim: the `scalesim` package run on `to_scalesim_config(machine)` and a
  topology CSV (GEMM layers as M, N, K; conv layers as SCALE-Sim's own conv
  rows, which it maps to the array as im2col GEMMs), in a temporary directory;
  its compute cycles are its total cycles less its memory stall cycles.

Timed, in this process, after one untimed warm-up run of each (imports, caches):
ours = what `ziggurat-run kernel.mlir` does: load the machine file, parse the
kernel text, verify it, run it; SCALE-Sim = write its config and topology, run
it, read its report. Wall and CPU seconds of both go to
benchmarks/results/scalesim_validation.json. The script exits 1 when a cycle
ratio is outside 1 +- TOLERANCE or ours is less than SPEEDUP times faster
(sum of SCALE-Sim's wall seconds over the sum of ours).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

import ziggurat  # noqa: F401  first: it sets OPENBLAS_NUM_THREADS=1 before numpy loads (faster npu.mma)
from ziggurat.context import default_context
from ziggurat.interpreters.npu_interpreter import NpuRunResult, run_npu
from ziggurat.machine import Machine, load_machine
from ziggurat.machine.scalesim import to_scalesim_config
from ziggurat.parsing import parse_source

TOLERANCE = 0.10
SPEEDUP = 100
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
    def convolution(
        cls, name: str, h: int, w: int, fh: int, fw: int, channels: int, filters: int, stride: int
    ):
        # SCALE-Sim's output size: no padding
        oh, ow = (h - fh + stride) // stride, (w - fw + stride) // stride
        return cls(
            name, oh * ow, filters, fh * fw * channels, (h, w, fh, fw, channels, filters, stride)
        )

    def topology_csv(self) -> str:
        """The layer as a SCALE-Sim topology file (its GEMM form or its conv form)."""
        if self.conv is None:
            return f"Layer, M, N, K,\n{self.name}, {self.m}, {self.n}, {self.k},\n"
        fields = ", ".join(map(str, self.conv))
        return (
            "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,\n"
            f"{self.name}, {fields},\n"
        )


SMALL_LAYERS = (
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

LARGE_GEMM = Layer("gemm256", 256, 256, 256)

RESNET50_LAYERS = (
    # ResNet-50's conv layers, ifmaps padded as it pads them (SCALE-Sim does not pad) so that
    # the outputs have its sizes: the 7x7/2 stem, 3x3s of stages 2 and 4, 1x1s of stages 3 and 4
    Layer.convolution("r50_stem_7x7s2", 229, 229, 7, 7, 3, 64, 2),
    Layer.convolution("r50_2_3x3", 58, 58, 3, 3, 64, 64, 1),
    Layer.convolution("r50_3_1x1", 28, 28, 1, 1, 512, 128, 1),
    Layer.convolution("r50_4_3x3", 16, 16, 3, 3, 256, 256, 1),
    Layer.convolution("r50_4_1x1", 14, 14, 1, 1, 256, 1024, 1),
)

# SCALE-Sim needs 0.3-0.5 ms of CPU per cycle it simulates (more on large operands: 512^3 is
# 147k cycles and 3 minutes), so the ResNet-50 layers (57k-164k cycles, 23-62 s each) run on
# the preset's dataflow only: about 6 minutes of CPU in all.
RUNS = [(layer, DATAFLOWS) for layer in (*SMALL_LAYERS, LARGE_GEMM)] + [
    (layer, ("os",)) for layer in RESNET50_LAYERS
]


# --------------------------------------------------------------------------- #
# Our side: an npu kernel per layer
# --------------------------------------------------------------------------- #


def scratchpad_bytes(layer: Layer, dataflow: str, rows: int, cols: int) -> dict[str, int]:
    """Bytes each scratchpad needs for one array-sized tile with the streamed dimension whole.

    i8 operands into i32 accumulators: os streams K (A is rows x K, B is K x cols), ws
    streams M (A is M x rows, C is M x cols), is streams N (B is rows x N, C is cols x N).
    """
    m, n, k = layer.m, layer.n, layer.k
    if dataflow == "os":
        return {"ifmap": rows * k, "filter": k * cols, "ofmap": 4 * rows * cols}
    if dataflow == "ws":
        return {"ifmap": m * rows, "filter": rows * cols, "ofmap": 4 * m * cols}
    return {"ifmap": cols * rows, "filter": rows * n, "ofmap": 4 * cols * n}


def machine_file(layer: Layer, dataflow: str, directory: Path) -> Path:
    """The file of the systolic preset with `dataflow`, its scratchpads enlarged where the layer needs it.

    Each scratchpad keeps the preset's 64 KiB unless one tile with the streamed dimension
    whole does not fit: then it gets the next power of two of KiB that holds it (on both
    simulators; SCALE-Sim's compute cycles do not depend on its SRAM sizes, only its stalls do).
    """
    preset = load_machine("systolic")
    rows, cols = preset.matrix.rows, preset.matrix.cols
    needs = scratchpad_bytes(layer, dataflow, rows, cols)
    kib = {
        space: 1 << math.ceil(math.log2(max(preset.memories[space].capacity, need) / 1024))
        for space, need in needs.items()
    }
    name = f"systolic-{dataflow}-" + "-".join(
        str(kib[space]) for space in ("ifmap", "filter", "ofmap")
    )
    path = directory / f"{name}.toml"
    if not path.exists():
        memories = "".join(
            f'\n[memory.{space}]\ncapacity = "{size} KiB"\n' for space, size in kib.items()
        )
        path.write_text(
            f'extends = "systolic"\nname = "{name}"\n\n[matrix]\ndataflow = "{dataflow}"\n{memories}'
        )
    return path


def tile_sizes(layer: Layer, machine: Machine) -> tuple[int, int, int]:
    """The (M, N, K) tile sizes of the kernel of `layer`.

    The streamed dimension stays whole (splitting it would pay the array's fill and
    drain once more per piece); the two on the array are cut at multiples of rows
    and columns, as large as the scratchpads allow (i8 operands, i32 accumulators).
    """
    unit = machine.matrix
    capacity = {
        name: machine.memories[name].capacity for name in (unit.a_space, unit.b_space, unit.c_space)
    }
    a_cap, b_cap, c_cap = (
        capacity[unit.a_space],
        capacity[unit.b_space],
        capacity[unit.c_space] // 4,
    )
    m, n, k = layer.m, layer.n, layer.k

    def largest(step: int, extent: int, limit: int) -> int:
        return min(math.ceil(extent / step) * step, max(step, limit // step * step))

    if unit.dataflow == "os":  # M x N on the array, K streams
        tm = largest(unit.rows, m, min(a_cap // k, c_cap // unit.cols))
        tn = largest(unit.cols, n, min(b_cap // k, c_cap // tm))
        return tm, tn, k
    if unit.dataflow == "ws":  # K x N on the array, M streams
        tk = largest(unit.rows, k, a_cap // m)
        tn = largest(unit.cols, n, min(b_cap // tk, c_cap // m))
        return m, tn, tk
    # is: K x M on the array, N streams
    tk = largest(unit.rows, k, b_cap // n)
    tm = largest(unit.cols, m, min(a_cap // tk, c_cap // n))
    return tm, n, tk


@dataclass(frozen=True)
class Segment:
    """Tiles of one dimension: from `start` to `stop` in steps of `size` (one tile when `stop - start <= size`)."""

    start: int
    stop: int
    size: int

    @property
    def tiles(self) -> int:
        return math.ceil((self.stop - self.start) / self.size)


def segments(extent: int, size: int) -> list[Segment]:
    """The whole tiles of a dimension as one segment, then the ragged last tile as another."""
    whole = extent // size * size
    return [Segment(0, whole, size)] * (whole > 0) + [Segment(whole, extent, extent - whole)] * (
        whole < extent
    )


class _KernelText:
    """Lines of a kernel being written: indented, with a fresh index name per loop and the constants they use."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.constants: set[int] = set()
        self.depth = 1
        self.loops = 0

    def add(self, line: str) -> None:
        self.lines.append("  " * self.depth + line)

    @contextlib.contextmanager
    def tiles(self, name: str, segment: Segment):
        """Yields the index of the segment's tile: a constant for one tile, else an `scf.for` over them."""
        if segment.tiles == 1:
            yield str(segment.start)
            return
        index = f"%{name}{self.loops}"
        self.loops += 1
        self.constants |= {segment.start, segment.stop, segment.size}
        self.add(
            f"scf.for {index} = %c{segment.start} to %c{segment.stop} step %c{segment.size} {{"
        )
        self.depth += 1
        yield index
        self.depth -= 1
        self.add("}")


def k_pieces(extent: int, size: int) -> list[tuple[Segment, bool]]:
    """The K segments, each with whether its mma accumulates: all but the very first tile do."""
    first, *rest = segments(extent, size)
    pieces = [(Segment(first.start, first.start + first.size, first.size), False)]
    if first.tiles > 1:
        pieces.append((Segment(first.start + first.size, first.stop, first.size), True))
    return pieces + [(segment, True) for segment in rest]


def gemm_kernel(layer: Layer, tiles: tuple[int, int, int]) -> str:
    """An npu kernel for C = A @ B on the systolic machine: per output tile, load, multiply, store.

    Loops over the whole tiles of each dimension, a ragged last tile after them. `npu.barrier`
    between the phases: the validation is about the array's cycles, which no overlap of DMA
    and compute changes.
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
    text = _KernelText()
    for i_segment in segments(m, tm):
        for j_segment in segments(n, tn):
            with text.tiles("i", i_segment) as i, text.tiles("j", j_segment) as j:
                rows, cols = i_segment.size, j_segment.size
                for k_segment, accumulate in k_pieces(k, tk):
                    depth = k_segment.size
                    with text.tiles("k", k_segment) as kk:
                        text.add(
                            f'npu.dma "load" %A[{i}, {kk}] -> %a[0, 0] {{shape = array<i64: {rows}, {depth}>}} '
                            f": {a_type} -> {ta}"
                        )
                        text.add(
                            f'npu.dma "load" %B[{kk}, {j}] -> %b[0, 0] {{shape = array<i64: {depth}, {cols}>}} '
                            f": {b_type} -> {tb}"
                        )
                        text.add("npu.barrier")
                        text.add(
                            f"npu.mma %a[0, 0], %b[0, 0] -> %c[0, 0] {{m = {rows} : i64, n = {cols} : i64, "
                            f"k = {depth} : i64{', accumulate' if accumulate else ''}}} : {ta}, {tb} -> {tc}"
                        )
                        text.add("npu.barrier")
                text.add(
                    f'npu.dma "store" %c[0, 0] -> %C[{i}, {j}] {{shape = array<i64: {rows}, {cols}>}} '
                    f": {tc} -> {c_type}"
                )
                text.add("npu.barrier")
    return "\n".join(
        [
            f"func.func @main(%A: {a_type}, %B: {b_type}, %C: {c_type}) {{",
            *(f"  %c{value} = arith.constant {value} : index" for value in sorted(text.constants)),
            f"  %a = npu.buffer offset 0 : {ta}",
            f"  %b = npu.buffer offset 0 : {tb}",
            f"  %c = npu.buffer offset 0 : {tc}",
            *text.lines,
            "  func.return",
            "}",
            "",
        ]
    )


def layer_inputs(layer: Layer) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return (
        rng.integers(-128, 128, (layer.m, layer.k), dtype=np.int8),
        rng.integers(-128, 128, (layer.k, layer.n), dtype=np.int8),
    )


def run_kernel(
    text: str, name: str, machine_path: Path, inputs: Sequence[np.ndarray]
) -> NpuRunResult:
    """What `ziggurat-run kernel.mlir --machine machine.toml` does with the kernel, in this process."""
    machine = load_machine(machine_path)
    module = parse_source(default_context(), text, f"{name}.mlir")
    return run_npu(module, machine, inputs)  # verifies the module, then runs it


@contextlib.contextmanager
def stopwatch():
    """Yields a list that receives (wall seconds, CPU seconds) of the block."""
    times: list[float] = []
    wall, cpu = time.perf_counter(), time.process_time()
    yield times
    times += [time.perf_counter() - wall, time.process_time() - cpu]


def our_cycles(layer: Layer, machine_path: Path) -> tuple[float, list[float]]:
    """(the array's busy cycles for the layer, [wall, CPU] seconds of `run_kernel`); C is checked against numpy."""
    machine = load_machine(machine_path)
    text = gemm_kernel(layer, tile_sizes(layer, machine))
    a, b = layer_inputs(layer)
    with stopwatch() as seconds:
        result = run_kernel(text, layer.name, machine_path, [a, b])
    (c,) = result.outputs
    if not np.array_equal(c, a.astype(np.int32) @ b.astype(np.int32)):
        raise AssertionError(f"the kernel of {layer.name} on {machine.name} computed a wrong C")
    return result.stats.busy_cycles[machine.matrix.pipe], seconds


# --------------------------------------------------------------------------- #
# SCALE-Sim's side
# --------------------------------------------------------------------------- #


def run_scalesim(layer: Layer, config: str) -> tuple[list, list]:
    """SCALE-Sim 3.0 on one layer with `config` (the text of its configuration file), in a
    temporary directory: its compute report items (total cycles with the prefetch, total
    cycles, stall cycles, ...) and its detailed access report items (SRAM and DRAM accesses)."""
    from scalesim.scale_sim import scalesim

    with tempfile.TemporaryDirectory() as work:
        directory = Path(work)
        (directory / "scale.cfg").write_text(config)
        (directory / "topology.csv").write_text(layer.topology_csv())
        (directory / "layout.csv").write_text(
            "Layer name,\n"
        )  # no custom layout, but SCALE-Sim reads the file
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
        return single_layer.get_compute_report_items(), single_layer.get_detail_report_items()


def scalesim_cycles(layer: Layer, machine: Machine) -> int:
    """SCALE-Sim 3.0's compute cycles (total less memory stalls) for the layer on `machine`'s array."""
    (_, total, stalls, *_), _ = run_scalesim(layer, to_scalesim_config(machine))
    return total - stalls


# --------------------------------------------------------------------------- #


@dataclass
class Row:
    layer: str
    m: int
    n: int
    k: int
    dataflow: str
    machine: str
    ours: float
    scalesim: int
    ours_seconds: float
    scalesim_seconds: float
    ours_cpu_seconds: float
    scalesim_cpu_seconds: float

    @property
    def ratio(self) -> float:
        return self.ours / self.scalesim

    @property
    def speedup(self) -> float:
        return self.scalesim_seconds / self.ours_seconds


def measure(layer: Layer, dataflow: str, directory: Path) -> Row:
    path = machine_file(layer, dataflow, directory)
    ours, ours_seconds = our_cycles(layer, path)
    machine = load_machine(path)
    with stopwatch() as scalesim_seconds:
        theirs = scalesim_cycles(layer, machine)
    return Row(
        layer.name, layer.m, layer.n, layer.k, dataflow, machine.name, ours, theirs,
        ours_seconds[0], scalesim_seconds[0], ours_seconds[1], scalesim_seconds[1],
    )  # fmt: skip


def format_table(rows: list[Row]) -> str:
    header = (
        f"{'layer':<16} {'M':>5} {'N':>5} {'K':>5} {'df':>3} {'scratchpads KiB':<16} {'ours':>9} {'SCALE-Sim':>9} "
        f"{'ratio':>7} {'ours s':>7} {'S-Sim s':>8} {'faster':>7}"
    )
    lines = [header]
    for r in rows:
        scratchpads = r.machine.removeprefix(f"systolic-{r.dataflow}-").replace("-", "/")
        lines.append(
            f"{r.layer:<16} {r.m:>5} {r.n:>5} {r.k:>5} {r.dataflow:>3} {scratchpads:<16} {r.ours:>9,.0f} "
            f"{r.scalesim:>9,} {r.ratio:>7.4f} {r.ours_seconds:>7.3f} {r.scalesim_seconds:>8.2f} "
            f"{r.speedup:>6.0f}x"
        )
    return "\n".join(lines)


def summary(rows: list[Row]) -> tuple[str, list[str]]:
    """The closing line, and one message per target missed."""
    ours = sum(r.ours_seconds for r in rows)
    theirs = sum(r.scalesim_seconds for r in rows)
    cpu = sum(r.scalesim_cpu_seconds for r in rows) / sum(r.ours_cpu_seconds for r in rows)
    ratios = [r.ratio for r in rows]
    line = (
        f"{len(rows)} layer runs: cycle ratio {min(ratios):.4f} .. {max(ratios):.4f} (target 1 +- {TOLERANCE}); "
        f"wall time ours {ours:.2f} s, SCALE-Sim {theirs:.1f} s: {theirs / ours:.0f}x faster "
        f"(target {SPEEDUP}x; CPU time: {cpu:.0f}x)"
    )
    missed = [
        f"{r.layer} ({r.dataflow}): ours {r.ours:,.0f} vs SCALE-Sim {r.scalesim:,} cycles, "
        f"ratio {r.ratio:.3f} outside 1 +- {TOLERANCE}"
        for r in rows
        if abs(r.ratio - 1) > TOLERANCE
    ]
    if theirs / ours < SPEEDUP:
        missed.append(
            f"ours is {theirs / ours:.0f}x faster than SCALE-Sim overall, below the {SPEEDUP}x target"
        )
    return line, missed


def main() -> int:
    rows = []
    with tempfile.TemporaryDirectory() as work:
        measure(SMALL_LAYERS[0], "os", Path(work))  # warm-up: imports, parser and machine caches
        for layer, dataflows in RUNS:
            for dataflow in dataflows:
                rows.append(measure(layer, dataflow, Path(work)))
                print(format_table(rows[-1:]).splitlines()[1], flush=True)
    print()
    print(format_table(rows))
    line, missed = summary(rows)
    print(f"\n{line}")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "scalesim_validation.json").write_text(
        json.dumps([asdict(r) | {"ratio": r.ratio, "speedup": r.speedup} for r in rows], indent=2)
        + "\n"
    )
    for message in missed:
        print(f"FAIL: {message}", file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
