"""A splat too large for the parser to expand from a number prints as the hex of one element
and reads back as the same splat (VGG-19's fc6 weights, 4096x25088 bf16, made its emitted npu
file unreadable: 'splat dense literal ... more than the 16777216 the parser can expand')."""

from __future__ import annotations

import io

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    BFloat16Type,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    Float32Type,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
)

from ziggurat.context import default_context
from ziggurat.diagnostics import DiagnosticError
from ziggurat.parsing import MAX_SPLAT_ELEMENTS, parse_source
from ziggurat.printing import Printer

ELEMENTS = MAX_SPLAT_ELEMENTS + 16
CASES = {
    "bf16": (BFloat16Type(), ml_dtypes.bfloat16, 0.02),
    "f32": (Float32Type(), np.float32, -1.5),
    "i8": (IntegerType(8), np.int8, -3),
}


def printed_global(element_type, dtype, value) -> tuple[str, bytes]:
    data = np.full(ELEMENTS, value, dtype=dtype).tobytes()
    attr = DenseIntOrFPElementsAttr(TensorType(element_type, [ELEMENTS]), BytesAttr(data))
    weights = memref.GlobalOp.get(
        StringAttr("w"), MemRefType(element_type, [ELEMENTS]), attr, constant=UnitAttr()
    )
    text = io.StringIO()
    Printer(stream=text).print_op(ModuleOp([weights]))
    return text.getvalue(), data


@pytest.mark.parametrize("element_type, dtype, value", CASES.values(), ids=CASES.keys())
def test_large_splat_round_trips_as_one_hex_element(element_type, dtype, value):
    text, data = printed_global(element_type, dtype, value)
    one = np.array([value], dtype=dtype).tobytes().hex().upper()
    assert f'dense<"0x{one}"> : tensor<{ELEMENTS}x{element_type}>' in text
    parsed = parse_source(default_context(), text, "splat.mlir")
    assert parsed.ops.first.initial_value.data.data == data


def test_the_parser_still_refuses_a_large_splat_number():
    text, _ = printed_global(*CASES["bf16"])
    as_number = text.replace('"0xA43C"', "2.001950e-02")
    with pytest.raises(DiagnosticError, match="more than the 16777216 the parser can expand"):
        parse_source(default_context(), as_number, "splat.mlir")
