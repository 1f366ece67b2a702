"""benchmarks/compile_speed.py on a tiny model (`make bench` runs it on the light ResNet-50)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchmark_scripts import load_benchmark, two_layers

compile_speed = load_benchmark("compile_speed")


def test_both_stages_are_timed_and_the_run_simulated(tmp_path: Path, capsys):
    code = compile_speed.main(["--model", str(two_layers(tmp_path)), "--results", str(tmp_path)])
    results = json.loads((tmp_path / "compile_speed.json").read_text())
    assert code == 0
    assert [s["name"] for s in results["stages"]] == ["compile to npu", "simulate"]
    assert all(
        s["cpu_seconds"] > 0 and s["wall_seconds"] > 0 and s["met"] for s in results["stages"]
    )
    assert results["simulated_cycles"] > 0
    assert "| compile to npu |" in capsys.readouterr().out


def test_a_stage_over_the_target_fails_the_script(tmp_path: Path, capsys):
    code = compile_speed.main(
        ["--model", str(two_layers(tmp_path)), "--results", str(tmp_path), "--target", "0"]
    )
    assert code == 1
    assert "FAIL: compile to npu" in capsys.readouterr().err


def test_a_model_that_does_not_compile_says_which_stage(tmp_path: Path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(SystemExit, match="compile to npu failed"):
        compile_speed.main(["--model", str(bad), "--results", str(tmp_path)])
