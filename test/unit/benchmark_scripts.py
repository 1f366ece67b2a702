"""Loading a script of benchmarks/ as a module, and a tiny model to run it on, for the tests of the scripts."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

BENCHMARKS = Path(__file__).parents[2] / "benchmarks"


def load_benchmark(name: str):
    """benchmarks/<name>.py as the module `name` (the scripts import each other, as they do when run)."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.append(str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def two_layers(folder: Path) -> Path:
    """A named MatMul and Relu (two ONNX layers) saved in `folder`; the weights scaled by 1/sqrt(fan-in),
    as examples/models does, so that bf16 meets --check's tolerance."""
    weights = (np.random.default_rng(0).standard_normal((32, 32)) / np.sqrt(32)).astype(np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w"], ["m"], name="fc"),
            helper.make_node("Relu", ["m"], ["y"], name="act"),
        ],
        "two_layers",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16, 32])],
        [numpy_helper.from_array(weights, "w")],
    )
    path = folder / "two_layers.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path
