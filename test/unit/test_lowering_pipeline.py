"""lower-to-npu and compile: their expansion, and the differential suite that runs every
stage of lower-to-npu on the right interpreter and compares it with the graph interpreter."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from benchmark_scripts import load_benchmark
from xdsl.context import Context
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from ziggurat.context import default_context
from ziggurat.diagnostics import DiagnosticError
from ziggurat.interpreters.interpreter import find_function
from ziggurat.lowering.pipelines import LOWER_TO_NPU_PASSES, expand_pipeline
from ziggurat.parsing import parse_source
from ziggurat.testing.differential import (
    apply_pipeline,
    build_passes,
    check_pass_preserves_numerics,
    check_pipeline_stages,
    input_names,
    level_inputs,
    level_of,
    run_at_level,
)

MACHINES = ("davinci", "systolic", "tensorcore")


@pytest.mark.parametrize("machine", MACHINES)
def test_lower_to_npu_expands_to_the_passes_of_the_contract(machine: str):
    passes = expand_pipeline(f"lower-to-npu{{machine={machine}}}").split(",")
    assert [p.split("{")[0] for p in passes] == [p.split("{")[0] for p in LOWER_TO_NPU_PASSES]
    assert passes[3] == f'tile-and-fuse{{machine="{machine}"}}'
    assert passes[-2:] == [
        f'npu-plan-memory{{machine="{machine}"}}',
        f'npu-insert-sync{{machine="{machine}"}}',
    ]


def test_compile_is_graph_opt_then_lower_to_npu():
    assert expand_pipeline("compile{machine=davinci}") == (
        expand_pipeline("graph-opt{machine=davinci}")
        + ","
        + expand_pipeline("lower-to-npu{machine=davinci}")
    )


def test_graph_opt_rewrites_for_the_machine_only_when_given_one():
    """Its machine-dependent rewrites: graph-integer-qdq, first (before graph-fold-constants folds
    the weights' DequantizeLinear), needs the matrix unit's int8 instruction; graph-space-to-depth
    the matrix unit's K and DMA paths."""
    plain = expand_pipeline("graph-opt").split(",")
    for_davinci = expand_pipeline("graph-opt{machine=davinci}").split(",")
    assert not any(p.startswith(("graph-space-to-depth", "graph-integer-qdq")) for p in plain)
    assert for_davinci.pop(0) == 'graph-integer-qdq{machine="davinci"}'
    start = for_davinci.index('graph-space-to-depth{machine="davinci"}')
    assert for_davinci[start + 1] == "graph-fold-constants"  # folds the rearranged weights
    assert for_davinci[:start] + for_davinci[start + 2 :] == plain


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


# --------------------------------------------------------------------------- #
# The differential harness across levels
# --------------------------------------------------------------------------- #

EXAMPLES = Path(__file__).parents[2] / "examples"
NPU_EXAMPLES = EXAMPLES / "npu"


def test_npu_code_runs_with_its_result_arguments_as_outputs():
    # The hand-written GEMM + relu with its output renamed as tile-to-loop names out-params.
    text = (NPU_EXAMPLES / "gemm_relu.mlir").read_text().replace("%Y", "%result0")
    module = parse_source(default_context(), text, "gemm_relu.mlir")
    function = find_function(module)
    assert level_of(module, function) == "npu" and input_names(function) == ["A", "B"]
    a, b = level_inputs(function, seed=1)
    assert (a.shape, b.shape, a.dtype) == ((64, 128), (128, 64), np.float16)
    (y,) = run_at_level(module, [a, b], machine="davinci")
    expected = np.maximum(a.astype(np.float32) @ b.astype(np.float32), 0).astype(np.float16)
    np.testing.assert_allclose(
        y.astype(np.float32), expected.astype(np.float32), rtol=1e-2, atol=0.1
    )


@dataclass(frozen=True)
class ReluToAbs(ModulePass):
    """A wrong lowering step: the relu of the tensor level becomes abs."""

    name = "test-relu-to-abs"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for maximum in [o for o in op.walk() if isinstance(o, arith.MaximumfOp)]:
            absf = math.AbsFOp(maximum.lhs)
            Rewriter.replace_op(maximum, absf)


@dataclass(frozen=True)
class Crash(ModulePass):
    name = "test-crash"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise KeyError("no such thing")


MATMUL_RELU = """
func.func @main(%a: tensor<8x12xf16>, %b: tensor<12x4xf16>) -> tensor<8x4xf16> {
  %c = graph.matmul %a, %b : (tensor<8x12xf16>, tensor<12x4xf16>) -> tensor<8x4xf16>
  %r = graph.relu %c : tensor<8x4xf16>
  func.return %r : tensor<8x4xf16>
}"""


def test_every_stage_is_compared_and_the_first_divergence_named():
    passes = [*build_passes("graph-to-tile"), ReluToAbs(), *build_passes("canonicalize"), Crash()]
    report = check_pipeline_stages(MATMUL_RELU, passes, "davinci", seed=2)
    assert [s.pass_name for s in report.stages] == [
        "graph-to-tile",
        "test-relu-to-abs",
        "canonicalize",
        "test-crash",
    ]
    assert [s.level for s in report.stages[:3]] == ["tensor"] * 3
    assert report.stages[0].ok and not report.ok
    assert report.first_failure is report.stages[1]
    assert report.stages[1].outputs[0].mismatches > 0
    assert (
        "KeyError" in report.stages[3].error
        and "test_lowering_pipeline.py" in report.stages[3].error
    )
    assert "first fails at 'test-relu-to-abs'" in str(report)


# --------------------------------------------------------------------------- #
# The differential suite: kernels through every stage of lower-to-npu
# --------------------------------------------------------------------------- #

BN = """  %scale = graph.constant dense<1.5> : tensor<16xf16>
  %shift = graph.constant dense<0.25> : tensor<16xf16>
  %mean = graph.constant dense<0.1> : tensor<16xf16>
  %var = graph.constant dense<2.0> : tensor<16xf16>"""

KERNEL_TEXTS = {
    "matmul_ragged": """
func.func @main(%a: tensor<100x300xf16>, %b: tensor<300x77xf16>) -> tensor<100x77xf16> {
  %c = graph.matmul %a, %b : (tensor<100x300xf16>, tensor<300x77xf16>) -> tensor<100x77xf16>
  func.return %c : tensor<100x77xf16>
}""",
    "conv3x3": """
func.func @main(%x: tensor<1x16x14x14xf16>, %w: tensor<32x16x3x3xf16>, %b: tensor<32xf16>) -> tensor<1x32x14x14xf16> {
  %y = graph.conv2d %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x14x14xf16>, tensor<32x16x3x3xf16>, tensor<32xf16>) -> tensor<1x32x14x14xf16>
  func.return %y : tensor<1x32x14x14xf16>
}""",
    "conv1x1": """
func.func @main(%x: tensor<1x32x14x14xf16>, %w: tensor<16x32x1x1xf16>) -> tensor<1x16x14x14xf16> {
  %y = graph.conv2d %x, %w : (tensor<1x32x14x14xf16>, tensor<16x32x1x1xf16>) -> tensor<1x16x14x14xf16>
  func.return %y : tensor<1x16x14x14xf16>
}""",
    # ShuffleNet's 1x1 convs over 136 channels: K tiled 64 + 8, the last tile's K rounded up.
    "conv1x1_ragged_k": """
func.func @main(%x: tensor<1x136x7x7xf16>, %w: tensor<136x136x1x1xf16>) -> tensor<1x136x7x7xf16> {
  %y = graph.conv2d %x, %w : (tensor<1x136x7x7xf16>, tensor<136x136x1x1xf16>) -> tensor<1x136x7x7xf16>
  func.return %y : tensor<1x136x7x7xf16>
}""",
    # ShuffleNet's channel shuffle (4 groups of 28 channels) before a strided depthwise
    # conv: the conv's channel tiles cross the shuffled buffer's [28, 4] boundary.
    "channel_shuffle_depthwise": """
func.func @main(%x: tensor<1x112x16x16xf16>) -> tensor<1x112x8x8xf16> {
  %r = graph.relu %x : tensor<1x112x16x16xf16>
  %a = graph.reshape %r : tensor<1x112x16x16xf16> -> tensor<1x4x28x16x16xf16>
  %t = graph.transpose %a {perm = array<i64: 0, 2, 1, 3, 4>} : tensor<1x4x28x16x16xf16> -> tensor<1x28x4x16x16xf16>
  %b = graph.reshape %t : tensor<1x28x4x16x16xf16> -> tensor<1x112x16x16xf16>
  %w = graph.constant dense<0.5> : tensor<112x1x3x3xf16>
  %y = graph.conv2d %b, %w {pads = array<i64: 1, 1, 1, 1>, groups = 112 : i64, strides = array<i64: 2, 2>} : (tensor<1x112x16x16xf16>, tensor<112x1x3x3xf16>) -> tensor<1x112x8x8xf16>
  func.return %y : tensor<1x112x8x8xf16>
}""",
    # The same at ShuffleNet's 7x7: a channel is 98 bytes, so the shuffle's copy inside ub
    # cannot start its vector instructions aligned and goes out to gm and back on the DMAs.
    "channel_shuffle_depthwise_7x7": """
func.func @main(%x: tensor<1x32x7x7xf16>, %w: tensor<32x1x3x3xf16>) -> tensor<1x32x7x7xf16> {
  %r = graph.relu %x : tensor<1x32x7x7xf16>
  %a = graph.reshape %r : tensor<1x32x7x7xf16> -> tensor<1x4x8x7x7xf16>
  %t = graph.transpose %a {perm = array<i64: 0, 2, 1, 3, 4>} : tensor<1x4x8x7x7xf16> -> tensor<1x8x4x7x7xf16>
  %b = graph.reshape %t : tensor<1x8x4x7x7xf16> -> tensor<1x32x7x7xf16>
  %y = graph.conv2d %b, %w {pads = array<i64: 1, 1, 1, 1>, groups = 32 : i64} : (tensor<1x32x7x7xf16>, tensor<32x1x3x3xf16>) -> tensor<1x32x7x7xf16>
  func.return %y : tensor<1x32x7x7xf16>
}""",
    "conv_depthwise": """
func.func @main(%x: tensor<1x16x14x14xf16>, %w: tensor<16x1x3x3xf16>) -> tensor<1x16x14x14xf16> {
  %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, groups = 16 : i64} : (tensor<1x16x14x14xf16>, tensor<16x1x3x3xf16>) -> tensor<1x16x14x14xf16>
  func.return %y : tensor<1x16x14x14xf16>
}""",
    # A depthwise conv past one window step's worth of ub: its 9 steps share one accumulator
    # (tile-to-loop) and, in the loop loop-double-buffer unrolls, their temporaries' bytes
    # (npu-plan-memory splits a live range where the buffer is overwritten whole).
    "conv_depthwise_28": """
func.func @main(%x: tensor<1x16x28x28xf16>, %w: tensor<16x1x3x3xf16>) -> tensor<1x16x28x28xf16> {
  %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, groups = 16 : i64} : (tensor<1x16x28x28xf16>, tensor<16x1x3x3xf16>) -> tensor<1x16x28x28xf16>
  func.return %y : tensor<1x16x28x28xf16>
}""",
    "conv_strided": """
func.func @main(%x: tensor<1x16x15x15xf16>, %w: tensor<32x16x3x3xf16>) -> tensor<1x32x8x8xf16> {
  %y = graph.conv2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x15x15xf16>, tensor<32x16x3x3xf16>) -> tensor<1x32x8x8xf16>
  func.return %y : tensor<1x32x8x8xf16>
}""",
    "conv_bn_relu_add": f"""
func.func @main(%x: tensor<1x16x14x14xf16>, %w: tensor<16x16x3x3xf16>) -> tensor<1x16x14x14xf16> {{
{BN}
  %c = graph.conv2d %x, %w {{pads = array<i64: 1, 1, 1, 1>}} : (tensor<1x16x14x14xf16>, tensor<16x16x3x3xf16>) -> tensor<1x16x14x14xf16>
  %n = graph.batch_norm %c, %scale, %shift, %mean, %var : (tensor<1x16x14x14xf16>, tensor<16xf16>, tensor<16xf16>, tensor<16xf16>, tensor<16xf16>) -> tensor<1x16x14x14xf16>
  %r = graph.relu %n : tensor<1x16x14x14xf16>
  %y = graph.add %r, %x : (tensor<1x16x14x14xf16>, tensor<1x16x14x14xf16>) -> tensor<1x16x14x14xf16>
  func.return %y : tensor<1x16x14x14xf16>
}}""",
    "max_pool": """
func.func @main(%x: tensor<1x16x15x15xf16>) -> tensor<1x16x8x8xf16> {
  %y = graph.max_pool %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x16x15x15xf16> -> tensor<1x16x8x8xf16>
  func.return %y : tensor<1x16x8x8xf16>
}""",
    "avg_pool": """
func.func @main(%x: tensor<1x16x14x14xf16>) -> tensor<1x16x7x7xf16> {
  %y = graph.avg_pool %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x16x14x14xf16> -> tensor<1x16x7x7xf16>
  func.return %y : tensor<1x16x7x7xf16>
}""",
    # Windows that tile their input (2x2 stride 2; a 7x7 average over all of a 7x7 map).
    "tiling_pools": """
func.func @main(%x: tensor<1x32x7x7xf16>, %y: tensor<1x16x8x8xf16>) -> (tensor<1x32x1x1xf16>, tensor<1x16x4x4xf16>) {
  %a = graph.avg_pool %x {kernel = array<i64: 7, 7>} : tensor<1x32x7x7xf16> -> tensor<1x32x1x1xf16>
  %m = graph.max_pool %y {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x16x8x8xf16> -> tensor<1x16x4x4xf16>
  func.return %a, %m : tensor<1x32x1x1xf16>, tensor<1x16x4x4xf16>
}""",
    "global_avg_pool": """
func.func @main(%x: tensor<1x32x7x7xf16>) -> tensor<1x32x1x1xf16> {
  %y = graph.global_avg_pool %x : tensor<1x32x7x7xf16> -> tensor<1x32x1x1xf16>
  func.return %y : tensor<1x32x1x1xf16>
}""",
    # A window too large for one tile of all channels: the vector tile counts the 13x13
    # each output reads (SqueezeNet's last layer has 1000 channels).
    "global_avg_pool_wide": """
func.func @main(%x: tensor<1x256x13x13xf16>) -> tensor<1x256x1x1xf16> {
  %y = graph.global_avg_pool %x : tensor<1x256x13x13xf16> -> tensor<1x256x1x1xf16>
  func.return %y : tensor<1x256x1x1xf16>
}""",
    # ONNX LRN as the importer writes it (AlexNet, Inception v1): squares padded by two
    # channels each side, five channel slices summed, x / (1 + 0.1 * sum) ** 0.75 (the
    # vector unit has no pow: rsqrt steps). A 14x14 channel is 392 bytes: slices of the
    # padded squares start unaligned, so no unit may compute into them.
    "lrn": """
func.func @main(%x: tensor<1x16x14x14xf16>) -> tensor<1x16x14x14xf16> {
  %sq = graph.mul %x, %x : (tensor<1x16x14x14xf16>, tensor<1x16x14x14xf16>) -> tensor<1x16x14x14xf16>
  %p = graph.pad %sq {pads = array<i64: 0, 2, 0, 0, 0, 2, 0, 0>} : tensor<1x16x14x14xf16> -> tensor<1x20x14x14xf16>
  %s0 = graph.slice %p {starts = array<i64: 0>, ends = array<i64: 16>, axes = array<i64: 1>} : tensor<1x20x14x14xf16> -> tensor<1x16x14x14xf16>
  %s1 = graph.slice %p {starts = array<i64: 1>, ends = array<i64: 17>, axes = array<i64: 1>} : tensor<1x20x14x14xf16> -> tensor<1x16x14x14xf16>
  %s2 = graph.slice %p {starts = array<i64: 2>, ends = array<i64: 18>, axes = array<i64: 1>} : tensor<1x20x14x14xf16> -> tensor<1x16x14x14xf16>
  %s3 = graph.slice %p {starts = array<i64: 3>, ends = array<i64: 19>, axes = array<i64: 1>} : tensor<1x20x14x14xf16> -> tensor<1x16x14x14xf16>
  %s4 = graph.slice %p {starts = array<i64: 4>, ends = array<i64: 20>, axes = array<i64: 1>} : tensor<1x20x14x14xf16> -> tensor<1x16x14x14xf16>
  %a1 = graph.add %s0, %s1 : (tensor<1x16x14x14xf16>, tensor<1x16x14x14xf16>) -> tensor<1x16x14x14xf16>
  %a2 = graph.add %a1, %s2 : (tensor<1x16x14x14xf16>, tensor<1x16x14x14xf16>) -> tensor<1x16x14x14xf16>
  %a3 = graph.add %a2, %s3 : (tensor<1x16x14x14xf16>, tensor<1x16x14x14xf16>) -> tensor<1x16x14x14xf16>
  %a4 = graph.add %a3, %s4 : (tensor<1x16x14x14xf16>, tensor<1x16x14x14xf16>) -> tensor<1x16x14x14xf16>
  %alpha = graph.constant dense<0.1> : tensor<f16>
  %scaled = graph.mul %a4, %alpha : (tensor<1x16x14x14xf16>, tensor<f16>) -> tensor<1x16x14x14xf16>
  %one = graph.constant dense<1.0> : tensor<f16>
  %base = graph.add %scaled, %one : (tensor<1x16x14x14xf16>, tensor<f16>) -> tensor<1x16x14x14xf16>
  %beta = graph.constant dense<0.75> : tensor<f16>
  %d = graph.pow %base, %beta : (tensor<1x16x14x14xf16>, tensor<f16>) -> tensor<1x16x14x14xf16>
  %y = graph.div %x, %d : (tensor<1x16x14x14xf16>, tensor<1x16x14x14xf16>) -> tensor<1x16x14x14xf16>
  func.return %y : tensor<1x16x14x14xf16>
}""",
    # SqueezeNet's fire module: 1x1 and 3x3 expand convs + relu computed into their
    # slices of the concat.
    "fire_concat": """
func.func @main(%x: tensor<1x16x10x10xf16>, %w1: tensor<32x16x1x1xf16>, %w3: tensor<32x16x3x3xf16>) -> tensor<1x64x10x10xf16> {
  %a = graph.conv2d %x, %w1 : (tensor<1x16x10x10xf16>, tensor<32x16x1x1xf16>) -> tensor<1x32x10x10xf16>
  %ra = graph.relu %a : tensor<1x32x10x10xf16>
  %b = graph.conv2d %x, %w3 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x10x10xf16>, tensor<32x16x3x3xf16>) -> tensor<1x32x10x10xf16>
  %rb = graph.relu %b : tensor<1x32x10x10xf16>
  %y = graph.concat %ra, %rb {axis = 1 : i64} : (tensor<1x32x10x10xf16>, tensor<1x32x10x10xf16>) -> tensor<1x64x10x10xf16>
  func.return %y : tensor<1x64x10x10xf16>
}""",
    "softmax": """
func.func @main(%x: tensor<32x100xf16>) -> tensor<32x100xf16> {
  %y = graph.softmax %x : tensor<32x100xf16>
  func.return %y : tensor<32x100xf16>
}""",
    "layer_norm": """
func.func @main(%x: tensor<64x96xf32>, %g: tensor<96xf32>, %b: tensor<96xf32>) -> tensor<64x96xf32> {
  %y = graph.layer_norm %x, %g, %b : (tensor<64x96xf32>, tensor<96xf32>, tensor<96xf32>) -> tensor<64x96xf32>
  func.return %y : tensor<64x96xf32>
}""",
    "attention": """
func.func @main(%q: tensor<64x32xf16>, %k: tensor<64x32xf16>, %v: tensor<64x32xf16>) -> tensor<64x32xf16> {
  %kt = graph.transpose %k {perm = array<i64: 1, 0>} : tensor<64x32xf16> -> tensor<32x64xf16>
  %s = graph.matmul %q, %kt : (tensor<64x32xf16>, tensor<32x64xf16>) -> tensor<64x64xf16>
  %scale = graph.constant dense<0.176777> : tensor<f16>
  %t = graph.mul %s, %scale : (tensor<64x64xf16>, tensor<f16>) -> tensor<64x64xf16>
  %p = graph.softmax %t : tensor<64x64xf16>
  %o = graph.matmul %p, %v : (tensor<64x64xf16>, tensor<64x32xf16>) -> tensor<64x32xf16>
  func.return %o : tensor<64x32xf16>
}""",
    # examples/models/mlp.py's layers in f16 (the generators write f32, which no preset's
    # matrix unit multiplies): gemm + bias, relu, gemm + bias, softmax at a temperature
    # that keeps it from saturating on random weights.
    "mlp": """
func.func @main(%x: tensor<16x64xf16>, %w1: tensor<128x64xf16>, %b1: tensor<128xf16>, %w2: tensor<10x128xf16>, %b2: tensor<10xf16>) -> tensor<16x10xf16> {
  %h = graph.gemm %x, %w1, %b1 {trans_b = true} : (tensor<16x64xf16>, tensor<128x64xf16>, tensor<128xf16>) -> tensor<16x128xf16>
  %r = graph.relu %h : tensor<16x128xf16>
  %l = graph.gemm %r, %w2, %b2 {trans_b = true} : (tensor<16x128xf16>, tensor<10x128xf16>, tensor<10xf16>) -> tensor<16x10xf16>
  %t = graph.constant dense<0.05> : tensor<f16>
  %s = graph.mul %l, %t : (tensor<16x10xf16>, tensor<f16>) -> tensor<16x10xf16>
  %p = graph.softmax %s : tensor<16x10xf16>
  func.return %p : tensor<16x10xf16>
}""",
}


KERNELS: dict[str, Callable[[], str | ModuleOp]] = {
    **{name: (lambda text=text: text) for name, text in KERNEL_TEXTS.items()},
    "resnet_block": lambda: (EXAMPLES / "resnet_block.mlir").read_text(),
}

SLOW_KERNELS = {"resnet_block"}
"""Kernels whose run through every stage takes long: only with ZIGGURAT_RUN_SLOW=1."""

RUN_SLOW = os.environ.get("ZIGGURAT_RUN_SLOW", "") not in ("", "0")


KNOWN_FAILURES: dict[tuple[str, str], str] = {}
"""(kernel, machine) -> the first pass of lower-to-npu that fails or diverges there, when this
list was last brought up to date. Not strict: an XPASS means the entry can go."""


def _kernel_cases():
    for name in KERNELS:
        for machine in MACHINES:
            marks = []
            if name in SLOW_KERNELS:
                marks += [
                    pytest.mark.slow,
                    pytest.mark.skipif(not RUN_SLOW, reason="slow; set ZIGGURAT_RUN_SLOW=1"),
                ]
            if (name, machine) in KNOWN_FAILURES:
                marks.append(pytest.mark.xfail(reason=KNOWN_FAILURES[name, machine], strict=False))
            yield pytest.param(name, machine, marks=marks, id=f"{name}-{machine}")


@pytest.mark.parametrize(("kernel", "machine"), list(_kernel_cases()))
def test_every_stage_of_lower_to_npu_keeps_the_numerics(kernel: str, machine: str):
    report = check_pipeline_stages(KERNELS[kernel](), f"lower-to-npu{{machine={machine}}}", machine)
    assert report.ok, str(report)
    assert report.stages[-1].level == "npu"


@pytest.mark.parametrize("machine", ["davinci", "tensorcore"])
@pytest.mark.parametrize("kernel", ["conv_bn_relu_add", "max_pool", "global_avg_pool", "mlp"])
def test_bf16_kernels_keep_the_numerics(kernel: str, machine: str):
    """bf16 is what `ziggurat-compile --precision auto` computes f32 models in where the matrix
    unit has it (davinci's cube since the 910B, tensorcore): f32's range in 16 bits."""
    text = KERNEL_TEXTS[kernel].replace("f16", "bf16")
    report = check_pipeline_stages(text, f"lower-to-npu{{machine={machine}}}", machine)
    assert report.ok, str(report)
    assert str(report.stages[-1].outputs[0].dtype) == "bfloat16"


# ShuffleNet's grouped 1x1 conv (4 groups of 6 -> 28 channels): one contraction whose
# groups are a tile loop (whole, its (g, og) accumulator, 351 KB in f32, would not fit
# davinci's l0c).
GROUPED_CONV = """
func.func @main(%x: tensor<1x24x28x28xf16>, %w: tensor<112x6x1x1xf16>) -> tensor<1x112x28x28xf16> {
  %y = graph.conv2d %x, %w {groups = 4 : i64} : (tensor<1x24x28x28xf16>, tensor<112x6x1x1xf16>) -> tensor<1x112x28x28xf16>
  %r = graph.relu %y : tensor<1x112x28x28xf16>
  func.return %r : tensor<1x112x28x28xf16>
}"""


def test_a_grouped_conv_compiles_through_every_stage():
    report = check_pipeline_stages(GROUPED_CONV, "compile{machine=davinci}", "davinci")
    assert report.ok, str(report)
    assert report.stages[-1].level == "npu"


def test_the_lowering_quality_gemm_is_measured_on_the_lowered_code():
    quality = load_benchmark("lowering_quality")
    row = quality.measure_gemm(64, 64, 64)
    macs_at_peak = 64**3 / quality.load_machine("davinci").peak_macs_per_cycle("f16", "f32")
    assert row.utilization == pytest.approx(macs_at_peak / row.cycles)
    assert row.roofline_bound_by == "compute" and row.roofline_bound_cycles == pytest.approx(
        macs_at_peak
    )


def test_the_lowering_quality_benchmark_runs_on_tiny_sizes(tmp_path: Path):
    quality = load_benchmark("lowering_quality")
    doc = tmp_path / "lowering.md"
    doc.write_text(f"before\n{quality.TABLE_BEGIN}\nold\n{quality.TABLE_END}\nafter\n")
    assert quality.main(["--small", "--results", str(tmp_path), "--doc", str(doc)]) == 0
    results = json.loads((tmp_path / "lowering_quality.json").read_text())
    assert results["gemm"]["shape"] == "64x64x64" and 0 < results["gemm"]["utilization"] <= 1
    block = results["conv_bn_relu"]
    assert block["minimum_bytes"] == (16 * 8 * 8 * 2) * 2 + 16 * 16 * 9 * 2 + 4 * 16 * 2
    assert (
        block["fused_bytes"] >= block["minimum_bytes"]
        and block["unfused_bytes"] >= block["fused_bytes"]
    )
    text = doc.read_text()
    assert "old" not in text and "| lower-to-npu |" in text and text.endswith("after\n")


def test_the_resnet_block_runs_lowered_on_davinci_as_on_the_graph_interpreter():
    text = (EXAMPLES / "resnet_block.mlir").read_text()
    report = check_pass_preserves_numerics(
        text, "lower-to-npu{machine=davinci}", machine="davinci", seed=4
    )
    assert level_of(report.transformed, find_function(report.transformed)) == "npu"
    (output,) = report.outputs
    assert (output.dtype, output.tolerance.rtol, output.tolerance.elementwise[0]) == (
        np.float16,
        1e-2,
        1e-2,
    )
    assert report.ok, str(report)


def _with_entry_points(monkeypatch, *entries: tuple[str, str]) -> None:
    from importlib.metadata import EntryPoint

    from ziggurat import plugins
    from ziggurat.lowering import pipelines

    group = pipelines.ENTRY_POINT_GROUP
    found = [EntryPoint(name, value, group) for name, value in entries]
    monkeypatch.setattr(pipelines, "PIPELINES", dict(pipelines.PIPELINES))
    monkeypatch.setattr(pipelines, "_entry_points_loaded", False)
    monkeypatch.setattr(
        plugins, "entry_points", lambda group: found if group == pipelines.ENTRY_POINT_GROUP else []
    )


def test_plugins_add_pipelines_through_entry_points(monkeypatch):
    _with_entry_points(monkeypatch, ("my-opt", "ziggurat.lowering.pipelines:graph_opt"))
    assert expand_pipeline("cse,my-opt{layout=NHWC}") == "cse," + expand_pipeline(
        "graph-opt{layout=NHWC}"
    )


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            ("graph-opt", "ziggurat.lowering.pipelines:graph_opt"),
            "'graph-opt = .*': pipeline 'graph-opt' is already registered",
        ),
        (
            ("bad", "no_such_module:f"),
            "cannot load entry point 'bad = no_such_module:f'.*ModuleNotFoundError",
        ),
        (
            ("odd", "ziggurat.lowering.pipelines:ENTRY_POINT_GROUP"),
            "must load to a pipeline expander function, got str",
        ),
    ],
)
def test_broken_pipeline_entry_points_are_reported(monkeypatch, entry, message):
    _with_entry_points(monkeypatch, entry)
    with pytest.raises(DiagnosticError, match=message):
        expand_pipeline("cse")


def _grouped_conv(groups: int) -> str:
    channels = 8 * groups
    x, w = f"tensor<1x{channels}x12x12xf16>", f"tensor<{channels}x8x3x3xf16>"
    return f"""
func.func @main(%x: {x}, %w: {w}) -> {x} {{
  %y = graph.conv2d %x, %w {{groups = {groups} : i64, pads = array<i64: 1, 1, 1, 1>}} : ({x}, {w}) -> {x}
  %r = graph.relu %y : {x}
  func.return %r : {x}
}}"""


def _npu_ops(text: str) -> int:
    module = parse_source(default_context(), text, "grouped.mlir")
    apply_pipeline(module, expand_pipeline("compile{machine=davinci}"))
    return sum(1 for _ in module.walk())


def test_a_grouped_conv_lowers_to_code_whose_size_does_not_grow_with_its_groups():
    # 8 input and 8 output channels per group: 4 or 16 groups take the same npu code, the
    # groups a loop; split into one conv per group (graph-split-grouped-conv), it grows.
    assert _npu_ops(_grouped_conv(4)) == _npu_ops(_grouped_conv(16))
    split = "graph-split-grouped-conv,compile{machine=davinci}"
    module = parse_source(default_context(), _grouped_conv(16), "grouped.mlir")
    apply_pipeline(module, expand_pipeline(split))
    assert sum(1 for _ in module.walk()) > 2 * _npu_ops(_grouped_conv(16))
