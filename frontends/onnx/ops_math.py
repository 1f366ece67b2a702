"""Converters for ONNX's Elementwise math, logic and bitwise operators, and the reductions built from them.

Registered in `CONVERTERS` with `ops.converts`; see `ops` for the conventions.
"""

from __future__ import annotations
