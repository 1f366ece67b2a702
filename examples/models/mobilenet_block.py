"""A MobileNetV2 inverted residual: 1x1 expand, 3x3 depthwise (group = channels), 1x1 project,
each with BatchNormalization, ReLU6 as Clip(0, 6), and a residual Add (opset 13).

    python examples/models/mobilenet_block.py mbv2.onnx && ziggurat-compile mbv2.onnx --check
"""

import numpy as np
from _common import Weights, main, make_model
from onnx import TensorProto, helper

CHANNELS, EXPANSION, SIZE = 16, 4, 16


def build():
    w = Weights(seed=2)
    hidden = CHANNELS * EXPANSION
    zero, six = w.add("relu6_min", np.float32(0)), w.add("relu6_max", np.float32(6))
    nodes = [
        helper.make_node(
            "Conv", ["x", w.normal("expand_w", (hidden, CHANNELS, 1, 1))], ["expand"], name="expand"
        ),
        helper.make_node(
            "BatchNormalization",
            ["expand", *w.batch_norm("expand_bn", hidden)],
            ["expand_bn"],
            name="expand_bn",
        ),
        helper.make_node("Clip", ["expand_bn", zero, six], ["expand_relu6"], name="expand_relu6"),
        helper.make_node(
            "Conv",
            ["expand_relu6", w.normal("depthwise_w", (hidden, 1, 3, 3))],
            ["depthwise"],
            name="depthwise",
            group=hidden,
            kernel_shape=[3, 3],
            pads=[1, 1, 1, 1],
        ),
        helper.make_node(
            "BatchNormalization",
            ["depthwise", *w.batch_norm("depthwise_bn", hidden)],
            ["depthwise_bn"],
            name="depthwise_bn",
        ),
        helper.make_node(
            "Clip", ["depthwise_bn", zero, six], ["depthwise_relu6"], name="depthwise_relu6"
        ),
        helper.make_node(
            "Conv",
            ["depthwise_relu6", w.normal("project_w", (CHANNELS, hidden, 1, 1))],
            ["project"],
            name="project",
        ),
        helper.make_node(
            "BatchNormalization",
            ["project", *w.batch_norm("project_bn", CHANNELS)],
            ["project_bn"],
            name="project_bn",
        ),
        helper.make_node("Add", ["project_bn", "x"], ["y"], name="residual"),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, CHANNELS, SIZE, SIZE])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, CHANNELS, SIZE, SIZE])
    return make_model("mobilenet_v2_block", nodes, [x], [y], w, opset=13)


if __name__ == "__main__":
    main(build, __doc__.splitlines()[0])
