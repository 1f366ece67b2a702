"""`--timing` (ziggurat/timing_report.py): the stage table's accounting, and on every tool a table
on stderr that names the stages and passes while stdout and the output files stay byte for byte
what the run without `--timing` writes."""

from __future__ import annotations

import io
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from ziggurat import timing_report
from ziggurat.timing_report import NULL_TIMER, StageTimer, active_timer, clock, timed, timing
from ziggurat.tools import (
    ziggurat_compile,
    ziggurat_opt,
    ziggurat_run,
    ziggurat_sweep,
    ziggurat_tune,
)

HEADER = "... Execution time report ..."
ROW = re.compile(r"^\s*([\d.]+) \(\s*([\d.]+)%\)\s+([\d.]+) \(\s*([\d.]+)%\)  ([ \d]{7})  (.*)$")


def rows(report: str) -> list[tuple[float, float, int, str]]:
    """(wall, CPU, calls, name as indented) of each row of a report."""
    found = []
    for line in report.splitlines():
        match = ROW.match(line)
        if match:
            wall, _, cpu, _, calls, name = match.groups()
            found.append((float(wall), float(cpu), int(calls.strip() or 1), name))
    return found


def names(report: str) -> list[str]:
    return [name for _, _, _, name in rows(report)]


def calls(report: str, name: str) -> int:
    return next(count for _, _, count, row in rows(report) if row == name)


# --------------------------------------------------------------------------- #
# The table
# --------------------------------------------------------------------------- #


def test_stages_accumulate_with_their_calls_in_the_order_first_met():
    timer = StageTimer()
    with timer.stage("parse"):
        pass
    for _ in range(3):
        with timer.stage("canonicalize"):
            with timer.stage("walk"):
                time.sleep(0.002)
    with timer.stage("parse"):
        pass
    report = timer.report()
    lines = report.splitlines()
    assert lines[0] == lines[2] == "===" + "-" * 73 + "==="
    assert lines[1].strip() == HEADER
    assert re.fullmatch(r"  Total Execution Time: [\d.]+ seconds", lines[3])
    assert "----Wall Time----" in lines[5] and "----CPU Time----" in lines[5]
    assert names(report) == ["parse", "canonicalize", "  walk", "Rest", "Total"]
    assert calls(report, "parse") == 2 and calls(report, "canonicalize") == 3
    assert calls(report, "  walk") == 3
    by_name = {name: wall for wall, _, _, name in rows(report)}
    assert by_name["canonicalize"] >= 0.006
    # The top-level stages and Rest make up the total.
    top = ("parse", "canonicalize", "Rest")
    assert sum(by_name[n] for n in top) == pytest.approx(by_name["Total"], abs=5e-4)


def test_a_stage_that_raises_is_still_counted():
    timer = StageTimer()
    with pytest.raises(ValueError), timer.stage("fails"):
        raise ValueError
    with timer.stage("after"):
        pass
    # "after" is a top-level stage: the failed one did not stay open.
    assert names(timer.report())[:2] == ["fails", "after"]


def test_a_stage_measured_before_the_timer_existed_is_recorded():
    start = clock()
    time.sleep(0.005)
    timer = StageTimer(start)
    timer.record("setup", since=start)
    report = timer.report()
    assert names(report) == ["setup", "Rest", "Total"]
    assert rows(report)[0][0] >= 0.004


def test_timing_activates_a_timer_and_reports_when_the_block_ends():
    stream = io.StringIO()
    assert active_timer() is NULL_TIMER
    with pytest.raises(RuntimeError), timing(True, stream):
        assert active_timer() is not NULL_TIMER
        with timed("work"):
            raise RuntimeError
    assert active_timer() is NULL_TIMER
    assert HEADER in stream.getvalue() and "work" in names(stream.getvalue())


def test_without_timing_a_stage_is_a_shared_no_op():
    with timing(False) as timer:
        assert timer is NULL_TIMER
        assert timed("a") is timed("b")
        with timed("a"):
            pass
    assert timing_report.active_timer() is NULL_TIMER


# --------------------------------------------------------------------------- #
# The tools
# --------------------------------------------------------------------------- #


def run_tool(main: Callable[[Sequence[str]], None], argv: Sequence[str], capsys) -> tuple[str, str]:
    """(stdout, stderr) of a console script's `main` that exits 0."""
    with pytest.raises(SystemExit) as exit:
        main(list(argv))
    out, err = capsys.readouterr()
    assert exit.value.code == 0, err
    return out, err


def with_and_without_timing(main, argv, capsys, outputs: Sequence[Path] = ()) -> str:
    """The report of a run with --timing, after checking that its stdout and `outputs` are those
    of the same run without it, and that the run without it prints no table."""
    plain_out, plain_err = run_tool(main, argv, capsys)
    plain_files = [path.read_bytes() for path in outputs]
    timed_out, timed_err = run_tool(main, [*argv, "--timing"], capsys)
    assert timed_out == plain_out
    assert [path.read_bytes() for path in outputs] == plain_files
    assert HEADER not in plain_err and HEADER in timed_err
    assert "Total Execution Time:" in timed_err
    return timed_err


def in_order(report: str, expected: Sequence[str]) -> None:
    listed = names(report)
    assert all(name in listed for name in expected), listed
    assert sorted(expected, key=listed.index) == list(expected), listed


GRAPH = """
func.func @main(%a: tensor<32x64xf16>, %b: tensor<64x32xf16>) -> tensor<32x32xf16> {
  %c = graph.matmul %a, %b : (tensor<32x64xf16>, tensor<64x32xf16>) -> tensor<32x32xf16>
  %r = graph.relu %c : tensor<32x32xf16>
  %s = graph.relu %c : tensor<32x32xf16>
  %t = graph.add %r, %s : (tensor<32x32xf16>, tensor<32x32xf16>) -> tensor<32x32xf16>
  func.return %t : tensor<32x32xf16>
}
"""


@pytest.fixture
def graph_file(tmp_path: Path) -> Path:
    path = tmp_path / "gemm.mlir"
    path.write_text(GRAPH)
    return path


def test_opt_lists_each_pass_of_a_named_pipeline_by_leaf_name(graph_file, tmp_path, capsys):
    output = tmp_path / "out.mlir"
    report = with_and_without_timing(
        ziggurat_opt.main,
        [str(graph_file), "-p", "canonicalize,compile{machine=davinci}", "-o", str(output)],
        capsys,
        [output],
    )
    in_order(
        report,
        ["setup", "parse", "verify", "canonicalize", "graph-to-tile", "tile-to-loop",
         "loop-to-npu", "npu-insert-sync", "print", "Total"],
    )  # fmt: skip
    assert "compile" not in names(report) and "lower-to-npu" not in names(report)
    # canonicalize runs again inside lower-to-npu: one row, two calls; verify after every pass
    assert calls(report, "canonicalize") == 2
    assert calls(report, "verify") > 10


def test_opt_keeps_time_passes(graph_file, capsys):
    out, err = run_tool(ziggurat_opt.main, [str(graph_file), "-p", "cse,dce", "--time-passes",
                                            "--timing"], capsys)  # fmt: skip
    assert re.search(r"Pass cse took [\d.e-]+ seconds", out)
    assert "cse" in names(err) and "dce" in names(err)


def test_run_times_parsing_and_the_interpreter(graph_file, tmp_path, capsys):
    lowered = tmp_path / "gemm.npu.mlir"
    run_tool(
        ziggurat_opt.main,
        [str(graph_file), "-p", "lower-to-npu{machine=davinci}", "-o", str(lowered)],
        capsys,
    )
    trace = tmp_path / "trace.json"
    report = with_and_without_timing(
        ziggurat_run.main,
        [str(lowered), "--machine", "davinci", "--report", "text", "--trace", str(trace)],
        capsys,
    )
    in_order(report, ["parse", "verify", "inputs", "run", "trace", "report", "Total"])
    report = with_and_without_timing(ziggurat_run.main, [str(graph_file)], capsys)
    in_order(report, ["parse", "verify", "inputs", "run", "outputs", "Total"])


def mlp_model() -> onnx.ModelProto:
    rng = np.random.default_rng(3)
    initializers = [
        numpy_helper.from_array(rng.normal(0, 0.3, (16, 32)).astype(np.float32), "w"),
        numpy_helper.from_array(rng.normal(0, 0.1, (32,)).astype(np.float32), "b"),
    ]
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["xw"]),
        helper.make_node("Add", ["xw", "b"], ["h"]),
        helper.make_node("Relu", ["h"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [8, 32])],
        initializers,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_compile_times_import_each_lowering_pass_and_the_run(tmp_path, capsys):
    model = tmp_path / "mlp.onnx"
    onnx.save(mlp_model(), model)
    output = tmp_path / "mlp.npu.mlir"
    report = with_and_without_timing(
        ziggurat_compile.main,
        [str(model), "--machine", "davinci", "-o", str(output), "--run", "--check", "--no-kernels"],
        capsys,
        [output],
    )
    in_order(
        report,
        ["load", "import", "choose-precision", "graph-convert-float", "graph-to-tile",
         "tile-and-fuse", "tile-to-loop", "loop-to-npu", "npu-plan-memory", "verify", "print",
         "write", "run", "onnxruntime", "compare", "Total"],
    )  # fmt: skip
    # graph-fold-constants runs in graph-opt and again in lower-to-npu
    assert calls(report, "graph-fold-constants") == 2
    # kernels lowered in this process: each pass a row under `kernels`, one call per kernel
    report = with_and_without_timing(
        ziggurat_compile.main,
        [str(model), "--machine", "davinci", "-o", str(output), "--run", "--jobs", "1"],
        capsys,
        [output],
    )
    in_order(
        report,
        ["load", "import", "choose-precision", "graph-convert-float", "kernels",
         "  graph-to-tile", "  tile-and-fuse", "  loop-to-npu", "  npu-insert-sync", "  verify",
         "  print", "print", "write", "assemble", "run", "Total"],
    )  # fmt: skip
    report = with_and_without_timing(ziggurat_compile.main, [str(model), "--opt"], capsys)
    in_order(report, ["import", "graph-fold-constants", "graph-canonicalize", "cse", "dce",
                      "verify", "print"])  # fmt: skip


def test_tune_times_its_search(tmp_path, capsys):
    source = tmp_path / "gemm.mlir"
    source.write_text(GRAPH)
    output = tmp_path / "tuned.mlir"
    argv = [str(source), "--machine", "davinci", "--jobs", "1", "--top-k", "1",
            "--bufferings", "", "--no-stage", "-o", str(output)]  # fmt: skip
    report = with_and_without_timing(ziggurat_tune.main, argv, capsys, [output])
    in_order(report, ["parse", "verify", "tune", "  tune schedules", "print", "write"])


def test_sweep_times_its_points(graph_file, capsys):
    argv = [str(graph_file), "--machine", "davinci", "--set", "memory.l1.capacity=1MiB",
            "--jobs", "1"]  # fmt: skip
    report = with_and_without_timing(ziggurat_sweep.main, argv, capsys)
    in_order(report, ["grid", "points", "table", "Total"])


@pytest.mark.parametrize(
    "module", [ziggurat_compile, ziggurat_run, ziggurat_tune, ziggurat_sweep, ziggurat_opt]
)
def test_every_tool_documents_the_option(module, capsys):
    if module is ziggurat_opt:
        with pytest.raises(SystemExit):
            ziggurat_opt.main(["--help"])
        text = capsys.readouterr().out
    else:
        text = module.build_argument_parser().format_help()
    assert "--timing" in text and "-mlir-timing" in " ".join(text.split())
