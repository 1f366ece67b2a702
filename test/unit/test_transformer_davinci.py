"""The transformer encoder layer of examples/models on davinci: its matmuls of 1x<seq>x<model>
activations tile (their M dims are a unit batch and the rows), and the layer runs end to end."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ziggurat.testing.differential import check_pipeline_stages
from ziggurat.tools import ziggurat_compile

EXAMPLES = Path(__file__).parents[2] / "examples" / "models"

# The MLP's up projection of a 32x128x4x512 layer with its GELU epilogue: left whole, the
# 128x512 weight (128 KiB in f16) overflowed davinci's 64 KiB l0b.
MLP_UP = """
func.func @main(%x: tensor<1x32x128xf16>, %w: tensor<128x512xf16>, %b: tensor<512xf16>) -> tensor<1x32x512xf16> {
  %mm = graph.matmul %x, %w : (tensor<1x32x128xf16>, tensor<128x512xf16>) -> tensor<1x32x512xf16>
  %up = graph.add %mm, %b : (tensor<1x32x512xf16>, tensor<512xf16>) -> tensor<1x32x512xf16>
  %e = graph.erf %up : tensor<1x32x512xf16>
  %y = graph.mul %up, %e : (tensor<1x32x512xf16>, tensor<1x32x512xf16>) -> tensor<1x32x512xf16>
  func.return %y : tensor<1x32x512xf16>
}"""


def test_a_matmul_of_a_unit_batch_of_rows_tiles_its_weight_and_keeps_the_numerics():
    report = check_pipeline_stages(MLP_UP, "lower-to-npu{machine=davinci}", "davinci")
    assert report.ok, str(report)
    assert report.stages[-1].level == "npu"


@pytest.mark.parametrize("sizes", [None, (32, 128, 4, 512)], ids=["example", "32x128x4x512"])
def test_the_example_transformer_passes_the_check_on_davinci(sizes, tmp_path: Path, capsys):
    """The example's layer (8-wide heads: its per-head context rows are 16 bytes, and the
    transpose back into 1x8x32 goes through gm, loop-to-npu's bounce) and a larger one whose
    MLP weights must tile; in f16 (`--precision auto`: the values fit)."""
    path = tmp_path / "encoder.onnx"
    script = EXAMPLES / "transformer_encoder.py"
    if sizes is None:
        subprocess.run([sys.executable, str(script), str(path)], check=True)
    else:
        sequence, model, heads, hidden = sizes
        build = (
            f"import sys; sys.path.insert(0, {str(EXAMPLES)!r}); import onnx, transformer_encoder as t; "
            f"t.SEQUENCE, t.MODEL, t.HEADS, t.HIDDEN, t.HEAD = {sequence}, {model}, {heads}, {hidden}, {model // heads}; "
            f"onnx.save(t.build(), {str(path)!r})"
        )
        subprocess.run([sys.executable, "-c", build], check=True)
    arguments = [str(path), "--machine", "davinci", "--run", "--check"]
    args = ziggurat_compile.build_argument_parser().parse_args(arguments)
    assert ziggurat_compile.compile_model(args) == 0
    assert "check passed: 1 output(s) match onnxruntime" in capsys.readouterr().out


def test_ziggurat_tune_searches_a_matmul_of_a_unit_batch_of_rows():
    from ziggurat.context import default_context
    from ziggurat.machine import load_machine
    from ziggurat.parsing import parse_source
    from ziggurat.tuning.space import tunable_groups

    module = parse_source(default_context(), MLP_UP, "mlp_up.mlir")
    (group,) = tunable_groups(module, load_machine("davinci"))
    assert group.extents == (1, 32, 512, 128)
    assert len(group.candidates) > 1
    assert all(batch == 1 and n * k * 2 <= 64 * 1024 for batch, _, n, k in group.candidates)
