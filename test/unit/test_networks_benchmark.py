"""benchmarks/networks.py on a tiny model (`make bench` runs it on ResNet-50 and the transformer encoder layer)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from benchmark_scripts import BENCHMARKS, load_benchmark, two_layers

pytest.importorskip("matplotlib", reason="the per-layer chart needs matplotlib (the bench extra)")
sys.path.insert(
    0, str(BENCHMARKS)
)  # networks.py imports compile_speed's and conformance's helpers, as when run
networks = load_benchmark("networks")
peers = load_benchmark("peers")

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def run(folder: Path, *options: str) -> tuple[int, dict]:
    code = networks.main(["--results", str(folder), *options])
    return code, json.loads((folder / "networks.json").read_text())


def test_a_network_is_compiled_simulated_checked_and_charted(tmp_path: Path, capsys):
    code, results = run(tmp_path, "--models", str(two_layers(tmp_path)), "--no-peers")
    [network] = results["networks"]
    assert code == 0 and network["passed"] and network["failure"] is None
    assert network["cycles"] > 0 and 0 < network["roofline_achieved"] <= 1
    clock = networks.load_machine("davinci").clock_hz
    assert network["simulated_seconds"] == pytest.approx(network["cycles"] / clock)
    assert all(
        network[stage]["wall_seconds"] > 0 and network[stage]["cpu_seconds"] > 0
        for stage in ("compile", "simulate")
    )
    assert [c["against"] for c in network["checks"]] == ["onnxruntime"] and network["checks"][0][
        "passed"
    ]
    assert {("fc", "MatMul"), ("act", "Relu")} <= {
        (layer["layer"], layer["op_type"]) for layer in network["layers"]
    }
    assert Path(network["chart"]) == tmp_path / "layers_two_layers.png"
    assert Path(network["chart"]).read_bytes().startswith(PNG_SIGNATURE)
    assert "two_layers" in capsys.readouterr().out


def test_a_network_that_does_not_import_fails_the_run_with_its_stage(tmp_path: Path, capsys):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    code, results = run(tmp_path, "--models", str(bad), "--no-peers")
    [network] = results["networks"]
    assert code == 1 and not network["passed"] and network["failure"].startswith("import: ")
    assert network["chart"] is None and not (tmp_path / "layers_bad.png").exists()
    assert "bad: FAILED at import" in capsys.readouterr().out


def test_a_peer_that_is_not_installed_is_skipped_with_how_to_install_it(tmp_path: Path):
    # Python without site-packages: neither tvm nor iree imports there
    python = tmp_path / "bare-python"
    python.write_text(f'#!/bin/sh\nexec {sys.executable} -S "$@"\n')
    python.chmod(0o755)
    peer = peers.measure_peer("TVM", two_layers(tmp_path), str(python), timeout=60)
    assert peer.skipped == "not installed (pip install apache-tvm)" and peer.wall_seconds is None


def test_a_peer_that_fails_is_skipped_with_its_last_error_line(tmp_path: Path):
    peer = peers.measure_peer("TVM", tmp_path / "missing.onnx", "/bin/false", timeout=60)
    assert peer.skipped == "failed: exit status 1"


def test_an_unknown_network_is_a_diagnostic(tmp_path: Path):
    with pytest.raises(networks.DiagnosticError, match="no network 'vgg'"):
        networks.select_networks("vgg", tmp_path)


def test_a_chart_label_adds_the_op_type_where_the_name_does_not_say_it():
    assert (
        networks.layer_label({"layer": "n1", "op_type": "BatchNormalization"})
        == "n1 BatchNormalization"
    )
    assert networks.layer_label({"layer": "Relu r2", "op_type": "Relu"}) == "Relu r2"
    assert networks.layer_label({"layer": "model.mlir:12", "op_type": None}) == "model.mlir:12"


def test_a_tuned_network_reports_its_speedup_and_misses_the_target_below_it(tmp_path: Path, capsys):
    model = two_layers(tmp_path)
    code, results = run(
        tmp_path,
        "--models",
        str(model),
        "--no-peers",
        "--tune",
        "two_layers",
        "--tune-budget",
        "60",
        "--tune-top-k",
        "2",
        "--tune-jobs",
        "1",
    )
    [network] = results["networks"]
    tuning = network["tuning"]
    assert network["passed"] and tuning["cycles"] > 0 and tuning["complete"]
    assert tuning["speedup"] == pytest.approx(network["cycles"] / tuning["cycles"])
    assert [c["against"] for c in tuning["checks"]] == ["onnxruntime", "default"] and all(
        c["passed"] for c in tuning["checks"]
    )
    assert tuning["search"]["wall_seconds"] > 0 and tuning["top_k"] == 2
    # a 16x32x32 matmul: tuning cannot make it 1.3x faster, so the run says so and exits 1
    assert tuning["speedup"] < networks.TUNE_TARGET and code == 1
    assert "target 1.3x missed" in capsys.readouterr().out
