"""The onnx package's operator test cases through the importer and the graph interpreter.

Every case must pass, end in a diagnostic that names the node's operator, or
be one of the listed deviations of known cause; a mismatch, a crash or a hang fails (`ziggurat.testing.onnx_operator_suite`
runs them). `make test` runs a fixed sample of a third of the cases; all of
them run with ZIGGURAT_RUN_SLOW=1 or `-m onnx_suite` selects them all with
it, and `make conformance` regenerates docs/onnx-operators.md from the
whole suite.
"""

from __future__ import annotations

import os
import zlib

import pytest

from ziggurat.testing.onnx_operator_suite import KNOWN_DEVIATIONS, collect, run_case

RUN_SLOW = os.environ.get("ZIGGURAT_RUN_SLOW", "") not in ("", "0")
CASES = collect()


def sampled(name: str) -> bool:
    """A fixed third of the cases, spread over every operator (a hash of the name, not its order)."""
    return zlib.crc32(name.encode()) % 3 == 0


def _params():
    for case in CASES:
        marks = [pytest.mark.onnx_suite]
        if not sampled(case.name):
            marks += [
                pytest.mark.slow,
                pytest.mark.skipif(
                    not RUN_SLOW, reason="outside the sample; set ZIGGURAT_RUN_SLOW=1"
                ),
            ]
        yield pytest.param(case, id=case.name, marks=marks)


@pytest.mark.parametrize("case", list(_params()))
def test_case_passes_or_names_what_is_unsupported(case):
    result = run_case(case)
    assert result.outcome in ("pass", "diagnostic", "deviation"), (
        f"{result.outcome}: {result.message}"
    )
    if result.outcome == "diagnostic":
        op_types = {node.op_type for node in case.model.graph.node}
        assert "error:" in result.message
        assert any(op in result.message for op in op_types) or "opset" in result.message, (
            result.message
        )


def test_the_suite_is_collected():
    assert len(CASES) > 1000
    assert sum(sampled(case.name) for case in CASES) > len(CASES) // 4


@pytest.mark.parametrize("name", sorted(KNOWN_DEVIATIONS))
def test_each_known_deviation_is_still_one(name):
    (case,) = [case for case in CASES if case.name == name]
    assert run_case(case).outcome == "deviation"
