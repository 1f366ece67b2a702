"""The onnx package's light models end to end on davinci, as issue 6's "done when" runs them:

    ziggurat-compile light_<model>.onnx --machine davinci --run --check --report text

(import, `compile{machine=davinci}` in bf16, the npu code simulated, its output
compared with onnxruntime and with the shipped light_<model>_output_0.pb, and
the per-layer report). Each takes minutes on this 2-core machine, so they run
with ZIGGURAT_RUN_SLOW=1 only; `benchmarks/conformance.py` (`make conformance`)
runs them all with timings (docs/conformance.md).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import onnx
import pytest

from ziggurat.tools import ziggurat_compile

LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"

RUN_SLOW = os.environ.get("ZIGGURAT_RUN_SLOW", "") not in ("", "0")

END_TO_END = sorted(path.stem for path in LIGHT.glob("light_*.onnx"))
"""All nine light models pass end to end on davinci (docs/conformance.md has the table)."""


@pytest.mark.slow
@pytest.mark.skipif(not RUN_SLOW, reason="minutes per model; set ZIGGURAT_RUN_SLOW=1 to run them")
@pytest.mark.parametrize("model", END_TO_END)
def test_light_model_passes_the_check_on_davinci_with_per_layer_cycles(model: str, capsys):
    argv = [
        str(LIGHT / f"{model}.onnx"),
        "--machine",
        "davinci",
        "--run",
        "--check",
        "--report",
        "text",
    ]
    assert ziggurat_compile.compile_model(ziggurat_compile.parse_arguments(argv)) == 0
    out = capsys.readouterr().out
    assert "match onnxruntime and the expected outputs shipped with the model" in out
    layers = out[out.index("\nlayers") :]
    rows = re.findall(r"^(\S.*?)\s+([\d,]+)\s+([\d.]+)%\s+([\d,]+)$", layers, re.MULTILINE)
    assert len(rows) >= 5
    assert rows[0][0] != "(no source location)"  # the longest layer is a named ONNX node
    assert all(int(cycles.replace(",", "")) > 0 for _, cycles, _, _ in rows)
