"""`ziggurat-run` as a user runs it: a subprocess, npz files in and out, diagnostics on stderr."""

from __future__ import annotations

import json
import os
import re
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
    x, w = (
        rng.standard_normal((2, 3)).astype(np.float32),
        rng.standard_normal((3, 4)).astype(np.float32),
    )
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
    assert (
        ziggurat_run(
            program, "--inputs", tmp_path / "in.npz", "--outputs", tmp_path / "once.npz"
        ).returncode
        == 0
    )
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
        (
            {"x": np.ones((2, 3), np.float32)},
            "no array for argument #1 of @main (looked for w, arg1, arr_1; the archive has x)",
        ),
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
    # xDSL's test dialect: an op that parses but that no level gives semantics to
    path = tmp_path / "unimplemented.mlir"
    path.write_text(
        "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        '  %y = "test.op"(%x) : (tensor<4xf32>) -> tensor<4xf32>\n'
        "  func.return %y : tensor<4xf32>\n"
        "}\n"
    )
    stderr = failure(ziggurat_run(path))
    assert stderr.startswith(f"{path}:2:3: error: no interpreter implementation for 'test.op'")


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


# --------------------------------------------------------------------------- #
# npu level: the machine model
# --------------------------------------------------------------------------- #

EXAMPLES = Path(__file__).parents[2] / "examples" / "npu"
PRESETS = Path(__file__).parents[2] / "ziggurat" / "machine" / "presets"

RELU_KERNEL = """\
module {
  func.func @main(%x: memref<64xf32, "gm">, %y: memref<64xf32, "gm">) {
    %u = npu.buffer offset 0 : memref<64xf32, "ub">
    npu.dma "mte2" %x[0] -> %u[0] {shape = array<i64: 64>} : memref<64xf32, "gm"> -> memref<64xf32, "ub">
    npu.set_flag "mte2" -> "vector", 0
    npu.wait_flag "mte2" -> "vector", 0
    npu.vec.relu %u[0] -> %u[0] : memref<64xf32, "ub"> -> memref<64xf32, "ub">
    npu.set_flag "vector" -> "mte3", 0
    npu.wait_flag "vector" -> "mte3", 0
    npu.dma "mte3" %u[0] -> %y[0] {shape = array<i64: 64>} : memref<64xf32, "ub"> -> memref<64xf32, "gm">
    func.return
  }
}
"""


@pytest.fixture
def relu_kernel(tmp_path: Path) -> Path:
    """A kernel without npu.machine: the machine comes from --machine only."""
    path = tmp_path / "relu.mlir"
    path.write_text(RELU_KERNEL)
    return path


def json_report(kernel: Path) -> dict:
    done = ziggurat_run(kernel, "--machine", "davinci", "--report", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_double_buffering_keeps_the_cube_busier():
    single = json_report(EXAMPLES / "gemm_single_buffered.mlir")
    double = json_report(EXAMPLES / "gemm_double_buffered.mlir")

    # the same work against the same roof ...
    assert single["flops"] == double["flops"] == 2 * 256 * 256 * 512
    assert single["roofline"]["bound_cycles"] == double["roofline"]["bound_cycles"]
    assert single["roofline"]["bound_by"] == double["roofline"]["bound_by"] == "compute"
    # ... done sooner, because MTE2 loads the next tiles while the cube works
    assert double["utilization"]["cube"] > single["utilization"]["cube"] + 0.05
    assert double["total_cycles"] < single["total_cycles"]
    assert double["roofline"]["achieved"] > single["roofline"]["achieved"]


def test_relu_kernel_outputs_the_argument_not_given(relu_kernel: Path, tmp_path: Path):
    x = np.linspace(-2, 2, 64, dtype=np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    out = tmp_path / "out.npz"
    done = ziggurat_run(
        relu_kernel, "--machine", "davinci", "--inputs", tmp_path / "in.npz", "--outputs", out
    )
    assert done.returncode == 0, done.stderr
    with np.load(out) as results:
        assert results.files == ["y"]
        np.testing.assert_array_equal(results["y"], np.maximum(x, 0))


def test_unknown_machine_suggests_a_preset(relu_kernel: Path):
    stderr = failure(ziggurat_run(relu_kernel, "--machine", "davinchi"))
    assert "error: unknown machine 'davinchi'" in stderr
    assert "did you mean 'davinci'?" in stderr


def test_machine_file_errors_are_shown_at_their_line(relu_kernel: Path, tmp_path: Path):
    lines = (PRESETS / "davinci.toml").read_text().splitlines()
    typo = next(i for i, line in enumerate(lines) if line.startswith("bandwidth = ") and i > 30)
    lines[typo] = lines[typo].replace("bandwidth", "bandwith")
    machine = tmp_path / "machine.toml"
    machine.write_text("\n".join(lines) + "\n")

    stderr = failure(ziggurat_run(relu_kernel, "--machine", machine))
    assert f"machine.toml:{typo + 1}: error: unknown key 'bandwith'" in stderr
    assert "did you mean 'bandwidth'?" in stderr


def test_kernel_without_a_machine(relu_kernel: Path):
    stderr = failure(ziggurat_run(relu_kernel))
    assert f"{relu_kernel}:1:1: error: no machine to run on: pass --machine (presets: " in stderr
    assert "davinci" in stderr


def test_machine_that_contradicts_the_module():
    kernel = EXAMPLES / "gemm_single_buffered.mlir"
    stderr = failure(ziggurat_run(kernel, "--machine", "systolic"))
    assert (
        "error: --machine systolic is machine 'systolic', but the module is written for "
        'npu.machine = "davinci"'
    ) in stderr


@pytest.mark.parametrize(
    ("arrays", "message"),
    [
        (
            {"x": np.ones(32, np.float32)},
            "error: input 'x' has shape (32,), the argument is memref<64xf32, \"gm\">",
        ),
        (
            {"z": np.ones(64, np.float32)},
            "in.npz: error: no argument of @main is called z (arguments: x, y)",
        ),
        (
            {"x": np.ones(64, np.float32), "arg0": np.ones(64, np.float32)},
            "in.npz: error: argument #0 of @main matches several arrays: x, arg0",
        ),
    ],
)
def test_inputs_that_do_not_match_the_kernel(relu_kernel: Path, tmp_path: Path, arrays, message):
    np.savez(tmp_path / "in.npz", **arrays)
    stderr = failure(
        ziggurat_run(relu_kernel, "--machine", "davinci", "--inputs", tmp_path / "in.npz")
    )
    assert message in stderr


def test_more_cores_than_the_machine_has(relu_kernel: Path):
    stderr = failure(ziggurat_run(relu_kernel, "--machine", "davinci", "--cores", "1000"))
    assert "error: cannot run on 1000 cores: machine 'davinci' has" in stderr


def test_machine_options_on_graph_level_ir(program: Path):
    stderr = failure(ziggurat_run(program, "--machine", "davinci", "--trace", "t.json"))
    assert "error: --machine, --trace only apply to npu-level IR" in stderr
    assert "runs on the reference interpreter" in stderr


def test_print_and_report_both_want_stdout(relu_kernel: Path):
    stderr = failure(
        ziggurat_run(relu_kernel, "--machine", "davinci", "--report", "text", "--print")
    )
    assert "error: --print and --report both write to stdout" in stderr


def test_trace_that_cannot_be_written(relu_kernel: Path, tmp_path: Path):
    trace = tmp_path / "missing" / "trace.json"
    stderr = failure(ziggurat_run(relu_kernel, "--machine", "davinci", "--trace", trace))
    assert "trace.json: error: cannot write the trace" in stderr


@pytest.mark.parametrize("option", ["--max-cycles", "--timeout"])
def test_limits_must_be_positive(relu_kernel: Path, option: str):
    done = ziggurat_run(relu_kernel, option, "0")
    assert done.returncode == 1
    assert f"argument {option}: must be positive, got 0" in done.stderr


SPIN_KERNEL = """\
module attributes {npu.machine = "davinci"} {
  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 100000000 : index
    %u = npu.buffer offset 0 : memref<64xf32, "ub">
    scf.for %i = %c0 to %n step %c1 {
      npu.vec.relu %u[0] -> %u[0] : memref<64xf32, "ub"> -> memref<64xf32, "ub">
    }
    func.return
  }
}
"""


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_long_runs_show_progress_on_a_terminal(tmp_path: Path):
    import pty

    kernel = tmp_path / "spin.mlir"
    kernel.write_text(SPIN_KERNEL)
    controller, terminal = pty.openpty()
    with subprocess.Popen(
        [sys.executable, "-m", "ziggurat.tools.ziggurat_run", str(kernel), "--timeout", "2.5"],
        stdout=subprocess.DEVNULL,
        stderr=terminal,
    ) as process:
        os.close(terminal)
        shown = b""
        # read while it runs: a full terminal buffer would block the writer
        with os.fdopen(controller, "rb", buffering=0) as screen:
            while True:
                try:
                    chunk = screen.read(65536)
                except OSError:  # EIO: the terminal's other end is closed, everything was read
                    break
                if not chunk:
                    break
                shown += chunk
        assert process.wait(timeout=120) == 1
    text = shown.decode(errors="replace")
    assert "running @main on davinci" in text
    assert "core 0, cycle " in text
    assert "error: the run exceeded --timeout 2.5 s" in text
    # on a pipe there is no progress, only the diagnostic
    piped = ziggurat_run(kernel, "--timeout", "0.5")
    assert piped.stderr.startswith(f"{kernel}:")
    assert "running @main" not in piped.stderr


def test_graph_level_timeout_stops_at_the_op_it_reached(tmp_path: Path):
    # Each 1500x1500 matmul takes 0.05-0.2 s: the 2 s limit falls inside one of them, after the interpreter's
    # set-up (which a busy machine can stretch past 0.5 s) and long before the last, however fast the machine.
    square = "tensor<1500x1500xf32>"
    chain = "".join(
        f"  %{i} = graph.matmul {'%x' if i == 0 else f'%{i - 1}'}, %x : ({square}, {square}) -> {square}\n"
        for i in range(64)
    )
    program = tmp_path / "slow.mlir"
    program.write_text(
        f"func.func @main(%x: {square}) -> {square} {{\n{chain}  func.return %63 : {square}\n}}\n"
    )
    stderr = failure(ziggurat_run(program, "--timeout", "2"))
    assert re.match(
        rf"{re.escape(str(program))}:\d+:3: error: the run exceeded --timeout 2 s\n  %\d+ = graph.matmul",
        stderr,
    ), stderr


def test_a_closed_stdout_ends_the_run_quietly(tmp_path: Path):
    program = tmp_path / "big.mlir"
    program.write_text(
        "func.func @main(%x: tensor<200000xf32>) -> tensor<200000xf32> {\n"
        "  %0 = graph.relu %x : tensor<200000xf32>\n  func.return %0 : tensor<200000xf32>\n}\n"
    )
    # `ziggurat-run ... --print | head -1`: the reader closes the pipe long before the output ends.
    with subprocess.Popen(
        [sys.executable, "-m", "ziggurat.tools.ziggurat_run", str(program), "--print"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:
        assert process.stdout.readline().startswith(b"result0: tensor<200000xf32>")
        process.stdout.close()
        stderr = process.stderr.read().decode()
        assert process.wait(timeout=120) in (0, 141), stderr
    assert stderr == ""


def test_graph_level_runs_without_loading_the_machine_model(program: Path):
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys\n"
            "from ziggurat.tools.ziggurat_run import parse_arguments, run\n"
            f"run(parse_arguments([{str(program)!r}]))\n"
            "print(sorted(m for m in sys.modules if m.startswith('ziggurat.interpreters')))",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    loaded = done.stdout.splitlines()[-1]
    assert "ziggurat.interpreters.interpreter" in loaded
    assert "npu_interpreter" not in loaded and "machine" not in loaded and "timing" not in loaded
