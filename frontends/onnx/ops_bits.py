"""Converters for ONNX's bit-level reinterpretation: BitCast.

Registered in `CONVERTERS` with `ops.converts`; see `ops` for the conventions.
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType

from ziggurat.dialects import graph
from ziggurat.frontends.onnx.node import NodeContext, element_type_of
from ziggurat.frontends.onnx.ops import converts


@converts("BitCast", newest=26)
def convert_bitcast(ctx: NodeContext):
    element_type = element_type_of(ctx.attribute("to"), f"{ctx.label} (BitCast) target")
    return [ctx.emit_typed(graph.BitcastOp, ctx.input(0), TensorType(element_type, ctx.shape(0)))]
