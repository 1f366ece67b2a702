"""lower-to-npu and compile: their expansion, and the differential suite that runs every
stage of lower-to-npu on the right interpreter and compares it with the graph interpreter."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from ziggurat.backends.interpreter import find_function
from ziggurat.context import default_context
from ziggurat.diagnostics import DiagnosticError, parse_source
from ziggurat.lowering.differential import (
    build_passes,
    check_pipeline_stages,
    input_names,
    level_inputs,
    level_of,
    run_at_level,
    stage_tolerance,
)
from ziggurat.lowering.pipelines import LOWER_TO_NPU_PASSES, expand_pipeline

MACHINES = ("davinci", "systolic", "tensorcore")


@pytest.mark.parametrize("machine", MACHINES)
def test_lower_to_npu_expands_to_the_passes_of_the_contract(machine: str):
    passes = expand_pipeline(f"lower-to-npu{{machine={machine}}}").split(",")
    assert [p.split("{")[0] for p in passes] == [p.split("{")[0] for p in LOWER_TO_NPU_PASSES]
    assert passes[2] == f'tile-and-fuse{{machine="{machine}"}}'
    assert passes[-1] == f'npu-plan-memory{{machine="{machine}"}}'


def test_compile_is_graph_opt_then_lower_to_npu():
    assert expand_pipeline("compile{machine=davinci}") == (
        expand_pipeline("graph-opt") + "," + expand_pipeline("lower-to-npu{machine=davinci}")
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("lower-to-npu", r"needs a machine: lower-to-npu\{machine=NAME\} \(presets: davinci"),
        ("compile{machine=davincy}", "unknown machine 'davincy'.*did you mean 'davinci'"),
        ('lower-to-npu{machine="no/such.toml"}', "machine file 'no/such.toml' does not exist"),
        ("lower-to-npu{machine=davinci sizes=1}", "has no option 'sizes'"),
    ],
)
def test_bad_machine_options_are_reported(spec: str, message: str):
    with pytest.raises(DiagnosticError, match=message):
        expand_pipeline(spec)


# --------------------------------------------------------------------------- #
# The differential harness across levels
# --------------------------------------------------------------------------- #

NPU_EXAMPLES = Path(__file__).parents[2] / "examples" / "npu"
MODELS = Path(__file__).parents[2] / "examples" / "models"


def test_npu_code_runs_with_its_result_arguments_as_outputs():
    # The hand-written GEMM + relu with its output renamed as tile-to-loop names out-params.
    text = (NPU_EXAMPLES / "gemm_relu.mlir").read_text().replace("%Y", "%result0")
    module = parse_source(default_context(), text, "gemm_relu.mlir")
    function = find_function(module)
    assert level_of(module, function) == "npu" and input_names(function) == ["A", "B"]
    a, b = level_inputs(function, seed=1)
    assert (a.shape, b.shape, a.dtype) == ((64, 128), (128, 64), np.float16)
    (y,) = run_at_level(module, [a, b], machine="davinci")
    expected = np.maximum(a.astype(np.float32) @ b.astype(np.float32), 0).astype(np.float16)
    np.testing.assert_allclose(y.astype(np.float32), expected.astype(np.float32), rtol=1e-2, atol=0.1)


@dataclass(frozen=True)
class ReluToAbs(ModulePass):
    """A wrong lowering step: the relu of the tensor level becomes abs."""

    name = "test-relu-to-abs"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for maximum in [o for o in op.walk() if isinstance(o, arith.MaximumfOp)]:
            absf = math.AbsFOp(maximum.lhs)
            Rewriter.replace_op(maximum, absf)


@dataclass(frozen=True)
class Crash(ModulePass):
    name = "test-crash"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise KeyError("no such thing")


MATMUL_RELU = """
func.func @main(%a: tensor<8x12xf16>, %b: tensor<12x4xf16>) -> tensor<8x4xf16> {
  %c = graph.matmul %a, %b : (tensor<8x12xf16>, tensor<12x4xf16>) -> tensor<8x4xf16>
  %r = graph.relu %c : tensor<8x4xf16>
  func.return %r : tensor<8x4xf16>
}"""


def test_every_stage_is_compared_and_the_first_divergence_named():
    passes = [*build_passes("graph-to-tile"), ReluToAbs(), *build_passes("canonicalize"), Crash()]
    report = check_pipeline_stages(MATMUL_RELU, passes, "davinci", seed=2)
    assert [s.pass_name for s in report.stages] == ["graph-to-tile", "test-relu-to-abs", "canonicalize", "test-crash"]
    assert [s.level for s in report.stages[:3]] == ["tensor"] * 3
    assert report.stages[0].ok and not report.ok
    assert report.first_failure is report.stages[1]
    assert report.stages[1].outputs[0].mismatches > 0
    assert "KeyError" in report.stages[3].error and "test_lowering_pipeline.py" in report.stages[3].error
    assert "first fails at 'test-relu-to-abs'" in str(report)


def test_stage_tolerance_grows_with_the_outputs_magnitude():
    small, large = np.full(4, 0.1, np.float16), np.full(4, 100.0, np.float16)
    assert stage_tolerance(small) == (1e-2, 1e-3)
    assert stage_tolerance(large) == pytest.approx((1e-2, 1.0))
    assert stage_tolerance(np.arange(4, dtype=np.int32)) == (0.0, 0.0)
