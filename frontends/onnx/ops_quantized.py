"""Converters for ONNX's Integer operators: QLinearConv, QLinearMatMul, MatMulInteger, ConvInteger, DynamicQuantizeLinear.

Registered in `CONVERTERS` with `ops.converts`; see `ops` for the conventions.
"""

from __future__ import annotations
