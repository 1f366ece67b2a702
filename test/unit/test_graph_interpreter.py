"""The graph interpreter against onnxruntime, and its diagnostics and registry."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from onnx import helper, numpy_helper
from xdsl.dialects import arith
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.traits import IsTerminator

from ziggurat.context import default_context
from ziggurat.diagnostics import DiagnosticError
from ziggurat.dialects.graph import Graph, ReluOp
from ziggurat.interpreters import interpreter as runner
from ziggurat.interpreters.graph_interpreter import (
    GraphFunctions,
    find_function,
    random_inputs,
    register_interpreter_functions,
    run_function,
)
from ziggurat.parsing import parse_source

RNG = np.random.default_rng(1234)


def tensor(shape, element="f32") -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}{element}>"


def parse(text: str):
    return parse_source(default_context(), text, "test.mlir")


def onnx_run(nodes, inputs: dict[str, np.ndarray], outputs: list[str], initializers=None, opset=17):
    """Run an ONNX graph of `nodes` with onnxruntime."""
    graph = helper.make_graph(
        nodes,
        "reference",
        [
            helper.make_tensor_value_info(
                name, helper.np_dtype_to_tensor_dtype(array.dtype), array.shape
            )
            for name, array in inputs.items()
        ],
        [helper.make_empty_tensor_value_info(name) for name in outputs],
        initializer=[
            numpy_helper.from_array(array, name) for name, array in (initializers or {}).items()
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(outputs, inputs)


def normal(*shape, dtype=np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


# --------------------------------------------------------------------------- #
# Multi-op functions against onnxruntime
# --------------------------------------------------------------------------- #


def test_matmul_add_relu_matches_onnxruntime():
    module = parse(
        f"""
        func.func @main(%x: {tensor([4, 8])}, %w: {tensor([8, 5])}, %b: {tensor([5])}) -> {tensor([4, 5])} {{
          %m = graph.matmul %x, %w : ({tensor([4, 8])}, {tensor([8, 5])}) -> {tensor([4, 5])}
          %a = graph.add %m, %b : ({tensor([4, 5])}, {tensor([5])}) -> {tensor([4, 5])}
          %r = graph.relu %a : {tensor([4, 5])}
          func.return %r : {tensor([4, 5])}
        }}"""
    )
    x, w, b = normal(4, 8), normal(8, 5), normal(5)
    (ours,) = run_function(module, [x, w, b])
    (expected,) = onnx_run(
        [
            helper.make_node("MatMul", ["x", "w"], ["m"]),
            helper.make_node("Add", ["m", "b"], ["a"]),
            helper.make_node("Relu", ["a"], ["r"]),
        ],
        {"x": x, "w": w, "b": b},
        ["r"],
    )
    assert ours.dtype == np.float32 and ours.shape == (4, 5)
    np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-6)


def test_batched_matmul_transpose_exp_with_constant_weights_and_call():
    weights = normal(3, 6)
    weight_text = ", ".join("[" + ", ".join(f"{v:.8e}" for v in row) + "]" for row in weights)
    module = parse(
        f"""
        func.func @main(%x: {tensor([2, 4, 3])}) -> {tensor([2, 6, 4])} {{
          %w = graph.constant dense<[{weight_text}]> : {tensor([3, 6])}
          %m = graph.matmul %x, %w : ({tensor([2, 4, 3])}, {tensor([3, 6])}) -> {tensor([2, 4, 6])}
          %t = func.call @swap(%m) : ({tensor([2, 4, 6])}) -> {tensor([2, 6, 4])}
          %e = graph.exp %t : {tensor([2, 6, 4])}
          func.return %e : {tensor([2, 6, 4])}
        }}
        func.func private @swap(%y: {tensor([2, 4, 6])}) -> {tensor([2, 6, 4])} {{
          %t = graph.transpose %y {{perm = array<i64: 0, 2, 1>}} : {tensor([2, 4, 6])} -> {tensor([2, 6, 4])}
          func.return %t : {tensor([2, 6, 4])}
        }}"""
    )
    x = normal(2, 4, 3)
    (ours,) = run_function(module, [x])
    (expected,) = onnx_run(
        [
            helper.make_node("MatMul", ["x", "w"], ["m"]),
            helper.make_node("Transpose", ["m"], ["t"], perm=[0, 2, 1]),
            helper.make_node("Exp", ["t"], ["e"]),
        ],
        {"x": x},
        ["e"],
        initializers={"w": weights},
    )
    np.testing.assert_allclose(ours, expected, rtol=1e-5)


def test_arith_constant_tensors_and_several_results():
    module = parse(
        f"""
        func.func @two(%x: {tensor([2, 2], "i32")}) -> ({tensor([2, 2], "i32")}, {tensor([2, 2], "i32")}) {{
          %c = arith.constant dense<[[1, 2], [3, 4]]> : {tensor([2, 2], "i32")}
          %s = arith.constant dense<-5> : {tensor([2, 2], "i32")}
          %a = graph.add %x, %c : ({tensor([2, 2], "i32")}, {tensor([2, 2], "i32")}) -> {tensor([2, 2], "i32")}
          %b = graph.add %a, %s : ({tensor([2, 2], "i32")}, {tensor([2, 2], "i32")}) -> {tensor([2, 2], "i32")}
          %r = graph.relu %b : {tensor([2, 2], "i32")}
          func.return %a, %r : {tensor([2, 2], "i32")}, {tensor([2, 2], "i32")}
        }}"""
    )
    x = np.array([[0, 1], [2, 3]], dtype=np.int32)
    a, r = run_function(module, [x])
    np.testing.assert_array_equal(a, [[1, 3], [5, 7]])
    np.testing.assert_array_equal(r, [[0, 0], [0, 2]])
    assert a.dtype == r.dtype == np.int32


def test_conv_relu_max_pool_matches_onnxruntime():
    x_t, w_t, b_t = tensor([1, 3, 8, 8]), tensor([4, 3, 3, 3]), tensor([4])
    conv_t, pool_t = tensor([1, 4, 8, 8]), tensor([1, 4, 4, 4])
    module = parse(
        f"""
        func.func @main(%x: {x_t}, %w: {w_t}, %b: {b_t}) -> {pool_t} {{
          %c = graph.conv2d %x, %w, %b {{pads = array<i64: 1, 1, 1, 1>}} : ({x_t}, {w_t}, {b_t}) -> {conv_t}
          %r = graph.relu %c : {conv_t}
          %p = graph.max_pool %r {{kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}} : {conv_t} -> {pool_t}
          func.return %p : {pool_t}
        }}"""
    )
    x, w, b = normal(1, 3, 8, 8), normal(4, 3, 3, 3), normal(4)
    (ours,) = run_function(module, [x, w, b])
    (expected,) = onnx_run(
        [
            helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c"], ["r"]),
            helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        ],
        {"x": x, "w": w, "b": b},
        ["p"],
    )
    np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-5)


def test_batch_norm_pool_gemm_softmax_head_matches_onnxruntime():
    stats = {
        "scale": normal(4),
        "bias": normal(4),
        "mean": normal(4),
        "var": RNG.uniform(0.5, 2, 4).astype(np.float32),
    }
    x_t, s_t, flat_t, out_t = tensor([2, 4, 5, 5]), tensor([4]), tensor([2, 4]), tensor([2, 3])
    module = parse(
        f"""
        func.func @main(%x: {x_t}, %scale: {s_t}, %bias: {s_t}, %mean: {s_t}, %var: {s_t}, %wt: {tensor([3, 4])}, %c: {tensor([3])}) -> {out_t} {{
          %bn = graph.batch_norm %x, %scale, %bias, %mean, %var {{epsilon = 1.000000e-03 : f32}} : ({x_t}, {s_t}, {s_t}, {s_t}, {s_t}) -> {x_t}
          %gap = graph.global_avg_pool %bn : {x_t} -> {tensor([2, 4, 1, 1])}
          %f = graph.flatten %gap : {tensor([2, 4, 1, 1])} -> {flat_t}
          %g = graph.gemm %f, %wt, %c {{alpha = 5.000000e-01 : f32, trans_b = true}} : ({flat_t}, {tensor([3, 4])}, {tensor([3])}) -> {out_t}
          %s = graph.softmax %g : {out_t}
          func.return %s : {out_t}
        }}"""
    )
    x, wt, c = normal(2, 4, 5, 5), normal(3, 4), normal(3)
    (ours,) = run_function(module, [x, *stats.values(), wt, c])
    (expected,) = onnx_run(
        [
            helper.make_node(
                "BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["bn"], epsilon=1e-3
            ),
            helper.make_node("GlobalAveragePool", ["bn"], ["gap"]),
            helper.make_node("Flatten", ["gap"], ["f"]),
            helper.make_node("Gemm", ["f", "wt", "c"], ["g"], alpha=0.5, transB=1),
            helper.make_node("Softmax", ["g"], ["s"]),
        ],
        {"x": x, **stats, "wt": wt, "c": c},
        ["s"],
    )
    np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours.sum(axis=-1), 1, rtol=1e-6)


def test_matmul_layer_norm_gelu_softmax_chain_matches_onnxruntime():
    x_t, w_t, h_t, g_t = tensor([2, 3, 6]), tensor([6, 8]), tensor([2, 3, 8]), tensor([8])
    module = parse(
        f"""
        func.func @main(%x: {x_t}, %w: {w_t}, %gamma: {g_t}, %beta: {g_t}) -> ({h_t}, {h_t}) {{
          %m = graph.matmul %x, %w : ({x_t}, {w_t}) -> {h_t}
          %n = graph.layer_norm %m, %gamma, %beta : ({h_t}, {g_t}, {g_t}) -> {h_t}
          %a = graph.gelu %n : {h_t}
          %s = graph.softmax %a {{axis = 1 : i64}} : {h_t}
          %l = graph.log_softmax %m : {h_t}
          func.return %s, %l : {h_t}, {h_t}
        }}"""
    )
    x, w, gamma, beta = normal(2, 3, 6), normal(6, 8), normal(8), normal(8)
    ours = run_function(module, [x, w, gamma, beta])
    expected = onnx_run(
        [
            helper.make_node("MatMul", ["x", "w"], ["m"]),
            helper.make_node("LayerNormalization", ["m", "gamma", "beta"], ["n"], axis=-1),
            helper.make_node("Gelu", ["n"], ["a"]),
            helper.make_node("Softmax", ["a"], ["s"], axis=1),
            helper.make_node("LogSoftmax", ["m"], ["l"]),
        ],
        {"x": x, "w": w, "gamma": gamma, "beta": beta},
        ["s", "l"],
        opset=20,
    )
    for a, b in zip(ours, expected):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_shape_ops_chain_matches_onnxruntime():
    module = parse(
        f"""
        func.func @main(%x: {tensor([2, 3, 4])}, %y: {tensor([2, 5, 4])}) -> {tensor([2, 4, 8])} {{
          %c = graph.concat %x, %y {{axis = 1 : i64}} : ({tensor([2, 3, 4])}, {tensor([2, 5, 4])}) -> {tensor([2, 8, 4])}
          %s = graph.slice %c {{starts = array<i64: 1>, ends = array<i64: 7>, axes = array<i64: 1>, steps = array<i64: 2>}} : {tensor([2, 8, 4])} -> {tensor([2, 3, 4])}
          %p = graph.pad %s {{pads = array<i64: 0, 1, 2, 0, 0, 2>, mode = "edge"}} : {tensor([2, 3, 4])} -> {tensor([2, 4, 8])}
          %r = graph.reshape %p : {tensor([2, 4, 8])} -> {tensor([8, 8])}
          %t = graph.transpose %r {{perm = array<i64: 1, 0>}} : {tensor([8, 8])} -> {tensor([8, 8])}
          %u = graph.reshape %t : {tensor([8, 8])} -> {tensor([2, 4, 8])}
          func.return %u : {tensor([2, 4, 8])}
        }}"""
    )
    x, y = normal(2, 3, 4), normal(2, 5, 4)
    (ours,) = run_function(module, [x, y])
    (expected,) = onnx_run(
        [
            helper.make_node("Concat", ["x", "y"], ["c"], axis=1),
            helper.make_node("Slice", ["c", "starts", "ends", "axes", "steps"], ["s"]),
            helper.make_node("Pad", ["s", "pads"], ["p"], mode="edge"),
            helper.make_node("Reshape", ["p", "flat"], ["r"]),
            helper.make_node("Transpose", ["r"], ["t"], perm=[1, 0]),
            helper.make_node("Reshape", ["t", "back"], ["u"]),
        ],
        {"x": x, "y": y},
        ["u"],
        initializers={
            "starts": np.array([1]),
            "ends": np.array([7]),
            "axes": np.array([1]),
            "steps": np.array([2]),
            "pads": np.array([0, 1, 2, 0, 0, 2]),
            "flat": np.array([8, 8]),
            "back": np.array([2, 4, 8]),
        },
    )
    np.testing.assert_array_equal(ours, expected)


def test_quantize_dequantize_where_matches_onnxruntime():
    f_t, q_t = tensor([3, 4]), tensor([3, 4], "ui8")
    module = parse(
        f"""
        func.func @main(%x: {f_t}, %keep: {tensor([3, 1], "i1")}) -> ({q_t}, {f_t}) {{
          %scale = graph.constant dense<[0.02, 0.05, 0.1, 0.2]> : {tensor([4])}
          %zp = graph.constant dense<[128, 100, 0, 7]> : {tensor([4], "ui8")}
          %q = graph.quantize %x, %scale, %zp {{axis = -1 : i64}} : ({f_t}, {tensor([4])}, {tensor([4], "ui8")}) -> {q_t}
          %d = graph.dequantize %q, %scale, %zp {{axis = -1 : i64}} : ({q_t}, {tensor([4])}, {tensor([4], "ui8")}) -> {f_t}
          %w = graph.where %keep, %d, %x : ({tensor([3, 1], "i1")}, {f_t}, {f_t}) -> {f_t}
          func.return %q, %w : {q_t}, {f_t}
        }}"""
    )
    x, keep = normal(3, 4), np.array([[True], [False], [True]])
    ours = run_function(module, [x, keep])
    expected = onnx_run(
        [
            helper.make_node("QuantizeLinear", ["x", "scale", "zp"], ["q"], axis=-1),
            helper.make_node("DequantizeLinear", ["q", "scale", "zp"], ["d"], axis=-1),
            helper.make_node("Where", ["keep", "d", "x"], ["w"]),
        ],
        {"x": x, "keep": keep},
        ["q", "w"],
        initializers={
            "scale": np.array([0.02, 0.05, 0.1, 0.2], np.float32),
            "zp": np.array([128, 100, 0, 7], np.uint8),
        },
    )
    np.testing.assert_array_equal(ours[0], expected[0])
    np.testing.assert_allclose(ours[1], expected[1], rtol=1e-6)


F34 = tensor([3, 4])

# graph op, its attributes, its operand (%x: any float, %p: positive), ONNX nodes from "in" to "out"
ACTIVATIONS = [
    ("graph.relu6", "", "x", [helper.make_node("Clip", ["in", "zero", "six"], ["out"])]),
    (
        "graph.leaky_relu",
        "{alpha = 1.000000e-01 : f32}",
        "x",
        [helper.make_node("LeakyRelu", ["in"], ["out"], alpha=0.1)],
    ),
    (
        "graph.elu",
        "{alpha = 5.000000e-01 : f32}",
        "x",
        [helper.make_node("Elu", ["in"], ["out"], alpha=0.5)],
    ),
    (
        "graph.gelu",
        '{approximate = "tanh"}',
        "x",
        [helper.make_node("Gelu", ["in"], ["out"], approximate="tanh")],
    ),
    ("graph.sigmoid", "", "x", [helper.make_node("Sigmoid", ["in"], ["out"])]),
    ("graph.tanh", "", "x", [helper.make_node("Tanh", ["in"], ["out"])]),
    (
        "graph.silu",
        "",
        "x",
        [helper.make_node("Sigmoid", ["in"], ["s"]), helper.make_node("Mul", ["in", "s"], ["out"])],
    ),
    (
        "graph.hard_sigmoid",
        "{alpha = 3.000000e-01 : f32, beta = 4.000000e-01 : f32}",
        "x",
        [helper.make_node("HardSigmoid", ["in"], ["out"], alpha=0.3, beta=0.4)],
    ),
    ("graph.hard_swish", "", "x", [helper.make_node("HardSwish", ["in"], ["out"])]),
    ("graph.softplus", "", "x", [helper.make_node("Softplus", ["in"], ["out"])]),
    (
        "graph.clip",
        "{min = -5.000000e-01 : f32, max = 5.000000e-01 : f32}",
        "x",
        [helper.make_node("Clip", ["in", "low", "high"], ["out"])],
    ),
    ("graph.neg", "", "x", [helper.make_node("Neg", ["in"], ["out"])]),
    ("graph.abs", "", "x", [helper.make_node("Abs", ["in"], ["out"])]),
    ("graph.erf", "", "x", [helper.make_node("Erf", ["in"], ["out"])]),
    ("graph.log", "", "p", [helper.make_node("Log", ["in"], ["out"])]),
    ("graph.sqrt", "", "p", [helper.make_node("Sqrt", ["in"], ["out"])]),
    (
        "graph.rsqrt",
        "",
        "p",
        [helper.make_node("Sqrt", ["in"], ["r"]), helper.make_node("Reciprocal", ["r"], ["out"])],
    ),
    ("graph.reciprocal", "", "p", [helper.make_node("Reciprocal", ["in"], ["out"])]),
]


def test_activations_in_one_function_match_onnxruntime():
    lines = [
        f"%r{index} = {op} %{operand} {attrs} : {F34}"
        for index, (op, attrs, operand, _) in enumerate(ACTIVATIONS)
    ]
    results = [f"%r{index}" for index in range(len(ACTIVATIONS))]
    module = parse(
        f"""
        func.func @main(%x: {F34}, %p: {F34}) -> ({", ".join([F34] * len(results))}) {{
          {chr(10).join(lines)}
          func.return {", ".join(results)} : {", ".join([F34] * len(results))}
        }}"""
    )
    x, p = normal(3, 4) * 3, RNG.uniform(0.1, 4, (3, 4)).astype(np.float32)
    nodes = []
    for index, (_, _, operand, onnx_nodes) in enumerate(ACTIVATIONS):
        for node in onnx_nodes:
            renamed = helper.make_node(
                node.op_type,
                [
                    operand
                    if name == "in"
                    else name
                    if name in ("zero", "six", "low", "high")
                    else f"{name}{index}"
                    for name in node.input
                ],
                [f"{name}{index}" for name in node.output],
            )
            renamed.attribute.extend(node.attribute)
            nodes.append(renamed)
    bounds = {"zero": 0.0, "six": 6.0, "low": -0.5, "high": 0.5}
    expected = onnx_run(
        nodes,
        {"x": x, "p": p},
        [f"out{index}" for index in range(len(ACTIVATIONS))],
        initializers={name: np.array(value, np.float32) for name, value in bounds.items()},
        opset=20,
    )
    ours = run_function(module, [x, p])
    for (op, _, _, _), a, b in zip(ACTIVATIONS, ours, expected):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=op)


def test_pools_prelu_pow_and_shape_ops_match_onnxruntime():
    x_t = tensor([1, 2, 5, 5])
    module = parse(
        f"""
        func.func @main(%x: {x_t}, %slope: {tensor([2, 1, 1])}, %e: {tensor([5])}, %v: {tensor([3, 1])}, %idx: {tensor([2, 2], "i64")})
            -> ({tensor([1, 2, 5, 5])}, {tensor([1, 2, 1, 1])}, {tensor([1, 2, 5, 5])}, {tensor([3, 4])}, {tensor([2, 1, 5])}, {tensor([1, 2, 2, 2, 5], "i32")}) {{
          %avg = graph.avg_pool %x {{kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, count_include_pad = true}} : {x_t} -> {x_t}
          %gmp = graph.global_max_pool %x : {x_t} -> {tensor([1, 2, 1, 1])}
          %pr = graph.prelu %x, %slope : ({x_t}, {tensor([2, 1, 1])}) -> {x_t}
          %abs = graph.abs %pr : {x_t}
          %pw = graph.pow %abs, %e : ({x_t}, {tensor([5])}) -> {x_t}
          %bc = graph.broadcast_to %v : {tensor([3, 1])} -> {tensor([3, 4])}
          %sq = graph.squeeze %gmp {{axes = array<i64: 0, 3>}} : {tensor([1, 2, 1, 1])} -> {tensor([2, 1])}
          %un = graph.unsqueeze %sq {{axes = array<i64: 2>}} : {tensor([2, 1])} -> {tensor([2, 1, 1])}
          %row = graph.slice %x {{starts = array<i64: 2>, ends = array<i64: 3>, axes = array<i64: 2>}} : {x_t} -> {tensor([1, 2, 1, 5])}
          %flat = graph.reshape %row : {tensor([1, 2, 1, 5])} -> {tensor([2, 1, 5])}
          %sum = graph.add %flat, %un : ({tensor([2, 1, 5])}, {tensor([2, 1, 1])}) -> {tensor([2, 1, 5])}
          %g = graph.gather %x, %idx {{axis = 2 : i64}} : ({x_t}, {tensor([2, 2], "i64")}) -> {tensor([1, 2, 2, 2, 5])}
          %scaled = graph.mul %g, %e : ({tensor([1, 2, 2, 2, 5])}, {tensor([5])}) -> {tensor([1, 2, 2, 2, 5])}
          %ci = graph.cast %scaled : {tensor([1, 2, 2, 2, 5])} -> {tensor([1, 2, 2, 2, 5], "i32")}
          func.return %avg, %gmp, %pw, %bc, %sum, %ci : {x_t}, {tensor([1, 2, 1, 1])}, {x_t}, {tensor([3, 4])}, {tensor([2, 1, 5])}, {tensor([1, 2, 2, 2, 5], "i32")}
        }}"""
    )
    inputs = {
        "x": normal(1, 2, 5, 5) * 4,
        "slope": normal(2, 1, 1),
        "e": RNG.uniform(0.5, 2.5, 5).astype(np.float32),
        "v": normal(3, 1),
        "idx": np.array([[0, -1], [3, 2]], np.int64),
    }
    ours = run_function(module, list(inputs.values()))
    expected = onnx_run(
        [
            helper.make_node(
                "AveragePool",
                ["x"],
                ["avg"],
                kernel_shape=[3, 3],
                pads=[1, 1, 1, 1],
                count_include_pad=1,
            ),
            helper.make_node("GlobalMaxPool", ["x"], ["gmp"]),
            helper.make_node("PRelu", ["x", "slope"], ["pr"]),
            helper.make_node("Abs", ["pr"], ["abs"]),
            helper.make_node("Pow", ["abs", "e"], ["pw"]),
            helper.make_node("Expand", ["v", "bc_shape"], ["bc"]),
            helper.make_node("Squeeze", ["gmp", "sq_axes"], ["sq"]),
            helper.make_node("Unsqueeze", ["sq", "un_axes"], ["un"]),
            helper.make_node("Slice", ["x", "starts", "ends", "slice_axes"], ["row"]),
            helper.make_node("Reshape", ["row", "flat_shape"], ["flat"]),
            helper.make_node("Add", ["flat", "un"], ["sum"]),
            helper.make_node("Gather", ["x", "idx"], ["g"], axis=2),
            helper.make_node("Mul", ["g", "e"], ["scaled"]),
            helper.make_node(
                "Cast", ["scaled"], ["ci"], to=helper.np_dtype_to_tensor_dtype(np.dtype(np.int32))
            ),
        ],
        inputs,
        ["avg", "gmp", "pw", "bc", "sum", "ci"],
        initializers={
            "bc_shape": np.array([3, 4]),
            "sq_axes": np.array([0, 3]),
            "un_axes": np.array([2]),
            "starts": np.array([2]),
            "ends": np.array([3]),
            "slice_axes": np.array([2]),
            "flat_shape": np.array([2, 1, 5]),
        },
    )
    for name, a, b in zip(["avg", "gmp", "pw", "bc", "sum", "ci"], ours, expected):
        assert a.dtype == b.dtype, name
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=name)


BINARY_ONNX = {"add": "Add", "sub": "Sub", "mul": "Mul", "div": "Div", "max": "Max", "min": "Min"}


def test_scalar_arguments_and_arith_on_scalars():
    module = parse(
        """
        func.func @main(%s: f32, %n: i32) -> (f32, i32) {
          %c = arith.constant 2.5 : f32
          %p = arith.mulf %s, %c : f32
          %one = arith.constant 1 : i32
          %m = arith.addi %n, %one : i32
          func.return %p, %m : f32, i32
        }"""
    )
    p, m = run_function(module, [np.float32(2), np.array(41, np.int32)])
    assert (p.shape, p.dtype, float(p)) == ((), np.float32, 5.0)
    assert (m.shape, m.dtype, int(m)) == ((), np.int32, 42)


@settings(max_examples=20, deadline=None)
@given(
    op=st.sampled_from(sorted(BINARY_ONNX)),
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=4),
)
def test_binary_broadcasting_matches_onnxruntime(op, shapes):
    (lhs_shape, rhs_shape), out_shape = shapes.input_shapes, shapes.result_shape
    module = parse(
        f"""
        func.func @main(%a: {tensor(lhs_shape)}, %b: {tensor(rhs_shape)}) -> {tensor(out_shape)} {{
          %s = graph.{op} %a, %b : ({tensor(lhs_shape)}, {tensor(rhs_shape)}) -> {tensor(out_shape)}
          func.return %s : {tensor(out_shape)}
        }}"""
    )
    a, b = normal(*lhs_shape), normal(*rhs_shape)
    (ours,) = run_function(module, [a, b])
    (expected,) = onnx_run(
        [helper.make_node(BINARY_ONNX[op], ["a", "b"], ["s"])], {"a": a, "b": b}, ["s"]
    )
    assert ours.shape == tuple(out_shape)
    np.testing.assert_allclose(ours, expected, rtol=1e-6)


REDUCE_ONNX = {"reduce_sum": "ReduceSum", "reduce_mean": "ReduceMean", "reduce_max": "ReduceMax"}


@settings(max_examples=20, deadline=None)
@given(
    op=st.sampled_from(sorted(REDUCE_ONNX)),
    shape=hnp.array_shapes(min_dims=1, max_dims=4, max_side=4),
    keepdims=st.booleans(),
    data=st.data(),
)
def test_reductions_over_axes_match_onnxruntime(op, shape, keepdims, data):
    rank = len(shape)
    axes = data.draw(
        st.lists(
            st.integers(-rank, rank - 1), min_size=1, max_size=rank, unique_by=lambda a: a % rank
        )
    )
    out = [1 if i in {a % rank for a in axes} else d for i, d in enumerate(shape)]
    if not keepdims:
        out = [d for i, d in enumerate(shape) if i not in {a % rank for a in axes}]
    attrs = f"axes = array<i64: {', '.join(map(str, axes))}>" + (
        "" if keepdims else ", keepdims = false"
    )
    module = parse(
        f"""
        func.func @main(%x: {tensor(shape)}) -> {tensor(out)} {{
          %r = graph.{op} %x {{{attrs}}} : {tensor(shape)} -> {tensor(out)}
          func.return %r : {tensor(out)}
        }}"""
    )
    x = normal(*shape)
    (ours,) = run_function(module, [x])
    (expected,) = onnx_run(
        [helper.make_node(REDUCE_ONNX[op], ["x", "axes"], ["r"], keepdims=int(keepdims))],
        {"x": x},
        ["r"],
        initializers={"axes": np.array(axes, np.int64)},
        opset=18,
    )
    assert ours.shape == expected.shape
    np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-6)


@settings(max_examples=10, deadline=None)
@given(
    batch=st.lists(st.integers(1, 3), max_size=2),
    m=st.integers(1, 5),
    k=st.integers(1, 5),
    n=st.integers(1, 5),
)
def test_matmul_batch_shapes_match_onnxruntime(batch, m, k, n):
    lhs, rhs, out = [*batch, m, k], [k, n], [*batch, m, n]
    module = parse(
        f"""
        func.func @main(%a: {tensor(lhs)}, %b: {tensor(rhs)}) -> {tensor(out)} {{
          %s = graph.matmul %a, %b : ({tensor(lhs)}, {tensor(rhs)}) -> {tensor(out)}
          func.return %s : {tensor(out)}
        }}"""
    )
    a, b = normal(*lhs), normal(*rhs)
    (ours,) = run_function(module, [a, b])
    (expected,) = onnx_run([helper.make_node("MatMul", ["a", "b"], ["s"])], {"a": a, "b": b}, ["s"])
    np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-6)


@settings(max_examples=10, deadline=None)
@given(data=st.data(), shape=hnp.array_shapes(min_dims=1, max_dims=4, max_side=4))
def test_transpose_permutations_match_onnxruntime(data, shape):
    perm = data.draw(st.permutations(range(len(shape))))
    out = [shape[p] for p in perm]
    module = parse(
        f"""
        func.func @main(%a: {tensor(shape)}) -> {tensor(out)} {{
          %t = graph.transpose %a {{perm = array<i64: {", ".join(map(str, perm))}>}} : {tensor(shape)} -> {tensor(out)}
          func.return %t : {tensor(out)}
        }}"""
    )
    a = normal(*shape)
    (ours,) = run_function(module, [a])
    (expected,) = onnx_run(
        [helper.make_node("Transpose", ["a"], ["t"], perm=perm)], {"a": a}, ["t"]
    )
    np.testing.assert_array_equal(ours, expected)


# --------------------------------------------------------------------------- #
# Entry function, inputs and diagnostics
# --------------------------------------------------------------------------- #

TWO_FUNCTIONS = f"""
func.func @first(%x: {tensor([2, 3])}) -> {tensor([2, 3])} {{
  %r = graph.relu %x : {tensor([2, 3])}
  func.return %r : {tensor([2, 3])}
}}
func.func @second(%x: {tensor([2, 3])}) -> {tensor([2, 3])} {{
  %e = graph.exp %x : {tensor([2, 3])}
  func.return %e : {tensor([2, 3])}
}}
"""


def test_function_is_chosen_by_name_and_ambiguity_is_an_error():
    module = parse(TWO_FUNCTIONS)
    x = normal(2, 3)
    (second,) = run_function(module, [x], "second")
    np.testing.assert_allclose(second, np.exp(x), rtol=1e-6)
    with pytest.raises(DiagnosticError, match="no @main and 2 public functions"):
        run_function(module, [x])
    with pytest.raises(DiagnosticError, match=r"no function @third .*@first, @second"):
        run_function(module, [x], "third")


def test_private_helpers_do_not_make_the_entry_ambiguous():
    module = parse(TWO_FUNCTIONS.replace("func.func @second", "func.func private @second"))
    assert find_function(module).sym_name.data == "first"


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ([], r"@first takes 1 arguments \(x\), but 0 inputs were given"),
        (
            [np.zeros((3, 2), np.float32)],
            r"'x' of @first has shape \[3, 2\], but the argument is tensor<2x3xf32>",
        ),
        (
            [np.zeros((2, 3), np.float64)],
            r"'x' of @first has dtype float64, but the argument is tensor<2x3xf32>",
        ),
    ],
)
def test_inputs_are_checked_against_the_signature(inputs, message):
    module = parse(TWO_FUNCTIONS)
    with pytest.raises(DiagnosticError, match=message) as raised:
        run_function(module, inputs, "first")
    (diagnostic,) = raised.value.diagnostics
    assert (diagnostic.file, diagnostic.line) == ("test.mlir", 2)


def test_op_without_implementation_is_reported_at_the_op():
    module = parse(
        f"""func.func @main(%x: {tensor([4])}) -> {tensor([4])} {{
          %r = graph.relu %x : {tensor([4])}
          %d = arith.divf %r, %x : {tensor([4])}
          func.return %d : {tensor([4])}
        }}"""
    )
    with pytest.raises(DiagnosticError) as raised:
        run_function(module, [normal(4)])
    (diagnostic,) = raised.value.diagnostics
    assert diagnostic.message == "no interpreter implementation for 'arith.divf'"
    assert (diagnostic.line, diagnostic.col) == (3, 11)


def test_failure_inside_a_call_is_reported_at_the_innermost_op():
    module = parse(
        f"""func.func private @kernel({tensor([4])}) -> {tensor([4])}
        func.func @helper(%x: {tensor([4])}) -> {tensor([4])} {{
          %y = func.call @kernel(%x) : ({tensor([4])}) -> {tensor([4])}
          func.return %y : {tensor([4])}
        }}
        func.func @main(%x: {tensor([4])}) -> {tensor([4])} {{
          %y = func.call @helper(%x) : ({tensor([4])}) -> {tensor([4])}
          func.return %y : {tensor([4])}
        }}"""
    )
    with pytest.raises(
        DiagnosticError, match="external function implementation named kernel"
    ) as raised:
        run_function(module, [normal(4)])
    assert raised.value.diagnostics[0].line == 3
    with pytest.raises(DiagnosticError, match="@kernel is a declaration; it has no body to run"):
        run_function(module, [normal(4)], "kernel")


def test_data_an_op_cannot_take_is_reported_at_the_op():
    module = parse(
        f"""func.func @main(%x: {tensor([4])}, %i: {tensor([2], "i64")}) -> {tensor([2])} {{
          %g = graph.gather %x, %i : ({tensor([4])}, {tensor([2], "i64")}) -> {tensor([2])}
          func.return %g : {tensor([2])}
        }}"""
    )
    with pytest.raises(
        DiagnosticError,
        match=r"evaluating 'graph.gather' failed: ValueError: gather indices must be in \[-4, 4\)",
    ) as raised:
        run_function(module, [normal(4), np.array([1, 4])])
    assert raised.value.diagnostics[0].line == 2


def test_wrong_reference_semantics_are_caught_at_the_op(monkeypatch):
    monkeypatch.setattr(ReluOp, "evaluate", lambda self, x: (np.maximum(x, 0).astype(np.float64),))
    module = parse(TWO_FUNCTIONS)
    with pytest.raises(
        DiagnosticError, match=r"'graph.relu' evaluated result #0 to .* dtype float64"
    ) as raised:
        run_function(module, [normal(2, 3)], "first")
    assert raised.value.diagnostics[0].line == 3


def test_random_inputs_follow_the_signature_and_the_seed():
    module = parse(
        f"""func.func @main(%x: {tensor([2, 3])}, %i: {tensor([5], "i8")}, %m: {tensor([3], "i1")}, %s: f16) -> {tensor([2, 3])} {{
          func.return %x : {tensor([2, 3])}
        }}"""
    )
    function = find_function(module)
    first, again, other = (
        random_inputs(function, 0),
        random_inputs(function, 0),
        random_inputs(function, 1),
    )
    assert [(a.shape, a.dtype) for a in first] == [
        ((2, 3), np.float32),
        ((5,), np.int8),
        ((3,), np.bool_),
        ((), np.float16),
    ]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], other[0])
    (out,) = run_function(module, first)
    np.testing.assert_array_equal(out, first[0])


# --------------------------------------------------------------------------- #
# Registry
# --------------------------------------------------------------------------- #


def test_every_graph_op_but_terminators_has_an_implementation():
    implemented = {op_type for op_type, _ in GraphFunctions._impls()}
    expected = {op for op in Graph.operations if not op.has_trait(IsTerminator)}
    assert len(expected) > 50
    assert implemented == expected


@register_impls
class DivfFunctions(InterpreterFunctions):
    @impl(arith.DivfOp)
    def run_divf(self, interpreter: Interpreter, op: arith.DivfOp, args):
        return (args[0] / args[1],)


@register_impls
class DoubleReluFunctions(InterpreterFunctions):
    @impl(ReluOp)
    def run_relu(self, interpreter: Interpreter, op: ReluOp, args):
        return (2 * np.maximum(args[0], 0),)


def test_registered_functions_join_the_runner_and_may_override(monkeypatch):
    monkeypatch.setattr(runner, "_runtime_registrations", [])
    module = parse(
        f"""func.func @main(%x: {tensor([4])}, %y: {tensor([4])}) -> {tensor([4])} {{
          %r = graph.relu %x : {tensor([4])}
          %d = arith.divf %r, %y : {tensor([4])}
          func.return %d : {tensor([4])}
        }}"""
    )
    x, y = normal(4), normal(4) + 3
    register_interpreter_functions(DivfFunctions)
    (out,) = run_function(module, [x, y])
    np.testing.assert_allclose(out, np.maximum(x, 0) / y, rtol=1e-6)

    register_interpreter_functions(DoubleReluFunctions, override=True)
    (out,) = run_function(module, [x, y])
    np.testing.assert_allclose(out, 2 * np.maximum(x, 0) / y, rtol=1e-6)


def test_a_second_implementation_without_override_is_refused(monkeypatch):
    monkeypatch.setattr(runner, "_runtime_registrations", [])
    register_interpreter_functions(DoubleReluFunctions)
    with pytest.raises(ValueError, match="already registered"):
        run_function(parse(TWO_FUNCTIONS), [normal(2, 3)], "first")


def test_plugins_join_through_the_entry_point_group(monkeypatch):
    from importlib.metadata import EntryPoint

    plugin = EntryPoint("math", "xdsl.interpreters.math:MathFunctions", runner.ENTRY_POINT_GROUP)
    monkeypatch.setattr(
        runner, "entry_points", lambda group: [plugin] if group == runner.ENTRY_POINT_GROUP else []
    )
    runner._plugin_registrations.cache_clear()
    try:
        module = parse(
            """func.func @main(%x: f32) -> f32 {
              %r = math.sqrt %x : f32
              func.return %r : f32
            }"""
        )
        (root,) = run_function(module, [np.float32(6.25)])
        assert float(root) == 2.5
    finally:
        runner._plugin_registrations.cache_clear()


def test_random_inputs_past_the_size_limit_fail_at_once():
    from ziggurat.context import default_context
    from ziggurat.diagnostics import DiagnosticError
    from ziggurat.interpreters.interpreter import (
        MAX_RANDOM_INPUT_BYTES,
        find_function,
        random_inputs,
    )
    from ziggurat.parsing import parse_source

    side = int((MAX_RANDOM_INPUT_BYTES // 4) ** 0.5) + 1
    text = (
        f"func.func @main(%x: tensor<{side}x{side}xf32>) -> tensor<{side}x{side}xf32> {{\n"
        f"  func.return %x : tensor<{side}x{side}xf32>\n}}\n"
    )
    module = parse_source(default_context(), text, "big.mlir")
    with pytest.raises(DiagnosticError) as caught:
        random_inputs(find_function(module, None))
    message = str(caught.value)
    assert (
        "big.mlir:1:1" in message
        and "over the limit of" in message
        and "ZIGGURAT_MAX_INPUT_BYTES" in message
    )


def test_equal_channels_of_a_conv_are_equal_sums():
    """A light model's output channels are equal (ConstantOfShape weights) and its softmax sees
    logits near 1e10: the reference must sum each channel's products to the same value, which
    BLAS in f32 does not (its edge kernels add in another order: two values per position)."""
    text = """
    func.func @main(%x: tensor<1x512x13x13xf32>, %w: tensor<1000x512x1x1xf32>) -> tensor<1x1000x13x13xf32> {
      %y = graph.conv2d %x, %w : (tensor<1x512x13x13xf32>, tensor<1000x512x1x1xf32>) -> tensor<1x1000x13x13xf32>
      func.return %y : tensor<1x1000x13x13xf32>
    }"""
    x = (np.random.default_rng(0).random((1, 512, 13, 13)) * 1e6).astype(np.float32)
    w = np.full((1000, 512, 1, 1), 0.02, np.float32)
    (y,) = run_function(parse_source(default_context(), text, "conv.mlir"), [x, w])
    assert y.dtype == np.float32
    assert all(len(np.unique(y[0, :, i, j])) == 1 for i in range(13) for j in range(13))
    np.testing.assert_allclose(y[0, 0], x[0].sum(axis=0, dtype=np.float64) * 0.02, rtol=1e-6)
