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
from xdsl.dialects import func

from ziggurat.backends.graph_interpreter import run_function
from ziggurat.diagnostics import DiagnosticError, collect_diagnostics
from ziggurat.dialects import graph
from ziggurat.frontends.onnx import SUPPORTED_OPSETS, import_loaded_model, import_model, parse_input_shape
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
    node = helper.make_node(case.op_type, order, outputs, name=f"the_{case.op_type.lower()}", **case.attributes)
    graph_inputs = [
        helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), array.shape)
        for name, array in case.inputs.items()
    ]
    initializers = [numpy_helper.from_array(array, name) for name, array in case.constants.items()]
    types = case.output_types or [case.output_type] * case.outputs
    graph_outputs = [helper.make_tensor_value_info(name, t, case.output_shape) for name, t in zip(outputs, types)]
    if helper.find_min_ir_version_for([helper.make_opsetid("", case.opset)]) < 4:
        # Before IR version 4 every initializer is also a graph input.
        graph_inputs += [
            helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
            for name, a in case.constants.items()
        ]
    return make_model(helper.make_graph([node], case.id, graph_inputs, graph_outputs, initializers), case.opset)


def make_model(graph_proto: onnx.GraphProto, opset: int) -> onnx.ModelProto:
    opsets = [helper.make_opsetid("", opset)]
    model = helper.make_model(graph_proto, opset_imports=opsets)
    model.ir_version = helper.find_min_ir_version_for(opsets)
    # Outputs are declared without shapes; the checker wants them, so let ONNX fill them in.
    return onnx.shape_inference.infer_shapes(model)


def check_against_onnxruntime(model: onnx.ModelProto, inputs: dict[str, np.ndarray], onnx_shape_differs=False) -> None:
    with collect_diagnostics() as diagnostics:
        module = import_model(model)
    warned = any("but ONNX shape inference gives" in d.message for d in diagnostics)
    assert warned == onnx_shape_differs, [d.format() for d in diagnostics]
    ours = run_function(module, list(inputs.values()))
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    reference = session.run(None, inputs)
    assert len(ours) == len(reference)
    for actual, expected in zip(ours, reference):
        assert actual.shape == expected.shape
        assert actual.dtype == expected.dtype
        tolerance = ziggurat_compile.tolerance_for(expected.dtype)
        np.testing.assert_allclose(actual, expected, rtol=tolerance.rtol, atol=tolerance.atol)


X4 = rand(2, 3, 5, 5)
POSITIVE = rand(2, 3, 4, low=0.1, high=3.0)

CASES = [
    # elementwise
    *[Case(op, op, {"x": rand(2, 3, 4)}) for op in ("Relu", "Sigmoid", "Tanh", "Exp", "Neg", "Abs", "Erf", "Softplus", "Softsign")],
    *[Case(op, op, {"x": POSITIVE}) for op in ("Log", "Sqrt", "Reciprocal")],
    Case("HardSwish", "HardSwish", {"x": rand(2, 3, 4, low=-5, high=5)}, opset=14),
    Case("LeakyRelu", "LeakyRelu", {"x": rand(2, 3, 4)}, {"alpha": 0.2}),
    Case("Elu", "Elu", {"x": rand(2, 3, 4)}, {"alpha": 0.7}),
    Case("Selu", "Selu", {"x": rand(2, 3, 4)}),
    Case("Mish", "Mish", {"x": rand(2, 3, 4, low=-5, high=5)}, opset=18),
    Case("HardSigmoid", "HardSigmoid", {"x": rand(2, 3, 4, low=-5, high=5)}, {"alpha": 0.3, "beta": 0.4}),
    Case("Gelu", "Gelu", {"x": rand(2, 3, 4)}, opset=20),
    Case("Gelu-tanh", "Gelu", {"x": rand(2, 3, 4)}, {"approximate": "tanh"}, opset=20),
    Case("Clip-opset6-attributes", "Clip", {"x": rand(3, 4)}, {"min": -0.5, "max": 0.5}, opset=6),
    Case("Clip-opset11-inputs", "Clip", {"x": rand(3, 4)}, constants={"lo": const(-0.5, np.float32), "hi": const(0.5, np.float32)}, opset=11),
    Case("Clip-opset13-max-only", "Clip", {"x": rand(3, 4)}, constants={"hi": const(0.5, np.float32)}, order=["x", "", "hi"], opset=13),
    Case("Clip-runtime-bounds", "Clip", {"x": rand(3, 4), "lo": const(-0.3, np.float32), "hi": const(0.7, np.float32)}, opset=13),
    *[Case(op, op, {"a": rand(2, 3, 4), "b": rand(3, 1)}) for op in ("Add", "Sub", "Mul")],
    Case("Div", "Div", {"a": rand(2, 3, 4), "b": rand(4, low=0.5, high=2)}),
    Case("Pow", "Pow", {"a": POSITIVE, "b": rand(2, 3, 4)}),
    Case("Pow-int-exponent", "Pow", {"a": rand(2, 3)}, constants={"e": const(3, np.int64)}),
    Case("Add-opset6-broadcast-axis", "Add", {"a": rand(2, 3, 4, 5), "b": rand(3)}, {"broadcast": 1, "axis": 1}, opset=6,
         reference=lambda a, b: [a + b.reshape(3, 1, 1)]),
    *[Case(op, op, {"a": rand(2, 3), "b": rand(3), "c": rand(1, 3)}) for op in ("Sum", "Mean", "Max", "Min")],
    Case("PRelu", "PRelu", {"x": X4}, constants={"slope": rand(3, 1, 1)}),
    Case("PRelu-opset6-channel-slope", "PRelu", {"x": X4}, constants={"slope": rand(3)}, opset=6,
         reference=lambda x, slope: [np.where(x >= 0, x, x * slope.reshape(3, 1, 1))]),
    Case("Where", "Where", {"c": np.random.default_rng(1).integers(0, 2, (3, 4)).astype(bool), "a": rand(3, 4), "b": rand(4)}),
    Case("Identity", "Identity", {"x": rand(3, 4)}),
    Case("Dropout-inference-with-mask", "Dropout", {"x": rand(3, 4)}, opset=13, outputs=2,
         output_types=[TensorProto.FLOAT, TensorProto.BOOL]),
    Case("Cast-to-int32", "Cast", {"x": rand(3, 4, low=-9, high=9)}, {"to": TensorProto.INT32}, output_type=TensorProto.INT32),
    Case("Cast-to-float", "Cast", {"x": const([[1, -2], [3, 4]], np.int64)}, {"to": TensorProto.FLOAT}),
    # contractions, convolution, pooling
    Case("MatMul", "MatMul", {"a": rand(2, 3, 4), "b": rand(4, 5)}),
    Case("Gemm", "Gemm", {"a": rand(4, 3), "b": rand(5, 4)}, {"transA": 1, "transB": 1, "alpha": 0.5, "beta": 2.0}, constants={"c": rand(5)}),
    Case("Gemm-no-bias", "Gemm", {"a": rand(3, 4), "b": rand(4, 5)}),
    Case("Conv", "Conv", {"x": X4}, {"pads": [1, 0, 2, 1], "strides": [2, 1]}, constants={"w": rand(4, 3, 3, 2), "b": rand(4)}),
    Case("Conv-groups-dilations", "Conv", {"x": rand(1, 4, 9, 9)}, {"group": 2, "dilations": [2, 2]}, constants={"w": rand(6, 2, 3, 3)}),
    Case("Conv-depthwise", "Conv", {"x": rand(1, 4, 6, 6)}, {"group": 4, "pads": [1, 1, 1, 1]}, constants={"w": rand(8, 1, 3, 3)}),
    *[
        Case(f"Conv-auto-pad-{mode}", "Conv", {"x": rand(1, 2, 7, 6)}, {"auto_pad": mode, "strides": [2, 2]}, constants={"w": rand(3, 2, 4, 3)})
        for mode in ("SAME_UPPER", "SAME_LOWER", "VALID")
    ],
    Case("Conv-1d", "Conv", {"x": rand(2, 3, 10)}, {"pads": [2, 1], "strides": [2]}, constants={"w": rand(4, 3, 3)}),
    Case("ConvTranspose", "ConvTranspose", {"x": rand(1, 3, 4, 5)}, constants={"w": rand(3, 2, 3, 3), "b": rand(2)}),
    Case("ConvTranspose-strides-pads-output-padding", "ConvTranspose", {"x": rand(2, 4, 3, 4)},
         {"strides": [2, 3], "pads": [1, 0, 2, 1], "output_padding": [1, 2]}, constants={"w": rand(4, 3, 3, 4)}),
    Case("ConvTranspose-groups-dilations", "ConvTranspose", {"x": rand(1, 4, 5, 5)},
         {"group": 2, "dilations": [2, 1], "strides": [2, 2]}, constants={"w": rand(4, 3, 2, 3)}),
    Case("ConvTranspose-output-shape", "ConvTranspose", {"x": rand(1, 2, 4, 4)},
         {"strides": [2, 2], "output_shape": [9, 8]}, constants={"w": rand(2, 3, 3, 3)}),
    *[
        Case(f"ConvTranspose-auto-pad-{mode}", "ConvTranspose", {"x": rand(1, 2, 3, 4)},
             {"strides": [2, 2], "auto_pad": mode}, constants={"w": rand(2, 2, 4, 3)})
        for mode in ("SAME_UPPER", "SAME_LOWER", "VALID")
    ],
    Case("ConvTranspose-1d", "ConvTranspose", {"x": rand(2, 3, 6)}, {"strides": [3], "pads": [1, 2]}, constants={"w": rand(3, 2, 4)}),
    Case("Conv-3d-groups-dilations-pads", "Conv", {"x": rand(2, 4, 7, 6, 5)},
         {"group": 2, "dilations": [2, 1, 1], "strides": [2, 1, 2], "pads": [1, 0, 2, 2, 1, 0]},
         constants={"w": rand(6, 2, 3, 2, 3), "b": rand(6)}),
    Case("Conv-3d-same-lower", "Conv", {"x": rand(1, 2, 5, 5, 5)}, {"auto_pad": "SAME_LOWER", "strides": [2, 2, 2]},
         constants={"w": rand(3, 2, 2, 3, 2)}),
    Case("MaxPool-3d-ceil-pads-dilations", "MaxPool", {"x": rand(2, 3, 8, 7, 6)},
         {"kernel_shape": [3, 2, 2], "strides": [2, 2, 1], "pads": [1, 0, 1, 0, 1, 0], "dilations": [2, 1, 2], "ceil_mode": 1}),
    *[
        Case(f"AveragePool-3d-count-include-pad-{include}", "AveragePool", {"x": rand(1, 2, 7, 6, 5)},
             {"kernel_shape": [3, 3, 2], "strides": [2, 2, 2], "pads": [1, 1, 0, 1, 0, 1], "count_include_pad": include, "ceil_mode": 1})
        for include in (0, 1)
    ],
    # The last ceil-mode window would start in the end padding: onnxruntime drops it, ONNX's shape inference does not.
    Case("MaxPool-ceil-window-in-end-padding", "MaxPool", {"x": rand(1, 2, 7, 6)},
         {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 2, 0], "ceil_mode": 1}, onnx_shape_differs=True),
    Case("MaxPool", "MaxPool", {"x": X4}, {"kernel_shape": [3, 2], "strides": [2, 2], "pads": [1, 0, 1, 1], "ceil_mode": 1}, opset=12),
    Case("MaxPool-dilations", "MaxPool", {"x": X4}, {"kernel_shape": [2, 2], "dilations": [2, 2]}, opset=12),
    Case("MaxPool-1d-same", "MaxPool", {"x": rand(2, 3, 9)}, {"kernel_shape": [3], "strides": [2], "auto_pad": "SAME_UPPER"}),
    Case("AveragePool", "AveragePool", {"x": X4}, {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
    Case("AveragePool-count-include-pad", "AveragePool", {"x": X4}, {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1}),
    Case("GlobalAveragePool", "GlobalAveragePool", {"x": X4}),
    Case("GlobalMaxPool", "GlobalMaxPool", {"x": X4}),
    # normalization
    *[
        Case(f"BatchNormalization-opset{opset}", "BatchNormalization", {"x": X4}, {"epsilon": 1e-3}, opset=opset,
             constants={"s": rand(3), "b": rand(3), "m": rand(3), "v": rand(3, low=0.5, high=2)})
        for opset in (9, 15)
    ],
    Case("LayerNormalization", "LayerNormalization", {"x": rand(2, 3, 8)}, {"axis": -1, "epsilon": 1e-3}, constants={"s": rand(8), "b": rand(8)}),
    Case("LayerNormalization-axis1-no-bias", "LayerNormalization", {"x": rand(2, 3, 4)}, {"axis": 1}, constants={"s": rand(3, 4)}),
    Case("InstanceNormalization", "InstanceNormalization", {"x": X4}, constants={"s": rand(3), "b": rand(3)}),
    Case("GroupNormalization-opset21", "GroupNormalization", {"x": rand(2, 6, 3, 4)}, {"num_groups": 3, "epsilon": 1e-3},
         constants={"s": rand(6), "b": rand(6)}, opset=21, output_shape=[2, 6, 3, 4]),
    Case("MeanVarianceNormalization-axes", "MeanVarianceNormalization", {"x": X4}, {"axes": [1, 3]}),
    Case("LRN", "LRN", {"x": rand(2, 5, 3, 3)}, {"size": 3, "alpha": 0.1, "beta": 0.6, "bias": 1.5}),
    Case("Softmax-opset11-coerced-2d", "Softmax", {"x": rand(2, 3, 4)}, {"axis": 1}, opset=11),
    Case("Softmax-opset13", "Softmax", {"x": rand(2, 3, 4)}, {"axis": 1}, opset=13),
    Case("LogSoftmax-opset11", "LogSoftmax", {"x": rand(2, 3, 4)}, opset=11),
    Case("LogSoftmax-opset13", "LogSoftmax", {"x": rand(2, 3, 4)}, {"axis": 0}, opset=13),
    # reductions: axes moved from attribute to input (ReduceSum at 13, the others at 18)
    Case("ReduceSum-opset11-attribute", "ReduceSum", {"x": X4}, {"axes": [1, 3]}, opset=11),
    Case("ReduceSum-opset13-input", "ReduceSum", {"x": X4}, {"keepdims": 0}, constants={"axes": const([1, -1])}, opset=13),
    Case("ReduceSum-noop-empty-axes", "ReduceSum", {"x": X4}, {"noop_with_empty_axes": 1}, opset=13),
    Case("ReduceMean-opset17-attribute", "ReduceMean", {"x": X4}, {"axes": [2, 3]}, opset=17),
    Case("ReduceMean-opset18-input", "ReduceMean", {"x": X4}, constants={"axes": const([2, 3])}, opset=18),
    Case("ReduceMax-opset21-all-axes", "ReduceMax", {"x": X4}, {"keepdims": 0}, opset=21),
    Case("ReduceMin-opset13-attribute", "ReduceMin", {"x": X4}, {"axes": [1]}, opset=13),
    Case("ReduceMin-int", "ReduceMin", {"x": const(np.arange(24).reshape(2, 3, 4) % 7 - 3, np.int32)},
         constants={"axes": const([0, 2])}, opset=18, output_type=TensorProto.INT32),
    Case("ReduceL1", "ReduceL1", {"x": X4}, {"axes": [2, 3], "keepdims": 0}, opset=17),
    Case("ReduceL2", "ReduceL2", {"x": X4}, constants={"axes": const([-1])}, opset=18),
    Case("ReduceSumSquare", "ReduceSumSquare", {"x": X4}, {"axes": [0]}, opset=13),
    Case("ReduceLogSum", "ReduceLogSum", {"x": POSITIVE}, {"axes": [1]}, opset=13),
    Case("ReduceLogSumExp", "ReduceLogSumExp", {"x": rand(2, 3, 4, low=-50, high=90)}, {"axes": [0, 2], "keepdims": 0}, opset=13),
    Case("ReduceLogSumExp-keepdims", "ReduceLogSumExp", {"x": X4}, constants={"axes": const([1])}, opset=18),
    # shapes and data movement
    Case("Reshape-zero-and-minus-one", "Reshape", {"x": X4}, constants={"s": const([0, -1, 5])}),
    Case("Flatten", "Flatten", {"x": X4}, {"axis": 2}),
    Case("Squeeze-opset11-attribute", "Squeeze", {"x": rand(2, 1, 3, 1)}, {"axes": [1]}, opset=11),
    Case("Squeeze-opset13-input", "Squeeze", {"x": rand(2, 1, 3, 1)}, constants={"axes": const([-1])}, opset=13),
    Case("Squeeze-all", "Squeeze", {"x": rand(2, 1, 3, 1)}, opset=13),
    Case("Unsqueeze-opset11-attribute", "Unsqueeze", {"x": rand(2, 3)}, {"axes": [0, 3]}, opset=11),
    Case("Unsqueeze-opset21-input", "Unsqueeze", {"x": rand(2, 3)}, constants={"axes": const([1, -1])}, opset=21),
    Case("Transpose", "Transpose", {"x": X4}, {"perm": [0, 2, 3, 1]}),
    Case("Transpose-default-reverses", "Transpose", {"x": rand(2, 3, 4)}),
    Case("Concat", "Concat", {"a": rand(2, 3), "b": rand(2, 5)}, {"axis": -1}),
    Case("Split-opset11-attribute", "Split", {"x": rand(6, 4)}, {"axis": 0, "split": [1, 5]}, opset=11, outputs=2),
    Case("Split-opset13-input", "Split", {"x": rand(6, 4)}, {"axis": 1}, constants={"s": const([3, 1])}, opset=13, outputs=2),
    Case("Split-opset13-even", "Split", {"x": rand(6, 4)}, opset=13, outputs=3),
    Case("Split-opset18-num-outputs", "Split", {"x": rand(7, 4)}, {"num_outputs": 3}, opset=18, outputs=3),
    Case("Slice-opset9-attributes", "Slice", {"x": X4}, {"starts": [1, -3], "ends": [3, 100], "axes": [1, 3]}, opset=9),
    Case("Slice-opset13-inputs-negative-step", "Slice", {"x": X4}, opset=13,
         constants={"st": const([4, 0]), "en": const([0, 2]), "ax": const([2, 0]), "sp": const([-2, 1])}),
    Case("Pad-opset9-attributes", "Pad", {"x": rand(2, 3)}, {"pads": [0, 1, 1, 2], "value": 1.5}, opset=9),
    Case("Pad-opset11-reflect", "Pad", {"x": rand(1, 2, 4, 4)}, {"mode": "reflect"}, constants={"p": const([0, 0, 1, 2, 0, 0, 2, 1])}, opset=11),
    Case("Pad-opset13-edge", "Pad", {"x": rand(3, 4)}, {"mode": "edge"}, constants={"p": const([1, 0, 0, 2])}, opset=13),
    Case("Pad-opset18-axes-value", "Pad", {"x": rand(2, 3, 4)}, opset=18,
         constants={"p": const([1, -1, 2, 1]), "v": const(-3.0, np.float32), "ax": const([0, 2])}),
    Case("Gather-constant-indices", "Gather", {"x": rand(5, 4)}, {"axis": 0}, constants={"i": const([[0, -1], [2, 2]])}),
    Case("Gather-runtime-indices", "Gather", {"x": rand(5, 4), "i": const([3, 0, 3], np.int64)}, {"axis": 1}, order=["x", "i"]),
    Case("Expand", "Expand", {"x": rand(3, 1)}, constants={"s": const([2, 1, 4])}),
    Case("Tile", "Tile", {"x": rand(2, 3)}, constants={"r": const([2, 3])}),
    Case("DepthToSpace-DCR", "DepthToSpace", {"x": rand(1, 8, 2, 3)}, {"blocksize": 2}),
    Case("DepthToSpace-CRD", "DepthToSpace", {"x": rand(1, 8, 2, 3)}, {"blocksize": 2, "mode": "CRD"}),
    Case("SpaceToDepth", "SpaceToDepth", {"x": rand(1, 2, 4, 6)}, {"blocksize": 2}),
    # comparisons (NaN and ties included: a >= b must stay false where either is NaN)
    *[Case(op, op, {"a": const([[0.5, np.nan, 1.0], [2.0, -1.0, 1.0]], np.float32), "b": const([1.0, np.nan, -1.0], np.float32)},
           opset=opset, output_type=TensorProto.BOOL)
      for op, opset in [("Equal", 11), ("Greater", 9), ("Less", 9), ("GreaterOrEqual", 12), ("LessOrEqual", 12)]],
    Case("Equal-int64", "Equal", {"a": const([[1, 2], [3, 4]]), "b": const([[1], [4]])}, output_type=TensorProto.BOOL),
    Case("Less-opset6-broadcast-axis", "Less", {"a": rand(2, 3, 4), "b": rand(3)}, {"broadcast": 1, "axis": 1}, opset=6,
         output_type=TensorProto.BOOL, reference=lambda a, b: [a < b.reshape(3, 1)]),
    Case("Not", "Not", {"x": const([[True, False], [False, False]], np.bool_)}, output_type=TensorProto.BOOL),
    # reductions with an index or a running result
    Case("ReduceProd-opset13-axes-attribute", "ReduceProd", {"x": rand(2, 3, 4, low=0.5, high=1.5)}, {"axes": [1], "keepdims": 0}, opset=13),
    Case("ReduceProd-opset18-axes-input", "ReduceProd", {"x": rand(2, 3, 4, low=0.5, high=1.5)}, constants={"axes": const([0, -1])}, opset=18),
    Case("ReduceProd-opset18-all-axes", "ReduceProd", {"x": rand(2, 3, low=0.5, high=1.5)}, opset=18),
    Case("ArgMax", "ArgMax", {"x": rand(3, 4, 5)}, {"axis": 1}, output_type=TensorProto.INT64),
    Case("ArgMax-negative-axis-no-keepdims", "ArgMax", {"x": rand(3, 4, 5)}, {"axis": -1, "keepdims": 0}, output_type=TensorProto.INT64),
    *[Case(f"ArgMax-ties-select-last-{last}", "ArgMax", {"x": const([[1, 3, 3, 0], [2, 2, 2, 2]], np.int32)},
           {"axis": 1, "select_last_index": last}, opset=12, output_type=TensorProto.INT64) for last in (0, 1)],
    *[Case(f"CumSum-exclusive-{exclusive}-reverse-{reverse}", "CumSum", {"x": rand(3, 4)}, {"exclusive": exclusive, "reverse": reverse},
           constants={"axis": const(1)}, opset=14) for exclusive in (0, 1) for reverse in (0, 1)],
    Case("CumSum-int32-negative-axis", "CumSum", {"x": const(np.arange(12).reshape(3, 4), np.int32)}, constants={"axis": const(-2, np.int32)},
         opset=11, output_type=TensorProto.INT32),
    # quantization (per-tensor and per-channel)
    Case("QuantizeLinear-opset13", "QuantizeLinear", {"x": rand(2, 3, 4)}, opset=13,
         constants={"s": const(0.02, np.float32), "z": const(3, np.int8)}, output_type=TensorProto.INT8),
    Case("QuantizeLinear-default-uint8", "QuantizeLinear", {"x": rand(2, 3, low=0, high=4)}, opset=13,
         constants={"s": const(0.05, np.float32)}, output_type=TensorProto.UINT8),
    Case("DequantizeLinear-per-channel", "DequantizeLinear", {"x": const(np.arange(24).reshape(2, 3, 4) - 12, np.int8)}, {"axis": 1},
         opset=21, constants={"s": const([0.1, 0.2, 0.3], np.float32), "z": const([1, 0, -1], np.int8)}),
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_operator_matches_onnxruntime(case: Case):
    if case.reference is None:
        check_against_onnxruntime(node_model(case), case.inputs, case.onnx_shape_differs)
        return
    ours = run_function(import_model(node_model(case)), list(case.inputs.values()))
    for actual, expected in zip(ours, case.reference(*case.inputs.values(), *case.constants.values())):
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)


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
        helper.make_node("ConstantOfShape", ["flat_shape"], ["ones"], value=numpy_helper.from_array(const([1.5], np.float32))),
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
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 12]), helper.make_tensor_value_info("range", TensorProto.FLOAT, [6])]
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
    onnx.save(model, str(path), save_as_external_data=True, location="weights.bin", size_threshold=0)
    assert (tmp_path / "weights.bin").stat().st_size == 64 * 32 * 4
    (ours,) = run_function(import_model(path), [case.inputs["a"]])
    np.testing.assert_allclose(ours, case.inputs["a"] @ case.constants["w"], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("script", ["mlp", "resnet_block", "mobilenet_block", "transformer_encoder"])
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
    return make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "dynamic", [x], [y]), 13)


def error_text(error: pytest.ExceptionInfo[DiagnosticError]) -> str:
    return error.value.format()


def test_dynamic_dimension_names_the_input_and_the_fix():
    with pytest.raises(DiagnosticError) as error:
        import_model(dynamic_model())
    assert "input 'x' has dynamic dimensions 0 ('N'), 2; set them with --input-shape x=1x3x1x4" in error_text(error)


def test_single_dynamic_dimension_message():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 224, 224])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    model = make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "dynamic", [x], [y]), 13)
    with pytest.raises(DiagnosticError) as error:
        import_model(model)
    assert "input 'x' has a dynamic dimension 0 ('N'); set it with --input-shape x=1x3x224x224" in error_text(error)


def test_input_shape_sets_dynamic_dimensions():
    module = import_model(dynamic_model(), {"x": (2, 3, 5, 4)})
    (function,) = [op for op in module.walk() if isinstance(op, func.FuncOp)]
    assert [str(t) for t in function.function_type.outputs.data] == ["tensor<2x3x5x4xf32>"]


@pytest.mark.parametrize(
    "shapes, message",
    [
        ({"z": (1,)}, "--input-shape names 'z', which is not an input of the model (inputs: 'x')"),
        ({"x": (1, 3)}, "--input-shape gives input 'x' 2 dimensions, but the model declares 4"),
        ({"x": (1, 2, 5, 4)}, "--input-shape sets dimension 1 of input 'x' to 2, but the model fixes it to 3"),
    ],
)
def test_input_shape_mistakes(shapes, message):
    with pytest.raises(DiagnosticError) as error:
        import_model(dynamic_model(), shapes)
    assert message in error_text(error)


@pytest.mark.parametrize("text, parsed", [("x=1x3x224x224", ("x", (1, 3, 224, 224))), ("a=b=2,3", ("a=b", (2, 3))), ("s=", ("s", ()))])
def test_parse_input_shape(text, parsed):
    assert parse_input_shape(text) == parsed


@pytest.mark.parametrize("text", ["x", "=1x2", "x=1xa", "x=-1x2"])
def test_parse_input_shape_rejects(text):
    with pytest.raises(DiagnosticError, match="invalid --input-shape"):
        parse_input_shape(text)


def test_unsupported_operators_are_all_listed_with_their_nodes():
    nodes = [
        helper.make_node("TopK", ["x", "k"], ["a", "i"], name="top1"),
        helper.make_node("Cast", ["a"], ["b"], name="cast", to=TensorProto.FLOAT),
        helper.make_node("Foo", ["b"], ["c"], name="n7", domain="com.example"),
        helper.make_node("Resize", ["c", "", "scales"], ["y"]),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 8, 8])
    initializers = [numpy_helper.from_array(const([1, 1, 2, 2], np.float32), "scales"), numpy_helper.from_array(const([2]), "k")]
    graph_proto = helper.make_graph(nodes, "unsupported", [x], [y], initializers)
    model = helper.make_model(graph_proto, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)])
    with pytest.raises(DiagnosticError) as error:
        import_model(model)
    text = error_text(error)
    assert "error: unsupported ONNX operators: TopK (node 'top1'), com.example.Foo (node 'n7'), Resize (node #3)" in text
    assert "note: TopK needs graph.top_k" in text
    assert "note: Resize needs graph.resize" in text


def test_unexpressible_attributes_name_the_node():
    case = Case("ConvTranspose3d", "ConvTranspose", {"x": rand(1, 2, 3, 4, 5)}, constants={"w": rand(2, 2, 1, 1, 1)})
    with pytest.raises(DiagnosticError, match=r"node 'the_convtranspose' \(ConvTranspose\): 3-D ConvTranspose is not supported"):
        import_model(node_model(case))


def test_runtime_shape_operand_is_reported():
    case = Case("Reshape-runtime-shape", "Reshape", {"x": rand(2, 3), "s": const([3, 2])})
    with pytest.raises(DiagnosticError, match=r"node 'the_reshape' \(Reshape\): the target shape \(input #1 's'\) must be a constant"):
        import_model(node_model(case))


@pytest.mark.parametrize("opset", [SUPPORTED_OPSETS.start - 1, SUPPORTED_OPSETS.stop])
def test_opsets_outside_the_supported_range(opset):
    model = node_model(Case("Relu", "Relu", {"x": rand(2)}, opset=opset, output_shape=[2]))
    with pytest.raises(DiagnosticError, match=f"the model uses ONNX opset {opset}; the importer supports opsets 6 to 21"):
        import_model(model)


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
    assert (result.returncode, result.stderr.strip()) == (1, f"{tmp_path / 'none.onnx'}: error: cannot read the ONNX model: no such file")
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
    argv = [str(model), "-o", str(tmp_path / "out.mlir"), "--run", "--inputs", str(tmp_path / "in.npz"), "--outputs", str(tmp_path / "out.npz")]
    assert ziggurat_compile.compile_model(ziggurat_compile.build_argument_parser().parse_args(argv)) == 0
    assert "graph.gemm %a, %b" in (tmp_path / "out.mlir").read_text()
    with np.load(tmp_path / "out.npz") as results:
        np.testing.assert_allclose(results["y0"], case.inputs["a"] @ case.inputs["b"], rtol=1e-5, atol=1e-6)
    assert capsys.readouterr().out == ""


def test_inputs_npz_must_match_the_model(tmp_path: Path):
    model = tmp_path / "relu.onnx"
    onnx.save(node_model(Case("Relu", "Relu", {"x": rand(2)})), str(model))
    np.savez(tmp_path / "in.npz", z=rand(2))
    result = ziggurat_compile_process(model, "--run", "--inputs", tmp_path / "in.npz")
    assert result.returncode == 1
    assert "error: no array for input 'x' (looked for 'x', arg0, arr_0; the archive has z)" in result.stderr


def test_check_runs_models_newer_than_onnxruntime_reads(tmp_path: Path, capsys):
    model = node_model(Case("Relu", "Relu", {"x": rand(2)}))
    model.ir_version = onnx.IR_VERSION  # what onnx.helper.make_model writes: newer than onnxruntime 1.2x reads
    path = tmp_path / "relu.onnx"
    onnx.save(model, str(path))
    args = ziggurat_compile.build_argument_parser().parse_args([str(path), "--check"])
    assert ziggurat_compile.compile_model(args) == 0
    assert "check passed" in capsys.readouterr().out


def test_compare_reports_errors_and_fails_beyond_tolerance(capsys):
    expected = np.array([1.0, 2.0, np.nan], np.float32)
    assert ziggurat_compile.compare(["y"], [expected.copy()], [expected])
    assert ziggurat_compile.compare(["y"], [expected + np.float32(1e-5)], [expected])
    assert not ziggurat_compile.compare(["y"], [expected * np.float32(1.01)], [expected])
    assert not ziggurat_compile.compare(["i"], [np.array([1, 2])], [np.array([1, 3])])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "output 'y': float32[3]  max abs 0  max rel 0  (atol 0.0001, rtol 0.001)  ok"
    assert lines[2].startswith("output 'y': float32[3]  max abs 0.02  max rel 0.01") and lines[2].endswith("FAIL")
    assert lines[3].endswith("(atol 0, rtol 0)  FAIL")


def test_reading_an_output_inference_does_not_compute():
    def batch_norm_model(opset: int, outputs: list[str], **attributes) -> onnx.ModelProto:
        nodes = [
            helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], outputs, name="bn", **attributes),
            helper.make_node("Identity", ["mean"], ["z"], name="copy"),
        ]
        stats = [numpy_helper.from_array(rand(3), name) for name in "sbmv"]
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])
        z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [3])
        return make_model(helper.make_graph(nodes, "bn", [x], [z], stats), opset)

    with pytest.raises(DiagnosticError, match=r"node 'bn' \(BatchNormalization\): training_mode = 1 is not supported"):
        import_model(batch_norm_model(15, ["y", "mean", "var"], training_mode=1))
    with pytest.raises(DiagnosticError, match=r"node 'copy' uses 'mean', an output of node 'bn' \(BatchNormalization\) that inference does not compute"):
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
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [y], [index]), opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(DiagnosticError, match=r"ONNX shape inference failed: .*indices must be in \[-rank, rank-1\]"):
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
    onnx.save_tensor(numpy_helper.from_array(expected.astype(np.float32), "y"), str(data_set / "output_0.pb"))
    return path, x


def test_check_uses_and_compares_with_the_shipped_test_data(tmp_path: Path, capsys):
    path, x = _with_shipped_data(tmp_path, expected_scale=1.0)
    outputs = tmp_path / "ours.npz"
    args = ziggurat_compile.build_argument_parser().parse_args([str(path), "--check", "--outputs", str(outputs)])
    assert ziggurat_compile.compile_model(args) == 0
    out = capsys.readouterr().out
    assert "against the expected outputs shipped with the model" in out
    assert "match onnxruntime and the expected outputs shipped with the model" in out
    (ours,) = np.load(outputs).values()
    np.testing.assert_array_equal(ours, np.maximum(x, 0))  # run on the shipped input, not a random one


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
    onnx.save(node_model(Case("MatMul", "MatMul", {"a": rand(64, 64), "b": rand(64, 64)})), str(model))
    machine = tmp_path / "tiny.toml"
    machine.write_text('extends = "davinci"\nname = "davinci-tiny-l0c"\n\n[memory.l0c]\ncapacity = 512\n')
    result = ziggurat_compile_process(model, "--machine", machine, "--emit", "npu")
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith('"the_matmul": error: '), result.stderr
    assert "Traceback" not in result.stderr


def test_check_tolerance_follows_the_precision_of_the_type():
    """bf16 keeps f32's range in 8 bits of precision: eight times f16's epsilon, and its tolerance."""
    import ml_dtypes

    f16, bf16 = (ziggurat_compile.tolerance_for(np.dtype(t)) for t in (np.float16, ml_dtypes.bfloat16))
    assert (f16.atol, f16.rtol) == (1e-2, 1e-2)
    assert (bf16.atol, bf16.rtol) == (8e-2, 8e-2)
    assert ziggurat_compile.tolerance_for(np.dtype(np.float32)).rtol < f16.rtol
