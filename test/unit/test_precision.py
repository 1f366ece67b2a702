"""`--precision auto` (ziggurat.lowering.precision): f16 where a calibration run's values stay well
inside its range, bf16 where they would not, and the model's own type where the matrix unit takes it."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from ziggurat import numerics
from ziggurat.context import default_context
from ziggurat.lowering.precision import F16_HEADROOM, F16_LARGEST, choose_precision
from ziggurat.machine import load_machine
from ziggurat.parsing import parse_source
from ziggurat.transforms.graph.convert_float import PRECISION_ATTR

SCALED = """
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {{
  %c = graph.constant dense<{scale}> : tensor<8xf32>
  %y = graph.mul %x, %c : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %w = graph.constant dense<0.125> : tensor<8x8xf32>
  %z = graph.matmul %y, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  func.return %z : tensor<4x8xf32>
}}
"""
"""A matmul for the matrix unit after a scaling that decides how large the values get."""


def scaled(scale: float):
    return parse_source(default_context(), SCALED.format(scale=scale), "scaled.mlir")


ONES = [np.ones((4, 8), np.float32)]


def test_values_well_inside_f16_compute_in_f16():
    precision = choose_precision("auto", load_machine("davinci"), scaled(2.0), ONES)
    assert precision.element_type == "f16" and precision.dtype == np.float16
    assert "largest value on the calibration inputs is 2" in precision.reason


def test_values_near_f16s_largest_compute_in_bf16_and_say_where():
    # within f16's range, but not by the headroom: another input could overflow it
    scale = 2 * F16_LARGEST / F16_HEADROOM
    precision = choose_precision("auto", load_machine("davinci"), scaled(scale), ONES)
    assert precision.element_type == "bf16"
    assert "(at scaled.mlir:3)" in precision.reason and "bf16 keeps f32's range" in precision.reason


MASKED = """
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = graph.constant dense<0.125> : tensor<8x8xf32>
  %s = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %m = graph.constant dense<[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.0e+38, -3.0e+38]> : tensor<8xf32>
  %a = graph.add %s, %m : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %p = graph.softmax %a {axis = 1 : i64} : tensor<4x8xf32>
  %v = graph.constant dense<0.5> : tensor<8x8xf32>
  %q = graph.matmul %p, %v : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %r = graph.relu %q : tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
"""
"""An attention-like mask written as f32's lowest value: only the mask, the add and the softmax
see values beyond f16."""


def test_the_calibration_inputs_decide():
    small = choose_precision("auto", load_machine("davinci"), scaled(1.0), ONES)
    assert (small.element_type, small.in_bf16, small.dtype) == ("f16", 0, np.float16)
    large = choose_precision("auto", load_machine("davinci"), scaled(1.0), [ONES[0] * 1e5])
    assert (large.element_type, large.in_bf16) == ("bf16", 0)
    assert "1 convolutions or matrix products among them" in large.reason


def test_only_the_vector_ops_beyond_f16_compute_in_bf16():
    module = parse_source(default_context(), MASKED, "masked.mlir")
    precision = choose_precision("auto", load_machine("davinci"), module, ONES)
    assert (precision.element_type, precision.in_bf16) == ("f16", 3)
    assert precision.dtype == np.dtype(ml_dtypes.bfloat16)  # --check's bound: the coarsest type
    marked = [op.name for op in module.walk() if PRECISION_ATTR in op.attributes]
    assert marked == ["graph.constant", "graph.add", "graph.softmax"]
    assert "3 of 8 float ops" in precision.reason


def test_a_model_mostly_beyond_f16_computes_in_bf16():
    module = scaled(1e5)  # every op but the matmul's weight sees 1e5
    precision = choose_precision("auto", load_machine("davinci"), module, ONES)
    assert (precision.element_type, precision.in_bf16) == ("bf16", 0)
    assert not any(PRECISION_ATTR in op.attributes for op in module.walk())


def test_mixed_precision_lowers_and_matches_in_bf16():
    """The ops f16 cannot hold compute in bf16 on the npu, the others in f16."""
    from ziggurat.testing.differential import apply_pipeline, run_at_level

    module = parse_source(default_context(), MASKED, "masked.mlir")
    inputs = [np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)]
    expected = run_at_level(module, inputs, "main")
    precision = choose_precision("auto", load_machine("davinci"), module, inputs)
    assert precision.in_bf16 == 3
    apply_pipeline(module, "graph-convert-float,compile{machine=davinci}")
    (actual,) = run_at_level(module, inputs, "main", "davinci")
    assert numerics.compare(actual, expected[0], computed_in=precision.dtype).ok


def test_a_machine_without_bf16_stays_in_f16_and_says_so():
    precision = choose_precision("auto", load_machine("systolic"), scaled(1e6), ONES)
    assert precision.element_type == "f16" and "has no bf16" in precision.reason


@pytest.mark.parametrize("requested, expected", [("f16", "f16"), ("bf16", "bf16"), ("model", None)])
def test_an_explicit_precision_is_kept(requested, expected):
    precision = choose_precision(requested, load_machine("davinci"), scaled(1e6), ONES)
    assert precision.element_type == expected


def test_a_model_without_matrix_work_keeps_f32_on_the_vector_unit():
    module = parse_source(
        default_context(),
        """
        func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
          %y = graph.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
          func.return %y : tensor<4xf32>
        }
        """,
        "add.mlir",
    )
    precision = choose_precision("auto", load_machine("davinci"), module, [np.ones(4, np.float32)])
    assert precision.element_type is None


def test_integer_models_keep_their_types():
    module = parse_source(
        default_context(),
        """
        func.func @main(%x: tensor<4xi32>) -> tensor<4xi32> {
          %y = graph.add %x, %x : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
          func.return %y : tensor<4xi32>
        }
        """,
        "ints.mlir",
    )
    precision = choose_precision("auto", load_machine("davinci"), module, [np.ones(4, np.int32)])
    assert precision.element_type is None and precision.dtype is None


def test_infinities_fit_f16():
    """A causal mask's -inf is -inf in f16 too; only finite values can overflow."""
    module = parse_source(
        default_context(),
        """
        func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
          %c = graph.constant dense<[0.0, 0xFF800000, 0.0, 0xFF800000]> : tensor<4xf32>
          %y = graph.add %x, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
          %w = graph.constant dense<0.5> : tensor<4x4xf32>
          %z = graph.matmul %x, %w : (tensor<4xf32>, tensor<4x4xf32>) -> tensor<4xf32>
          %s = graph.add %y, %z : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
          func.return %s : tensor<4xf32>
        }
        """,
        "mask.mlir",
    )
    precision = choose_precision("auto", load_machine("davinci"), module, [np.ones(4, np.float32)])
    assert precision.element_type == "f16"


def test_a_qdq_model_keeps_f32_for_its_requantization():
    """Once `graph-integer-qdq` has made its convolutions integer, no float product is left for the
    matrix unit; the requantization between them stays f32 on the vector unit, as exactness needs."""
    from pathlib import Path

    import onnx

    from ziggurat.frontends.onnx import import_model

    corpus = Path(__file__).parent / "data" / "corpus"
    model = onnx.load(str(corpus / "resnet18_int8.onnx"))
    inputs = list(np.load(corpus / "resnet18_int8.inputs.npz").values())
    module = import_model(model, {})
    precision = choose_precision("auto", load_machine("davinci"), module, inputs)
    assert precision.element_type is None and "no float convolution" in precision.reason
