"""Reading and making tensor constants.

A tensor constant is a constant-like op (`graph.constant`, `arith.constant`)
whose `value` is a dense tensor attribute.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.traits import ConstantLike

from ziggurat.dtypes import to_numpy_dtype


def dense_attr_of(value: SSAValue) -> DenseIntOrFPElementsAttr | None:
    """The dense tensor attribute `value` is defined by, or None if it is not a tensor constant."""
    owner = value.owner
    if not isinstance(owner, Operation) or not owner.has_trait(ConstantLike):
        return None
    attr = owner.properties.get("value")
    return attr if isinstance(attr, DenseIntOrFPElementsAttr) else None


def element_count(value_type: Attribute) -> int:
    """The number of elements of a statically shaped tensor type (1 for anything else)."""
    if isinstance(value_type, TensorType):
        return int(np.prod(value_type.get_shape(), dtype=np.int64))
    return 1


def is_array_type(value_type: Attribute) -> bool:
    """Whether a value of `value_type` is a tensor that a numpy array can hold."""
    if not isinstance(value_type, TensorType):
        return False
    try:
        to_numpy_dtype(value_type.get_element_type())
    except ValueError:
        return False
    return True


def constant_array(value: SSAValue) -> np.ndarray | None:
    """The contents of a tensor constant as a numpy array of its element type, or None
    (also for an element type numpy cannot hold)."""
    if (attr := dense_attr_of(value)) is None:
        return None
    try:
        return elements_to_array(attr)
    except ValueError:
        return None


def elements_to_array(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    """The elements of a dense tensor attribute as a numpy array of its shape (a splat broadcast);
    a ValueError for an element type numpy cannot hold."""
    value_type = attr.type
    dtype = to_numpy_dtype(value_type.get_element_type())
    data = np.frombuffer(attr.data.data, dtype=dtype)
    shape = value_type.get_shape()
    if data.size == 1 and int(np.prod(shape)) != 1:
        return np.broadcast_to(data.reshape(()), shape).copy()
    return data.reshape(shape).copy()


def splat_value(value: SSAValue) -> np.ndarray | None:
    """The one element (a 0-d array) of a tensor constant whose elements are all equal, else None.

    Equal means bitwise equal: a constant mixing +0.0 and -0.0 is not a splat.
    """
    if (attr := dense_attr_of(value)) is None:
        return None
    try:
        dtype = to_numpy_dtype(attr.type.get_element_type())
    except ValueError:
        return None
    data = np.frombuffer(attr.data.data, dtype=dtype)
    if data.size == 0 or not _all_bitwise_equal(data):
        return None
    return data[0:1].reshape(())


def dense_elements(array: np.ndarray, result_type: TensorType) -> DenseIntOrFPElementsAttr:
    """A dense attribute of type `result_type` holding `array` (already of the matching dtype and shape).

    An array whose elements are all bitwise equal is stored as a splat (one element).
    """
    data = np.ascontiguousarray(array).reshape(-1)
    if data.size > 1 and _all_bitwise_equal(data):
        data = data[:1]
    return DenseIntOrFPElementsAttr(result_type, BytesAttr(data.tobytes()))


def splat_elements(scalar: float, result_type: TensorType) -> DenseIntOrFPElementsAttr:
    """A dense attribute of type `result_type` whose elements all equal `scalar`, stored as one element."""
    element = np.asarray(scalar).astype(to_numpy_dtype(result_type.get_element_type()))
    return DenseIntOrFPElementsAttr(result_type, BytesAttr(element.tobytes()))


_WORDS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _all_bitwise_equal(data: np.ndarray) -> bool:
    word = _WORDS.get(data.dtype.itemsize)
    if word is None:  # complex128 and wider: byte by byte
        raw = data.view(np.uint8).reshape(data.size, data.dtype.itemsize)
        return bool((raw == raw[0]).all())
    # an element as one unsigned word: a compare per element, not per byte (weights: megabytes)
    raw = data.view(word)
    return bool(raw[-1] == raw[0] and (raw == raw[0]).all())
