"""Converters for ONNX's Indexing and data movement: gathers, scatters, triangles, top-k, resizing, einsum.

Registered in `CONVERTERS` with `ops.converts`; see `ops` for the conventions.
"""

from __future__ import annotations
