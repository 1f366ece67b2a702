"""Useful work: what a model asks of the machine, as opposed to what its lowering executes.

The matrix unit's multiply-accumulates, counted on whole-layer contractions before tiling pads
them (`tile-record-useful-work` keeps them on the module as `USEFUL_MACS_ATTR`), and the
compulsory global-memory traffic: each input and weight read once, each output written once.
The run's report bounds the run by them (its useful roofline) beside the bound of what ran.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, ShapedType
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.ir import Operation

from ziggurat.ir.contraction import contraction_dims, is_contraction

USEFUL_MACS_ATTR = "ziggurat.useful_macs"
"""Module attribute: per `"<input type>-><output type>"` pair, the multiply-accumulates of the
model's matrix-unit contractions, unpadded."""


@dataclass(frozen=True)
class UsefulWork:
    """A run's useful work: the model's matrix-unit MACs per (input, output) element type pair,
    and the bytes of global memory it must read (inputs, weights) and write (outputs) once."""

    macs: dict[tuple[str, str], int]
    bytes_read: int
    bytes_written: int

    def to_dict(self) -> dict[str, object]:
        return {
            "macs": {pair_key(*pair): n for pair, n in self.macs.items()},
            "bytes_read": self.bytes_read,
            "bytes_written": self.bytes_written,
        }


def pair_key(source: str, target: str) -> str:
    """`"f16->f32"`: an (input, output) element type pair as reports and `USEFUL_MACS_ATTR` name it."""
    return f"{source}->{target}"


def runs_on_matrix_unit(op: Operation) -> bool:
    """A contraction with an N and a reduction (a K or a window) loop: a matmul or a conv, which
    the matrix unit runs; a depthwise conv has no N (its channels index both inputs) and runs
    on the vector unit."""
    if not isinstance(op, LinalgStructuredOperation) or not is_contraction(op):
        return False
    dims = contraction_dims(op)
    return dims is not None and bool(dims.n) and bool(dims.k or dims.window)


def is_static(op: LinalgStructuredOperation) -> bool:
    return all(
        size >= 0
        for operand in op.operands
        if isinstance(operand.type, ShapedType)
        for size in operand.type.get_shape()
    )


def contraction_macs(op: LinalgStructuredOperation) -> int:
    """One multiply-accumulate per point of the (static) iteration space."""
    return math.prod(op.get_static_loop_ranges())


def contraction_pair(op: LinalgStructuredOperation) -> str:
    """`"<input type>-><output type>"`, the key of `USEFUL_MACS_ATTR`."""
    lhs, out = op.inputs[0].type, op.outputs[0].type
    return pair_key(str(lhs.get_element_type()), str(out.get_element_type()))


def recorded_macs(module: ModuleOp) -> dict[tuple[str, str], int] | None:
    """The module's `USEFUL_MACS_ATTR` per (input, output) pair; None when it has none."""
    attribute = module.attributes.get(USEFUL_MACS_ATTR)
    if not isinstance(attribute, DictionaryAttr):
        return None
    macs: dict[tuple[str, str], int] = {}
    for pair, count in attribute.data.items():
        source, arrow, target = pair.partition("->")
        if arrow and isinstance(count, IntegerAttr):
            macs[source, target] = count.value.data
    return macs
