"""loop-promote-to-memory-space, loop-hoist-copies and loop-double-buffer (docs/lowering.md section 5).

Numerics: each kernel at the loop level (hand-written tile loops, or graph-to-tile +
tile-to-loop output) runs on the loop interpreter before and after the passes, on
the same random inputs, on the three presets; the first kernel is also checked
against numpy. Structure: where buffers end up, read from the machine.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import memref, scf

from ziggurat.context import default_context
from ziggurat.diagnostics import DiagnosticError
from ziggurat.dialects.loop import CopyAsyncOp
from ziggurat.interpreters.loop_interpreter import run_loop_function
from ziggurat.machine import load_machine
from ziggurat.parsing import parse_source
from ziggurat.testing.differential import apply_pipeline, check_pass_preserves_numerics
from ziggurat.transforms.loop.buffers import space_of
from ziggurat.transforms.loop.memory_routes import hops, route

PRESETS = ["davinci", "systolic", "tensorcore"]

CONTRACTION_BODY = """
    ^bb0(%x: f16, %y: f16, %o: f32):
      %xe = arith.extf %x : f16 to f32
      %ye = arith.extf %y : f16 to f32
      %p = arith.mulf %xe, %ye : f32
      %s = arith.addf %o, %p : f32
      linalg.yield %s : f32
    }"""
MATMUL_MAPS = (
    "indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, "
    'affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]'
)
IDENTITY2 = (
    "indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], "
    'iterator_types = ["parallel", "parallel"]'
)

# Matmul + relu in tile loops over rows (%i) and K (%k), as tile-to-loop writes it.
MATMUL_RELU = f"""
func.func @matmul_relu(%A: memref<64x96xf16, "GM">, %B: memref<96x32xf16, "GM">, %result0: memref<64x32xf16, "GM">) {{
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %c96 = arith.constant 96 : index
  %zero = arith.constant 0.0 : f32
  %hzero = arith.constant 0.0 : f16
  scf.for %i = %c0 to %c64 step %c32 {{
    %acc = memref.alloc() : memref<32x32xf32>
    linalg.fill ins(%zero : f32) outs(%acc : memref<32x32xf32>)
    scf.for %k = %c0 to %c96 step %c32 {{
      %a = memref.subview %A[%i, %k] [32, 32] [1, 1] : memref<64x96xf16, "GM"> to memref<32x32xf16, strided<[96, 1], offset: ?>, "GM">
      %b = memref.subview %B[%k, 0] [32, 32] [1, 1] : memref<96x32xf16, "GM"> to memref<32x32xf16, strided<[32, 1], offset: ?>, "GM">
      linalg.generic {{{MATMUL_MAPS}}} ins(%a, %b : memref<32x32xf16, strided<[96, 1], offset: ?>, "GM">, memref<32x32xf16, strided<[32, 1], offset: ?>, "GM">) outs(%acc : memref<32x32xf32>) {{{CONTRACTION_BODY}
    }}
    %t = memref.alloc() : memref<32x32xf16>
    linalg.generic {{{IDENTITY2}}} ins(%acc : memref<32x32xf32>) outs(%t : memref<32x32xf16>) {{
    ^bb0(%x: f32, %o: f16):
      %r = arith.truncf %x : f32 to f16
      linalg.yield %r : f16
    }}
    %out = memref.subview %result0[%i, 0] [32, 32] [1, 1] : memref<64x32xf16, "GM"> to memref<32x32xf16, strided<[32, 1], offset: ?>, "GM">
    linalg.generic {{{IDENTITY2}}} ins(%t : memref<32x32xf16>) outs(%out : memref<32x32xf16, strided<[32, 1], offset: ?>, "GM">) {{
    ^bb0(%x: f16, %o: f16):
      %r = arith.maximumf %x, %hzero : f16
      linalg.yield %r : f16
    }}
  }}
  func.return
}}
"""

# A ragged 100x77x300 matmul: K in two tiles of 128 and a peeled remainder of 44 (tile starts stay
# 32-byte aligned in global memory); every buffer of the matrix unit is padded.
RAGGED_STEP = """linalg.generic {{{maps}}} ins(%a{t}, %b{t} : memref<100x{k}xf16, strided<[300, 1], offset: {oa}>, "GM">, memref<{k}x77xf16, strided<[77, 1], offset: {ob}>, "GM">) outs(%acc : memref<100x77xf32>) {{{body}"""
RAGGED = f"""
func.func @ragged(%A: memref<100x300xf16, "GM">, %B: memref<300x77xf16, "GM">, %result0: memref<100x77xf32, "GM">) {{
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<100x77xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<100x77xf32>)
  scf.for %k = %c0 to %c256 step %c128 {{
    %a = memref.subview %A[0, %k] [100, 128] [1, 1] : memref<100x300xf16, "GM"> to memref<100x128xf16, strided<[300, 1], offset: ?>, "GM">
    %b = memref.subview %B[%k, 0] [128, 77] [1, 1] : memref<300x77xf16, "GM"> to memref<128x77xf16, strided<[77, 1], offset: ?>, "GM">
    {RAGGED_STEP.format(maps=MATMUL_MAPS, t="", k=128, oa="?", ob="?", body=CONTRACTION_BODY)}
  }}
  %ar = memref.subview %A[0, 256] [100, 44] [1, 1] : memref<100x300xf16, "GM"> to memref<100x44xf16, strided<[300, 1], offset: 256>, "GM">
  %br = memref.subview %B[256, 0] [44, 77] [1, 1] : memref<300x77xf16, "GM"> to memref<44x77xf16, strided<[77, 1], offset: 19712>, "GM">
  {RAGGED_STEP.format(maps=MATMUL_MAPS, t="r", k=44, oa=256, ob=19712, body=CONTRACTION_BODY)}
  loop.copy %acc -> %result0 : memref<100x77xf32> -> memref<100x77xf32, "GM">
  func.return
}}
"""

# Row blocks %i outside column blocks %j: the lhs tile is the same for every %j (loop-hoist-copies' case).
MATMUL_IJ = f"""
func.func @matmul_ij(%A: memref<64x32xf16, "GM">, %B: memref<32x64xf16, "GM">, %result0: memref<64x64xf32, "GM">) {{
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c64 step %c32 {{
    scf.for %j = %c0 to %c64 step %c32 {{
      %a = memref.subview %A[%i, 0] [32, 32] [1, 1] : memref<64x32xf16, "GM"> to memref<32x32xf16, strided<[32, 1], offset: ?>, "GM">
      %b = memref.subview %B[0, %j] [32, 32] [1, 1] : memref<32x64xf16, "GM"> to memref<32x32xf16, strided<[64, 1], offset: ?>, "GM">
      %acc = memref.alloc() : memref<32x32xf32>
      linalg.fill ins(%zero : f32) outs(%acc : memref<32x32xf32>)
      linalg.generic {{{MATMUL_MAPS}}} ins(%a, %b : memref<32x32xf16, strided<[32, 1], offset: ?>, "GM">, memref<32x32xf16, strided<[64, 1], offset: ?>, "GM">) outs(%acc : memref<32x32xf32>) {{{CONTRACTION_BODY}
      %out = memref.subview %result0[%i, %j] [32, 32] [1, 1] : memref<64x64xf32, "GM"> to memref<32x32xf32, strided<[64, 1], offset: ?>, "GM">
      loop.copy %acc -> %out : memref<32x32xf32> -> memref<32x32xf32, strided<[64, 1], offset: ?>, "GM">
    }}
  }}
  func.return
}}
"""

CONV_RELU = """
func.func @main(%x: tensor<1x4x8x8xf16>, %w: tensor<8x4x3x3xf16>) -> tensor<1x8x8x8xf16> {
  %c = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x8x8xf16>, tensor<8x4x3x3xf16>) -> tensor<1x8x8x8xf16>
  %r = graph.relu %c : tensor<1x8x8x8xf16>
  func.return %r : tensor<1x8x8x8xf16>
}
"""

SOFTMAX = """
func.func @main(%x: tensor<16x64xf16>) -> tensor<16x64xf16> {
  %r = graph.softmax %x : tensor<16x64xf16>
  func.return %r : tensor<16x64xf16>
}
"""


def parse(text: str):
    return parse_source(default_context(), text, "<test>")


def loop_level(kernel: str, machine: str):
    """The kernel at the loop level for `machine`: hand-written ones get the machine's global space."""
    if kernel in ("conv_relu", "softmax"):
        module = parse(CONV_RELU if kernel == "conv_relu" else SOFTMAX)
        apply_pipeline(
            module,
            f"graph-to-tile,tile-decompose-conv,tile-vectorize{{machine={machine}}},canonicalize,tile-to-loop{{machine={machine}}}",
        )
        return module
    if kernel in LIT_KERNELS:
        text = (
            (Path(__file__).parents[1] / "loop" / LIT_KERNELS[kernel])
            .read_text()
            .replace('"gm"', '"GM"')
        )
    else:
        text = {"matmul_relu": MATMUL_RELU, "matmul_ij": MATMUL_IJ, "ragged": RAGGED}[kernel]
    return parse(text.replace('"GM"', f'"{load_machine(machine).global_memory().name}"'))


LIT_KERNELS = {
    "gemm_bias": "promote-epilogue.mlir",  # a bias added to the accumulator in place
    "gemm_bias_residual": "promote-epilogue-residual.mlir",  # then truncated, a residual added in place
}
"""Kernels that are lit tests' inputs, by file in test/loop."""


def promote(machine: str) -> str:
    """Promotion and the legalization of the copies it leaves, as lower-to-npu runs them."""
    return f"loop-promote-to-memory-space{{machine={machine}}},loop-legalize-copies{{machine={machine}}}"


PIPELINES = {
    "promote": promote,
    "promote+hoist": lambda m: f"{promote(m)},loop-hoist-copies",
    "promote+hoist+loop-double-buffer": lambda m: (
        f"{promote(m)},loop-hoist-copies,loop-double-buffer{{machine={m}}}"
    ),
}


@pytest.mark.parametrize("pipeline", list(PIPELINES))
@pytest.mark.parametrize(
    "kernel", ["matmul_relu", "matmul_ij", "ragged", *LIT_KERNELS, "conv_relu", "softmax"]
)
@pytest.mark.parametrize("machine", PRESETS)
def test_passes_preserve_numerics(machine: str, kernel: str, pipeline: str):
    report = check_pass_preserves_numerics(
        loop_level(kernel, machine), PIPELINES[pipeline](machine)
    )
    assert report.ok, str(report)


def test_matmul_relu_matches_numpy():
    module = loop_level("matmul_relu", "davinci")
    apply_pipeline(module, PIPELINES["promote+hoist+loop-double-buffer"]("davinci"))
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 96)).astype(np.float16)
    b = rng.standard_normal((96, 32)).astype(np.float16)
    got = run_loop_function(module, [a, b])["result0"]
    expected = np.maximum(a.astype(np.float32) @ b.astype(np.float32), 0).astype(np.float16)
    np.testing.assert_allclose(
        got.astype(np.float32), expected.astype(np.float32), rtol=1e-2, atol=1e-2
    )


def spaces_used(module, op_type) -> list[tuple[str | None, str | None]]:
    return [
        (space_of(op.source), space_of(op.destination))
        for op in module.walk()
        if isinstance(op, op_type)
    ]


@pytest.mark.parametrize("machine", PRESETS)
def test_every_buffer_is_placed_and_copies_follow_dma_paths(machine: str):
    module = loop_level("matmul_relu", machine)
    apply_pipeline(module, promote(machine))
    spec = load_machine(machine)
    allocs = [op for op in module.walk() if isinstance(op, memref.AllocOp)]
    assert all(space_of(op.memref) in spec.memories for op in allocs)
    function = next(op for op in module.walk() if isinstance(op, scf.ForOp)).parent_block()
    assert all(isinstance(op, memref.AllocOp) for op in list(function.ops)[: len(allocs)])
    for source, destination in spaces_used(module, CopyAsyncOp):
        assert spec.dma_for(source, destination) is not None, (source, destination)


def test_fused_epilogue_never_goes_back_to_global_memory():
    module = loop_level("matmul_relu", "davinci")
    apply_pipeline(module, promote("davinci"))
    copies = spaces_used(module, CopyAsyncOp)
    assert ("l0c", "ub") in copies
    assert copies.count(("ub", "gm")) == 1 and ("l0c", "gm") not in copies
    assert not [op for op in module.walk() if op.name == "linalg.generic" and "truncf" in str(op)]


def test_routes_come_from_the_machine():
    davinci = load_machine("davinci")
    assert route(davinci, "gm", "l0a") == ("gm", "l1", "l0a")
    assert route(davinci, "l0c", "gm") == ("l0c", "gm")
    assert route(davinci, "ub", "ub") == ("ub",)
    assert route(davinci, "gm", "l0c") is None
    assert [engine.name for _, _, engine in hops(davinci, ("gm", "l1", "l0a"))] == ["mte2", "mte1"]
    assert route(load_machine("tensorcore"), "smem", "gm") == ("smem", "rf", "gm")


def test_hoist_copies_moves_the_invariant_lhs_out_of_the_inner_loop():
    module = loop_level("matmul_ij", "davinci")
    apply_pipeline(module, f"{promote('davinci')},loop-hoist-copies")
    inner = [op for op in module.walk() if isinstance(op, scf.ForOp)][1]
    inside = spaces_used(inner, CopyAsyncOp)
    assert ("gm", "l1") in inside and ("l1", "l0b") in inside
    assert ("l1", "l0a") not in inside and len(spaces_used(module, CopyAsyncOp)) == len(inside) + 2


def test_double_buffer_rejects_depth_zero():
    module = loop_level("ragged", "davinci")
    with pytest.raises(DiagnosticError, match="loop-double-buffer needs depth >= 1, got 0"):
        apply_pipeline(module, "loop-double-buffer{depth=0}")


@pytest.mark.parametrize("depth", [2, 3])
def test_double_buffer_depth_preserves_numerics(depth: int):
    module = loop_level("matmul_relu", "tensorcore")
    apply_pipeline(module, promote("tensorcore"))
    report = check_pass_preserves_numerics(module, f"loop-double-buffer{{depth={depth}}}")
    assert report.ok, str(report)
    slotted = [op for op in report.transformed.walk() if isinstance(op, memref.AllocOp)]
    assert any(op.memref.type.get_shape()[0] == depth for op in slotted)


@pytest.mark.parametrize("kernel", ["matmul_relu", "matmul_ij", "ragged", *LIT_KERNELS, "softmax"])
@pytest.mark.parametrize("machine", PRESETS)
def test_output_lowers_to_npu_and_runs(machine: str, kernel: str):
    """What these passes produce is what loop-to-npu takes: the rest of lower-to-npu runs on run_npu."""
    pipeline = (
        f"{PIPELINES['promote+hoist+loop-double-buffer'](machine)},loop-to-npu{{machine={machine}}},"
        f"npu-plan-memory{{machine={machine}}},npu-insert-sync{{machine={machine}}}"
    )
    report = check_pass_preserves_numerics(loop_level(kernel, machine), pipeline, machine=machine)
    assert report.ok, str(report)
