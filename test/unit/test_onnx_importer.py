"""The ONNX importer, op by op: each small model is imported, run on the graph interpreter and
compared with onnxruntime on the same inputs; then the importer's and ziggurat-compile's errors."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from onnx.reference.ops.op_attention import _compute_attention
from xdsl.dialects import func

from ziggurat import numerics
from ziggurat.diagnostics import DiagnosticError, collect_diagnostics
from ziggurat.dialects import graph
from ziggurat.frontends.onnx import (
    SUPPORTED_OPSETS,
    import_loaded_model,
    import_model,
    ops,
    parse_input_shape,
)
from ziggurat.interpreters.graph_interpreter import run_function
from ziggurat.tools import ziggurat_compile

EXAMPLES = Path(__file__).parents[2] / "examples" / "models"
RNG_SEED = 0


def rand(*shape, low=-2.0, high=2.0, dtype=np.float32):
    return np.random.default_rng(RNG_SEED + len(shape)).uniform(low, high, shape).astype(dtype)


def const(array, dtype=np.int64):
    return np.asarray(array, dtype=dtype)


@dataclass
class Case:
    """One node; `inputs` are graph inputs, `constants` initializers (both in node-input order by name)."""

    id: str
    op_type: str
    inputs: dict[str, np.ndarray]
    attributes: dict = field(default_factory=dict)
    opset: int = 17
    constants: dict[str, np.ndarray] = field(default_factory=dict)
    order: list[str] | None = None
    outputs: int = 1
    output_type: int = TensorProto.FLOAT
    output_types: list[int] | None = None
    output_shape: list[int] | None = None
    reference: Callable[..., list[np.ndarray]] | None = None
    """numpy reference for opsets onnxruntime no longer runs (it implements opset 7 and later)."""
    onnx_shape_differs: bool = False
    """ONNX shape inference disagrees with onnxruntime (and the dialect) on the output shape."""


def node_model(case: Case) -> onnx.ModelProto:
    order = case.order if case.order is not None else [*case.inputs, *case.constants]
    outputs = [f"y{i}" for i in range(case.outputs)]
    node = helper.make_node(
        case.op_type, order, outputs, name=f"the_{case.op_type.lower()}", **case.attributes
    )
    graph_inputs = [
        helper.make_tensor_value_info(
            name, helper.np_dtype_to_tensor_dtype(array.dtype), array.shape
        )
        for name, array in case.inputs.items()
    ]
    initializers = [numpy_helper.from_array(array, name) for name, array in case.constants.items()]
    types = case.output_types or [case.output_type] * case.outputs
    graph_outputs = [
        helper.make_tensor_value_info(name, t, case.output_shape) for name, t in zip(outputs, types)
    ]
    if helper.find_min_ir_version_for([helper.make_opsetid("", case.opset)]) < 4:
        # Before IR version 4 every initializer is also a graph input.
        graph_inputs += [
            helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
            for name, a in case.constants.items()
        ]
    return make_model(
        helper.make_graph([node], case.id, graph_inputs, graph_outputs, initializers), case.opset
    )


def make_model(graph_proto: onnx.GraphProto, opset: int) -> onnx.ModelProto:
    opsets = [helper.make_opsetid("", opset)]
    model = helper.make_model(graph_proto, opset_imports=opsets)
    model.ir_version = helper.find_min_ir_version_for(opsets)
    # Outputs are declared without shapes; the checker wants them, so let ONNX fill them in.
    return onnx.shape_inference.infer_shapes(model)


def check_against_onnxruntime(
    model: onnx.ModelProto, inputs: dict[str, np.ndarray], onnx_shape_differs=False
) -> None:
    with collect_diagnostics() as diagnostics:
        module = import_model(model)
    warned = any("but ONNX shape inference gives" in d.message for d in diagnostics)
    assert warned == onnx_shape_differs, [d.format() for d in diagnostics]
    ours = run_function(module, list(inputs.values()))
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    reference = session.run(None, inputs)
    assert len(ours) == len(reference)
    for actual, expected in zip(ours, reference):
        assert actual.shape == expected.shape
        assert actual.dtype == expected.dtype
        check = numerics.compare(actual, expected)
        assert check.ok, check


def cumprod_reference(x, axis, exclusive, reverse):
    x = np.flip(x, axis) if reverse else x
    y = np.cumprod(x, axis=axis)
    if exclusive:
        y = np.concatenate(
            [np.ones_like(np.take(y, [0], axis=axis)), np.delete(y, -1, axis=axis)], axis=axis
        )
    return np.flip(y, axis) if reverse else y


X4 = rand(2, 3, 5, 5)
POSITIVE = rand(2, 3, 4, low=0.1, high=3.0)

CASES = [
    # elementwise
    *[
        Case(op, op, {"x": rand(2, 3, 4)})
        for op in ("Relu", "Sigmoid", "Tanh", "Exp", "Neg", "Abs", "Erf", "Softplus", "Softsign")
    ],
    *[Case(op, op, {"x": POSITIVE}) for op in ("Log", "Sqrt", "Reciprocal")],
    Case("HardSwish", "HardSwish", {"x": rand(2, 3, 4, low=-5, high=5)}, opset=14),
    Case("LeakyRelu", "LeakyRelu", {"x": rand(2, 3, 4)}, {"alpha": 0.2}),
    Case("Elu", "Elu", {"x": rand(2, 3, 4)}, {"alpha": 0.7}),
    Case("Selu", "Selu", {"x": rand(2, 3, 4)}),
    Case("Mish", "Mish", {"x": rand(2, 3, 4, low=-5, high=5)}, opset=18),
    Case(
        "HardSigmoid",
        "HardSigmoid",
        {"x": rand(2, 3, 4, low=-5, high=5)},
        {"alpha": 0.3, "beta": 0.4},
    ),
    Case("Gelu", "Gelu", {"x": rand(2, 3, 4)}, opset=20),
    Case("Gelu-tanh", "Gelu", {"x": rand(2, 3, 4)}, {"approximate": "tanh"}, opset=20),
    Case("Clip-opset6-attributes", "Clip", {"x": rand(3, 4)}, {"min": -0.5, "max": 0.5}, opset=6),
    Case(
        "Clip-opset11-inputs",
        "Clip",
        {"x": rand(3, 4)},
        constants={"lo": const(-0.5, np.float32), "hi": const(0.5, np.float32)},
        opset=11,
    ),
    Case(
        "Clip-opset13-max-only",
        "Clip",
        {"x": rand(3, 4)},
        constants={"hi": const(0.5, np.float32)},
        order=["x", "", "hi"],
        opset=13,
    ),
    Case(
        "Clip-runtime-bounds",
        "Clip",
        {"x": rand(3, 4), "lo": const(-0.3, np.float32), "hi": const(0.7, np.float32)},
        opset=13,
    ),
    *[Case(op, op, {"a": rand(2, 3, 4), "b": rand(3, 1)}) for op in ("Add", "Sub", "Mul")],
    Case("Div", "Div", {"a": rand(2, 3, 4), "b": rand(4, low=0.5, high=2)}),
    Case("Pow", "Pow", {"a": POSITIVE, "b": rand(2, 3, 4)}),
    Case("Pow-int-exponent", "Pow", {"a": rand(2, 3)}, constants={"e": const(3, np.int64)}),
    Case(
        "Add-opset6-broadcast-axis",
        "Add",
        {"a": rand(2, 3, 4, 5), "b": rand(3)},
        {"broadcast": 1, "axis": 1},
        opset=6,
        reference=lambda a, b: [a + b.reshape(3, 1, 1)],
    ),
    *[
        Case(op, op, {"a": rand(2, 3), "b": rand(3), "c": rand(1, 3)})
        for op in ("Sum", "Mean", "Max", "Min")
    ],
    Case("PRelu", "PRelu", {"x": X4}, constants={"slope": rand(3, 1, 1)}),
    Case(
        "PRelu-opset6-channel-slope",
        "PRelu",
        {"x": X4},
        constants={"slope": rand(3)},
        opset=6,
        reference=lambda x, slope: [np.where(x >= 0, x, x * slope.reshape(3, 1, 1))],
    ),
    Case(
        "Where",
        "Where",
        {
            "c": np.random.default_rng(1).integers(0, 2, (3, 4)).astype(bool),
            "a": rand(3, 4),
            "b": rand(4),
        },
    ),
    Case("Identity", "Identity", {"x": rand(3, 4)}),
    Case(
        "Dropout-inference-with-mask",
        "Dropout",
        {"x": rand(3, 4)},
        opset=13,
        outputs=2,
        output_types=[TensorProto.FLOAT, TensorProto.BOOL],
    ),
    Case(
        "Cast-to-int32",
        "Cast",
        {"x": rand(3, 4, low=-9, high=9)},
        {"to": TensorProto.INT32},
        output_type=TensorProto.INT32,
    ),
    Case(
        "Cast-to-float",
        "Cast",
        {"x": const([[1, -2], [3, 4]], np.int64)},
        {"to": TensorProto.FLOAT},
    ),
    # contractions, convolution, pooling
    Case("MatMul", "MatMul", {"a": rand(2, 3, 4), "b": rand(4, 5)}),
    Case(
        "Gemm",
        "Gemm",
        {"a": rand(4, 3), "b": rand(5, 4)},
        {"transA": 1, "transB": 1, "alpha": 0.5, "beta": 2.0},
        constants={"c": rand(5)},
    ),
    Case("Gemm-no-bias", "Gemm", {"a": rand(3, 4), "b": rand(4, 5)}),
    Case(
        "Conv",
        "Conv",
        {"x": X4},
        {"pads": [1, 0, 2, 1], "strides": [2, 1]},
        constants={"w": rand(4, 3, 3, 2), "b": rand(4)},
    ),
    Case(
        "Conv-groups-dilations",
        "Conv",
        {"x": rand(1, 4, 9, 9)},
        {"group": 2, "dilations": [2, 2]},
        constants={"w": rand(6, 2, 3, 3)},
    ),
    Case(
        "Conv-depthwise",
        "Conv",
        {"x": rand(1, 4, 6, 6)},
        {"group": 4, "pads": [1, 1, 1, 1]},
        constants={"w": rand(8, 1, 3, 3)},
    ),
    *[
        Case(
            f"Conv-auto-pad-{mode}",
            "Conv",
            {"x": rand(1, 2, 7, 6)},
            {"auto_pad": mode, "strides": [2, 2]},
            constants={"w": rand(3, 2, 4, 3)},
        )
        for mode in ("SAME_UPPER", "SAME_LOWER", "VALID")
    ],
    Case(
        "Conv-1d",
        "Conv",
        {"x": rand(2, 3, 10)},
        {"pads": [2, 1], "strides": [2]},
        constants={"w": rand(4, 3, 3)},
    ),
    Case(
        "ConvTranspose",
        "ConvTranspose",
        {"x": rand(1, 3, 4, 5)},
        constants={"w": rand(3, 2, 3, 3), "b": rand(2)},
    ),
    Case(
        "ConvTranspose-strides-pads-output-padding",
        "ConvTranspose",
        {"x": rand(2, 4, 3, 4)},
        {"strides": [2, 3], "pads": [1, 0, 2, 1], "output_padding": [1, 2]},
        constants={"w": rand(4, 3, 3, 4)},
    ),
    Case(
        "ConvTranspose-groups-dilations",
        "ConvTranspose",
        {"x": rand(1, 4, 5, 5)},
        {"group": 2, "dilations": [2, 1], "strides": [2, 2]},
        constants={"w": rand(4, 3, 2, 3)},
    ),
    Case(
        "ConvTranspose-output-shape",
        "ConvTranspose",
        {"x": rand(1, 2, 4, 4)},
        {"strides": [2, 2], "output_shape": [9, 8]},
        constants={"w": rand(2, 3, 3, 3)},
    ),
    *[
        Case(
            f"ConvTranspose-auto-pad-{mode}",
            "ConvTranspose",
            {"x": rand(1, 2, 3, 4)},
            {"strides": [2, 2], "auto_pad": mode},
            constants={"w": rand(2, 2, 4, 3)},
        )
        for mode in ("SAME_UPPER", "SAME_LOWER", "VALID")
    ],
    Case(
        "ConvTranspose-1d",
        "ConvTranspose",
        {"x": rand(2, 3, 6)},
        {"strides": [3], "pads": [1, 2]},
        constants={"w": rand(3, 2, 4)},
    ),
    Case(
        "Conv-3d-groups-dilations-pads",
        "Conv",
        {"x": rand(2, 4, 7, 6, 5)},
        {"group": 2, "dilations": [2, 1, 1], "strides": [2, 1, 2], "pads": [1, 0, 2, 2, 1, 0]},
        constants={"w": rand(6, 2, 3, 2, 3), "b": rand(6)},
    ),
    Case(
        "Conv-3d-same-lower",
        "Conv",
        {"x": rand(1, 2, 5, 5, 5)},
        {"auto_pad": "SAME_LOWER", "strides": [2, 2, 2]},
        constants={"w": rand(3, 2, 2, 3, 2)},
    ),
    Case(
        "MaxPool-3d-ceil-pads-dilations",
        "MaxPool",
        {"x": rand(2, 3, 8, 7, 6)},
        {
            "kernel_shape": [3, 2, 2],
            "strides": [2, 2, 1],
            "pads": [1, 0, 1, 0, 1, 0],
            "dilations": [2, 1, 2],
            "ceil_mode": 1,
        },
    ),
    *[
        Case(
            f"AveragePool-3d-count-include-pad-{include}",
            "AveragePool",
            {"x": rand(1, 2, 7, 6, 5)},
            {
                "kernel_shape": [3, 3, 2],
                "strides": [2, 2, 2],
                "pads": [1, 1, 0, 1, 0, 1],
                "count_include_pad": include,
                "ceil_mode": 1,
            },
        )
        for include in (0, 1)
    ],
    # The last ceil-mode window would start in the end padding: onnxruntime drops it, ONNX's shape inference does not.
    Case(
        "MaxPool-ceil-window-in-end-padding",
        "MaxPool",
        {"x": rand(1, 2, 7, 6)},
        {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 2, 0], "ceil_mode": 1},
        onnx_shape_differs=True,
    ),
    Case(
        "MaxPool",
        "MaxPool",
        {"x": X4},
        {"kernel_shape": [3, 2], "strides": [2, 2], "pads": [1, 0, 1, 1], "ceil_mode": 1},
        opset=12,
    ),
    Case(
        "MaxPool-dilations",
        "MaxPool",
        {"x": X4},
        {"kernel_shape": [2, 2], "dilations": [2, 2]},
        opset=12,
    ),
    Case(
        "MaxPool-1d-same",
        "MaxPool",
        {"x": rand(2, 3, 9)},
        {"kernel_shape": [3], "strides": [2], "auto_pad": "SAME_UPPER"},
    ),
    Case("AveragePool", "AveragePool", {"x": X4}, {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
    Case(
        "AveragePool-count-include-pad",
        "AveragePool",
        {"x": X4},
        {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1},
    ),
    Case("GlobalAveragePool", "GlobalAveragePool", {"x": X4}),
    Case("GlobalMaxPool", "GlobalMaxPool", {"x": X4}),
    # normalization
    *[
        Case(
            f"BatchNormalization-opset{opset}",
            "BatchNormalization",
            {"x": X4},
            {"epsilon": 1e-3},
            opset=opset,
            constants={"s": rand(3), "b": rand(3), "m": rand(3), "v": rand(3, low=0.5, high=2)},
        )
        for opset in (9, 15)
    ],
    Case(
        "LayerNormalization",
        "LayerNormalization",
        {"x": rand(2, 3, 8)},
        {"axis": -1, "epsilon": 1e-3},
        constants={"s": rand(8), "b": rand(8)},
    ),
    Case(
        "LayerNormalization-axis1-no-bias",
        "LayerNormalization",
        {"x": rand(2, 3, 4)},
        {"axis": 1},
        constants={"s": rand(3, 4)},
    ),
    Case(
        "InstanceNormalization",
        "InstanceNormalization",
        {"x": X4},
        constants={"s": rand(3), "b": rand(3)},
    ),
    Case(
        "GroupNormalization-opset21",
        "GroupNormalization",
        {"x": rand(2, 6, 3, 4)},
        {"num_groups": 3, "epsilon": 1e-3},
        constants={"s": rand(6), "b": rand(6)},
        opset=21,
        output_shape=[2, 6, 3, 4],
    ),
    Case(
        "MeanVarianceNormalization-axes", "MeanVarianceNormalization", {"x": X4}, {"axes": [1, 3]}
    ),
    Case(
        "LRN", "LRN", {"x": rand(2, 5, 3, 3)}, {"size": 3, "alpha": 0.1, "beta": 0.6, "bias": 1.5}
    ),
    Case("Softmax-opset11-coerced-2d", "Softmax", {"x": rand(2, 3, 4)}, {"axis": 1}, opset=11),
    Case("Softmax-opset13", "Softmax", {"x": rand(2, 3, 4)}, {"axis": 1}, opset=13),
    Case("LogSoftmax-opset11", "LogSoftmax", {"x": rand(2, 3, 4)}, opset=11),
    Case("LogSoftmax-opset13", "LogSoftmax", {"x": rand(2, 3, 4)}, {"axis": 0}, opset=13),
    # reductions: axes moved from attribute to input (ReduceSum at 13, the others at 18)
    Case("ReduceSum-opset11-attribute", "ReduceSum", {"x": X4}, {"axes": [1, 3]}, opset=11),
    Case(
        "ReduceSum-opset13-input",
        "ReduceSum",
        {"x": X4},
        {"keepdims": 0},
        constants={"axes": const([1, -1])},
        opset=13,
    ),
    Case(
        "ReduceSum-noop-empty-axes", "ReduceSum", {"x": X4}, {"noop_with_empty_axes": 1}, opset=13
    ),
    Case("ReduceMean-opset17-attribute", "ReduceMean", {"x": X4}, {"axes": [2, 3]}, opset=17),
    Case(
        "ReduceMean-opset18-input",
        "ReduceMean",
        {"x": X4},
        constants={"axes": const([2, 3])},
        opset=18,
    ),
    Case("ReduceMax-opset21-all-axes", "ReduceMax", {"x": X4}, {"keepdims": 0}, opset=21),
    Case("ReduceMin-opset13-attribute", "ReduceMin", {"x": X4}, {"axes": [1]}, opset=13),
    Case(
        "ReduceMin-int",
        "ReduceMin",
        {"x": const(np.arange(24).reshape(2, 3, 4) % 7 - 3, np.int32)},
        constants={"axes": const([0, 2])},
        opset=18,
        output_type=TensorProto.INT32,
    ),
    Case("ReduceL1", "ReduceL1", {"x": X4}, {"axes": [2, 3], "keepdims": 0}, opset=17),
    Case("ReduceL2", "ReduceL2", {"x": X4}, constants={"axes": const([-1])}, opset=18),
    Case("ReduceSumSquare", "ReduceSumSquare", {"x": X4}, {"axes": [0]}, opset=13),
    Case("ReduceLogSum", "ReduceLogSum", {"x": POSITIVE}, {"axes": [1]}, opset=13),
    Case(
        "ReduceLogSumExp",
        "ReduceLogSumExp",
        {"x": rand(2, 3, 4, low=-50, high=90)},
        {"axes": [0, 2], "keepdims": 0},
        opset=13,
    ),
    Case(
        "ReduceLogSumExp-keepdims",
        "ReduceLogSumExp",
        {"x": X4},
        constants={"axes": const([1])},
        opset=18,
    ),
    # shapes and data movement
    Case("Reshape-zero-and-minus-one", "Reshape", {"x": X4}, constants={"s": const([0, -1, 5])}),
    Case("Flatten", "Flatten", {"x": X4}, {"axis": 2}),
    Case("Squeeze-opset11-attribute", "Squeeze", {"x": rand(2, 1, 3, 1)}, {"axes": [1]}, opset=11),
    Case(
        "Squeeze-opset13-input",
        "Squeeze",
        {"x": rand(2, 1, 3, 1)},
        constants={"axes": const([-1])},
        opset=13,
    ),
    Case("Squeeze-all", "Squeeze", {"x": rand(2, 1, 3, 1)}, opset=13),
    Case("Unsqueeze-opset11-attribute", "Unsqueeze", {"x": rand(2, 3)}, {"axes": [0, 3]}, opset=11),
    Case(
        "Unsqueeze-opset21-input",
        "Unsqueeze",
        {"x": rand(2, 3)},
        constants={"axes": const([1, -1])},
        opset=21,
    ),
    Case("Transpose", "Transpose", {"x": X4}, {"perm": [0, 2, 3, 1]}),
    Case("Transpose-default-reverses", "Transpose", {"x": rand(2, 3, 4)}),
    Case("Concat", "Concat", {"a": rand(2, 3), "b": rand(2, 5)}, {"axis": -1}),
    Case(
        "Split-opset11-attribute",
        "Split",
        {"x": rand(6, 4)},
        {"axis": 0, "split": [1, 5]},
        opset=11,
        outputs=2,
    ),
    Case(
        "Split-opset13-input",
        "Split",
        {"x": rand(6, 4)},
        {"axis": 1},
        constants={"s": const([3, 1])},
        opset=13,
        outputs=2,
    ),
    Case("Split-opset13-even", "Split", {"x": rand(6, 4)}, opset=13, outputs=3),
    Case(
        "Split-opset18-num-outputs",
        "Split",
        {"x": rand(7, 4)},
        {"num_outputs": 3},
        opset=18,
        outputs=3,
    ),
    Case(
        "Slice-opset9-attributes",
        "Slice",
        {"x": X4},
        {"starts": [1, -3], "ends": [3, 100], "axes": [1, 3]},
        opset=9,
    ),
    Case(
        "Slice-opset13-inputs-negative-step",
        "Slice",
        {"x": X4},
        opset=13,
        constants={
            "st": const([4, 0]),
            "en": const([0, 2]),
            "ax": const([2, 0]),
            "sp": const([-2, 1]),
        },
    ),
    Case(
        "Pad-opset9-attributes",
        "Pad",
        {"x": rand(2, 3)},
        {"pads": [0, 1, 1, 2], "value": 1.5},
        opset=9,
    ),
    Case(
        "Pad-opset11-reflect",
        "Pad",
        {"x": rand(1, 2, 4, 4)},
        {"mode": "reflect"},
        constants={"p": const([0, 0, 1, 2, 0, 0, 2, 1])},
        opset=11,
    ),
    Case(
        "Pad-opset13-edge",
        "Pad",
        {"x": rand(3, 4)},
        {"mode": "edge"},
        constants={"p": const([1, 0, 0, 2])},
        opset=13,
    ),
    Case(
        "Pad-opset18-axes-value",
        "Pad",
        {"x": rand(2, 3, 4)},
        opset=18,
        constants={"p": const([1, -1, 2, 1]), "v": const(-3.0, np.float32), "ax": const([0, 2])},
    ),
    Case(
        "Pad-opset19-wrap",
        "Pad",
        {"x": rand(2, 3, 4)},
        {"mode": "wrap"},
        constants={"p": const([0, 2, 5, 1, 4, 1])},
        opset=19,
    ),
    Case(
        "Gather-constant-indices",
        "Gather",
        {"x": rand(5, 4)},
        {"axis": 0},
        constants={"i": const([[0, -1], [2, 2]])},
    ),
    Case(
        "Gather-runtime-indices",
        "Gather",
        {"x": rand(5, 4), "i": const([3, 0, 3], np.int64)},
        {"axis": 1},
        order=["x", "i"],
    ),
    Case("Expand", "Expand", {"x": rand(3, 1)}, constants={"s": const([2, 1, 4])}),
    Case("Tile", "Tile", {"x": rand(2, 3)}, constants={"r": const([2, 3])}),
    Case("DepthToSpace-DCR", "DepthToSpace", {"x": rand(1, 8, 2, 3)}, {"blocksize": 2}),
    Case(
        "DepthToSpace-CRD", "DepthToSpace", {"x": rand(1, 8, 2, 3)}, {"blocksize": 2, "mode": "CRD"}
    ),
    Case("SpaceToDepth", "SpaceToDepth", {"x": rand(1, 2, 4, 6)}, {"blocksize": 2}),
    # comparisons (NaN and ties included: a >= b must stay false where either is NaN)
    *[
        Case(
            op,
            op,
            {
                "a": const([[0.5, np.nan, 1.0], [2.0, -1.0, 1.0]], np.float32),
                "b": const([1.0, np.nan, -1.0], np.float32),
            },
            opset=opset,
            output_type=TensorProto.BOOL,
        )
        for op, opset in [
            ("Equal", 11),
            ("Greater", 9),
            ("Less", 9),
            ("GreaterOrEqual", 12),
            ("LessOrEqual", 12),
        ]
    ],
    Case(
        "Equal-int64",
        "Equal",
        {"a": const([[1, 2], [3, 4]]), "b": const([[1], [4]])},
        output_type=TensorProto.BOOL,
    ),
    Case(
        "Less-opset6-broadcast-axis",
        "Less",
        {"a": rand(2, 3, 4), "b": rand(3)},
        {"broadcast": 1, "axis": 1},
        opset=6,
        output_type=TensorProto.BOOL,
        reference=lambda a, b: [a < b.reshape(3, 1)],
    ),
    Case(
        "Not",
        "Not",
        {"x": const([[True, False], [False, False]], np.bool_)},
        output_type=TensorProto.BOOL,
    ),
    # reductions with an index or a running result
    Case(
        "ReduceProd-opset13-axes-attribute",
        "ReduceProd",
        {"x": rand(2, 3, 4, low=0.5, high=1.5)},
        {"axes": [1], "keepdims": 0},
        opset=13,
    ),
    Case(
        "ReduceProd-opset18-axes-input",
        "ReduceProd",
        {"x": rand(2, 3, 4, low=0.5, high=1.5)},
        constants={"axes": const([0, -1])},
        opset=18,
    ),
    Case(
        "ReduceProd-opset18-all-axes", "ReduceProd", {"x": rand(2, 3, low=0.5, high=1.5)}, opset=18
    ),
    Case("ArgMax", "ArgMax", {"x": rand(3, 4, 5)}, {"axis": 1}, output_type=TensorProto.INT64),
    Case(
        "ArgMax-negative-axis-no-keepdims",
        "ArgMax",
        {"x": rand(3, 4, 5)},
        {"axis": -1, "keepdims": 0},
        output_type=TensorProto.INT64,
    ),
    *[
        Case(
            f"ArgMax-ties-select-last-{last}",
            "ArgMax",
            {"x": const([[1, 3, 3, 0], [2, 2, 2, 2]], np.int32)},
            {"axis": 1, "select_last_index": last},
            opset=12,
            output_type=TensorProto.INT64,
        )
        for last in (0, 1)
    ],
    *[
        Case(
            f"CumSum-exclusive-{exclusive}-reverse-{reverse}",
            "CumSum",
            {"x": rand(3, 4)},
            {"exclusive": exclusive, "reverse": reverse},
            constants={"axis": const(1)},
            opset=14,
        )
        for exclusive in (0, 1)
        for reverse in (0, 1)
    ],
    Case(
        "CumSum-int32-negative-axis",
        "CumSum",
        {"x": const(np.arange(12).reshape(3, 4), np.int32)},
        constants={"axis": const(-2, np.int32)},
        opset=11,
        output_type=TensorProto.INT32,
    ),
    # math, logic and bitwise operators
    *[
        Case(
            f"Mod-fmod-{fmod}-{np.dtype(dtype).name}",
            "Mod",
            {
                "a": const([[-7, 7, -7, 7, 0, -9], [5, -5, 6, -6, 3, 9]], dtype),
                "b": const([3, -3, -3, 3, 2, 9], dtype),
            },
            {"fmod": fmod},
            opset=13,
            output_type=helper.np_dtype_to_tensor_dtype(np.dtype(dtype)),
        )
        for fmod in (0, 1)
        for dtype in (np.int32, np.int64, np.int8)
    ],
    Case(
        "Mod-uint32-large",
        "Mod",
        {
            "a": const([4_000_000_000, 17, 3_000_000_001], np.uint32),
            "b": const([7, 4_000_000_000, 10], np.uint32),
        },
        opset=13,
        output_type=TensorProto.UINT32,
    ),
    Case(
        "Mod-float-fmod",
        "Mod",
        {"a": rand(3, 4, low=-9, high=9), "b": rand(4, low=0.5, high=3)},
        {"fmod": 1},
        opset=13,
    ),
    Case(
        "Mod-float-python-sign",
        "Mod",
        {
            "a": const([-7.5, 7.5, -7.5, 7.5, 0.0], np.float32),
            "b": const([2.0, -2.0, -2.0, 2.0, 3.0], np.float32),
        },
        opset=13,
        reference=lambda a, b: [np.mod(a, b)],
    ),
    *[
        Case(
            op,
            op,
            {
                "a": const([[True, False, True], [False, False, True]], np.bool_),
                "b": const([True, False, False], np.bool_),
            },
            output_type=TensorProto.BOOL,
        )
        for op in ("And", "Or", "Xor")
    ],
    *[
        Case(
            f"{op}-{np.dtype(dtype).name}",
            op,
            {
                "a": const([[-1, 5, 12], [255, 0, 7]]).astype(dtype),
                "b": const([3, -6, 10]).astype(dtype),
            },
            opset=18,
            output_type=helper.np_dtype_to_tensor_dtype(np.dtype(dtype)),
        )
        for op in ("BitwiseAnd", "BitwiseOr", "BitwiseXor")
        for dtype in (np.int32, np.uint8, np.uint64)
    ],
    *[
        Case(
            f"BitwiseNot-{np.dtype(dtype).name}",
            "BitwiseNot",
            {"x": const([[-1, 5, 12], [255, 0, 7]]).astype(dtype)},
            opset=18,
            output_type=helper.np_dtype_to_tensor_dtype(np.dtype(dtype)),
        )
        for dtype in (np.int8, np.uint16, np.int64)
    ],
    *[
        Case(
            f"BitShift-{direction}-{np.dtype(dtype).name}",
            "BitShift",
            {"a": const([[1, 200, 255], [16, 3, 128]], dtype), "b": const([1, 7, 0], dtype)},
            {"direction": direction},
            opset=11,
            output_type=helper.np_dtype_to_tensor_dtype(np.dtype(dtype)),
        )
        for direction in ("LEFT", "RIGHT")
        for dtype in (np.uint8, np.uint64)
    ],
    *[
        Case(op, op, {"x": rand(2, 3, 4, low=-3, high=3)})
        for op in ("Sin", "Cos", "Tan", "Atan", "Sinh", "Cosh", "Asinh")
    ],
    *[Case(op, op, {"x": rand(2, 3, 4, low=-0.99, high=0.99)}) for op in ("Asin", "Acos", "Atanh")],
    Case("Acosh", "Acosh", {"x": rand(2, 3, 4, low=1, high=9)}),
    *[
        Case(
            op,
            op,
            {"x": const([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.2, 3.7, np.inf, np.nan], np.float32)},
        )
        for op in ("Floor", "Ceil", "Round")
    ],
    Case("Sign", "Sign", {"x": const([-2.5, 0.0, -0.0, 3.0, np.nan, -np.inf], np.float32)}),
    Case(
        "Sign-int32",
        "Sign",
        {"x": const([-(2**31), -1, 0, 7], np.int32)},
        output_type=TensorProto.INT32,
    ),
    Case(
        "IsNaN",
        "IsNaN",
        {"x": const([1.0, np.nan, np.inf, -np.nan], np.float32)},
        output_type=TensorProto.BOOL,
    ),
    *[
        Case(
            f"IsInf-{positive}-{negative}",
            "IsInf",
            {"x": const([1.0, np.nan, np.inf, -np.inf], np.float32)},
            {"detect_positive": positive, "detect_negative": negative},
            output_type=TensorProto.BOOL,
        )
        for positive, negative in ((1, 1), (1, 0), (0, 1), (0, 0))
    ],
    Case("Celu", "Celu", {"x": rand(2, 3, 4, low=-5, high=5)}, {"alpha": 1.7}, opset=12),
    Case("ThresholdedRelu", "ThresholdedRelu", {"x": rand(2, 3, 4)}, {"alpha": 0.4}, opset=10),
    Case("Shrink", "Shrink", {"x": rand(2, 3, 4)}, {"lambd": 0.7, "bias": 0.2}, opset=9),
    Case(
        "Swish",
        "Swish",
        {"x": rand(2, 3, 4, low=-5, high=5)},
        {"alpha": 0.5},
        opset=24,
        reference=lambda x: [x / (1 + np.exp(-0.5 * x))],
    ),
    Case(
        "Hardmax",
        "Hardmax",
        {"x": const([[[1, 3, 3], [0, -1, 2]], [[5, 5, 5], [2, 1, 0]]], np.float32)},
        {"axis": 1},
        opset=13,
    ),
    Case("Hardmax-opset11-2d", "Hardmax", {"x": rand(2, 3, 4)}, {"axis": 1}, opset=11),
    *[
        Case(
            f"ArgMin-select-last-{last}",
            "ArgMin",
            {"x": const([[1, -(2**31), -(2**31), 0], [2, 2, 2, 2]], np.int32)},
            {"axis": 1, "select_last_index": last},
            opset=12,
            output_type=TensorProto.INT64,
        )
        for last in (0, 1)
    ],
    Case(
        "ArgMin-float-no-keepdims",
        "ArgMin",
        {"x": rand(3, 4, 5)},
        {"axis": -1, "keepdims": 0},
        output_type=TensorProto.INT64,
    ),
    *[
        Case(
            f"CumProd-exclusive-{exclusive}-reverse-{reverse}",
            "CumProd",
            {"x": rand(3, 4)},
            {"exclusive": exclusive, "reverse": reverse},
            constants={"axis": const(1)},
            opset=26,
            reference=lambda x, axis, e=exclusive, r=reverse: [cumprod_reference(x, 1, e, r)],
        )
        for exclusive in (0, 1)
        for reverse in (0, 1)
    ],
    *[
        Case(f"LpNormalization-p{p}", "LpNormalization", {"x": rand(2, 3, 4)}, {"axis": 1, "p": p})
        for p in (1, 2)
    ],
    Case(
        "LpPool-2d-p2-pads-strides",
        "LpPool",
        {"x": X4},
        {"kernel_shape": [3, 2], "strides": [2, 1], "pads": [1, 0, 1, 1]},
        opset=11,
    ),
    Case(
        "LpPool-2d-p3-same-upper",
        "LpPool",
        {"x": X4},
        {"kernel_shape": [2, 2], "p": 3, "auto_pad": "SAME_UPPER"},
        opset=11,
    ),
    Case(
        "LpPool-2d-ceil-dilations",
        "LpPool",
        {"x": X4},
        {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1, "dilations": [1, 2]},
        opset=18,
    ),
    Case(
        "LpPool-1d", "LpPool", {"x": rand(2, 3, 7)}, {"kernel_shape": [3], "strides": [2]}, opset=11
    ),
    Case(
        "ReduceLogSumExp-infinities",
        "ReduceLogSumExp",
        {
            "x": const(
                [[1, np.inf, 2], [1, 2, 3], [-np.inf, -np.inf, -np.inf], [-np.inf, 0, 1]],
                np.float32,
            )
        },
        {"axes": [1], "keepdims": 0},
        opset=13,
    ),
    Case(
        "LpPool-3d",
        "LpPool",
        {"x": rand(1, 2, 4, 5, 5)},
        {"kernel_shape": [2, 3, 2], "pads": [1, 0, 1, 0, 1, 1]},
        opset=11,
    ),
    # indexing and data movement
    Case(
        "OneHot-axis-1-negative-and-out-of-range",
        "OneHot",
        {"i": const([[0, -1, 5], [2, 9, -4]])},
        {"axis": 1},
        opset=11,
        constants={"depth": const(5), "values": const([-2.0, 3.5], np.float32)},
    ),
    Case(
        "OneHot-float-indices",
        "OneHot",
        {"i": const([[-1.0, 0.0, 3.0], [2.0, -4.0, 7.0]], np.float32)},
        opset=11,
        constants={"depth": const(4.0, np.float32), "values": const([0, 1], np.float32)},
    ),
    Case(
        "Trilu-upper-k-constant", "Trilu", {"x": rand(2, 4, 5)}, constants={"k": const(1)}, opset=14
    ),
    Case(
        "Trilu-lower-k-runtime",
        "Trilu",
        {"x": rand(3, 6, 4), "k": const(-1)},
        {"upper": 0},
        opset=14,
    ),
    Case(
        "Trilu-lower-int32",
        "Trilu",
        {"x": const(np.arange(12).reshape(3, 4), np.int32)},
        {"upper": 0},
        opset=14,
        output_type=TensorProto.INT32,
    ),
    Case(
        "GatherElements-negative-indices",
        "GatherElements",
        {"x": rand(3, 4), "i": const([[0, -1, 2], [1, 1, -4]])},
        {"axis": 1},
    ),
    Case(
        "GatherND-batch-dims",
        "GatherND",
        {"x": rand(2, 3, 4, 5), "i": const([[[1, -1], [0, 2]], [[2, 3], [0, 0]]])},
        {"batch_dims": 1},
        opset=13,
    ),
    Case("GatherND-slices", "GatherND", {"x": rand(3, 4, 2), "i": const([[2], [-3]])}, opset=13),
    *[
        Case(
            f"ScatterElements-{reduction}",
            "ScatterElements",
            {"x": rand(3, 4), "i": const([[1, 0, 1], [-1, 2, 2]]), "u": rand(2, 3)},
            {"axis": 1, "reduction": reduction},
            opset=18,
        )
        for reduction in ("none", "add", "mul", "max", "min")
    ],
    Case(
        "ScatterElements-int64-axis0",
        "ScatterElements",
        {
            "x": const(np.arange(12).reshape(3, 4)),
            "i": const([[2, 0, 1, 1]]),
            "u": const([[10, 20, 30, 40]]),
        },
        output_type=TensorProto.INT64,
    ),
    Case(
        "ScatterElements-indices-smaller-than-data",
        "ScatterElements",
        {"x": rand(3, 5), "i": const([[4, 0], [-1, 1]]), "u": rand(2, 2)},
        {"axis": 1, "reduction": "add"},
        opset=18,
    ),
    Case(
        "ScatterND-elements",
        "ScatterND",
        {"x": rand(4, 3), "i": const([[1, 2], [3, 0], [0, -1]]), "u": rand(3)},
        opset=13,
    ),
    Case(
        "Scatter-opset9",
        "Scatter",
        {"x": rand(3, 3), "i": const([[1, 0, 2]]), "u": rand(1, 3)},
        opset=9,
    ),
    *[
        Case(
            f"ScatterND-{reduction}",
            "ScatterND",
            {"x": rand(4, 3, 2), "i": const([[1, 2], [3, 0], [1, 2]]), "u": rand(3, 2)},
            {"reduction": reduction},
            opset=18,
        )
        for reduction in ("add", "mul", "max", "min")
    ],
    Case(
        "ScatterND-slices",
        "ScatterND",
        {"x": rand(4, 3, 2), "i": const([[3], [-4]]), "u": rand(2, 3, 2)},
        opset=13,
    ),
    Case(
        "MaxUnpool",
        "MaxUnpool",
        {"x": rand(1, 2, 2, 2), "i": const([[[[5, 7], [13, 15]], [[16, 19], [25, 30]]]])},
        {"kernel_shape": [2, 2], "strides": [2, 2]},
        opset=11,
    ),
    Case(
        "ReverseSequence-time-major",
        "ReverseSequence",
        {"x": rand(4, 3, 2), "l": const([4, 1, 3])},
        {"time_axis": 0, "batch_axis": 1},
        opset=10,
    ),
    Case(
        "ReverseSequence-batch-major",
        "ReverseSequence",
        {"x": rand(3, 4), "l": const([2, 4, 1])},
        {"time_axis": 1, "batch_axis": 0},
        opset=10,
    ),
    Case(
        "Compress-axis",
        "Compress",
        {"x": rand(3, 4)},
        {"axis": 1},
        constants={"c": const([1, 0, 1], np.bool_)},
        opset=11,
    ),
    Case(
        "Compress-flattened",
        "Compress",
        {"x": rand(2, 3)},
        constants={"c": const([0, 1, 1, 0, 1], np.bool_)},
        opset=11,
    ),
    Case(
        "EyeLike-k-dtype",
        "EyeLike",
        {"x": rand(3, 5)},
        {"k": 1, "dtype": TensorProto.INT32},
        opset=9,
        output_type=TensorProto.INT32,
    ),
    Case(
        "CenterCropPad",
        "CenterCropPad",
        {"x": rand(5, 4, 3)},
        {"axes": [0, 1]},
        constants={"s": const([3, 7])},
        opset=18,
    ),
    Case(
        "NonZero-constant",
        "NonZero",
        {},
        constants={"x": const([[1, 0, 3], [0, 0, 2]], np.float32)},
        opset=13,
        output_type=TensorProto.INT64,
    ),
    Case(
        "NonMaxSuppression-constant",
        "NonMaxSuppression",
        {},
        opset=11,
        output_type=TensorProto.INT64,
        constants={
            "boxes": const(
                [[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 0.9, 1, -0.1], [0, 10, 1, 11], [1, 1, 0, 0]]],
                np.float32,
            ),
            "scores": const([[[0.9, 0.75, 0.6, 0.95, 0.5], [0.3, 0.2, 0.9, 0.1, 0.9]]], np.float32),
            "limit": const([3]),
            "iou": const([0.4], np.float32),
            "score": const([0.15], np.float32),
        },
    ),
    Case(
        "Unique-constant-unsorted",
        "Unique",
        {},
        {"sorted": 0},
        constants={"x": const([2, 1, 1, 3, 4, 3], np.float32)},
        opset=11,
        outputs=4,
        output_types=[TensorProto.FLOAT] + [TensorProto.INT64] * 3,
    ),
    *[
        Case(
            f"TopK-largest-{largest}",
            "TopK",
            {"x": const([[3, 1, 3, 2, 1], [0, 5, 5, 5, 1]], np.float32)},
            {"axis": 1, "largest": largest},
            constants={"k": const([3])},
            opset=11,
            outputs=2,
            output_types=[TensorProto.FLOAT, TensorProto.INT64],
        )
        for largest in (0, 1)
    ],
    Case(
        "TopK-opset1-attribute",
        "TopK",
        {"x": rand(4, 5)},
        {"k": 2, "axis": 0},
        opset=9,
        outputs=2,
        output_types=[TensorProto.FLOAT, TensorProto.INT64],
    ),
    Case(
        "Einsum-batch-matmul",
        "Einsum",
        {"a": rand(2, 3, 4), "b": rand(2, 4, 5)},
        {"equation": "bij,bjk->bik"},
        opset=12,
    ),
    Case(
        "Einsum-attention-scores",
        "Einsum",
        {"q": rand(2, 3, 4, 8), "k": rand(2, 3, 5, 8)},
        {"equation": "bhqd,bhkd->bhqk"},
        opset=12,
    ),
    Case(
        "Einsum-chain-implicit",
        "Einsum",
        {"a": rand(2, 3), "b": rand(3, 4), "c": rand(4, 2)},
        {"equation": "ij,jk,kl"},
        opset=12,
    ),
    Case(
        "Einsum-diagonal-ellipsis",
        "Einsum",
        {"a": rand(2, 3, 3)},
        {"equation": "...ii->...i"},
        opset=12,
    ),
    Case(
        "Einsum-outer-and-sum",
        "Einsum",
        {"a": rand(3), "b": rand(4, 2)},
        {"equation": "i,jk->ij"},
        opset=12,
    ),
    Case(
        "Resize-nearest-asymmetric-floor",
        "Resize",
        {"x": rand(1, 2, 3, 4)},
        {"coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"},
        constants={"roi": const([], np.float32), "scales": const([1, 1, 2, 1.5], np.float32)},
        opset=13,
    ),
    Case(
        "Resize-nearest-half-pixel-downsample",
        "Resize",
        {"x": rand(1, 1, 5, 7)},
        constants={"roi": const([], np.float32), "scales": const([1, 1, 0.6, 0.5], np.float32)},
        opset=13,
    ),
    Case(
        "Resize-linear-sizes",
        "Resize",
        {"x": rand(1, 2, 4, 5)},
        {"mode": "linear"},
        constants={
            "roi": const([], np.float32),
            "scales": const([], np.float32),
            "sizes": const([1, 2, 7, 3]),
        },
        opset=13,
    ),
    Case(
        "Resize-linear-align-corners",
        "Resize",
        {"x": rand(2, 3, 4)},
        {"mode": "linear", "coordinate_transformation_mode": "align_corners"},
        constants={"roi": const([], np.float32), "scales": const([1, 1, 2.5], np.float32)},
        opset=13,
    ),
    Case(
        "Resize-cubic-pytorch-half-pixel",
        "Resize",
        {"x": rand(1, 1, 4, 4)},
        {"mode": "cubic", "coordinate_transformation_mode": "pytorch_half_pixel"},
        constants={"roi": const([], np.float32), "scales": const([1, 1, 1.75, 0.75], np.float32)},
        opset=13,
    ),
    Case(
        "Resize-cubic-exclude-outside",
        "Resize",
        {"x": rand(1, 1, 5, 3)},
        {"mode": "cubic", "exclude_outside": 1, "cubic_coeff_a": -0.5},
        constants={"roi": const([], np.float32), "scales": const([1, 1, 0.8, 2], np.float32)},
        opset=13,
    ),
    Case(
        "Resize-linear-antialias-axes",
        "Resize",
        {"x": rand(1, 2, 8, 9)},
        {"mode": "linear", "antialias": 1, "axes": [3, 2]},
        constants={"roi": const([], np.float32), "scales": const([0.4, 0.5], np.float32)},
        opset=18,
    ),
    Case(
        "Resize-nearest-not-larger",
        "Resize",
        {"x": rand(1, 1, 4, 6)},
        {"axes": [2, 3], "keep_aspect_ratio_policy": "not_larger"},
        constants={
            "roi": const([], np.float32),
            "scales": const([], np.float32),
            "sizes": const([7, 8]),
        },
        opset=18,
    ),
    Case(
        "Resize-tf-crop-and-resize",
        "Resize",
        {"x": rand(1, 1, 4, 4)},
        {
            "mode": "linear",
            "coordinate_transformation_mode": "tf_crop_and_resize",
            "extrapolation_value": 5.0,
        },
        constants={
            "roi": const([0, 0, -0.2, 0.3, 1, 1, 0.7, 1.4], np.float32),
            "scales": const([], np.float32),
            "sizes": const([1, 1, 3, 5]),
        },
        opset=13,
    ),
    # onnxruntime truncates uint8 interpolations; ONNX's reference rounds them to nearest.
    Case(
        "Resize-linear-uint8",
        "Resize",
        {"x": const(np.arange(0, 240, 20).reshape(1, 1, 3, 4), np.uint8)},
        {"mode": "linear"},
        constants={"roi": const([], np.float32), "scales": const([1, 1, 1.5, 1.75], np.float32)},
        opset=13,
        output_type=TensorProto.UINT8,
        reference=lambda x, roi, scales: ReferenceEvaluator(
            helper.make_node("Resize", ["x", "roi", "scales"], ["y"], mode="linear")
        ).run(None, {"x": x, "roi": roi, "scales": scales}),
    ),
    Case(
        "Resize-nearest-int32-sizes",
        "Resize",
        {"x": const(np.arange(12).reshape(1, 3, 4), np.int32)},
        {"nearest_mode": "ceil"},
        constants={
            "roi": const([], np.float32),
            "scales": const([], np.float32),
            "sizes": const([1, 5, 3]),
        },
        opset=13,
        output_type=TensorProto.INT32,
    ),
    Case(
        "Resize-opset10-nearest",
        "Resize",
        {"x": rand(1, 1, 5, 4)},
        constants={"scales": const([1, 1, 0.6, 1.5], np.float32)},
        opset=10,
    ),
    Case(
        "Resize-opset11-tf-half-pixel-for-nn",
        "Resize",
        {"x": rand(1, 1, 3, 5)},
        {"coordinate_transformation_mode": "tf_half_pixel_for_nn"},
        constants={"roi": const([], np.float32), "scales": const([1, 1, 1.7, 0.6], np.float32)},
        opset=11,
    ),
    Case(
        "Upsample-opset6-attributes",
        "Upsample",
        {"x": rand(1, 2, 2, 3)},
        {"height_scale": 2.0, "width_scale": 3.0},
        opset=6,
        output_shape=[1, 2, 4, 9],
        reference=lambda x: [np.repeat(np.repeat(x, 2, axis=2), 3, axis=3)],
    ),
    Case(
        "Upsample-nearest",
        "Upsample",
        {"x": rand(1, 2, 2, 3)},
        constants={"scales": const([1, 1, 2, 3], np.float32)},
        opset=9,
    ),
    Case(
        "Upsample-linear",
        "Upsample",
        {"x": rand(1, 2, 3, 3)},
        {"mode": "linear"},
        constants={"scales": const([1, 1, 2, 2], np.float32)},
        opset=9,
    ),
    *[
        Case(
            f"GridSample-{mode}-{padding}-align-{align}",
            "GridSample",
            {"x": rand(2, 3, 4, 5), "g": rand(2, 3, 6, 2, low=-1.3, high=1.3)},
            {"mode": mode, "padding_mode": padding, "align_corners": align},
            opset=20,
        )
        for mode, padding, align in (
            ("linear", "zeros", 0),
            ("nearest", "border", 1),
            ("cubic", "reflection", 0),
            ("linear", "reflection", 1),
            ("nearest", "zeros", 0),
        )
    ],
    # onnxruntime does not clamp a cubic sample's coordinate into the border first; ONNX's reference does.
    Case(
        "GridSample-cubic-border",
        "GridSample",
        {"x": rand(2, 3, 4, 5), "g": rand(2, 3, 6, 2, low=-1.3, high=1.3)},
        {"mode": "cubic", "padding_mode": "border"},
        opset=20,
        reference=lambda x, g: ReferenceEvaluator(
            helper.make_node("GridSample", ["x", "g"], ["y"], mode="cubic", padding_mode="border")
        ).run(None, {"x": x, "g": g}),
    ),
    Case(
        "GridSample-volumetric",
        "GridSample",
        {"x": rand(1, 2, 3, 4, 5), "g": rand(1, 2, 3, 4, 3, low=-1.2, high=1.2)},
        {"mode": "linear", "padding_mode": "border"},
        opset=20,
    ),
    *[
        Case(
            f"AffineGrid-{len(size) - 2}d-align-{align}",
            "AffineGrid",
            {"theta": rand(2, len(size) - 2, len(size) - 1)},
            {"align_corners": align},
            constants={"size": const(size)},
            opset=20,
        )
        for size in ([2, 3, 4, 5], [2, 1, 3, 4, 2])
        for align in (0, 1)
    ],
    Case(
        "Col2Im-strides-pads-dilations",
        "Col2Im",
        {"x": rand(2, 3 * 4, 12)},
        {"strides": [2, 1], "pads": [1, 0, 0, 1], "dilations": [1, 2]},
        constants={"image": const([6, 5]), "block": const([2, 2])},
        opset=18,
    ),
    # quantization (per-tensor and per-channel)
    Case(
        "QuantizeLinear-opset13",
        "QuantizeLinear",
        {"x": rand(2, 3, 4)},
        opset=13,
        constants={"s": const(0.02, np.float32), "z": const(3, np.int8)},
        output_type=TensorProto.INT8,
    ),
    Case(
        "QuantizeLinear-default-uint8",
        "QuantizeLinear",
        {"x": rand(2, 3, low=0, high=4)},
        opset=13,
        constants={"s": const(0.05, np.float32)},
        output_type=TensorProto.UINT8,
    ),
    Case(
        "DequantizeLinear-per-channel",
        "DequantizeLinear",
        {"x": const(np.arange(24).reshape(2, 3, 4) - 12, np.int8)},
        {"axis": 1},
        opset=21,
        constants={"s": const([0.1, 0.2, 0.3], np.float32), "z": const([1, 0, -1], np.int8)},
    ),
    Case(
        "DequantizeLinear-opset23-output-dtype",
        "DequantizeLinear",
        {"x": const(np.arange(12).reshape(3, 4) - 6, np.int8)},
        {"output_dtype": TensorProto.FLOAT},
        opset=23,
        constants={"s": const(0.1, np.float16), "z": const(1, np.int8)},
    ),
    Case(
        "DequantizeLinear-blocked",
        "DequantizeLinear",
        {"x": const(np.arange(30).reshape(3, 10) - 15, np.int8)},
        {"axis": 1, "block_size": 4},
        opset=21,
        constants={
            "s": rand(3, 3, low=0.1, high=0.5),
            "z": const(np.arange(9).reshape(3, 3) - 4, np.int8),
        },
    ),
    Case(
        "QuantizeLinear-blocked",
        "QuantizeLinear",
        {"x": rand(4, 3, 2)},
        {"axis": 0, "block_size": 3},
        opset=21,
        constants={
            "s": rand(2, 3, 2, low=0.01, high=0.05),
            "z": const(np.arange(12).reshape(2, 3, 2), np.uint8),
        },
        output_type=TensorProto.UINT8,
    ),
    # onnxruntime has no QuantizeLinear of an x and a scale of different types.
    Case(
        "QuantizeLinear-opset23-precision",
        "QuantizeLinear",
        {"x": rand(2, 3, 4)},
        {"precision": TensorProto.FLOAT},
        opset=23,
        constants={"s": const(0.02, np.float16), "z": const(3, np.int8)},
        output_type=TensorProto.INT8,
        reference=lambda x, s, z: [
            np.clip(np.rint(x / s.astype(np.float32)) + z, -128, 127).astype(np.int8)
        ],
    ),
    *[
        Case(
            f"AveragePool-dilations-ceil-count-include-pad-{include}",
            "AveragePool",
            {"x": rand(1, 2, 9, 8)},
            {
                "kernel_shape": [3, 2],
                "strides": [2, 3],
                "dilations": [2, 3],
                "pads": [1, 0, 2, 1],
                "ceil_mode": 1,
                "count_include_pad": include,
            },
            opset=19,
        )
        for include in (0, 1)
    ],
    *[
        Case(
            f"MaxPool-indices-storage-order-{order}",
            "MaxPool",
            {"x": np.round(rand(2, 3, 7, 6) * 2) / 2},
            {
                "kernel_shape": [3, 2],
                "strides": [2, 1],
                "dilations": [1, 2],
                "pads": [1, 0, 2, 1],
                "storage_order": order,
            },
            opset=12,
            outputs=2,
            output_types=[TensorProto.FLOAT, TensorProto.INT64],
        )
        for order in (0, 1)
    ],
    Case(
        "AveragePool-1d-dilations",
        "AveragePool",
        {"x": rand(2, 3, 11)},
        {"kernel_shape": [3], "dilations": [2], "pads": [1, 2]},
        opset=19,
    ),
    Case(
        "AveragePool-3d-dilations",
        "AveragePool",
        {"x": rand(1, 2, 6, 7, 5)},
        {"kernel_shape": [2, 2, 2], "dilations": [2, 1, 2], "strides": [1, 2, 1]},
        opset=22,
    ),
    # versions past opset 21
    Case(
        "ConvTranspose-output-shape-past-full-result",
        "ConvTranspose",
        {"x": rand(1, 1, 3, 3)},
        {"strides": [3, 2], "output_shape": [10, 8]},
        constants={"w": rand(1, 2, 3, 3)},
        opset=22,
    ),
    Case(
        "SpaceToDepth-opset28-CRD",
        "SpaceToDepth",
        {"x": rand(1, 2, 4, 6)},
        {"blocksize": 2, "mode": "CRD"},
        opset=28,
        reference=lambda x: [
            x.reshape(1, 2, 2, 2, 3, 2).transpose(0, 1, 3, 5, 2, 4).reshape(1, 8, 2, 3)
        ],
    ),
    Case(
        "CastLike",
        "CastLike",
        {"x": rand(3, 4)},
        constants={"like": np.zeros(0, np.float16)},
        opset=21,
        output_type=TensorProto.FLOAT16,
    ),
    Case(
        "ReduceMax-opset20-bool",
        "ReduceMax",
        {"x": const([[True, False, False], [False, False, False]], np.bool_)},
        {"keepdims": 0},
        constants={"axes": const([1])},
        opset=20,
        output_type=TensorProto.BOOL,
    ),
    Case(
        "ReduceMin-opset20-bool",
        "ReduceMin",
        {"x": const([[True, False, True], [True, True, True]], np.bool_)},
        constants={"axes": const([1])},
        opset=20,
        output_type=TensorProto.BOOL,
    ),
    Case(
        "ReduceMin-int8-extremes",
        "ReduceMin",
        {"x": const([[-128, 5, 127], [3, 127, 0]], np.int8)},
        {"axes": [1]},
        opset=13,
        output_type=TensorProto.INT8,
    ),
    Case(
        "ReduceMin-uint8",
        "ReduceMin",
        {"x": const([[0, 5, 255], [3, 255, 9]], np.uint8)},
        {"axes": [1]},
        opset=13,
        output_type=TensorProto.UINT8,
    ),
    Case(
        "LayerNormalization-mean-inv-std-dev",
        "LayerNormalization",
        {"x": rand(2, 3, 4)},
        {"axis": 1},
        constants={"s": rand(3, 4), "b": rand(3, 4)},
        outputs=3,
    ),
    # transformer building blocks
    Case(
        "RMSNormalization",
        "RMSNormalization",
        {"x": rand(2, 3, 8)},
        {"epsilon": 1e-3},
        constants={"s": rand(8)},
        opset=23,
    ),
    Case(
        "RMSNormalization-axis1",
        "RMSNormalization",
        {"x": rand(2, 3, 4)},
        {"axis": 1},
        constants={"s": rand(3, 4)},
        opset=23,
    ),
    Case(
        "RotaryEmbedding-4d-position-ids",
        "RotaryEmbedding",
        {"x": rand(2, 3, 5, 8), "pos": const([[0, 1, 2, 3, 4], [3, 1, 0, 2, 5]])},
        constants={"cos": rand(6, 4), "sin": rand(6, 4)},
        opset=23,
        order=["x", "cos", "sin", "pos"],
    ),
    Case(
        "RotaryEmbedding-3d-interleaved-partial",
        "RotaryEmbedding",
        {"x": rand(2, 5, 16)},
        {"num_heads": 2, "interleaved": 1, "rotary_embedding_dim": 4},
        constants={"cos": rand(2, 5, 2), "sin": rand(2, 5, 2)},
        opset=23,
    ),
    Case(
        "Attention-4d",
        "Attention",
        {"q": rand(2, 3, 4, 8), "k": rand(2, 3, 6, 8), "v": rand(2, 3, 6, 8)},
        opset=23,
    ),
    Case(
        "Attention-3d-gqa-causal-scale",
        "Attention",
        {"q": rand(2, 4, 36), "k": rand(2, 6, 12), "v": rand(2, 6, 20)},
        {"q_num_heads": 6, "kv_num_heads": 2, "is_causal": 1, "scale": 0.3},
        opset=23,
    ),
    Case(
        "Attention-bool-mask-past-present",
        "Attention",
        {
            "q": rand(1, 2, 3, 4),
            "k": rand(1, 2, 3, 4),
            "v": rand(1, 2, 3, 4),
            "m": np.random.default_rng(3).integers(0, 2, (3, 5)).astype(bool),
            "pk": rand(1, 2, 2, 4),
            "pv": rand(1, 2, 2, 4),
        },
        opset=23,
        outputs=3,
    ),
    Case(
        "Attention-float-mask-softcap-qk-output",
        "Attention",
        {
            "q": rand(2, 2, 3, 4),
            "k": rand(2, 2, 2, 4),
            "v": rand(2, 2, 2, 4),
            "m": rand(2, 1, 3, 5),
            "pk": rand(2, 2, 3, 4),
            "pv": rand(2, 2, 3, 4),
        },
        {"softcap": 1.5, "qk_matmul_output_mode": 2},
        opset=23,
        outputs=4,
    ),
    Case(
        "Attention-opset24-nonpad-causal",
        "Attention",
        {"q": rand(2, 2, 3, 4), "k": rand(2, 2, 5, 4), "v": rand(2, 2, 5, 4), "n": const([5, 3])},
        {"is_causal": 1},
        opset=24,
        order=["q", "k", "v", "", "", "", "n"],
    ),
    # onnxruntime has no opset-25 Attention (sliding windows) yet.
    Case(
        "Attention-opset25-window",
        "Attention",
        {"q": rand(2, 3, 4, 8), "k": rand(2, 3, 6, 8), "v": rand(2, 3, 6, 8)},
        {"is_causal": 1, "left_window_size": 2, "right_window_size": 0},
        opset=25,
        reference=lambda q, k, v: [
            _compute_attention(q, k, v, is_causal=1, left_window_size=2, right_window_size=0)[0]
        ],
    ),
    Case(
        "TensorScatter",
        "TensorScatter",
        {"c": rand(2, 3, 6, 4), "u": rand(2, 3, 2, 4), "w": const([1, 4])},
        opset=24,
    ),
    Case(
        "TensorScatter-circular-axis1",
        "TensorScatter",
        {"c": rand(2, 6, 4), "u": rand(2, 3, 4), "w": const([1, 5])},
        {"mode": "circular", "axis": 1},
        opset=24,
    ),
]


def integers(*shape, dtype=np.uint8, seed=0):
    info = np.iinfo(dtype)
    return np.random.default_rng(seed).integers(info.min, info.max + 1, shape).astype(dtype)


def subgraph(name: str, nodes, inputs, outputs) -> onnx.GraphProto:
    """A body or branch; `inputs` and `outputs` are (name, element type, shape or None)."""
    return helper.make_graph(
        nodes,
        name,
        [helper.make_tensor_value_info(*value) for value in inputs],
        [helper.make_tensor_value_info(*value) for value in outputs],
    )


F = TensorProto.FLOAT
THEN_ADDS = subgraph("then", [helper.make_node("Add", ["x", "x"], ["t"])], [], [("t", F, [2, 3])])
ELSE_MULS = subgraph("else", [helper.make_node("Mul", ["x", "x"], ["e"])], [], [("e", F, [2, 3])])
# (iteration, cond, running sum) -> (cond, sum + x[iteration] * iteration, sum as a scan output)
LOOP_BODY = subgraph(
    "body",
    [
        helper.make_node("Gather", ["x", "i"], ["row"]),
        helper.make_node("Cast", ["i"], ["i_f"], to=F),
        helper.make_node("Mul", ["row", "i_f"], ["scaled"]),
        helper.make_node("Add", ["s", "scaled"], ["s_out"]),
        helper.make_node("Identity", ["s_out"], ["scan"]),
        helper.make_node("Constant", [], ["three"], value=numpy_helper.from_array(const(3))),
        helper.make_node("Less", ["i", "three"], ["c_out"]),
    ],
    [("i", TensorProto.INT64, []), ("c", TensorProto.BOOL, []), ("s", F, [3])],
    [("c_out", TensorProto.BOOL, []), ("s_out", F, [3]), ("scan", F, [3])],
)
# (state, element) -> (state + element, state * element)
SCAN_BODY = subgraph(
    "body",
    [helper.make_node("Add", ["s", "e"], ["s_out"]), helper.make_node("Mul", ["s", "e"], ["y"])],
    [("s", F, [2]), ("e", F, [2])],
    [("s_out", F, [2]), ("y", F, [2])],
)

CASES += [
    # recurrent layers, unrolled (onnxruntime runs layout 0 only; see test_recurrent_batch_first_layout)
    Case(
        "LSTM-bidirectional-peepholes-initial-states",
        "LSTM",
        {"x": rand(4, 3, 5), "h0": rand(2, 3, 4), "c0": rand(2, 3, 4, low=-1)},
        {"direction": "bidirectional", "hidden_size": 4},
        opset=14,
        outputs=3,
        constants={
            "w": rand(2, 16, 5, low=-1, high=1),
            "r": rand(2, 16, 4, low=-1, high=1),
            "b": rand(2, 32),
            "p": rand(2, 12),
        },
        order=["x", "w", "r", "b", "", "h0", "c0", "p"],
    ),
    Case(
        "LSTM-sequence-lens-clip-input-forget",
        "LSTM",
        {"x": rand(4, 3, 5)},
        {"hidden_size": 4, "clip": 0.6, "input_forget": 1},
        opset=14,
        outputs=3,
        constants={
            "w": rand(1, 16, 5),
            "r": rand(1, 16, 4),
            "b": rand(1, 32),
            "l": const([4, 2, 3], np.int32),
        },
    ),
    Case(
        "GRU-linear-before-reset-reverse-runtime-sequence-lens",
        "GRU",
        {"x": rand(5, 3, 2), "l": const([5, 1, 3], np.int32)},
        {"hidden_size": 3, "linear_before_reset": 1, "direction": "reverse"},
        opset=14,
        outputs=2,
        constants={"w": rand(1, 9, 2), "r": rand(1, 9, 3), "b": rand(1, 18)},
        order=["x", "w", "r", "b", "l"],
    ),
    Case(
        "GRU-activations-alpha-beta",
        "GRU",
        {"x": rand(3, 2, 4)},
        {
            "hidden_size": 3,
            "activations": ["HardSigmoid", "LeakyRelu"],
            "activation_alpha": [0.3, 0.1],
            "activation_beta": [0.4],
        },
        opset=14,
        outputs=2,
        constants={"w": rand(1, 9, 4), "r": rand(1, 9, 3)},
    ),
    Case(
        "RNN-bidirectional-relu-affine-empty-sequence",
        "RNN",
        {"x": rand(3, 2, 4), "h0": rand(2, 2, 3)},
        {
            "hidden_size": 3,
            "direction": "bidirectional",
            "activations": ["Relu", "Affine"],
            "activation_alpha": [0.5],
            "activation_beta": [0.25],
        },
        opset=14,
        outputs=2,
        constants={
            "w": rand(2, 3, 4),
            "r": rand(2, 3, 3),
            "b": rand(2, 6),
            "l": const([2, 0], np.int32),
        },
        order=["x", "w", "r", "b", "l", "h0"],
    ),
    # integer operators (exact: the output is compared bit for bit)
    Case(
        "QLinearMatMul-uint8-per-column",
        "QLinearMatMul",
        {"a": integers(3, 7)},
        opset=10,
        output_type=TensorProto.UINT8,
        constants={
            "as": const(0.02, np.float32),
            "az": const(131, np.uint8),
            "b": integers(7, 5, seed=1),
            "bs": const([0.01, 0.02, 0.013, 0.04, 0.005], np.float32),
            "bz": integers(5, seed=2),
            "ys": const(0.3, np.float32),
            "yz": const(120, np.uint8),
        },
    ),
    Case(
        "QLinearMatMul-int8-batched",
        "QLinearMatMul",
        {"a": integers(2, 3, 4, dtype=np.int8)},
        opset=21,
        output_type=TensorProto.INT8,
        constants={
            "as": const(0.1, np.float32),
            "az": const(3, np.int8),
            "b": integers(4, 6, dtype=np.int8, seed=1),
            "bs": const(0.05, np.float32),
            "bz": const(-2, np.int8),
            "ys": const(0.7, np.float32),
            "yz": const(5, np.int8),
        },
    ),
    Case(
        "MatMulInteger-zero-points",
        "MatMulInteger",
        {"a": integers(2, 4, 9)},
        opset=10,
        output_type=TensorProto.INT32,
        constants={
            "b": integers(9, 3, dtype=np.int8, seed=1),
            "az": const(7, np.uint8),
            "bz": const(-3, np.int8),
        },
    ),
    Case(
        "ConvInteger-pads-strides-group",
        "ConvInteger",
        {"x": integers(2, 4, 7, 6)},
        {"pads": [1, 2, 0, 1], "strides": [2, 1], "group": 2},
        opset=10,
        output_type=TensorProto.INT32,
        constants={"w": integers(6, 2, 3, 2, seed=1), "xz": const(100, np.uint8)},
    ),
    Case(
        "QLinearConv-per-channel-bias",
        "QLinearConv",
        {"x": integers(1, 3, 6, 5)},
        {"pads": [1, 1, 1, 1]},
        opset=10,
        output_type=TensorProto.UINT8,
        constants={
            "xs": const(0.05, np.float32),
            "xz": const(128, np.uint8),
            "w": integers(4, 3, 3, 3, dtype=np.int8, seed=1),
            "ws": const([0.004, 0.002, 0.006, 0.003], np.float32),
            "wz": const([0, 0, 0, 0], np.int8),
            "ys": const(0.9, np.float32),
            "yz": const(110, np.uint8),
            "bias": const([-300, 0, 1200, 45], np.int32),
        },
    ),
    Case(
        "DynamicQuantizeLinear",
        "DynamicQuantizeLinear",
        {"x": rand(3, 4, low=-1, high=5)},
        opset=11,
        outputs=3,
        output_types=[TensorProto.UINT8, F, TensorProto.UINT8],
    ),
    # control flow, inlined and unrolled; the subgraphs read the graph input x from the enclosing scope
    Case(
        "If-constant-condition",
        "If",
        {"x": rand(2, 3)},
        {"then_branch": THEN_ADDS, "else_branch": ELSE_MULS},
        opset=13,
        constants={"c": const(False, np.bool_)},
        order=["c"],
    ),
    Case(
        "If-runtime-condition-selects",
        "If",
        {"x": rand(2, 3), "c": const([True], np.bool_)},
        {"then_branch": THEN_ADDS, "else_branch": ELSE_MULS},
        opset=13,
        order=["c"],
    ),
    Case(
        "Scan-reversed-axes",
        "Scan",
        {"s": rand(2), "x": rand(2, 4)},
        {
            "body": SCAN_BODY,
            "num_scan_inputs": 1,
            "scan_input_axes": [1],
            "scan_input_directions": [1],
            "scan_output_axes": [-1],
            "scan_output_directions": [1],
        },
        opset=11,
        outputs=2,
    ),
    Case(
        "Scan-opset8-batch",
        "Scan",
        {"s": rand(3, 2), "x": rand(3, 4, 2)},
        {"body": SCAN_BODY, "num_scan_inputs": 1, "directions": [1]},
        opset=8,
        outputs=2,
        order=["", "s", "x"],
    ),
    # losses
    Case(
        "NegativeLogLikelihoodLoss-weight-ignore-index-mean",
        "NegativeLogLikelihoodLoss",
        {"x": rand(3, 5, 2), "t": const([[0, 4], [2, -1], [-1, 1]])},
        {"ignore_index": -1},
        opset=13,
        constants={"w": rand(5, low=0.1, high=1)},
    ),
    Case(
        "NegativeLogLikelihoodLoss-none",
        "NegativeLogLikelihoodLoss",
        {"x": rand(3, 4, 2, 2), "t": const([[[0, 3], [1, 2]]] * 3)},
        {"reduction": "none"},
        opset=13,
    ),
    Case(
        "SoftmaxCrossEntropyLoss-sum-ignore-index-log-prob",
        "SoftmaxCrossEntropyLoss",
        {"x": rand(4, 3), "t": const([2, 0, 1, 1], np.int32)},
        {"reduction": "sum", "ignore_index": 1},
        opset=13,
        outputs=2,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_operator_matches_onnxruntime(case: Case):
    if case.reference is None:
        check_against_onnxruntime(node_model(case), case.inputs, case.onnx_shape_differs)
        return
    ours = run_function(import_model(node_model(case)), list(case.inputs.values()))
    for actual, expected in zip(
        ours, case.reference(*case.inputs.values(), *case.constants.values())
    ):
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "trip_count, condition, iterations",
    [(5, True, 4), (3, True, 3), (None, True, 4), (2, False, 0)],
)
def test_loop_unrolls_against_onnxruntime(trip_count, condition, iterations):
    """Loop with a trip count, a condition the body computes from the iteration number, or both."""
    x, s = rand(6, 3), rand(3)
    constants = {}
    if trip_count is not None:
        constants["m"] = const(trip_count)
    if condition is not None:
        constants["c"] = const(condition, np.bool_)
    node = helper.make_node(
        "Loop",
        ["m" if "m" in constants else "", "c" if "c" in constants else "", "s"],
        ["y0", "y1"],
        body=LOOP_BODY,
    )
    graph_proto = helper.make_graph(
        [node],
        "loop",
        [helper.make_tensor_value_info("x", F, [6, 3]), helper.make_tensor_value_info("s", F, [3])],
        [
            helper.make_tensor_value_info("y0", F, [3]),
            helper.make_tensor_value_info("y1", F, [iterations, 3]),
        ],
        [numpy_helper.from_array(array, name) for name, array in constants.items()],
    )
    check_against_onnxruntime(make_model(graph_proto, 13), {"x": x, "s": s})


def test_loop_with_a_data_dependent_condition_is_refused():
    body = subgraph(
        "body",
        [
            helper.make_node("Add", ["s", "s"], ["s_out"]),
            helper.make_node("ReduceMax", ["s_out"], ["peak"], keepdims=0),
            helper.make_node(
                "Constant", [], ["ten"], value=numpy_helper.from_array(const(10.0, np.float32))
            ),
            helper.make_node("Less", ["peak", "ten"], ["c_out"]),
        ],
        [("i", TensorProto.INT64, []), ("c", TensorProto.BOOL, []), ("s", F, [3])],
        [("c_out", TensorProto.BOOL, []), ("s_out", F, [3])],
    )
    node = helper.make_node("Loop", ["", "c", "s"], ["y"], body=body, name="grow")
    graph_proto = helper.make_graph(
        [node],
        "loop",
        [helper.make_tensor_value_info("s", F, [3])],
        [helper.make_tensor_value_info("y", F, [3])],
        [numpy_helper.from_array(const(True, np.bool_), "c")],
    )
    with pytest.raises(DiagnosticError) as error:
        import_model(make_model(graph_proto, 13))
    assert (
        "node 'grow' (Loop): the body's condition output depends on run-time values"
        in error_text(error)
    )


def test_for_loop_whose_body_condition_turns_false_is_refused():
    # ONNX ignores the body's condition without a condition input; onnxruntime stops there.
    node = helper.make_node("Loop", ["m", "", "s"], ["y0", "y1"], body=LOOP_BODY, name="for")
    graph_proto = helper.make_graph(
        [node],
        "loop",
        [helper.make_tensor_value_info("x", F, [6, 3]), helper.make_tensor_value_info("s", F, [3])],
        [
            helper.make_tensor_value_info("y0", F, [3]),
            helper.make_tensor_value_info("y1", F, [None, 3]),
        ],
        [numpy_helper.from_array(const(6), "m")],
    )
    with pytest.raises(DiagnosticError) as error:
        import_model(make_model(graph_proto, 13))
    assert (
        "node 'for' (Loop): without a condition input, the body's condition output must stay true"
        in error_text(error)
    )


def test_if_whose_branch_types_depend_on_a_runtime_condition_is_refused():
    wide = subgraph(
        "then", [helper.make_node("Concat", ["x", "x"], ["t"], axis=0)], [], [("t", F, [4, 3])]
    )
    node = helper.make_node(
        "If", ["c"], ["y"], then_branch=wide, else_branch=ELSE_MULS, name="choose"
    )
    graph_proto = helper.make_graph(
        [node],
        "if",
        [
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("x", F, [2, 3]),
        ],
        [helper.make_tensor_value_info("y", F, [None, 3])],
    )
    model = helper.make_model(graph_proto, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(DiagnosticError) as error:
        import_model(model)
    assert (
        "node 'choose' (If): the condition (its branches give values of different types)"
        in error_text(error)
    )
    assert "--bind c=" in error_text(error)
    branch = run_function(import_model(model, bound_inputs={"c": np.array(True)}), [rand(2, 3)])[0]
    np.testing.assert_array_equal(branch, np.concatenate([rand(2, 3)] * 2))


def test_unsupported_operator_in_a_subgraph_names_its_place():
    body = subgraph(
        "else",
        [helper.make_node("Foo", ["x"], ["e"], domain="com.example")],
        [],
        [("e", F, [2, 3])],
    )
    node = helper.make_node(
        "If", ["c"], ["y"], then_branch=THEN_ADDS, else_branch=body, name="choose"
    )
    graph_proto = helper.make_graph(
        [node],
        "if",
        [helper.make_tensor_value_info("x", F, [2, 3])],
        [helper.make_tensor_value_info("y", F, [2, 3])],
        [numpy_helper.from_array(const(False, np.bool_), "c")],
    )
    model = helper.make_model(
        graph_proto,
        opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)],
    )
    with pytest.raises(DiagnosticError) as error:
        import_model(model)
    assert (
        "unsupported ONNX operators in the else_branch of node 'choose' (If): com.example.Foo (node #0)"
        in error_text(error)
    )


def test_recurrent_batch_first_layout():
    """layout = 1 is layout 0 on transposed operands (onnxruntime runs layout 0 only)."""
    x, h0 = rand(3, 4, 5), rand(3, 1, 2)
    w, r, b = rand(1, 8, 5), rand(1, 8, 2), rand(1, 16)

    def model(layout: int) -> onnx.ModelProto:
        node = helper.make_node(
            "LSTM",
            ["x", "w", "r", "b", "", "h0"],
            ["y", "y_h", "y_c"],
            hidden_size=2,
            layout=layout,
        )
        transpose = (lambda shape: [shape[1], shape[0], *shape[2:]]) if layout == 0 else list
        inputs = [
            helper.make_tensor_value_info("x", F, transpose(x.shape)),
            helper.make_tensor_value_info("h0", F, transpose(h0.shape)),
        ]
        outputs = [helper.make_tensor_value_info(name, F, None) for name in ("y", "y_h", "y_c")]
        initializers = [numpy_helper.from_array(a, n) for n, a in (("w", w), ("r", r), ("b", b))]
        return make_model(helper.make_graph([node], "lstm", inputs, outputs, initializers), 14)

    ours = run_function(import_model(model(1)), [x, h0])
    session = onnxruntime.InferenceSession(
        model(0).SerializeToString(), providers=["CPUExecutionProvider"]
    )
    y, y_h, y_c = session.run(None, {"x": x.transpose(1, 0, 2), "h0": h0.transpose(1, 0, 2)})
    for actual, expected in zip(
        ours, [y.transpose(2, 0, 1, 3), y_h.transpose(1, 0, 2), y_c.transpose(1, 0, 2)]
    ):
        np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5)


def shape_chain_model() -> onnx.ModelProto:
    """Shape -> Gather -> Unsqueeze -> Concat -> Reshape, ConstantOfShape, Constant, Size, Range: all import-time constants."""
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Constant", [], ["zero"], value=numpy_helper.from_array(const(0))),
        helper.make_node("Gather", ["shape", "zero"], ["batch"]),
        helper.make_node("Constant", [], ["axes"], value_ints=[0]),
        helper.make_node("Unsqueeze", ["batch", "axes"], ["batch1"]),
        helper.make_node("Constant", [], ["minus_one"], value_ints=[-1]),
        helper.make_node("Concat", ["batch1", "minus_one"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["flat"]),
        helper.make_node("Shape", ["flat"], ["flat_shape"], start=1),
        helper.make_node(
            "ConstantOfShape",
            ["flat_shape"],
            ["ones"],
            value=numpy_helper.from_array(const([1.5], np.float32)),
        ),
        helper.make_node("Size", ["x"], ["size"]),
        helper.make_node("Cast", ["size"], ["size_f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["ones", "size_f"], ["scaled"]),
        helper.make_node("Add", ["flat", "scaled"], ["y"]),
        helper.make_node("Constant", [], ["r0"], value_float=0.0),
        helper.make_node("Constant", [], ["r1"], value_float=3.0),
        helper.make_node("Constant", [], ["r2"], value_float=0.5),
        helper.make_node("Range", ["r0", "r1", "r2"], ["range"]),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])
    outputs = [
        helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 12]),
        helper.make_tensor_value_info("range", TensorProto.FLOAT, [6]),
    ]
    return make_model(helper.make_graph(nodes, "shapes", [x], outputs), 15)


def test_shape_computations_fold_at_import():
    model = shape_chain_model()
    check_against_onnxruntime(model, {"x": rand(2, 3, 4)})
    ops = [op.name for op in import_model(model).walk() if op.name.startswith("graph.")]
    # Only the data path is left: the shape arithmetic became constants.
    assert sorted(set(ops)) == ["graph.add", "graph.constant", "graph.reshape"]


def test_progress_callback_sees_every_node():
    calls = []
    model = shape_chain_model()
    import_loaded_model(model, None, "chain", lambda done, total: calls.append((done, total)))
    total = len(model.graph.node)
    assert calls == [(done, total) for done in range(1, total + 1)]


def test_module_shape_names_and_initializers():
    case = Case("Conv", "Conv", {"image": X4}, constants={"w": rand(4, 3, 3, 3)})
    module = import_model(node_model(case))
    (function,) = [op for op in module.walk() if isinstance(op, func.FuncOp)]
    assert function.sym_name.data == "main"
    assert [arg.name_hint for arg in function.body.block.args] == ["image"]
    assert [str(t) for t in function.function_type.inputs.data] == ["tensor<2x3x5x5xf32>"]
    assert [str(t) for t in function.function_type.outputs.data] == ["tensor<2x4x3x3xf32>"]
    (conv,) = [op for op in module.walk() if isinstance(op, graph.Conv2dOp)]
    assert isinstance(conv.weight.owner, graph.ConstantOp)
    np.testing.assert_array_equal(conv.weight.owner.to_array(), case.constants["w"])


def test_external_data_initializers(tmp_path: Path):
    case = Case("MatMul", "MatMul", {"a": rand(3, 64)}, constants={"w": rand(64, 32)})
    model = node_model(case)
    path = tmp_path / "model.onnx"
    onnx.save(
        model, str(path), save_as_external_data=True, location="weights.bin", size_threshold=0
    )
    assert (tmp_path / "weights.bin").stat().st_size == 64 * 32 * 4
    (ours,) = run_function(import_model(path), [case.inputs["a"]])
    np.testing.assert_allclose(ours, case.inputs["a"] @ case.constants["w"], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "script", ["mlp", "resnet_block", "mobilenet_block", "transformer_encoder"]
)
def test_example_models_check_against_onnxruntime(script: str, tmp_path: Path, capsys):
    path = tmp_path / f"{script}.onnx"
    subprocess.run([sys.executable, str(EXAMPLES / f"{script}.py"), str(path)], check=True)
    args = ziggurat_compile.build_argument_parser().parse_args([str(path), "--opt", "--check"])
    assert ziggurat_compile.compile_model(args) == 0
    assert "check passed: 1 output(s) match onnxruntime" in capsys.readouterr().out


# --------------------------------------------------------------------------- #
# Errors
# --------------------------------------------------------------------------- #


def dynamic_model() -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, None, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    return make_model(
        helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "dynamic", [x], [y]), 13
    )


def error_text(error: pytest.ExceptionInfo[DiagnosticError]) -> str:
    return error.value.format()


def test_dynamic_dimension_names_the_input_and_the_fix():
    with pytest.raises(DiagnosticError) as error:
        import_model(dynamic_model())
    assert (
        "input 'x' has dynamic dimensions 0 ('N'), 2; set them with --input-shape x=1x3x1x4"
        in error_text(error)
    )


def test_single_dynamic_dimension_message():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 224, 224])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    model = make_model(
        helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "dynamic", [x], [y]), 13
    )
    with pytest.raises(DiagnosticError) as error:
        import_model(model)
    assert (
        "input 'x' has a dynamic dimension 0 ('N'); set it with --input-shape x=1x3x224x224"
        in error_text(error)
    )


def test_input_shape_sets_dynamic_dimensions():
    module = import_model(dynamic_model(), {"x": (2, 3, 5, 4)})
    (function,) = [op for op in module.walk() if isinstance(op, func.FuncOp)]
    assert [str(t) for t in function.function_type.outputs.data] == ["tensor<2x3x5x4xf32>"]


@pytest.mark.parametrize(
    "shapes, message",
    [
        ({"z": (1,)}, "--input-shape names 'z', which is not an input of the model (inputs: 'x')"),
        ({"x": (1, 3)}, "--input-shape gives input 'x' 2 dimensions, but the model declares 4"),
        (
            {"x": (1, 2, 5, 4)},
            "--input-shape sets dimension 1 of input 'x' to 2, but the model fixes it to 3",
        ),
    ],
)
def test_input_shape_mistakes(shapes, message):
    with pytest.raises(DiagnosticError) as error:
        import_model(dynamic_model(), shapes)
    assert message in error_text(error)


@pytest.mark.parametrize(
    "text, parsed",
    [("x=1x3x224x224", ("x", (1, 3, 224, 224))), ("a=b=2,3", ("a=b", (2, 3))), ("s=", ("s", ()))],
)
def test_parse_input_shape(text, parsed):
    assert parse_input_shape(text) == parsed


@pytest.mark.parametrize("text", ["x", "=1x2", "x=1xa", "x=-1x2"])
def test_parse_input_shape_rejects(text):
    with pytest.raises(DiagnosticError, match="invalid --input-shape"):
        parse_input_shape(text)


def test_unsupported_operators_are_all_listed_with_their_nodes():
    nodes = [
        helper.make_node("MaxRoiPool", ["x", "rois"], ["a"], name="pool1", pooled_shape=[2, 2]),
        helper.make_node("Cast", ["a"], ["b"], name="cast", to=TensorProto.FLOAT),
        helper.make_node("Foo", ["b"], ["c"], name="n7", domain="com.example"),
        helper.make_node("RoiAlign", ["c", "rois", "batch"], ["y"]),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 1, 1])
    initializers = [
        numpy_helper.from_array(const([[0, 0, 0, 3, 3]], np.float32), "rois"),
        numpy_helper.from_array(const([0]), "batch"),
    ]
    graph_proto = helper.make_graph(nodes, "unsupported", [x], [y], initializers)
    model = helper.make_model(
        graph_proto,
        opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)],
    )
    with pytest.raises(DiagnosticError) as error:
        import_model(model)
    text = error_text(error)
    assert (
        "error: unsupported ONNX operators: MaxRoiPool (node 'pool1'), com.example.Foo (node 'n7'), RoiAlign (node #3)"
        in text
    )
    assert "note: MaxRoiPool needs graph.roi_pool" in text


def test_unexpressible_attributes_name_the_node():
    case = Case(
        "ConvTranspose3d",
        "ConvTranspose",
        {"x": rand(1, 2, 3, 4, 5)},
        constants={"w": rand(2, 2, 1, 1, 1)},
    )
    with pytest.raises(
        DiagnosticError,
        match=r"node 'the_convtranspose' \(ConvTranspose\): 3-D ConvTranspose is not supported",
    ):
        import_model(node_model(case))


def test_runtime_shape_operand_is_reported():
    case = Case("Reshape-runtime-shape", "Reshape", {"x": rand(2, 3), "s": const([3, 2])})
    with pytest.raises(
        DiagnosticError,
        match=r"node 'the_reshape' \(Reshape\): the target shape \(input #1 's'\) must be a constant",
    ):
        import_model(node_model(case))


@pytest.mark.parametrize("opset", [SUPPORTED_OPSETS.start - 1, SUPPORTED_OPSETS.stop])
def test_opsets_outside_the_supported_range(opset):
    newest = SUPPORTED_OPSETS.stop - 1
    model = node_model(
        Case("Relu", "Relu", {"x": rand(2)}, opset=min(opset, newest), output_shape=[2])
    )
    # The onnx package builds no model for an opset it does not know yet: declare one past its newest.
    model.opset_import[0].version = opset
    with pytest.raises(
        DiagnosticError,
        match=f"the model uses ONNX opset {opset}; the importer supports opsets 6 to {newest}",
    ):
        import_loaded_model(model, None, "model")


def test_operator_version_newer_than_its_converter_handles(monkeypatch):
    monkeypatch.setitem(ops.NEWEST_VERSIONS, "Relu", 13)
    model = node_model(Case("Relu", "Relu", {"x": rand(2)}, opset=14, output_shape=[2]))
    with pytest.raises(
        DiagnosticError,
        match=r"node 'the_relu' \(Relu\): opset 14 makes it Relu-14, but the importer "
        r"handles Relu up to version 13",
    ):
        import_model(model)
    model = node_model(Case("Relu", "Relu", {"x": rand(2)}, opset=13, output_shape=[2]))
    import_model(model)


def test_stated_versions_cover_the_installed_onnx():
    # A new onnx release with new operator versions must be checked converter by converter.
    newest = SUPPORTED_OPSETS.stop - 1
    for op_type, handled in ops.NEWEST_VERSIONS.items():
        assert onnx.defs.get_schema(op_type, newest, "").since_version <= handled, op_type


def test_invalid_model_is_a_diagnostic():
    model = node_model(Case("Relu", "Relu", {"x": rand(2)}))
    model.graph.node[0].input[0] = "missing"
    with pytest.raises(DiagnosticError, match="invalid ONNX model"):
        import_model(model)


# --------------------------------------------------------------------------- #
# ziggurat-compile
# --------------------------------------------------------------------------- #


def ziggurat_compile_process(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ziggurat.tools.ziggurat_compile", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    "contents, message",
    [
        (b"this is not a protobuf", "not a readable ONNX model"),
        (b"", "invalid ONNX model"),
    ],
)
def test_malformed_file_exits_1_without_traceback(tmp_path: Path, contents: bytes, message: str):
    path = tmp_path / "bad.onnx"
    path.write_bytes(contents)
    result = ziggurat_compile_process(path)
    assert result.returncode == 1
    assert result.stderr.startswith(f"{path}: error: {message}")
    assert "Traceback" not in result.stderr


def test_missing_file_and_level_without_machine(tmp_path: Path):
    result = ziggurat_compile_process(tmp_path / "none.onnx")
    assert (result.returncode, result.stderr.strip()) == (
        1,
        f"{tmp_path / 'none.onnx'}: error: cannot read the ONNX model: no such file",
    )
    model = tmp_path / "relu.onnx"
    onnx.save(node_model(Case("Relu", "Relu", {"x": rand(2)})), str(model))
    result = ziggurat_compile_process(model, "--emit", "npu")
    assert result.returncode == 1
    assert "error: --emit npu lowers for a machine: give --machine NAME" in result.stderr


def test_output_file_and_npz_round_trip(tmp_path: Path, capsys):
    case = Case("Gemm", "Gemm", {"a": rand(4, 3), "b": rand(3, 5)})
    model = tmp_path / "gemm.onnx"
    onnx.save(node_model(case), str(model))
    np.savez(tmp_path / "in.npz", a=case.inputs["a"], arg1=case.inputs["b"])
    argv = [
        str(model),
        "-o",
        str(tmp_path / "out.mlir"),
        "--run",
        "--inputs",
        str(tmp_path / "in.npz"),
        "--outputs",
        str(tmp_path / "out.npz"),
    ]
    assert (
        ziggurat_compile.compile_model(ziggurat_compile.build_argument_parser().parse_args(argv))
        == 0
    )
    assert "graph.gemm %a, %b" in (tmp_path / "out.mlir").read_text()
    with np.load(tmp_path / "out.npz") as results:
        np.testing.assert_allclose(
            results["y0"], case.inputs["a"] @ case.inputs["b"], rtol=1e-5, atol=1e-6
        )
    assert capsys.readouterr().out == ""


def test_inputs_npz_must_match_the_model(tmp_path: Path):
    model = tmp_path / "relu.onnx"
    onnx.save(node_model(Case("Relu", "Relu", {"x": rand(2)})), str(model))
    np.savez(tmp_path / "in.npz", z=rand(2))
    result = ziggurat_compile_process(model, "--run", "--inputs", tmp_path / "in.npz")
    assert result.returncode == 1
    assert (
        "error: no array for input 'x' (looked for 'x', arg0, arr_0; the archive has z)"
        in result.stderr
    )


def test_check_runs_models_newer_than_onnxruntime_reads(tmp_path: Path, capsys):
    model = node_model(Case("Relu", "Relu", {"x": rand(2)}))
    model.ir_version = (
        onnx.IR_VERSION
    )  # what onnx.helper.make_model writes: newer than onnxruntime 1.2x reads
    path = tmp_path / "relu.onnx"
    onnx.save(model, str(path))
    args = ziggurat_compile.build_argument_parser().parse_args([str(path), "--check"])
    assert ziggurat_compile.compile_model(args) == 0
    assert "check passed" in capsys.readouterr().out


def test_print_checks_reports_errors_and_fails_beyond_tolerance(capsys):
    expected = np.array([1.0, 2.0, np.nan], np.float32)
    assert ziggurat_compile.print_checks(["y"], [expected.copy()], [expected])
    assert ziggurat_compile.print_checks(["y"], [expected + np.float32(1e-5)], [expected])
    assert not ziggurat_compile.print_checks(["y"], [expected * np.float32(1.01)], [expected])
    assert not ziggurat_compile.print_checks(["i"], [np.array([1, 2])], [np.array([1, 3])])
    lines = capsys.readouterr().out.splitlines()
    assert (
        lines[0]
        == "output 'y': float32[3]  max abs error 0  bound 0.000244 (0.000122 x max|ref| 2)  ok"
    )
    assert (
        lines[2].startswith("output 'y': float32[3]  max abs error 0.02  bound 0.000244")
        and "FAIL" in lines[2]
    )
    assert lines[3].startswith("output 'i': int64[2]  max abs error 1  bound 0 (exact)  FAIL")


def test_reading_an_output_inference_does_not_compute():
    def batch_norm_model(opset: int, outputs: list[str], **attributes) -> onnx.ModelProto:
        nodes = [
            helper.make_node(
                "BatchNormalization", ["x", "s", "b", "m", "v"], outputs, name="bn", **attributes
            ),
            helper.make_node("Identity", ["mean"], ["z"], name="copy"),
        ]
        stats = [numpy_helper.from_array(rand(3), name) for name in "sbmv"]
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])
        z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [3])
        return make_model(helper.make_graph(nodes, "bn", [x], [z], stats), opset)

    with pytest.raises(
        DiagnosticError,
        match=r"node 'bn' \(BatchNormalization\): training_mode = 1 is not supported",
    ):
        import_model(batch_norm_model(15, ["y", "mean", "var"], training_mode=1))
    with pytest.raises(
        DiagnosticError,
        match=r"node 'copy' uses 'mean', an output of node 'bn' \(BatchNormalization\) that inference does not compute",
    ):
        # Opset 9 declares the running statistics as outputs in any mode.
        import_model(batch_norm_model(9, ["y", "mean", "var", "saved_mean", "saved_var"]))


def test_inconsistent_shape_arithmetic_is_a_diagnostic():
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "index"], ["dim"]),
        helper.make_node("Reshape", ["x", "dim"], ["y"], name="reshape"),
    ]
    index = numpy_helper.from_array(const([7]), "index")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [6])
    model = helper.make_model(
        helper.make_graph(nodes, "g", [x], [y], [index]),
        opset_imports=[helper.make_opsetid("", 13)],
    )
    with pytest.raises(
        DiagnosticError,
        match=r"ONNX shape inference failed: .*indices must be in \[-rank, rank-1\]",
    ):
        import_model(model)


def _with_shipped_data(tmp_path: Path, expected_scale: float) -> tuple[Path, np.ndarray]:
    """A Relu model in the backend-test layout: model.onnx and test_data_set_0/{input,output}_0.pb."""
    case = Case("Relu", "Relu", {"x": rand(2, 3)})
    path = tmp_path / "model.onnx"
    onnx.save(node_model(case), str(path))
    data_set = tmp_path / "test_data_set_0"
    data_set.mkdir()
    x = case.inputs["x"]
    onnx.save_tensor(numpy_helper.from_array(x, "x"), str(data_set / "input_0.pb"))
    expected = np.maximum(x, 0) * expected_scale
    onnx.save_tensor(
        numpy_helper.from_array(expected.astype(np.float32), "y"), str(data_set / "output_0.pb")
    )
    return path, x


def test_check_uses_and_compares_with_the_shipped_test_data(tmp_path: Path, capsys):
    path, x = _with_shipped_data(tmp_path, expected_scale=1.0)
    outputs = tmp_path / "ours.npz"
    args = ziggurat_compile.build_argument_parser().parse_args(
        [str(path), "--check", "--outputs", str(outputs)]
    )
    assert ziggurat_compile.compile_model(args) == 0
    out = capsys.readouterr().out
    assert "against the expected outputs shipped with the model" in out
    assert (
        "match onnxruntime (graph optimizations off: the ONNX definition) and the expected outputs shipped"
        in out
    )
    (ours,) = np.load(outputs).values()
    np.testing.assert_array_equal(
        ours, np.maximum(x, 0)
    )  # run on the shipped input, not a random one


def test_check_fails_when_the_shipped_outputs_differ(tmp_path: Path, capsys):
    path, _ = _with_shipped_data(tmp_path, expected_scale=2.0)
    args = ziggurat_compile.build_argument_parser().parse_args([str(path), "--check"])
    assert ziggurat_compile.compile_model(args) == 1
    captured = capsys.readouterr()
    assert "FAIL" in captured.out
    assert "differ beyond the tolerance" in captured.err and "onnxruntime and" not in captured.err


def test_ops_are_located_at_their_node_or_its_op_type_and_output():
    named = node_model(Case("Relu", "Relu", {"x": rand(2, 3)}))
    unnamed = node_model(Case("Relu", "Relu", {"x": rand(2, 3)}))
    unnamed.graph.node[0].name = ""
    locations = [
        [str(op.location) for op in import_model(model).walk() if isinstance(op, graph.ReluOp)]
        for model in (named, unnamed)
    ]
    assert locations == [['loc("the_relu"(unknown))'], ['loc("Relu y0"(unknown))']]


def test_lowering_errors_name_the_onnx_node(tmp_path: Path):
    """A model has no file positions: an error in a pass below the graph level names the node
    (MLIR's rendering of a NameLoc), not nothing."""
    model = tmp_path / "relu.onnx"
    onnx.save(
        node_model(Case("MatMul", "MatMul", {"a": rand(64, 64), "b": rand(64, 64)})), str(model)
    )
    machine = tmp_path / "tiny.toml"
    machine.write_text(
        'extends = "davinci"\nname = "davinci-tiny-l0c"\n\n[memory.l0c]\ncapacity = 512\n'
    )
    result = ziggurat_compile_process(model, "--machine", machine, "--emit", "npu")
    assert result.returncode == 1, result.stderr
    # after the note on the precision `--precision auto` chose
    errors = [line for line in result.stderr.splitlines() if "error:" in line]
    assert errors[0].startswith('"the_matmul": error: '), result.stderr
    assert "Traceback" not in result.stderr


def test_check_tolerance_follows_the_precision_of_the_type():
    """A share of the output's magnitude: the acceptance bounds of f16 and bf16, f32's summation order."""
    import ml_dtypes

    f16, bf16 = (numerics.tolerance_for(np.dtype(t)) for t in (np.float16, ml_dtypes.bfloat16))
    assert (f16.rtol, bf16.rtol) == (1e-2, 3e-2)
    assert numerics.tolerance_for(np.dtype(np.float32)).rtol == 2.0**-13
    assert numerics.tolerance_for(np.dtype(np.float32), np.dtype(ml_dtypes.bfloat16)) == bf16
