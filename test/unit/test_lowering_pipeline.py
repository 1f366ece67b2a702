"""lower-to-npu and compile: their expansion, and the differential suite that runs every
stage of lower-to-npu on the right interpreter and compares it with the graph interpreter."""

from __future__ import annotations

import pytest

from ziggurat.diagnostics import DiagnosticError
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
