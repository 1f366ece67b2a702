"""The npu interpreter's matrix product: integer operands multiplied in f64 give i32's result exactly."""

from __future__ import annotations

import numpy as np
import pytest

from ziggurat.interpreters.npu_interpreter import _matmul


def i32_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.matmul(a.astype(np.int32), b.astype(np.int32))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16])
def test_narrow_integers_give_the_i32_product(dtype):
    info, rng = np.iinfo(dtype), np.random.default_rng(0)
    a = rng.integers(info.min, info.max, (37, 300), endpoint=True).astype(dtype)
    b = rng.integers(info.min, info.max, (300, 19), endpoint=True).astype(dtype)
    product = _matmul(a, b, np.dtype(np.int32))
    assert product.dtype == np.int32
    np.testing.assert_array_equal(product, i32_matmul(a, b))


def test_an_i16_product_that_overflows_i32_wraps_as_i32_does():
    a = np.full((2, 4096), -32768, np.int16)
    b = np.full((4096, 3), -32768, np.int16)  # each sum is 2**42: 0 modulo 2**32
    wrapped = i32_matmul(a, b)
    np.testing.assert_array_equal(_matmul(a, b, np.dtype(np.int32)), wrapped)
    a[0, 0] = 3  # 2**42 - 2**30 - 3 * 2**15 modulo 2**32, a negative i32
    np.testing.assert_array_equal(_matmul(a, b, np.dtype(np.int32)), i32_matmul(a, b))
    assert _matmul(a, b, np.dtype(np.int32))[0, 0] < 0


def test_i32_operands_and_float_accumulators_keep_their_products():
    rng = np.random.default_rng(1)
    a = rng.integers(-(2**31), 2**31, (5, 7)).astype(np.int32)
    b = rng.integers(-(2**31), 2**31, (7, 4)).astype(np.int32)
    np.testing.assert_array_equal(_matmul(a, b, np.dtype(np.int32)), i32_matmul(a, b))
    x, y = (
        rng.standard_normal((5, 7)).astype(np.float16),
        rng.standard_normal((7, 4)).astype(np.float16),
    )
    product = _matmul(x, y, np.dtype(np.float32))
    assert product.dtype == np.float32
    np.testing.assert_array_equal(product, np.matmul(x.astype(np.float32), y.astype(np.float32)))
