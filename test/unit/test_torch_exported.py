"""Transformers exported by torch.onnx.export (both exporters) import and run like onnxruntime.

The fixtures in data/torch_export come from examples/models/transformers.py (see the README
there); this test needs no torch. Each model is imported with the shapes of its stored
inputs (the exports declare batch and sequence dynamic), so the exporters' shape
arithmetic (Shape, Gather, Concat, Range, Trilu of ConstantOfShape ...) folds at import.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from onnxruntime.capi.onnxruntime_pybind11_state import Fail
from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import SSAValue

from ziggurat.diagnostics import DiagnosticError
from ziggurat.dialects.graph import ConstantOp
from ziggurat.frontends.onnx import import_model
from ziggurat.interpreters.graph_interpreter import run_function

DATA = Path(__file__).parent / "data" / "torch_export"

MODELS = [
    f"{model}_{exporter}"
    for model in ("gpt_block", "gpt_sdpa", "bert_encoder", "bert_mha", "vit")
    for exporter in ("torchscript", "dynamo")
]

# f32 throughout, in both ziggurat and onnxruntime; they differ only in summation order (matmul,
# softmax and LayerNorm reductions over 8-64 terms) and in erf/exp/tanh's last bits. Each such
# step is off by about an ulp (6e-8 relative); a few dozen of them through a block stay near 1e-6
# relative, as LayerNorm renormalises at each stage instead of letting errors grow. The GPT's
# logits (tied to the embedding) reach ~30, the rest stays O(1). 1e-5 relative plus 1e-5
# absolute is ~100 ulps: room for summation order, not for a wrong mask, head split or
# residual (those move outputs by O(0.1-1)).
RTOL, ATOL = 1e-5, 1e-5


def load(stem: str) -> tuple[onnx.ModelProto, dict[str, np.ndarray], dict[str, np.ndarray]]:
    model = onnx.load(str(DATA / f"{stem}.onnx"))
    inputs = dict(np.load(DATA / f"{stem}.inputs.npz"))
    outputs = dict(np.load(DATA / f"{stem}.outputs.npz"))
    return model, inputs, outputs


def onnxruntime_outputs(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    return session.run(None, inputs)


@pytest.mark.parametrize("stem", MODELS)
def test_exported_transformer_matches_onnxruntime(stem: str):
    model, inputs, stored = load(stem)
    module = import_model(model, {name: array.shape for name, array in inputs.items()})
    ours = run_function(module, list(inputs.values()))
    reference = onnxruntime_outputs(model, inputs)
    names = [output.name for output in model.graph.output]
    assert list(stored) == names
    for name, actual, expected in zip(names, ours, reference, strict=True):
        assert actual.shape == expected.shape == stored[name].shape, name
        assert actual.dtype == expected.dtype == np.float32, name
        np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL, err_msg=name)
        np.testing.assert_allclose(actual, stored[name], rtol=RTOL, atol=ATOL, err_msg=name)
        # Not degenerate: every output varies, across the batch too (a lost mask or broadcast would flatten it).
        assert np.ptp(actual) > 0.1 and not np.allclose(actual[0], actual[1], atol=1e-3), name


def other_inputs(stored: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Inputs of another batch size (and sequence length), which the exports declare dynamic."""
    rng = np.random.default_rng(1)
    if "image" in stored:
        return {"image": rng.standard_normal((3, *stored["image"].shape[1:])).astype(np.float32)}
    batch, length = 3, 7
    inputs = {"input_ids": rng.integers(0, 64, (batch, length), dtype=np.int64)}
    if "attention_mask" in stored:
        mask = np.ones((batch, length), np.int64)
        mask[1, 5:], mask[2, 3:] = 0, 0
        token_types = np.repeat((np.arange(length) >= 4).astype(np.int64)[None], batch, axis=0)
        inputs |= {"token_type_ids": token_types, "attention_mask": mask}
    return inputs


TRACED_SIZES = {"bert_mha_torchscript": "/mha/Reshape_4"}
"""Exports that declare dynamic axes but keep traced sizes: the TorchScript trace of
nn.MultiheadAttention writes its heads' reshape targets (sequence x batch * heads) as constants,
so onnxruntime fails at that Reshape for another sequence length, and the import says why."""


@pytest.mark.parametrize("stem", MODELS)
def test_other_input_shapes_match_onnxruntime(stem: str):
    """Imported for shapes other than the traced ones, the shape arithmetic folds to the new sizes."""
    model, stored, _ = load(stem)
    inputs = other_inputs(stored)
    shapes = {name: array.shape for name, array in inputs.items()}
    if stem in TRACED_SIZES:
        with pytest.raises(Fail, match=TRACED_SIZES[stem]):
            onnxruntime_outputs(model, inputs)
        with pytest.raises(
            DiagnosticError, match=f"node '{TRACED_SIZES[stem]}' \\(Reshape\\): cannot reshape"
        ):
            import_model(model, shapes)
        return
    module = import_model(model, shapes)
    ours = run_function(module, list(inputs.values()))
    for actual, expected in zip(ours, onnxruntime_outputs(model, inputs), strict=True):
        assert actual.shape == expected.shape and actual.shape[0] == 3
        np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL)
        assert np.ptp(actual) > 0.1 and not np.allclose(actual[0], actual[1], atol=1e-3)


@pytest.mark.parametrize("stem", MODELS)
def test_shape_arithmetic_folds_at_import(stem: str):
    """With static input shapes, no integer op is left that does not read an input: the exporters'
    shape subgraphs became constants (integer ops on the token ids and the mask stay)."""
    model, inputs, _ = load(stem)
    module = import_model(model, {name: array.shape for name, array in inputs.items()})
    (function,) = module.ops
    from_inputs: set[SSAValue] = set(function.body.block.args)
    left = []
    for op in function.body.block.ops:
        if any(operand in from_inputs for operand in op.operands):
            from_inputs.update(op.results)
        elif not isinstance(op, ConstantOp) and any(
            isinstance(result.type, TensorType)
            and isinstance(result.type.get_element_type(), IntegerType)
            for result in op.results
        ):
            left.append(op.name)
    assert not left
