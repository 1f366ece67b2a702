"""Converters for ONNX's Transformer building blocks: Attention, RotaryEmbedding, RMSNormalization.

Registered in `CONVERTERS` with `ops.converts`; see `ops` for the conventions.
"""

from __future__ import annotations
