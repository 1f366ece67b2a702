"""benchmarks/conformance.py on a tiny model (`make conformance` runs it on the onnx package's light models).

The model is a MatMul and a Relu written in the light models' layout:
`light_tiny.onnx` with the output for onnx's dummy input beside it as
`light_tiny_output_0.pb`, so the script takes the same path as for ResNet-50.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import numpy as np
import onnx
import pytest
from benchmark_scripts import load_benchmark
from onnx import TensorProto, helper, numpy_helper

from ziggurat.diagnostics import DiagnosticError
from ziggurat.frontends.onnx.reference_data import dummy_inputs

conformance = load_benchmark("conformance")


def tiny_model() -> onnx.ModelProto:
    weights = np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Relu", ["m"], ["y"])],
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16])],
        [numpy_helper.from_array(weights, "w")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def write_light_model(folder: Path, scale: float = 1.0) -> Path:
    """light_tiny.onnx and its expected output (times `scale`: 1 is the right answer)."""
    model = tiny_model()
    path = folder / "light_tiny.onnx"
    onnx.save(model, path)
    x = dummy_inputs(model)["x"]
    weights = numpy_helper.to_array(model.graph.initializer[0])
    expected = (np.maximum(x @ weights, 0) * scale).astype(np.float32)
    onnx.save_tensor(numpy_helper.from_array(expected), folder / "light_tiny_output_0.pb")
    return path


def run(folder: Path, *options: str) -> tuple[int, dict]:
    output = folder / "results.json"
    code = conformance.main(["--data", str(folder), "--output", str(output), *options])
    return code, json.loads(output.read_text())


def test_a_model_that_compiles_and_matches_passes_with_its_cycles(tmp_path: Path, capsys):
    write_light_model(tmp_path)
    code, results = run(tmp_path)
    assert code == 0
    (row,) = results["models"]
    assert row["model"] == "light_tiny" and row["graph_passed"] and row["npu_passed"]
    # davinci's matrix unit has no f32; the tiny model's values fit f16 (`--precision auto`)
    assert row["expected_from"] == "shipped" and row["computed_in"] == "f16"
    assert row["cycles"] > 0 and row["compile_seconds"] > 0 and row["simulate_seconds"] > 0
    assert 0 < row["max_abs"] < 0.01 and row["failure"] is None  # f16 keeps 11 bits of mantissa
    assert results["machine"] == "davinci" and results["host"]["cpus"] >= 1
    out = capsys.readouterr().out
    assert "│ tiny " in out and "1 of 1 pass end to end on davinci" in out


def test_a_wrong_expected_output_fails_both_levels_and_says_why(tmp_path: Path, capsys):
    write_light_model(tmp_path, scale=2.0)
    code, results = run(tmp_path)
    assert code == 1
    (row,) = results["models"]
    assert row["graph_passed"] is False and row["npu_passed"] is False
    assert row["max_abs"] > 1  # the npu level still ran and measured its error
    assert (
        row["failure"].startswith("graph: output '#0': float32[4, 16]") and "FAIL" in row["failure"]
    )
    assert "tiny: graph: output '#0'" in capsys.readouterr().out


def test_a_model_without_shipped_outputs_is_compared_with_onnxruntime(tmp_path: Path):
    path = tmp_path / "tiny.onnx"
    onnx.save(tiny_model(), path)
    code, results = run(tmp_path, "--models", str(path))
    assert code == 0 and results["models"][0]["expected_from"] == "onnxruntime"


def test_a_model_past_its_time_is_stopped_and_keeps_its_row(tmp_path: Path):
    write_light_model(tmp_path)
    code, results = run(tmp_path, "--timeout", "0.01")
    assert code == 1
    (row,) = results["models"]
    assert row["failure"] == "timeout: stopped after 0.01 s" and row["npu_passed"] is None


def test_a_compile_error_is_the_first_line_of_its_diagnostic(tmp_path: Path):
    path = tmp_path / "bad.onnx"
    model = tiny_model()
    model.graph.node[1].op_type = "NoSuchOp"
    onnx.save(model, path)
    code, results = run(tmp_path, "--models", str(path))
    row = results["models"][0]
    assert code == 1 and row["graph_passed"] is False and row["npu_passed"] is False
    assert (
        row["failure"].startswith("import: ")
        and "NoSuchOp" in row["failure"]
        and "\n" not in row["failure"]
    )


def test_an_unknown_model_name_is_an_error_naming_the_close_one(tmp_path: Path):
    write_light_model(tmp_path)
    with pytest.raises(DiagnosticError, match="no model 'tinny'.*tiny"):
        conformance.select_models("tinny", tmp_path)
    assert (
        conformance.select_models("tiny,light_tiny", tmp_path) == [tmp_path / "light_tiny.onnx"] * 2
    )


def test_a_worker_that_dies_is_a_crash_with_its_signal(tmp_path: Path, monkeypatch):
    write_light_model(tmp_path)
    monkeypatch.setattr(conformance, "evaluate", lambda *_: os.kill(os.getpid(), signal.SIGKILL))
    code, results = run(tmp_path)
    assert (
        code == 1 and results["models"][0]["failure"] == "crash: the worker ended by signal SIGKILL"
    )


def test_a_long_reason_is_cut_in_the_table_and_whole_in_the_json(tmp_path: Path, capsys):
    path = tmp_path / "bad.onnx"
    model = tiny_model()
    model.graph.node[1].op_type = "NoSuchOp" + "x" * 400
    onnx.save(model, path)
    _, results = run(tmp_path, "--models", str(path))
    assert len(results["models"][0]["failure"]) > 400
    (line,) = [
        line for line in capsys.readouterr().out.splitlines() if line.startswith("bad: import:")
    ]
    assert len(line) == len("bad: ") + conformance.REASON_CHARACTERS and line.endswith(" ...")


def test_precision_model_keeps_f32_which_davinci_cannot_multiply(tmp_path: Path):
    write_light_model(tmp_path)
    code, results = run(tmp_path, "--precision", "model")
    row = results["models"][0]
    assert code == 1 and results["precision"] == "model"
    assert (
        row["graph_passed"]
        and row["computed_in"] is None
        and row["failure"].startswith("compile: ")
    )


def test_random_weights_compare_with_onnxruntime_not_the_shipped_outputs(tmp_path: Path, capsys):
    write_light_model(tmp_path, scale=2.0)  # shipped outputs that would fail
    code, results = run(tmp_path, "--random-weights")
    row = results["models"][0]
    assert (
        code == 0
        and results["random_weights"]
        and row["expected_from"] == "onnxruntime"
        and row["npu_passed"]
    )
    assert "--random-weights, --jobs 1" in capsys.readouterr().out


def write_corpus_model(folder: Path, scale: float = 1.0) -> None:
    """tiny.onnx in the corpus's layout: a seeded input and the output (times `scale`) in .npz files."""
    model = tiny_model()
    onnx.save(model, folder / "tiny.onnx")
    x = np.random.default_rng(1).standard_normal((4, 8)).astype(np.float32)
    weights = numpy_helper.to_array(model.graph.initializer[0])
    np.savez(folder / "tiny.inputs.npz", x=x)
    np.savez(folder / "tiny.outputs.npz", y=(np.maximum(x @ weights, 0) * scale).astype(np.float32))


def test_corpus_runs_each_model_on_each_machine_against_its_stored_outputs(tmp_path: Path):
    write_corpus_model(tmp_path)
    table = tmp_path / "corpus.md"
    code = conformance.main(
        ["--corpus", str(tmp_path), "--machine", "davinci,tensorcore", "--table", str(table)]
    )
    assert code == 0
    rows = json.loads(table.with_suffix(".json").read_text())["models"]
    assert [(r["machine"], r["model"]) for r in rows] == [
        ("davinci", "tiny"),
        ("tensorcore", "tiny"),
    ]
    for row in rows:
        assert row["npu_passed"] and row["expected_from"] == "onnxruntime" and row["cycles"] > 0
        # In f16 at the graph level already; the npu code may round elsewhere, not much worse.
        assert (
            0 < row["graph_precision_max_abs"] < 0.05
            and row["max_abs"] < 0.05
            and row["max_ref"] > 1
        )
    lines = table.read_text().splitlines()
    assert lines[0].startswith("| model | machine |") and len(lines) == 4
    assert (
        lines[2].startswith("| tiny | davinci | ")
        and "| f16 |" in lines[2]
        and "| pass |" in lines[2]
    )


def test_corpus_with_a_wrong_stored_output_fails(tmp_path: Path):
    write_corpus_model(tmp_path, scale=2.0)
    table = tmp_path / "corpus.md"
    assert conformance.main(["--corpus", str(tmp_path), "--table", str(table)]) == 1
    (row,) = json.loads(table.with_suffix(".json").read_text())["models"]
    assert row["graph_passed"] is False and row["npu_passed"] is False and row["max_abs"] > 1
    assert "| FAIL (beyond the tolerance) |" in table.read_text()


def test_an_empty_corpus_without_torch_says_how_to_generate_it(tmp_path: Path):
    with pytest.raises(
        DiagnosticError, match=r"no models in .* cannot import torch .*pip install torch==2\.13\.0"
    ):
        conformance.main(["--corpus", str(tmp_path), "--torch-python", "false"])


def write_quantized_corpus_model(folder: Path, stored_first: float) -> None:
    """qdq.onnx: x -> QuantizeLinear (scale 0.5, uint8) -> DequantizeLinear, with the input 1.25 first,
    half-way between two steps (the definition rounds it to 1.0, half to even); the stored output
    says `stored_first` there, as an implementation rounding its sum the other way would."""
    parameters = [
        numpy_helper.from_array(np.array(0.5, np.float32), "s"),
        numpy_helper.from_array(np.array(0, np.uint8), "z"),
    ]
    graph = helper.make_graph(
        [
            helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
            helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"]),
        ],
        "qdq",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        parameters,
    )
    onnx.save(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), folder / "qdq.onnx"
    )
    np.savez(folder / "qdq.inputs.npz", x=np.array([[1.25, 3.0, 0.7, 9.0]], np.float32))
    np.savez(folder / "qdq.outputs.npz", y=np.array([[stored_first, 3.0, 0.5, 9.0]], np.float32))


def test_a_quantized_model_passes_where_it_differs_from_onnxruntime_only_at_ties(tmp_path: Path):
    """The stored 1.5 differs from the npu's 1.0 by a step, beyond the f32 tolerance, so the integers
    are checked against the definition layer by layer (ziggurat.testing.rounding_ties): the npu's
    are the definition's, and the row passes, with the check's account in the table's notes."""
    write_quantized_corpus_model(tmp_path, 1.5)
    table = tmp_path / "corpus.md"
    assert conformance.main(["--corpus", str(tmp_path), "--table", str(table)]) == 0
    (row,) = json.loads(table.with_suffix(".json").read_text())["models"]
    assert row["npu_passed"] is True and row["failure"] is None
    assert row["rounding"] == (
        "npu: 0 of 4 quantized values differ from the definition, in 0 of 1 QuantizeLinear nodes; "
        "0 at rounding ties"
    )
    text = table.read_text()
    assert "| pass (ties) |" in text and "- qdq on davinci: npu: 0 of 4" in text
