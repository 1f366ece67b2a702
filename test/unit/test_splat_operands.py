"""Splat constants read by elementwise ops are scalars from graph-to-tile on
(`FoldSplatConstantInputs`): the numbers stay those of the graph program, at the tensor
level for every element type and through every stage of lower-to-npu."""

from __future__ import annotations

import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
from xdsl.dialects.linalg import ops as linalg

from ziggurat.testing.differential import check_pass_preserves_numerics, check_pipeline_stages

MACHINES = ("davinci", "systolic", "tensorcore")


def _splats_everywhere(element_type: str, one: str, two: str) -> str:
    """A 0-d, a broadcast and a full-size splat, on the left and on the right."""
    t = f"tensor<4x32x{element_type}>"
    return f"""
func.func @main(%x: {t}) -> {t} {{
  %a = graph.constant dense<{two}> : tensor<{element_type}>
  %b = graph.constant dense<{one}> : tensor<32x{element_type}>
  %c = graph.constant dense<{two}> : {t}
  %p = graph.mul %x, %a : ({t}, tensor<{element_type}>) -> {t}
  %q = graph.sub %b, %p : (tensor<32x{element_type}>, {t}) -> {t}
  %r = graph.max %q, %c : ({t}, {t}) -> {t}
  func.return %r : {t}
}}"""


def _tensor_splat_inputs(module) -> list[str]:
    return [
        str(value.type)
        for op in module.walk()
        if isinstance(op, linalg.GenericOp)
        for value in op.inputs
        if isinstance(value.owner, arith.ConstantOp)
        and isinstance(value.owner.value, DenseIntOrFPElementsAttr)
    ]


@pytest.mark.parametrize(
    ("element_type", "one", "two"),
    [
        ("f32", "1.0", "-2.5"),
        ("f16", "1.0", "-2.5"),
        ("bf16", "1.0", "-2.5"),
        ("i8", "1", "-2"),
        ("i32", "1", "-2"),
    ],
)
def test_graph_to_tile_reads_splats_as_scalars(element_type, one, two):
    text = _splats_everywhere(element_type, one, two)
    report = check_pass_preserves_numerics(text, "graph-to-tile", seed=5)
    assert report.ok, str(report)
    assert _tensor_splat_inputs(report.transformed) == []


@pytest.mark.parametrize(
    "op, constant",
    [
        ("add", "[1.0, 2.0, 3.0]"),
        # +0.0 and -0.0 are equal numbers but not one splat: x * [0, -0] has the signs of both
        ("mul", "[0.0, -0.0, 0.0]"),
    ],
)
def test_a_non_splat_constant_stays_a_tensor_operand(op, constant):
    text = f"""
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {{
  %k = graph.constant dense<{constant}> : tensor<3xf32>
  %y = graph.{op} %x, %k : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}}"""
    report = check_pass_preserves_numerics(text, "graph-to-tile", seed=5)
    assert report.ok, str(report)
    assert _tensor_splat_inputs(report.transformed) == ["tensor<3xf32>"]


@pytest.mark.parametrize("machine", MACHINES)
def test_scalars_keep_the_numerics_through_lower_to_npu(machine):
    text = _splats_everywhere("f16", "1.0", "-2.5")
    report = check_pipeline_stages(text, f"lower-to-npu{{machine={machine}}}", machine, seed=5)
    assert report.ok, str(report)
    assert report.stages[-1].level == "npu"


@pytest.mark.parametrize("element_type", ["f32", "f16"])
def test_a_batch_norm_of_splats_folds_its_parameters_with_the_same_numerics(element_type):
    t = f"tensor<2x8x3x3x{element_type}>"
    p = f"tensor<8x{element_type}>"
    text = f"""
func.func @main(%x: {t}) -> {t} {{
  %scale = graph.constant dense<1.5> : {p}
  %shift = graph.constant dense<0.25> : {p}
  %mean = graph.constant dense<0.1> : {p}
  %var = graph.constant dense<2.0> : {p}
  %y = graph.batch_norm %x, %scale, %shift, %mean, %var : ({t}, {p}, {p}, {p}, {p}) -> {t}
  func.return %y : {t}
}}"""
    report = check_pass_preserves_numerics(text, "graph-to-tile", seed=5)
    assert report.ok, str(report)
    assert "math.sqrt" not in {op.name for op in report.transformed.walk()}
