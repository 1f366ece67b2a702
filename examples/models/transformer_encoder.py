"""A transformer encoder layer (post-norm): multi-head self-attention, residual, LayerNormalization,
a GELU MLP (0.5 x (1 + erf(x / sqrt 2)), as PyTorch exports it), residual, LayerNormalization (opset 17).

    python examples/models/transformer_encoder.py encoder.onnx && ziggurat-compile encoder.onnx --check
"""

import math

import numpy as np
from _common import Weights, main, make_model
from onnx import TensorProto, helper

SEQUENCE, MODEL, HEADS, HIDDEN = 8, 32, 4, 64
HEAD = MODEL // HEADS


def build():
    w = Weights(seed=3)
    heads_shape = w.add("heads_shape", np.array([1, SEQUENCE, HEADS, HEAD], np.int64))
    model_shape = w.add("model_shape", np.array([1, SEQUENCE, MODEL], np.int64))
    nodes = []

    def linear(name, source, fan_in, fan_out):
        nodes.append(
            helper.make_node(
                "MatMul",
                [source, w.normal(f"{name}_w", (fan_in, fan_out))],
                [f"{name}_mm"],
                name=f"{name}_mm",
            )
        )
        nodes.append(
            helper.make_node(
                "Add", [f"{name}_mm", w.normal(f"{name}_b", (fan_out,), 0.02)], [name], name=name
            )
        )
        return name

    def heads(name, source, perm):
        nodes.append(
            helper.make_node(
                "Reshape", [source, heads_shape], [f"{name}_split"], name=f"{name}_split"
            )
        )
        nodes.append(
            helper.make_node(
                "Transpose", [f"{name}_split"], [f"{name}_heads"], name=f"{name}_heads", perm=perm
            )
        )
        return f"{name}_heads"

    def layer_norm(name, source):
        scale = w.add(f"{name}_scale", w.rng.uniform(0.8, 1.2, MODEL).astype(np.float32))
        bias = w.add(f"{name}_bias", w.rng.uniform(-0.1, 0.1, MODEL).astype(np.float32))
        nodes.append(
            helper.make_node(
                "LayerNormalization",
                [source, scale, bias],
                [name],
                name=name,
                axis=-1,
                epsilon=1e-5,
            )
        )
        return name

    q = heads("q", linear("q_proj", "x", MODEL, MODEL), [0, 2, 1, 3])
    k = heads("k", linear("k_proj", "x", MODEL, MODEL), [0, 2, 3, 1])
    v = heads("v", linear("v_proj", "x", MODEL, MODEL), [0, 2, 1, 3])
    scale = w.add("attention_scale", np.float32(math.sqrt(HEAD)))
    nodes += [
        helper.make_node("MatMul", [q, k], ["scores_raw"], name="scores_raw"),
        helper.make_node("Div", ["scores_raw", scale], ["scores"], name="scores"),
        helper.make_node("Softmax", ["scores"], ["attention"], name="attention", axis=-1),
        helper.make_node("MatMul", ["attention", v], ["context_heads"], name="context_heads"),
        helper.make_node(
            "Transpose", ["context_heads"], ["context_t"], name="context_t", perm=[0, 2, 1, 3]
        ),
        helper.make_node("Reshape", ["context_t", model_shape], ["context"], name="context"),
    ]
    attended = linear("out_proj", "context", MODEL, MODEL)
    nodes.append(helper.make_node("Add", ["x", attended], ["residual1"], name="residual1"))
    norm1 = layer_norm("norm1", "residual1")

    up = linear("mlp_up", norm1, MODEL, HIDDEN)
    sqrt2, half, one = (
        w.add(n, np.float32(v)) for n, v in (("sqrt2", math.sqrt(2)), ("half", 0.5), ("one", 1.0))
    )
    nodes += [
        helper.make_node("Div", [up, sqrt2], ["gelu_scaled"], name="gelu_scaled"),
        helper.make_node("Erf", ["gelu_scaled"], ["gelu_erf"], name="gelu_erf"),
        helper.make_node("Add", ["gelu_erf", one], ["gelu_shift"], name="gelu_shift"),
        helper.make_node("Mul", [up, "gelu_shift"], ["gelu_product"], name="gelu_product"),
        helper.make_node("Mul", ["gelu_product", half], ["gelu"], name="gelu"),
    ]
    down = linear("mlp_down", "gelu", HIDDEN, MODEL)
    nodes.append(helper.make_node("Add", [norm1, down], ["residual2"], name="residual2"))
    layer_norm("y", "residual2")

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, SEQUENCE, MODEL])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, SEQUENCE, MODEL])
    return make_model("transformer_encoder_layer", nodes, [x], [y], w, opset=17)


if __name__ == "__main__":
    main(build, __doc__.splitlines()[0])
