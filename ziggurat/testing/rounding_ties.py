"""Whether a quantized (QDQ) model's integers differ from the ONNX definition only at rounding ties.

QuantizeLinear rounds x / scale to the nearest integer, half to even. The x that reaches it is a
float computation (a dequantized convolution, a sum, an average), and the ONNX definition fixes its
operations but not how an implementation rounds them: onnxruntime sums a dequantized convolution
in f32 in its own order; the npu sums the integers exactly and rescales with a few f32 operations.
Where x / scale lies within that rounding of a half-way point, two correct implementations round
apart by one step, and everything downstream of that element then differs too.

So an implementation's integers are checked layer by layer, each QuantizeLinear given the
implementation's own integers for its inputs (teacher forcing): the definition is evaluated in
float64 (onnx's reference evaluator on a float64 copy of the model), and every element where the
implementation's integer differs from the definition's must be one step away, with x / scale
within the f32 error bound of a half-way point. The bound, for x computed from n rounded terms
(a convolution's window, a pool's, the two inputs of an Add, plus the dequantizing and
requantizing operations), is n * 2^-24 * M / scale, M being the same computation on magnitudes
(Higham, Accuracy and Stability of Numerical Algorithms, section 4.2: any summation order). A
wrong weight, channel or scale moves elements far from half-way points, or by more than a step.

    probe = with_quantized_outputs(model)                # every QuantizeLinear's output an output
    quantized = quantized_values(model, implementation(probe, inputs))
    report = check_rounding(model, inputs, quantized)
    report.ok, report.ties, str(report)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

UNIT_ROUNDOFF = 2.0**-24
"""f32's unit roundoff: each f32 operation is exact within this relative error."""
REQUANTIZE_OPERATIONS = 4
"""Roundings around the sum in any implementation: dequantizing, the rescale, the division."""
REFERENCE_OPSET = 19
"""onnx's reference evaluator implements QuantizeLinear and DequantizeLinear from opset 19 (the same
arithmetic as 10 and 13 for 8-bit integers)."""
MAGNITUDE_AS_IDENTITY = frozenset({"Relu", "Clip", "LeakyRelu"})
"""Ops the magnitude computation skips: |op(x)| <= |x| for each."""
SUPPORTED = frozenset(
    {
        "Add",
        "AveragePool",
        "Clip",
        "Concat",
        "Conv",
        "DequantizeLinear",
        "Flatten",
        "Gemm",
        "GlobalAveragePool",
        "LeakyRelu",
        "MatMul",
        "MaxPool",
        "QuantizeLinear",
        "Relu",
        "Reshape",
        "Squeeze",
        "Transpose",
        "Unsqueeze",
        "Constant",
        "Identity",
    }
)
"""Ops whose f32 error the bound above covers (sums of products, maxima, data movement)."""


def _quantize_nodes(model: onnx.ModelProto) -> list[onnx.NodeProto]:
    return [node for node in model.graph.node if node.op_type == "QuantizeLinear"]


def quantize_outputs(model: onnx.ModelProto) -> list[str]:
    """The names of the values QuantizeLinear nodes make, in graph order."""
    return [node.output[0] for node in _quantize_nodes(model)]


def _along_axis(
    node: onnx.NodeProto, rank: int, scale: np.ndarray, zero_point: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """A QuantizeLinear's scale and zero point shaped to broadcast against its rank-`rank` input:
    per-channel ones along its `axis`."""
    if scale.ndim != 1 or scale.size == 1:
        return scale, zero_point
    shape = [1] * rank
    shape[next((a.i for a in node.attribute if a.name == "axis"), 1)] = scale.size
    return scale.reshape(shape), zero_point.reshape(shape)


def with_quantized_outputs(model: onnx.ModelProto, dequantized: bool = False) -> onnx.ModelProto:
    """`model` with every QuantizeLinear's output also a graph output (after its own outputs), for an
    implementation to give them; `dequantized`: as DequantizeLinear of them instead, floats that
    `quantized_values` turns back into the same integers exactly (for an implementation whose
    outputs are floats)."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    present = {output.name for output in probe.graph.output}
    types = _integer_types(model)
    for node in _quantize_nodes(model):
        name = node.output[0]
        if dequantized:
            wide = f"{name}::dequantized"
            probe.graph.node.append(
                helper.make_node("DequantizeLinear", [name, *node.input[1:]], [wide], name=wide)
            )
            probe.graph.output.append(helper.make_tensor_value_info(wide, TensorProto.FLOAT, None))
        elif name not in present:
            probe.graph.output.append(helper.make_tensor_value_info(name, types[name], None))
    return probe


def quantized_values(
    model: onnx.ModelProto, probed: Sequence[np.ndarray], dequantized: bool = False
) -> dict[str, np.ndarray]:
    """The QuantizeLinear outputs by name, from the outputs of `with_quantized_outputs(model,
    dequantized)` after the model's own: integers again when `dequantized` (each float is
    (q - zero point) * scale rounded once to f32, so dividing by the scale and rounding gives
    q - zero point back)."""
    names = quantize_outputs(model)
    values = list(probed[len(model.graph.output) :])
    if not dequantized:
        return dict(zip(names, values, strict=True))
    constants = _constants(model)
    types = _integer_types(model)
    result = {}
    for node, value in zip(_quantize_nodes(model), values, strict=True):
        dtype = helper.tensor_dtype_to_np_dtype(types[node.output[0]])
        scale, zero = _along_axis(
            node,
            np.ndim(value),
            constants[node.input[1]].astype(np.float64),
            constants[node.input[2]].astype(np.float64)
            if len(node.input) > 2 and node.input[2]
            else np.zeros((), np.float64),
        )
        result[node.output[0]] = (np.rint(np.asarray(value, np.float64) / scale) + zero).astype(
            dtype
        )
    return result


def _constants(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    """Initializers and Constant node values by name."""
    constants = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "Constant":
            for attribute in node.attribute:
                if attribute.name == "value":
                    constants[node.output[0]] = numpy_helper.to_array(attribute.t)
    return constants


@dataclass
class NodeTies:
    node: str
    elements: int
    differing: int = 0
    ties: int = 0
    worst: str | None = None
    """The first difference that is not a tie, described."""


@dataclass
class RoundingReport:
    nodes: list[NodeTies] = field(default_factory=list)
    outputs_differ: list[str] = field(default_factory=list)
    """Graph outputs (float, after the last QuantizeLinear) that differ from the definition given
    the implementation's integers."""

    @property
    def differing(self) -> int:
        return sum(node.differing for node in self.nodes)

    @property
    def ties(self) -> int:
        return sum(node.ties for node in self.nodes)

    @property
    def ok(self) -> bool:
        return not self.outputs_differ and all(node.worst is None for node in self.nodes)

    def __str__(self) -> str:
        elements = sum(node.elements for node in self.nodes)
        layers = sum(node.differing > 0 for node in self.nodes)
        text = (
            f"{self.differing} of {elements} quantized values differ from the definition, in "
            f"{layers} of {len(self.nodes)} QuantizeLinear nodes; {self.ties} at rounding ties"
        )
        bad = [node.worst for node in self.nodes if node.worst is not None]
        if bad:
            text += f"; not a tie: {bad[0]}"
        if self.outputs_differ:
            text += f"; outputs differ given the same integers: {', '.join(self.outputs_differ)}"
        return text


def check_rounding(
    model: onnx.ModelProto,
    inputs: Mapping[str, np.ndarray],
    quantized: Mapping[str, np.ndarray],
    outputs: Sequence[np.ndarray] | None = None,
) -> RoundingReport:
    """Check an implementation's QuantizeLinear results `quantized` (by value name, every one of
    `quantize_outputs(model)`) and its graph `outputs` against the definition on `inputs`."""
    unsupported = sorted({n.op_type for n in model.graph.node} - SUPPORTED)
    if unsupported:
        raise ValueError(f"the rounding check does not bound the f32 error of {unsupported}")
    names = quantize_outputs(model)
    forced = _teacher_forced(model, names)
    feeds = {name: np.asarray(value, np.float64) for name, value in inputs.items()}
    feeds.update({name: np.asarray(quantized[name]) for name in names})
    values = _run(forced, feeds)
    magnitudes = _run(_magnitudes(forced), feeds)
    report = RoundingReport()
    terms = _terms_per_quantize(model)
    for node in _quantize_nodes(model):
        name = node.output[0]
        x = values[_x_name(name)]
        scale, zero_point = _along_axis(
            node,
            x.ndim,
            np.asarray(values[_scale_name(name)], np.float64),
            np.asarray(values[_zero_point_name(name)], np.float64),
        )
        report.nodes.append(
            _compare_node(
                node.name or name,
                np.asarray(quantized[name]),
                values[_definition_name(name)],
                x / scale,
                zero_point,
                (terms[name] + REQUANTIZE_OPERATIONS)
                * UNIT_ROUNDOFF
                * np.abs(magnitudes[_x_name(name)] / scale),
            )
        )
    if outputs is not None:
        for output, actual in zip(model.graph.output, outputs, strict=True):
            if output.name in names:
                continue
            expected = values[output.name].astype(np.asarray(actual).dtype)
            if not np.array_equal(expected, np.asarray(actual)):
                report.outputs_differ.append(output.name)
    return report


def _compare_node(
    name: str,
    actual: np.ndarray,
    definition: np.ndarray,
    ratio: np.ndarray,
    zero_point: np.ndarray,
    bound: np.ndarray,
) -> NodeTies:
    """`actual` against `definition` (integers), where x / scale = `ratio` within `bound`."""
    result = NodeTies(name, int(actual.size))
    a, d = actual.astype(np.int64), definition.astype(np.int64)
    differ = a != d
    result.differing = int(differ.sum())
    if not result.differing:
        return result
    ratio, zero_point, bound = (np.broadcast_to(v, a.shape) for v in (ratio, zero_point, bound))
    half_way = np.minimum(a, d) - zero_point + 0.5
    tie = differ & (np.abs(a - d) == 1) & (np.abs(ratio - half_way) <= bound)
    result.ties = int(tie.sum())
    bad = np.argwhere(differ & ~tie)
    if bad.size:
        index = tuple(int(i) for i in bad[0])
        result.worst = (
            f"'{name}' at {list(index)}: {int(a[index])} where the definition gives "
            f"{int(d[index])} (x / scale = {float(ratio[index]):.6f} + zero point "
            f"{float(zero_point[index]):g}, f32 error bound {float(bound[index]):.2g})"
        )
    return result


# --------------------------------------------------------------------------- #
# The float64 models
# --------------------------------------------------------------------------- #


def _definition_name(name: str) -> str:
    return f"{name}::definition"


def _x_name(name: str) -> str:
    return f"{name}::x"


def _scale_name(name: str) -> str:
    return f"{name}::scale"


def _zero_point_name(name: str) -> str:
    return f"{name}::zero_point"


def _integer_types(model: onnx.ModelProto) -> dict[str, int]:
    """The element type of each QuantizeLinear output: its zero point's (uint8 without one)."""
    constants = _constants(model)
    types = {}
    for node in _quantize_nodes(model):
        zero_point = node.input[2] if len(node.input) > 2 and node.input[2] else None
        types[node.output[0]] = (
            helper.np_dtype_to_tensor_dtype(constants[zero_point].dtype)
            if zero_point in constants
            else TensorProto.UINT8
        )
    return types


def _teacher_forced(model: onnx.ModelProto, names: Sequence[str]) -> onnx.ModelProto:
    """A float64 copy of `model` where each QuantizeLinear's output is a graph input (the
    implementation's integers) and its own result, its input x, scale and zero point are outputs."""
    forced = _float64(model)
    graph = forced.graph
    types = _integer_types(model)
    extra_outputs = []
    for node in _quantize_nodes(forced):
        name = node.output[0]
        node.output[0] = _definition_name(name)
        graph.input.append(helper.make_tensor_value_info(name, types[name], None))
        copies = [
            helper.make_node("Identity", [node.input[0]], [_x_name(name)]),
            helper.make_node("Identity", [node.input[1]], [_scale_name(name)]),
        ]
        if len(node.input) > 2 and node.input[2]:
            copies.append(
                helper.make_node(
                    "Cast", [node.input[2]], [_zero_point_name(name)], to=TensorProto.DOUBLE
                )
            )
        else:
            zero = numpy_helper.from_array(np.zeros((), np.float64), _zero_point_name(name))
            copies.append(helper.make_node("Constant", [], [_zero_point_name(name)], value=zero))
        extra_outputs.extend(copies)
    graph.node.extend(extra_outputs)
    for name in names:
        for value in (_definition_name(name), _x_name(name), _scale_name(name)):
            graph.output.append(helper.make_tensor_value_info(value, TensorProto.UNDEFINED, None))
        graph.output.append(
            helper.make_tensor_value_info(_zero_point_name(name), TensorProto.DOUBLE, None)
        )
    return forced


def _float64(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` computing in float64: float initializers, constants, inputs and casts widened."""
    wide = onnx.ModelProto()
    wide.CopyFrom(model)
    for opset in wide.opset_import:
        if opset.domain in ("", "ai.onnx"):
            opset.version = max(opset.version, REFERENCE_OPSET)
    graph = wide.graph
    for tensor in graph.initializer:
        if tensor.data_type == TensorProto.FLOAT:
            tensor.CopyFrom(_widened(tensor))
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.TENSOR:
                if attribute.t.data_type == TensorProto.FLOAT:
                    attribute.t.CopyFrom(_widened(attribute.t))
            elif node.op_type == "Cast" and attribute.name == "to":
                if attribute.i == TensorProto.FLOAT:
                    attribute.i = TensorProto.DOUBLE
    for value in (*graph.input, *graph.output):
        if value.type.tensor_type.elem_type == TensorProto.FLOAT:
            value.type.tensor_type.elem_type = TensorProto.DOUBLE
    del graph.value_info[:]
    return wide


def _widened(tensor: onnx.TensorProto) -> onnx.TensorProto:
    return numpy_helper.from_array(numpy_helper.to_array(tensor).astype(np.float64), tensor.name)


def _magnitudes(forced: onnx.ModelProto) -> onnx.ModelProto:
    """`forced` computing magnitudes: every dequantized value made |value|, the ops `|op(x)| <= |x|`
    for skipped, so each QuantizeLinear's x becomes the sum of its terms' magnitudes."""
    magnitude = onnx.ModelProto()
    magnitude.CopyFrom(forced)
    graph = magnitude.graph
    nodes = []
    for node in graph.node:
        if node.op_type in MAGNITUDE_AS_IDENTITY:
            nodes.append(helper.make_node("Identity", [node.input[0]], list(node.output)))
        elif node.op_type == "DequantizeLinear":
            signed = node.output[0] + "::signed"
            original = node.output[0]
            node.output[0] = signed
            nodes.extend([node, helper.make_node("Abs", [signed], [original])])
        else:
            nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)
    return magnitude


def _run(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    evaluator = ReferenceEvaluator(model)
    wanted = {value.name for value in model.graph.input}
    results = evaluator.run(None, {k: v for k, v in feeds.items() if k in wanted})
    return dict(zip((output.name for output in model.graph.output), results, strict=True))


def _terms_per_quantize(model: onnx.ModelProto) -> dict[str, int]:
    """Per QuantizeLinear output: how many rounded terms its x sums, along the float ops back to
    the DequantizeLinears (a convolution's window over its input channels, a pool's window, 2 for
    an Add), plus one per op on the way."""
    producers = {out: node for node in model.graph.node for out in node.output}
    shapes = _shapes(model)
    terms: dict[str, int] = {}
    for node in _quantize_nodes(model):
        total, stack, seen = 0, [node.input[0]], set()
        while stack:
            value = stack.pop()
            op = producers.get(value)
            if op is None or value in seen or op.op_type in ("DequantizeLinear", "Constant"):
                continue
            seen.add(value)
            total += _terms(op, shapes) + 1
            stack.extend(i for i in op.input if i)
        terms[node.output[0]] = total
    return terms


def _shapes(model: onnx.ModelProto) -> dict[str, tuple[int, ...]]:
    """The static shapes of the model's values, where shape inference gives them."""
    inferred = onnx.shape_inference.infer_shapes(model)
    shapes = {t.name: tuple(t.dims) for t in model.graph.initializer}
    for value in (*inferred.graph.input, *inferred.graph.value_info, *inferred.graph.output):
        dims = value.type.tensor_type.shape.dim
        if dims and all(d.HasField("dim_value") for d in dims):
            shapes[value.name] = tuple(d.dim_value for d in dims)
    return shapes


def _terms(node: onnx.NodeProto, shapes: Mapping[str, tuple[int, ...]]) -> int:
    attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if node.op_type == "Conv":
        weight = shapes.get(node.input[1])
        return int(np.prod(weight[1:])) + 1 if weight else 1 << 16
    if node.op_type in ("Gemm", "MatMul"):
        weight = shapes.get(node.input[1])
        if not weight:
            return 1 << 16
        transposed = node.op_type == "Gemm" and attributes.get("transB", 0)
        return int(weight[-1] if transposed else weight[-2]) + 1
    if node.op_type == "AveragePool":
        return int(np.prod(attributes["kernel_shape"]))
    if node.op_type == "GlobalAveragePool":
        shape = shapes.get(node.input[0])
        return int(np.prod(shape[2:])) if shape else 1 << 16
    if node.op_type == "Add":
        return 2
    return 0


__all__ = [
    "RoundingReport",
    "check_rounding",
    "quantize_outputs",
    "quantized_values",
    "with_quantized_outputs",
]
