"""tile-and-fuse and the tiling interface: numerics against the graph interpreter,
loop structure, tile sizes from the machines."""

from __future__ import annotations

import pytest
from xdsl.dialects import scf, tensor
from xdsl.dialects.linalg import ops as linalg

from ziggurat.backends.machine import load_machine
from ziggurat.diagnostics import DiagnosticError, parse_source
from ziggurat.context import default_context
from ziggurat.lowering.differential import check_pass_preserves_numerics

MACHINES = ["davinci", "systolic", "tensorcore"]

KERNELS = {
    "ragged_matmul": """
    func.func @main(%a: tensor<100x300xf16>, %b: tensor<300x77xf16>) -> tensor<100x77xf16> {
      %y = graph.matmul %a, %b : (tensor<100x300xf16>, tensor<300x77xf16>) -> tensor<100x77xf16>
      func.return %y : tensor<100x77xf16>
    }""",
    "conv3x3": """
    func.func @main(%x: tensor<1x16x20x20xf16>, %w: tensor<32x16x3x3xf16>) -> tensor<1x32x20x20xf16> {
      %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x20x20xf16>, tensor<32x16x3x3xf16>) -> tensor<1x32x20x20xf16>
      func.return %y : tensor<1x32x20x20xf16>
    }""",
    "conv1x1": """
    func.func @main(%x: tensor<2x64x14x14xf16>, %w: tensor<48x64x1x1xf16>) -> tensor<2x48x14x14xf16> {
      %y = graph.conv2d %x, %w : (tensor<2x64x14x14xf16>, tensor<48x64x1x1xf16>) -> tensor<2x48x14x14xf16>
      func.return %y : tensor<2x48x14x14xf16>
    }""",
    "depthwise": """
    func.func @main(%x: tensor<1x32x40x40xf16>, %w: tensor<32x1x3x3xf16>) -> tensor<1x32x40x40xf16> {
      %y = graph.conv2d %x, %w {groups = 32 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x40x40xf16>, tensor<32x1x3x3xf16>) -> tensor<1x32x40x40xf16>
      func.return %y : tensor<1x32x40x40xf16>
    }""",
    "strided_conv": """
    func.func @main(%x: tensor<1x16x23x23xf16>, %w: tensor<32x16x3x3xf16>) -> tensor<1x32x11x11xf16> {
      %y = graph.conv2d %x, %w {strides = array<i64: 2, 2>} : (tensor<1x16x23x23xf16>, tensor<32x16x3x3xf16>) -> tensor<1x32x11x11xf16>
      func.return %y : tensor<1x32x11x11xf16>
    }""",
    "conv_bias_relu_add": """
    func.func @main(%x: tensor<1x32x24x24xf16>, %w: tensor<32x32x3x3xf16>, %b: tensor<32xf16>) -> tensor<1x32x24x24xf16> {
      %c = graph.conv2d %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x24x24xf16>, tensor<32x32x3x3xf16>, tensor<32xf16>) -> tensor<1x32x24x24xf16>
      %r = graph.relu %c : tensor<1x32x24x24xf16>
      %y = graph.add %r, %x : (tensor<1x32x24x24xf16>, tensor<1x32x24x24xf16>) -> tensor<1x32x24x24xf16>
      func.return %y : tensor<1x32x24x24xf16>
    }""",
    "softmax": """
    func.func @main(%x: tensor<256x300xf16>) -> tensor<256x300xf16> {
      %y = graph.softmax %x : tensor<256x300xf16>
      func.return %y : tensor<256x300xf16>
    }""",
    "layer_norm": """
    func.func @main(%x: tensor<4x128x256xf16>, %g: tensor<256xf16>, %b: tensor<256xf16>) -> tensor<4x128x256xf16> {
      %y = graph.layer_norm %x, %g, %b {axis = -1 : i64} : (tensor<4x128x256xf16>, tensor<256xf16>, tensor<256xf16>) -> tensor<4x128x256xf16>
      func.return %y : tensor<4x128x256xf16>
    }""",
    "attention": """
    func.func @main(%q: tensor<128x64xf16>, %k: tensor<64x128xf16>, %v: tensor<128x64xf16>) -> tensor<128x64xf16> {
      %s = graph.matmul %q, %k : (tensor<128x64xf16>, tensor<64x128xf16>) -> tensor<128x128xf16>
      %scale = graph.constant dense<0.125> : tensor<f16>
      %z = graph.mul %s, %scale : (tensor<128x128xf16>, tensor<f16>) -> tensor<128x128xf16>
      %p = graph.softmax %z : tensor<128x128xf16>
      %o = graph.matmul %p, %v : (tensor<128x128xf16>, tensor<128x64xf16>) -> tensor<128x64xf16>
      func.return %o : tensor<128x64xf16>
    }""",
}

PIPELINE = "graph-fuse,graph-to-tile,tile-and-fuse{{machine={machine}}}"


def loops_of(module) -> list[scf.ForOp]:
    return [op for op in module.walk() if isinstance(op, scf.ForOp)]


@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("name", list(KERNELS))
def test_tiled_kernel_keeps_the_numerics(name, machine):
    report = check_pass_preserves_numerics(KERNELS[name], PIPELINE.format(machine=machine))
    assert report.ok, report
