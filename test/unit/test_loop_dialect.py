"""The loop dialect: builders, printing that parses back, and the copy verifier's rules."""

from __future__ import annotations

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, NoneAttr, StringAttr, f16, f32
from xdsl.ir import Block, Region
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from ziggurat.context import default_context
from ziggurat.dialects.loop import CopyAsyncOp, CopyOp, TokenType, WaitOp


def memref(shape, element=f32, space="gm"):
    return MemRefType(element, shape, NoneAttr(), StringAttr(space) if space else NoneAttr())


def block_with(*types) -> Block:
    return Block(arg_types=types)


def test_builders_print_and_parse_back():
    block = block_with(memref([4, 4]), memref([6, 8], f16, "ub"))
    source, destination = block.args
    copy = CopyAsyncOp(source, destination, pad=[1, 1, 2, 2], pad_value=-1.0)
    wait = WaitOp(copy.token)
    block.add_ops([copy, wait, CopyOp(source, destination, pad=[1, 1, 2, 2]), func.ReturnOp()])
    function = func.FuncOp("f", ([a.type for a in block.args], []), Region(block))
    function.verify()
    assert copy.token.type == TokenType()
    assert copy.padding() == [(1, 1), (2, 2)]
    text = str(function)
    assert (
        "loop.copy_async %0 -> %1 {pad = array<i64: 1, 1, 2, 2>, pad_value = -1.000000e+00 : f64}"
        in text
    )
    assert "loop.wait %2 : !loop.token" in text
    parsed = Parser(default_context(), text).parse_op()
    parsed.verify()
    assert str(parsed) == text


def test_copy_without_pad_has_zero_padding():
    block = block_with(memref([2, 3]), memref([2, 3], space=None))
    assert CopyOp(*block.args).padding() == [(0, 0), (0, 0)]


@pytest.mark.parametrize(
    ("source", "destination", "pad", "pad_value", "message"),
    [
        ([4, 4], [16], None, None, "source and destination must have the same rank"),
        (
            [4, 4],
            [4, 5],
            None,
            None,
            "destination shape [4, 5] must be the source shape [4, 4] plus the padding",
        ),
        ([4, 4], [5, 5], [1, 0, 0, 0], None, "[5, 4] (dimension 1 differs)"),
        ([4], [6], [1, 1, 0, 0], None, "pad takes a non-negative (low, high) pair per dimension"),
        ([4], [4], [2, -2], None, "pad takes a non-negative (low, high) pair per dimension"),
        ([4], [4], None, 1.0, "pad_value is the value of the padding and needs pad"),
    ],
)
def test_copy_verifier(source, destination, pad, pad_value, message):
    block = block_with(memref(source), memref(destination))
    for op_type in (CopyOp, CopyAsyncOp):
        with pytest.raises(VerifyException) as raised:
            op_type(*block.args, pad=pad, pad_value=pad_value).verify()
        assert message in str(raised.value)


def test_copy_may_cast_between_element_types():
    block = block_with(memref([8], f32), memref([8], f16, "l1"))
    CopyOp(*block.args).verify()
