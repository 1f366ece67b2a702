"""When a result is right: one tolerance rule (`Tolerance`, `tolerance_for`, `pass_tolerance`), one
comparison (`compare`), and the tools' `.npz` inputs (`load_inputs`); docs/testing.md ("How results
are compared") derives each constant.

    check = compare(ours, reference, tolerance_for(reference.dtype, computed_in))
    assert check.ok, check
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import ml_dtypes
import numpy as np
from xdsl.ir import Attribute

from ziggurat.npz import candidate_keys, npz_error, read_npz, restore_element_type

F32_RTOL = 2.0**-13
"""f32 (and f64, in its own ulps): 2^11 units of roundoff; docs/testing.md derives it."""

REDUCED_PRECISION_RTOL: dict[np.dtype, float] = {
    np.dtype(np.float16): 1e-2,
    np.dtype(ml_dtypes.bfloat16): 3e-2,
}
"""The acceptance bounds of a whole network computed in f16 or bf16 (f32 accumulation)."""

NARROW_FLOAT_EPSILONS = 2
"""Floats narrower than 16 bits (fp8): two epsilons, the output's rounding and its inputs'."""

ELEMENT_TOLERANCES: dict[np.dtype, tuple[float, float]] = {
    np.dtype(np.float64): (1e-10, 1e-12),
    np.dtype(np.float32): (1e-4, 1e-5),
    np.dtype(np.float16): (1e-2, 1e-3),
    np.dtype(ml_dtypes.bfloat16): (2e-2, 1e-2),
    np.dtype(ml_dtypes.float8_e4m3fn): (1.3e-1, 2e-2),
    np.dtype(ml_dtypes.float8_e5m2): (2.6e-1, 4e-2),
}
"""(rtol, atol) per element for a per-pass check: a few ulps of accumulated rounding where the
two programs sum in different orders."""


def float_info(dtype: np.dtype) -> ml_dtypes.finfo | None:
    """The float type's limits (ml_dtypes' bf16 and fp8 too), or None for integers and booleans."""
    dtype = np.dtype(dtype)
    if dtype.kind in "biuOSUM":
        return None
    try:
        return ml_dtypes.finfo(dtype)
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True)
class Tolerance:
    """How far an output may be from its reference: max |ours - ref| <= rtol * max |ref| + atol and,
    with `elementwise` (rtol, atol), every element within atol + rtol * |ref| too (numpy's isclose)."""

    rtol: float
    atol: float = 0.0
    elementwise: tuple[float, float] | None = None

    @property
    def exact(self) -> bool:
        return self.rtol == 0 and self.atol == 0

    def bound(self, magnitude: float) -> float:
        """The largest error allowed for an output whose largest |ref| is `magnitude`."""
        return self.atol + self.rtol * magnitude

    def __str__(self) -> str:
        if self.exact:
            return "exact"
        text = f"{self.rtol:.3g} x max|ref|" + (f" + {self.atol:.3g}" if self.atol else "")
        if self.elementwise is not None:
            text += f"; each element within {self.elementwise[1]:.3g} + {self.elementwise[0]:.3g} x |ref|"
        return text


def _rtol(info: ml_dtypes.finfo, dtype: np.dtype) -> float:
    if dtype in REDUCED_PRECISION_RTOL:
        return REDUCED_PRECISION_RTOL[dtype]
    if info.bits >= 32:
        # 2^-13 is 2^11 units of roundoff (2^-24) of f32; the same count of f64's.
        return F32_RTOL * float(info.eps) / float(np.finfo(np.float32).eps)
    return NARROW_FLOAT_EPSILONS * float(info.eps)


def tolerance_for(dtype: np.dtype, computed_in: np.dtype | None = None) -> Tolerance:
    """The tolerance of an output of element type `dtype` computed in `computed_in` (a float type
    coarser than `dtype` sets the precision; a finer one does not): exact for integers and booleans.

    `rtol` is 1% for f16 and 3% for bf16 (the acceptance bounds for whole networks) and 2^-13
    for f32 (summation order through a deep network); `atol` is the type's smallest normal number.
    """
    dtype = np.dtype(dtype)
    info = float_info(dtype)
    if info is None:
        return Tolerance(0.0)
    precision = dtype
    if computed_in is not None:
        coarser = float_info(computed_in)
        if coarser is not None and coarser.eps > info.eps:
            precision, info = np.dtype(computed_in), coarser
    # Below the smallest normal number a type holds fewer bits, and machines may flush it to zero.
    return Tolerance(_rtol(info, precision), float(info.smallest_normal))


def element_tolerance(dtype: np.dtype) -> tuple[float, float]:
    """(rtol, atol) per element of a per-pass check; (0, 0) for integers and booleans."""
    return ELEMENT_TOLERANCES.get(np.dtype(dtype), (0.0, 0.0))


def scaled_element_tolerance(
    expected: np.ndarray, computed_in: np.dtype | None = None
) -> tuple[float, float]:
    """`element_tolerance` of the output's type (or of `computed_in`), its atol raised to rtol times the
    output's root mean square: a tiled reduction rounds its partial sums, and an f16 vector unit each
    intermediate, so an element that cancels to near zero is off by the size of its terms."""
    rtol, atol = element_tolerance(expected.dtype if computed_in is None else computed_in)
    if rtol == 0.0 or expected.size == 0:
        return rtol, atol
    wide = expected.astype(np.float64)
    finite = wide[np.isfinite(wide)]
    rms = float(np.sqrt(np.mean(np.square(finite)))) if finite.size else 0.0
    return rtol, max(atol, rtol * rms)


def pass_tolerance(
    expected: np.ndarray, computed_in: np.dtype | None = None, *, scaled: bool = True
) -> Tolerance:
    """A per-pass check's tolerance: `tolerance_for`'s bound and, per element, `scaled_element_tolerance`
    (a lowered program) or, without `scaled`, the type's `element_tolerance`."""
    rule = tolerance_for(expected.dtype, computed_in)
    if rule.exact:
        return rule
    if not scaled:
        elementwise = element_tolerance(expected.dtype if computed_in is None else computed_in)
        return Tolerance(rule.rtol, rule.atol, elementwise)
    return Tolerance(rule.rtol, rule.atol, scaled_element_tolerance(expected, computed_in))


@dataclass(frozen=True)
class OutputCheck:
    """One output against its reference: its largest error, the bound it must stay within, and why not."""

    name: str
    dtype: np.dtype
    shape: tuple[int, ...]
    tolerance: Tolerance
    max_abs: float
    magnitude: float
    """max |ref| over its finite elements."""
    bound: float
    ok: bool
    mismatches: int = 0
    """Elements beyond the tolerance."""
    where: tuple[int, ...] | None = None
    """The element that misses the tolerance by most."""
    expected: float | None = None
    actual: float | None = None
    differs: str | None = None
    """Our dtype and shape, when they are not the reference's."""

    @property
    def max_abs_error(self) -> float:
        return self.max_abs

    @property
    def max_rel(self) -> float:
        """The largest error relative to the output's magnitude."""
        if self.max_abs == 0:
            return 0.0
        return self.max_abs / self.magnitude if self.magnitude > 0 else float("inf")

    def rule(self) -> str:
        """How the bound was reached, e.g. "0.03 x max|ref| 8.4"; the absolute floor where it counts."""
        tolerance = self.tolerance
        if tolerance.exact:
            return "exact"
        text = f"{tolerance.rtol:.3g} x max|ref| {self.magnitude:.3g}"
        if tolerance.atol * 1000 >= self.bound:
            text += f" + {tolerance.atol:.3g}"
        if tolerance.elementwise is not None:
            text += f"; each element within {tolerance.elementwise[1]:.3g} + {tolerance.elementwise[0]:.3g} x |ref|"
        return text

    def __str__(self) -> str:
        head = f"{self.name}: {self.dtype}{list(self.shape)}"
        if self.differs is not None:
            return f"{head}  FAIL: ours is {self.differs}"
        text = f"{head}  max abs error {self.max_abs:.3g}  bound {self.bound:.3g} ({self.rule()})"
        if self.ok:
            return f"{text}  ok"
        return (
            f"{text}  FAIL: {self.mismatches} element(s) beyond it, worst at {list(self.where)}: "
            f"expected {self.expected:.6g}, got {self.actual:.6g}"
        )


def compare(
    actual: np.ndarray,
    expected: np.ndarray,
    tolerance: Tolerance | None = None,
    *,
    name: str = "output",
    computed_in: np.dtype | None = None,
    same_dtype: bool = False,
) -> OutputCheck:
    """`actual` against `expected` within `tolerance` (default: `tolerance_for` the reference's type
    computed in `computed_in`). NaN matches NaN and an infinity the same infinity; with `same_dtype`
    the element types must agree too."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    tolerance = tolerance_for(expected.dtype, computed_in) if tolerance is None else tolerance
    shape = tuple(expected.shape)
    if actual.shape != expected.shape or (same_dtype and actual.dtype != expected.dtype):
        inf, ours = float("inf"), f"{actual.dtype} of shape {list(actual.shape)}"
        return OutputCheck(
            name, expected.dtype, shape, tolerance, inf, inf, 0.0, False, differs=ours
        )
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    exact_ints = float_info(expected.dtype) is None and float_info(actual.dtype) is None
    if exact_ints:
        differ = actual != expected  # in the integer type: float64 rounds int64 beyond 2^53
    else:
        differ = ~((a == e) | (np.isnan(a) & np.isnan(e)))
    with np.errstate(invalid="ignore", over="ignore"):
        errors = np.where(differ, np.abs(a - e), 0.0)
    errors = np.where(np.isnan(errors), np.inf, errors)  # NaN against a number, or inf against -inf
    finite = np.abs(e[np.isfinite(e)])
    magnitude = float(finite.max()) if finite.size else 0.0
    bound = 0.0 if exact_ints else tolerance.bound(magnitude)
    beyond = differ if exact_ints or tolerance.exact else errors > bound
    if tolerance.elementwise is not None and not exact_ints:
        element_rtol, element_atol = tolerance.elementwise
        with np.errstate(invalid="ignore", over="ignore"):
            beyond = beyond | (errors > element_atol + element_rtol * np.abs(np.nan_to_num(e)))
    max_abs = float(errors.max()) if errors.size else 0.0
    mismatches = int(beyond.sum())
    if not mismatches:
        return OutputCheck(name, expected.dtype, shape, tolerance, max_abs, magnitude, bound, True)
    where = np.unravel_index(int(np.argmax(np.where(beyond, errors, -1.0))), expected.shape)
    where = tuple(int(i) for i in where)
    return OutputCheck(
        name,
        expected.dtype,
        shape,
        tolerance,
        max_abs,
        magnitude,
        bound,
        False,
        mismatches,
        where,
        float(e[where]),
        float(a[where]),
    )


def load_inputs(
    path: Path,
    names: Sequence[str],
    types: Sequence[Attribute],
    *,
    function: str | None = None,
    every_argument: bool = True,
) -> dict[str, np.ndarray]:
    """The arrays of the .npz at `path` by name, in the order of `names`, each found under its name,
    argN or arr_N and viewed as its type (`restore_element_type`). Messages name the arguments of
    `@function` when given, else a model's inputs; without `every_argument` some may be left out."""
    arrays = read_npz(path)
    ordered: dict[str, np.ndarray] = {}
    used: set[str] = set()
    for index, (name, value_type) in enumerate(zip(names, types, strict=True)):
        candidates = candidate_keys(name, index)
        found = [key for key in candidates if key in arrays]
        has = f"the archive has {', '.join(sorted(arrays)) or 'no arrays'}"
        if not found and not every_argument:
            continue
        if function is None and len(found) != 1:
            problem = "no array" if not found else f"several arrays ({', '.join(found)})"
            looked = f"'{name}', arg{index}, arr_{index}"
            raise npz_error(path, f"{problem} for input '{name}' (looked for {looked}; {has})")
        if not found:
            raise npz_error(
                path,
                f"no array for argument #{index} of @{function} (looked for {', '.join(candidates)}; {has})",
            )
        if len(found) > 1:
            raise npz_error(
                path, f"argument #{index} of @{function} matches several arrays: {', '.join(found)}"
            )
        used.add(found[0])
        ordered[name] = restore_element_type(arrays[found[0]], value_type)
    if unused := sorted(set(arrays) - used):
        listed = ", ".join(names) or "none"
        if function is None:
            message = f"the model has no input called {', '.join(unused)} (inputs: {listed})"
        else:
            message = (
                f"no argument of @{function} is called {', '.join(unused)} (arguments: {listed})"
            )
        raise npz_error(path, message)
    return ordered
