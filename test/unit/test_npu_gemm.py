"""The hand-written DaVinci GEMMs in examples/npu: right numbers, and double buffering keeps the cube busier."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ziggurat.context import default_context
from ziggurat.diagnostics import DiagnosticError
from ziggurat.interpreters.npu_interpreter import run_npu
from ziggurat.parsing import parse_source

EXAMPLES = Path(__file__).parents[2] / "examples" / "npu"


def load(name: str, text: str | None = None):
    path = EXAMPLES / name
    return parse_source(default_context(), path.read_text() if text is None else text, str(path))


def inputs():
    rng = np.random.default_rng(0)
    return rng.standard_normal((256, 512)).astype(np.float16), rng.standard_normal(
        (512, 256)
    ).astype(np.float16)


@pytest.fixture(scope="module")
def runs():
    a, b = inputs()
    return {
        kind: run_npu(load(f"gemm_{kind}_buffered.mlir"), None, [a, b])
        for kind in ("single", "double")
    }


@pytest.mark.parametrize("kind", ["single", "double"])
def test_gemm_matches_numpy(runs, kind):
    a, b = inputs()
    (c,) = runs[kind].outputs
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-4, atol=1e-3)


def test_double_buffering_raises_cube_utilization(runs):
    single, double = runs["single"].stats, runs["double"].stats
    assert single.flops == double.flops == 2 * 256 * 256 * 512
    assert single.busy_cycles["cube"] == double.busy_cycles["cube"]
    assert double.total_cycles < 0.9 * single.total_cycles
    assert double.utilization("cube") > single.utilization("cube") + 0.1
    # both move A and B from global memory exactly once and write C once
    assert single.bytes_read["gm"] == double.bytes_read["gm"] == 2 * (256 * 512 * 2)
    assert single.bytes_written["gm"] == 256 * 256 * 4


def test_removing_a_wait_reports_the_hazard_at_the_reader():
    path = EXAMPLES / "gemm_double_buffered.mlir"
    lines = path.read_text().split("\n")
    wait = lines.index('      npu.wait_flag "mte1" -> "cube", 1')
    del lines[wait]
    reader = wait + 1  # the pong mma moves up into the wait's line (1-based)
    assert "npu.mma %a0[1, 0, 0]" in lines[reader - 1]
    with pytest.raises(DiagnosticError) as info:
        run_npu(load(path.name, "\n".join(lines)), None, list(inputs()))
    message = info.value.format()
    assert message.startswith(
        f"{path}:{reader}:7: error: npu.mma on pipe 'cube' reads 'l0a' bytes [32768, 65536) while npu.dma on pipe "
        "'mte1' may still be writing"
    )
    assert "note: the earlier access on pipe 'mte1'" in message


def test_the_readme_snippet_runs(capsys, monkeypatch):
    monkeypatch.chdir(EXAMPLES.parents[1])  # the snippet names files from the repository root
    snippet = re.search(r"```python\n(.*?)```", (EXAMPLES / "README.md").read_text(), re.S).group(1)
    exec(compile(snippet, str(EXAMPLES / "README.md"), "exec"), {})
    error, report = capsys.readouterr().out.split("\n", 1)
    assert float(error) < 1e-3
    assert "roofline" in report and "cube" in report


def test_gemm_with_a_relu_epilogue_through_the_vector_unit():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((64, 128)).astype(np.float16)
    b = rng.standard_normal((128, 64)).astype(np.float16)
    result = run_npu(load("gemm_relu.mlir"), None, [a, b])
    # f32 accumulation, one rounding to f16 in FIXPIPE, relu in f16
    expected = np.maximum(a.astype(np.float32) @ b.astype(np.float32), 0).astype(np.float16)
    np.testing.assert_allclose(
        result.outputs[0].astype(np.float32), expected.astype(np.float32), rtol=1e-3, atol=1e-3
    )
    busy = result.stats.busy_cycles
    assert all(busy[pipe] > 0 for pipe in ("mte2", "mte1", "cube", "fixpipe", "vector", "mte3"))
