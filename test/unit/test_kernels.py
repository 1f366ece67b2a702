"""`ziggurat-compile --kernels` (lowering/kernels.py): each group lowered once as a kernel that
@main calls, shared by the groups that differ only in their weights; `--jobs` and the on-disk
`--kernel-cache` do not change the IR; the program computes what the whole lowering (`--no-kernels`) computes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from test_compile_check import qdq_conv_model
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import DenseArrayBase, MemRefType, ModuleOp, StringAttr, i64

from ziggurat.context import default_context
from ziggurat.dialects import graph
from ziggurat.lowering import kernels
from ziggurat.parsing import parse_source
from ziggurat.tools import ziggurat_compile


def compile_main(argv: list[str]) -> int:
    return ziggurat_compile.compile_model(ziggurat_compile.build_argument_parser().parse_args(argv))


def residual_model(batch: int = 1) -> onnx.ModelProto:
    """Three 3x3 conv + bias + relu blocks of the same shape with their own dense weights (one
    kernel), a 1x1 conv to 24 channels and a global pool with a Gemm: odd sizes, O(1) activations."""
    rng = np.random.default_rng(3)
    channels = 12
    initializers, nodes = [], []
    x = "x"
    for block in range(3):
        w = rng.normal(0, 1 / np.sqrt(9 * channels), (channels, channels, 3, 3)).astype(np.float32)
        b = rng.normal(0, 0.1, channels).astype(np.float32)
        initializers += [
            numpy_helper.from_array(w, f"w{block}"),
            numpy_helper.from_array(b, f"b{block}"),
        ]
        nodes += [
            helper.make_node(
                "Conv", [x, f"w{block}", f"b{block}"], [f"c{block}"], pads=[1, 1, 1, 1]
            ),
            helper.make_node("Relu", [f"c{block}"], [f"r{block}"]),
        ]
        x = f"r{block}"
    w = rng.normal(0, 1 / np.sqrt(channels), (24, channels, 1, 1)).astype(np.float32)
    g = rng.normal(0, 1 / np.sqrt(24), (10, 24)).astype(np.float32)
    initializers += [numpy_helper.from_array(w, "wide"), numpy_helper.from_array(g, "fc")]
    nodes += [
        helper.make_node("Conv", [x, "wide"], ["wide_out"]),
        helper.make_node("GlobalAveragePool", ["wide_out"], ["pooled"]),
        helper.make_node("Flatten", ["pooled"], ["flat"]),
        helper.make_node("Gemm", ["flat", "fc"], ["y"], transB=1),
    ]
    graph_ = helper.make_graph(
        nodes,
        "residual",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, channels, 13, 13])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 10])],
        initializers,
    )
    return helper.make_model(graph_, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "residual.onnx"
    onnx.save(residual_model(), path)
    inputs = {"x": np.random.default_rng(5).normal(0, 1, (1, 12, 13, 13)).astype(np.float32)}
    np.savez(tmp_path / "in.npz", **inputs)
    return path


def read(path: Path) -> ModuleOp:
    return parse_source(default_context(), path.read_text(), str(path))


def test_groups_that_differ_in_weights_share_one_kernel(model: Path, tmp_path: Path):
    out = tmp_path / "k.mlir"
    assert (
        compile_main(
            [str(model), "--machine", "davinci", "--kernels", "--jobs", "1", "-o", str(out)]
        )
        == 0
    )
    program = read(out)
    functions = [op for op in program.ops if isinstance(op, func.FuncOp)]
    calls = [op for op in functions[-1].walk() if isinstance(op, func.CallOp)]
    called = [call.callee.root_reference.data for call in calls]
    assert functions[-1].sym_name.data == "main"
    assert len(called) == len(functions) - 1 + 2  # the three conv blocks call one kernel
    assert max(called.count(name) for name in called) == 3
    # each block passes its own weights, a global of the model's values
    weights = [
        op
        for op in program.ops
        if isinstance(op, memref.GlobalOp) and op.sym_name.data.startswith("weight")
    ]
    assert len(weights) >= 5
    shared = [c for c in calls if called.count(c.callee.root_reference.data) == 3]
    passed = {str(c.arguments[-1].owner.name_.root_reference.data) for c in shared}
    assert len(passed) == 3


def test_kernels_compute_what_the_whole_lowering_computes(model: Path, tmp_path: Path, capsys):
    inputs = str(tmp_path / "in.npz")
    flat, outlined = tmp_path / "flat.npz", tmp_path / "kernels.npz"
    assert (
        compile_main(
            [
                str(model),
                "--machine",
                "davinci",
                "--inputs",
                inputs,
                "--run",
                "--no-kernels",
                "--outputs",
                str(flat),
            ]
        )
        == 0
    )
    assert (
        compile_main(
            [
                str(model),
                "--machine",
                "davinci",
                "--kernels",
                "--inputs",
                inputs,
                "--outputs",
                str(outlined),
                "--check",
            ]
        )
        == 0
    )
    assert "check passed" in capsys.readouterr().out
    # the same tiles in the same order: the same bits
    np.testing.assert_array_equal(np.load(flat)["y"], np.load(outlined)["y"])


def test_jobs_and_the_cache_do_not_change_the_ir(model: Path, tmp_path: Path, monkeypatch):
    texts = []
    cache = tmp_path / "cache"
    for argv in (["--jobs", "1"], ["--jobs", "2"], ["--jobs", "1", "--kernel-cache", str(cache)]):
        out = tmp_path / f"k{len(texts)}.mlir"
        assert (
            compile_main([str(model), "--machine", "davinci", "--kernels", *argv, "-o", str(out)])
            == 0
        )
        texts.append(out.read_text())
    assert texts[0] == texts[1] == texts[2]
    entries = sorted(cache.glob("*.json"))
    assert entries

    # warm: every kernel comes from the cache, none is lowered
    def refuse(*args, **kwargs):
        raise AssertionError("lowered a kernel the cache holds")

    monkeypatch.setattr(kernels, "lower_kernel", refuse)
    out = tmp_path / "warm.mlir"
    argv = [
        str(model),
        "--machine",
        "davinci",
        "--kernels",
        "--jobs",
        "1",
        "--kernel-cache",
        str(cache),
    ]
    assert compile_main([*argv, "-o", str(out)]) == 0
    assert out.read_text() == texts[0]
    # a damaged entry is lowered again
    monkeypatch.undo()
    entries[0].write_text("{not json")
    assert compile_main([*argv, "-o", str(out)]) == 0
    assert out.read_text() == texts[0]


def test_kernels_on_several_cores_match_one_core(model: Path, tmp_path: Path, capsys):
    inputs = str(tmp_path / "in.npz")
    one, four = tmp_path / "one.npz", tmp_path / "four.npz"
    base = [str(model), "--machine", "davinci", "--kernels", "--inputs", inputs]
    assert compile_main([*base, "--run", "--outputs", str(one)]) == 0
    assert compile_main([*base, "--cores", "4", "--outputs", str(four), "--check"]) == 0
    assert "check passed" in capsys.readouterr().out
    np.testing.assert_array_equal(np.load(one)["y"], np.load(four)["y"])


def test_a_batch_on_several_cores_matches_one_core(tmp_path: Path, capsys):
    """A batch of 3 (odd, so the cores' shares of it differ) compiled for 4 cores gives one core's
    outputs bit for bit, and the ONNX definition's."""
    path = tmp_path / "batch.onnx"
    onnx.save(residual_model(batch=3), path)
    inputs = tmp_path / "in.npz"
    np.savez(inputs, x=np.random.default_rng(7).normal(0, 1, (3, 12, 13, 13)).astype(np.float32))
    one, four = tmp_path / "one.npz", tmp_path / "four.npz"
    base = [str(path), "--machine", "davinci", "--inputs", str(inputs)]
    assert compile_main([*base, "--run", "--outputs", str(one)]) == 0
    assert compile_main([*base, "--cores", "4", "--outputs", str(four), "--check"]) == 0
    assert "check passed" in capsys.readouterr().out
    assert np.load(one)["y"].shape == (3, 10)
    np.testing.assert_array_equal(np.load(one)["y"], np.load(four)["y"])


def test_int8_kernels_are_exact_on_a_qdq_conv(tmp_path: Path, capsys):
    path = tmp_path / "qdq.onnx"
    onnx.save(qdq_conv_model(), path)
    np.savez(
        tmp_path / "in.npz",
        x=np.random.default_rng(1).normal(0, 1.0, (1, 8, 12, 12)).astype(np.float32),
    )
    assert (
        compile_main(
            [
                str(path),
                "--machine",
                "davinci",
                "--kernels",
                "--check",
                "--inputs",
                str(tmp_path / "in.npz"),
            ]
        )
        == 0
    )
    assert "check passed" in capsys.readouterr().out


def _global_module(array: np.ndarray) -> ModuleOp:
    value = graph.ConstantOp.from_array(array).value
    memref_type = MemRefType(value.get_element_type(), array.shape, memory_space=StringAttr("gm"))
    return ModuleOp([memref.GlobalOp.get(StringAttr("constant0"), memref_type, value)])


def test_a_weight_the_lowering_changes_is_not_shared():
    """A kernel whose global holds a weight rearranged (here transposed) cannot take another
    group's weight in its place: `weight_globals` finds no global with the weight's values."""
    weight = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert kernels.weight_globals(_global_module(weight.T.copy()), [weight]) is None
    same = _global_module(weight)
    assert kernels.weight_globals(same, [weight]) == ["constant0"]
    # narrowed to the type the kernel reads it in: still the weight
    assert kernels.weight_globals(_global_module(weight.astype(np.int8)), [weight]) == ["constant0"]
    # two weights of equal values: the lowering may have merged them
    assert kernels.weight_globals(same, [weight, weight.copy()]) is None


def test_views_are_contiguous_parts_of_their_input():
    """A reshape, and a slice of whole rows, are row-major contiguous: a buffer at an offset."""
    x = graph.ConstantOp.from_array(np.zeros((1, 8, 5, 5), np.float32)).output

    def sliced(starts, ends, axes):
        return graph.SliceOp.create(
            operands=[x],
            result_types=[x.type],
            properties={
                "starts": DenseArrayBase.from_list(i64, starts),
                "ends": DenseArrayBase.from_list(i64, ends),
                "axes": DenseArrayBase.from_list(i64, axes),
            },
        )

    assert kernels.view_offset(sliced([4], [8], [1])) == 4 * 25  # channels 4..7 of one image
    assert kernels.view_offset(sliced([1], [3], [2])) is None  # rows 1..2 of every channel
    assert kernels.view_offset(sliced([2, 1], [3, 3], [1, 2])) == 2 * 25 + 5  # one channel's rows


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_printed_program_is_the_program_that_runs(model: Path, monkeypatch, jobs: str):
    """`-o` writes `Program.text()`; `--run` runs `Program.module()`: the same IR, whether the
    kernels were lowered in this process (IR objects) or in workers (parsed back)."""
    seen = {}
    module_of = kernels.Program.module

    def spy(self, ctx):
        module = module_of(self, ctx)
        seen["module"], seen["text"] = kernels.printed(module), self.text()
        return module

    monkeypatch.setattr(kernels.Program, "module", spy)
    argv = [str(model), "--machine", "davinci", "--kernels", "--jobs", jobs, "--run"]
    assert compile_main(argv) == 0
    assert seen["module"] == seen["text"]


def test_the_precision_decision_is_cached_with_the_ops_it_marks(tmp_path: Path, monkeypatch):
    """`--precision auto` calibrates once per model and inputs; a cached decision marks the same
    ops for bf16 as the calibration did."""
    from ziggurat.lowering import precision as precisions
    from ziggurat.machine import load_machine
    from ziggurat.transforms.graph.convert_float import PRECISION_ATTR

    def module():
        return parse_source(
            default_context(),
            """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
              %y = graph.relu %x : tensor<4xf32>
              %z = graph.exp %y : tensor<4xf32>
              func.return %z : tensor<4xf32>
            }""",
            "<test>",
        )

    calibrations = []

    def calibrate(requested, machine, module, inputs=()):
        calibrations.append(inputs)
        exp = next(op for op in module.walk() if op.name == "graph.exp")
        exp.attributes[PRECISION_ATTR] = precisions.BFloat16Type()
        return precisions.Precision("f16", "calibrated", in_bf16=1)

    cache = kernels.KernelCache(tmp_path / "cache")
    machine = load_machine("davinci")
    inputs = [np.ones(4, np.float32)]
    monkeypatch.setattr(precisions, "choose_precision", calibrate)
    first = precisions.cached_precision("auto", machine, module(), inputs, cache, "model")
    monkeypatch.setattr(precisions, "choose_precision", None)  # a second calibration would fail
    again = module()
    assert precisions.cached_precision("auto", machine, again, inputs, cache, "model") == first
    marked = [op.name for op in again.walk() if PRECISION_ATTR in op.attributes]
    assert marked == ["graph.exp"]
    # other inputs are another calibration
    monkeypatch.setattr(precisions, "choose_precision", calibrate)
    other = precisions.cached_precision("auto", machine, module(), [inputs[0] * 2], cache, "model")
    assert other == first and len(calibrations) == 2


def test_isa_answers_as_before_with_its_constraints_reused():
    from xdsl.dialects.builtin import ArrayAttr, IntAttr, IntegerType
    from xdsl.utils.hints import isa

    for _ in range(2):
        assert isa(ArrayAttr([IntAttr(1)]), ArrayAttr[IntAttr])
        assert not isa(ArrayAttr([IntegerType(8)]), ArrayAttr[IntAttr])
        assert isa(DenseArrayBase.from_list(i64, [1]), DenseArrayBase[IntegerType])


def qdq_residual_model() -> onnx.ModelProto:
    """Two int8 QDQ convs and a residual add of the first one's quantized output: that output is
    read by the add and, widened by a cast of its own, by the second conv."""
    rng = np.random.default_rng(11)
    channels = 16
    initializers = [
        numpy_helper.from_array(np.array(0.02, np.float32), "s_x"),
        numpy_helper.from_array(np.array(0, np.int8), "z"),
        numpy_helper.from_array(np.array(0.05, np.float32), "s_y"),
        numpy_helper.from_array(np.array(0.05, np.float32), "s_r"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s_x", "z"], ["x_q"]),
        helper.make_node("DequantizeLinear", ["x_q", "s_x", "z"], ["x_dq"]),
    ]
    source = "x_dq"
    for n in range(2):
        w = rng.normal(0, 0.3, (channels, channels, 3, 3)).astype(np.float32)
        scale = (np.abs(w).reshape(channels, -1).max(axis=1) / 127).astype(np.float32)
        q = np.clip(np.round(w / scale[:, None, None, None]), -127, 127).astype(np.int8)
        initializers += [
            numpy_helper.from_array(q, f"w{n}_q"),
            numpy_helper.from_array(scale, f"w{n}_s"),
            numpy_helper.from_array(np.zeros(channels, np.int8), f"w{n}_z"),
        ]
        nodes += [
            helper.make_node(
                "DequantizeLinear", [f"w{n}_q", f"w{n}_s", f"w{n}_z"], [f"w{n}"], axis=0
            ),
            helper.make_node("Conv", [source, f"w{n}"], [f"c{n}"], pads=[1, 1, 1, 1]),
            helper.make_node("QuantizeLinear", [f"c{n}", "s_y", "z"], [f"c{n}_q"]),
            helper.make_node("DequantizeLinear", [f"c{n}_q", "s_y", "z"], [f"c{n}_dq"]),
        ]
        source = f"c{n}_dq"
    nodes += [
        helper.make_node("Add", ["c0_dq", "c1_dq"], ["sum"]),
        helper.make_node("QuantizeLinear", ["sum", "s_r", "z"], ["sum_q"]),
        helper.make_node("DequantizeLinear", ["sum_q", "s_r", "z"], ["y"]),
    ]
    graph_ = helper.make_graph(
        nodes,
        "qdq_residual",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, 10, 10])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, channels, 10, 10])],
        initializers,
    )
    return helper.make_model(graph_, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_int8_activations_cross_kernels_narrow(tmp_path: Path, capsys):
    path = tmp_path / "residual.onnx"
    onnx.save(qdq_residual_model(), path)
    x = np.random.default_rng(2).normal(0, 1, (1, 16, 10, 10)).astype(np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    base = [str(path), "--machine", "davinci", "--inputs", str(tmp_path / "in.npz")]
    whole = [*base, "--run", "--no-kernels", "--outputs", str(tmp_path / "flat.npz")]
    assert compile_main(whole) == 0
    out = tmp_path / "k.mlir"
    argv = [*base, "--kernels", "--check", "--outputs", str(tmp_path / "k.npz"), "-o", str(out)]
    assert compile_main(argv) == 0
    assert "check passed" in capsys.readouterr().out
    np.testing.assert_array_equal(
        np.load(tmp_path / "flat.npz")["y"], np.load(tmp_path / "k.npz")["y"]
    )
    # no kernel widens an activation to i32 for another: what crosses between them is i8
    main = [op for op in read(out).ops if isinstance(op, func.FuncOp)][-1]
    crossing = [op.result.type for op in main.walk() if op.name == "npu.buffer"]
    assert crossing and all("i32" not in str(t) for t in crossing)


@pytest.mark.parametrize("cores", [1, 4])
def test_a_kernel_launched_again_is_timed_once_to_the_same_report(
    model: Path, tmp_path: Path, cores: int
):
    """The three conv blocks launch one kernel: the second and third launches compute their
    numbers and take the first one's timing; every figure of the report, the per-layer cycles
    and the trace included, is what timing each launch gives. On several cores a launch starts
    when the cores meet, each with its pipes drained and no other core's transfer in flight, so
    each core takes its own part of the first launch's timing; the report is then the same but
    for float rounding (a replayed launch adds its cycles to another start: 1e-12 relative,
    where the cores' shared bandwidth makes cycles fractions), and its text the same."""
    import json

    from ziggurat.interpreters import npu_interpreter
    from ziggurat.interpreters.report import build_report, format_report
    from ziggurat.interpreters.timing import Timeline
    from ziggurat.interpreters.trace import trace_events
    from ziggurat.machine import load_machine

    out = tmp_path / "k.mlir"
    compiling = [str(model), "--machine", "davinci", "--cores", str(cores), "--kernels"]
    assert compile_main([*compiling, "-o", str(out)]) == 0
    program = read(out)
    x = np.load(tmp_path / "in.npz")["x"]
    replayed = []
    replay = Timeline.replay

    def counting(self, cost, call):
        replayed.append(call)
        return replay(self, cost, call)

    runs = {}
    for each in (True, False):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(Timeline, "replay", counting)
            runs[each] = npu_interpreter.run_npu(program, None, [x], time_each_launch=each)
    # only when not timing each launch: the 2nd and 3rd conv block, on each core
    assert len(replayed) == 2 * cores
    davinci = load_machine("davinci")
    timed, once = (build_report(runs[e].stats, davinci, layers=True) for e in (True, False))
    traces = [trace_events(runs[e].stats) for e in (True, False)]
    np.testing.assert_array_equal(runs[True].outputs[0], runs[False].outputs[0])
    if cores == 1:
        assert json.dumps(timed, sort_keys=True) == json.dumps(once, sort_keys=True)
        assert json.dumps(traces[0]) == json.dumps(traces[1])
        return
    assert format_report(timed) == format_report(once)

    def close(a, b) -> bool:
        if isinstance(a, dict):
            return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
        if isinstance(a, list):
            return len(a) == len(b) and all(close(u, v) for u, v in zip(a, b))
        if isinstance(a, float):
            return a == pytest.approx(b, rel=1e-12, abs=1e-9)
        return a == b

    assert close(json.loads(json.dumps(timed)), json.loads(json.dumps(once)))
    assert close(traces[0], traces[1])


KERNEL_CALLS = """
module attributes {npu.machine = "davinci"} {
  func.func private @relu(%src: memref<16x64xf32, "gm">, %dst: memref<16x64xf32, "gm">) {
    %t = npu.buffer offset 0 : memref<16x64xf32, "ub">
    npu.dma "mte2" %src[0, 0] -> %t[0, 0] {shape = array<i64: 16, 64>} : memref<16x64xf32, "gm"> -> memref<16x64xf32, "ub">
    npu.set_flag "mte2" -> "vector", 0
    npu.wait_flag "mte2" -> "vector", 0
    npu.vec.relu %t[0, 0] -> %t[0, 0] {repeat = 16 : i64} : memref<16x64xf32, "ub"> -> memref<16x64xf32, "ub">
    npu.set_flag "vector" -> "mte3", 0
    npu.wait_flag "vector" -> "mte3", 0
    npu.dma "mte3" %t[0, 0] -> %dst[0, 0] {shape = array<i64: 16, 64>} : memref<16x64xf32, "ub"> -> memref<16x64xf32, "gm">
    func.return
  }
  func.func @main(%x: memref<16x64xf32, "gm">, %z: memref<16x64xf32, "gm">) {
    %y = npu.buffer offset 0 : memref<16x64xf32, "gm">
    func.call @relu(%x, %y) : (memref<16x64xf32, "gm">, memref<16x64xf32, "gm">) -> ()
    func.call @relu(SECOND) : (memref<16x64xf32, "gm">, memref<16x64xf32, "gm">) -> ()
    func.return
  }
}
"""


@pytest.mark.parametrize(("second", "replays"), [("%y, %z", 1), ("%y, %y", 0)])
def test_a_launch_whose_arguments_alias_otherwise_is_timed_again(second: str, replays: int):
    """A launch takes an earlier launch's timing only where its arguments share bytes as that
    one's did: in place (source = destination), its hazards, and so its waits, may differ."""
    from ziggurat.interpreters import npu_interpreter
    from ziggurat.interpreters.timing import Timeline

    program = parse_source(default_context(), KERNEL_CALLS.replace("SECOND", second), "<calls>")
    x = np.arange(-512, 512, dtype=np.float32).reshape(16, 64)
    replayed = []
    replay = Timeline.replay
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Timeline, "replay", lambda *a: replayed.append(a) or replay(*a))
        once = npu_interpreter.run_npu(program, None, [x])
    each = npu_interpreter.run_npu(program, None, [x], time_each_launch=True)
    assert len(replayed) == replays
    assert once.stats.total_cycles == each.stats.total_cycles
    np.testing.assert_array_equal(once.outputs[0], each.outputs[0])
    if second == "%y, %z":
        np.testing.assert_array_equal(once.outputs[0], np.maximum(x, 0))


def test_a_model_kernels_cannot_express_is_lowered_whole(tmp_path: Path, capsys):
    """A model that returns its input: no kernel writes that result. By default it is lowered
    whole, with a note; asked for kernels, it is an error that says why."""
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])
    graph_ = helper.make_graph(nodes, "returns_input", [x], [y, x])
    path = tmp_path / "returns_input.onnx"
    onnx.save(helper.make_model(graph_, opset_imports=[helper.make_opsetid("", 17)]), path)
    assert compile_main([str(path), "--machine", "davinci", "--check"]) == 0
    captured = capsys.readouterr()
    assert "check passed: 2 output(s)" in captured.out
    assert "returns an input, a constant or one value twice); lowering @main whole" in captured.err
    with pytest.raises(kernels.NotKernels, match="computed by a group of its own"):
        compile_main([str(path), "--machine", "davinci", "--kernels"])


def patches_model() -> onnx.ModelProto:
    """A ViT's patch embedding: a conv, then a group that reshapes its output to tokens,
    transposes them and adds a position embedding."""
    rng = np.random.default_rng(4)
    w = rng.normal(0, 0.2, (24, 8, 2, 2)).astype(np.float32)
    position = rng.normal(0, 0.1, (1, 36, 24)).astype(np.float32)
    initializers = [
        numpy_helper.from_array(w, "w"),
        numpy_helper.from_array(np.array([1, 24, 36], np.int64), "tokens"),
        numpy_helper.from_array(position, "position"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], strides=[2, 2]),
        helper.make_node("Reshape", ["c", "tokens"], ["r"]),
        helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1]),
        helper.make_node("Add", ["t", "position"], ["y"]),
    ]
    graph_ = helper.make_graph(
        nodes,
        "patches",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 12, 12])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 36, 24])],
        initializers,
    )
    return helper.make_model(graph_, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_a_group_that_reshapes_its_input_takes_it_reshaped(tmp_path: Path, capsys):
    """The tokens group reshapes the conv's output first: its kernel takes the conv's buffer as
    1x24x36 (the same bytes), as the whole lowering folds that reshape into the group's loops."""
    path = tmp_path / "patches.onnx"
    onnx.save(patches_model(), path)
    out = tmp_path / "k.mlir"
    assert compile_main([str(path), "--machine", "davinci", "--check", "-o", str(out)]) == 0
    captured = capsys.readouterr()
    assert "check passed" in captured.out and "lowering @main whole" not in captured.err
    main = [op for op in read(out).ops if isinstance(op, func.FuncOp)][-1]
    buffers = {op.result: op for op in main.walk() if op.name == "npu.buffer"}
    shapes = [tuple(b.result.type.get_shape()) for b in buffers.values()]
    conv_out = next(
        b for b in buffers.values() if tuple(b.result.type.get_shape()) == (1, 24, 6, 6)
    )
    tokens = next(b for b in buffers.values() if tuple(b.result.type.get_shape()) == (1, 24, 36))
    assert tokens.byte_offset == conv_out.byte_offset, shapes  # the same bytes, reshaped


def test_a_group_that_lowers_only_with_its_neighbours_makes_the_whole_lowering(
    model: Path, monkeypatch, capsys
):
    """Where a group does not lower on its own, the default lowers @main whole, saying why;
    asked for kernels, the error is the group's."""
    from ziggurat.diagnostics import Diagnostic, DiagnosticError

    def refuse(job, module=None):
        raise DiagnosticError(Diagnostic("error", "loop-to-npu cannot fold this view"))

    monkeypatch.setattr(kernels, "lower_kernel", refuse)
    argv = [str(model), "--machine", "davinci", "--jobs", "1", "--run"]
    assert compile_main(argv) == 0
    assert (
        "note: kernels: a group does not lower on its own: loop-to-npu cannot fold this view; "
        "lowering @main whole" in capsys.readouterr().err
    )
    with pytest.raises(kernels.NotKernels, match="cannot fold this view"):
        compile_main([*argv, "--kernels"])
