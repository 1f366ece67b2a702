"""benchmarks/kernels.py on tiny kernels (`make bench` runs the full sizes on three presets)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from benchmark_scripts import load_benchmark
from rich.console import Console

kernels = load_benchmark("kernels")


def test_a_small_run_writes_sane_results_and_a_plot(tmp_path: Path, capsys):
    assert (
        kernels.main(
            ["--small", "--machines", "davinci", "--jobs", "1", "--results", str(tmp_path)]
        )
        == 0
    )
    results = json.loads((tmp_path / "kernels.json").read_text())
    rows = results["rows"]
    assert {r["kernel"] for r in rows} == {
        "gemm",
        "conv 3x3",
        "depthwise 3x3",
        "attention",
        "layer_norm",
        "softmax",
    }
    default, tuned = (
        next(r for r in rows if r["kernel"] == "gemm" and r["schedule"] == s)
        for s in ("default", "tuned")
    )
    assert (
        tuned["cycles"] <= default["cycles"]
    )  # the tuner measures the heuristic too and keeps the faster
    assert len(rows) == 7 and (tmp_path / "tune-cache.json").exists()
    for row in rows:
        assert row["error"] is None, row
        assert (
            row["machine"] == "davinci"
            and row["cycles"] > 0
            and row["wall_seconds"] > 0
            and row["cpu_seconds"] > 0
        )
        assert 0 < row["of_bound"] <= 1, row
        assert row["of_bound"] == pytest.approx(row["bound_cycles"] / row["cycles"])
        # the useful bound never exceeds what ran: no padding, each argument moved once (none
        # for a kernel without a matrix-unit contraction: a depthwise conv, a layer norm)
        useful = row["of_useful_bound"]
        assert useful is None or 0 < useful <= row["of_bound"] + 1e-9, row
        assert row["global_bytes_read"] > 0 and row["intensity"] > 0
    gemm = default
    assert gemm["bound_by"] == "compute" and gemm["bound_cycles"] == pytest.approx(64**3 / 4096)
    assert gemm["of_peak"] == pytest.approx(64**3 / 4096 / gemm["cycles"])
    assert gemm["of_useful_bound"] == pytest.approx(gemm["of_peak"])  # compute-bound, 64 fits 16
    assert results["machines"]["davinci"]["peak_flops_per_cycle"] == 2 * 4096
    assert results["machines"]["davinci"]["core_read_bytes_per_cycle"] == 128  # MTE2
    assert "| gemm | davinci | 64x64x64 |" in (tmp_path / "kernels.md").read_text()
    assert (tmp_path / "roofline_davinci.png").read_bytes().startswith(b"\x89PNG")
    out = capsys.readouterr().out
    assert "% of bound" in out and "7 of 7 runs" in out


def test_runs_in_processes_come_back_in_kernel_then_machine_order(tmp_path: Path):
    argv = [
        "--small",
        "--kernels",
        "gemm,softmax",
        "--machines",
        "davinci,tensorcore",
        "--jobs",
        "2",
    ]
    assert kernels.main([*argv, "--results", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "kernels.json").read_text())["rows"]
    assert [(r["kernel"], r["machine"], r["schedule"]) for r in rows] == [
        ("gemm", "davinci", "default"),
        ("gemm", "davinci", "tuned"),
        ("gemm", "tensorcore", "default"),
        ("softmax", "davinci", "default"),
        ("softmax", "tensorcore", "default"),
    ]
    assert all(r["error"] is None for r in rows)


def test_a_simulation_past_its_timeout_is_stopped_and_recorded():
    row = kernels.measure(kernels.softmax(128, 256), "davinci", timeout=0)  # over WATCH_EVERY ops
    assert row.cycles is None and row.error.startswith(
        "simulation stopped after 0 s of CPU at cycle"
    )


def test_a_kernel_that_does_not_lower_is_a_row_with_the_diagnostic():
    bad = kernels.Kernel(
        "bad",
        "1",
        "func.func @main(%x: tensor<4xf16>) -> tensor<4xf16> {\n  %y = graph.relu %x : tensor<5xf16>\n}",
        0,
    )
    row = kernels.measure(bad, "davinci")
    assert row.cycles is None and row.error.startswith("bad.mlir:")
    assert "\n" not in row.error


def test_wrong_outputs_are_a_failure(monkeypatch):
    reference = kernels.run_function
    monkeypatch.setattr(
        kernels, "run_function", lambda module, inputs: [x + 1 for x in reference(module, inputs)]
    )
    row = kernels.measure(kernels.gemm(16, 16, 16), "davinci")
    assert row.error.startswith("outputs differ from the graph interpreter") and row.cycles > 0


def test_the_targets_are_read_from_the_gemm_1024_row_and_the_resnet50_convs_on_davinci():
    gemm = kernels.Row("gemm", "1024x1024x1024", "davinci", "f16", cycles=291_663.0, of_peak=0.899)
    tuned = kernels.Row(
        "gemm",
        "1024x1024x1024",
        "davinci",
        "f16",
        schedule="tuned",
        cycles=284_559.0,
        of_peak=0.921,
    )
    convs = [
        kernels.Row("resnet50 s1 3x3", "a", "davinci", "f16", cycles=1.0, of_bound=0.6),
        kernels.Row(
            "resnet50 s1 1x1 reduce", "b", "davinci", "f16", error="does not lower"
        ),  # counts as 0%
        kernels.Row(
            "resnet50 s1 3x3", "a", "davinci", "f16", schedule="tuned", cycles=1.0, of_bound=0.8
        ),
        kernels.Row(
            "resnet50 s1 1x1 reduce",
            "b",
            "davinci",
            "f16",
            schedule="tuned",
            cycles=1.0,
            of_bound=0.9,
        ),
        kernels.Row(
            "resnet50 s1 3x3", "a", "systolic", "f16", cycles=1.0, of_bound=0.1
        ),  # another machine
    ]
    gemm_target, conv_target = kernels.targets(
        [gemm, *(r for r in convs if r.schedule == "default")]
    )
    assert gemm_target == {
        "target": "gemm 1024x1024x1024 f16 on davinci, % of the matrix unit's peak",
        "goal": 0.9,
        "default": 0.899,
        "met": False,
    }
    assert conv_target["default"] == pytest.approx(0.3) and not conv_target["met"]
    gemm_target, conv_target = kernels.targets([gemm, tuned, *convs])
    assert gemm_target["tuned"] == 0.921 and gemm_target["met"]
    assert conv_target["tuned"] == pytest.approx(0.85) and conv_target["met"]
    assert conv_target["useful"]["tuned"] == 0.0  # these rows carry no useful bound
    convs[2].of_useful_bound, convs[3].of_useful_bound = 0.7, 0.5
    (_, conv_target) = kernels.targets([gemm, tuned, *convs])
    assert conv_target["useful"]["tuned"] == pytest.approx(0.6)
    assert kernels.target_line(conv_target).endswith(
        "; against their useful bound: default 0.0%, tuned 60.0%"
    )
    assert "(2) on davinci" in conv_target["target"]
    assert kernels.targets([kernels.Row("gemm", "256x256x256", "davinci", "f16")]) == []


def test_a_run_faster_than_its_bound_is_flagged():
    row = kernels.Row(
        "gemm", "1", "davinci", "f16", cycles=90.0, bound_cycles=100.0, of_bound=100 / 90
    )
    assert row.over_bound
    console = Console(file=io.StringIO(), width=250)
    console.print(kernels.results_table([row]))
    assert "111.1% > 100%: bug" in console.file.getvalue()
    assert "111.1% (over the bound)" in kernels.markdown_table([row])


def test_intensity_counts_the_busier_direction_at_the_read_bandwidth():
    machine = kernels.load_machine("davinci")
    read, write = kernels.global_bandwidth(machine)
    assert kernels.intensity(1000, 100, 10, machine) == 10
    assert kernels.intensity(1000, 10, 100, machine) == pytest.approx(1000 / (100 * read / write))


def test_kernels_are_selected_by_name_prefix():
    names = {k.name for k in kernels.select(kernels.full_kernels(), "resnet50 s1,softmax")}
    assert names == {
        "resnet50 s1 3x3",
        "resnet50 s1 1x1 reduce",
        "resnet50 s1 1x1 expand",
        "softmax",
    }


def test_the_script_fails_on_a_missed_target_a_run_over_its_bound_or_wrong_outputs(capsys):
    fine = kernels.Row("gemm", "1", "davinci", "f16", cycles=100.0, of_bound=0.5)
    assert not kernels.bugs_or_missed(
        [fine, kernels.Row("gemm", "2", "davinci", "f16", error="does not lower")], []
    )
    over = kernels.Row("gemm", "3", "davinci", "f16", cycles=90.0, of_bound=1.1)
    wrong = kernels.Row(
        "gemm", "4", "davinci", "f16", cycles=90.0, of_bound=0.5, error="outputs differ"
    )
    missed = {
        "target": "gemm 1024x1024x1024 f16 on davinci",
        "goal": 0.9,
        "default": 0.899,
        "met": False,
    }
    assert len(kernels.bugs_or_missed([fine, over, wrong], [missed])) == 3
    assert (
        "FAIL: missed: gemm 1024x1024x1024 f16 on davinci: default 89.9% (goal >= 90%): MISSED"
        in capsys.readouterr().err
    )
