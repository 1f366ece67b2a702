"""Category `pipeline`: random graph-level pass pipelines over valid IR, checked on the interpreter.

The inputs are the chunks of the graph-level seed files that verify and
whose every function runs on random inputs (`runnable_chunks`). A case draws
a chunk and a `-p` list of one to five passes among the graph passes and
xDSL's `cse`, `dce` and `canonicalize`, with random option values (odd ones
included: 0, 1, negative). `ziggurat-opt` must succeed or report a
diagnostic; when it succeeds, its printed output must parse, verify, and
compute what the input computed, function by function, on the same random
inputs and on inputs with NaN, infinities and signed zeros. Comparing after printing and parsing again is deliberate: a value
that survives the passes but not the text (NaN, -0.0) is a wrong answer for
`ziggurat-opt | ziggurat-run`.
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from hypothesis import strategies as st

from .outcome import Outcome, run_in_process, time_limit
from .seeds import SPLIT_MARKER, ir_seeds

GRAPH_SEED_PREFIXES = ("test/graph/", "test/run/", "examples/graph/")
PASSES = ("graph-canonicalize", "graph-fold-constants", "cse", "dce", "canonicalize")
OPTIONS = {
    "graph-canonicalize": ("max-elements",),
    "graph-fold-constants": ("max-elements",),
}
OPTION_VALUES = ("0", "1", "3", "4", "16", "1048576", "-1")


@dataclass
class PipelineCase:
    seed: str
    chunk_line: int
    text: str
    pipeline: str

    def describe(self) -> str:
        return f"{self.seed} (chunk at line {self.chunk_line + 1}): -p '{self.pipeline}'"


@functools.cache
def runnable_chunks() -> tuple[tuple[str, int, str], ...]:
    """(seed, line offset, text) of each graph-level chunk that verifies and runs."""
    from ziggurat.tools.ziggurat_opt import split_input

    chunks = []
    for seed, text in ir_seeds():
        if not seed.startswith(GRAPH_SEED_PREFIXES):
            continue
        parts = split_input(text) if SPLIT_MARKER in text else [(text, 0)]
        for chunk, offset in parts:
            if _results(chunk, f"{seed}:{offset}") is not None:
                chunks.append((seed, offset, chunk))
    return tuple(chunks)


def _results(text: str, filename: str) -> dict[str, list[np.ndarray]] | None:
    """Every function's results on seeded random inputs; None if the text fails to parse, verify or run."""
    from ziggurat.backends.interpreter import random_inputs, run_function
    from ziggurat.context import default_context
    from ziggurat.diagnostics import DiagnosticError, collect_diagnostics, parse_source, verify_module
    from xdsl.dialects import func

    try:
        # NaN and infinities from log, sqrt, overflow are values to compare, not problems.
        with collect_diagnostics(), time_limit(30), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            module = parse_source(default_context(), text, filename)
            verify_module(module)
            functions = [op for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks]
            if not functions:
                return None
            return {
                f"@{f.sym_name.data} on {kind} inputs": run_function(module, inputs, f.sym_name.data)
                for f in functions
                for kind, inputs in (("random", random_inputs(f, seed=1)), ("special", special_inputs(f)))
            }
    except DiagnosticError:
        return None


SPECIAL_VALUES = (math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0)


def special_inputs(function) -> list[np.ndarray]:
    """Random inputs with an eighth of each float array replaced by NaN, infinities, signed zeros and ones:
    the values where algebraic simplifications (x * 0 -> 0, x + 0 -> x) go wrong."""
    from ziggurat.backends.interpreter import random_inputs

    rng = np.random.default_rng(2)
    inputs = random_inputs(function, seed=2)
    for array in inputs:
        if array.dtype.kind == "f" or array.dtype.name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
            chosen = rng.random(array.shape) < 0.125
            array[chosen] = rng.choice(SPECIAL_VALUES, size=int(chosen.sum())).astype(array.dtype)
    return inputs


@st.composite
def _pass_spec(draw) -> str:
    name = draw(st.sampled_from(PASSES))
    options = [
        f"{option}={draw(st.sampled_from(OPTION_VALUES))}"
        for option in OPTIONS.get(name, ())
        if draw(st.booleans())
    ]
    return name + ("{" + " ".join(options) + "}" if options else "")


@st.composite
def pipeline_cases(draw) -> PipelineCase:
    seed, offset, text = draw(st.sampled_from(runnable_chunks()))
    passes = draw(st.lists(_pass_spec(), min_size=1, max_size=5))
    return PipelineCase(seed, offset, text, ",".join(passes))


def tolerance(dtype: np.dtype) -> tuple[float, float]:
    """(rtol, atol) between two evaluation orders of one computation in `dtype`."""
    import ml_dtypes

    if dtype.kind in "biu":
        return 0.0, 0.0
    if dtype in (np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(ml_dtypes.float8_e5m2)):
        return 0.25, 0.0
    if dtype.itemsize <= 2:
        return 1e-2, 1e-3
    return 1e-4, 1e-5


def mismatch(expected: np.ndarray, actual: np.ndarray, signed_zeros: bool = False) -> str | None:
    """How `actual` differs from `expected`, or None if it is the same up to `tolerance`
    (and, with `signed_zeros`, has the same sign wherever both are zero: 1 / x tells them apart)."""
    if expected.shape != actual.shape or expected.dtype != actual.dtype:
        return f"{actual.dtype}{list(actual.shape)} instead of {expected.dtype}{list(expected.shape)}"
    rtol, atol = tolerance(expected.dtype)
    wide_expected, wide_actual = expected.astype(np.float64), actual.astype(np.float64)
    if not np.array_equal(np.isnan(wide_expected), np.isnan(wide_actual)):
        return "NaN at other positions"
    if not np.allclose(wide_actual, wide_expected, rtol=rtol, atol=atol, equal_nan=True):
        finite = np.isfinite(wide_expected) & np.isfinite(wide_actual)
        worst = np.max(np.abs(wide_actual - wide_expected)[finite], initial=0.0)
        return f"values differ (by up to {worst:g} where both are finite)"
    zeros = (wide_expected == 0) & (wide_actual == 0)
    if signed_zeros and not np.array_equal(np.signbit(wide_expected[zeros]), np.signbit(wide_actual[zeros])):
        return "a zero has the other sign"
    return None


def check_pipeline_case(case: PipelineCase, workdir: Path) -> dict[str, Outcome]:
    from ziggurat.tools import ziggurat_opt

    path = workdir / "input.mlir"
    path.write_text(case.text)
    # A bad option value is a command-line error: it has no place in the file to point at.
    outcome = run_in_process(ziggurat_opt.main, [str(path), "-p", case.pipeline], location=None)
    if outcome.kind == "success":
        expected = _results(case.text, "before.mlir")
        actual = _results(outcome.stdout, "after.mlir")
        if expected is not None:
            if actual is None:
                outcome.kind, outcome.detail = "mismatch", "the output does not parse, verify or run"
            else:
                for name, results in expected.items():
                    if name not in actual:
                        continue  # dce may erase a private function
                    for index, (before, after) in enumerate(zip(results, actual[name])):
                        if (difference := mismatch(before, after, signed_zeros=True)) is not None:
                            outcome.kind = "mismatch"
                            outcome.detail = f"{name}, result #{index}: {difference}"
    return {"ziggurat-opt": outcome}
