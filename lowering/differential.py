"""Differential checking of a pass: run the IR before and after it on the same inputs.

    report = check_pass_preserves_numerics(text, "graph-to-tile", seed=0)
    assert report.ok, report

The module is parsed (or cloned, if given as a `ModuleOp`), its entry function
(`main`, else the only public one) runs on reproducible random inputs with the
shared interpreter (`ziggurat.backends.interpreter.run_function`, which runs
every level that has implementations), the pipeline is applied to a copy, the
result is verified and run on the same inputs, and each output is compared
elementwise with a tolerance that depends on its element type (`tolerance_for`,
overridable with `rtol`/`atol`). Integer and boolean outputs must match exactly.

Failures of the pipeline or of either run are `DiagnosticError`s located at the
op, as from the tools; a mismatch is not an exception but a report that says
which output differs, where and by how much.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from ziggurat.backends.interpreter import find_function, random_inputs, run_function

from ziggurat.context import default_context, multiverse
from ziggurat.diagnostics import Diagnostic, DiagnosticError, parse_source, verify_module
from ziggurat.lowering.pipelines import expand_pipeline

# (rtol, atol) per dtype: a few ulps of accumulated rounding where the two
# programs may sum in different orders.
_TOLERANCES: dict[np.dtype, tuple[float, float]] = {
    np.dtype(np.float64): (1e-10, 1e-12),
    np.dtype(np.float32): (1e-4, 1e-5),
    np.dtype(np.float16): (1e-2, 1e-3),
    np.dtype(ml_dtypes.bfloat16): (2e-2, 1e-2),
    np.dtype(ml_dtypes.float8_e4m3fn): (1.3e-1, 2e-2),
    np.dtype(ml_dtypes.float8_e5m2): (2.6e-1, 4e-2),
}


def tolerance_for(dtype: np.dtype) -> tuple[float, float]:
    """(rtol, atol) for comparing arrays of `dtype`; (0, 0) for integers and booleans."""
    return _TOLERANCES.get(np.dtype(dtype), (0.0, 0.0))


@dataclass
class OutputComparison:
    index: int
    dtype: np.dtype
    shape: tuple[int, ...]
    rtol: float
    atol: float
    max_abs_error: float
    mismatches: int
    first_mismatch: tuple[int, ...] | None = None
    expected: float | None = None
    actual: float | None = None
    shape_or_dtype_differs: str | None = None

    @property
    def ok(self) -> bool:
        return self.shape_or_dtype_differs is None and self.mismatches == 0

    def __str__(self) -> str:
        head = f"output #{self.index} ({self.dtype}, shape {list(self.shape)})"
        if self.shape_or_dtype_differs:
            return f"{head}: {self.shape_or_dtype_differs}"
        if self.ok:
            return f"{head}: ok (max abs error {self.max_abs_error:.3g})"
        return (
            f"{head}: {self.mismatches} elements differ beyond rtol={self.rtol:g}, "
            f"atol={self.atol:g}; max abs error {self.max_abs_error:.3g}; first at "
            f"{list(self.first_mismatch)}: expected {self.expected}, got {self.actual}"
        )


@dataclass
class DifferentialReport:
    pipeline: str
    function: str
    seed: int
    outputs: list[OutputComparison] = field(default_factory=list)
    before: list[np.ndarray] = field(default_factory=list, repr=False)
    after: list[np.ndarray] = field(default_factory=list, repr=False)
    transformed: ModuleOp | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return all(o.ok for o in self.outputs)

    def __str__(self) -> str:
        verdict = "preserves" if self.ok else "CHANGES"
        lines = [f"'{self.pipeline}' {verdict} the numerics of @{self.function} (seed {self.seed})"]
        lines += [f"  {o}" for o in self.outputs]
        return "\n".join(lines)


def compare_outputs(
    before: list[np.ndarray], after: list[np.ndarray], rtol: float | None, atol: float | None
) -> list[OutputComparison]:
    comparisons = []
    for index, (expected, actual) in enumerate(zip(before, after)):
        default_rtol, default_atol = tolerance_for(expected.dtype)
        r = default_rtol if rtol is None else rtol
        a = default_atol if atol is None else atol
        comparison = OutputComparison(index, expected.dtype, expected.shape, r, a, 0.0, 0)
        if expected.shape != actual.shape or expected.dtype != actual.dtype:
            comparison.shape_or_dtype_differs = (
                f"after the pipeline it is {actual.dtype} of shape {list(actual.shape)}"
            )
            comparisons.append(comparison)
            continue
        wide_expected = expected.astype(np.float64)
        wide_actual = actual.astype(np.float64)
        close = np.isclose(wide_actual, wide_expected, rtol=r, atol=a, equal_nan=True)
        errors = np.abs(wide_actual - wide_expected)
        finite = errors[np.isfinite(errors)]
        comparison.max_abs_error = float(finite.max()) if finite.size else 0.0
        comparison.mismatches = int((~close).sum())
        if comparison.mismatches:
            where = tuple(int(i) for i in np.argwhere(~close)[0])
            comparison.first_mismatch = where
            comparison.expected = float(wide_expected[where])
            comparison.actual = float(wide_actual[where])
        comparisons.append(comparison)
    return comparisons


def apply_pipeline(module: ModuleOp, pipeline: str | Sequence[ModulePass]) -> None:
    """Apply a `-p`-style pipeline (e.g. "graph-to-tile,cse", or a named pipeline such
    as "graph-opt") or pass instances to `module` in place."""
    if isinstance(pipeline, str):
        try:
            passes = PassPipeline.parse_spec(multiverse().all_passes, expand_pipeline(pipeline))
        except Exception as error:  # unknown pass or bad options: the caller's input
            raise DiagnosticError(
                Diagnostic("error", f"invalid pipeline '{pipeline}': {error}")
            ) from None
    else:
        passes = PassPipeline(tuple(pipeline))
    passes.apply(default_context(), module)


def pipeline_text(pipeline: str | Sequence[ModulePass]) -> str:
    if isinstance(pipeline, str):
        return pipeline
    return ",".join(str(p.pipeline_pass_spec()) for p in pipeline)


def check_pass_preserves_numerics(
    module: str | ModuleOp,
    pipeline: str | Sequence[ModulePass],
    *,
    seed: int = 0,
    rtol: float | None = None,
    atol: float | None = None,
    function: str | None = None,
) -> DifferentialReport:
    """Run `function` of `module` before and after `pipeline` (a `-p` string or pass
    instances) on the same random inputs and compare the outputs."""
    if isinstance(module, str):
        module = parse_source(default_context(), module, "<differential>")
    else:
        module = module.clone()
    verify_module(module)
    func_op = find_function(module, function)
    name = func_op.sym_name.data
    inputs = random_inputs(func_op, seed)
    before = run_function(module, inputs, name)
    transformed = module.clone()
    apply_pipeline(transformed, pipeline)
    verify_module(transformed)
    after = run_function(transformed, inputs, name)
    report = DifferentialReport(
        pipeline_text(pipeline), name, seed, before=before, after=after, transformed=transformed
    )
    report.outputs = compare_outputs(before, after, rtol, atol)
    return report
