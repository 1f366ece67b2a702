"""DFT, STFT, the windows and MelWeightMatrix against numpy's FFT in f64 and the onnx reference.

The transforms are f32 matmuls with DFT matrices rounded once from f64: over the
n <= 16 terms here each output is off by a few f32 ulps of the input's scale
(~1e-6 for O(1) inputs), so 1e-5 absolute and relative leaves room for that and
none for a wrong sign, bin or normalization (errors of O(1)).
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from ziggurat.frontends.onnx import import_model
from ziggurat.interpreters.graph_interpreter import run_function

RNG = np.random.default_rng(5)


def model_of(
    node, inputs: dict[str, np.ndarray], output_rank: int, initializers=(), opset: int = 20
):
    graph = helper.make_graph(
        [node],
        node.op_type,
        [
            helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
            for n, a in inputs.items()
        ],
        [
            helper.make_tensor_value_info(
                "y", TensorProto.FLOAT, [f"d{i}" for i in range(output_rank)]
            )
        ],
        list(initializers),
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def ours(model, inputs):
    (result,) = run_function(import_model(model), list(inputs.values()))
    return result


@pytest.mark.parametrize("length", [7, 8])
@pytest.mark.parametrize("mode", ["fft", "complex", "ifft", "rfft", "irfft"])
def test_dft_matches_numpy(length, mode):
    complex_input = mode in ("complex", "ifft", "irfft")
    bins = length // 2 + 1
    signal_length = bins if mode == "irfft" else length
    x = RNG.normal(size=(2, signal_length, 3, 2 if complex_input else 1)).astype(np.float32)
    z = x[..., 0].astype(np.float64) + (1j * x[..., 1] if complex_input else 0)
    expected = {
        "fft": lambda: np.fft.fft(z, axis=1),
        "complex": lambda: np.fft.fft(z, axis=1),
        "ifft": lambda: np.fft.ifft(z, axis=1),
        "rfft": lambda: np.fft.rfft(z, axis=1),
        "irfft": lambda: np.fft.irfft(z, n=length, axis=1),
    }[mode]()
    expected = (
        np.stack([expected.real, expected.imag], -1)
        if mode != "irfft"
        else expected.real[..., None]
    )
    attributes = {
        "inverse": int(mode in ("ifft", "irfft")),
        "onesided": int(mode in ("rfft", "irfft")),
    }
    length_input = numpy_helper.from_array(np.array(length, np.int64), "n")
    axis = numpy_helper.from_array(np.array(1, np.int64), "axis")
    node = helper.make_node("DFT", ["x", "n", "axis"], ["y"], **attributes)
    result = ours(model_of(node, {"x": x}, 4, [length_input, axis]), {"x": x})
    np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("with_window", [False, True])
def test_stft_matches_the_onnx_reference(with_window):
    signal = RNG.normal(size=(2, 40, 1)).astype(np.float32)
    initializers = [numpy_helper.from_array(np.array(6, np.int64), "step")]
    names = ["x", "step"]
    if with_window:
        initializers.append(numpy_helper.from_array(np.hanning(10).astype(np.float32), "window"))
        names.append("window")
    else:
        initializers.append(numpy_helper.from_array(np.array(10, np.int64), "length"))
        names += ["", "length"]
    model = model_of(
        helper.make_node("STFT", names, ["y"]), {"x": signal}, 4, initializers, opset=17
    )
    (expected,) = ReferenceEvaluator(model).run(None, {"x": signal})
    np.testing.assert_allclose(ours(model, {"x": signal}), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op_type", ["HannWindow", "HammingWindow", "BlackmanWindow"])
@pytest.mark.parametrize("periodic", [0, 1])
def test_windows_match_the_onnx_reference(op_type, periodic):
    size = numpy_helper.from_array(np.array(11, np.int64), "size")
    model = model_of(
        helper.make_node(op_type, ["size"], ["y"], periodic=periodic), {}, 1, [size], opset=17
    )
    (expected,) = ReferenceEvaluator(model).run(None, {})
    np.testing.assert_allclose(ours(model, {}), expected, rtol=1e-6, atol=1e-7)


def test_mel_weight_matrix_matches_the_onnx_reference():
    values = {
        "bins": (8, np.int64),
        "dft": (64, np.int64),
        "rate": (16000, np.int64),
        "low": (60.0, np.float32),
        "high": (6000.0, np.float32),
    }
    initializers = [numpy_helper.from_array(np.array(v, t), n) for n, (v, t) in values.items()]
    model = model_of(
        helper.make_node("MelWeightMatrix", list(values), ["y"]), {}, 2, initializers, opset=17
    )
    (expected,) = ReferenceEvaluator(model).run(None, {})
    result = ours(model, {})
    assert result.shape == (33, 8) and result.max() == 1.0
    np.testing.assert_allclose(result, expected, rtol=1e-6, atol=1e-7)
