"""Named pipelines: expansion, the plugin extension point, and graph-opt's numerics."""

from __future__ import annotations

from pathlib import Path

import pytest

from ziggurat.context import default_context
from ziggurat.diagnostics import DiagnosticError
from ziggurat.lowering import pipelines
from ziggurat.lowering.pipelines import expand_pipeline, register_pipeline
from ziggurat.parsing import parse_source
from ziggurat.testing.differential import check_pass_preserves_numerics

GRAPH_TESTS = Path(__file__).parent.parent / "graph"


@pytest.fixture
def scratch_registry(monkeypatch):
    monkeypatch.setattr(pipelines, "PIPELINES", dict(pipelines.PIPELINES))


def test_graph_opt_expands_to_plain_passes():
    assert expand_pipeline("graph-opt") == (
        "graph-fold-constants,graph-canonicalize,graph-fold-batch-norm,graph-split-grouped-conv{min-out-per-group=17},cse,dce,graph-fuse"
    )
    assert expand_pipeline("graph-fuse{max-ops=3},dce") == "graph-fuse{max-ops=3},dce"


def test_registered_pipelines_expand_recursively_with_options(scratch_registry):
    register_pipeline("twice", lambda options: ",".join(["graph-opt"] * int(options["times"][0])))
    assert expand_pipeline("twice{times=2}") == ",".join([expand_pipeline("graph-opt")] * 2)
    with pytest.raises(ValueError, match="already registered"):
        register_pipeline("twice", lambda options: "cse")


def test_a_pipeline_expanding_into_itself_is_an_error(scratch_registry):
    register_pipeline("loop", lambda options: "cse,loop")
    with pytest.raises(DiagnosticError, match="pipeline expands into itself: loop -> loop"):
        expand_pipeline("loop")


def test_graph_opt_rejects_unknown_options_and_layouts():
    with pytest.raises(DiagnosticError, match="has no option 'fast'"):
        expand_pipeline("graph-opt{fast=true}")
    with pytest.raises(DiagnosticError, match="layout must be one of"):
        expand_pipeline("graph-opt{layout=NC1HWC0}")


CASES = [
    (path, op.sym_name.data)
    for path in ("fuse.mlir", "fold-batch-norm.mlir")
    for op in parse_source(default_context(), (GRAPH_TESTS / path).read_text(), path).body.block.ops
]


@pytest.mark.parametrize(("path", "function"), CASES)
def test_graph_opt_preserves_numerics(path: str, function: str):
    report = check_pass_preserves_numerics(
        (GRAPH_TESTS / path).read_text(), expand_pipeline("graph-opt"), function=function
    )
    assert report.ok, str(report)


def test_graph_opt_nhwc_preserves_numerics():
    text = (GRAPH_TESTS / "layout.mlir").read_text()
    spec = expand_pipeline("graph-opt{layout=NHWC}")
    assert 'graph-split-grouped-conv,graph-layout{layout="NHWC"},cse' in spec
    for function in ("conv_relu_conv", "pool_add_mul", "residual"):
        report = check_pass_preserves_numerics(text, spec, function=function)
        assert report.ok, str(report)


def test_differential_harness_takes_named_pipelines():
    from ziggurat.testing.differential import check_pass_preserves_numerics

    text = """
    func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
      %zero = graph.constant dense<0.0> : tensor<2x3xf32>
      %y = graph.add %x, %zero : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
      %r = graph.relu %y : tensor<2x3xf32>
      func.return %r : tensor<2x3xf32>
    }
    """
    report = check_pass_preserves_numerics(text, "graph-opt")
    assert report.ok
    assert not any(op.name == "graph.add" for op in report.transformed.walk())
