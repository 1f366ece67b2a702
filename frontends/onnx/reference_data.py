"""The inputs and expected outputs that ship beside an ONNX model, in the onnx package's backend-test
layouts (a model directory with `test_data_set_0/`, or a light model's `light_<name>_output_N.pb`
beside it), for `ziggurat-compile --check`, the conformance suite and the benchmarks.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper


@dataclass(frozen=True)
class ShippedReference:
    inputs: dict[str, np.ndarray]
    """By ONNX input name, in the graph's input order."""
    outputs: list[np.ndarray]
    """In the graph's output order."""
    source: str
    """Where the expected outputs come from (for messages)."""


def read_tensors(paths: Iterable[Path]) -> list[np.ndarray]:
    return [numpy_helper.to_array(onnx.load_tensor(str(path))) for path in paths]


def graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    """The inputs a caller feeds: graph inputs that no initializer defines."""
    initializers = {tensor.name for tensor in model.graph.initializer}
    return [value for value in model.graph.input if value.name not in initializers]


def dummy_inputs(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    """What onnx's backend test runner feeds a light model, by input name."""
    inputs = {}
    for value in graph_inputs(model):
        tensor_type = value.type.tensor_type
        shape = tuple(d.dim_value if d.HasField("dim_value") else 1 for d in tensor_type.shape.dim)
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor_type.elem_type)
        count = int(np.prod(shape))
        inputs[value.name] = (np.arange(count).reshape(shape) / max(count, 1)).astype(dtype)
    return inputs


def shipped_reference(path: Path, model: onnx.ModelProto) -> ShippedReference | None:
    """The inputs and expected outputs shipped beside the model at `path`, if any."""
    outputs = len(model.graph.output)
    data_set = path.parent / "test_data_set_0"
    if data_set.is_dir():
        names = [value.name for value in graph_inputs(model)]
        arrays = read_tensors(sorted(data_set.glob("input_*.pb"), key=_number))
        expected = sorted(data_set.glob("output_*.pb"), key=_number)
        if len(arrays) == len(names) and len(expected) == outputs:
            return ShippedReference(dict(zip(names, arrays)), read_tensors(expected), str(data_set))
    beside = [path.parent / f"{path.stem}_output_{i}.pb" for i in range(outputs)]
    if outputs and all(p.is_file() for p in beside):
        return ShippedReference(
            dummy_inputs(model), read_tensors(beside), f"{path.stem}_output_*.pb"
        )
    return None


def _number(path: Path) -> int:
    return int(path.stem.rsplit("_", 1)[1])


def with_random_weights(model: onnx.ModelProto, seed: int = 0) -> onnx.ModelProto:
    """The model with each ConstantOfShape weight fill replaced by a seeded random initializer.

    Weights are scaled by 1/sqrt(fan-in) and 1-D parameters (biases, batch-norm
    statistics) drawn from [0.5, 1.5], so activations stay in a range where
    float32 differences mean something.
    """
    rng = np.random.default_rng(seed)
    shapes = {tensor.name: numpy_helper.to_array(tensor) for tensor in model.graph.initializer}
    randomized = onnx.ModelProto()
    randomized.CopyFrom(model)
    # IR version 3 wants every initializer listed as a graph input as well; 4 does not.
    randomized.ir_version = max(randomized.ir_version, 4)
    del randomized.graph.node[:]
    for node in model.graph.node:
        if node.op_type != "ConstantOfShape" or node.input[0] not in shapes:
            randomized.graph.node.append(node)
            continue
        shape = tuple(int(d) for d in shapes[node.input[0]])
        if len(shape) == 1:
            value = rng.uniform(0.5, 1.5, shape)
        else:
            value = rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))
        randomized.graph.initializer.append(
            numpy_helper.from_array(value.astype(np.float32), node.output[0])
        )
    return randomized
