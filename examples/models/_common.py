"""Shared by the model generators: seeded weights, initializers, and the command line."""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
import onnx
from onnx import helper, numpy_helper


class Weights:
    """Initializers with reproducible random values (fixed seed), collected for the graph."""

    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)
        self.initializers: list[onnx.TensorProto] = []

    def add(self, name: str, array: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def normal(self, name: str, shape: tuple[int, ...], scale: float | None = None) -> str:
        """Weights scaled by 1/sqrt(fan-in) so activations stay O(1) through the model."""
        fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
        std = scale if scale is not None else 1 / np.sqrt(fan_in)
        return self.add(name, (self.rng.standard_normal(shape) * std).astype(np.float32))

    def batch_norm(self, prefix: str, channels: int) -> list[str]:
        """scale, bias, mean, variance of a BatchNormalization over `channels`."""
        return [
            self.add(f"{prefix}_scale", self.rng.uniform(0.5, 1.5, channels).astype(np.float32)),
            self.add(f"{prefix}_bias", self.rng.uniform(-0.1, 0.1, channels).astype(np.float32)),
            self.add(f"{prefix}_mean", self.rng.uniform(-0.1, 0.1, channels).astype(np.float32)),
            self.add(f"{prefix}_var", self.rng.uniform(0.5, 1.5, channels).astype(np.float32)),
        ]


def make_model(
    name: str,
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[onnx.ValueInfoProto],
    weights: Weights,
    opset: int,
) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, name, inputs, outputs, weights.initializers)
    opsets = [helper.make_opsetid("", opset)]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="ziggurat-examples")
    # The oldest IR version that carries the opset, so that older runtimes (onnxruntime) load it too.
    model.ir_version = helper.find_min_ir_version_for(opsets)
    onnx.checker.check_model(model, full_check=True)
    return model


def main(
    build: Callable[..., onnx.ModelProto], description: str, dynamic_batch: bool = False
) -> None:
    """Write `build()` to the path on the command line; `--dynamic-batch` where the model offers it."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("output", help="where to write the .onnx file")
    if dynamic_batch:
        parser.add_argument(
            "--dynamic-batch",
            action="store_true",
            help="declare the batch dimension as the symbol N (compile with --input-shape)",
        )
    args = parser.parse_args()
    model = build(dynamic_batch=args.dynamic_batch) if dynamic_batch else build()
    onnx.save(model, args.output)
