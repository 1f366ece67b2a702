"""Every graph op's `evaluate` against onnxruntime, and its shape inference errors.

Each case builds the op with `build_inferred` (or `Op(input, result_type)` for
the ops whose result type is their target), verifies it, checks that
`evaluate` returns the inferred result type, and compares the numbers with a
one-node (or, for ops ONNX spells with several nodes, a few-node) ONNX model
run by onnxruntime's CPU provider.
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import onnxruntime as ort
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from onnx import helper, numpy_helper
from xdsl.dialects.builtin import BFloat16Type, IntegerType, StringAttr, TensorType, f32
from xdsl.irdl import OptionalDef, OptOperandDef, VarOperandDef
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.test_value import create_ssa_value

from ziggurat.context import default_context
from ziggurat.dialects import graph
from ziggurat.dialects.graph import (
    OpPatternKind,
    bool_attr,
    f32_attr,
    i64_attr,
    int_array,
    pattern_kind_of,
)
from ziggurat.dtypes import tensor_type_of, to_numpy_dtype
from ziggurat.interpreters.graph_interpreter import find_function, random_inputs, run_function
from ziggurat.parsing import parse_source

RNG = np.random.default_rng(20261123)
SETTINGS = settings(max_examples=25, deadline=None)


def normal(*shape, dtype=np.float32) -> np.ndarray:
    return np.asarray(RNG.standard_normal(shape)).astype(dtype)


def integers(*shape, dtype=np.int32, low=-50, high=50) -> np.ndarray:
    return np.asarray(RNG.integers(low, high, shape)).astype(dtype)


def onnx_run(nodes, inputs: dict[str, np.ndarray], opset: int = 21, initializers=None):
    """Run the ONNX graph of `nodes` whose output is `y` with onnxruntime."""
    nodes = nodes if isinstance(nodes, list) else [nodes]
    model = helper.make_model(
        helper.make_graph(
            nodes,
            "reference",
            [
                helper.make_tensor_value_info(
                    name, helper.np_dtype_to_tensor_dtype(array.dtype), array.shape
                )
                for name, array in inputs.items()
            ],
            [helper.make_empty_tensor_value_info("y")],
            initializer=[
                numpy_helper.from_array(np.asarray(array), name)
                for name, array in (initializers or {}).items()
            ],
        ),
        opset_imports=[helper.make_opsetid("", opset)],
    )
    model.ir_version = 10
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = session.run(["y"], inputs)
    return y


def node(op_type: str, inputs: list[str], **attributes):
    return helper.make_node(op_type, inputs, ["y"], **attributes)


def build(op_class, arrays, properties=None, result_type=None):
    """The op on operands of the arrays' types (None: an absent optional operand), verified."""
    operands = [None if a is None else create_ssa_value(tensor_type_of(a)) for a in arrays]
    if result_type is None:
        op = op_class.build_inferred(operands, properties)
    else:
        (operand,) = operands
        op = op_class(operand, result_type)
    op.verify()
    return op


def evaluate(op_class, arrays, properties=None, result_type=None) -> np.ndarray:
    """`evaluate` of the op, checked to produce its declared result type."""
    op = build(op_class, arrays, properties, result_type)
    (y,) = op.evaluate(*[a for a in arrays if a is not None])
    declared = op.results[0].type
    assert y.shape == declared.get_shape()
    assert y.dtype == to_numpy_dtype(declared.get_element_type())
    return y


def assert_close(actual, expected, dtype=np.float32):
    if np.dtype(dtype).kind in "iub":
        np.testing.assert_array_equal(actual, expected)
        return
    tolerance = {np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-12}.get(np.dtype(dtype), 2e-3)
    np.testing.assert_allclose(
        actual.astype(np.float64),
        np.asarray(expected).astype(np.float64),
        rtol=tolerance,
        atol=tolerance,
    )


# --------------------------------------------------------------------------- #
# Elementwise
# --------------------------------------------------------------------------- #

UNARY = [
    # (op class, properties, ONNX nodes from x to y, input transform)
    (graph.ReluOp, {}, [node("Relu", ["x"])], None),
    (graph.LeakyReluOp, {"alpha": f32_attr(0.3)}, [node("LeakyRelu", ["x"], alpha=0.3)], None),
    (graph.LeakyReluOp, {}, [node("LeakyRelu", ["x"])], None),
    (graph.EluOp, {"alpha": f32_attr(0.7)}, [node("Elu", ["x"], alpha=0.7)], None),
    (graph.GeluOp, {}, [node("Gelu", ["x"])], None),
    (
        graph.GeluOp,
        {"approximate": StringAttr("tanh")},
        [node("Gelu", ["x"], approximate="tanh")],
        None,
    ),
    (graph.SigmoidOp, {}, [node("Sigmoid", ["x"])], None),
    (graph.TanhOp, {}, [node("Tanh", ["x"])], None),
    (
        graph.SiluOp,
        {},
        [helper.make_node("Sigmoid", ["x"], ["s"]), node("Mul", ["x", "s"])],
        None,
    ),
    (
        graph.HardSigmoidOp,
        {"alpha": f32_attr(0.25), "beta": f32_attr(0.4)},
        [node("HardSigmoid", ["x"], alpha=0.25, beta=0.4)],
        None,
    ),
    (graph.HardSwishOp, {}, [node("HardSwish", ["x"])], None),
    (graph.SoftplusOp, {}, [node("Softplus", ["x"])], None),
    (graph.ExpOp, {}, [node("Exp", ["x"])], None),
    (graph.LogOp, {}, [node("Log", ["x"])], np.abs),
    (graph.SqrtOp, {}, [node("Sqrt", ["x"])], np.abs),
    (
        graph.RsqrtOp,
        {},
        [helper.make_node("Sqrt", ["x"], ["s"]), node("Reciprocal", ["s"])],
        np.abs,
    ),
    (graph.ReciprocalOp, {}, [node("Reciprocal", ["x"])], None),
    (graph.NegOp, {}, [node("Neg", ["x"])], None),
    (graph.AbsOp, {}, [node("Abs", ["x"])], None),
    (graph.ErfOp, {}, [node("Erf", ["x"])], None),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
@pytest.mark.parametrize(
    "op_class, properties, nodes, transform",
    UNARY,
    ids=[f"{case[0].name}-{i}" for i, case in enumerate(UNARY)],
)
def test_unary_matches_onnxruntime(op_class, properties, nodes, transform, dtype):
    x = normal(3, 17, dtype=dtype) * dtype(4)
    if transform is not None:
        x = transform(x) + dtype(0.01)
    y = evaluate(op_class, [x], properties)
    assert_close(y, onnx_run(nodes, {"x": x}), dtype)
    assert pattern_kind_of(build(op_class, [x], properties)) == OpPatternKind.ELEMWISE


def test_unary_bfloat16_computes_in_float32():
    x = normal(64).astype(ml_dtypes.bfloat16)
    y = evaluate(graph.SigmoidOp, [x])
    expected = onnx_run(node("Sigmoid", ["x"]), {"x": x.astype(np.float32)})
    np.testing.assert_allclose(y.astype(np.float32), expected, rtol=2**-8, atol=0)


@pytest.mark.parametrize("dtype", [np.int8, np.int32], ids=["i8", "i32"])
@pytest.mark.parametrize(
    "op_class, onnx_op", [(graph.NegOp, "Neg"), (graph.AbsOp, "Abs"), (graph.ReluOp, "Relu")]
)
def test_integer_unary_matches_onnxruntime(op_class, onnx_op, dtype):
    x = integers(40, dtype=dtype, low=-128, high=128)
    if onnx_op == "Relu" and dtype == np.int8:
        x[0] = -128
    assert_close(evaluate(op_class, [x]), onnx_run(node(onnx_op, ["x"]), {"x": x}), dtype)


@pytest.mark.parametrize(
    "properties, low, high",
    [
        ({"min": f32_attr(-0.5), "max": f32_attr(1.5)}, -0.5, 1.5),
        ({"min": f32_attr(0.0)}, 0.0, None),
        ({"max": f32_attr(0.25)}, None, 0.25),
    ],
)
def test_clip_matches_onnxruntime(properties, low, high):
    x = normal(5, 6)
    initializers = {name: np.float32(v) for name, v in (("lo", low), ("hi", high)) if v is not None}
    nodes = node("Clip", ["x", "lo" if low is not None else "", "hi" if high is not None else ""])
    assert_close(
        evaluate(graph.ClipOp, [x], properties),
        onnx_run(nodes, {"x": x}, initializers=initializers),
    )


def test_relu6_is_clip_0_6():
    x = normal(50) * 8
    expected = onnx_run(
        node("Clip", ["x", "lo", "hi"]),
        {"x": x},
        initializers={"lo": np.float32(0), "hi": np.float32(6)},
    )
    assert_close(evaluate(graph.Relu6Op, [x]), expected)
    xi = integers(50, dtype=np.int8, low=-128, high=128)
    np.testing.assert_array_equal(evaluate(graph.Relu6Op, [xi]), np.clip(xi, 0, 6))


BINARY = [
    (graph.AddOp, "Add"),
    (graph.SubOp, "Sub"),
    (graph.MulOp, "Mul"),
    (graph.DivOp, "Div"),
    (graph.PowOp, "Pow"),
    (graph.MaxOp, "Max"),
    (graph.MinOp, "Min"),
]


@pytest.mark.parametrize("op_class, onnx_op", BINARY, ids=[b[1] for b in BINARY])
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=4))
@SETTINGS
def test_binary_broadcasting_matches_onnxruntime(op_class, onnx_op, shapes):
    a, b = (normal(*shape) for shape in shapes.input_shapes)
    if onnx_op == "Pow":
        a = np.asarray(np.abs(a) + np.float32(0.1))
    y = evaluate(op_class, [a, b])
    assert y.shape == shapes.result_shape
    assert_close(y, onnx_run(node(onnx_op, ["a", "b"]), {"a": a, "b": b}))


@pytest.mark.parametrize("op_class, onnx_op", BINARY, ids=[b[1] for b in BINARY])
def test_integer_binary_matches_onnxruntime(op_class, onnx_op):
    a = integers(6, 7)
    b = integers(7)
    if onnx_op == "Div":
        b[b == 0] = 3  # ONNX leaves integer division by zero undefined
    if onnx_op == "Pow":
        b = integers(7, low=0, high=4)  # negative integer powers are an error
    assert_close(
        evaluate(op_class, [a, b]), onnx_run(node(onnx_op, ["a", "b"]), {"a": a, "b": b}), np.int32
    )


def test_negative_integer_power_is_an_evaluation_error():
    op = build(graph.PowOp, [np.array([2], np.int32), np.array([-1], np.int32)])
    with pytest.raises(ValueError, match="negative integer powers"):
        op.evaluate(np.array([2], np.int32), np.array([-1], np.int32))


def test_integer_division_truncates_toward_zero():
    a = np.array([7, -7, 7, -7], np.int8)
    b = np.array([2, 2, -2, -2], np.int8)
    np.testing.assert_array_equal(evaluate(graph.DivOp, [a, b]), [3, -3, -3, 3])


def test_binary_float16_matches_onnxruntime():
    a, b = normal(4, 5, dtype=np.float16), normal(5, dtype=np.float16)
    for op_class, onnx_op in BINARY:
        if onnx_op == "Pow":
            continue
        expected = onnx_run(node(onnx_op, ["a", "b"]), {"a": a, "b": b})
        np.testing.assert_array_equal(evaluate(op_class, [a, b]), expected)


@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=4))
@SETTINGS
def test_prelu_matches_onnxruntime(shapes):
    x_shape = shapes.result_shape
    slope_shape = shapes.input_shapes[1][-len(x_shape) :] if x_shape else ()
    slope_shape = tuple(
        d if d == x_shape[len(x_shape) - len(slope_shape) + i] else 1
        for i, d in enumerate(slope_shape)
    )
    x, slope = normal(*x_shape), normal(*slope_shape)
    expected = onnx_run(node("PRelu", ["x", "s"]), {"x": x, "s": slope})
    assert_close(evaluate(graph.PReluOp, [x, slope]), expected)
    assert pattern_kind_of(build(graph.PReluOp, [x, slope])) == OpPatternKind.BROADCAST


@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3))
@SETTINGS
def test_where_matches_onnxruntime(shapes):
    c_shape, a_shape, b_shape = shapes.input_shapes
    condition = np.asarray(RNG.random(c_shape) < 0.5)
    a, b = normal(*a_shape), normal(*b_shape)
    expected = onnx_run(node("Where", ["c", "a", "b"]), {"c": condition, "a": a, "b": b})
    assert_close(evaluate(graph.WhereOp, [condition, a, b]), expected)


COMPARISONS = [(graph.EqualOp, "Equal"), (graph.GreaterOp, "Greater"), (graph.LessOp, "Less")]


@pytest.mark.parametrize("op_class, onnx_op", COMPARISONS, ids=[c[1] for c in COMPARISONS])
@given(
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4),
    dtype=st.sampled_from([np.float32, np.int8, np.int64]),
)
@SETTINGS
def test_comparisons_match_onnxruntime(op_class, onnx_op, shapes, dtype):
    # Few distinct values, so that equal elements occur.
    a, b = (integers(*shape, dtype=dtype, low=-2, high=3) for shape in shapes.input_shapes)
    expected = onnx_run(node(onnx_op, ["a", "b"]), {"a": a, "b": b})
    y = evaluate(op_class, [a, b])
    np.testing.assert_array_equal(y, expected)
    assert pattern_kind_of(build(op_class, [a, b])) == OpPatternKind.BROADCAST


UNARY_MATH = [
    (graph.SinOp, "Sin", None),
    (graph.CosOp, "Cos", None),
    (graph.TanOp, "Tan", None),
    (graph.AsinOp, "Asin", np.tanh),
    (graph.AcosOp, "Acos", np.tanh),
    (graph.AtanOp, "Atan", None),
    (graph.SinhOp, "Sinh", None),
    (graph.CoshOp, "Cosh", None),
    (graph.AsinhOp, "Asinh", None),
    (graph.AcoshOp, "Acosh", lambda x: np.abs(x) + 1),
    (graph.AtanhOp, "Atanh", lambda x: np.tanh(x) * np.float32(0.99)),
    (graph.FloorOp, "Floor", None),
    (graph.CeilOp, "Ceil", None),
    (graph.RoundOp, "Round", lambda x: np.round(x * 2) / 2),  # halves, which round to even
]


@pytest.mark.parametrize("op_class, onnx_op, transform", UNARY_MATH, ids=[u[1] for u in UNARY_MATH])
def test_unary_math_matches_onnxruntime(op_class, onnx_op, transform):
    x = normal(3, 17) * np.float32(3)
    if transform is not None:
        x = transform(x).astype(np.float32)
    assert_close(evaluate(op_class, [x]), onnx_run(node(onnx_op, ["x"]), {"x": x}))
    assert pattern_kind_of(build(op_class, [x])) == OpPatternKind.ELEMWISE


def test_unary_math_takes_floats_only():
    with pytest.raises(VerifyException, match="floating-point"):
        build(graph.SinOp, [integers(4)])


@pytest.mark.parametrize("fmod", [False, True])
@pytest.mark.parametrize(
    "dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint32, np.uint64, np.float32]
)
def test_mod_matches_onnxruntime(fmod, dtype):
    if dtype == np.float32:
        a, b = normal(5, 7) * np.float32(9), normal(7) * np.float32(3)
    elif np.dtype(dtype).kind == "u":
        info = np.iinfo(dtype)
        a = RNG.integers(0, info.max, (5, 7), dtype=dtype, endpoint=True)
        b = RNG.integers(1, info.max, 7, dtype=dtype, endpoint=True) >> RNG.integers(
            0, info.bits, 7
        ).astype(dtype)
        b[b == 0] = 1
    else:
        a, b = (
            integers(5, 7, dtype=dtype, low=-128, high=128),
            integers(7, dtype=dtype, low=-9, high=10),
        )
        b[b == 0] = 3  # ONNX leaves an integer remainder by zero undefined
    y = evaluate(graph.ModOp, [a, b], {"fmod": bool_attr(fmod)})
    if (dtype == np.float32 and not fmod) or (dtype == np.uint64 and fmod):
        # onnxruntime refuses a float Mod without fmod, and takes a 64-bit fmod through
        # doubles (inexact past 2**53); ONNX's reference is numpy's mod and fmod.
        np.testing.assert_array_equal(y, np.fmod(a, b) if fmod else np.mod(a, b))
        return
    np.testing.assert_array_equal(
        y, onnx_run(node("Mod", ["a", "b"], fmod=int(fmod)), {"a": a, "b": b})
    )


BITWISE = [
    (graph.BitwiseAndOp, "BitwiseAnd"),
    (graph.BitwiseOrOp, "BitwiseOr"),
    (graph.BitwiseXorOp, "BitwiseXor"),
]


@pytest.mark.parametrize("op_class, onnx_op", BITWISE, ids=[b[1] for b in BITWISE])
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint16, np.uint64])
def test_bitwise_matches_onnxruntime(op_class, onnx_op, dtype):
    info = np.iinfo(dtype)
    a = RNG.integers(info.min, info.max, (4, 6), dtype=dtype, endpoint=True)
    b = RNG.integers(info.min, info.max, 6, dtype=dtype, endpoint=True)
    expected = onnx_run(node(onnx_op, ["a", "b"]), {"a": a, "b": b}, opset=18)
    np.testing.assert_array_equal(evaluate(op_class, [a, b]), expected)
    expected = onnx_run(node("BitwiseNot", ["a"]), {"a": a}, opset=18)
    np.testing.assert_array_equal(evaluate(graph.BitwiseNotOp, [a]), expected)


def test_bitwise_ops_take_integers_only():
    with pytest.raises(VerifyException, match="integer element type"):
        build(graph.BitwiseAndOp, [normal(3), normal(3)])
    with pytest.raises(VerifyException, match="integer element type"):
        build(graph.BitwiseNotOp, [normal(3)])


@pytest.mark.parametrize("direction", ["left", "right"])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint32, np.uint64])
def test_bit_shift_matches_onnxruntime(direction, dtype):
    info = np.iinfo(dtype)
    a = RNG.integers(0, info.max, (3, 5), dtype=dtype, endpoint=True)
    b = RNG.integers(0, info.bits, 5).astype(dtype)  # onnxruntime's shifts past the width are C's
    properties = {"direction": StringAttr(direction)}
    expected = onnx_run(node("BitShift", ["a", "b"], direction=direction.upper()), {"a": a, "b": b})
    np.testing.assert_array_equal(evaluate(graph.BitShiftOp, [a, b], properties), expected)


def test_bit_shift_past_the_width_and_of_signed_integers():
    # As ONNX's reference (BitShift-28): 0, or -1 for a negative number shifted right.
    a = np.array([-128, -5, 5, 64, 1, -1], np.int8)
    b = np.array([1, 9, 8, 1, -1, 7], np.int8)
    left = evaluate(graph.BitShiftOp, [a, b], {"direction": StringAttr("left")})
    right = evaluate(graph.BitShiftOp, [a, b], {"direction": StringAttr("right")})
    np.testing.assert_array_equal(left, [0, 0, 0, -128, 0, -128])
    np.testing.assert_array_equal(right, [-64, -1, 0, 32, 0, -1])
    with pytest.raises(VerifyException, match="direction"):
        build(graph.BitShiftOp, [a, b], {"direction": StringAttr("up")})


def test_not_matches_onnxruntime():
    x = np.asarray(RNG.random((3, 4)) < 0.5)
    np.testing.assert_array_equal(
        evaluate(graph.NotOp, [x]), onnx_run(node("Not", ["x"]), {"x": x})
    )


# --------------------------------------------------------------------------- #
# Contractions
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
@pytest.mark.parametrize("c_shape", [None, (), (5,), (3, 1), (3, 5)])
def test_gemm_matches_onnxruntime(trans_a, trans_b, c_shape, dtype):
    a = normal(*((4, 3) if trans_a else (3, 4)), dtype=dtype)
    b = normal(*((5, 4) if trans_b else (4, 5)), dtype=dtype)
    c = None if c_shape is None else normal(*c_shape, dtype=dtype)
    properties = {
        "alpha": f32_attr(0.5),
        "beta": f32_attr(2.0),
        "trans_a": bool_attr(trans_a),
        "trans_b": bool_attr(trans_b),
    }
    feeds = {"a": a, "b": b} | ({} if c is None else {"c": c})
    gemm = node("Gemm", list(feeds), alpha=0.5, beta=2.0, transA=int(trans_a), transB=int(trans_b))
    y = evaluate(graph.GemmOp, [a, b, c], properties)
    assert y.shape == (3, 5)
    assert_close(y, onnx_run(gemm, feeds), dtype)


def test_conv2d_int8_accumulates_in_int32():
    x = np.full((1, 8, 3, 3), 100, np.int8)
    w = np.full((1, 8, 3, 3), 100, np.int8)
    expected = np.int32(72 * 100 * 100).astype(np.int8)
    np.testing.assert_array_equal(evaluate(graph.Conv2dOp, [x, w]), np.full((1, 1, 1, 1), expected))


def test_matmul_int8_accumulates_in_int32():
    a = np.full((2, 64), 100, np.int8)
    b = np.full((64, 2), 100, np.int8)
    expected = (np.int32(64 * 100 * 100)).astype(np.int8)  # the wide sum, then wrapped
    np.testing.assert_array_equal(evaluate(graph.MatMulOp, [a, b]), np.full((2, 2), expected))


CONV_CASES = [
    # (N, C, H, W), (O, C/groups, KH, KW), strides, pads, dilations, groups
    ((1, 3, 7, 7), (4, 3, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1),
    ((2, 3, 9, 8), (6, 3, 3, 2), (2, 1), (1, 0, 2, 1), (1, 1), 1),
    ((1, 4, 10, 10), (6, 2, 3, 3), (1, 2), (1, 1, 1, 1), (2, 1), 2),
    ((1, 4, 8, 8), (4, 1, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 4),  # depthwise
    ((1, 3, 8, 8), (6, 1, 5, 5), (3, 3), (2, 2, 2, 2), (1, 2), 3),  # depthwise x2
    ((1, 2, 5, 5), (3, 2, 1, 1), (2, 2), (0, 0, 0, 0), (1, 1), 1),
]


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("x_shape, w_shape, strides, pads, dilations, groups", CONV_CASES)
def test_conv2d_matches_onnxruntime(
    x_shape, w_shape, strides, pads, dilations, groups, with_bias, layout
):
    x, w = normal(*x_shape), normal(*w_shape)
    bias = normal(w_shape[0]) if with_bias else None
    feeds = {"x": x, "w": w} | ({"b": bias} if with_bias else {})
    conv = node("Conv", list(feeds), strides=strides, pads=pads, dilations=dilations, group=groups)
    expected = onnx_run(conv, feeds)
    properties = {
        "strides": int_array(strides),
        "pads": int_array(pads),
        "dilations": int_array(dilations),
        "groups": i64_attr(groups),
        "layout": StringAttr(layout),
    }
    if layout == "NHWC":
        x, w = x.transpose(0, 2, 3, 1), w.transpose(0, 2, 3, 1)
        expected = expected.transpose(0, 2, 3, 1)
    op = build(graph.Conv2dOp, [x, w, bias], properties)
    assert pattern_kind_of(op) == OpPatternKind.OUT_ELEMWISE_FUSABLE
    assert_close(evaluate(graph.Conv2dOp, [x, w, bias], properties), expected)


@st.composite
def conv_case(draw):
    groups = draw(st.sampled_from([1, 2, 3]))
    c = groups * draw(st.integers(1, 2))
    o = groups * draw(st.integers(1, 2))
    kernel = draw(st.tuples(st.integers(1, 3), st.integers(1, 3)))
    dilations = draw(st.tuples(st.integers(1, 2), st.integers(1, 2)))
    strides = draw(st.tuples(st.integers(1, 3), st.integers(1, 3)))
    pads = draw(st.tuples(*[st.integers(0, 2)] * 4))
    spans = [d * (k - 1) + 1 for k, d in zip(kernel, dilations)]
    h = draw(st.integers(max(1, spans[0] - pads[0] - pads[2]), 7))
    w = draw(st.integers(max(1, spans[1] - pads[1] - pads[3]), 7))
    return (
        (draw(st.integers(1, 2)), c, h, w),
        (o, c // groups, *kernel),
        strides,
        pads,
        dilations,
        groups,
    )


@given(case=conv_case(), layout=st.sampled_from(["NCHW", "NHWC"]))
@SETTINGS
def test_conv2d_geometry_matches_onnxruntime(case, layout):
    x_shape, w_shape, strides, pads, dilations, groups = case
    x, w, bias = normal(*x_shape), normal(*w_shape), normal(w_shape[0])
    conv = node(
        "Conv", ["x", "w", "b"], strides=strides, pads=pads, dilations=dilations, group=groups
    )
    expected = onnx_run(conv, {"x": x, "w": w, "b": bias})
    properties = {
        "strides": int_array(strides),
        "pads": int_array(pads),
        "dilations": int_array(dilations),
        "groups": i64_attr(groups),
        "layout": StringAttr(layout),
    }
    if layout == "NHWC":
        x, w = x.transpose(0, 2, 3, 1), w.transpose(0, 2, 3, 1)
        expected = expected.transpose(0, 2, 3, 1)
    assert_close(evaluate(graph.Conv2dOp, [x, w, bias], properties), expected)


def test_conv2d_float16_matches_float32_reference():
    x, w = normal(1, 8, 6, 6, dtype=np.float16), normal(4, 8, 3, 3, dtype=np.float16)
    expected = onnx_run(
        node("Conv", ["x", "w"]), {"x": x.astype(np.float32), "w": w.astype(np.float32)}
    )
    # Sums in a different order may round to the neighbouring fp16 value, no further.
    y = evaluate(graph.Conv2dOp, [x, w])
    np.testing.assert_array_max_ulp(y, expected.astype(np.float16), maxulp=1)


# --------------------------------------------------------------------------- #
# Normalization and softmax
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 5), (1, 4, 3, 3)])
def test_batch_norm_matches_onnxruntime(shape):
    c = shape[1]
    x, scale, bias, mean = normal(*shape), normal(c), normal(c), normal(c)
    variance = np.abs(normal(c)) + np.float32(0.1)
    feeds = {"x": x, "s": scale, "b": bias, "m": mean, "v": variance}
    expected = onnx_run(node("BatchNormalization", list(feeds), epsilon=1e-3), feeds)
    y = evaluate(graph.BatchNormOp, list(feeds.values()), {"epsilon": f32_attr(1e-3)})
    assert_close(y, expected)


@pytest.mark.parametrize("axis", [-1, -2, 1])
@pytest.mark.parametrize("with_bias", [False, True])
def test_layer_norm_matches_onnxruntime(axis, with_bias):
    x = normal(2, 3, 4) * 3
    normalized = x.shape[axis:]
    scale = normal(*normalized)
    bias = normal(*normalized) if with_bias else None
    feeds = {"x": x, "s": scale} | ({"b": bias} if with_bias else {})
    expected = onnx_run(node("LayerNormalization", list(feeds), axis=axis, epsilon=1e-4), feeds)
    y = evaluate(
        graph.LayerNormOp, [x, scale, bias], {"axis": i64_attr(axis), "epsilon": f32_attr(1e-4)}
    )
    assert_close(y, expected)


@pytest.mark.parametrize(
    "op_class, onnx_op", [(graph.SoftmaxOp, "Softmax"), (graph.LogSoftmaxOp, "LogSoftmax")]
)
@given(
    shape=hnp.array_shapes(min_dims=1, max_dims=4, max_side=5),
    axis_seed=st.integers(0, 100),
    scale=st.sampled_from([1.0, 30.0]),
)
@SETTINGS
def test_softmax_matches_onnxruntime(op_class, onnx_op, shape, axis_seed, scale):
    axis = axis_seed % (2 * len(shape)) - len(shape)
    x = normal(*shape) * np.float32(scale)
    expected = onnx_run(node(onnx_op, ["x"], axis=axis), {"x": x})
    assert_close(evaluate(op_class, [x], {"axis": i64_attr(axis)}), expected)


# --------------------------------------------------------------------------- #
# Pooling
# --------------------------------------------------------------------------- #

POOL_CASES = [
    # kernel, strides, pads, ceil_mode
    ((2, 2), (2, 2), (0, 0, 0, 0), False),
    ((3, 3), (2, 2), (1, 1, 1, 1), False),
    ((3, 3), (2, 2), (1, 1, 1, 1), True),
    ((3, 2), (2, 3), (0, 1, 2, 0), True),
    ((2, 2), (2, 2), (0, 0, 0, 0), True),
    ((3, 3), (1, 1), (0, 0, 0, 0), False),
]


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("dilations", [(1, 1), (2, 1)])
@pytest.mark.parametrize("kernel, strides, pads, ceil_mode", POOL_CASES)
def test_max_pool_matches_onnxruntime(kernel, strides, pads, ceil_mode, dilations, layout):
    x = normal(2, 3, 9, 8)
    expected = onnx_run(
        node(
            "MaxPool",
            ["x"],
            kernel_shape=kernel,
            strides=strides,
            pads=pads,
            ceil_mode=int(ceil_mode),
            dilations=dilations,
        ),
        {"x": x},
    )
    properties = {
        "kernel": int_array(kernel),
        "strides": int_array(strides),
        "pads": int_array(pads),
        "ceil_mode": bool_attr(ceil_mode),
        "dilations": int_array(dilations),
        "layout": StringAttr(layout),
    }
    if layout == "NHWC":
        x, expected = x.transpose(0, 2, 3, 1), expected.transpose(0, 2, 3, 1)
    assert_close(evaluate(graph.MaxPoolOp, [x], properties), expected)


@pytest.mark.parametrize("count_include_pad", [False, True])
@pytest.mark.parametrize("kernel, strides, pads, ceil_mode", POOL_CASES)
def test_avg_pool_matches_onnxruntime(kernel, strides, pads, ceil_mode, count_include_pad):
    x = normal(2, 3, 9, 8)
    expected = onnx_run(
        node(
            "AveragePool",
            ["x"],
            kernel_shape=kernel,
            strides=strides,
            pads=pads,
            ceil_mode=int(ceil_mode),
            count_include_pad=int(count_include_pad),
        ),
        {"x": x},
    )
    properties = {
        "kernel": int_array(kernel),
        "strides": int_array(strides),
        "pads": int_array(pads),
        "ceil_mode": bool_attr(ceil_mode),
        "count_include_pad": bool_attr(count_include_pad),
    }
    op = build(graph.AvgPoolOp, [x], properties)
    assert pattern_kind_of(op) == OpPatternKind.OUT_ELEMWISE_FUSABLE
    assert_close(evaluate(graph.AvgPoolOp, [x], properties), expected)


@st.composite
def pool_case(draw):
    kernel = draw(st.tuples(st.integers(1, 3), st.integers(1, 3)))
    strides = draw(st.tuples(st.integers(1, 3), st.integers(1, 3)))
    pads = tuple(draw(st.integers(0, kernel[i % 2] - 1)) for i in range(4))
    h = draw(st.integers(kernel[0], 8))
    w = draw(st.integers(kernel[1], 8))
    return (1, 2, h, w), kernel, strides, pads, draw(st.booleans())


@given(case=pool_case(), count_include_pad=st.booleans())
@SETTINGS
def test_pool_geometry_matches_onnxruntime(case, count_include_pad):
    shape, kernel, strides, pads, ceil_mode = case
    x = normal(*shape)
    common = dict(kernel_shape=kernel, strides=strides, pads=pads, ceil_mode=int(ceil_mode))
    properties = {
        "kernel": int_array(kernel),
        "strides": int_array(strides),
        "pads": int_array(pads),
        "ceil_mode": bool_attr(ceil_mode),
    }
    expected = onnx_run(node("MaxPool", ["x"], **common), {"x": x})
    assert_close(evaluate(graph.MaxPoolOp, [x], properties), expected)
    average = node("AveragePool", ["x"], count_include_pad=int(count_include_pad), **common)
    properties["count_include_pad"] = bool_attr(count_include_pad)
    assert_close(evaluate(graph.AvgPoolOp, [x], properties), onnx_run(average, {"x": x}))


def test_max_pool_int8_pads_with_the_lowest_value():
    x = np.full((1, 1, 2, 2), -128, np.int8)
    properties = {"kernel": int_array([2, 2]), "pads": int_array([1, 1, 1, 1])}
    np.testing.assert_array_equal(
        evaluate(graph.MaxPoolOp, [x], properties), np.full((1, 1, 3, 3), -128)
    )


@pytest.mark.parametrize("shape", [(2, 3, 5, 4), (1, 2, 7), (1, 2, 3, 2, 2)])
@pytest.mark.parametrize(
    "op_class, onnx_op",
    [(graph.GlobalAvgPoolOp, "GlobalAveragePool"), (graph.GlobalMaxPoolOp, "GlobalMaxPool")],
)
def test_global_pool_matches_onnxruntime(op_class, onnx_op, shape):
    x = normal(*shape)
    expected = onnx_run(node(onnx_op, ["x"]), {"x": x})
    assert_close(evaluate(op_class, [x]), expected)
    channels_last = np.moveaxis(x, 1, -1)
    y = evaluate(op_class, [channels_last], {"layout": StringAttr("NHWC")})
    assert_close(y, np.moveaxis(expected, 1, -1))


# --------------------------------------------------------------------------- #
# Reductions
# --------------------------------------------------------------------------- #

REDUCTIONS = [
    (graph.ReduceSumOp, "ReduceSum"),
    (graph.ReduceMeanOp, "ReduceMean"),
    (graph.ReduceMaxOp, "ReduceMax"),
]


@st.composite
def shape_and_axes(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=4, max_side=4))
    rank = len(shape)
    axes = draw(
        st.none()
        | st.lists(st.integers(-rank, rank - 1), unique_by=lambda a: a % rank, max_size=rank)
    )
    return shape, axes


@pytest.mark.parametrize("op_class, onnx_op", REDUCTIONS, ids=[r[1] for r in REDUCTIONS])
@given(case=shape_and_axes(), keepdims=st.booleans())
@SETTINGS
def test_reductions_match_onnxruntime(op_class, onnx_op, case, keepdims):
    shape, axes = case
    x = normal(*shape)
    properties = {"keepdims": bool_attr(keepdims)}
    initializers = {}
    inputs = ["x"]
    if axes:  # an empty list means "all axes", as no list does
        properties["axes"] = int_array(axes)
        initializers["axes"] = np.array(axes, np.int64)
        inputs.append("axes")
    expected = onnx_run(
        node(onnx_op, inputs, keepdims=int(keepdims)), {"x": x}, initializers=initializers
    )
    y = evaluate(op_class, [x], properties)
    assert_close(y, expected)
    assert pattern_kind_of(build(op_class, [x], properties)) == OpPatternKind.REDUCE


def test_reduce_prod_matches_onnxruntime():
    x = normal(2, 3, 4)
    expected = onnx_run(
        node("ReduceProd", ["x", "axes"], keepdims=0),
        {"x": x},
        initializers={"axes": np.array([1], np.int64)},
    )
    properties = {"axes": int_array([1]), "keepdims": bool_attr(False)}
    assert_close(evaluate(graph.ReduceProdOp, [x], properties), expected)


@given(
    shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4),
    axis_seed=st.integers(0, 100),
    keepdims=st.booleans(),
    select_last_index=st.booleans(),
)
@SETTINGS
def test_arg_max_matches_onnxruntime(shape, axis_seed, keepdims, select_last_index):
    axis = axis_seed % (2 * len(shape)) - len(shape)
    x = integers(*shape, low=0, high=3).astype(np.float32)  # ties between first and last
    attributes = dict(axis=axis, keepdims=int(keepdims), select_last_index=int(select_last_index))
    expected = onnx_run(node("ArgMax", ["x"], **attributes), {"x": x})
    properties = {
        "axis": i64_attr(axis),
        "keepdims": bool_attr(keepdims),
        "select_last_index": bool_attr(select_last_index),
    }
    np.testing.assert_array_equal(evaluate(graph.ArgMaxOp, [x], properties), expected)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum_matches_onnxruntime(dtype, axis, exclusive, reverse):
    x = normal(3, 5).astype(dtype) if dtype == np.float32 else integers(3, 5)
    expected = onnx_run(
        node("CumSum", ["x", "axis"], exclusive=int(exclusive), reverse=int(reverse)),
        {"x": x},
        initializers={"axis": np.array(axis, np.int64)},
    )
    properties = {
        "axis": i64_attr(axis),
        "exclusive": bool_attr(exclusive),
        "reverse": bool_attr(reverse),
    }
    assert_close(evaluate(graph.CumSumOp, [x], properties), expected, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumprod_matches_numpy(dtype, exclusive, reverse):
    # onnxruntime has no CumProd yet: ONNX's reference is numpy's cumprod, shifted and flipped.
    x = normal(3, 5).astype(dtype) if dtype == np.float32 else integers(3, 5, low=-4, high=5)
    ordered = np.flip(x, 1) if reverse else x
    expected = np.cumprod(ordered, axis=1, dtype=dtype)
    if exclusive:
        expected = np.concatenate([np.ones((3, 1), dtype), expected[:, :-1]], axis=1)
    expected = np.flip(expected, 1) if reverse else expected
    properties = {
        "axis": i64_attr(-1),
        "exclusive": bool_attr(exclusive),
        "reverse": bool_attr(reverse),
    }
    assert_close(evaluate(graph.CumProdOp, [x], properties), expected, dtype)


def test_arg_max_compares_unsigned_integers_in_their_type():
    x = np.array([[1, 4_000_000_000, 7]], np.uint32)
    np.testing.assert_array_equal(evaluate(graph.ArgMaxOp, [x], {"axis": i64_attr(1)}), [[1]])


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("largest", [False, True])
def test_top_k_matches_onnxruntime(dtype, axis, largest):
    # Few distinct values: ties, which both order by lower index.
    x = np.random.default_rng(3).integers(-3, 4, (5, 6)).astype(dtype)
    k = 4
    model = helper.make_model(
        helper.make_graph(
            [
                helper.make_node(
                    "TopK", ["x", "k"], ["values", "indices"], axis=axis, largest=int(largest)
                )
            ],
            "reference",
            [helper.make_tensor_value_info("x", helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)],
            [
                helper.make_empty_tensor_value_info("values"),
                helper.make_empty_tensor_value_info("indices"),
            ],
            initializer=[numpy_helper.from_array(np.asarray([k], np.int64), "k")],
        ),
        opset_imports=[helper.make_opsetid("", 21)],
    )
    model.ir_version = 10
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = session.run(None, {"x": x})
    properties = {"k": i64_attr(k), "axis": i64_attr(axis), "largest": bool_attr(largest)}
    op = build(graph.TopKOp, [x], properties)
    for actual, wanted, result in zip(op.evaluate(x), expected, op.results):
        assert actual.dtype == to_numpy_dtype(result.type.get_element_type())
        np.testing.assert_array_equal(actual, wanted)


def test_top_k_puts_nan_above_every_number():
    x = np.array([1.0, np.nan, 3.0, np.nan], np.float32)
    op = build(graph.TopKOp, [x], {"k": i64_attr(4)})
    values, indices = op.evaluate(x)
    np.testing.assert_array_equal(indices, [1, 3, 2, 0])
    op = build(graph.TopKOp, [x], {"k": i64_attr(4), "largest": bool_attr(False)})
    np.testing.assert_array_equal(op.evaluate(x)[1], [0, 2, 1, 3])


def test_reduce_sum_float16_accumulates_in_float32():
    x = np.full(4096, 1, np.float16)  # fp16 stops counting at 2048
    assert evaluate(graph.ReduceSumOp, [x])[0] == 4096


# --------------------------------------------------------------------------- #
# Shape manipulation
# --------------------------------------------------------------------------- #


def test_reshape_and_broadcast_to_take_the_result_type():
    x = normal(2, 3, 4)
    y = evaluate(graph.ReshapeOp, [x], result_type=TensorType(f32, [4, 6]))
    np.testing.assert_array_equal(y, x.reshape(4, 6))
    b = normal(3, 1)
    expected = onnx_run(
        node("Expand", ["b", "shape"]), {"b": b}, initializers={"shape": np.array([2, 3, 5])}
    )
    np.testing.assert_array_equal(
        evaluate(graph.BroadcastToOp, [b], result_type=TensorType(f32, [2, 3, 5])), expected
    )


@pytest.mark.parametrize("axis", [0, 1, 2, 3, -1, -3])
def test_flatten_matches_onnxruntime(axis):
    x = normal(2, 3, 4)
    expected = onnx_run(node("Flatten", ["x"], axis=axis), {"x": x})
    np.testing.assert_array_equal(
        evaluate(graph.FlattenOp, [x], {"axis": i64_attr(axis)}), expected
    )


@pytest.mark.parametrize("axes", [None, [0], [-1, 0], [2]])
def test_squeeze_matches_onnxruntime(axes):
    x = normal(1, 3, 1)
    initializers = {} if axes is None else {"axes": np.array(axes, np.int64)}
    inputs = ["x"] + ([] if axes is None else ["axes"])
    expected = onnx_run(node("Squeeze", inputs), {"x": x}, initializers=initializers)
    properties = {} if axes is None else {"axes": int_array(axes)}
    np.testing.assert_array_equal(evaluate(graph.SqueezeOp, [x], properties), expected)


@pytest.mark.parametrize("axes", [[0], [-1], [0, 3], [1, -1]])
def test_unsqueeze_matches_onnxruntime(axes):
    x = normal(2, 3)
    expected = onnx_run(
        node("Unsqueeze", ["x", "axes"]), {"x": x}, initializers={"axes": np.array(axes, np.int64)}
    )
    np.testing.assert_array_equal(
        evaluate(graph.UnsqueezeOp, [x], {"axes": int_array(axes)}), expected
    )


@given(perm=st.permutations(range(4)))
@SETTINGS
def test_transpose_matches_onnxruntime(perm):
    x = normal(2, 3, 4, 5)
    expected = onnx_run(node("Transpose", ["x"], perm=perm), {"x": x})
    np.testing.assert_array_equal(
        evaluate(graph.TransposeOp, [x], {"perm": int_array(perm)}), expected
    )


@given(count=st.integers(1, 4), axis=st.integers(-3, 2), data=st.data())
@SETTINGS
def test_concat_matches_onnxruntime(count, axis, data):
    base_shape = [2, 3, 4]
    arrays = {}
    for i in range(count):
        shape = list(base_shape)
        shape[axis] = data.draw(st.integers(0, 3))
        arrays[f"x{i}"] = normal(*shape)
    expected = onnx_run(node("Concat", list(arrays), axis=axis), arrays)
    y = evaluate(graph.ConcatOp, list(arrays.values()), {"axis": i64_attr(axis)})
    np.testing.assert_array_equal(y, expected)


@st.composite
def slice_case(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6))
    rank = len(shape)
    axes = draw(
        st.lists(
            st.integers(-rank, rank - 1), min_size=1, max_size=rank, unique_by=lambda a: a % rank
        )
    )
    bound = st.integers(-8, 8) | st.sampled_from([2**63 - 1, -(2**63)])
    starts = draw(st.lists(bound, min_size=len(axes), max_size=len(axes)))
    ends = draw(st.lists(bound, min_size=len(axes), max_size=len(axes)))
    steps = draw(st.lists(st.integers(-3, 3).filter(bool), min_size=len(axes), max_size=len(axes)))
    return shape, starts, ends, axes, steps


@given(case=slice_case())
@SETTINGS
def test_slice_matches_onnxruntime(case):
    shape, starts, ends, axes, steps = case
    x = normal(*shape)
    initializers = {
        name: np.array(v, np.int64)
        for name, v in zip(("s", "e", "a", "t"), (starts, ends, axes, steps))
    }
    expected = onnx_run(
        node("Slice", ["x", "s", "e", "a", "t"]), {"x": x}, initializers=initializers
    )
    properties = {
        "starts": int_array(starts),
        "ends": int_array(ends),
        "axes": int_array(axes),
        "steps": int_array(steps),
    }
    np.testing.assert_array_equal(evaluate(graph.SliceOp, [x], properties), expected)


def test_slice_defaults_axes_and_steps():
    x = normal(4, 5)
    properties = {"starts": int_array([1, -3]), "ends": int_array([3, 100])}
    np.testing.assert_array_equal(evaluate(graph.SliceOp, [x], properties), x[1:3, -3:])


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
@pytest.mark.parametrize("pads", [[0, 1, 2, 0], [2, 0, 1, 3], [1, 1, 1, 1], [-1, 1, 0, -2]])
@pytest.mark.parametrize("dtype", [np.float32, np.int8])
def test_pad_matches_onnxruntime(mode, pads, dtype):
    x = normal(4, 5).astype(dtype) if dtype != np.int8 else integers(4, 5, dtype=dtype)
    value = np.array(2.5 if dtype == np.float32 else -7, dtype)
    inputs, initializers = ["x", "p"], {"p": np.array(pads, np.int64)}
    if mode == "constant":
        inputs.append("v")
        initializers["v"] = value
    expected = onnx_run(node("Pad", inputs, mode=mode), {"x": x}, initializers=initializers)
    properties = {
        "pads": int_array(pads),
        "mode": StringAttr(mode),
        "value": f32_attr(float(value)),
    }
    np.testing.assert_array_equal(evaluate(graph.PadOp, [x], properties), expected)


@pytest.mark.parametrize("indices_shape", [(), (3,), (2, 2)])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather_matches_onnxruntime(indices_shape, axis):
    x = normal(3, 4, 5)
    dim = x.shape[axis]
    indices = RNG.integers(-dim, dim, indices_shape).astype(np.int64)
    expected = onnx_run(node("Gather", ["x", "i"], axis=axis), {"x": x, "i": indices})
    np.testing.assert_array_equal(
        evaluate(graph.GatherOp, [x, indices], {"axis": i64_attr(axis)}), expected
    )


# --------------------------------------------------------------------------- #
# Cast and quantization
# --------------------------------------------------------------------------- #

CASTS = [
    (np.float32, np.int32),
    (np.float32, np.int8),
    (np.float32, np.float16),
    (np.float16, np.float32),
    (np.int32, np.float32),
    (np.int32, np.int8),
    (np.float32, np.uint8),
    (np.float32, np.bool_),
    (np.float32, ml_dtypes.float8_e4m3fn),
]


@pytest.mark.parametrize(
    "source, target", CASTS, ids=[f"{np.dtype(s).name}-{np.dtype(t).name}" for s, t in CASTS]
)
def test_cast_matches_onnxruntime(source, target):
    x = (normal(40) * 60).astype(source)
    if np.dtype(target) == np.uint8:
        x = np.abs(x)  # ONNX leaves negative -> unsigned undefined
    if np.dtype(source).kind == "f" and np.dtype(target).kind in "iu":
        x = np.clip(x, -100, 100)
    x[:3] = [0, 1000, -1000] if np.dtype(target) != np.uint8 else [0, 1, 2]
    if np.dtype(target).itemsize == 1 and np.dtype(target).kind == "V":
        x[3:6] = [np.inf, -np.inf, np.nan]  # saturate: +-inf -> +-448, NaN stays
    result_type = tensor_type_of(np.zeros(x.shape, target))
    to = helper.np_dtype_to_tensor_dtype(np.dtype(target))
    expected = onnx_run(node("Cast", ["x"], to=to), {"x": x})
    if expected.dtype != np.dtype(target):  # onnxruntime returns fp8 as its bytes
        expected = expected.view(target)
    y = evaluate(graph.CastOp, [x], result_type=result_type)
    np.testing.assert_array_equal(y.astype(np.float64), expected.astype(np.float64))
    assert (
        pattern_kind_of(build(graph.CastOp, [x], result_type=result_type)) == OpPatternKind.ELEMWISE
    )


def test_cast_to_bfloat16_rounds_to_nearest_even():
    # onnxruntime's Python API cannot return bf16; 1 + 2^-8 is a tie between 1 and 1 + 2^-7.
    x = np.array([1 + 2**-8, 1 + 3 * 2**-8, 3.0e38, -0.0], np.float32)
    y = evaluate(graph.CastOp, [x], result_type=TensorType(BFloat16Type(), [4]))
    np.testing.assert_array_equal(
        y.astype(np.float32), [1.0, 1 + 2**-6, x[2].astype(ml_dtypes.bfloat16), -0.0]
    )


QUANTIZATION = [
    # x shape, scale/zero-point shape, axis, zero-point dtype
    ((2, 3, 4), (), 1, np.int8),
    ((2, 3, 4), (), 1, np.uint8),
    ((2, 3, 4), (3,), 1, np.int8),
    ((2, 3, 4), (4,), -1, np.uint8),
    ((5, 3), (5,), 0, np.int8),
    ((5, 3), (1,), 1, np.uint8),
]


@pytest.mark.parametrize("x_shape, scale_shape, axis, zp_dtype", QUANTIZATION)
def test_quantize_matches_onnxruntime(x_shape, scale_shape, axis, zp_dtype):
    x = normal(*x_shape) * 40
    x.flat[:6] = [0.5, 1.5, 2.5, -2.5, 1e4, -1e4]  # ties round to even; the rest saturate
    scale = (np.abs(normal(*scale_shape)) + np.float32(0.05)).astype(np.float32)
    if scale_shape == ():
        scale = np.float32(1.0) if zp_dtype == np.int8 else scale
    info = np.iinfo(zp_dtype)
    zero_point = RNG.integers(info.min // 4, info.max // 4, scale_shape).astype(zp_dtype)
    feeds = {"x": x, "s": np.asarray(scale, np.float32), "z": np.asarray(zero_point)}
    expected = onnx_run(node("QuantizeLinear", list(feeds), axis=axis), feeds)
    properties = {"axis": i64_attr(axis)}
    y = evaluate(graph.QuantizeOp, list(feeds.values()), properties)
    np.testing.assert_array_equal(y, expected)
    assert (y.flat[4], y.flat[5]) == (info.max, info.min)

    dequantized = onnx_run(
        node("DequantizeLinear", ["q", "s", "z"], axis=axis),
        {"q": y, "s": feeds["s"], "z": feeds["z"]},
    )
    assert_close(evaluate(graph.DequantizeOp, [y, feeds["s"], feeds["z"]], properties), dequantized)


def test_dequantize_int32_bias_matches_onnxruntime():
    x = integers(6, low=-(2**31), high=2**31 - 1)
    scale = np.array([0.5, 0.25, 2.0, 1.0, 0.125, 4.0], np.float32)
    feeds = {"x": x, "s": scale, "z": np.zeros(6, np.int32)}
    expected = onnx_run(node("DequantizeLinear", list(feeds), axis=0), feeds)
    y = evaluate(graph.DequantizeOp, list(feeds.values()), {"axis": i64_attr(0)})
    assert_close(y, expected)


def test_quantize_rounds_half_to_even_and_saturates():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 1000.0, -1000.0], np.float32)
    y = evaluate(graph.QuantizeOp, [x, np.float32(1.0), np.int8(0)])
    np.testing.assert_array_equal(y, [0, 2, 2, 0, -2, 127, -128])


# --------------------------------------------------------------------------- #
# The interpreter runs every op of ops.mlir
# --------------------------------------------------------------------------- #

OPS_MLIR = Path(__file__).parents[1] / "graph" / "ops.mlir"
OPS_FUNCTIONS = [
    "activations",
    "unary_math",
    "broadcasting",
    "integer_math",
    "contractions",
    "normalization",
    "pooling",
    "reductions",
    "shapes",
    "conversions",
]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # log and sqrt of negative inputs
@pytest.mark.parametrize("function", OPS_FUNCTIONS)
def test_every_op_of_ops_mlir_runs_on_the_graph_interpreter(function):
    # The interpreter checks each op's evaluate against the op's result type.
    module = parse_source(default_context(), OPS_MLIR.read_text(), str(OPS_MLIR))
    func_op = find_function(module, function)
    inputs = random_inputs(func_op)
    # Gather indices must be in range of the gathered dimension (4 in @shapes).
    inputs = [a % 4 if a.dtype == np.int64 else a for a in inputs]
    outputs = run_function(module, inputs, function)
    assert len(outputs) == 1


def test_ops_mlir_lists_every_function():
    text = OPS_MLIR.read_text()
    assert [
        line.split("@")[1].split("(")[0]
        for line in text.splitlines()
        if line.startswith("func.func")
    ] == OPS_FUNCTIONS
    # graph-fuse's groups are round-tripped by test/graph/fuse.mlir.
    ops_named = {op.name for op in graph.Graph.operations if op not in graph.FUSION_OPS}
    assert {name for name in ops_named if f"= {name} " not in text} == set()


# --------------------------------------------------------------------------- #
# Fusion kinds
# --------------------------------------------------------------------------- #


def test_every_op_is_registered_with_a_fusion_kind():
    ops = [op for op in graph.Graph.operations if op is not graph.YieldOp]
    assert len(ops) >= 62
    for op_class in ops:
        assert op_class.get_trait(graph.FusionPattern) is not None, op_class.name
    kinds = {op.name: op.get_trait(graph.FusionPattern).kind for op in ops}
    assert (
        kinds["graph.conv2d"]
        == kinds["graph.gemm"]
        == kinds["graph.max_pool"]
        == OpPatternKind.OUT_ELEMWISE_FUSABLE
    )
    assert kinds["graph.batch_norm"] == kinds["graph.quantize"] == OpPatternKind.BROADCAST
    assert (
        kinds["graph.reshape"]
        == kinds["graph.slice"]
        == kinds["graph.pad"]
        == OpPatternKind.INJECTIVE
    )
    assert kinds["graph.softmax"] == kinds["graph.layer_norm"] == OpPatternKind.OPAQUE


# --------------------------------------------------------------------------- #
# Shape inference errors
# --------------------------------------------------------------------------- #


def tensor_of(shape, element=f32) -> TensorType:
    return TensorType(element, shape)


def infer(op_class, types, properties=None):
    return op_class.infer_result_types(types, op_class.with_defaults(properties or {}))


F32 = tensor_of
I8 = IntegerType(8)

ERRORS = [
    (
        graph.Conv2dOp,
        [F32([1, 3, 8, 8]), F32([4, 4, 3, 3])],
        {},
        r"input channels \(3\) must equal weight input channels \(4\) times groups \(1\)",
    ),
    (
        graph.Conv2dOp,
        [F32([1, 4, 8, 8]), F32([3, 2, 3, 3])],
        {"groups": i64_attr(2)},
        r"output channels \(3\) must be a multiple of groups \(2\)",
    ),
    (
        graph.Conv2dOp,
        [F32([1, 3, 8, 8]), F32([4, 3, 3, 3]), F32([3])],
        {},
        r"bias must have shape \[4\] \(the output channels\), got tensor<3xf32>",
    ),
    (
        graph.Conv2dOp,
        [F32([1, 3, 2, 8]), F32([4, 3, 3, 3])],
        {},
        r"the height window spans 3 elements \(kernel 3, dilation 1\), more than the padded input's 2",
    ),
    (
        graph.Conv2dOp,
        [F32([1, 3, 8, 8]), F32([4, 3, 3, 3])],
        {"strides": int_array([0, 1])},
        r"strides must be positive, got \[0, 1\]",
    ),
    (
        graph.Conv2dOp,
        [F32([1, 3, 8, 8]), F32([4, 3, 3, 3])],
        {"pads": int_array([1, 1])},
        r"pads must have 4 values, got \[1, 1\]",
    ),
    (
        graph.Conv2dOp,
        [F32([1, 3, 8, 8]), F32([4, 3, 3, 3])],
        {"layout": StringAttr("NCWH")},
        r'layout must be "NCHW" or "NHWC", got "NCWH"',
    ),
    (
        graph.GemmOp,
        [F32([3, 4]), F32([5, 4])],
        {},
        r"contraction dimensions differ: op\(a\) is 3x4, op\(b\) is 5x4",
    ),
    (
        graph.GemmOp,
        [F32([3, 4]), F32([4, 5]), F32([4, 5])],
        {},
        r"c shape \[4, 5\] does not broadcast to \[3, 5\]",
    ),
    (
        graph.BatchNormOp,
        [F32([1, 3, 4, 4]), F32([3]), F32([3]), F32([4]), F32([3])],
        {},
        r"mean must have shape \[3\] \(the input channels\), got tensor<4xf32>",
    ),
    (
        graph.LayerNormOp,
        [F32([2, 3, 4]), F32([3])],
        {},
        r"scale shape \[3\] does not broadcast to \[4\]",
    ),
    (graph.SoftmaxOp, [F32([2, 3])], {"axis": i64_attr(2)}, r"axis 2 is out of range for rank 2"),
    (graph.SigmoidOp, [tensor_of([2], I8)], {}, r"input must have a floating-point element type"),
    (
        graph.AddOp,
        [F32([2, 3]), F32([4])],
        {},
        r"operand shapes \[2, 3\] and \[4\] are not broadcast-compatible",
    ),
    (
        graph.AddOp,
        [F32([2]), tensor_of([2], I8)],
        {},
        r"lhs and rhs must have the same element type",
    ),
    (
        graph.MaxPoolOp,
        [F32([1, 1, 4, 4])],
        {"kernel": int_array([2, 2]), "pads": int_array([2, 0, 0, 0])},
        r"pads \[2, 0, 0, 0\] must be smaller than the kernel \[2, 2\]",
    ),
    (
        graph.AvgPoolOp,
        [F32([1, 4, 4])],
        {"kernel": int_array([2, 2])},
        r"input must be 4-D \(NCHW\)",
    ),
    (
        graph.ReduceSumOp,
        [F32([2, 3])],
        {"axes": int_array([1, -1])},
        r"axes \[1, -1\] name an axis twice",
    ),
    (
        graph.ReduceMaxOp,
        [F32([2, 3])],
        {"axes": int_array([2])},
        r"axes entry 2 is out of range for rank 2",
    ),
    (
        graph.ConcatOp,
        [F32([2, 3]), F32([2, 4])],
        {"axis": i64_attr(0)},
        r"operand #1 tensor<2x4xf32> must match operand #0 tensor<2x3xf32> in every dimension but the concatenation axis 0",
    ),
    (
        graph.SliceOp,
        [F32([4])],
        {"starts": int_array([0]), "ends": int_array([2]), "steps": int_array([0])},
        r"steps must be non-zero, got \[0\]",
    ),
    (
        graph.SliceOp,
        [F32([4])],
        {"starts": int_array([0, 1]), "ends": int_array([2])},
        r"must have the same length",
    ),
    (
        graph.PadOp,
        [F32([4])],
        {"pads": int_array([1])},
        r"pads must have 2 x rank = 2 values, got \[1\]",
    ),
    (
        graph.PadOp,
        [F32([3])],
        {"pads": int_array([3, 0]), "mode": StringAttr("reflect")},
        r"reflect pads of dimension 0 must be smaller than its size 3",
    ),
    (
        graph.SqueezeOp,
        [F32([2, 1])],
        {"axes": int_array([0])},
        r"cannot squeeze axis 0 of tensor<2x1xf32>: its size is 2, not 1",
    ),
    (
        graph.TransposeOp,
        [F32([2, 3])],
        {"perm": int_array([0, 0])},
        r"perm \[0, 0\] is not a permutation",
    ),
    (
        graph.QuantizeOp,
        [F32([2, 3]), F32([2]), tensor_of([2], I8)],
        {},
        r"per-channel scale tensor<2xf32> must have one entry per element of axis 1 of tensor<2x3xf32> \(3\)",
    ),
    (
        graph.QuantizeOp,
        [F32([2, 3]), F32([]), tensor_of([], f32)],
        {},
        r"zero_point must have element type i8, ui8, i16, ui16; got tensor<f32>",
    ),
    (
        graph.DequantizeOp,
        [tensor_of([2, 3], I8), F32([3]), tensor_of([2], I8)],
        {},
        r"zero_point tensor<2xi8> must have the shape of scale tensor<3xf32>",
    ),
    (
        graph.GatherOp,
        [F32([2, 3]), tensor_of([2], I8)],
        {},
        r"indices must have element type i32 or i64",
    ),
    (graph.WhereOp, [F32([2]), F32([2]), F32([2])], {}, r"condition must have element type i1"),
    (
        graph.GeluOp,
        [F32([2])],
        {"approximate": StringAttr("fast")},
        r'approximate must be "none" or "tanh", got "fast"',
    ),
    (
        graph.ClipOp,
        [F32([2])],
        {"min": f32_attr(1.0), "max": f32_attr(0.0)},
        r"min \(1.0\) must not exceed max \(0.0\)",
    ),
]


@pytest.mark.parametrize(
    "op_class, types, properties, message",
    ERRORS,
    ids=[f"{e[0].name}-{i}" for i, e in enumerate(ERRORS)],
)
def test_shape_inference_errors(op_class, types, properties, message):
    with pytest.raises(VerifyException, match=message):
        infer(op_class, types, properties)


FLOAT_PROPERTIES = ("alpha", "beta", "epsilon", "min", "max", "value")
STRING_PROPERTIES = {
    "approximate": ["none", "tanh", "fast"],
    "layout": ["NCHW", "NHWC", "NCW"],
    "mode": ["constant", "reflect", "edge", "wrap"],
    "direction": ["left", "right", "up"],
}
BOOL_PROPERTIES = (
    "trans_a",
    "trans_b",
    "ceil_mode",
    "count_include_pad",
    "keepdims",
    "select_last_index",
    "exclusive",
    "reverse",
    "largest",
    "fmod",
)
INT_PROPERTIES = ("groups", "axis", "k")
ELEMENT_TYPES = [f32, IntegerType(8), IntegerType(1), IntegerType(64)]
INFERRED_OPS = [
    op
    for op in graph.Graph.operations
    if op is not graph.ConstantOp
    and not issubclass(op, graph.ResultTypedOp)
    and op not in graph.FUSION_OPS
]


def property_strategy(name: str):
    if name in FLOAT_PROPERTIES:
        return st.floats(-4, 4, width=32).map(f32_attr)
    if name in STRING_PROPERTIES:
        return st.sampled_from(STRING_PROPERTIES[name]).map(StringAttr)
    if name in BOOL_PROPERTIES:
        return st.booleans().map(bool_attr)
    if name in INT_PROPERTIES:
        return st.integers(-3, 4).map(i64_attr)
    return st.lists(st.integers(-3, 5), max_size=5).map(int_array)


@st.composite
def arbitrary_op(draw):
    """An op class with operand types and properties that may or may not make sense."""
    op_class = draw(st.sampled_from(INFERRED_OPS))
    definition = op_class.get_irdl_definition()
    types = []
    for _, operand in definition.operands:
        count = 1
        if isinstance(operand, VarOperandDef):
            count = draw(st.integers(0, 1 if isinstance(operand, OptOperandDef) else 3))
        for _ in range(count):
            shape = draw(st.lists(st.integers(0, 4), max_size=4))
            types.append(TensorType(draw(st.sampled_from(ELEMENT_TYPES)), shape))
    properties = {
        name: draw(property_strategy(name))
        for name, prop in definition.properties.items()
        if prop.default_value is None and not isinstance(prop, OptionalDef) or draw(st.booleans())
    }
    return op_class, types, properties


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # overflows, empty means, log(0)
@given(case=arbitrary_op())
@settings(max_examples=400, deadline=None)
def test_shape_inference_accepts_or_explains_anything(case):
    """Any operands and properties: inferred types that `evaluate` produces, or a VerifyException."""
    op_class, types, properties = case
    try:
        result_types = infer(op_class, types, properties)
    except VerifyException:
        return
    operands = [create_ssa_value(t) for t in types]
    op = op_class.build_inferred(operands, properties)
    op.verify()
    # Non-negative integers: a negative integer power is an evaluation error by design.
    arrays = [
        np.abs(normal(*t.get_shape())).astype(to_numpy_dtype(t.get_element_type())) for t in types
    ]
    if op_class is graph.GatherOp:
        arrays[1] = np.zeros_like(arrays[1])
        if 0 in types[0].get_shape():
            return  # nothing to gather from
    results = op.evaluate(*arrays)
    assert len(results) == len(result_types)
    for y, result_type in zip(results, result_types):
        assert y.shape == result_type.get_shape()
        assert y.dtype == to_numpy_dtype(result_type.get_element_type())


def test_result_typed_ops_check_their_result_type():
    x = create_ssa_value(F32([2, 3]))
    with pytest.raises(
        VerifyException,
        match=r"cannot reshape tensor<2x3xf32> \(6 elements\) to tensor<4xf32> \(4 elements\)",
    ):
        graph.ReshapeOp(x, F32([4])).verify()
    with pytest.raises(VerifyException, match=r"cast keeps the shape"):
        graph.CastOp(x, tensor_of([3, 2], I8)).verify()
    with pytest.raises(
        VerifyException, match=r"input shape \[2, 3\] does not broadcast to \[2, 2\]"
    ):
        graph.BroadcastToOp(x, F32([2, 2])).verify()
    with pytest.raises(VerifyException, match=r"takes its target from its result type"):
        graph.ReshapeOp.build_inferred([x])


def test_verifier_rejects_a_wrong_declared_result_type():
    x, w = create_ssa_value(F32([1, 3, 8, 8])), create_ssa_value(F32([4, 3, 3, 3]))
    op = graph.Conv2dOp(operands=[x, w, []], result_types=[F32([1, 4, 8, 8])])
    with pytest.raises(
        VerifyException,
        match=r"result #0 has type tensor<1x4x8x8xf32>, but the operands and attributes imply tensor<1x4x6x6xf32>",
    ):
        op.verify()
