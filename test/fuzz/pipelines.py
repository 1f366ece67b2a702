"""Category `pipeline`: random pass pipelines over valid IR, checked on the interpreters.

The passes are discovered, not listed: every pass of ziggurat's universe that
imports (a pass still being written may not yet), with its options as
`ziggurat-opt --list-passes` shows them, xDSL's `cse`, `dce` and
`canonicalize`, and the named pipelines (`graph-opt`, `lower-to-npu`, ...).
Option values are drawn by the option's type, odd ones included (0, 1,
negative, unknown names); required options are always given.

The inputs are the chunks of the seed files (graph, tensor and loop level)
that verify and whose every public function runs on random inputs
(`runnable_chunks`). A case draws a chunk and a `-p` list of one to five
passes. `ziggurat-opt` must succeed or report a diagnostic; when it
succeeds, its printed output must parse, verify, and compute what the input
computed, function by function, each level on its own interpreter
(`ziggurat.testing.differential.run_at_level`), on the same random inputs
and, when the level did not change, on inputs with NaN, infinities and
signed zeros. Comparing after printing and parsing again is deliberate: a
value that survives the passes but not the text (NaN, -0.0) is a wrong
answer for `ziggurat-opt | ziggurat-run`. Output that cannot run yet (npu
code that the pipeline did not take through `npu-plan-memory` and
`npu-insert-sync` after its last `loop-to-npu`) is only parsed and verified, and
so is output whose run would interpret more than `OPS_BUDGET` ops (tiles of 1
over a large loop nest: correct, but minutes on the interpreter). After
`graph-convert-float` the numbers are compared with the tolerance of the type
the program now computes in (f16 by default), as `ziggurat-compile --check` does.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from hypothesis import strategies as st
from xdsl.ir import Block
from xdsl.utils.arg_spec import ArgSpec, parse_pipeline

from .outcome import CaseTimeout, Outcome, run_in_process, time_limit
from .seeds import SPLIT_MARKER, ir_seeds

PIPELINE_SEED_PREFIXES = ("test/graph/", "test/run/", "examples/graph/", "test/tile/", "test/loop/")
XDSL_PASSES = ("cse", "dce", "canonicalize")
INT_VALUES = ("0", "1", "3", "4", "16", "1048576", "-1")
STRING_VALUES = ("NHWC", "NCHW", "davinci", "systolic", "tensorcore", "bogus", "")
NAMED_PIPELINE_OPTIONS = (
    "layout=NHWC",
    "layout=NCHW",
    "machine=davinci",
    "machine=systolic",
    "machine=bogus",
)
INPUT_LEVELS = ("graph", "tensor", "loop")
"""The levels of the input chunks: npu seeds are kernels meant to run long (test/run/npu_limits.mlir)."""
RUN_TIMEOUT_S = 30
OPS_BUDGET = 300_000
"""Ops an output may make the interpreter run (`interpreted_ops`; about 10 s at 30,000 ops/s on a
loaded machine): tiles of 1 over a 64^3 matmul are a million, correct but too slow to check here."""
NPU_LOWERING = "loop-to-npu"
CONVERT_FLOAT, CONVERT_FLOAT_TARGET = "graph-convert-float", "f16"
"""The pass that changes a program's precision, and its default target."""
MACHINE_ATTR = "npu.machine"
SPECIAL_VALUES = (math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0)


@dataclass
class PipelineCase:
    seed: str
    chunk_line: int
    text: str
    pipeline: str

    def describe(self) -> str:
        return f"{self.seed} (chunk at line {self.chunk_line + 1}): -p '{self.pipeline}'"


@functools.cache
def discovered_passes() -> dict[str, tuple[tuple[str, str, bool], ...]]:
    """Pass name -> its options as (name, type, required): ziggurat's passes that import, and xDSL's few."""
    from ziggurat.context import multiverse
    from ziggurat.tools.ziggurat_opt import pass_options
    from ziggurat.universe import PASSES

    available = multiverse().all_passes
    passes = {}
    for name in (*sorted(PASSES), *XDSL_PASSES):
        try:
            pass_class = available[name]()
        except ImportError:
            continue
        passes[name] = tuple((o.name, o.type, o.default is None) for o in pass_options(pass_class))
    return passes


@functools.cache
def named_pipelines() -> tuple[str, ...]:
    """The named pipelines, plugins' included. Those are registered when a `-p` list is first
    expanded: drawing from the list before and after would make hypothesis's draws inconsistent."""
    from ziggurat.lowering.pipelines import PIPELINES, expand_pipeline

    expand_pipeline("cse")
    return tuple(sorted(PIPELINES))


def option_values(type_name: str) -> tuple[str, ...]:
    """Values to try for an option of this type (as `pass_options` spells it), good and bad."""
    if type_name == "bool":
        return ("true", "false")
    if type_name == "int":
        return INT_VALUES
    if type_name.startswith("tuple"):
        return ("1", "2,3", "0", "1,1,1,1", "-1")
    return STRING_VALUES + ("1",)


@functools.cache
def runnable_chunks() -> tuple[tuple[str, int, str], ...]:
    """(seed, line offset, text) of each graph-, tensor- or loop-level chunk that verifies and runs."""
    from ziggurat.tools.ziggurat_opt import split_input

    chunks = []
    for seed, text in ir_seeds():
        if not seed.startswith(PIPELINE_SEED_PREFIXES):
            continue
        parts = split_input(text) if SPLIT_MARKER in text else [(text, 0)]
        for chunk, offset in parts:
            try:
                results = _results(chunk, f"{seed}:{offset}", INPUT_LEVELS)
            except CaseTimeout:
                continue
            if results and all(isinstance(r, list) for _, r in results.values()):
                chunks.append((seed, offset, chunk))
    return tuple(chunks)


@dataclass(frozen=True)
class OverBudget:
    """A function not run: the interpreter would run more than `OPS_BUDGET` ops."""

    ops: int

    def __str__(self) -> str:
        return f"not run: about {self.ops:,} ops to interpret, over the budget of {OPS_BUDGET:,}"


Results = dict[tuple[str, str], tuple[str, "list[np.ndarray] | str | OverBudget"]]
"""(function, "random" or "special" inputs) -> (the function's level, its outputs, the diagnostic that
stopped the run, or why it was not run). Functions that cannot run yet (`why_not_runnable`) are left out."""


def interpreted_ops(block: Block) -> int:
    """How many ops the interpreter runs for `block`: each op once, the body of an `scf.for` with
    constant bounds once per iteration (other regions once; a generic's body is one numpy evaluation)."""
    from xdsl.dialects import scf

    total = 0
    for op in block.ops:
        total += 1
        if isinstance(op, scf.ForOp):
            total += _trip_count(op) * interpreted_ops(op.body.block)
        elif isinstance(op, scf.IfOp):
            total += max((interpreted_ops(r.block) for r in op.regions if r.blocks), default=0)
    return total


def _trip_count(loop) -> int:
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import IntegerAttr

    bounds = []
    for value in (loop.lb, loop.ub, loop.step):
        owner = value.owner
        if not (isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr)):
            return 1
        bounds.append(owner.value.value.data)
    lower, upper, step = bounds
    return max(0, -(-(upper - lower) // step)) if step > 0 else 1


def _results(
    text: str,
    filename: str,
    levels: tuple[str, ...] = ("graph", "tensor", "loop", "npu"),
    machine: str | None = None,
    unfinished: tuple[str, ...] = (),
) -> Results | None:
    """Every public function's outputs on seeded random and special inputs, each on the interpreter of
    its level (npu code on `machine`, else the module's npu.machine; and only if no pass of `unfinished`,
    the npu passes the text has yet to go through, keeps it from running); None if the text fails to
    parse or verify, empty if no function of `levels` may run. A run past `RUN_TIMEOUT_S` raises `CaseTimeout`."""
    from xdsl.dialects import func

    from ziggurat.context import default_context
    from ziggurat.diagnostics import DiagnosticError, collect_diagnostics
    from ziggurat.parsing import parse_source
    from ziggurat.testing.differential import level_inputs, level_of, why_not_runnable
    from ziggurat.verifier import verify_module

    try:
        with collect_diagnostics(), time_limit(RUN_TIMEOUT_S):
            module = parse_source(default_context(), text, filename)
            verify_module(module)
    except DiagnosticError:
        return None
    functions = [
        op
        for op in module.ops
        if isinstance(op, func.FuncOp) and op.body.blocks and not op.is_declaration
    ]
    results: Results = {}
    for function in functions:
        name, level = function.sym_name.data, level_of(module, function)
        if level not in levels or why_not_runnable(level, unfinished) is not None:
            continue
        if level == "npu" and machine is None and MACHINE_ATTR not in module.attributes:
            continue  # no machine to run it on
        ops = interpreted_ops(function.body.block)
        for kind, make_inputs in (
            ("random", lambda function=function: level_inputs(function, 1)),
            ("special", lambda function=function: special(level_inputs(function, 2))),
        ):
            outputs = (
                OverBudget(ops) if ops > OPS_BUDGET else _run(module, make_inputs, name, machine)
            )
            results[(name, kind)] = (level, outputs)
    return results


def _run(
    module, make_inputs: Callable[[], list[np.ndarray]], name: str, machine: str | None
) -> list[np.ndarray] | str:
    """The outputs of @name on the interpreter of its level, or the diagnostic that stopped it."""
    from ziggurat.diagnostics import DiagnosticError, collect_diagnostics
    from ziggurat.testing.differential import run_at_level

    try:
        # NaN and infinities from log, sqrt, overflow are values to compare, not problems.
        with collect_diagnostics(), time_limit(RUN_TIMEOUT_S), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return run_at_level(module, make_inputs(), name, machine)
    except DiagnosticError as e:
        return e.format()


def special(inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The inputs with an eighth of each float array replaced by NaN, infinities, signed zeros and ones:
    the values where algebraic simplifications (x * 0 -> 0, x + 0 -> x) go wrong."""
    rng = np.random.default_rng(2)
    for array in inputs:
        if array.dtype.kind == "f" or array.dtype.name in (
            "bfloat16",
            "float8_e4m3fn",
            "float8_e5m2",
        ):
            chosen = rng.random(array.shape) < 0.125
            array[chosen] = rng.choice(SPECIAL_VALUES, size=int(chosen.sum())).astype(array.dtype)
    return inputs


@st.composite
def _pass_spec(draw) -> str:
    passes = discovered_passes()
    name = draw(st.sampled_from(sorted(passes) + list(named_pipelines())))
    if name not in passes:
        options = [draw(st.sampled_from(NAMED_PIPELINE_OPTIONS))] if draw(st.booleans()) else []
    else:
        options = [
            f"{option}={draw(st.sampled_from(option_values(type_name)))}"
            for option, type_name, required in passes[name]
            if required or draw(st.booleans())
        ]
    return name + ("{" + " ".join(options) + "}" if options else "")


@st.composite
def pipeline_cases(draw) -> PipelineCase:
    seed, offset, text = draw(st.sampled_from(runnable_chunks()))
    passes = draw(st.lists(_pass_spec(), min_size=1, max_size=5))
    return PipelineCase(seed, offset, text, ",".join(passes))


def mismatch(
    expected: np.ndarray,
    actual: np.ndarray,
    signed_zeros: bool = False,
    tolerances: tuple[float, float] | None = None,
) -> str | None:
    """How `actual` differs from `expected`, or None if each element is within `tolerances` (default: the
    type's `ziggurat.numerics.element_tolerance`, two evaluation orders of one computation), NaN where
    it is NaN and, with `signed_zeros`, of the same sign wherever both are zero (1 / x tells them apart)."""
    from ziggurat import numerics

    if expected.shape != actual.shape or expected.dtype != actual.dtype:
        return (
            f"{actual.dtype}{list(actual.shape)} instead of {expected.dtype}{list(expected.shape)}"
        )
    rtol, atol = tolerances or numerics.element_tolerance(expected.dtype)
    wide_expected, wide_actual = expected.astype(np.float64), actual.astype(np.float64)
    if not np.array_equal(np.isnan(wide_expected), np.isnan(wide_actual)):
        return "NaN at other positions"
    if not numerics.compare(actual, expected, numerics.Tolerance(rtol, atol, (rtol, atol))).ok:
        finite = np.isfinite(wide_expected) & np.isfinite(wide_actual)
        worst = np.max(np.abs(wide_actual - wide_expected)[finite], initial=0.0)
        return f"values differ (by up to {worst:g} where both are finite)"
    zeros = (wide_expected == 0) & (wide_actual == 0)
    if signed_zeros and not np.array_equal(
        np.signbit(wide_expected[zeros]), np.signbit(wide_actual[zeros])
    ):
        return "a zero has the other sign"
    return None


def check_pipeline_case(case: PipelineCase, workdir: Path) -> dict[str, Outcome]:
    from ziggurat.tools import ziggurat_opt

    path = workdir / "input.mlir"
    path.write_text(case.text)
    # A bad option value is a command-line error: it has no place in the file to point at.
    outcome = run_in_process(ziggurat_opt.main, [str(path), "-p", case.pipeline], location=None)
    if outcome.kind == "success":
        passes = pipeline_passes(case.pipeline)
        try:
            after = _results(
                outcome.stdout,
                "after.mlir",
                machine=pipeline_machine(passes),
                unfinished=unfinished_npu_passes(passes),
            )
            problem = compare_results(
                _results(case.text, "before.mlir"),
                after,
                computed_in(passes),
                finite_only=any(p.name in FINITE_ONLY_PASSES for p in passes),
            )
        except CaseTimeout:
            outcome.kind, outcome.detail = (
                "hang",
                f"the output ran past {RUN_TIMEOUT_S} s on the interpreter",
            )
            return {"ziggurat-opt": outcome}
        if problem is not None:
            outcome.kind, outcome.detail = "mismatch", problem
        elif after is not None:
            outcome.detail = "; ".join(
                f"@{key[0]}: {r}" for key, (_, r) in after.items() if isinstance(r, OverBudget)
            )
    return {"ziggurat-opt": outcome}


def pipeline_passes(pipeline: str) -> list[ArgSpec]:
    """The passes a `-p` list runs, named pipelines expanded (it ran, so it parses)."""
    from ziggurat.lowering.pipelines import expand_pipeline

    return list(parse_pipeline(expand_pipeline(pipeline)))


def pipeline_machine(passes: list[ArgSpec]) -> str | None:
    """The machine npu output runs on: the one its last `loop-to-npu` wrote code for (None: the
    module's npu.machine). Passes after it may name other machines, e.g. a loop-level pass that
    npu code passes through unchanged."""
    machines = [p.parameters.get("machine", (None,))[0] for p in passes if p.name == NPU_LOWERING]
    return None if not machines or machines[-1] is None else str(machines[-1])


def unfinished_npu_passes(passes: list[ArgSpec]) -> tuple[str, ...]:
    """The passes npu code needs before it runs (`NPU_FINISHING_PASSES`) that the pipeline did not
    run after its last `loop-to-npu`: `loop-to-npu` alone leaves buffers without addresses and
    pipes without flags, which the npu interpreter rightly refuses."""
    from ziggurat.testing.differential import NPU_FINISHING_PASSES

    names = [p.name for p in passes]
    after = (
        names[len(names) - names[::-1].index(NPU_LOWERING) :] if NPU_LOWERING in names else names
    )
    return tuple(name for name in NPU_FINISHING_PASSES if name not in after)


def computed_in(passes: list[ArgSpec]) -> np.dtype | None:
    """The narrowest float type `graph-convert-float` made the program compute in, if it ran."""
    from xdsl.context import Context
    from xdsl.parser import Parser

    from ziggurat.dtypes import to_numpy_dtype

    targets = [
        str(p.parameters.get("target", (CONVERT_FLOAT_TARGET,))[0])
        for p in passes
        if p.name == CONVERT_FLOAT
    ]
    dtypes = [to_numpy_dtype(Parser(Context(), target).parse_type()) for target in targets]
    return min(dtypes, key=lambda dtype: dtype.itemsize, default=None)


FINITE_ONLY_PASSES = frozenset({"graph-space-to-depth"})
"""Passes whose rewrite holds for finite inputs only, as fast-math rewrites do: graph-space-to-depth
pads the kernel with zero taps, and a zero tap times an input's infinity is NaN."""


def compare_results(
    expected: Results | None,
    actual: Results | None,
    computed_in: np.dtype | None = None,
    finite_only: bool = False,
) -> str | None:
    """How the output's results differ from the input's, or None if they agree; float results
    computed in a narrower type (`computed_in`) are compared with that type's tolerance; with
    `finite_only` (a pass of `FINITE_ONLY_PASSES` ran) not on the special inputs."""
    from ziggurat.numerics import scaled_element_tolerance

    if expected is None:
        return None
    if actual is None:
        return "the output does not parse or verify"
    for key, (level, before) in expected.items():
        if key not in actual:
            continue  # dce may erase a private function; npu code before npu-plan-memory cannot run yet
        after_level, after = actual[key]
        lowered = after_level != level
        if isinstance(after, OverBudget):
            continue  # check_pipeline_case says so in the outcome's detail
        if isinstance(after, str):
            return f"@{key[0]} on {key[1]} inputs: the output does not run at the {after_level} level: {after}"
        if (lowered or finite_only) and key[1] == "special":
            continue  # lowered code may order NaN and signed zeros differently through max/min
        for index, (b, a) in enumerate(zip(before, after)):
            narrowed = computed_in is not None and _narrower(computed_in, b.dtype)
            override = (
                scaled_element_tolerance(b, computed_in if narrowed else None)
                if lowered or narrowed
                else None
            )
            if (
                difference := mismatch(b, a, signed_zeros=not lowered, tolerances=override)
            ) is not None:
                return f"@{key[0]} on {key[1]} inputs ({level} -> {after_level}), result #{index}: {difference}"
    return None


def _narrower(computed_in: np.dtype, dtype: np.dtype) -> bool:
    from ziggurat.numerics import tolerance_for

    return tolerance_for(computed_in).rtol > tolerance_for(dtype).rtol
