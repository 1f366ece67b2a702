"""The `loop` dialect: the copies the loop level needs and upstream lacks, a copy that pads and casts
and an asynchronous copy whose completion is a token (docs/lowering.md, section 4).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    Float64Type,
    FloatAttr,
    MemRefType,
    i64,
)
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException

from ziggurat.dtypes import to_numpy_dtype


@irdl_attr_definition
class TokenType(ParametrizedAttribute, TypeAttribute):
    """`!loop.token`: the completion of a `loop.copy_async`, consumed by `loop.wait`."""

    name = "loop.token"


def _copy_properties(pad: Sequence[int] | None, pad_value: float | None) -> dict[str, Attribute]:
    properties: dict[str, Attribute] = {}
    if pad is not None:
        properties["pad"] = DenseArrayBase.from_list(i64, pad)
    if pad_value is not None:
        properties["pad_value"] = FloatAttr(pad_value, Float64Type())
    return properties


class CopyOperation(IRDLOperation):
    """What `loop.copy` and `loop.copy_async` share: operands, padding, and their verifier."""

    source = operand_def(MemRefType)
    destination = operand_def(MemRefType)
    pad = opt_prop_def(DenseArrayBase.constr(i64))
    pad_value = opt_prop_def(FloatAttr)

    irdl_options = (ParsePropInAttrDict(),)

    assembly_format = (
        "$source `->` $destination attr-dict `:` type($source) `->` type($destination)"
    )

    def padding(self) -> list[tuple[int, int]]:
        """(low, high) padding per dimension, zeros when the copy does not pad."""
        rank = self.source.type.get_num_dims()
        if self.pad is None:
            return [(0, 0)] * rank
        values = self.pad.get_values()
        return [(values[2 * d], values[2 * d + 1]) for d in range(rank)]

    def verify_(self) -> None:
        source, destination = self.source.type, self.destination.type
        assert isinstance(source, MemRefType) and isinstance(destination, MemRefType)
        if source.get_num_dims() != destination.get_num_dims():
            raise VerifyException(
                f"source and destination must have the same rank, got {source} and {destination}"
            )
        if self.pad_value is not None and self.pad is None:
            raise VerifyException("pad_value is the value of the padding and needs pad")
        if self.pad is not None:
            pads = self.pad.get_values()
            if len(pads) != 2 * source.get_num_dims() or any(p < 0 for p in pads):
                raise VerifyException(
                    f"pad takes a non-negative (low, high) pair per dimension of {source}, got {list(pads)}"
                )
        padded = [
            DYNAMIC_INDEX if size == DYNAMIC_INDEX else size + low + high
            for size, (low, high) in zip(source.get_shape(), self.padding())
        ]
        for dim, (want, have) in enumerate(zip(padded, destination.get_shape())):
            if DYNAMIC_INDEX not in (want, have) and want != have:
                raise VerifyException(
                    f"destination shape {list(destination.get_shape())} must be the source shape "
                    f"{list(source.get_shape())} plus the padding, {padded} (dimension {dim} differs)"
                )


@irdl_op_definition
class CopyAsyncOp(CopyOperation):
    """`%t = loop.copy_async %src -> %dst {pad?, pad_value?} : T1 -> T2`: starts a copy, done at `loop.wait %t`.

    A copy moves the whole source view to the whole destination view. `pad` is a
    (low, high) pair of element counts per dimension, as in `npu.dma`, filled with
    `pad_value` (default 0); the destination has the source's shape plus the
    padding. Element types may differ: the copy casts, as DMA engines with
    `cast = true` do.

        %t = loop.copy_async %src -> %dst : memref<128x64xf16, strided<[512, 1], offset: ?>, "gm"> -> ...
        loop.wait %t : !loop.token
    """

    name = "loop.copy_async"

    token = result_def(TokenType)

    def __init__(
        self,
        source: SSAValue,
        destination: SSAValue,
        *,
        pad: Sequence[int] | None = None,
        pad_value: float | None = None,
    ):
        super().__init__(
            operands=[source, destination],
            result_types=[TokenType()],
            properties=_copy_properties(pad, pad_value),
        )


@irdl_op_definition
class CopyOp(CopyOperation):
    """`loop.copy %src -> %dst {pad?, pad_value?} : T1 -> T2`: a synchronous copy (copy_async + wait).

    It pads and casts as `loop.copy_async` does:

        loop.copy %x -> %xp {pad = array<i64: 0, 0, 1, 1>, pad_value = 0.0 : f64} : memref<4x4xf32> -> memref<4x6xf32>
    """

    name = "loop.copy"

    def __init__(
        self,
        source: SSAValue,
        destination: SSAValue,
        *,
        pad: Sequence[int] | None = None,
        pad_value: float | None = None,
    ):
        super().__init__(
            operands=[source, destination], properties=_copy_properties(pad, pad_value)
        )


@irdl_op_definition
class WaitOp(IRDLOperation):
    """`loop.wait %t : !loop.token`: blocks until the copy that made `%t` is done."""

    name = "loop.wait"

    token = operand_def(TokenType)

    assembly_format = "$token attr-dict `:` type($token)"

    def __init__(self, token: SSAValue):
        super().__init__(operands=[token])


Loop = Dialect("loop", [CopyAsyncOp, CopyOp, WaitOp], [TokenType])


# Destination-passing style at the loop level: a function's results are memref arguments named
# `%result0`, `%result1`, ... after its inputs (what tile-to-loop writes), which the interpreters and
# the differential checks fill and read back.
_OUTPUT_ARGUMENT = re.compile(r"result\d+")


SHARED_BY_CORES_ATTR = "loop.shared_by_cores"
"""Unit, on a `memref.alloc`: cores other than the one that wrote its bytes read them
(`loop-distribute` marks it), so `loop-promote-to-memory-space` keeps it in global memory, which
every core sees, and never in a core's own memories."""


ABI_ELEMENT_TYPE = "ziggurat.element_type"
"""The argument attribute giving the element type a caller reads and writes a memref argument of
signless integers as (`ui8` for a model's uint8 input or output): buffers hold signless integers,
as arith computes on them, and the signedness is the caller's."""


def declared_element_types(function: func.FuncOp) -> list[Attribute | None]:
    """Per argument of `function`: its `ABI_ELEMENT_TYPE`, or None."""
    count = len(function.function_type.inputs.data)
    if function.arg_attrs is None:
        return [None] * count
    return [attrs.data.get(ABI_ELEMENT_TYPE) for attrs in function.arg_attrs.data]


def as_declared(array: np.ndarray, element_type: Attribute | None) -> np.ndarray:
    """`array` (an argument's signless integers) viewed as the caller's `element_type`."""
    if element_type is None:
        return array
    return array.view(to_numpy_dtype(element_type))


def as_buffer(
    array: np.ndarray, element_type: Attribute | None, arg_type: MemRefType
) -> np.ndarray:
    """The caller's `array` for a memref argument declared `element_type` (None: its own), as the
    argument's buffer holds it: converted to the declared type, then its bits as the buffer's."""
    buffer_dtype = to_numpy_dtype(arg_type.get_element_type())
    if element_type is None:
        return np.asarray(array).astype(buffer_dtype)
    return np.asarray(array).astype(to_numpy_dtype(element_type)).view(buffer_dtype)


def output_argument_name(index: int) -> str:
    """The name of the memref argument that carries result `index`."""
    return f"result{index}"


def is_output_argument(name: str, arg_type: Attribute) -> bool:
    """Whether an argument named `name` of type `arg_type` carries a result (a `%resultN` memref)."""
    return isinstance(arg_type, MemRefType) and _OUTPUT_ARGUMENT.fullmatch(name) is not None
