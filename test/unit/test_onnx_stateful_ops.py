"""SwiGLU, CausalConvWithState and LinearAttention against the onnx package's reference implementation.

onnxruntime does not run these opset 27-28 operators yet, so the reference is
`onnx.reference.ReferenceEvaluator`, on random inputs with odd sizes. f32
throughout; the tolerance covers summation order (the unrolled recurrence
sums its state products in another order than the reference's einsum).
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from ziggurat.diagnostics import DiagnosticError
from ziggurat.frontends.onnx import import_model
from ziggurat.interpreters.graph_interpreter import run_function

RNG = np.random.default_rng(3)


def output(name: str, rank: int) -> onnx.ValueInfoProto:
    """An output of known rank and unknown sizes (the importer infers them)."""
    return helper.make_tensor_value_info(
        name, TensorProto.FLOAT, [f"{name}_{i}" for i in range(rank)]
    )


def node_model(
    op_type: str, inputs: dict[str, np.ndarray], outputs: dict[str, int], opset: int, **attributes
):
    node = helper.make_node(op_type, list(inputs), list(outputs), **attributes)
    graph = helper.make_graph(
        [node],
        op_type,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape) for n, a in inputs.items()],
        [output(n, rank) for n, rank in outputs.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def check(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> None:
    expected = ReferenceEvaluator(model).run(None, inputs)
    ours = run_function(import_model(model), list(inputs.values()))
    assert len(ours) == len(expected)
    for actual, reference in zip(ours, expected):
        assert np.std(reference) > 0.01  # the outputs vary: a wrong index would show
        np.testing.assert_allclose(actual, reference, rtol=1e-5, atol=1e-5)


def normal(*shape):
    return RNG.normal(0, 1, shape).astype(np.float32)


@pytest.mark.parametrize("alpha", [1.0, 1.702])
def test_swiglu(alpha):
    inputs = {"a": normal(2, 5, 7), "b": normal(2, 5, 7)}
    check(node_model("SwiGLU", inputs, {"y": 3}, 28, alpha=alpha), inputs)


@pytest.mark.parametrize("activation", ["none", "silu"])
@pytest.mark.parametrize("with_state", [False, True])
def test_causal_conv_with_state(activation, with_state):
    inputs = {"x": normal(2, 6, 9), "w": normal(6, 1, 4), "bias": normal(6)}
    if with_state:
        inputs["past"] = normal(2, 6, 3)
    check(
        node_model(
            "CausalConvWithState", inputs, {"y": 3, "present": 3}, 27, activation=activation
        ),
        inputs,
    )


@pytest.mark.parametrize("rule", ["linear", "gated", "delta", "gated_delta"])
def test_linear_attention(rule):
    b, t, q_heads, kv_heads, d_k, d_v = 2, 5, 4, 2, 3, 5
    inputs = {
        "q": normal(b, t, q_heads * d_k),
        "k": normal(b, t, kv_heads * d_k) * np.float32(0.5),
        "v": normal(b, t, kv_heads * d_v),
        "past": normal(b, kv_heads, d_k, d_v),
    }
    if rule in ("gated", "gated_delta"):
        inputs["decay"] = -np.abs(normal(b, t, kv_heads * d_k))
    else:
        inputs["decay"] = None
    if rule in ("delta", "gated_delta"):
        inputs["beta"] = RNG.uniform(0, 1, (b, t, kv_heads)).astype(np.float32)
    given = {k: v for k, v in inputs.items() if v is not None}
    names = [k if v is not None else "" for k, v in inputs.items()]
    node = helper.make_node(
        "LinearAttention",
        names,
        ["y", "present"],
        q_num_heads=q_heads,
        kv_num_heads=kv_heads,
        update_rule=rule,
    )
    graph = helper.make_graph(
        [node],
        "la",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape) for n, a in given.items()],
        [output("y", 3), output("present", 4)],
    )
    check(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 27)]), given)


def test_linear_attention_without_its_decay_is_a_diagnostic():
    inputs = {"q": normal(1, 2, 4), "k": normal(1, 2, 4), "v": normal(1, 2, 4)}
    model = node_model(
        "LinearAttention",
        inputs,
        {"y": 3, "present": 4},
        27,
        q_num_heads=2,
        kv_num_heads=2,
        update_rule="gated",
    )
    with pytest.raises(DiagnosticError, match="update_rule 'gated' requires (the )?decay input"):
        import_model(model)
