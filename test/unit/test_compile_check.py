"""`ziggurat-compile --check`'s reference (onnxruntime as the ONNX definition) and `--bind`."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from ziggurat.diagnostics import DiagnosticError
from ziggurat.tools import ziggurat_compile


def compile_main(argv: list[str]) -> int:
    return ziggurat_compile.compile_model(ziggurat_compile.build_argument_parser().parse_args(argv))


def qdq_conv_model() -> onnx.ModelProto:
    """A per-channel int8 QDQ conv with uint8 activations, as onnxruntime's quantize_static writes it."""
    rng = np.random.default_rng(7)
    channels, outputs = 8, 16
    weights = rng.normal(0, 0.5, (outputs, channels, 3, 3)).astype(np.float32)
    weight_scale = (np.abs(weights).reshape(outputs, -1).max(axis=1) / 127).astype(np.float32)
    quantized_weights = np.clip(
        np.round(weights / weight_scale[:, None, None, None]), -127, 127
    ).astype(np.int8)
    initializers = [
        numpy_helper.from_array(np.array(0.02, np.float32), "x_scale"),
        numpy_helper.from_array(np.array(128, np.uint8), "x_zero"),
        numpy_helper.from_array(quantized_weights, "w_q"),
        numpy_helper.from_array(weight_scale, "w_scale"),
        numpy_helper.from_array(np.zeros(outputs, np.int8), "w_zero"),
        numpy_helper.from_array(rng.normal(0, 0.1, outputs).astype(np.float32), "bias"),
        numpy_helper.from_array(np.array(0.05, np.float32), "y_scale"),
        numpy_helper.from_array(np.array(120, np.uint8), "y_zero"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zero"], ["x_q"]),
        helper.make_node("DequantizeLinear", ["x_q", "x_scale", "x_zero"], ["x_dq"]),
        helper.make_node("DequantizeLinear", ["w_q", "w_scale", "w_zero"], ["w_dq"], axis=0),
        helper.make_node("Conv", ["x_dq", "w_dq", "bias"], ["conv"], pads=[1, 1, 1, 1]),
        helper.make_node("QuantizeLinear", ["conv", "y_scale", "y_zero"], ["y_q"]),
        helper.make_node("DequantizeLinear", ["y_q", "y_scale", "y_zero"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "qdq_conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, 12, 12])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, outputs, 12, 12])],
        initializers,
    )
    # IR version 8 (opset 17's): onnxruntime may not read the newest the onnx package writes.
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_check_compares_with_the_onnx_definition_on_a_qdq_conv(tmp_path: Path, capsys):
    path = tmp_path / "qdq.onnx"
    onnx.save(qdq_conv_model(), path)
    inputs = {"x": np.random.default_rng(1).normal(0, 1.0, (1, 8, 12, 12)).astype(np.float32)}
    np.savez(tmp_path / "in.npz", **inputs)
    assert (
        compile_main(
            [
                str(path),
                "--check",
                "--inputs",
                str(tmp_path / "in.npz"),
                "--outputs",
                str(tmp_path / "out.npz"),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "against onnxruntime (graph optimizations off: the ONNX definition):" in printed
    assert "max abs error 0 " in printed
    # Without optimizations onnxruntime computes each node as ONNX defines it: bit for bit ziggurat's result.
    ours = np.load(tmp_path / "out.npz")["y"]
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = onnxruntime.InferenceSession(
        path.read_bytes(), options, providers=["CPUExecutionProvider"]
    )
    np.testing.assert_array_equal(ours, session.run(None, inputs)[0])


def integer_io_conv_model() -> onnx.ModelProto:
    """`qdq_conv_model` as a fully quantized model is deployed: the uint8 image in, the uint8
    activations out (no QuantizeLinear of a float input, no DequantizeLinear of the output)."""
    model = qdq_conv_model()
    graph = model.graph
    nodes = [n for n in graph.node if n.output[0] not in ("x_q", "y")]
    nodes[0].input[0] = "x"  # the first DequantizeLinear reads the uint8 input
    # The bias as quantize_static writes it: int32 at the scale x_scale * w_scale.
    constants = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    bias_scale = (constants["x_scale"] * constants["w_scale"]).astype(np.float32)
    bias = np.round(constants["bias"] / bias_scale).astype(np.int32)
    graph.initializer.extend(
        [numpy_helper.from_array(bias, "bias_q"), numpy_helper.from_array(bias_scale, "bias_scale")]
    )
    nodes.insert(
        0,
        helper.make_node("DequantizeLinear", ["bias_q", "bias_scale"], ["bias_dq"], axis=0),
    )
    next(n for n in nodes if n.op_type == "Conv").input[2] = "bias_dq"
    del graph.node[:]
    graph.node.extend(nodes)
    graph.input[0].type.tensor_type.elem_type = TensorProto.UINT8
    graph.output[0].name = "y_q"
    graph.output[0].type.tensor_type.elem_type = TensorProto.UINT8
    return model


@pytest.mark.parametrize(
    ("machine", "kernels"), [("davinci", []), ("tensorcore", []), ("davinci", ["--kernels"])]
)
def test_uint8_inputs_and_outputs_run_on_the_npu_bit_for_bit(
    tmp_path: Path, capsys, machine, kernels
):
    """Buffers hold signless integers; the uint8 arguments say how callers read them
    (`ziggurat.element_type`, which @main of `--kernels` takes from its kernels), and the
    vector unit's conversions zero-extend and saturate unsigned. Integers compare exactly:
    --check's bound is 0."""
    path = tmp_path / "qdq_u8.onnx"
    onnx.save(integer_io_conv_model(), path)
    image = np.random.default_rng(2).integers(0, 256, (1, 8, 12, 12), dtype=np.uint8)
    np.savez(tmp_path / "in.npz", x=image)
    argv = [str(path), "--machine", machine, "--check", "--inputs", str(tmp_path / "in.npz")]
    argv += kernels
    assert compile_main([*argv, "--outputs", str(tmp_path / "out.npz")]) == 0
    assert "check passed: 1 output(s) match onnxruntime" in capsys.readouterr().out
    ours = np.load(tmp_path / "out.npz")["y_q"]
    assert ours.dtype == np.uint8 and ours.min() < 100 and ours.max() > 150


def slice_model() -> onnx.ModelProto:
    """A Slice whose starts, ends and axes are graph inputs."""
    graph = helper.make_graph(
        [
            helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["s"]),
            helper.make_node("Relu", ["s"], ["y"]),
        ],
        "slice",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6]),
            *(
                helper.make_tensor_value_info(n, TensorProto.INT64, [1])
                for n in ("starts", "ends", "axes")
            ),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, "w"])],
    )
    # IR version 8 (opset 17's): onnxruntime may not read the newest the onnx package writes.
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_an_input_that_decides_a_shape_says_how_to_bind_it(tmp_path: Path, capsys):
    path = tmp_path / "slice.onnx"
    onnx.save(slice_model(), path)
    with pytest.raises(DiagnosticError) as error:
        compile_main([str(path), "--check"])
    assert "give its value with --bind starts=VALUES" in str(error.value)


def test_bound_inputs_become_constants_and_are_checked(tmp_path: Path, capsys):
    path = tmp_path / "slice.onnx"
    onnx.save(slice_model(), path)
    np.save(tmp_path / "ends.npy", np.array([5]))
    argv = [
        str(path),
        "--bind",
        "starts=1",
        "--bind",
        f"ends={tmp_path / 'ends.npy'}",
        "--bind",
        "axes=-1",
    ]
    assert compile_main([*argv, "--check"]) == 0
    assert "output 'y': float32[4, 4]" in capsys.readouterr().out
    assert compile_main(argv) == 0
    text = capsys.readouterr().out
    assert "func.func @main(%x: tensor<4x6xf32>) -> tensor<4x4xf32>" in text


@pytest.mark.parametrize(
    "binding, message",
    [
        (["--bind", "start=1"], "--bind names 'start', which is not an input of the model"),
        (
            ["--bind", "starts=1,2"],
            "--bind starts: the value has shape [2], but the input's is [1]",
        ),
        (
            ["--bind", "starts=0.5"],
            "--bind starts: the values do not fit the input's element type int64",
        ),
        (["--bind", "starts"], "invalid --bind 'starts': expected NAME=VALUES"),
        (["--bind", "starts=a,b"], "VALUES must be comma-separated numbers or a .npy file"),
    ],
)
def test_bind_mistakes_are_diagnostics(tmp_path: Path, capsys, binding, message):
    path = tmp_path / "slice.onnx"
    onnx.save(slice_model(), path)
    with pytest.raises(DiagnosticError) as error:
        compile_main([str(path), *binding])
    assert message in str(error.value)


def test_without_onnxruntime_check_says_so(tmp_path: Path, monkeypatch, capsys):
    path = tmp_path / "qdq.onnx"
    onnx.save(qdq_conv_model(), path)
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(DiagnosticError) as error:
        compile_main([str(path), "--check"])
    assert "onnxruntime is not installed (pip install onnxruntime)" in str(error.value)


def test_inputs_give_the_shapes_of_dynamic_dimensions(capsys):
    # The exporter leaves batch and sequence dynamic; the .npz's arrays fix them, as --input-shape would.
    data = Path(__file__).parent / "data" / "torch_export"
    argv = [
        str(data / "gpt_block_dynamo.onnx"),
        "--inputs",
        str(data / "gpt_block_dynamo.inputs.npz"),
        "--check",
    ]
    assert compile_main(argv) == 0
    assert "output 'logits': float32[2, 12, 64]" in capsys.readouterr().out


def test_a_shape_computed_from_inputs_names_them(tmp_path: Path):
    # Reshape's target is start + delta: both graph inputs must be bound.
    graph = helper.make_graph(
        [
            helper.make_node("Add", ["start", "delta"], ["shape"]),
            helper.make_node("Reshape", ["x", "shape"], ["y"]),
        ],
        "reshape",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6]),
            *(helper.make_tensor_value_info(n, TensorProto.INT64, [2]) for n in ("start", "delta")),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["a", "b"])],
    )
    path = tmp_path / "reshape.onnx"
    onnx.save(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path
    )
    with pytest.raises(DiagnosticError) as error:
        compile_main([str(path)])
    assert (
        "computed from the graph input(s) 'start', 'delta': give their values with --bind"
        in str(error.value)
    )
    assert compile_main([str(path), "--bind", "start=1,1", "--bind", "delta=1,5", "--check"]) == 0


def test_a_qdq_conv_with_a_float_bias_is_exact_on_the_npu(tmp_path: Path, capsys):
    """`qdq_conv_model`'s bias is float, no integer at the scale x_scale * w_scale (TensorRT-style
    QDQ keeps it so): graph-integer-qdq adds it after the rescaling in f32, and the int8 product
    with its exact sum still matches the definition bit for bit (it computed in f16 before)."""
    path = tmp_path / "qdq.onnx"
    onnx.save(qdq_conv_model(), path)
    assert compile_main([str(path), "--machine", "davinci", "--check"]) == 0
    printed = capsys.readouterr().out
    assert "max abs error 0 " in printed and "check passed" in printed
