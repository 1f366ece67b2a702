"""The tensor and loop levels are upstream MLIR: their text parses with upstream dialects alone.

Each kernel is lowered in memory, printed, and parsed again by a Context that
holds only the dialects MLIR itself has (builtin, func, arith, math, scf,
linalg, tensor, memref): no ziggurat dialect is loaded, so an op of ours (or a
syntax only our printer knows) fails the parse. docs/overview.md says which
levels this covers.
"""

from __future__ import annotations

import pytest
from xdsl.context import Context
from xdsl.dialects import arith, builtin, func, linalg, math, memref, scf, tensor
from xdsl.parser import Parser

from ziggurat.context import default_context
from ziggurat.parsing import parse_source
from ziggurat.testing.differential import apply_pipeline
from ziggurat.universe import PASSES

UPSTREAM = (
    builtin.Builtin,
    func.Func,
    arith.Arith,
    math.Math,
    scf.Scf,
    linalg.Linalg,
    tensor.Tensor,
    memref.MemRef,
)

KERNELS = {
    "matmul_relu": """
func.func @main(%a: tensor<64x48xf32>, %b: tensor<48x32xf32>) -> tensor<64x32xf32> {
  %c = graph.matmul %a, %b : (tensor<64x48xf32>, tensor<48x32xf32>) -> tensor<64x32xf32>
  %r = graph.relu %c : tensor<64x32xf32>
  func.return %r : tensor<64x32xf32>
}""",
    "conv_bias_relu": """
func.func @main(%x: tensor<1x8x10x10xf16>, %w: tensor<16x8x3x3xf16>, %b: tensor<16xf16>) -> tensor<1x16x10x10xf16> {
  %c = graph.conv2d %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x10x10xf16>, tensor<16x8x3x3xf16>, tensor<16xf16>) -> tensor<1x16x10x10xf16>
  %r = graph.relu %c : tensor<1x16x10x10xf16>
  func.return %r : tensor<1x16x10x10xf16>
}""",
    "softmax": """
func.func @main(%x: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %s = graph.softmax %x {axis = -1 : i64} : tensor<16x64xf32>
  func.return %s : tensor<16x64xf32>
}""",
}

# Upstream-only levels: the tensor level before and after tiling, and bufferized loops
# before loop-promote-to-memory-space adds ziggurat's async copies.
PIPELINES = {
    "tensor": "graph-to-tile",
    "tiled tensor": "graph-fuse,graph-to-tile,tile-and-fuse{machine=davinci},tile-decompose-conv",
    "loops over buffers": "graph-fuse,graph-to-tile,tile-and-fuse{machine=davinci},tile-decompose-conv,tile-to-loop{machine=davinci}",
}


def upstream_context() -> Context:
    ctx = Context()
    for dialect in UPSTREAM:
        ctx.load_dialect(dialect)
    return ctx


def lowered_text(kernel: str, pipeline: str) -> str:
    module = parse_source(default_context(), kernel, "<kernel>")
    apply_pipeline(module, pipeline)
    return str(module)


def missing_passes(pipeline: str) -> list[str]:
    names = [step.split("{")[0] for step in pipeline.split(",")]
    return [name for name in names if name not in PASSES]


# A padded input bufferizes to ziggurat's `loop.copy {pad}` (MLIR would need tensor.pad's
# bufferization into a fill and a copy); the conv's other levels are upstream.
OURS = {("conv_bias_relu", "loops over buffers")}


@pytest.mark.parametrize(
    "kernel, level",
    [(kernel, level) for kernel in KERNELS for level in PIPELINES if (kernel, level) not in OURS],
)
def test_level_parses_with_upstream_dialects_alone(kernel, level):
    pipeline = PIPELINES[level]
    if missing := missing_passes(pipeline):
        pytest.skip(f"not registered yet: {', '.join(missing)}")
    text = lowered_text(KERNELS[kernel], pipeline)
    module = Parser(upstream_context(), text).parse_module()
    module.verify()
    dialects = {op.dialect_name() for op in module.walk()}
    assert dialects <= {"builtin", "func", "arith", "math", "scf", "linalg", "tensor", "memref"}


def test_an_op_of_ours_fails_the_upstream_parse():
    """The check can fail: graph-level text does not parse with upstream dialects."""
    with pytest.raises(Exception, match="graph.matmul"):
        Parser(upstream_context(), KERNELS["matmul_relu"]).parse_module()
