"""The shortcuts that made compiling ResNet-50 faster compute what the slow paths did.

Each replaces a slow computation by an equivalent one (docs/performance.md, "Compile
and simulation speed"); these tests hold them to the original on the cases that could
tell them apart.
"""

from __future__ import annotations

import io
import itertools
import math
import random

import pytest
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    IndexType,
    IntegerType,
    TensorType,
)
from xdsl.parser import Parser
from xdsl.printer import Printer as XdslPrinter

from ziggurat.context import default_context
from ziggurat.dtypes import is_splat
from ziggurat.printing import Printer
from ziggurat.transforms.npu.insert_sync import _ANYWHERE, _Access, _envelopes_meet, _Step
from ziggurat.transforms.tile.tile_sizes import is_contraction_op, slice_elements
from ziggurat.transforms.tile.tiling_interface import Tile, access_slice, linear_form, tiling_of

NAN = float("nan")
ELEMENT_TYPES = [Float16Type(), Float32Type(), BFloat16Type(), IntegerType(32), IntegerType(8), IntegerType(1), IndexType()]
VALUES = {
    "mixed": [1.0, 2.0, 1.0],
    "equal": [3.0, 3.0, 3.0],
    "signed zeros": [0.0, -0.0, 0.0],
    "nans": [NAN, NAN],
    "one nan": [NAN],
    "one": [5.0],
    "long": [float(i % 7) for i in range(150)],
    "long splat": [1.0] * 150,
}


def dense(element_type, values: list[float]) -> DenseIntOrFPElementsAttr:
    if isinstance(element_type, IntegerType | IndexType):
        values = [int(v) if v == v else 1 for v in values]
        if isinstance(element_type, IntegerType) and element_type.width.data == 1:
            values = [min(abs(v), 1) for v in values]
    return DenseIntOrFPElementsAttr.from_list(TensorType(element_type, [len(values)]), values)


@pytest.mark.parametrize("element_type", ELEMENT_TYPES, ids=str)
@pytest.mark.parametrize("values", VALUES.values(), ids=VALUES.keys())
def test_is_splat_is_xdsls(element_type, values):
    attr = dense(element_type, values)
    assert is_splat(attr) == attr.is_splat()


@pytest.mark.parametrize("element_type", ELEMENT_TYPES, ids=str)
@pytest.mark.parametrize("values", VALUES.values(), ids=VALUES.keys())
def test_printer_prints_dense_as_xdsl(element_type, values):
    attr = dense(element_type, values)
    ours, theirs = io.StringIO(), io.StringIO()
    Printer(stream=ours).print_attribute(attr)
    XdslPrinter(stream=theirs).print_attribute(attr)
    assert ours.getvalue() == theirs.getvalue()


CONVS = {
    "3x3 pad 1": """
    func.func @main(%x: tensor<1x16x20x20xf16>, %w: tensor<32x16x3x3xf16>) -> tensor<1x32x20x20xf16> {
      %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x20x20xf16>, tensor<32x16x3x3xf16>) -> tensor<1x32x20x20xf16>
      func.return %y : tensor<1x32x20x20xf16>
    }""",
    "strided dilated": """
    func.func @main(%x: tensor<1x4x17x17xf16>, %w: tensor<6x4x3x3xf16>) -> tensor<1x6x7x7xf16> {
      %y = graph.conv2d %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 2, 2>} : (tensor<1x4x17x17xf16>, tensor<6x4x3x3xf16>) -> tensor<1x6x7x7xf16>
      func.return %y : tensor<1x6x7x7xf16>
    }""",
}


@pytest.mark.parametrize("text", CONVS.values(), ids=CONVS.keys())
def test_slice_elements_is_access_slices_size(text):
    from ziggurat.lowering.graph_to_tile import GraphToTilePass

    module = Parser(default_context(), text).parse_module()
    GraphToTilePass().apply(default_context(), module)
    op = next(op for op in module.walk() if is_contraction_op(op))
    for indexing in tiling_of(op).indexing_maps(op):
        forms = [linear_form(result)[0] for result in indexing.results]
        for box in itertools.product((1, 2, 5), repeat=indexing.num_dims):
            expected = math.prod(access_slice(indexing, Tile.whole(list(box)))[0].sizes)
            assert slice_elements(forms, box) == expected


def test_envelopes_never_hide_a_conflict():
    """Two steps whose accesses conflict pairwise always pass the envelope test (which only skips)."""
    rng = random.Random(7)
    storages = ["ub", "l1", ("space", "ub"), _ANYWHERE]

    def accesses(count: int) -> tuple[_Access, ...]:
        found = []
        for _ in range(count):
            start = rng.randrange(0, 64)
            found.append(_Access(rng.choice(storages), start, start + rng.randrange(0, 16), rng.random() < 0.3))
        return tuple(found)

    skipped = 0
    for _ in range(3000):
        mine = _Step([], {"p": accesses(rng.randrange(1, 4))})
        theirs = _Step([], {"q": accesses(rng.randrange(1, 4))})
        pairwise = any(a.conflicts(b) for a in mine.accesses["p"] for b in theirs.accesses["q"])
        meet = _envelopes_meet(mine.envelopes("p"), theirs.envelopes("q"))
        assert meet or not pairwise
        assert mine.conflicts("p", theirs, "q") == pairwise
        skipped += not meet
    assert skipped > 100  # the test draws pairs the envelopes rule out, not only ones they pass
