"""benchmarks/compile_speed.py on a tiny model (`make bench` runs it on the light ResNet-50)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchmark_scripts import load_benchmark, two_layers

compile_speed = load_benchmark("compile_speed")
LOOSE = [
    "--warm-target",
    "600",
    "--simulate-target",
    "600",
    "--chip-target",
    "100",
    "--repeat",
    "1",
]
"""Targets no run on a loaded test machine misses: these tests check what is measured, not how fast."""
NO_CORPUS = ["--corpus", "/nonexistent/corpus"]
"""The per-GMAC target's models are looked for in benchmarks/results/corpus by default: where a
developer generated it, a test would compile them at full size."""
STAGES = [
    "compile",
    "compile, kernels",
    "compile, kernels, warm cache",
    "compile, kernels, one core",
    "simulate",
    "simulate kernels",
    "simulate kernels, one core",
]


def loose_run(tmp_path: Path, *more: str) -> int:
    """The script on the two-layer model, without peers, at `LOOSE` targets, with `more`."""
    model = str(two_layers(tmp_path))
    return compile_speed.main(
        [*LOOSE, "--model", model, "--results", str(tmp_path), "--no-peers", *more]
    )


def test_every_stage_is_timed_and_both_programs_simulated(tmp_path: Path, capsys):
    code = loose_run(tmp_path, *NO_CORPUS)
    results = json.loads((tmp_path / "compile_speed.json").read_text())
    assert code == 0
    assert [s["name"] for s in results["stages"]] == STAGES
    assert all(s["cpu_seconds"] > 0 and s["wall_seconds"] > 0 for s in results["stages"])
    assert set(results["simulated_cycles"]) == {"whole", "kernels", "kernels, one core"}
    assert all(cycles > 0 for cycles in results["simulated_cycles"].values())
    # without IREE there is nothing to compare the compile with: pending, not missed
    verdicts = {t["what"]: t["met"] for t in results["targets"]}
    assert verdicts["compile, kernels <= IREE's compile (wall s)"] is None
    # the whole chip against one core: both measured here, so decided
    assert verdicts["simulate kernels <= 100 x simulate kernels, one core (wall s)"] is True
    # without the corpus's ResNet-18 and RegNet: pending, and the output says how to get them
    per_gmac = next(t for t in results["targets"] if "per GMAC" in t["what"])
    assert per_gmac["met"] is None and per_gmac["measured"] is None
    printed = capsys.readouterr().out
    assert "| compile, kernels, warm cache |" in printed and "pending" in printed
    assert "make conformance" in printed


def test_the_per_gmac_target_compares_regnet_with_resnet18(tmp_path: Path):
    """On the small corpus committed for the tests (the same architectures, narrowed): both models
    compiled and simulated, each one's seconds per GMAC recorded, the target decided."""
    corpus = Path(__file__).parent / "data" / "corpus"
    code = loose_run(tmp_path, "--corpus", str(corpus), "--per-gmac-target", "1000")
    results = json.loads((tmp_path / "compile_speed.json").read_text())
    assert code == 0
    names = [s["name"] for s in results["stages"]]
    assert names[len(STAGES) :] == [
        "compile + simulate resnet18",
        "compile + simulate regnet_y_400mf",
    ]
    assert set(results["seconds_per_gmac"]) == {"resnet18", "regnet_y_400mf"}
    assert all(0 < gmac < 1 for gmac in results["gmacs"].values())  # narrowed, 32x32 images
    per_gmac = next(t for t in results["targets"] if "per GMAC" in t["what"])
    assert per_gmac["met"] is True
    assert per_gmac["measured"] == results["seconds_per_gmac"]["regnet_y_400mf"]


def test_a_stage_over_its_target_fails_the_script(tmp_path: Path, capsys):
    code = compile_speed.main(
        [
            "--model",
            str(two_layers(tmp_path)),
            "--results",
            str(tmp_path),
            "--no-peers",
            "--repeat",
            "1",
            "--simulate-target",
            "0",
            *NO_CORPUS,
        ]
    )
    assert code == 1
    assert "FAIL: simulate kernels <= 0 s (wall)" in capsys.readouterr().err


def test_a_missing_peer_is_skipped_with_how_to_install_it(tmp_path: Path, capsys):
    bare = tmp_path / "bare-python"
    bare.write_text('#!/bin/sh\nexec python3 -S "$@"\n')
    bare.chmod(0o755)
    model = two_layers(tmp_path)
    code = compile_speed.main(
        [
            *LOOSE,
            *NO_CORPUS,
            "--model",
            str(model),
            "--results",
            str(tmp_path),
            "--peer-python",
            str(bare),
        ]
    )
    assert code == 0
    assert "IREE: skipped, not installed (pip install 'iree-base-compiler[onnx]')" in (
        capsys.readouterr().out
    )


def test_a_model_that_does_not_compile_says_which_stage(tmp_path: Path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(SystemExit, match="compile failed"):
        compile_speed.main(["--model", str(bad), "--results", str(tmp_path), "--no-peers"])
