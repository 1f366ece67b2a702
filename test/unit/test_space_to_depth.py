"""graph-space-to-depth: random strided convs compute the same before and after, and the rewrite
happens exactly where it shrinks the matrix unit's padded work."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ziggurat.context import default_context
from ziggurat.dialects.graph import Conv2dOp
from ziggurat.interpreters.graph_interpreter import random_inputs, run_function
from ziggurat.machine import load_machine
from ziggurat.parsing import parse_source
from ziggurat.transforms.graph.space_to_depth import GraphSpaceToDepthPass, rearranges


def conv_module(channels, size, kernel, strides, pads, bias, element="f32"):
    (h, w), (kh, kw), (sh, sw) = size, kernel, strides
    top, left, bottom, right = pads
    oh, ow = (h + top + bottom - kh) // sh + 1, (w + left + right - kw) // sw + 1
    x, wt, y = (
        f"tensor<1x{channels}x{h}x{w}x{element}>",
        f"tensor<4x{channels}x{kh}x{kw}x{element}>",
        f"tensor<1x4x{oh}x{ow}x{element}>",
    )
    b = f", %b: tensor<4x{element}>" if bias else ""
    operands, types = (
        ("%x, %w, %b", f"{x}, {wt}, tensor<4x{element}>") if bias else ("%x, %w", f"{x}, {wt}")
    )
    return f"""func.func @main(%x: {x}, %w: {wt}{b}) -> {y} {{
  %y = graph.conv2d {operands} {{strides = array<i64: {sh}, {sw}>, pads = array<i64: {top}, {left}, {bottom}, {right}>}} : ({types}) -> {y}
  func.return %y : {y}
}}
"""


def rewritten(text: str, pass_: GraphSpaceToDepthPass):
    before = parse_source(default_context(), text, "conv.mlir")
    after = before.clone()
    pass_.apply(default_context(), after)
    after.verify()
    return before, after


def padded_work(channels, kh, kw, k):
    return math.ceil(channels / k) * k * kh * kw


@st.composite
def strided_convs(draw):
    sh, sw = draw(st.sampled_from([(2, 2), (2, 1), (1, 2), (3, 3), (4, 4)]))
    kh, kw = draw(st.integers(1, 7)), draw(st.integers(1, 7))
    h, w = sh * draw(st.integers(-(-kh // sh), 7)), sw * draw(st.integers(-(-kw // sw), 7))
    pads = [draw(st.integers(0, k - 1)) for k in (kh, kw, kh, kw)]
    return draw(st.integers(1, 6)), (h, w), (kh, kw), (sh, sw), pads, draw(st.booleans())


@settings(max_examples=60, deadline=None)
@given(strided_convs())
def test_strided_convs_compute_the_same(case):
    channels, size, kernel, strides, pads, bias = case
    before, after = rewritten(
        conv_module(channels, size, kernel, strides, pads, bias), GraphSpaceToDepthPass()
    )
    inputs = random_inputs(next(iter(before.ops)), seed=3)
    (want,), (got,) = run_function(before, inputs, "main"), run_function(after, inputs, "main")
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    (conv,) = [op for op in after.walk() if isinstance(op, Conv2dOp)]
    sh, sw = strides
    if list(conv.strides.get_values()) == [1, 1]:
        # rewritten: its own padded work is below the original's
        _, c, _, _ = conv.input.type.get_shape()
        _, _, kh, kw = conv.weight.type.get_shape()
        assert c == channels * sh * sw
        assert padded_work(c, kh, kw, 16) < padded_work(channels, *kernel, 16)


def test_resnet_stem_is_rewritten_and_deep_strided_convs_are_not():
    stem = conv_module(3, (32, 32), (7, 7), (2, 2), (3, 3, 3, 3), True)
    _, after = rewritten(stem, GraphSpaceToDepthPass())
    (conv,) = [op for op in after.walk() if isinstance(op, Conv2dOp)]
    assert conv.input.type.get_shape() == (1, 12, 16, 16) and conv.weight.type.get_shape() == (
        4,
        12,
        4,
        4,
    )
    assert list(conv.pads.get_values()) == [2, 2, 1, 1]
    deep = conv_module(64, (8, 8), (3, 3), (2, 2), (1, 1, 1, 1), False)
    _, after = rewritten(deep, GraphSpaceToDepthPass())
    (conv,) = [op for op in after.walk() if isinstance(op, Conv2dOp)]
    assert conv.input.type.get_shape() == (1, 64, 8, 8)


@pytest.mark.parametrize(
    ("machine", "rewrites"), [("davinci", True), ("tensorcore", True), ("systolic", False)]
)
def test_machine_decides(machine, rewrites):
    """davinci and tensorcore pad channels to 16; systolic's array pads no channel (its K is 1),
    so the rewrite would add work."""
    stem = conv_module(3, (32, 32), (7, 7), (2, 2), (3, 3, 3, 3), True, element="f16")
    _, after = rewritten(stem, GraphSpaceToDepthPass(machine=machine))
    (conv,) = [op for op in after.walk() if isinstance(op, Conv2dOp)]
    assert (conv.input.type.get_shape()[1] == 12) == rewrites


def test_a_machine_that_cannot_rearrange_is_left_alone():
    """tensorcore's gm reaches the vector unit's registers through smem, which is a route; without
    its rf -> gm store there is no way back, so the input's rearrangement could not be lowered."""
    tensorcore = load_machine("tensorcore")
    assert rearranges(tensorcore)
    dmas = dict(tensorcore.dmas)
    dmas["st"] = dataclasses.replace(dmas["st"], paths=(("rf", "smem"),))
    assert not rearranges(dataclasses.replace(tensorcore, dmas=dmas))


def test_bad_k_multiple_is_refused():
    with pytest.raises(ValueError, match="k-multiple must be >= 1"):
        GraphSpaceToDepthPass(k_multiple=0)
