"""The rounding-tie check of quantized models (ziggurat/testing/rounding_ties.py): onnxruntime's
integers for the corpus's int8 ResNet-18 (onnxruntime.quantization's QDQ output, uint8 activations,
int8 per-channel weights) differ from the ONNX definition only at ties, and the check fails on
integers that are wrong by a step away from a tie, on a swapped channel and on a wrong scale."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from ziggurat.testing.rounding_ties import (
    check_rounding,
    quantize_outputs,
    quantized_values,
    with_quantized_outputs,
)
from ziggurat.tools.ziggurat_compile import run_onnxruntime

CORPUS = Path(__file__).parent / "data" / "corpus"


@pytest.fixture(scope="module")
def resnet18_int8():
    model = onnx.load(CORPUS / "resnet18_int8.onnx")
    inputs = dict(np.load(CORPUS / "resnet18_int8.inputs.npz"))
    probe = with_quantized_outputs(model)
    results = run_onnxruntime(probe, list(inputs), list(inputs.values()))
    quantized = quantized_values(model, results)
    return model, inputs, quantized, results[: len(model.graph.output)]


def test_dequantized_probe_outputs_give_the_integers_back(resnet18_int8):
    """The probe for an implementation with float outputs: DequantizeLinear of each QuantizeLinear
    output, turned back into the integers exactly."""
    model, inputs, quantized, _ = resnet18_int8
    probe = with_quantized_outputs(model, dequantized=True)
    results = run_onnxruntime(probe, list(inputs), list(inputs.values()))
    back = quantized_values(model, results, dequantized=True)
    assert back.keys() == quantized.keys()
    for name, values in quantized.items():
        assert back[name].dtype == values.dtype
        np.testing.assert_array_equal(back[name], values)


def test_onnxruntime_integers_are_the_definition(resnet18_int8):
    model, inputs, quantized, outputs = resnet18_int8
    report = check_rounding(model, inputs, quantized, outputs)
    assert report.ok, str(report)
    assert len(report.nodes) == len(quantize_outputs(model)) > 10
    assert str(report).startswith("0 of ")


def _changed(quantized, name, change):
    changed = dict(quantized)
    changed[name] = change(quantized[name].copy())
    return changed


def _middle_layer(model) -> str:
    names = quantize_outputs(model)
    return names[len(names) // 2]


def test_a_step_off_away_from_a_tie_fails(resnet18_int8):
    model, inputs, quantized, outputs = resnet18_int8
    name = _middle_layer(model)

    def one_step(values):
        flat = values.reshape(-1)
        # an element away from the integer limits, so a step is representable
        index = int(
            np.argmax((flat > np.iinfo(flat.dtype).min + 2) & (flat < np.iinfo(flat.dtype).max - 2))
        )
        flat[index] += 1
        return values

    report = check_rounding(model, inputs, _changed(quantized, name, one_step), outputs)
    assert not report.ok
    assert report.differing == 1 and report.ties == 0
    assert "not a tie:" in str(report)


def test_a_swapped_channel_fails(resnet18_int8):
    model, inputs, quantized, outputs = resnet18_int8
    name = _middle_layer(model)
    report = check_rounding(
        model,
        inputs,
        _changed(quantized, name, lambda v: v[:, [1, 0, *range(2, v.shape[1])]]),
        outputs,
    )
    assert not report.ok
    assert report.differing > report.ties


def test_outputs_not_from_the_integers_fail(resnet18_int8):
    model, inputs, quantized, outputs = resnet18_int8
    wrong = [output * np.float32(1.05) for output in outputs]
    report = check_rounding(model, inputs, quantized, wrong)
    assert not report.ok
    assert report.outputs_differ == [model.graph.output[0].name]


def test_a_tie_is_accepted_either_way():
    """x / scale = 2.5 exactly: the definition rounds to 2 (half to even); 3 is one step away at the
    tie, accepted; 4 is not."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])
    q = helper.make_tensor_value_info("q", TensorProto.UINT8, [1, 2])
    scale = helper.make_tensor("s", TensorProto.FLOAT, [], [0.5])
    zero = helper.make_tensor("z", TensorProto.UINT8, [], [0])
    graph = helper.make_graph(
        [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"])], "q", [x], [q], [scale, zero]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    inputs = {"x": np.array([[1.25, 3.0]], np.float32)}
    assert check_rounding(model, inputs, {"q": np.array([[2, 6]], np.uint8)}).differing == 0
    tie = check_rounding(model, inputs, {"q": np.array([[3, 6]], np.uint8)})
    assert tie.ok and tie.ties == 1
    assert not check_rounding(model, inputs, {"q": np.array([[4, 6]], np.uint8)}).ok
    assert not check_rounding(model, inputs, {"q": np.array([[2, 7]], np.uint8)}).ok


def test_ops_whose_error_is_not_bounded_are_refused():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])
    graph = helper.make_graph([helper.make_node("Sigmoid", ["x"], ["y"])], "s", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(ValueError, match="does not bound the f32 error of \\['Sigmoid'\\]"):
        check_rounding(model, {"x": np.zeros(4, np.float32)}, {})
