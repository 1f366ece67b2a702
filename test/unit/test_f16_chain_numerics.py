"""f16 pieces of DenseNet (BatchNorm -> ReLU before each conv, transitions ending in a 2x2 average
pool) lowered to the loop level, then to npu code: both levels compute the same f16 values, bit
for bit, and the loop level's `math.rsqrt` on f16 rounds once, as the vector unit's does."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import math

from ziggurat.context import default_context
from ziggurat.interpreters.interpreter import run_function
from ziggurat.lowering.pipelines import LOWER_TO_NPU_PASSES
from ziggurat.parsing import parse_source
from ziggurat.testing.differential import apply_pipeline, check_pass_preserves_numerics

RNG = np.random.default_rng(25)


def _constant(name: str, values: np.ndarray) -> str:
    shape = "x".join(str(n) for n in values.shape)
    data = values.astype("<f2").tobytes().hex().upper()
    return f'    %{name} = graph.constant dense<"0x{data}"> : tensor<{shape}xf16>\n'


def _batch_norm(lines: list[str], name: str, x: str, channels: int, shape: str) -> str:
    """BatchNorm with calibrated statistics (not foldable into a conv: it comes before one)."""
    stats = {
        "g": RNG.uniform(0.5, 1.5, channels),
        "b": RNG.normal(0, 0.2, channels),
        "m": RNG.normal(0, 0.5, channels),
        "v": RNG.uniform(0.05, 2.0, channels),
    }
    lines += [_constant(f"{name}{k}", v) for k, v in stats.items()]
    c = f"tensor<{channels}xf16>"
    lines.append(
        f"    %{name} = graph.batch_norm %{x}, %{name}g, %{name}b, %{name}m, %{name}v "
        f"{{epsilon = 1.0e-05 : f32}} : ({shape}, {c}, {c}, {c}, {c}) -> {shape}\n"
    )
    lines.append(f"    %{name}r = graph.relu %{name} : {shape}\n")
    return f"{name}r"


def _conv(lines: list[str], name: str, x: str, cin: int, cout: int, k: int, hw: int) -> str:
    weights = RNG.normal(0, (2.0 / (cin * k * k)) ** 0.5, (cout, cin, k, k))
    lines.append(_constant(f"{name}w", weights))
    pads = ", ".join([str(k // 2)] * 4)
    lines.append(
        f"    %{name} = graph.conv2d %{x}, %{name}w {{pads = array<i64: {pads}>}} : "
        f"(tensor<1x{cin}x{hw}x{hw}xf16>, tensor<{cout}x{cin}x{k}x{k}xf16>) -> "
        f"tensor<1x{cout}x{hw}x{hw}xf16>\n"
    )
    return name


def dense_layer(channels: int = 16, hw: int = 8) -> str:
    """BN -> ReLU -> 1x1 conv -> BN -> ReLU -> 3x3 conv, concatenated to the input."""
    lines: list[str] = []
    t = lambda c: f"tensor<1x{c}x{hw}x{hw}xf16>"  # noqa: E731
    y = _batch_norm(lines, "bn1", "x", channels, t(channels))
    y = _conv(lines, "c1", y, channels, 32, 1, hw)
    y = _batch_norm(lines, "bn2", y, 32, t(32))
    y = _conv(lines, "c2", y, 32, 8, 3, hw)
    out = t(channels + 8)
    lines.append(
        f"    %y = graph.concat %x, %{y} {{axis = 1 : i64}} : ({t(channels)}, {t(8)}) -> {out}\n"
    )
    return _function(lines, t(channels), out)


def transition(channels: int = 16, hw: int = 8) -> str:
    """BN -> ReLU -> 1x1 conv -> 2x2 average pool."""
    lines: list[str] = []
    t = lambda c, n=hw: f"tensor<1x{c}x{n}x{n}xf16>"  # noqa: E731
    y = _batch_norm(lines, "bn1", "x", channels, t(channels))
    y = _conv(lines, "c1", y, channels, channels // 2, 1, hw)
    out = t(channels // 2, hw // 2)
    lines.append(
        f"    %y = graph.avg_pool %{y} {{strides = array<i64: 2, 2>, kernel = array<i64: 2, 2>}}"
        f" : {t(channels // 2)} -> {out}\n"
    )
    return _function(lines, t(channels), out)


def _function(lines: list[str], arg: str, result: str) -> str:
    body = "".join(lines)
    return f"func.func @main(%x: {arg}) -> {result} {{\n{body}    func.return %y : {result}\n}}\n"


def _to_loop(text: str, machine: str):
    module = parse_source(default_context(), text, "<test>")
    stop = LOWER_TO_NPU_PASSES.index("loop-to-npu{M}")
    spec = f"{{machine={machine}}}"
    apply_pipeline(module, ",".join(p.replace("{M}", spec) for p in LOWER_TO_NPU_PASSES[:stop]))
    return module


@pytest.mark.parametrize("machine", ["davinci", "tensorcore"])
@pytest.mark.parametrize("piece", [dense_layer, transition], ids=lambda f: f.__name__)
def test_npu_code_computes_the_loop_levels_f16_values(piece, machine):
    module = _to_loop(piece(), machine)
    # The BatchNorm is an f16 chain on the vector unit, its factor through an f16 rsqrt.
    rsqrts = [op for op in module.walk() if isinstance(op, math.RsqrtOp)]
    assert rsqrts and all(str(op.result.type) == "f16" for op in rsqrts)
    spec = f"{{machine={machine}}}"
    report = check_pass_preserves_numerics(
        module,
        f"loop-to-npu{spec},npu-plan-memory{spec},npu-insert-sync{spec}",
        machine=machine,
        rtol=0,
        atol=0,
    )
    assert report.ok, report


def test_f16_rsqrt_rounds_once():
    # Inputs where rounding sqrt to f16 first, then 1 / it, lands one ulp off.
    x = np.linspace(0.05, 4.0, 4096).astype(np.float16)
    once = (1 / np.sqrt(x.astype(np.float32))).astype(np.float16)
    twice = (1 / np.sqrt(x)).astype(np.float16)
    assert (once != twice).any()
    text = """
    func.func @main(%x: tensor<4096xf16>) -> tensor<4096xf16> {
      %e = tensor.empty() : tensor<4096xf16>
      %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                           iterator_types = ["parallel"]}
          ins(%x : tensor<4096xf16>) outs(%e : tensor<4096xf16>) {
      ^bb0(%a: f16, %out: f16):
        %n = math.rsqrt %a : f16
        linalg.yield %n : f16
      } -> tensor<4096xf16>
      func.return %r : tensor<4096xf16>
    }"""
    module = parse_source(default_context(), text, "<test>")
    (r,) = run_function(module, [x])
    assert r.dtype == np.float16
    np.testing.assert_array_equal(r, once)
