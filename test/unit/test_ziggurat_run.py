"""`ziggurat-run` as a user runs it: a subprocess, npz files in and out, diagnostics on stderr."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

PROGRAM = """\
func.func @main(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> (tensor<2x4xf32>, tensor<4x2xf32>) {
  %b = graph.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %m = graph.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %a = graph.add %m, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %r = graph.relu %a : tensor<2x4xf32>
  %t = graph.transpose %a {perm = array<i64: 1, 0>} : tensor<2x4xf32> -> tensor<4x2xf32>
  func.return %r, %t : tensor<2x4xf32>, tensor<4x2xf32>
}
"""

BIAS = np.array([1, 2, 3, 4], np.float32)


def ziggurat_run(*args: str | Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ziggurat.tools.ziggurat_run", *map(str, args)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def expected(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = x @ w + BIAS
    return np.maximum(a, 0), a.T


@pytest.fixture
def program(tmp_path: Path) -> Path:
    path = tmp_path / "program.mlir"
    path.write_text(PROGRAM)
    return path


def test_named_inputs_round_trip_through_npz(program: Path, tmp_path: Path):
    rng = np.random.default_rng(7)
    x, w = rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
    np.savez(tmp_path / "in.npz", w=w, x=x)
    out = tmp_path / "out.npz"

    done = ziggurat_run(program, "--inputs", tmp_path / "in.npz", "--outputs", out)

    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    with np.load(out) as results:
        assert sorted(results.files) == ["result0", "result1"]
        relu, transposed = expected(x, w)
        np.testing.assert_allclose(results["result0"], relu, rtol=1e-5)
        np.testing.assert_allclose(results["result1"], transposed, rtol=1e-5)
        assert results["result0"].dtype == np.float32


def test_positional_inputs_from_stdin_with_printed_values(tmp_path: Path):
    np.savez(tmp_path / "in.npz", np.ones((2, 3), np.float32), np.full((3, 4), -1, np.float32))

    done = ziggurat_run("-", "--inputs", tmp_path / "in.npz", "--print", stdin=PROGRAM)

    assert done.returncode == 0, done.stderr
    # x @ w is -3 everywhere; + bias gives [-2, -1, 0, 1] in each row.
    assert done.stdout.splitlines()[:3] == [
        "result0: tensor<2x4xf32>",
        "[[0. 0. 0. 1.]",
        " [0. 0. 0. 1.]]",
    ]
    assert "result1: tensor<4x2xf32>" in done.stdout


def test_random_inputs_are_reproducible_and_summarized(program: Path, tmp_path: Path):
    first, again, other = (tmp_path / f"{name}.npz" for name in ("first", "again", "other"))
    for path, seed in ((first, "0"), (again, "0"), (other, "5")):
        assert ziggurat_run(program, "--seed", seed, "--outputs", path).returncode == 0
    with np.load(first) as a, np.load(again) as b, np.load(other) as c:
        np.testing.assert_array_equal(a["result1"], b["result1"])
        assert not np.array_equal(a["result1"], c["result1"])

    summary = ziggurat_run(program).stdout.splitlines()
    with np.load(first) as a:
        transposed = a["result1"]
    assert summary[2].startswith("result1: tensor<4x2xf32>  min ")
    assert f"max {transposed.max():.6g}" in summary[2]
    assert summary[3].split() == [f"{v:.6g}" for v in transposed.reshape(-1)]


def test_bf16_outputs_can_be_fed_back_as_inputs(tmp_path: Path):
    program = tmp_path / "bf16.mlir"
    program.write_text(
        "func.func @double(%x: tensor<3xbf16>) -> tensor<3xbf16> {\n"
        "  %y = graph.add %x, %x : (tensor<3xbf16>, tensor<3xbf16>) -> tensor<3xbf16>\n"
        "  func.return %y : tensor<3xbf16>\n"
        "}\n"
    )
    np.savez(tmp_path / "in.npz", x=np.array([0.5, -1.5, 3], ml_dtypes.bfloat16))
    assert ziggurat_run(program, "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "once.npz").returncode == 0
    with np.load(tmp_path / "once.npz") as once:
        np.savez(tmp_path / "again.npz", x=once["result0"])
    done = ziggurat_run(program, "--inputs", tmp_path / "again.npz", "--print")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1] == "[2 -6 12]"


def failure(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    return done.stderr


def test_missing_file(tmp_path: Path):
    stderr = failure(ziggurat_run(tmp_path / "nowhere.mlir"))
    assert "nowhere.mlir: error: cannot read the IR file" in stderr


def test_unparsable_ir_is_reported_at_its_position(tmp_path: Path):
    path = tmp_path / "broken.mlir"
    path.write_text(PROGRAM.replace("graph.relu %a", "graph.relu %a,"))
    stderr = failure(ziggurat_run(path))
    assert stderr.startswith(f"{path}:5:")
    assert ": error: " in stderr


def test_ir_that_does_not_verify(tmp_path: Path):
    path = tmp_path / "invalid.mlir"
    path.write_text(PROGRAM.replace("array<i64: 1, 0>", "array<i64: 1, 1>"))
    stderr = failure(ziggurat_run(path))
    assert f"{path}:6:3: error: 'graph.transpose' op perm [1, 1] is not a permutation" in stderr


def test_inputs_with_the_wrong_shape(program: Path, tmp_path: Path):
    np.savez(tmp_path / "in.npz", x=np.ones((3, 2), np.float32), w=np.ones((3, 4), np.float32))
    stderr = failure(ziggurat_run(program, "--inputs", tmp_path / "in.npz"))
    assert stderr.startswith(
        f"{program}:1:1: error: input for argument #0 'x' of @main has shape [3, 2], "
        "but the argument is tensor<2x3xf32>"
    )


@pytest.mark.parametrize(
    ("arrays", "message"),
    [
        ({"x": np.ones((2, 3), np.float32)}, "no array for argument #1 of @main (looked for w, arg1, arr_1; the archive has x)"),
        (
            {"x": np.ones((2, 3), np.float32), "w": np.ones((3, 4), np.float32), "bias": BIAS},
            "no argument of @main is called bias (arguments: x, w)",
        ),
    ],
)
def test_inputs_that_do_not_name_the_arguments(program: Path, tmp_path: Path, arrays, message):
    np.savez(tmp_path / "in.npz", **arrays)
    stderr = failure(ziggurat_run(program, "--inputs", tmp_path / "in.npz"))
    assert f"in.npz: error: {message}" in stderr


def test_inputs_that_are_not_an_npz(program: Path):
    stderr = failure(ziggurat_run(program, "--inputs", program))
    assert "error: not an .npz archive" in stderr


def test_op_without_implementation_is_located(tmp_path: Path):
    path = tmp_path / "divf.mlir"
    path.write_text(
        "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %y = arith.divf %x, %x : tensor<4xf32>\n"
        "  func.return %y : tensor<4xf32>\n"
        "}\n"
    )
    stderr = failure(ziggurat_run(path))
    assert stderr.startswith(f"{path}:2:3: error: no interpreter implementation for 'arith.divf'")


def test_unknown_function(program: Path):
    stderr = failure(ziggurat_run(program, "--function", "other"))
    assert "error: no function @other in the module (functions: @main)" in stderr


def test_outputs_that_cannot_be_written(program: Path, tmp_path: Path):
    stderr = failure(ziggurat_run(program, "--outputs", tmp_path / "missing" / "out.npz"))
    assert "out.npz: error: cannot write the outputs" in stderr


def test_a_bad_command_line_exits_1(program: Path):
    done = ziggurat_run(program, "--seed", "many")
    assert done.returncode == 1
    assert "argument --seed: invalid int value: 'many'" in done.stderr
