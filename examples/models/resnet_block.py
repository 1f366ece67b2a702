"""A ResNet basic block: conv3x3-BN-Relu-conv3x3-BN, identity shortcut, Relu (opset 13).

python examples/models/resnet_block.py block.onnx && ziggurat-compile block.onnx --check
"""

from _common import Weights, main, make_model
from onnx import TensorProto, helper

CHANNELS, SIZE = 16, 16


def build():
    w = Weights(seed=1)
    conv = dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    nodes = [
        helper.make_node(
            "Conv",
            ["x", w.normal("conv1_w", (CHANNELS, CHANNELS, 3, 3))],
            ["conv1"],
            name="conv1",
            **conv,
        ),
        helper.make_node(
            "BatchNormalization", ["conv1", *w.batch_norm("bn1", CHANNELS)], ["bn1"], name="bn1"
        ),
        helper.make_node("Relu", ["bn1"], ["relu1"], name="relu1"),
        helper.make_node(
            "Conv",
            ["relu1", w.normal("conv2_w", (CHANNELS, CHANNELS, 3, 3))],
            ["conv2"],
            name="conv2",
            **conv,
        ),
        helper.make_node(
            "BatchNormalization", ["conv2", *w.batch_norm("bn2", CHANNELS)], ["bn2"], name="bn2"
        ),
        helper.make_node("Add", ["bn2", "x"], ["sum"], name="shortcut"),
        helper.make_node("Relu", ["sum"], ["y"], name="relu2"),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, CHANNELS, SIZE, SIZE])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, CHANNELS, SIZE, SIZE])
    return make_model("resnet_basic_block", nodes, [x], [y], w, opset=13)


if __name__ == "__main__":
    main(build, __doc__.splitlines()[0])
