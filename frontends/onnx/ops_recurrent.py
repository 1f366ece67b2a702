"""Converters for ONNX's Recurrent layers (RNN, GRU, LSTM) unrolled over their static sequence length.

Registered in `CONVERTERS` with `ops.converts`; see `ops` for the conventions.
"""

from __future__ import annotations
