"""benchmarks/gpu_validation.py without a GPU: the comparison on fake measurement files of small
shapes, the no-GPU path, the machine chosen by the GPU's name, the measuring code on a fake torch,
and the GPU machine files' published figures."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from benchmark_scripts import BENCHMARKS, load_benchmark

from ziggurat.diagnostics import DiagnosticError
from ziggurat.machine import PRESET_DIR, load_machine

gpu_validation = load_benchmark("gpu_validation")
Gemm, Conv = gpu_validation.Gemm, gpu_validation.Conv

# small enough to compile and run in well under a second each on the 132 SMs of an H200
SMALL = (Gemm("gemm_small", 256, 256, 128), Conv("conv_small", 2, 16, 12, 12, 32, 3, 1, 1))
H200 = {"name": "NVIDIA H200", "sm_count": 132}
DOCS = f"# Page\n\n{gpu_validation.DOCS_BEGIN}\nPending.\n{gpu_validation.DOCS_END}\n\nAfter.\n"


def measurement_file(folder: Path, ms: list[float], gpu=H200, cases=SMALL) -> Path:
    path = folder / "measurements.json"
    entries = [
        gpu_validation.case_to_json(c) | {"ms": t, "sm_clock_mhz": 1755}
        for c, t in zip(cases, ms, strict=True)
    ]
    path.write_text(json.dumps({"gpu": gpu, "date": "2026-01-02 03:04 UTC", "cases": entries}))
    return path


def ours_ms(case) -> float:
    return gpu_validation.simulate(case, "h200", trials=2)[0].ms


def run(folder: Path, measurements: Path, *options: str) -> tuple[int, dict]:
    docs = folder / "page.md"
    if not docs.exists():
        docs.write_text(DOCS)
    code = gpu_validation.main(
        ["--measurements", str(measurements), "--results", str(folder), "--docs", str(docs)]
        + ["--trials", "2", *options]
    )
    return code, json.loads((folder / "gpu_validation.json").read_text())


def test_measured_times_equal_to_ours_pass_and_twice_ours_fail(tmp_path: Path, capsys):
    ours = [ours_ms(case) for case in SMALL]
    code, results = run(tmp_path, measurement_file(tmp_path, ours))
    assert code == 0 and results["passed"] and results["machine"] == "h200"
    assert [r["case"] for r in results["rows"]] == ["gemm_small", "conv_small"]
    for row, expected in zip(results["rows"], ours):
        assert row["ours_ms"] == pytest.approx(expected) and row["ratio"] == pytest.approx(1)
        assert row["within_target"] and row["check"]["ok"] and 0 < row["roof_ms"] <= row["ours_ms"]
        assert row["padding"] >= 1 and row["blocks"] >= 1 and row["waves"] == 1
    page = (tmp_path / "page.md").read_text()
    assert "Measured on an NVIDIA H200 (132 SMs; SM clock after the cases 1755-1755 MHz)" in page
    assert "2026-01-02 03:04 UTC" in page
    assert "gemm_small" in page and "Pending." not in page and page.endswith("After.\n")
    assert (
        "2 cases: ratio ours / measured 1.00 .. 1.00, 2 within 1 +- 0.25" in capsys.readouterr().out
    )

    code, results = run(tmp_path, measurement_file(tmp_path, [ours[0] / 2, ours[1]]))
    assert code == 1 and not results["passed"]
    assert [r["within_target"] for r in results["rows"]] == [False, True]
    assert results["rows"][0]["ratio"] == pytest.approx(2)
    assert "FAIL: gemm_small: ours" in capsys.readouterr().err


def test_a_wrong_block_output_fails_the_run(tmp_path: Path, monkeypatch, capsys):
    ours = ours_ms(SMALL[0])
    monkeypatch.setattr(
        gpu_validation, "reference", lambda block, inputs: np.ones((block.m, block.n), np.float16)
    )
    path = measurement_file(tmp_path, [ours], cases=SMALL[:1])
    code, results = run(tmp_path, path, "--no-docs")
    assert code == 1 and not results["rows"][0]["check"]["ok"]
    assert "the block's output is wrong" in capsys.readouterr().err
    assert (tmp_path / "page.md").read_text() == DOCS  # --no-docs left it


def test_without_a_gpu_the_comparison_is_pending_and_nothing_is_touched(
    tmp_path: Path, monkeypatch, capsys
):
    docs = tmp_path / "page.md"
    docs.write_text(DOCS)
    options = ["--results", str(tmp_path / "results"), "--docs", str(docs)]
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    assert gpu_validation.main(options) == 0
    out = capsys.readouterr().out
    assert out.startswith("gpu_validation: no GPU here (torch is not installed")
    assert "the comparison with a GPU is pending" in out and len(out.splitlines()) == 1
    cpu_only = types.SimpleNamespace(
        __version__="2.13.0+cpu", cuda=types.SimpleNamespace(is_available=lambda: False)
    )
    monkeypatch.setitem(sys.modules, "torch", cpu_only)
    assert gpu_validation.main(options) == 0
    assert "(torch 2.13.0+cpu sees no CUDA device)" in capsys.readouterr().out
    assert docs.read_text() == DOCS and not (tmp_path / "results").exists()


@pytest.mark.parametrize(
    "name, machine",
    [
        ("NVIDIA H200", "h200"),
        ("NVIDIA H100 80GB HBM3", "h100_sxm"),
        ("NVIDIA H100 PCIe", "h100_pcie"),
        ("nvidia a100-sxm4-80gb", "tensorcore"),
    ],
)
def test_the_machine_is_chosen_by_the_gpus_name(name, machine):
    cores = load_machine(machine).cores
    assert gpu_validation.machine_for(name, cores) == machine


def test_an_unknown_gpu_or_one_with_other_sms_is_an_error():
    with pytest.raises(
        DiagnosticError, match="no machine file describes the GPU 'NVIDIA H200 NVL'"
    ):
        gpu_validation.machine_for("NVIDIA H200 NVL", 132)
    # a MIG slice of an H200 reports fewer SMs
    with pytest.raises(DiagnosticError, match="machine 'h200' has 132 cores but the GPU .* has 16"):
        gpu_validation.machine_for("NVIDIA H200", 16)
    assert gpu_validation.machine_for("Some GPU", 132, override="h100_sxm") == "h100_sxm"


def test_the_script_exits_1_with_the_message_on_an_unknown_gpu(tmp_path: Path):
    path = measurement_file(tmp_path, [1.0, 1.0], gpu={"name": "NVIDIA B200", "sm_count": 148})
    script = BENCHMARKS / "gpu_validation.py"
    result = subprocess.run(
        [sys.executable, str(script), "--measurements", str(path), "--no-docs"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert result.returncode == 1
    assert "no machine file describes the GPU 'NVIDIA B200'" in result.stderr
    assert "--machine FILE" in result.stderr and "Traceback" not in result.stderr


class FakeTorch(types.ModuleType):
    """What gpu_validation.measure uses of torch, each op taking 0.25 ms of a fake GPU clock."""

    float16, channels_last, __version__ = "float16", "channels_last", "2.13.0"

    def __init__(self):
        super().__init__("torch")
        self.now, self.calls, self.sleeps = 0.0, 0, []
        fake = self

        class Tensor:
            def __init__(self, *shape):
                self.shape = shape

            def to(self, memory_format):
                return self

        class Event:
            def __init__(self, enable_timing):
                self.at = None

            def record(self):
                self.at = fake.now

            def synchronize(self):
                pass

            def elapsed_time(self, end):
                return end.at - self.at

        def op(*args, **kwargs):
            fake.now += 0.25
            fake.calls += 1

        def clock_rate():
            raise ModuleNotFoundError("pynvml")

        def sleep(cycles):
            fake.sleeps.append(cycles)

        properties = types.SimpleNamespace(
            name="NVIDIA H200", multi_processor_count=132, major=9, minor=0, total_memory=150e9
        )
        self.cuda = types.SimpleNamespace(
            is_available=lambda: True,
            get_device_properties=lambda device: properties,
            Event=Event,
            synchronize=lambda: None,
            clock_rate=clock_rate,
            _sleep=sleep,
        )
        self.backends = types.SimpleNamespace(
            cudnn=types.SimpleNamespace(benchmark=False, version=lambda: 91002),
            cuda=types.SimpleNamespace(
                matmul=types.SimpleNamespace(allow_fp16_reduced_precision_reduction=True)
            ),
        )
        self.version = types.SimpleNamespace(cuda="12.8")
        self.nn = types.SimpleNamespace(functional=types.SimpleNamespace(conv2d=op))
        self.matmul = op
        self.device = lambda name: name
        self.Generator = lambda device: types.SimpleNamespace(manual_seed=lambda seed: None)
        self.randn = lambda *shape, **kwargs: Tensor(*shape)
        self.empty = lambda *shape, **kwargs: Tensor(*shape)


def test_measuring_times_warm_samples_of_back_to_back_calls(tmp_path: Path, monkeypatch):
    torch = FakeTorch()
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setattr(gpu_validation, "CASES", SMALL)
    measured = tmp_path / "measured.json"
    docs = tmp_path / "page.md"
    docs.write_text(DOCS)
    options = ["--write-measurements", str(measured), "--results", str(tmp_path)]
    options += ["--docs", str(docs), "--warmup", "3", "--runs", "5", "--trials", "1"]
    gpu_validation.main(options)  # 0.25 ms is far from ours: the comparison itself may fail
    data = json.loads(measured.read_text())
    assert data["gpu"] == {
        "name": "NVIDIA H200",
        "sm_count": 132,
        "compute_capability": "9.0",
        "memory_bytes": 150e9,
        "torch": "2.13.0",
        "cuda": "12.8",
        "cudnn": 91002,
    }
    assert torch.backends.cudnn.benchmark
    # per case: 3 warm-up calls, one to size the samples (1 ms / 0.25 ms: 4 calls each), 5 samples
    assert torch.calls == 2 * (3 + 1 + 5 * 4)
    # each sample queued behind a sleep of at least 1 ms (at 2e9 cycles/s) and at most 50 ms
    assert len(torch.sleeps) == 2 * 5 and all(2e6 <= c <= 1e8 for c in torch.sleeps)
    assert data["method"]["queued_behind_sleep"]
    for entry, case in zip(data["cases"], SMALL, strict=True):
        assert gpu_validation.case_from_json(entry) == case
        assert entry["ms"] == 0.25 and entry["samples_ms"] == [0.25] * 5
        assert entry["calls_per_sample"] == 4 and entry["sm_clock_mhz"] is None
    assert "Measured on an NVIDIA H200 (132 SMs; torch 2.13.0, CUDA 12.8, cuDNN 91002)" in (
        docs.read_text()
    )


def test_a_band_of_rows_is_the_whole_convolutions_rows():
    case = Conv("c", 2, 8, 20, 12, 16, 3, 2, 1)  # 10 output rows: 5 bands of 2
    grids = {tuple(p.grid.values()): p for p in gpu_validation._conv_plans(case, 132)}
    band, whole = grids[(1, 1, 5)].block, grids[(1, 1, 1)].block
    assert (band.height, band.pad_rows, band.out_height) == (5, False, 2)
    assert (whole.height, whole.pad_rows, whole.out_height) == (20, True, 10)
    x, w = gpu_validation.block_inputs(whole)
    expected = gpu_validation.reference(whole, [x, w])
    # the second band: output rows 2 and 3 read input rows 2*2-1 .. 3*2+1 (stride 2, pad 1)
    rows = gpu_validation.reference(band, [x[:, :, 3:8], w])
    np.testing.assert_array_equal(rows, expected[:, :, 2:4])


@pytest.mark.parametrize("case", [*gpu_validation.CASES, SMALL[0]], ids=lambda c: c.name)
def test_a_grid_covers_the_output_with_at_most_one_block_per_sm_per_wave(case):
    for plan in gpu_validation.plans(case, 132):
        assert sum(plan.waves) == plan.blocks and max(plan.waves) <= 132
        if isinstance(case, Gemm):
            block = plan.block
            assert (plan.grid["m"] * block.m, plan.grid["n"] * block.n) == (case.m, case.n)
        else:
            grid, block = plan.grid, plan.block
            assert grid["batch"] * block.batch == case.batch
            assert grid["filters"] * block.filters == case.filters
            assert grid["rows"] * block.out_height == case.out_height
            assert block.out_width == case.out_width
        assert plan.blocks * plan.block.macs == case.macs


def test_one_wave_of_128_blocks_is_tried_for_every_case_on_132_sms():
    for case in gpu_validation.CASES:
        waves = [plan.waves for plan in gpu_validation.plans(case, 132)]
        assert ((64,) if case.name == "gemm_1024" else (128,)) in waves, case.name


@pytest.mark.parametrize("name", ["h100_sxm", "h200", "h100_pcie"])
def test_the_gpu_machine_files_cite_their_sources(name):
    text = (PRESET_DIR / f"{name}.toml").read_text()
    assert "Sources (public)" in text and ("assumption" in text.lower())


def test_the_gpu_machine_files_give_the_published_peaks():
    h100, h200, pcie = (load_machine(name) for name in ("h100_sxm", "h200", "h100_pcie"))
    assert (h100.cores, h200.cores, pcie.cores) == (132, 132, 114)
    # H100 whitepaper / datasheets: dense fp16 989.4 (SXM) and 756.5 (PCIe) TFLOPS, int8 1978.9 TOPS
    assert h100.peak_flops("f16", "f32") == pytest.approx(989.4e12, rel=1e-3)
    assert h200.peak_flops("f16", "f32") == pytest.approx(989.4e12, rel=1e-3)
    assert h100.peak_flops("i8", "i32") == pytest.approx(1978.9e12, rel=1e-3)
    assert pcie.peak_flops("f16", "f32") == pytest.approx(756.5e12, rel=1e-3)
    bandwidth = {m.name: m.global_bandwidth() * m.clock_hz for m in (h100, h200, pcie)}
    assert bandwidth == pytest.approx({"h100_sxm": 3.35e12, "h200": 4.8e12, "h100_pcie": 2e12})
    assert h200.memories["smem"].capacity == 228 * 1024 and h200.matrix.a_space == "smem"


def test_the_roof_is_the_peak_or_the_reads_or_the_writes_at_the_hbm_bandwidth():
    h200 = load_machine("h200")
    cases = {case.name: case for case in gpu_validation.CASES}
    # 4096^3 is compute-bound at the published 989.4 TFLOPS
    gemm = gpu_validation.roof_ms(cases["gemm_4096"], h200)
    assert gemm == pytest.approx(2 * 4096**3 / 989.4e12 * 1e3, rel=1e-3)
    # stage 2's 1x1 reads 32 x 256 x 56 x 56 fp16 activations (and 256 x 64 weights) at 4.8 TB/s
    conv = gpu_validation.roof_ms(cases["r50_2_1x1"], h200)
    assert conv == pytest.approx(2 * (32 * 256 * 56 * 56 + 256 * 64) / 4.8e12 * 1e3)


def test_a_gpu_no_machine_file_describes_is_refused_before_measuring(tmp_path: Path, monkeypatch):
    torch = FakeTorch()
    torch.cuda.get_device_properties = lambda device: types.SimpleNamespace(
        name="NVIDIA B200", multi_processor_count=148
    )
    monkeypatch.setitem(sys.modules, "torch", torch)
    with pytest.raises(DiagnosticError, match="no machine file describes the GPU 'NVIDIA B200'"):
        gpu_validation.main(["--results", str(tmp_path), "--no-docs"])
    assert torch.calls == 0 and not (tmp_path / "gpu_validation.json").exists()


@pytest.mark.parametrize(
    "text, why",
    [
        ("{", "JSONDecodeError"),
        ('{"gpu": {"name": "NVIDIA H200", "sm_count": 132}, "cases": []}', "no cases"),
        ('{"gpu": {"name": "NVIDIA H200"}, "cases": []}', "KeyError: 'sm_count'"),
        (
            '{"gpu": {"name": "x", "sm_count": 1}, "cases": [{"kind": "gemm", "ms": 1}]}',
            "TypeError",
        ),
        ('{"gpu": {"name": "x", "sm_count": 1}, "cases": [{"kind": "fft", "ms": 1}]}', "fft"),
    ],
)
def test_a_measurement_file_that_cannot_be_read_is_a_diagnostic(tmp_path: Path, text, why):
    path = tmp_path / "m.json"
    path.write_text(text)
    with pytest.raises(DiagnosticError, match=why):
        gpu_validation.read_measurements(path)
