"""Differential checking of a pass or a pipeline: run the IR before and after it, each level on its own
interpreter (`run_at_level`), on the same reproducible random inputs, and compare the outputs under a
per-pass check's tolerance (`ziggurat.numerics.pass_tolerance`).

    report = check_pass_preserves_numerics(text, "graph-to-tile", seed=0)
    assert report.ok, report
    report = check_pipeline_stages(text, "lower-to-npu{machine=davinci}", "davinci")
    assert report.ok, report           # names the first pass that breaks or diverges
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp, TensorType
from xdsl.passes import ModulePass, PassPipeline

from ziggurat import numerics
from ziggurat.context import default_context, multiverse
from ziggurat.diagnostics import Diagnostic, DiagnosticError
from ziggurat.dialects.loop import is_output_argument
from ziggurat.interpreters.interpreter import (
    argument_names,
    find_function,
    random_inputs,
    run_function,
)
from ziggurat.interpreters.npu_interpreter import is_npu_program, run_npu
from ziggurat.lowering.pipelines import expand_pipeline
from ziggurat.parsing import parse_source
from ziggurat.transforms.tile.fit import DoesNotFit, FittingPipeline, apply_passes
from ziggurat.verifier import verify_module


@dataclass
class DifferentialReport:
    pipeline: str
    function: str
    seed: int
    outputs: list[numerics.OutputCheck] = field(default_factory=list)
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
    before: list[np.ndarray],
    after: list[np.ndarray],
    rtol: float | None,
    atol: float | None,
    *,
    scale_atol: bool = False,
) -> list[numerics.OutputCheck]:
    """Compare each output (`ziggurat.numerics.compare`, dtypes must agree) within `pass_tolerance`
    (per element scaled to the output's magnitude with `scale_atol`, for a lowered program). A given
    `rtol` or `atol` replaces the per-element one and the whole tolerance is numpy's isclose rule with it."""
    comparisons = []
    for index, (expected, actual) in enumerate(zip(before, after)):
        tolerance = numerics.pass_tolerance(expected, scaled=scale_atol)
        if rtol is not None or atol is not None:
            default_rtol, default_atol = tolerance.elementwise or (0.0, 0.0)
            r = default_rtol if rtol is None else rtol
            a = default_atol if atol is None else atol
            tolerance = numerics.Tolerance(r, a, (r, a))
        comparisons.append(
            numerics.compare(actual, expected, tolerance, name=f"output #{index}", same_dtype=True)
        )
    return comparisons


def build_passes(pipeline: str | Sequence[ModulePass]) -> tuple[ModulePass, ...]:
    """The passes of a `-p`-style pipeline (named pipelines expanded), or the given instances."""
    if not isinstance(pipeline, str):
        return tuple(pipeline)
    try:
        return PassPipeline.parse_spec(multiverse().all_passes, expand_pipeline(pipeline)).passes
    except DiagnosticError:
        raise
    except Exception as error:  # unknown pass or bad options: the caller's input
        raise DiagnosticError(
            Diagnostic("error", f"invalid pipeline '{pipeline}': {error}")
        ) from None


def apply_pipeline(module: ModuleOp, pipeline: str | Sequence[ModulePass]) -> None:
    """Apply a `-p`-style pipeline (e.g. "graph-to-tile,cse", or a named pipeline such
    as "graph-opt") or pass instances to `module` in place."""
    FittingPipeline(build_passes(pipeline)).apply(default_context(), module)


def pipeline_text(pipeline: str | Sequence[ModulePass]) -> str:
    if isinstance(pipeline, str):
        return pipeline
    return ",".join(str(p.pipeline_pass_spec()) for p in pipeline)


# --------------------------------------------------------------------------- #
# Levels: which interpreter runs a module, and its inputs and outputs
# --------------------------------------------------------------------------- #


def input_names(function: func.FuncOp) -> list[str]:
    """The arguments that take inputs: all but the `%resultN` out-params."""
    types = function.function_type.inputs.data
    return [
        name for name, t in zip(argument_names(function), types) if not is_output_argument(name, t)
    ]


def level_of(module: ModuleOp, function: func.FuncOp) -> str:
    """ "npu" (instructions for `run_npu`), "loop" (memrefs), "tensor" or "graph"."""
    if is_npu_program(module):
        return "npu"
    if any(isinstance(t, MemRefType) for t in function.function_type.inputs.data):
        return "loop"
    if any(op.name.startswith("graph.") for op in function.walk()):
        return "graph"
    return "tensor"


def level_inputs(function: func.FuncOp, seed: int) -> list[np.ndarray]:
    """`random_inputs` for the input arguments, the same arrays whatever the level: a memref
    argument draws as the tensor of its shape would."""
    names = argument_names(function)
    tensor_types = [
        TensorType(t.get_element_type(), t.get_shape()) if isinstance(t, MemRefType) else t
        for name, t in zip(names, function.function_type.inputs.data)
        if not is_output_argument(name, t)
    ]
    signature = func.FuncOp.external(function.sym_name.data, tensor_types, [])
    signature.location = (
        function.location
    )  # so that an argument it cannot draw is reported at the function
    return random_inputs(signature, seed)


def run_at_level(
    module: ModuleOp,
    inputs: Sequence[np.ndarray],
    function: str | None = None,
    machine: str | None = None,
) -> list[np.ndarray]:
    """Run `function` of `module` on the interpreter of its level; the results, or at the loop
    and npu levels the final contents of the `%resultN` arguments."""
    func_op = find_function(module, function)
    name = func_op.sym_name.data
    level = level_of(module, func_op)
    if level == "npu":
        given = dict(zip(input_names(func_op), inputs))
        return run_npu(module, machine, given, name).outputs
    if level == "loop":
        from ziggurat.interpreters.loop_interpreter import run_loop_function

        results = run_loop_function(module, list(inputs), name)
        names = argument_names(func_op)
        return [
            results[n]
            for n, t in zip(names, func_op.function_type.inputs.data)
            if is_output_argument(n, t)
        ]
    return run_function(module, inputs, name)


NPU_FINISHING_PASSES = ("npu-plan-memory", "npu-insert-sync")
"""Without these, npu code cannot run: its local buffers have no address, or its pipes no flags."""


def why_not_runnable(level: str, passes_to_come: Sequence[str]) -> str | None:
    """Why IR of `level` cannot run yet, or None: npu code runs once no pass of
    NPU_FINISHING_PASSES is still to come in the pipeline."""
    missing = [name for name in NPU_FINISHING_PASSES if name in passes_to_come]
    if level == "npu" and missing:
        return f"npu code runs after {' and '.join(missing)}"
    return None


def check_pass_preserves_numerics(
    module: str | ModuleOp,
    pipeline: str | Sequence[ModulePass],
    *,
    seed: int = 0,
    rtol: float | None = None,
    atol: float | None = None,
    function: str | None = None,
    machine: str | None = None,
) -> DifferentialReport:
    """Run `function` of `module` before and after `pipeline` (a `-p` string or pass
    instances) on the same random inputs, each on the interpreter of its level (npu code
    on `machine`), and compare the outputs.

    The inputs are the arguments that are not `%resultN` (a lowered function's outputs), so
    one set of inputs serves every level. Failures of the pipeline or of either run are
    `DiagnosticError`s at the op, as from the tools; a mismatch is a report that says which
    output differs, where and by how much. `rtol`/`atol` replace the per-pass tolerance with
    numpy's element-wise isclose rule; integer and boolean outputs must match exactly.
    """
    module = _load(module)
    func_op = find_function(module, function)
    name = func_op.sym_name.data
    inputs = level_inputs(func_op, seed)
    before = run_at_level(module, inputs, name, machine)
    transformed = module.clone()
    apply_pipeline(transformed, pipeline)
    verify_module(transformed)
    after = run_at_level(transformed, inputs, name, machine)
    report = DifferentialReport(
        pipeline_text(pipeline), name, seed, before=before, after=after, transformed=transformed
    )
    lowered = level_of(transformed, find_function(transformed, name)) != level_of(module, func_op)
    report.outputs = compare_outputs(before, after, rtol, atol, scale_atol=lowered)
    return report


def _load(module: str | ModuleOp) -> ModuleOp:
    if isinstance(module, str):
        module = parse_source(default_context(), module, "<differential>")
    else:
        module = module.clone()
    verify_module(module)
    return module


# --------------------------------------------------------------------------- #
# Every stage of a pipeline
# --------------------------------------------------------------------------- #


@dataclass
class StageReport:
    """The IR after one pass: its level, and how it compares with the reference."""

    pass_name: str
    level: str
    seconds: float = 0.0
    outputs: list[numerics.OutputCheck] = field(default_factory=list)
    not_run: str | None = None
    """Why this stage's IR was not run (it cannot run before a later pass)."""
    error: str | None = None
    """The pass, the verifier or the run failed: its diagnostic."""
    raised: DiagnosticError | None = field(default=None, repr=False, compare=False)
    """The error behind `error`, when it was a diagnostic."""

    @property
    def ok(self) -> bool:
        return self.error is None and all(o.ok for o in self.outputs)

    def __str__(self) -> str:
        head = f"{self.pass_name} ({self.level}, {self.seconds:.1f} s)"
        if self.error is not None:
            return f"{head}: FAILED\n      " + self.error.replace("\n", "\n      ")
        if self.not_run is not None:
            return f"{head}: not run ({self.not_run})"
        return "\n".join(
            [f"{head}: {'ok' if self.ok else 'DIVERGES'}", *(f"      {o}" for o in self.outputs)]
        )


@dataclass
class PipelineReport:
    pipeline: str
    machine: str | None
    function: str
    seed: int
    stages: list[StageReport] = field(default_factory=list)
    expected: list[np.ndarray] = field(default_factory=list, repr=False)
    module: ModuleOp | None = field(default=None, repr=False)
    """The IR after the last pass that ran."""

    @property
    def first_failure(self) -> StageReport | None:
        """The first stage that failed or diverged."""
        return next((stage for stage in self.stages if not stage.ok), None)

    @property
    def ok(self) -> bool:
        """Every stage that ran agrees with the reference, and the last one ran."""
        return self.first_failure is None and bool(self.stages) and self.stages[-1].not_run is None

    def __str__(self) -> str:
        failure = self.first_failure
        if failure is not None:
            verdict = f"first fails at '{failure.pass_name}'"
        elif self.ok:
            verdict = "every stage agrees"
        else:
            verdict = "the final IR was not run"
        machine = f" on {self.machine}" if self.machine else ""
        lines = [f"'{self.pipeline}'{machine}, @{self.function} (seed {self.seed}): {verdict}"]
        lines += [f"  {stage}" for stage in self.stages]
        return "\n".join(lines)


def check_pipeline_stages(
    module: str | ModuleOp,
    pipeline: str | Sequence[ModulePass],
    machine: str | None = None,
    *,
    seed: int = 0,
    rtol: float | None = None,
    atol: float | None = None,
    function: str | None = None,
) -> PipelineReport:
    """Apply the passes of `pipeline` one at a time to (a copy of) `module`, run the IR after
    each on the interpreter of its level (npu code on `machine`) and compare it with the
    results of the original; stop at the first pass, verification or run that fails.

    npu code runs once its memory is planned and its flags inserted. Lowered stages sum and
    round in another order than the graph interpreter (f16 intermediates, tiled reductions),
    so their per-element tolerance grows with the output's magnitude
    (`ziggurat.numerics.scaled_element_tolerance`).
    """
    module = _load(module)
    func_op = find_function(module, function)
    name = func_op.sym_name.data
    inputs = level_inputs(func_op, seed)
    expected = run_at_level(module, inputs, name, machine)
    report = PipelineReport(
        pipeline_text(pipeline), machine, name, seed, expected=expected, module=module
    )
    ctx = default_context()
    passes = build_passes(pipeline)

    def run(index: int, one_pass: ModulePass) -> None:
        del report.stages[
            index:
        ]  # a retry with smaller tiles (apply_passes) redoes the stages from tile-and-fuse
        to_come = [p.name for p in passes[index + 1 :]]
        stage = _run_stage(
            ctx, module, one_pass, to_come, inputs, name, machine, expected, rtol, atol
        )
        report.stages.append(stage)
        if isinstance(stage.raised, DoesNotFit):
            raise stage.raised
        if stage.error is not None:
            raise _StageFailed

    try:
        apply_passes(ctx, module, passes, run)
    except _StageFailed:
        pass
    except DiagnosticError as error:  # the smallest tile does not fit either
        report.stages[-1].error = error.format()
    return report


class _StageFailed(Exception):
    """Stops `check_pipeline_stages` at a stage that failed (its report says how)."""


def _run_stage(
    ctx, module, one_pass, to_come, inputs, name, machine, expected, rtol, atol
) -> StageReport:
    stage = StageReport(str(one_pass.pipeline_pass_spec()), "?")
    start = time.perf_counter()
    try:
        one_pass.apply(ctx, module)
        verify_module(module)
        stage.level = level_of(module, find_function(module, name))
        stage.not_run = why_not_runnable(stage.level, to_come)
        if stage.not_run is None:
            actual = run_at_level(module, inputs, name, machine)
            stage.outputs = compare_outputs(expected, actual, rtol, atol, scale_atol=True)
    except DiagnosticError as error:
        stage.error = error.format()
        stage.raised = error
    except Exception as error:  # a pass's bug: where it happened in ziggurat, for its owner
        frames = traceback.extract_tb(error.__traceback__)
        frame = next((f for f in reversed(frames) if "site-packages" not in f.filename), frames[-1])
        stage.error = (
            f"internal error: {type(error).__name__}: {error} ({frame.filename}:{frame.lineno})"
        )
    stage.seconds = time.perf_counter() - start
    return stage
