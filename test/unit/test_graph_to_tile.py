"""graph-to-tile preserves numerics: every graph op on its own, and whole kernels.

Each case runs the module before the pass (graph interpreter) and after it
(tensor interpreter) on the same random inputs through the differential
harness, and checks that no graph op is left.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    Float16Type,
    IntegerType,
    ModuleOp,
    Signedness,
    StringAttr,
    TensorType,
    f32,
    i32,
    i64,
)
from xdsl.ir import Block, Region

from ziggurat.diagnostics import DiagnosticError
from ziggurat.dialects import graph
from ziggurat.dialects.graph import ResultTypedOp, bool_attr, f32_attr, i64_attr, int_array
from ziggurat.testing.differential import apply_pipeline, check_pass_preserves_numerics

f16 = Float16Type()
i8 = IntegerType(8)
i1 = IntegerType(1)
ui8 = IntegerType(8, Signedness.UNSIGNED)


def t(*shape, element_type=f32) -> TensorType:
    return TensorType(element_type, shape)


# op class -> examples of (operand types, properties, result type for ResultTypedOps)
X = t(2, 3, 4)
EXAMPLES: dict[type, list[tuple[list, dict, TensorType | None]]] = {
    graph.ReluOp: [
        ([X], {}, None),
        ([t(2, 8, element_type=i8)], {}, None),
        ([t(4, 5, element_type=f16)], {}, None),
    ],
    graph.Relu6Op: [([X], {}, None)],
    graph.LeakyReluOp: [([X], {"alpha": f32_attr(0.1)}, None)],
    graph.EluOp: [([X], {"alpha": f32_attr(0.5)}, None)],
    graph.GeluOp: [([X], {}, None), ([X], {"approximate": StringAttr("tanh")}, None)],
    graph.SigmoidOp: [([X], {}, None)],
    graph.TanhOp: [([X], {}, None)],
    graph.SiluOp: [([X], {}, None)],
    graph.HardSigmoidOp: [([X], {}, None)],
    graph.HardSwishOp: [([X], {}, None)],
    graph.SoftplusOp: [([X], {}, None)],
    graph.ClipOp: [
        ([X], {"min": f32_attr(-0.5), "max": f32_attr(0.7)}, None),
        ([t(3, 4, element_type=i8)], {"min": f32_attr(0.0)}, None),
    ],
    graph.ExpOp: [([X], {}, None)],
    graph.LogOp: [([X], {}, None)],
    graph.SqrtOp: [([X], {}, None)],
    graph.RsqrtOp: [([X], {}, None)],
    graph.ReciprocalOp: [([X], {}, None)],
    graph.NegOp: [([X], {}, None), ([t(5, element_type=i8)], {}, None)],
    graph.AbsOp: [([X], {}, None), ([t(5, element_type=i32)], {}, None)],
    graph.ErfOp: [([X], {}, None)],
    **{
        op: [([X], {}, None)]
        for op in (graph.SinOp, graph.CosOp, graph.TanOp, graph.AtanOp, graph.SinhOp)
    },
    **{op: [([X], {}, None)] for op in (graph.CoshOp, graph.AsinhOp, graph.FloorOp, graph.CeilOp)},
    # NaN outside their domains in both, as the standard normal inputs often are.
    **{op: [([X], {}, None)] for op in (graph.AsinOp, graph.AcosOp, graph.AcoshOp, graph.AtanhOp)},
    graph.RoundOp: [([X], {}, None), ([t(7, element_type=f16)], {}, None)],
    graph.BitwiseNotOp: [
        ([t(3, 4, element_type=i8)], {}, None),
        ([t(5, element_type=i64)], {}, None),
    ],
    graph.AddOp: [
        ([X, t(3, 1)], {}, None),
        ([t(4, element_type=i8), t(4, element_type=i8)], {}, None),
    ],
    graph.SubOp: [([t(1, 3, 1), t(2, 1, 4)], {}, None)],
    graph.MulOp: [([X, t()], {}, None)],
    graph.DivOp: [
        ([X, t(4)], {}, None),
        ([t(6, element_type=i32), t(6, element_type=i32)], {}, None),
    ],
    graph.PowOp: [([X, X], {}, None)],
    graph.MaxOp: [([X, t(2, 1, 4)], {}, None)],
    graph.MinOp: [([X, t(2, 1, 4, element_type=f32)], {}, None)],
    graph.ModOp: [
        ([t(3, 4, element_type=i32), t(4, element_type=i32)], {}, None),
        ([t(3, 4, element_type=i8), t(3, 1, element_type=i8)], {"fmod": bool_attr(True)}, None),
        ([t(6, element_type=i64), t(6, element_type=i64)], {}, None),
    ],
    graph.BitwiseAndOp: [([t(3, 4, element_type=i32), t(4, element_type=i32)], {}, None)],
    graph.BitwiseOrOp: [([t(3, 4, element_type=i8), t(3, 4, element_type=i8)], {}, None)],
    graph.BitwiseXorOp: [([t(2, 3, element_type=i64), t(1, 3, element_type=i64)], {}, None)],
    graph.BitShiftOp: [
        ([t(3, 4, element_type=i8), t(4, element_type=i8)], {}, None),
        (
            [t(3, 4, element_type=i32), t(3, 4, element_type=i32)],
            {"direction": StringAttr("right")},
            None,
        ),
    ],
    graph.PReluOp: [([X, t(3, 1)], {}, None)],
    graph.WhereOp: [([t(3, 4, element_type=i1), t(3, 4), t(4)], {}, None)],
    graph.EqualOp: [([t(3, 4, element_type=i32), t(4, element_type=i32)], {}, None)],
    graph.GreaterOp: [([X, t(4)], {}, None)],
    graph.LessOp: [([t(3, 1), t(1, 5)], {}, None)],
    graph.NotOp: [([t(3, 4, element_type=i1)], {}, None)],
    graph.MatMulOp: [
        ([t(5, 7), t(7, 3)], {}, None),
        ([t(2, 5, 7), t(7, 3)], {}, None),
        ([t(2, 1, 5, 7), t(3, 7, 4)], {}, None),
        ([t(7), t(7, 3)], {}, None),
        ([t(4, 7), t(7)], {}, None),
        ([t(4, 6, element_type=f16), t(6, 5, element_type=f16)], {}, None),
    ],
    graph.GemmOp: [
        ([t(4, 6), t(6, 5), t(5)], {"alpha": f32_attr(0.5), "beta": f32_attr(2.0)}, None),
        ([t(6, 4), t(5, 6)], {"trans_a": bool_attr(True), "trans_b": bool_attr(True)}, None),
    ],
    graph.Conv2dOp: [
        ([t(1, 3, 7, 7), t(4, 3, 3, 3), t(4)], {"pads": int_array([1, 1, 1, 1])}, None),
        (
            [t(2, 4, 9, 8), t(6, 2, 3, 2)],
            {"groups": i64_attr(2), "strides": int_array([2, 1]), "dilations": int_array([1, 2])},
            None,
        ),
        (
            [t(1, 6, 6, 4), t(4, 3, 3, 4)],
            {"layout": StringAttr("NHWC"), "pads": int_array([0, 1, 2, 1])},
            None,
        ),
        (  # grouped NHWC: (g, og) collapse into the innermost channels
            [t(2, 9, 8, 4), t(6, 3, 2, 2), t(6)],
            {
                "layout": StringAttr("NHWC"),
                "groups": i64_attr(2),
                "strides": int_array([2, 1]),
                "dilations": int_array([1, 2]),
            },
            None,
        ),
        (  # depthwise NHWC
            [t(1, 7, 7, 3), t(3, 3, 3, 1)],
            {"layout": StringAttr("NHWC"), "groups": i64_attr(3), "pads": int_array([1, 1, 1, 1])},
            None,
        ),
        (
            [
                t(1, 5, 5, 3, element_type=f16),
                t(4, 3, 3, 3, element_type=f16),
                t(4, element_type=f16),
            ],
            {"layout": StringAttr("NHWC")},
            None,
        ),
    ],
    graph.BatchNormOp: [([t(2, 3, 4, 4), t(3), t(3), t(3), t(3)], {}, None)],
    graph.LayerNormOp: [
        ([t(2, 3, 8), t(8), t(8)], {}, None),
        ([t(2, 3, 8), t(3, 8)], {"axis": i64_attr(1)}, None),
    ],
    graph.SoftmaxOp: [([X], {}, None), ([X], {"axis": i64_attr(1)}, None)],
    graph.LogSoftmaxOp: [([X], {"axis": i64_attr(0)}, None)],
    graph.MaxPoolOp: [
        (
            [t(1, 2, 7, 7)],
            {
                "kernel": int_array([3, 3]),
                "strides": int_array([2, 2]),
                "pads": int_array([1, 1, 1, 1]),
            },
            None,
        ),
        (
            [t(1, 2, 6, 6)],
            {
                "kernel": int_array([2, 2]),
                "strides": int_array([2, 2]),
                "ceil_mode": bool_attr(True),
                "dilations": int_array([2, 1]),
            },
            None,
        ),
        (
            [t(1, 6, 7, 2)],
            {
                "kernel": int_array([3, 2]),
                "strides": int_array([2, 1]),
                "pads": int_array([1, 0, 1, 1]),
                "dilations": int_array([1, 2]),
                "layout": StringAttr("NHWC"),
            },
            None,
        ),
    ],
    graph.AvgPoolOp: [
        (
            [t(1, 2, 7, 7)],
            {
                "kernel": int_array([3, 3]),
                "strides": int_array([2, 2]),
                "pads": int_array([1, 1, 1, 1]),
            },
            None,
        ),
        (
            [t(1, 5, 5, 2)],
            {
                "kernel": int_array([2, 2]),
                "pads": int_array([1, 1, 0, 0]),
                "count_include_pad": bool_attr(True),
                "ceil_mode": bool_attr(True),
                "strides": int_array([2, 2]),
                "layout": StringAttr("NHWC"),
            },
            None,
        ),
        (  # the padding does not count: each output position has its own divisor
            [t(1, 7, 6, 3)],
            {
                "kernel": int_array([3, 3]),
                "strides": int_array([2, 2]),
                "pads": int_array([1, 1, 1, 1]),
                "layout": StringAttr("NHWC"),
            },
            None,
        ),
    ],
    graph.GlobalAvgPoolOp: [([t(2, 3, 4, 5)], {}, None)],
    graph.GlobalMaxPoolOp: [([t(2, 4, 5, 3)], {"layout": StringAttr("NHWC")}, None)],
    graph.ReduceSumOp: [
        ([X], {"axes": int_array([1])}, None),
        ([X], {"keepdims": bool_attr(False)}, None),
    ],
    graph.ReduceMeanOp: [
        ([X], {"axes": int_array([0, 2])}, None),
        ([t(4, 6, element_type=i32)], {"axes": int_array([1])}, None),
    ],
    graph.ReduceMaxOp: [([X], {"axes": int_array([-1]), "keepdims": bool_attr(False)}, None)],
    graph.ReduceProdOp: [([X], {"axes": int_array([2])}, None)],
    graph.ArgMaxOp: [
        ([X], {"axis": i64_attr(1)}, None),
        (
            [t(2, 6, element_type=i8)],
            {
                "axis": i64_attr(-1),
                "keepdims": bool_attr(False),
                "select_last_index": bool_attr(True),
            },
            None,
        ),
    ],
    graph.CumSumOp: [
        ([X], {"axis": i64_attr(2)}, None),
        (
            [t(3, 5, element_type=i32)],
            {"axis": i64_attr(1), "exclusive": bool_attr(True), "reverse": bool_attr(True)},
            None,
        ),
    ],
    graph.CumProdOp: [
        ([X], {"axis": i64_attr(1)}, None),
        (
            [t(3, 5, element_type=i32)],
            {"axis": i64_attr(-1), "exclusive": bool_attr(True), "reverse": bool_attr(True)},
            None,
        ),
    ],
    graph.TransposeOp: [([X], {"perm": int_array([2, 0, 1])}, None)],
    graph.ReshapeOp: [
        ([X], {}, t(6, 4)),
        ([X], {}, t(2, 3, 2, 2)),
        # split one dim and merge others: a collapse_shape, then an expand_shape
        ([X], {}, t(4, 6)),
        ([t(5, 1, 8)], {}, t(5, 2, 4)),
        ([t(1, 6, 4)], {}, t(3, 2, 4, 1)),
    ],
    graph.BroadcastToOp: [([t(3, 1)], {}, t(2, 3, 4)), ([t(4)], {}, t(3, 4))],
    graph.FlattenOp: [([X], {"axis": i64_attr(2)}, None)],
    graph.SqueezeOp: [([t(1, 3, 1, 4)], {}, None)],
    graph.UnsqueezeOp: [([t(3, 4)], {"axes": int_array([0, 2])}, None)],
    graph.ConcatOp: [([t(2, 3), t(2, 5), t(2, 1)], {"axis": i64_attr(1)}, None)],
    graph.SliceOp: [
        (
            [t(6, 8)],
            {"starts": int_array([1, 0]), "ends": int_array([5, 8]), "steps": int_array([2, 3])},
            None,
        ),
        (
            [t(6, 8)],
            {
                "starts": int_array([-1]),
                "ends": int_array([2**63 - 1]),
                "axes": int_array([1]),
                "steps": int_array([-2]),
            },
            None,
        ),
    ],
    graph.PadOp: [
        ([t(3, 4)], {"pads": int_array([1, 0, 2, 1]), "value": f32_attr(1.5)}, None),
        ([t(3, 4)], {"pads": int_array([-1, 1, 1, -2])}, None),
        ([t(3, 4)], {"pads": int_array([2, 1, 1, 3]), "mode": StringAttr("reflect")}, None),
        ([t(3, 4)], {"pads": int_array([2, 1, 1, 3]), "mode": StringAttr("edge")}, None),
    ],
    graph.GatherOp: [
        ([t(9, 3), t(2, 2, element_type=i64)], {}, None),
        ([t(2, 9, 3), t(4, element_type=i32)], {"axis": i64_attr(1)}, None),
    ],
    graph.TopKOp: [
        ([X], {"k": i64_attr(2), "axis": i64_attr(1), "largest": bool_attr(False)}, None),
        ([t(3, 9, element_type=i8)], {"k": i64_attr(5)}, None),
        ([t(4, 6, element_type=f16)], {"k": i64_attr(4), "axis": i64_attr(0)}, None),
    ],
    graph.CastOp: [
        ([X], {}, t(2, 3, 4, element_type=i32)),
        ([t(5, element_type=i8)], {}, t(5, element_type=f16)),
        ([X], {}, t(2, 3, 4, element_type=i1)),
        ([t(5, element_type=ui8)], {}, t(5, element_type=f32)),
        ([t(5, element_type=ui8)], {}, t(5, element_type=i32)),
        ([t(5, element_type=i32)], {}, t(5, element_type=ui8)),
    ],
    graph.BitcastOp: [
        ([X], {}, t(2, 3, 4, element_type=i32)),
        ([t(5, element_type=IntegerType(16))], {}, t(5, element_type=f16)),
        ([t(6, element_type=ui8)], {}, t(6, element_type=i8)),
        ([t(4, element_type=i1)], {}, t(4, element_type=ui8)),
        ([t(4, element_type=i8)], {}, t(4, element_type=i1)),
        ([t(element_type=f32)], {}, t(element_type=i32)),
    ],
    graph.QuantizeOp: [
        ([X, t(), t(element_type=i8)], {}, None),
        ([t(2, 3), t(3), t(3, element_type=i8)], {"axis": i64_attr(1)}, None),
        ([X, t(), t(element_type=ui8)], {}, None),
    ],
    graph.DequantizeOp: [
        ([t(2, 3, element_type=i8), t(1), t(1, element_type=i8)], {}, None),
        ([t(2, 3, element_type=ui8), t(3), t(3, element_type=ui8)], {"axis": i64_attr(1)}, None),
    ],
}

# Ops the pass refuses, with the reason (strict: a lowering makes these tests fail).
UNSUPPORTED: dict[type, str] = {
    graph.FusedOp: "graph-to-tile does not lower graph-fuse's groups yet (graph-unfuse first)",
    graph.YieldOp: "graph.yield only terminates a graph.fused body",
}


def function_of(op_type, operand_types, properties, result_type) -> ModuleOp:
    block = Block(arg_types=operand_types)
    if issubclass(op_type, ResultTypedOp):
        op = op_type(block.args[0], result_type)
        op.properties.update(properties)
    else:
        op = op_type.build_inferred(list(block.args), properties)
    block.add_ops([op, func.ReturnOp(*op.results)])
    function = func.FuncOp("main", (operand_types, [r.type for r in op.results]), Region(block))
    return ModuleOp([function])


def _cases():
    for op_type in graph.Graph.operations:
        if op_type is graph.ConstantOp:
            continue
        examples = EXAMPLES.get(op_type)
        marks = []
        if op_type in UNSUPPORTED:
            marks = [pytest.mark.xfail(strict=True, reason=UNSUPPORTED[op_type])]
        if examples is None:
            yield pytest.param(op_type, None, id=op_type.name, marks=marks)
            continue
        for index, example in enumerate(examples):
            yield pytest.param(op_type, example, id=f"{op_type.name}-{index}", marks=marks)


def assert_lowered(report) -> None:
    assert report.ok, str(report)
    left = [op.name for op in report.transformed.walk() if op.dialect_name() == "graph"]
    assert not left, f"graph ops left after graph-to-tile: {left}"


@pytest.mark.parametrize("op_type, example", list(_cases()))
def test_every_graph_op_lowers_with_the_same_numerics(op_type, example):
    assert example is not None, f"no example operands for {op_type.name}: add one to EXAMPLES"
    module = function_of(op_type, *example)
    report = check_pass_preserves_numerics(module, "graph-to-tile", seed=1)
    assert_lowered(report)


def test_constant_becomes_arith_constant():
    text = """
    func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
      %c = graph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
      %y = graph.mul %x, %c : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
      func.return %y : tensor<2x3xf32>
    }"""
    report = check_pass_preserves_numerics(text, "graph-to-tile")
    assert_lowered(report)
    assert any(op.name == "arith.constant" for op in report.transformed.walk())


KERNELS = {
    "ragged_matmul": """
    func.func @main(%a: tensor<100x300xf32>, %b: tensor<300x77xf32>) -> tensor<100x77xf32> {
      %y = graph.matmul %a, %b : (tensor<100x300xf32>, tensor<300x77xf32>) -> tensor<100x77xf32>
      func.return %y : tensor<100x77xf32>
    }""",
    "conv3x3": """
    func.func @main(%x: tensor<1x8x12x12xf32>, %w: tensor<16x8x3x3xf32>, %b: tensor<16xf32>) -> tensor<1x16x12x12xf32> {
      %y = graph.conv2d %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x12x12xf32>, tensor<16x8x3x3xf32>, tensor<16xf32>) -> tensor<1x16x12x12xf32>
      func.return %y : tensor<1x16x12x12xf32>
    }""",
    "conv1x1": """
    func.func @main(%x: tensor<2x16x7x7xf32>, %w: tensor<8x16x1x1xf32>) -> tensor<2x8x7x7xf32> {
      %y = graph.conv2d %x, %w : (tensor<2x16x7x7xf32>, tensor<8x16x1x1xf32>) -> tensor<2x8x7x7xf32>
      func.return %y : tensor<2x8x7x7xf32>
    }""",
    "depthwise": """
    func.func @main(%x: tensor<1x8x10x10xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<1x8x10x10xf32> {
      %y = graph.conv2d %x, %w {groups = 8 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x10x10xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x10x10xf32>
      func.return %y : tensor<1x8x10x10xf32>
    }""",
    "strided_conv": """
    func.func @main(%x: tensor<1x4x11x11xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x5x5xf32> {
      %y = graph.conv2d %x, %w {strides = array<i64: 2, 2>} : (tensor<1x4x11x11xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x5x5xf32>
      func.return %y : tensor<1x6x5x5xf32>
    }""",
    "conv_bn_relu_add": """
    func.func @main(%x: tensor<1x8x8x8xf32>, %w: tensor<8x8x3x3xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>,
                    %m: tensor<8xf32>, %v: tensor<8xf32>) -> tensor<1x8x8x8xf32> {
      %c = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32>
      %vp = graph.abs %v : tensor<8xf32>
      %n = graph.batch_norm %c, %s, %b, %m, %vp : (tensor<1x8x8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
      %r = graph.relu %n : tensor<1x8x8x8xf32>
      %y = graph.add %r, %x : (tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
      func.return %y : tensor<1x8x8x8xf32>
    }""",
    "softmax": """
    func.func @main(%x: tensor<4x33xf32>) -> tensor<4x33xf32> {
      %y = graph.softmax %x : tensor<4x33xf32>
      func.return %y : tensor<4x33xf32>
    }""",
    "layer_norm": """
    func.func @main(%x: tensor<2x5x16xf32>, %g: tensor<16xf32>, %b: tensor<16xf32>) -> tensor<2x5x16xf32> {
      %y = graph.layer_norm %x, %g, %b : (tensor<2x5x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x5x16xf32>
      func.return %y : tensor<2x5x16xf32>
    }""",
    "attention": """
    func.func @main(%q: tensor<2x8x16xf32>, %k: tensor<2x16x8xf32>, %v: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
      %s = graph.matmul %q, %k : (tensor<2x8x16xf32>, tensor<2x16x8xf32>) -> tensor<2x8x8xf32>
      %scale = graph.constant dense<0.25> : tensor<f32>
      %z = graph.mul %s, %scale : (tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8x8xf32>
      %p = graph.softmax %z : tensor<2x8x8xf32>
      %o = graph.matmul %p, %v : (tensor<2x8x8xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
      func.return %o : tensor<2x8x16xf32>
    }""",
    "mlp": """
    func.func @main(%x: tensor<4x32xf32>, %w1: tensor<32x64xf32>, %b1: tensor<64xf32>, %w2: tensor<64x10xf32>, %b2: tensor<10xf32>) -> tensor<4x10xf32> {
      %h = graph.gemm %x, %w1, %b1 : (tensor<4x32xf32>, tensor<32x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
      %a = graph.gelu %h : tensor<4x64xf32>
      %o = graph.gemm %a, %w2, %b2 : (tensor<4x64xf32>, tensor<64x10xf32>, tensor<10xf32>) -> tensor<4x10xf32>
      func.return %o : tensor<4x10xf32>
    }""",
    "f16_mlp": """
    func.func @main(%x: tensor<4x32xf16>, %w: tensor<32x16xf16>, %b: tensor<16xf16>) -> tensor<4x16xf16> {
      %h = graph.matmul %x, %w : (tensor<4x32xf16>, tensor<32x16xf16>) -> tensor<4x16xf16>
      %y = graph.add %h, %b : (tensor<4x16xf16>, tensor<16xf16>) -> tensor<4x16xf16>
      %r = graph.relu %y : tensor<4x16xf16>
      func.return %r : tensor<4x16xf16>
    }""",
}


@pytest.mark.parametrize("name", list(KERNELS))
def test_kernel_lowers_with_the_same_numerics(name):
    report = check_pass_preserves_numerics(KERNELS[name], "graph-to-tile")
    assert_lowered(report)


def test_named_ops_where_xdsl_has_them():
    report = check_pass_preserves_numerics(KERNELS["conv_bn_relu_add"], "graph-to-tile")
    names = {op.name for op in report.transformed.walk()}
    assert {"linalg.conv_2d_nchw_fchw", "linalg.fill", "tensor.pad", "linalg.generic"} <= names
    report = check_pass_preserves_numerics(KERNELS["ragged_matmul"], "graph-to-tile")
    assert "linalg.matmul" in {op.name for op in report.transformed.walk()}


def test_unsigned_tensors_are_refused_at_the_op():
    text = """
    func.func @main(%x: tensor<4xui8>) -> tensor<4xui8> {
      %y = graph.relu %x : tensor<4xui8>
      func.return %y : tensor<4xui8>
    }"""
    with pytest.raises(DiagnosticError) as caught:
        check_pass_preserves_numerics(text, "graph-to-tile")
    message = caught.value.diagnostics[0].format()
    assert "graph-to-tile: cannot lower 'graph.relu'" in message
    assert ":3:" in message  # the line of the op


def test_integer_pow_is_refused():
    module = function_of(graph.PowOp, [t(3, element_type=i32), t(3, element_type=i32)], {}, None)
    with pytest.raises(DiagnosticError, match="cannot lower integer 'graph.pow'"):
        apply_pipeline(module, "graph-to-tile")


EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "examples"


def test_the_example_cnn_lowers_with_the_same_numerics():
    text = (EXAMPLES_DIR / "graph" / "small_cnn.mlir").read_text()
    assert_lowered(check_pass_preserves_numerics(text, "graph-to-tile"))


@pytest.mark.parametrize(
    "script", ["mlp", "resnet_block", "mobilenet_block", "transformer_encoder"]
)
def test_the_example_onnx_models_lower_with_the_same_numerics(script, tmp_path):
    model, ir = tmp_path / f"{script}.onnx", tmp_path / f"{script}.mlir"
    bin_dir = Path(sys.executable).parent
    subprocess.run(
        [sys.executable, str(EXAMPLES_DIR / "models" / f"{script}.py"), str(model)], check=True
    )
    subprocess.run(
        [str(bin_dir / "ziggurat-compile"), str(model), "--opt", "-o", str(ir)], check=True
    )
    assert_lowered(check_pass_preserves_numerics(ir.read_text(), "graph-to-tile"))
