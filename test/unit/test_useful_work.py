"""The useful roofline: the model's own MACs and compulsory traffic, recorded by
tile-record-useful-work and bounding the run in its report beside the bound of what ran."""

from __future__ import annotations

import numpy as np
import pytest

from ziggurat.context import default_context
from ziggurat.interpreters.npu_interpreter import run_npu
from ziggurat.interpreters.report import build_report, format_report, useful_peak
from ziggurat.ir.useful_work import recorded_macs
from ziggurat.machine import load_machine
from ziggurat.parsing import parse_source
from ziggurat.testing.differential import apply_pipeline

# 100 rows: davinci's cube pads M to 16 (112 rows issued), so the executed MACs exceed these.
GEMM = """
func.func @main(%a: tensor<100x64xf16>) -> tensor<100x48xf16> {
  %w = graph.constant dense<[[%s]]> : tensor<64x48xf16>
  %y = graph.matmul %a, %w : (tensor<100x64xf16>, tensor<64x48xf16>) -> tensor<100x48xf16>
  func.return %y : tensor<100x48xf16>
}
"""


def compiled(cores: int = 1):
    rng = np.random.default_rng(0)
    rows = ", ".join(
        "[" + ", ".join(f"{v:.3f}" for v in row) + "]" for row in rng.normal(size=(64, 48))
    )
    module = parse_source(default_context(), GEMM.replace("[[%s]]", f"[{rows}]"), "gemm.mlir")
    spread = "" if cores == 1 else f" cores={cores}"
    apply_pipeline(module, f"lower-to-npu{{machine=davinci{spread}}}")
    return module


def test_the_count_is_the_model_s_and_the_report_bounds_the_run_by_it():
    module = compiled()
    assert recorded_macs(module) == {("f16", "f32"): 100 * 48 * 64}
    a = np.random.default_rng(1).normal(size=(100, 64)).astype(np.float16)
    result = run_npu(module, "davinci", [a])
    useful = result.stats.useful
    assert useful is not None
    # a once (12,800 bytes) and the dense weight once (6,144), however often the tiles re-read it
    assert (useful.bytes_read, useful.bytes_written) == (100 * 64 * 2 + 64 * 48 * 2, 100 * 48 * 2)
    report = build_report(result.stats, load_machine("davinci"))
    executed, model = report["roofline"], report["useful_roofline"]
    assert model["compute_cycles"] == pytest.approx(100 * 48 * 64 / 4096)
    assert model["compute_cycles"] < executed["compute_cycles"]  # M padded from 100 to 112
    assert model["global_memory_cycles"] <= executed["global_memory_cycles"]
    assert model["achieved"] == pytest.approx(model["bound_cycles"] / result.stats.total_cycles)
    text = format_report(report)
    assert "\nuseful " in text and "unpadded MACs" in text


def test_several_cores_get_a_chip_useful_bound():
    module = compiled(cores=4)
    a = np.random.default_rng(1).normal(size=(100, 64)).astype(np.float16)
    stats = run_npu(module, "davinci", [a]).stats
    report = build_report(stats, load_machine("davinci"))
    chip = report["chip_useful_roofline"]
    assert chip["compute_cycles"] == pytest.approx(100 * 48 * 64 / 4096 / 32)
    assert "chip useful" in format_report(report)


def test_a_program_without_the_count_has_no_useful_bound():
    module = compiled()
    module.attributes.pop("ziggurat.useful_macs")
    a = np.zeros((100, 64), np.float16)
    stats = run_npu(module, "davinci", [a]).stats
    assert stats.useful is None
    report = build_report(stats, load_machine("davinci"))
    assert "useful_roofline" not in report and "\nuseful " not in format_report(report)


def test_an_output_type_the_unit_lacks_takes_the_rate_of_its_input_type():
    davinci = load_machine("davinci")
    assert useful_peak(davinci, ("f16", "f16")) == davinci.peak_macs_per_cycle("f16", "f32")
    with pytest.raises(ValueError, match="no matrix instruction for f64 inputs"):
        useful_peak(davinci, ("f64", "f64"))
