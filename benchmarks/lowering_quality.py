"""How good is the code lower-to-npu writes? Two figures against what the machine allows.

    python benchmarks/lowering_quality.py            # or `make bench`
    python benchmarks/lowering_quality.py --small    # tiny sizes, a smoke run

* GEMM 1024x1024x1024 f16 on davinci (one core): matrix-unit utilization, the
  useful multiply-accumulates at the unit's peak rate over the cycles taken
  (target >= 85%), next to the run's roofline bound (`build_report`).
* conv3x3 + batch norm + relu, 1x64x16x16 f16 on davinci: bytes moved to and from global
  memory against the unavoidable minimum, every argument read or written once
  (target within 10%), next to the same block lowered unfused (the `graph-fuse`
  of lower-to-npu left out, so each op round-trips through global memory).

Every run's outputs are checked against the graph interpreter. The results go
to benchmarks/results/lowering_quality.json and, as a table, into the section
"Quality" of docs/lowering.md; the script exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

import ziggurat  # noqa: F401  first: it sets OPENBLAS_NUM_THREADS=1 before numpy loads (100x faster npu.mma)
from ziggurat.cli import run_main, write_atomically
from ziggurat.context import default_context
from ziggurat.interpreters.interpreter import find_function, run_function
from ziggurat.interpreters.npu_interpreter import run_npu
from ziggurat.interpreters.report import build_report
from ziggurat.lowering.pipelines import expand_pipeline
from ziggurat.machine import load_machine
from ziggurat.parsing import parse_source
from ziggurat.testing.differential import apply_pipeline, compare_outputs, level_inputs

RESULTS = Path(__file__).parent / "results"
DOC = Path(__file__).parents[1] / "docs" / "lowering.md"
TABLE_BEGIN = "<!-- lowering_quality.py: begin -->"
TABLE_END = "<!-- lowering_quality.py: end -->"
MACHINE = "davinci"
UTILIZATION_TARGET = 0.85
TRAFFIC_TARGET = 1.10


def gemm_ir(m: int, n: int, k: int) -> str:
    return f"""
func.func @main(%a: tensor<{m}x{k}xf16>, %b: tensor<{k}x{n}xf16>) -> tensor<{m}x{n}xf16> {{
  %c = graph.matmul %a, %b : (tensor<{m}x{k}xf16>, tensor<{k}x{n}xf16>) -> tensor<{m}x{n}xf16>
  func.return %c : tensor<{m}x{n}xf16>
}}"""


def conv_block_ir(channels: int, size: int) -> str:
    """conv3x3 (pad 1) + batch norm + relu; the batch norm's parameters are arguments, so that
    every byte the block needs comes from global memory and counts in the minimum."""
    x = f"tensor<1x{channels}x{size}x{size}xf16>"
    w = f"tensor<{channels}x{channels}x3x3xf16>"
    v = f"tensor<{channels}xf16>"
    return f"""
func.func @main(%x: {x}, %w: {w}, %scale: {v}, %shift: {v}, %mean: {v}, %var: {v}) -> {x} {{
  %c = graph.conv2d %x, %w {{pads = array<i64: 1, 1, 1, 1>}} : ({x}, {w}) -> {x}
  %n = graph.batch_norm %c, %scale, %shift, %mean, %var : ({x}, {v}, {v}, {v}, {v}) -> {x}
  %y = graph.relu %n : {x}
  func.return %y : {x}
}}"""


def lower_to_npu(machine: str, fused: bool = True) -> str:
    """lower-to-npu's passes; unfused: without its graph-fuse, every op its own group."""
    passes = expand_pipeline(f"lower-to-npu{{machine={machine}}}").split(",")
    return ",".join(p for p in passes if fused or p != "graph-fuse")


@dataclass
class Run:
    """One graph-level kernel lowered with one pipeline and run on the machine model."""

    cycles: float
    global_bytes: int
    bound_cycles: float
    bound_by: str
    macs: int
    seconds: float


def lower_and_run(text: str, pipeline: str, inputs: list[np.ndarray] | None = None) -> Run:
    """Lower `text`, run it on MACHINE and check its outputs against the graph interpreter."""
    module = parse_source(default_context(), text, "lowering_quality.mlir")
    function = find_function(module)
    inputs = level_inputs(function, seed=0) if inputs is None else inputs
    expected = run_function(module, inputs)
    start = time.perf_counter()
    apply_pipeline(module, pipeline)
    machine = load_machine(MACHINE)
    result = run_npu(module, machine, inputs)
    seconds = time.perf_counter() - start
    wrong = [
        str(c)
        for c in compare_outputs(expected, result.outputs, None, None, scale_atol=True)
        if not c.ok
    ]
    if wrong:
        raise SystemExit(f"lowered with '{pipeline}', the outputs differ: {'; '.join(wrong)}")
    stats = result.stats
    roofline = build_report(stats, machine)["roofline"]
    global_spaces = [name for name, space in machine.memories.items() if space.level == "global"]
    moved = sum(stats.bytes_read.get(s, 0) + stats.bytes_written.get(s, 0) for s in global_spaces)
    return Run(
        stats.total_cycles,
        moved,
        roofline["bound_cycles"],
        roofline["bound_by"],
        sum(stats.macs.values()),
        seconds,
    )


@dataclass
class GemmRow:
    shape: str
    cycles: float
    utilization: float
    """Useful MACs at the matrix unit's peak rate, over the cycles taken."""
    roofline_bound_cycles: float
    roofline_bound_by: str
    roofline_achieved: float
    seconds: float


def measure_gemm(m: int, n: int, k: int) -> GemmRow:
    run = lower_and_run(gemm_ir(m, n, k), lower_to_npu(MACHINE))
    peak = load_machine(MACHINE).peak_macs_per_cycle("f16", "f32")
    utilization = m * n * k / peak / run.cycles
    return GemmRow(
        f"{m}x{n}x{k}",
        run.cycles,
        utilization,
        run.bound_cycles,
        run.bound_by,
        run.bound_cycles / run.cycles,
        run.seconds,
    )


@dataclass
class TrafficRow:
    shape: str
    minimum_bytes: int
    """Every argument read, every result written, once."""
    fused_bytes: int
    unfused_bytes: int
    fused_cycles: float
    unfused_cycles: float
    seconds: float

    @property
    def fused_ratio(self) -> float:
        return self.fused_bytes / self.minimum_bytes

    @property
    def unfused_ratio(self) -> float:
        return self.unfused_bytes / self.minimum_bytes


def block_inputs(text: str) -> list[np.ndarray]:
    """Random inputs with a positive variance for the batch norm (its last argument)."""
    inputs = level_inputs(
        find_function(parse_source(default_context(), text, "block.mlir")), seed=0
    )
    inputs[-1] = np.abs(inputs[-1]) + np.float16(0.5)
    return inputs


def measure_conv_block(channels: int, size: int) -> TrafficRow:
    text = conv_block_ir(channels, size)
    inputs = block_inputs(text)
    output_bytes = channels * size * size * 2
    minimum = sum(a.nbytes for a in inputs) + output_bytes
    fused = lower_and_run(text, lower_to_npu(MACHINE), inputs)
    unfused = lower_and_run(text, lower_to_npu(MACHINE, fused=False), inputs)
    return TrafficRow(
        f"1x{channels}x{size}x{size}",
        minimum,
        fused.global_bytes,
        unfused.global_bytes,
        fused.cycles,
        unfused.cycles,
        fused.seconds + unfused.seconds,
    )


def format_tables(gemm: GemmRow, block: TrafficRow) -> str:
    return "\n".join(
        [
            f"| GEMM f16 on {MACHINE} (1 core) | cycles | matrix-unit utilization | roofline bound | achieved of bound |",
            "|---|---:|---:|---|---:|",
            f"| {gemm.shape} | {gemm.cycles:,.0f} | {gemm.utilization:.1%} (target >= {UTILIZATION_TARGET:.0%}) "
            f"| {gemm.roofline_bound_cycles:,.0f} cycles ({gemm.roofline_bound_by}) | {gemm.roofline_achieved:.1%} |",
            "",
            f"| conv3x3 + bn + relu f16 on {MACHINE} | global bytes | vs minimum | cycles |",
            "|---|---:|---:|---:|",
            f"| minimum (arguments once) | {block.minimum_bytes:,} | 1.00x | |",
            f"| lower-to-npu | {block.fused_bytes:,} | {block.fused_ratio:.2f}x (target <= {TRAFFIC_TARGET:.2f}x) "
            f"| {block.fused_cycles:,.0f} |",
            f"| unfused (no graph-fuse) | {block.unfused_bytes:,} | {block.unfused_ratio:.2f}x | {block.unfused_cycles:,.0f} |",
        ]
    )


def write_doc_table(doc: Path, table: str) -> None:
    """Replace the text between the markers of `doc` by `table`."""
    text = doc.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(TABLE_BEGIN) + ".*?" + re.escape(TABLE_END), re.S)
    if not pattern.search(text):
        raise SystemExit(f"{doc} has no '{TABLE_BEGIN}' ... '{TABLE_END}' section for the table")
    write_atomically(doc, pattern.sub(lambda _: f"{TABLE_BEGIN}\n{table}\n{TABLE_END}", text))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--small", action="store_true", help="tiny sizes (a smoke run; targets not checked)"
    )
    parser.add_argument(
        "--results", type=Path, default=RESULTS, help="folder for lowering_quality.json"
    )
    parser.add_argument(
        "--doc", type=Path, default=DOC, help="the Markdown file whose table to replace"
    )
    args = parser.parse_args(argv)
    gemm = measure_gemm(*((64, 64, 64) if args.small else (1024, 1024, 1024)))
    block = measure_conv_block(*((16, 8) if args.small else (64, 16)))
    table = format_tables(gemm, block)
    print(table)
    args.results.mkdir(parents=True, exist_ok=True)
    results = {
        "machine": MACHINE,
        "gemm": asdict(gemm),
        "conv_bn_relu": asdict(block)
        | {"fused_ratio": block.fused_ratio, "unfused_ratio": block.unfused_ratio},
    }
    write_atomically(args.results / "lowering_quality.json", json.dumps(results, indent=2) + "\n")
    write_doc_table(args.doc, table)
    if args.small:
        return 0
    missed = []
    if gemm.utilization < UTILIZATION_TARGET:
        missed.append(
            f"GEMM {gemm.shape}: matrix-unit utilization {gemm.utilization:.1%} < {UTILIZATION_TARGET:.0%}"
        )
    if block.fused_ratio > TRAFFIC_TARGET:
        missed.append(
            f"conv block: {block.fused_ratio:.2f}x the minimum global traffic > {TRAFFIC_TARGET:.2f}x"
        )
    for line in missed:
        print(f"FAIL: {line}", file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    run_main(main)
