"""Conversions between builtin element types and numpy dtypes (ml_dtypes for the narrow floats).

Signless integers (`i8`, `i32`) are read as signed, as MLIR's tensor-level dialects do;
`ui8` is the unsigned form used by uint8 quantization.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float8E4M3FNType,
    Float8E5M2Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute

_FLOATS: list[tuple[type[Attribute], np.dtype]] = [
    (Float16Type, np.dtype(np.float16)),
    (Float32Type, np.dtype(np.float32)),
    (Float64Type, np.dtype(np.float64)),
    (BFloat16Type, np.dtype(ml_dtypes.bfloat16)),
    (Float8E4M3FNType, np.dtype(ml_dtypes.float8_e4m3fn)),
    (Float8E5M2Type, np.dtype(ml_dtypes.float8_e5m2)),
]

_FLOAT_DTYPES: dict[type[Attribute], np.dtype] = dict(_FLOATS)


def to_numpy_dtype(element_type: Attribute) -> np.dtype:
    """The numpy dtype that holds values of a builtin element type."""
    dtype = _FLOAT_DTYPES.get(type(element_type))  # the usual case, without isinstance's ABC walk
    if dtype is not None:
        return dtype
    for attr_type, dtype in _FLOATS:
        if isinstance(element_type, attr_type):
            return dtype
    if isinstance(element_type, IntegerType):
        width = element_type.width.data
        if width == 1:
            return np.dtype(np.bool_)
        if width in (8, 16, 32, 64):
            unsigned = element_type.signedness.data == Signedness.UNSIGNED
            return np.dtype(f"{'u' if unsigned else ''}int{width}")
    raise ValueError(f"element type {element_type} has no numpy equivalent")


def is_splat(value: DenseIntOrFPElementsAttr) -> bool:
    """`value.is_splat()` (every element equals the first, as numbers: -0.0 == 0.0, NaN != NaN)
    on a numpy view of its bytes: xDSL's decodes every element into a Python number, seconds
    for a model's weights."""
    try:
        dtype = to_numpy_dtype(value.get_element_type())
    except ValueError:  # index or complex elements
        return value.is_splat()
    data = np.frombuffer(value.data.data, dtype=dtype)
    return data.size == 1 or bool((data == data[0]).all())


def from_numpy_dtype(dtype: np.dtype | type) -> Attribute:
    """The builtin element type for a numpy dtype (signless for signed integers)."""
    dtype = np.dtype(dtype)
    for attr_type, candidate in _FLOATS:
        if candidate == dtype:
            return attr_type()
    if dtype == np.bool_:
        return IntegerType(1)
    if dtype.kind == "i":
        return IntegerType(dtype.itemsize * 8)
    if dtype.kind == "u":
        return IntegerType(dtype.itemsize * 8, Signedness.UNSIGNED)
    raise ValueError(f"numpy dtype {dtype} has no builtin element type")


def is_float(element_type: Attribute) -> bool:
    return any(isinstance(element_type, attr_type) for attr_type, _ in _FLOATS)


def tensor_type_of(array: np.ndarray) -> TensorType:
    """The ranked tensor type that describes a numpy array."""
    return TensorType(from_numpy_dtype(array.dtype), array.shape)
