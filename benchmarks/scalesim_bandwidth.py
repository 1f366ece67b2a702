"""Whole runs against SCALE-Sim 3.0 with limited DRAM bandwidth: total cycles with stalls, and DRAM traffic.

    python benchmarks/scalesim_bandwidth.py      # or `make bench`

`scalesim_validation.py` compares the array's busy cycles; this script compares what a
layer costs when its operands must come through a narrow DRAM interface. For each layer,
dataflow and bandwidth b (words per cycle):

* the machine: the `systolic` preset with the dataflow, its ifmap and filter scratchpads each
  fed by their own DMA engine at b words/cycle and the ofmap drained at b outputs/cycle, as
  SCALE-Sim's USER bandwidth mode does (two read streams and a drain, each at its own rate;
  `to_scalesim_config` writes the same figures), scratchpads enlarged where a double-buffered
  tile needs it (on both simulators);
* ours: an npu kernel that visits the array's folds in SCALE-Sim's order (column folds
  outer, row folds inner), double-buffers every operand tile that changes between folds in
  its scratchpad (the loads for the next fold run while the array works on this one), keeps
  an operand resident when all of it fits in half its scratchpad, accumulates across the
  folds of the reduction in the ofmap scratchpad and stores each finished output tile while
  the array goes on; run through the interpreter, C checked against numpy;
* SCALE-Sim: `scalesim` run on that configuration (GEMM topology); its total cycles (stalls
  included) and its DRAM words per operand.

Each row says where SCALE-Sim's DRAM words differ from the kernel's by more than 1%, and by
how much (docs/timing-validation.md says why they do); the script exits 1 when a run fails, a
kernel computes a wrong C, or total cycles differ by more than 10% with the same words. Results go to
benchmarks/results/scalesim_bandwidth.json.
"""

from __future__ import annotations

import json
import math
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

import ziggurat  # noqa: F401  first: it sets OPENBLAS_NUM_THREADS=1 before numpy loads
from ziggurat.machine import Machine, load_machine
from ziggurat.machine.scalesim import to_scalesim_config

sys.path.insert(0, str(Path(__file__).parent))
from scalesim_validation import Layer, layer_inputs, run_kernel, run_scalesim  # noqa: E402

RESULTS = Path(__file__).parent / "results"
DATAFLOWS = ("os", "ws", "is")
BANDWIDTHS = (10, 2)
"""Words per cycle: SCALE-Sim's default, and a narrow interface on which every layer stalls."""
TOLERANCE = 0.10
"""Total cycles within 10%, or a difference in DRAM words that explains the difference."""
WORDS_TOLERANCE = 0.01
OUTPUT_BYTES = 4
"""The kernels keep i32 accumulators and store them as they are; SCALE-Sim counts an output as
one word, so the ofmap drain moves b outputs (4b bytes) per cycle on both."""

FLAG_IDS = 64
"""Events per pipe pair on the comparison machine: the output slots the ofmap can queue."""

LAYERS = (
    Layer("gemm64", 64, 64, 64),
    Layer("gemm128", 128, 128, 128),
    Layer("gemm_ragged", 100, 70, 50),
    Layer("gemm_ragged_k", 200, 96, 300),
    Layer("gemm_wide", 32, 512, 256),
    Layer("gemm_skinny", 512, 32, 64),
    Layer("gemm_tall", 256, 64, 128),
    Layer("gemm256", 256, 256, 256),
    # conv layers as the im2col GEMMs SCALE-Sim maps them to (M = output pixels, N = filters,
    # K = filter height x width x channels); GEMM topology rows on both sides
    Layer("conv5x5_rgb", 784, 16, 75),
    Layer("conv3x3_deep", 64, 128, 576),
    # ResNet-50's 1x1 convs of stages 3 and 4 (28x28 x 512 -> 128, 14x14 x 256 -> 256)
    Layer("r50_3_1x1", 784, 128, 512),
    Layer("r50_4_1x1", 196, 256, 256),
)


# --------------------------------------------------------------------------- #
# The folds, in SCALE-Sim's order
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class Fold:
    """One fold of the array: the A and B windows it reads, the C window it adds to."""

    a: tuple[int, int, int, int]
    """(row, column, rows, columns) of A (M x K)."""
    b: tuple[int, int, int, int]
    """(row, column, rows, columns) of B (K x N)."""
    c: tuple[int, int, int, int]
    """(row, column, rows, columns) of C (M x N)."""
    accumulate: bool
    """Whether the fold adds to C (an earlier fold wrote this C window)."""


def folds(layer: Layer, dataflow: str, rows: int, cols: int) -> list[Fold]:
    """The layer's folds, column folds outer and row folds inner (SCALE-Sim's
    `systolic_compute_*`): os lays M x N on the array and streams K; ws lays K x N and
    streams M; is lays K x M and streams N."""
    m, n, k = layer.m, layer.n, layer.k

    def tiles(extent: int, size: int) -> list[tuple[int, int]]:
        return [(start, min(size, extent - start)) for start in range(0, extent, size)]

    result = []
    if dataflow == "os":
        for n0, nc in tiles(n, cols):
            for m0, mr in tiles(m, rows):
                result.append(Fold((m0, 0, mr, k), (0, n0, k, nc), (m0, n0, mr, nc), False))
    elif dataflow == "ws":
        for n0, nc in tiles(n, cols):
            for k0, kr in tiles(k, rows):
                result.append(Fold((0, k0, m, kr), (k0, n0, kr, nc), (0, n0, m, nc), k0 > 0))
    else:
        for m0, mc in tiles(m, cols):
            for k0, kr in tiles(k, rows):
                result.append(Fold((m0, k0, mc, kr), (k0, 0, kr, n), (m0, 0, mc, n), k0 > 0))
    return result


@dataclass
class Operand:
    """How a kernel holds one operand in its scratchpad: resident (all of it, loaded once) or
    double-buffered tiles (a load whenever the fold's window changes, two slots)."""

    name: str
    space: str
    pipe: str
    rows: int
    cols: int
    windows: list[tuple[int, int, int, int]]
    resident: bool

    @property
    def tile(self) -> tuple[int, int]:
        """The shape of one slot."""
        if self.resident:
            return self.rows, self.cols
        return max(w[2] for w in self.windows), max(w[3] for w in self.windows)

    def loads(self) -> list[int]:
        """For each fold, the number of the load it reads (resident: all load 0)."""
        return [0] * len(self.windows) if self.resident else _numbered(self.windows)

    def at(self, window: tuple[int, int, int, int], number: int) -> str:
        """Where a fold's `window` of the operand, in load `number`, starts in its scratchpad."""
        if self.resident:
            return f"%{self.name}[{window[0]}, {window[1]}]"
        return f"%{self.name}[{number % 2}, 0, 0]"


def _numbered(windows: list[tuple[int, int, int, int]]) -> list[int]:
    """For each fold, the number of the window it reads, counting on where it changes: the folds
    that read one window one after the other share it (one load of an operand tile, one output
    tile accumulated)."""
    numbers = [0]
    for before, window in zip(windows, windows[1:]):
        numbers.append(numbers[-1] + (window != before))
    return numbers


def operands(layer: Layer, fold_list: list[Fold], machine: Machine) -> tuple[Operand, Operand]:
    unit = machine.matrix

    def operand(name: str, space: str, pipe: str, rows: int, cols: int, windows) -> Operand:
        fits = rows * cols <= machine.memories[space].capacity // 2
        return Operand(name, space, pipe, rows, cols, windows, fits)

    return (
        operand("a", unit.a_space, "load", layer.m, layer.k, [f.a for f in fold_list]),
        operand("b", unit.b_space, "load_filter", layer.k, layer.n, [f.b for f in fold_list]),
    )


# --------------------------------------------------------------------------- #
# The machine and the kernel
# --------------------------------------------------------------------------- #


def scratchpad_kib(layer: Layer, dataflow: str, rows: int, cols: int) -> dict[str, int]:
    """KiB of each scratchpad: the preset's 64 unless two slots of its largest tile need more
    (then the next power of two that holds them)."""
    fold_list = folds(layer, dataflow, rows, cols)
    needs = {
        "ifmap": 2 * max(f.a[2] * f.a[3] for f in fold_list),
        "filter": 2 * max(f.b[2] * f.b[3] for f in fold_list),
        "ofmap": 2 * max(f.c[2] * f.c[3] for f in fold_list),  # in outputs, as SCALE-Sim counts
    }
    return {space: max(64, 1 << math.ceil(math.log2(need / 1024))) for space, need in needs.items()}


def machine_file(layer: Layer, dataflow: str, bandwidth: int, directory: Path) -> Path:
    """The systolic preset with `dataflow`, a DMA engine per scratchpad at `bandwidth` words per
    cycle (outputs per cycle for the drain) and the scratchpads `scratchpad_kib` gives."""
    preset = load_machine("systolic")
    kib = scratchpad_kib(layer, dataflow, preset.matrix.rows, preset.matrix.cols)
    name = f"systolic-{dataflow}-b{bandwidth}-" + "-".join(
        str(kib[space]) for space in ("ifmap", "filter", "ofmap")
    )
    path = directory / f"{name}.toml"
    # the ofmap holds as many i32 outputs as SCALE-Sim's holds one-word outputs
    memories = "".join(
        f'\n[memory.{space}]\ncapacity = "{size * (OUTPUT_BYTES if space == "ofmap" else 1)} KiB"\n'
        for space, size in kib.items()
    )
    path.write_text(
        f'extends = "systolic"\nname = "{name}"\n\n[matrix]\ndataflow = "{dataflow}"\n'
        f"{memories}\n"
        "[memory.dram]\n"
        "# SCALE-Sim's two read streams side by side, and the drain of outputs\n"
        f'read_bandwidth = "{2 * bandwidth} words/cycle"\n'
        f'write_bandwidth = "{OUTPUT_BYTES * bandwidth} words/cycle"\n'
        "latency = 1  # SCALE-Sim's read_port latency\n\n"
        "[dma.load]\n"
        'paths = ["dram -> ifmap"]\n'
        f'bandwidth = "{bandwidth} words/cycle"\n\n'
        "[dma.load_filter]\n"
        'paths = ["dram -> filter"]\n'
        f'bandwidth = "{bandwidth} words/cycle"\n'
        'shared_bandwidth = "dram"\n\n'
        "[dma.store]\n"
        f'bandwidth = "{OUTPUT_BYTES * bandwidth} words/cycle"\n\n'
        "[sync]\n"
        "# finished output tiles queue in the ofmap for the drain, one event per slot, as\n"
        "# SCALE-Sim's ofmap buffer lets them (its writes stall only when it is full)\n"
        f"flag_ids = {FLAG_IDS}\n"
    )
    return path


class _Program:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, line: str) -> None:
        self.lines.append("  " + line)


def kernel(layer: Layer, dataflow: str, machine: Machine) -> str:
    """The npu kernel of the layer: SCALE-Sim's fold order, double-buffered (module docstring)."""
    rows, cols = machine.matrix.rows, machine.matrix.cols
    fold_list = folds(layer, dataflow, rows, cols)
    a, b = operands(layer, fold_list, machine)
    m, n, k = layer.m, layer.n, layer.k
    global_a, global_b, global_c = (
        f'memref<{m}x{k}xi8, "dram">',
        f'memref<{k}x{n}xi8, "dram">',
        f'memref<{m}x{n}xi32, "dram">',
    )
    local = {}
    for operand in (a, b):
        tr, tc = operand.tile
        local[operand.name] = (
            f'memref<{tr}x{tc}xi8, "{operand.space}">'
            if operand.resident
            else f'memref<2x{tr}x{tc}xi8, "{operand.space}">'
        )
    out_rows = max(f.c[2] for f in fold_list)
    out_cols = max(f.c[3] for f in fold_list)
    # the output tiles: a new one wherever the C window changes; the last fold of each stores it
    out_numbers = _numbered([fold.c for fold in fold_list])
    out_count = out_numbers[-1] + 1
    # As many output slots as the ofmap holds (up to the flags a pipe pair has): finished tiles
    # queue there while the drain catches up, as SCALE-Sim's ofmap buffer lets them.
    slots = min(
        machine.flag_ids,
        out_count,
        machine.memories[machine.matrix.c_space].capacity // (OUTPUT_BYTES * out_rows * out_cols),
    )
    local["c"] = f'memref<{slots}x{out_rows}x{out_cols}xi32, "{machine.matrix.c_space}">'
    global_of = {"a": global_a, "b": global_b}

    loads = {operand.name: operand.loads() for operand in (a, b)}
    load_count = {name: numbers[-1] + 1 for name, numbers in loads.items()}
    last_use = {
        name: {number: i for i, number in enumerate(numbers)} for name, numbers in loads.items()
    }
    program = _Program()

    for i, fold in enumerate(fold_list):
        for operand in (a, b):
            number = loads[operand.name][i]
            if i and loads[operand.name][i - 1] == number:
                continue  # the window the previous fold read: nothing to load
            slot = number % 2
            if number >= 2:  # the slot's previous tile must be done with
                program.add(f'npu.wait_flag "array" -> "{operand.pipe}", {slot}')
            r0, c0, tr, tc = (
                (0, 0, operand.rows, operand.cols)
                if operand.resident
                else getattr(fold, operand.name)
            )
            program.add(
                f'npu.dma "{operand.pipe}" %{operand.name.upper()}[{r0}, {c0}] -> '
                f"{operand.at((0, 0, tr, tc), number)} "
                f"{{shape = array<i64: {tr}, {tc}>}} : {global_of[operand.name]} -> {local[operand.name]}"
            )
            program.add(f'npu.set_flag "{operand.pipe}" -> "array", {slot}')
            program.add(f'npu.wait_flag "{operand.pipe}" -> "array", {slot}')
        out = out_numbers[i]
        if (i == 0 or out_numbers[i - 1] != out) and out >= slots:
            program.add(f'npu.wait_flag "store" -> "array", {out % slots}')  # the slot was stored
        a_at, b_at = a.at(fold.a, loads["a"][i]), b.at(fold.b, loads["b"][i])
        mr, kr = fold.a[2], fold.a[3]
        nc = fold.b[3]
        program.add(
            f"npu.mma {a_at}, {b_at} -> %c[{out % slots}, 0, 0] {{m = {mr} : i64, n = {nc} : i64, "
            f"k = {kr} : i64{', accumulate' if fold.accumulate else ''}}} : "
            f"{local['a']}, {local['b']} -> {local['c']}"
        )
        for operand in (a, b):
            number = loads[operand.name][i]
            if last_use[operand.name][number] == i and number + 2 < load_count[operand.name]:
                program.add(f'npu.set_flag "array" -> "{operand.pipe}", {number % 2}')
        if i + 1 == len(fold_list) or out_numbers[i + 1] != out:
            r0, c0, tr, tc = fold.c
            slot = out % slots
            program.add(f'npu.set_flag "array" -> "store", {slot}')
            program.add(f'npu.wait_flag "array" -> "store", {slot}')
            program.add(
                f'npu.dma "store" %c[{slot}, 0, 0] -> %C[{r0}, {c0}] '
                f"{{shape = array<i64: {tr}, {tc}>}} : {local['c']} -> {global_c}"
            )
            if out + slots < out_count:
                program.add(f'npu.set_flag "store" -> "array", {slot}')

    return "\n".join(
        [
            f"func.func @main(%A: {global_a}, %B: {global_b}, %C: {global_c}) {{",
            f"  %a = npu.buffer offset 0 : {local['a']}",
            f"  %b = npu.buffer offset 0 : {local['b']}",
            f"  %c = npu.buffer offset 0 : {local['c']}",
            *program.lines,
            "  func.return",
            "}",
            "",
        ]
    )


def dram_traffic(layer: Layer, dataflow: str, machine: Machine) -> dict[str, int]:
    """Words the kernel moves per operand (A and B bytes, C outputs): what its loads and stores add up to."""
    fold_list = folds(layer, dataflow, machine.matrix.rows, machine.matrix.cols)
    a, b = operands(layer, fold_list, machine)
    traffic = {}
    for operand in (a, b):
        if operand.resident:
            traffic[operand.name] = operand.rows * operand.cols
        else:  # one load wherever the window changes
            windows = operand.windows
            traffic[operand.name] = sum(
                w[2] * w[3] for before, w in zip([None, *windows], windows) if w != before
            )
    traffic["c"] = layer.m * layer.n
    return traffic


# --------------------------------------------------------------------------- #
# Both sides
# --------------------------------------------------------------------------- #


def scalesim_run(layer: Layer, machine: Machine) -> dict[str, int]:
    """SCALE-Sim 3.0 on the machine's configuration: total cycles (stalls included), stall
    cycles, and DRAM words read into ifmap and filter and written from ofmap."""
    (whole, total, stalls, *_), details = run_scalesim(
        layer, to_scalesim_config(machine, output_bytes=OUTPUT_BYTES)
    )
    # get_detail_report_items: [9..11] ifmap DRAM start, stop, reads; [12..14] filter; [15..17] ofmap writes
    return {
        "whole": int(whole),
        "total": int(total),
        "stalls": int(stalls),
        "a": int(details[11]),
        "b": int(details[14]),
        "c": int(details[17]),
    }


@dataclass
class Row:
    layer: str
    m: int
    n: int
    k: int
    dataflow: str
    bandwidth: int
    machine: str
    ours: float
    """From the array's first fold to its last (SCALE-Sim's `Total Cycles` counts the same span:
    its first demand row to its last, the initial fill of its scratchpads and the final drain
    of the ofmap left out)."""
    ours_whole: float
    """The whole kernel: the first loads before the array starts and the last store after it ends."""
    scalesim: int
    scalesim_whole: int
    """SCALE-Sim's `Total Cycles (incl. prefetch)`: from its first DRAM read to its last DRAM write."""
    scalesim_stalls: int
    compute: int
    """The array's cycles with unlimited bandwidth (SCALE-Sim's total less its stalls)."""
    ours_words: dict[str, int]
    scalesim_words: dict[str, int]

    @property
    def ratio(self) -> float:
        return self.ours / self.scalesim

    @property
    def words_ratio(self) -> dict[str, float]:
        return {key: self.ours_words[key] / self.scalesim_words[key] for key in self.ours_words}

    @property
    def traffic(self) -> str:
        """Where SCALE-Sim's DRAM words differ from the kernel's by more than 1%, and by how much."""
        notes = []
        for key, verb, what in (("a", "reads", "A"), ("b", "reads", "B"), ("c", "writes", "C")):
            extra = self.scalesim_words[key] / self.ours_words[key]
            if abs(extra - 1) > WORDS_TOLERANCE:
                notes.append(f"S-Sim {verb} {what} {extra:.2f}x")
        return "; ".join(notes)

    @property
    def unexplained(self) -> bool:
        """Total cycles more than 10% apart with the same DRAM words on both sides."""
        return abs(self.ratio - 1) > TOLERANCE and not self.traffic


def measure(layer: Layer, dataflow: str, bandwidth: int, directory: Path) -> Row:
    path = machine_file(layer, dataflow, bandwidth, directory)
    machine = load_machine(path)
    text = kernel(layer, dataflow, machine)
    a, b = layer_inputs(layer)
    result = run_kernel(text, f"{layer.name}_{dataflow}", path, [a, b])
    (c,) = result.outputs
    if not np.array_equal(c, a.astype(np.int32) @ b.astype(np.int32)):
        raise AssertionError(f"the kernel of {layer.name} ({dataflow}) computed a wrong C")
    moved = {
        "a": result.stats.bytes_written.get("ifmap", 0),
        "b": result.stats.bytes_written.get("filter", 0),
        "c": result.stats.bytes_written.get("dram", 0) // OUTPUT_BYTES,
    }
    expected = dram_traffic(layer, dataflow, machine)
    if moved != expected:
        raise AssertionError(f"{layer.name} ({dataflow}): the kernel moved {moved}, not {expected}")
    theirs = scalesim_run(layer, machine)
    folds_run = [e for e in result.stats.events if e.pipe == machine.matrix.pipe]
    span = max(e.end for e in folds_run) - min(e.start for e in folds_run)
    return Row(
        layer.name, layer.m, layer.n, layer.k, dataflow, bandwidth, machine.name,
        span, result.stats.total_cycles, theirs["total"], theirs["whole"], theirs["stalls"],
        theirs["total"] - theirs["stalls"], moved,
        {key: theirs[key] for key in ("a", "b", "c")},
    )  # fmt: skip


def format_table(rows: list[Row]) -> str:
    header = (
        f"{'layer':<14} {'M':>4} {'N':>4} {'K':>4} {'df':>3} {'b':>3} {'compute':>8} {'ours':>9} "
        f"{'SCALE-Sim':>9} {'ratio':>6} {'whole':>9} {'S-Sim':>9} {'ratio':>6} {'A ours':>8} {'A S-Sim':>9} {'B ours':>8} {'B S-Sim':>9} "
        f"{'C ours':>7} {'C S-Sim':>8}  DRAM words apart"
    )
    lines = [header]
    for r in rows:
        lines.append(
            f"{r.layer:<14} {r.m:>4} {r.n:>4} {r.k:>4} {r.dataflow:>3} {r.bandwidth:>3} "
            f"{r.compute:>8,} {r.ours:>9,.0f} {r.scalesim:>9,} {r.ratio:>6.3f} "
            f"{r.ours_whole:>9,.0f} {r.scalesim_whole:>9,} {r.ours_whole / r.scalesim_whole:>6.3f} "
            f"{r.ours_words['a']:>8,} {r.scalesim_words['a']:>9,} {r.ours_words['b']:>8,} "
            f"{r.scalesim_words['b']:>9,} {r.ours_words['c']:>7,} {r.scalesim_words['c']:>8,}  {r.traffic}"
        )
    return "\n".join(lines)


def main() -> int:
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for layer in LAYERS:
            for bandwidth in BANDWIDTHS:
                for dataflow in DATAFLOWS:
                    rows.append(measure(layer, dataflow, bandwidth, Path(work)))
                    print(format_table(rows[-1:]).splitlines()[1], flush=True)
    print()
    print(format_table(rows))
    within = [r for r in rows if abs(r.ratio - 1) <= TOLERANCE]
    same_words = [r for r in rows if not r.traffic]
    unexplained = [r for r in rows if r.unexplained]
    print(
        f"\n{len(rows)} runs: total cycles within {TOLERANCE:.0%} of SCALE-Sim's in {len(within)}, "
        f"DRAM words within {WORDS_TOLERANCE:.0%} in {len(same_words)} (cycles within "
        f"{TOLERANCE:.0%} in {sum(r in within for r in same_words)} of those); cycles apart "
        f"with the same words: {len(unexplained)}"
    )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "scalesim_bandwidth.json").write_text(
        json.dumps([asdict(r) | {"ratio": r.ratio, "traffic": r.traffic} for r in rows], indent=2)
        + "\n"
    )
    for r in unexplained:
        print(
            f"FAIL: {r.layer} ({r.dataflow}, b={r.bandwidth}): ours {r.ours:,.0f} vs SCALE-Sim "
            f"{r.scalesim:,} cycles with the same DRAM words",
            file=sys.stderr,
        )
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
