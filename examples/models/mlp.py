"""A two-layer MLP classifier: Gemm + Relu + Gemm + Softmax on a batch of 4 vectors (opset 13).

python examples/models/mlp.py mlp.onnx && ziggurat-compile mlp.onnx --check
python examples/models/mlp.py --dynamic-batch mlp_n.onnx && ziggurat-compile mlp_n.onnx --input-shape x=16x64 --run
"""

from _common import Weights, main, make_model
from onnx import TensorProto, helper

BATCH, FEATURES, HIDDEN, CLASSES = 4, 64, 128, 10


def build(dynamic_batch: bool = False):
    w = Weights(seed=0)
    nodes = [
        helper.make_node(
            "Gemm",
            ["x", w.normal("fc1_w", (HIDDEN, FEATURES)), w.normal("fc1_b", (HIDDEN,), 0.1)],
            ["fc1"],
            name="fc1",
            transB=1,
        ),
        helper.make_node("Relu", ["fc1"], ["relu1"], name="relu1"),
        helper.make_node(
            "Gemm",
            ["relu1", w.normal("fc2_w", (CLASSES, HIDDEN)), w.normal("fc2_b", (CLASSES,), 0.1)],
            ["logits"],
            name="fc2",
            transB=1,
        ),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    batch = "N" if dynamic_batch else BATCH
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, FEATURES])
    probs = helper.make_tensor_value_info("probs", TensorProto.FLOAT, [batch, CLASSES])
    return make_model("mlp", nodes, [x], [probs], w, opset=13)


if __name__ == "__main__":
    main(build, __doc__.splitlines()[0], dynamic_batch=True)
