"""The tensor-core machine files against a GPU: fp16 GEMMs and ResNet-50 convs, cuBLAS/cuDNN against the timing model.

    python benchmarks/gpu_validation.py                    # or `make bench`: measures this machine's GPU
    python benchmarks/gpu_validation.py --write-measurements m.json   # ... and keeps the measurements
    python benchmarks/gpu_validation.py --measurements m.json         # compares measurements taken elsewhere

Measured (only where `torch` imports and `torch.cuda.is_available()`; torch comes with
the `models` extra and must be a CUDA build): each case in fp16 on the GPU, GEMMs with
`torch.matmul` (cuBLAS), convolutions with `torch.nn.functional.conv2d` (cuDNN, channels_last,
`cudnn.benchmark` on so that the warm-up picks its fastest algorithm). WARMUP untimed calls,
then RUNS samples timed with CUDA events, each sample as many back-to-back calls as make it
last about SAMPLE_MS (a few-microsecond call timed alone would time its launch), queued
behind a GPU sleep so that the host's launches do not gap them (`time_op`); a case's
time is the median sample divided by its calls. Operands stay resident (warm L2, as in a
network), with the output preallocated for the GEMMs. The GPU's name, SM count,
compute capability, torch, CUDA and cuDNN versions and the date are recorded with the times
(`--write-measurements`).

Ours: the machine file describing that GPU (chosen by its name, `GPU_MACHINES`, or
`--machine`; its `cores` must be the measured SM count). The compiler emits one core's
program, so the whole GPU is estimated from one SM's block: the GEMM's M x N output (a
conv's batch x output channels x output rows, with the input rows of the halo) is split
into a grid of equal blocks, at most one per SM per wave (`plans`); ONE block, an ONNX
MatMul or Conv in f16, is compiled for the machine (`compile{machine=M}`, as
`ziggurat-compile` does) and run on the interpreter with `active_cores` = the SMs busy
in that wave, so that the SMs share global-memory bandwidth as they would on the chip;
the GPU's time is the sum over the waves of the block's cycles at that wave's
occupancy, divided by the clock. Up to TRIALS grids are tried so and the fastest kept,
as cuDNN's benchmark mode keeps its fastest algorithm (`simulate`). The block's output
is checked against numpy. This is an
estimate of the whole chip from one SM's block, pending the compiler's own distribution
of a layer over the cores (`compile{cores=N}`): it assumes every block takes as long as
the one simulated (a conv's band of rows is simulated as an interior band, reading its
halo rather than padding), and it knows nothing of the L2 cache (no machine file models
one), so every block's reads are charged to HBM at its share of the bandwidth; HBM's reads
and writes go side by side, each at the full bandwidth, where a GPU's share it.

Compared: measured ms, ours ms, ratio = ours / measured, and the roof (the largest of the
MACs at the machine file's peak, the operands read once and the result written once at its
HBM bandwidth; reads and writes side by side, as the timing model streams them). The table
goes to stdout, benchmarks/results/gpu_validation.json and docs/timing-validation.md
(between its gpu_validation markers; `--no-docs` leaves it);
the script exits 1 when a ratio is outside 1 +- TARGET or a block's output is wrong.
Without a GPU and without `--measurements` it says that the comparison is pending and
exits 0, touching nothing (so `make bench` passes on machines without a GPU).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper

import ziggurat  # noqa: F401  first: it sets OPENBLAS_NUM_THREADS=1 before numpy loads (100x faster npu.mma)
from ziggurat import numerics
from ziggurat.cli import parse_command_line, run_main, write_atomically
from ziggurat.context import default_context
from ziggurat.diagnostics import Diagnostic, DiagnosticError
from ziggurat.frontends.onnx import import_loaded_model, load_model
from ziggurat.interpreters.npu_interpreter import run_npu
from ziggurat.interpreters.report import build_report
from ziggurat.machine import Machine, load_machine
from ziggurat.tools.ziggurat_compile import lower, lowering_passes

TARGET = 0.25
"""Ours must be within 25% of the measured time: ratio in [0.75, 1.25]."""
WARMUP = 10
RUNS = 20
SAMPLE_MS = 1.0
BATCH = 32
"""The convolutions' batch: the images per GPU of ResNet-50's training in Goyal et al., "Accurate,
Large Minibatch SGD" (2017), and enough output tiles at 14 x 14 (32 x 196 rows of the implicit
GEMM) to keep 100+ SMs busy."""
SEED = 0
DEVICE = "cuda"
RESULTS = Path(__file__).parent / "results"
DOCS = Path(__file__).parents[1] / "docs" / "timing-validation.md"
DOCS_BEGIN = "<!-- gpu_validation: the table below is written by benchmarks/gpu_validation.py -->"
DOCS_END = "<!-- gpu_validation: end of table -->"

GPU_MACHINES = {
    "NVIDIA A100-SXM4-80GB": "tensorcore",
    "NVIDIA H100 80GB HBM3": "h100_sxm",
    "NVIDIA H100 PCIe": "h100_pcie",
    "NVIDIA H200": "h200",
}
"""The machine file (a preset) describing each GPU, by the name CUDA reports for it. Names differ
between variants of a GPU that differ in SMs, clocks or memory (the H200 NVL is not the H200 SXM):
an unknown name is an error, not a guess."""


# --------------------------------------------------------------------------- #
# The cases
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class Gemm:
    """C (M x N) = A (M x K) x B (K x N), fp16 with fp32 accumulation, fp16 result."""

    name: str
    m: int
    n: int
    k: int
    kind: str = "gemm"

    @property
    def macs(self) -> int:
        return self.m * self.n * self.k

    @property
    def read_bytes(self) -> int:
        """A and B read once (fp16)."""
        return 2 * (self.m * self.k + self.k * self.n)

    @property
    def write_bytes(self) -> int:
        """C written once (fp16)."""
        return 2 * self.m * self.n

    def shape(self) -> str:
        return f"{self.m}x{self.n}x{self.k}"


@dataclass(frozen=True)
class Conv:
    """A 2-D convolution in NCHW, square kernel, no bias, fp16.

    `pad` pads every side; a band of output rows cut from the middle of an image
    (`pad_rows=False`) reads its halo instead and pads only left and right."""

    name: str
    batch: int
    channels: int
    height: int
    width: int
    filters: int
    kernel: int
    stride: int
    pad: int
    pad_rows: bool = True
    kind: str = "conv"

    @property
    def out_height(self) -> int:
        return (self.height + 2 * self.pad * self.pad_rows - self.kernel) // self.stride + 1

    @property
    def out_width(self) -> int:
        return (self.width + 2 * self.pad - self.kernel) // self.stride + 1

    @property
    def macs(self) -> int:
        return (
            self.batch
            * self.filters
            * self.out_height
            * self.out_width
            * self.channels
            * self.kernel**2
        )

    @property
    def read_bytes(self) -> int:
        """The input and the weights read once (fp16)."""
        inputs = self.batch * self.channels * self.height * self.width
        return 2 * (inputs + self.filters * self.channels * self.kernel**2)

    @property
    def write_bytes(self) -> int:
        """The output written once (fp16)."""
        return 2 * self.batch * self.filters * self.out_height * self.out_width

    def shape(self) -> str:
        return (
            f"{self.batch}x{self.channels}x{self.height}x{self.width} "
            f"{self.kernel}x{self.kernel}/{self.stride} ->{self.filters}"
        )


Case = Gemm | Conv

GEMMS = (
    # square, from 2.1 GFLOP (2.2 us at an H100's 989 TFLOPS peak: launch and wave quantization
    # show) to 1.1 TFLOP (compute-bound, cuBLAS's best case), and a K that no tile divides
    # (1000 = 7 x 128 + 104: a ragged last K step on both sides)
    Gemm("gemm_1024", 1024, 1024, 1024),
    Gemm("gemm_2048", 2048, 2048, 2048),
    Gemm("gemm_4096", 4096, 4096, 4096),
    Gemm("gemm_8192", 8192, 8192, 8192),
    Gemm("gemm_4096x4096x1000", 4096, 4096, 1000),
)
CONVS = (
    # ResNet-50 at 224 x 224: the 7x7/2 stem, the 3x3 and a 1x1 of stage 2 (56 x 56), the 3x3
    # and a 1x1 of stage 4 (14 x 14), as it pads them
    Conv("r50_stem_7x7s2", BATCH, 3, 224, 224, 64, 7, 2, 3),
    Conv("r50_2_3x3", BATCH, 64, 56, 56, 64, 3, 1, 1),
    Conv("r50_2_1x1", BATCH, 256, 56, 56, 64, 1, 1, 0),
    Conv("r50_4_3x3", BATCH, 256, 14, 14, 256, 3, 1, 1),
    Conv("r50_4_1x1", BATCH, 1024, 14, 14, 256, 1, 1, 0),
)
CASES: tuple[Case, ...] = (*GEMMS, *CONVS)


def case_from_json(data: dict[str, Any]) -> Case:
    """A case as `case_to_json` wrote it (a measurement file's entry)."""
    kind = Gemm if data.get("kind") == "gemm" else Conv
    fields = {key: value for key, value in data.items() if key in kind.__dataclass_fields__}
    if data.get("kind") == "gemm":
        return Gemm(**fields)
    if data.get("kind") == "conv":
        return Conv(**fields)
    raise DiagnosticError(
        Diagnostic("error", f"unknown case kind {data.get('kind')!r} (gemm or conv)")
    )


def case_to_json(case: Case) -> dict[str, Any]:
    data = asdict(case)
    if isinstance(case, Conv):
        del data["pad_rows"]
    return data


# --------------------------------------------------------------------------- #
# Measuring on the GPU
# --------------------------------------------------------------------------- #


def cuda_torch() -> tuple[Any, str | None]:
    """(torch, None) where torch imports and sees a CUDA device, else (None, why not)."""
    try:
        import torch
    except ImportError:
        return None, "torch is not installed; pip install '.[models]', a CUDA build of torch"
    if not torch.cuda.is_available():
        return None, f"torch {torch.__version__} sees no CUDA device"
    return torch, None


SLEEP_HZ = 2e9
"""Cycles per second `torch.cuda._sleep` is given at: above these GPUs' clocks, so it sleeps at least that long."""
MAX_SLEEP_S = 0.05


def time_op(
    torch, op: Callable[[], Any], warmup: int, runs: int, sample_ms: float
) -> tuple[list[float], int]:
    """Milliseconds per call of `op` in each of `runs` samples, and the calls per sample.

    Before each sample the GPU sleeps (`torch.cuda._sleep`, where torch has it) for twice the
    time the host took to queue as many calls in the warm-up, so that the sample's calls are
    all queued when the first starts and run back to back: a call shorter than its launch on
    the host would otherwise time the host."""
    settle = (warmup + 1) // 2  # the first calls pick algorithms (cudnn.benchmark), untimed
    for _ in range(settle):
        op()
    queued = time.perf_counter()
    for _ in range(warmup - settle):
        op()
    host_per_call = (time.perf_counter() - queued) / max(1, warmup - settle)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    op()
    end.record()
    end.synchronize()
    calls = max(1, math.ceil(sample_ms / max(start.elapsed_time(end), 1e-3)))
    sleep = getattr(torch.cuda, "_sleep", None)
    seconds = min(MAX_SLEEP_S, max(1e-3, 2 * calls * host_per_call))
    samples = []
    for _ in range(runs):
        if sleep is not None:
            sleep(int(SLEEP_HZ * seconds))
        start.record()
        for _ in range(calls):
            op()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) / calls)
    return samples, calls


def sm_clock_mhz(torch) -> int | None:
    """The SM clock now (pynvml, where installed), right after a case's samples."""
    try:
        return int(torch.cuda.clock_rate())
    except Exception:  # noqa: BLE001 - pynvml missing or not permitted: the clock is optional
        return None


def measure(
    torch,
    cases: Sequence[Case],
    warmup: int = WARMUP,
    runs: int = RUNS,
    sample_ms: float = SAMPLE_MS,
) -> dict[str, Any]:
    """Every case timed on the current CUDA device, as a measurement file's contents."""
    device = torch.device(DEVICE)
    torch.backends.cudnn.benchmark = True
    properties = torch.cuda.get_device_properties(device)
    generator = torch.Generator(device=device).manual_seed(SEED)

    def randn(*shape):
        return torch.randn(*shape, device=device, dtype=torch.float16, generator=generator)

    measured = []
    for case in cases:
        if isinstance(case, Gemm):
            a, b = randn(case.m, case.k), randn(case.k, case.n)
            c = torch.empty(case.m, case.n, device=device, dtype=torch.float16)

            def op(a=a, b=b, c=c):
                return torch.matmul(a, b, out=c)
        else:
            x = randn(case.batch, case.channels, case.height, case.width).to(
                memory_format=torch.channels_last
            )
            w = randn(case.filters, case.channels, case.kernel, case.kernel).to(
                memory_format=torch.channels_last
            )

            def op(x=x, w=w, case=case):
                return torch.nn.functional.conv2d(x, w, stride=case.stride, padding=case.pad)

        samples, calls = time_op(torch, op, warmup, runs, sample_ms)
        measured.append(
            case_to_json(case)
            | {
                "ms": statistics.median(samples),
                "samples_ms": samples,
                "calls_per_sample": calls,
                "sm_clock_mhz": sm_clock_mhz(torch),
            }
        )
        print(f"measured {case.name}: {statistics.median(samples):.4f} ms", file=sys.stderr)
    return {
        "gpu": {
            "name": properties.name,
            "sm_count": properties.multi_processor_count,
            "compute_capability": f"{properties.major}.{properties.minor}",
            "memory_bytes": properties.total_memory,
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(),
        },
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "method": {
            "dtype": "float16",
            "gemm": "torch.matmul(a, b, out=c) (cuBLAS), row-major A (M x K) and B (K x N)",
            "conv": "torch.nn.functional.conv2d, channels_last, cudnn.benchmark",
            "fp16_reduced_precision_reduction": (
                torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction
            ),
            "warmup_calls": warmup,
            "samples": runs,
            "sample_ms": sample_ms,
            "statistic": "median over samples of CUDA-event time / calls per sample",
            "queued_behind_sleep": hasattr(torch.cuda, "_sleep"),
        },
        "cases": measured,
    }


def read_measurements(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
        gpu, cases = data["gpu"], data["cases"]
        gpu["name"], int(gpu["sm_count"])
        if not cases:
            raise ValueError("no cases")
        for case in cases:
            float(case["ms"])
            case_from_json(case)
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise DiagnosticError(
            Diagnostic(
                "error",
                f"cannot read the measurements: {type(error).__name__}: {error}",
                file=str(path),
            )
        ) from None
    return data


# --------------------------------------------------------------------------- #
# The machine describing the GPU
# --------------------------------------------------------------------------- #


def machine_for(gpu_name: str, sm_count: int, override: str | None = None) -> str:
    """The machine (a preset name or a file) describing the GPU called `gpu_name` with `sm_count` SMs:
    `override` if given, else `GPU_MACHINES`'; DiagnosticError for an unknown GPU, or a machine
    whose cores are not the GPU's SMs (another variant of it, or a MIG slice)."""
    if override is None:
        found = {name.casefold(): machine for name, machine in GPU_MACHINES.items()}.get(
            gpu_name.strip().casefold()
        )
        if found is None:
            known = ", ".join(f"{name} ({machine})" for name, machine in GPU_MACHINES.items())
            raise DiagnosticError(
                Diagnostic(
                    "error",
                    f"no machine file describes the GPU '{gpu_name}' (known: {known}); "
                    "write one (docs/machine-file.md) and pass it with --machine FILE",
                )
            )
        override = found
    machine = load_machine(override)
    if machine.cores != sm_count:
        raise DiagnosticError(
            Diagnostic(
                "error",
                f"machine '{machine.name}' has {machine.cores} cores but the GPU '{gpu_name}' has "
                f"{sm_count} SMs: it does not describe this GPU (another variant, or a MIG slice)",
            )
        )
    return override


# --------------------------------------------------------------------------- #
# Our side: one SM's block
# --------------------------------------------------------------------------- #

GRANULE = 128
"""Blocks cut a GEMM's M and N at multiples of this (the compiler's M tile on the tensor-core machines, and
the usual cuBLAS tile), or not at all; a conv's output channels at multiples of 16."""


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def _parts(extent: int, granule: int) -> list[int]:
    """The counts of equal parts `extent` splits into, each a multiple of `granule` (or whole)."""
    return [p for p in _divisors(extent) if p == 1 or (extent // p) % granule == 0]


@dataclass(frozen=True)
class Plan:
    """A case as a grid of equal blocks, one per SM per wave."""

    grid: dict[str, int]
    """Blocks along each split dimension."""
    block: Case
    """One block, a case of its own (a conv's: its input rows with the halo)."""
    blocks: int
    waves: tuple[int, ...]
    """The SMs busy in each wave."""
    read_bytes: int
    """What all blocks read from global memory, each its operands once."""


def _waves(blocks: int, sms: int) -> tuple[int, ...]:
    full, rest = divmod(blocks, sms)
    return (sms,) * full + ((rest,) if rest else ())


def _gemm_plans(case: Gemm, sms: int) -> list[Plan]:
    plans = []
    for gm in _parts(case.m, GRANULE):
        for gn in _parts(case.n, GRANULE):
            bm, bn = case.m // gm, case.n // gn
            block = Gemm(f"{case.name}_block", bm, bn, case.k)
            plans.append(
                Plan(
                    {"m": gm, "n": gn},
                    block,
                    gm * gn,
                    _waves(gm * gn, sms),
                    gm * gn * 2 * (bm + bn) * case.k,
                )
            )
    return plans


def _conv_plans(case: Conv, sms: int) -> list[Plan]:
    plans = []
    rows = case.out_height
    for gb in _divisors(case.batch):
        for gf in _parts(case.filters, 16):
            for gr in _divisors(rows):
                band = rows // gr
                whole = gr == 1
                height = case.height if whole else (band - 1) * case.stride + case.kernel
                block = Conv(
                    f"{case.name}_block",
                    case.batch // gb,
                    case.channels,
                    height,
                    case.width,
                    case.filters // gf,
                    case.kernel,
                    case.stride,
                    case.pad,
                    pad_rows=whole,
                )
                assert block.out_height == band
                blocks = gb * gf * gr
                reads = 2 * (
                    block.batch * block.channels * block.height * block.width
                    + block.filters * block.channels * block.kernel**2
                )
                plans.append(
                    Plan(
                        {"batch": gb, "filters": gf, "rows": gr},
                        block,
                        blocks,
                        _waves(blocks, sms),
                        blocks * reads,
                    )
                )
    return plans


WORK_SLACK = 0.2
"""A grid may do this much more work (idle SMs in a last wave) than the least, for larger blocks."""
TRIALS = 6
"""Grids whose block is compiled and run for each case; the fastest is ours."""


def plans(case: Case, sms: int, trials: int = TRIALS) -> list[Plan]:
    """The grids of `case` on `sms` SMs worth trying: those whose work counting idle SMs in a
    partial last wave (waves x block MACs) is within WORK_SLACK of the least; the fewest blocks
    first (a block pays its pipeline's fill and drain: a 8192^3 GEMM is one wave of 128 blocks
    on 132 SMs, not 125 waves of 64 x 64), two grids per count of blocks, those whose blocks
    read the fewest bytes in all (operands that blocks share are read by each, a conv's halo
    too); `trials` of them."""
    every = _gemm_plans(case, sms) if isinstance(case, Gemm) else _conv_plans(case, sms)
    least = min(len(p.waves) * p.block.macs for p in every)
    near = [p for p in every if len(p.waves) * p.block.macs <= least * (1 + WORK_SLACK)]
    chosen = []
    for count in sorted({p.blocks for p in near}):
        chosen += sorted((p for p in near if p.blocks == count), key=lambda p: p.read_bytes)[:2]
    return chosen[:trials]


def block_model(block: Case) -> onnx.ModelProto:
    """The block as an ONNX model in f16, its operands graph inputs (not constants), as on the GPU."""
    f16 = TensorProto.FLOAT16
    if isinstance(block, Gemm):
        node = helper.make_node("MatMul", ["a", "b"], ["c"], name=block.name)
        inputs = [("a", [block.m, block.k]), ("b", [block.k, block.n])]
        output = ("c", [block.m, block.n])
    else:
        rows = block.pad if block.pad_rows else 0
        node = helper.make_node(
            "Conv",
            ["x", "w"],
            ["y"],
            name=block.name,
            kernel_shape=[block.kernel] * 2,
            strides=[block.stride] * 2,
            pads=[rows, block.pad, rows, block.pad],
        )
        inputs = [
            ("x", [block.batch, block.channels, block.height, block.width]),
            ("w", [block.filters, block.channels, block.kernel, block.kernel]),
        ]
        output = ("y", [block.batch, block.filters, block.out_height, block.out_width])
    graph = helper.make_graph(
        [node],
        block.name,
        [helper.make_tensor_value_info(name, f16, shape) for name, shape in inputs],
        [helper.make_tensor_value_info(output[0], f16, output[1])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def block_inputs(block: Case, seed: int = SEED) -> list[np.ndarray]:
    """Random f16 operands, the second scaled by 1/sqrt(fan-in) so that outputs stay near 1."""
    rng = np.random.default_rng(seed)
    if isinstance(block, Gemm):
        shapes, fan_in = [(block.m, block.k), (block.k, block.n)], block.k
    else:
        shapes = [
            (block.batch, block.channels, block.height, block.width),
            (block.filters, block.channels, block.kernel, block.kernel),
        ]
        fan_in = block.channels * block.kernel**2
    first, second = (rng.standard_normal(shape, dtype=np.float32) for shape in shapes)
    return [first.astype(np.float16), (second / np.sqrt(fan_in)).astype(np.float16)]


def reference(block: Case, inputs: Sequence[np.ndarray]) -> np.ndarray:
    """The block's output in numpy: f32 products and sums of the f16 operands, rounded to f16."""
    first, second = (array.astype(np.float32) for array in inputs)
    if isinstance(block, Gemm):
        return (first @ second).astype(np.float16)
    rows = block.pad if block.pad_rows else 0
    padded = np.pad(first, ((0, 0), (0, 0), (rows, rows), (block.pad, block.pad)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (block.kernel,) * 2, axis=(2, 3))
    windows = windows[:, :, :: block.stride, :: block.stride]
    return np.einsum("nchwij,fcij->nfhw", windows, second, optimize=True).astype(np.float16)


@dataclass
class Trial:
    """One grid's block compiled and run on the machine."""

    plan: Plan
    cycles: dict[int, float]
    """The block's cycles with each wave's busy SMs sharing global memory."""
    ms: float
    bound_by: str
    """What bounds the block in the first wave (the report's roofline)."""
    issued_macs: int
    """The MACs its matrix instructions did, padding included (the block's own: `plan.block.macs`)."""
    check: numerics.OutputCheck
    compile_seconds: float
    simulate_seconds: float


def run_plan(grid: Plan, machine_name: str) -> Trial:
    """The block of `grid` compiled for the machine (as `ziggurat-compile --machine` does), run once per
    distinct wave occupancy, its output checked against numpy."""
    machine: Machine = load_machine(machine_name)
    model, where = load_model(block_model(grid.block))
    start = time.perf_counter()
    module = import_loaded_model(model, {}, where)
    lower(default_context(), module, lowering_passes(machine_name, "npu", None))
    compiled = time.perf_counter()
    inputs = block_inputs(grid.block)
    cycles, bound_by, outputs, issued = {}, "", None, 0
    for busy in sorted(set(grid.waves), reverse=True):
        result = run_npu(module, machine, inputs, active_cores=busy, verify=False)
        cycles[busy] = result.stats.total_cycles
        if outputs is None:
            outputs = result.outputs[0]
            bound_by = build_report(result.stats, machine)["roofline"]["bound_by"]
            issued = sum(result.stats.macs.values())
    simulated = time.perf_counter()
    check = numerics.compare(outputs, reference(grid.block, inputs), name=grid.block.name)
    ms = sum(cycles[busy] for busy in grid.waves) / machine.clock_hz * 1e3
    return Trial(grid, cycles, ms, bound_by, issued, check, compiled - start, simulated - compiled)


def simulate(case: Case, machine_name: str, trials: int = TRIALS) -> tuple[Trial, list[Trial]]:
    """Our time for `case` on the machine: the fastest of `trials` grids (`plans`), as cuDNN's
    benchmark mode picks its fastest algorithm on the GPU; and every trial."""
    tried = [
        run_plan(grid, machine_name)
        for grid in plans(case, load_machine(machine_name).cores, trials)
    ]
    return min(tried, key=lambda trial: trial.ms), tried


def roof_ms(case: Case, machine: Machine) -> float:
    """The fewest ms the machine file allows the case: its MACs at the matrix unit's fp16 peak on
    every core, or its operands read once and its result written once at the global memory's
    bandwidths, the largest. Reads and writes side by side, each at its own bandwidth, as the
    timing model streams them (and as the run report's roofline counts them)."""
    compute = case.macs / (machine.peak_macs_per_cycle("f16", "f32") * machine.cores)
    gm = machine.global_memory()
    reads, writes = (
        case.read_bytes / gm.read_bytes_per_cycle,
        case.write_bytes / gm.write_bytes_per_cycle,
    )
    return max(compute, reads, writes) / machine.clock_hz * 1e3


# --------------------------------------------------------------------------- #
# The comparison
# --------------------------------------------------------------------------- #


@dataclass
class Row:
    case: str
    kind: str
    shape: str
    measured_ms: float
    ours_ms: float
    roof_ms: float
    grid: dict[str, int]
    blocks: int
    waves: int
    block: str
    block_cycles: dict[int, float]
    bound_by: str
    padding: float
    """The MACs the block's matrix instructions did over the block's own (1: no padding)."""
    check: dict[str, Any]
    compile_seconds: float
    simulate_seconds: float
    trials: list[dict[str, Any]]
    """Each grid tried: its blocks and ms."""
    sm_clock_mhz: int | None = None
    ratio: float = field(init=False)
    within_target: bool = field(init=False)

    def __post_init__(self) -> None:
        self.ratio = self.ours_ms / self.measured_ms
        self.within_target = abs(self.ratio - 1) <= TARGET


def compare(measurements: dict[str, Any], machine_name: str, trials: int = TRIALS) -> list[Row]:
    """Ours for every measured case (its shapes are the measurement file's)."""
    machine = load_machine(machine_name)
    rows = []
    for entry in measurements["cases"]:
        case = case_from_json(entry)
        print(f"ours {case.name}: compiling and running its block", file=sys.stderr)
        best, tried = simulate(case, machine_name, trials)
        rows.append(
            Row(
                case.name,
                case.kind,
                case.shape(),
                float(entry["ms"]),
                best.ms,
                roof_ms(case, machine),
                best.plan.grid,
                best.plan.blocks,
                len(best.plan.waves),
                best.plan.block.shape(),
                best.cycles,
                best.bound_by,
                best.issued_macs / best.plan.block.macs,
                {
                    "ok": best.check.ok,
                    "max_abs_error": best.check.max_abs,
                    "detail": str(best.check),
                },
                sum(trial.compile_seconds for trial in tried),
                sum(trial.simulate_seconds for trial in tried),
                [
                    {
                        "grid": t.plan.grid,
                        "block": t.plan.block.shape(),
                        "ms": t.ms,
                        "ok": t.check.ok,
                    }
                    for t in tried
                ],
                entry.get("sm_clock_mhz"),
            )
        )
    return rows


def format_table(rows: Sequence[Row]) -> str:
    lines = [
        f"{'case':<20} {'shape':<26} {'blocks':>10} {'measured ms':>11} {'ours ms':>9} "
        f"{'ratio':>6} {'within':>6} {'roof ms':>9} {'ours bound by':<14}"
    ]
    for r in rows:
        lines.append(
            f"{r.case:<20} {r.shape:<26} {f'{r.blocks}/{r.waves}w':>10} {r.measured_ms:>11.4f} "
            f"{r.ours_ms:>9.4f} {r.ratio:>6.2f} {'yes' if r.within_target else 'NO':>6} "
            f"{r.roof_ms:>9.4f} {r.bound_by:<14}"
        )
    return "\n".join(line.rstrip() for line in lines)


def summary(rows: Sequence[Row]) -> tuple[str, list[str]]:
    """The summary line and one failure message per missed target or wrong block."""
    failures = [
        f"{r.case}: ours {r.ours_ms:.4f} ms against {r.measured_ms:.4f} ms measured, "
        f"ratio {r.ratio:.2f} outside 1 +- {TARGET}"
        for r in rows
        if not r.within_target
    ] + [
        f"{r.case}: the block's output is wrong: {r.check['detail']}"
        for r in rows
        if not r.check["ok"]
    ]
    ratios = [r.ratio for r in rows]
    line = (
        f"{len(rows)} cases: ratio ours / measured {min(ratios):.2f} .. {max(ratios):.2f}, "
        f"{sum(r.within_target for r in rows)} within 1 +- {TARGET} (target: all)"
    )
    return line, failures


def docs_section(measurements: dict[str, Any], machine: Machine, rows: Sequence[Row]) -> str:
    """What goes between the markers of docs/timing-validation.md."""
    gpu = measurements["gpu"]
    about = [f"{gpu['sm_count']} SMs"]
    versions = [
        f"{name} {gpu[key]}"
        for name, key in (("torch", "torch"), ("CUDA", "cuda"), ("cuDNN", "cudnn"))
        if gpu.get(key) is not None
    ]
    if versions:
        about.append(", ".join(versions))
    clocks = [r.sm_clock_mhz for r in rows if r.sm_clock_mhz]
    if clocks:
        about.append(f"SM clock after the cases {min(clocks)}-{max(clocks)} MHz")
    line, _ = summary(rows)
    return (
        f"Measured on an {gpu['name']} ({'; '.join(about)}) on "
        f"{measurements.get('date', 'an unrecorded date')}; ours on machine `{machine.name}` "
        f"({machine.cores} cores at {machine.clock_hz / 1e9:.3g} GHz):\n\n"
        f"```\n{format_table(rows)}\n\n{line}\n```\n"
    )


def write_docs(path: Path, section: str) -> None:
    text = path.read_text()
    pattern = re.compile(re.escape(DOCS_BEGIN) + r"\n.*?" + re.escape(DOCS_END), re.DOTALL)
    if not pattern.search(text):
        raise DiagnosticError(
            Diagnostic("error", f"no '{DOCS_BEGIN}' ... '{DOCS_END}' markers", file=str(path))
        )
    write_atomically(
        path, pattern.sub(lambda _: f"{DOCS_BEGIN}\n{section}{DOCS_END}", text, count=1)
    )


def build_argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="fp16 GEMMs and ResNet-50 convs on this machine's GPU against the tensor-core "
        "machine file describing it"
    )
    parser.add_argument(
        "--measurements",
        type=Path,
        metavar="PATH",
        help="compare these measurements (a file --write-measurements wrote) instead of measuring",
    )
    parser.add_argument(
        "--write-measurements",
        type=Path,
        metavar="PATH",
        help="also write what was measured on this GPU to PATH",
    )
    parser.add_argument(
        "--machine",
        metavar="NAME|FILE",
        help="the machine file describing the GPU (default: by the GPU's name, GPU_MACHINES)",
    )
    parser.add_argument("--results", type=Path, default=RESULTS, metavar="DIR")
    parser.add_argument(
        "--docs",
        type=Path,
        default=DOCS,
        metavar="PATH",
        help="the page whose gpu_validation table is rewritten (default: docs/timing-validation.md)",
    )
    parser.add_argument("--no-docs", action="store_true", help="leave the docs as they are")
    parser.add_argument("--warmup", type=int, default=WARMUP, metavar="N")
    parser.add_argument("--runs", type=int, default=RUNS, metavar="N")
    parser.add_argument(
        "--trials",
        type=int,
        default=TRIALS,
        metavar="N",
        help=f"grids whose block ours compiles and runs per case, the fastest kept (default {TRIALS})",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_command_line(build_argument_parser(), argv)
    if args.measurements is not None:
        measurements = read_measurements(args.measurements)
    else:
        torch, why_not = cuda_torch()
        if torch is None:
            print(
                f"gpu_validation: no GPU here ({why_not}): the comparison with a GPU is pending; "
                "nothing measured, the docs keep their last measured table"
            )
            return 0
        properties = torch.cuda.get_device_properties(torch.device(DEVICE))
        # before measuring: a GPU no machine file describes is refused at once
        machine_for(properties.name, properties.multi_processor_count, args.machine)
        measurements = measure(torch, CASES, args.warmup, args.runs)
        if args.write_measurements is not None:
            write_atomically(args.write_measurements, json.dumps(measurements, indent=2) + "\n")
    gpu = measurements["gpu"]
    machine_name = machine_for(gpu["name"], int(gpu["sm_count"]), args.machine)
    machine = load_machine(machine_name)
    rows = compare(measurements, machine_name, args.trials)
    print(
        f"{gpu['name']} ({gpu['sm_count']} SMs), measured {measurements.get('date')}; ours on {machine.name}"
    )
    print(format_table(rows))
    line, failures = summary(rows)
    print(line)
    results = {
        "gpu": gpu,
        "measured": {key: measurements.get(key) for key in ("date", "method")},
        "machine": machine.name,
        "machine_file": machine.source,
        "clock_hz": machine.clock_hz,
        "cores": machine.cores,
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "target": TARGET,
        "rows": [asdict(r) for r in rows],
        "passed": not failures,
    }
    args.results.mkdir(parents=True, exist_ok=True)
    write_atomically(args.results / "gpu_validation.json", json.dumps(results, indent=2) + "\n")
    if not args.no_docs:
        write_docs(args.docs, docs_section(measurements, machine, rows))
    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    run_main(main)
