"""loop-to-npu: hand-written loop-level kernels (docs/lowering.md section 5) lowered and run on run_npu, against numpy.

Until npu-insert-sync orders the pipes, `lower` places a barrier after every
instruction (a trivially correct schedule) so that the numbers test the
instruction selection alone.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.rewriter import InsertPoint, Rewriter

from ziggurat.context import default_context
from ziggurat.diagnostics import DiagnosticError
from ziggurat.dialects import npu
from ziggurat.interpreters.npu_interpreter import run_npu
from ziggurat.parsing import parse_source
from ziggurat.testing.differential import apply_pipeline, check_pass_preserves_numerics

# Where a GEMM's operands travel on each preset: (A's hops, B's hops, C's space, vector space, store path).
ROUTES = {
    "davinci": (["l1", "l0a"], ["l1", "l0b"], "l0c", "ub"),
    "tensorcore": (["smem", "rf"], ["smem", "rf"], "rf", "rf"),
    "systolic": (["ifmap"], ["filter"], "ofmap", "ofmap"),
}
GLOBAL = {"davinci": "gm", "tensorcore": "gm", "systolic": "dram"}


def lower(text: str, machine: str):
    module = parse_source(default_context(), text, "<test>")
    apply_pipeline(module, f"loop-to-npu{{machine={machine}}},npu-plan-memory{{machine={machine}}}")
    for op in list(module.walk()):
        if isinstance(op, npu.DmaOp | npu.MmaOp | npu.VectorOperation):
            Rewriter.insert_op(npu.BarrierOp(), InsertPoint.after(op))
    return module


def _copy(src: str, src_type: str, dst: str, dst_type: str, pad: str = "") -> str:
    attrs = f" {{pad = array<i64: {pad}>}}" if pad else ""
    return f"      loop.copy {src} -> {dst}{attrs} : {src_type} -> {dst_type}\n"


def _stage(
    name: str, source: str, source_type: str, shape: str, hops: list[str], allocs: list[str]
) -> tuple[str, str]:
    """Copies of `source` along `hops`; the code and the last buffer."""
    code, current, current_type = "", source, source_type
    for hop in hops:
        buffer, buffer_type = f"%{name}_{hop}", f'memref<{shape}xf16, "{hop}">'
        allocs.append(f"  {buffer} = memref.alloc() : {buffer_type}\n")
        code += _copy(current, current_type, buffer, buffer_type)
        current, current_type = buffer, buffer_type
    return code, current


CONTRACTION = """      linalg.generic {{indexing_maps = [{maps}], iterator_types = ["parallel", "parallel", "reduction"]}} ins({ins}) outs({out}) {{
      ^bb0(%x: f16, %w: f16, %acc: f32):
        %xe = arith.extf %x : f16 to f32
        %we = arith.extf %w : f16 to f32
        %p = arith.mulf %xe, %we : f32
        %s = arith.addf %acc, %p : f32
        linalg.yield %s : f32
      }}
"""
MATMUL_MAPS = "affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>"


def matmul_relu(machine: str, m: int = 64, n: int = 64, k: int = 128, tk: int = 64) -> str:
    """relu(A @ B) with K walked in `tk` tiles, the accumulator zeroed before the K loop, f32 result."""
    a_hops, b_hops, c_space, v_space = ROUTES[machine]
    g = GLOBAL[machine]
    allocs: list[str] = []
    a_code, a = _stage(
        "a",
        "%as",
        f'memref<{m}x{tk}xf16, strided<[{k}, 1], offset: ?>, "{g}">',
        f"{m}x{tk}",
        a_hops,
        allocs,
    )
    b_code, b = _stage(
        "b",
        "%bs",
        f'memref<{tk}x{n}xf16, strided<[{n}, 1], offset: ?>, "{g}">',
        f"{tk}x{n}",
        b_hops,
        allocs,
    )
    c_type, v_type = f'memref<{m}x{n}xf32, "{c_space}">', f'memref<{m}x{n}xf32, "{v_space}">'
    allocs += [f"  %c = memref.alloc() : {c_type}\n", f"  %y = memref.alloc() : {v_type}\n"]
    store = "" if c_space == v_space else _copy("%c", c_type, "%y", v_type)
    y = "%c" if c_space == v_space else "%y"
    return (
        f"""func.func @main(%A: memref<{m}x{k}xf16, "{g}">, %B: memref<{k}x{n}xf16, "{g}">, %result0: memref<{m}x{n}xf32, "{g}">) {{
  %c0 = arith.constant 0 : index
  %tk = arith.constant {tk} : index
  %ck = arith.constant {k} : index
  %zero = arith.constant 0.000000e+00 : f32
{"".join(allocs)}  linalg.fill ins(%zero : f32) outs(%c : {c_type})
  scf.for %k = %c0 to %ck step %tk {{
      %as = memref.subview %A[0, %k] [{m}, {tk}] [1, 1] : memref<{m}x{k}xf16, "{g}"> to memref<{m}x{tk}xf16, strided<[{k}, 1], offset: ?>, "{g}">
      %bs = memref.subview %B[%k, 0] [{tk}, {n}] [1, 1] : memref<{k}x{n}xf16, "{g}"> to memref<{tk}x{n}xf16, strided<[{n}, 1], offset: ?>, "{g}">
{a_code}{b_code}"""
        + CONTRACTION.format(
            maps=MATMUL_MAPS,
            ins=f'{a}, {b} : memref<{m}x{tk}xf16, "{a_hops[-1]}">, memref<{tk}x{n}xf16, "{b_hops[-1]}">',
            out=f"%c : {c_type}",
        )
        + f"""  }}
{store.strip() and "  " + store.strip()}
  linalg.generic {{indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}} ins({y} : {v_type}) outs({y} : {v_type}) {{
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  }}
  loop.copy {y} -> %result0 : {v_type} -> memref<{m}x{n}xf32, "{g}">
  func.return
}}
"""
    )


def _gemm_inputs(m: int, n: int, k: int):
    rng = np.random.default_rng(0)
    return rng.standard_normal((m, k)).astype(np.float16), rng.standard_normal((k, n)).astype(
        np.float16
    )


@pytest.mark.parametrize("machine", sorted(ROUTES))
def test_matmul_relu_matches_numpy(machine):
    module = lower(matmul_relu(machine), machine)
    a, b = _gemm_inputs(64, 64, 128)
    (y,) = run_npu(module, machine, [a, b]).outputs
    expected = np.maximum(a.astype(np.float32) @ b.astype(np.float32), 0)
    np.testing.assert_allclose(y, expected, rtol=1e-3, atol=1e-3)


def test_zero_fill_becomes_a_first_non_accumulating_mma():
    text = str(lower(matmul_relu("davinci"), "davinci"))
    assert "linalg.fill" not in text and "npu.vec.dup" not in text
    assert text.count("npu.mma") == 2 and text.count("accumulate") == 1
    assert "arith.cmpi eq" in text


def test_without_the_fill_every_mma_accumulates():
    text = matmul_relu("davinci").replace(
        '  linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32, "l0c">)\n', ""
    )
    lowered = str(lower(text, "davinci"))
    assert lowered.count("npu.mma") == 1 and "accumulate" in lowered


# The vector space and the hops into it from global memory on each preset.
VECTOR_ROUTES = {"davinci": ["ub"], "tensorcore": ["smem", "rf"], "systolic": ["ofmap"]}

ID = "affine_map<(d0, d1) -> (d0, d1)>"
ROW = "affine_map<(d0, d1) -> (d0)>"


def _generic(
    ins: list[tuple[str, str]], out: tuple[str, str], body: str, reduce: bool = False
) -> str:
    """A single-op generic on `rows x width` tiles: each input is (value, map), `body` uses %a, %b and %o."""
    maps = ", ".join([m for _, m in ins] + [out[1]])
    iterators = '"parallel", "reduction"' if reduce else '"parallel", "parallel"'
    types = {ID: "{T}", ROW: "{R}"}
    operands = ", ".join(v for v, _ in ins) + " : " + ", ".join(types[m] for _, m in ins)
    args = ", ".join(f"%{n}: f32" for n in "ab"[: len(ins)])
    return (
        f"  linalg.generic {{indexing_maps = [{maps}], iterator_types = [{iterators}]}} ins({operands}) "
        f"outs({out[0]} : {types[out[1]]}) {{\n  ^bb0({args}, %o: f32):\n    %r = {body}\n"
        "    linalg.yield %r : f32\n  }\n"
    )


def row_kernel(machine: str, rows: int, width: int, steps: str) -> str:
    """A kernel on one `rows x width` f32 tile in the vector space: X staged in, `steps` run, the tile stored."""
    g, hops = GLOBAL[machine], VECTOR_ROUTES[machine]
    v = hops[-1]
    tile, row = f'memref<{rows}x{width}xf32, "{v}">', f'memref<{rows}xf32, "{v}">'
    text = f'func.func @main(%X: memref<{rows}x{width}xf32, "{g}">, %result0: memref<{rows}x{width}xf32, "{g}">) {{\n'
    text += "  %ninf = arith.constant 0xFF800000 : f32\n  %zero = arith.constant 0.0 : f32\n"
    text += f"  %inv = arith.constant {1 / width} : f32\n  %eps = arith.constant 1.0e-05 : f32\n"
    for name in ("x", "e"):
        text += f"  %{name} = memref.alloc() : {tile}\n"
    for name in ("m", "s"):
        text += f"  %{name} = memref.alloc() : {row}\n"
    source, source_type = "%X", f'memref<{rows}x{width}xf32, "{g}">'
    for hop in hops:
        buffer, buffer_type = (
            ("%x", tile) if hop == v else (f"%x_{hop}", f'memref<{rows}x{width}xf32, "{hop}">')
        )
        if hop != v:
            text += f"  {buffer} = memref.alloc() : {buffer_type}\n"
        text += _copy(source, source_type, buffer, buffer_type).replace("      ", "  ")
        source, source_type = buffer, buffer_type
    text += steps.replace("{T}", tile).replace("{R}", row)
    return (
        text
        + f'  loop.copy %x -> %result0 : {tile} -> memref<{rows}x{width}xf32, "{g}">\n  func.return\n}}\n'
    )


SOFTMAX = (
    "  linalg.fill ins(%ninf : f32) outs(%m : {R})\n"
    + _generic([("%x", ID)], ("%m", ROW), "arith.maximumf %a, %o : f32", reduce=True)
    + _generic([("%x", ID), ("%m", ROW)], ("%e", ID), "arith.subf %a, %b : f32")
    + _generic([("%e", ID)], ("%e", ID), "math.exp %a : f32")
    + "  linalg.fill ins(%zero : f32) outs(%s : {R})\n"
    + _generic([("%e", ID)], ("%s", ROW), "arith.addf %a, %o : f32", reduce=True)
    + _generic([("%e", ID), ("%s", ROW)], ("%x", ID), "arith.divf %a, %b : f32")
)


def _row_generic(value: str, body: str) -> str:
    """A single-op generic on a row vector in place; `body` uses %a."""
    maps = "affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>"
    return (
        f'  linalg.generic {{indexing_maps = [{maps}], iterator_types = ["parallel"]}} ins({value} : {{R}}) '
        f"outs({value} : {{R}}) {{\n  ^bb0(%a: f32, %o: f32):\n    %r = {body}\n    linalg.yield %r : f32\n  }}\n"
    )


LAYERNORM = (  # x = (x - mean) * rsqrt(mean((x - mean)^2) + eps)
    "  linalg.fill ins(%zero : f32) outs(%m : {R})\n"
    + _generic([("%x", ID)], ("%m", ROW), "arith.addf %a, %o : f32", reduce=True)
    + _row_generic("%m", "arith.mulf %a, %inv : f32")
    + _generic([("%x", ID), ("%m", ROW)], ("%x", ID), "arith.subf %a, %b : f32")
    + _generic([("%x", ID), ("%x", ID)], ("%e", ID), "arith.mulf %a, %b : f32")
    + "  linalg.fill ins(%zero : f32) outs(%s : {R})\n"
    + _generic([("%e", ID)], ("%s", ROW), "arith.addf %a, %o : f32", reduce=True)
    + _row_generic("%s", "arith.mulf %a, %inv : f32")
    + _row_generic("%s", "arith.addf %a, %eps : f32")
    + _row_generic("%s", "math.rsqrt %a : f32")
    + _generic([("%x", ID), ("%s", ROW)], ("%x", ID), "arith.mulf %a, %b : f32")
)


def _softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _layernorm(x):
    centered = x - x.mean(axis=1, keepdims=True)
    return centered / np.sqrt((centered**2).mean(axis=1, keepdims=True) + 1e-5)


@pytest.mark.parametrize("machine", sorted(ROUTES))
@pytest.mark.parametrize(
    ("steps", "reference"),
    [(SOFTMAX, _softmax), (LAYERNORM, _layernorm)],
    ids=["softmax", "layernorm"],
)
@pytest.mark.parametrize(("rows", "width"), [(16, 256), (8, 48), (6, 100)])
def test_row_kernels_match_numpy(machine, steps, reference, rows, width):
    module = lower(row_kernel(machine, rows, width, steps), machine)
    x = np.random.default_rng(1).standard_normal((rows, width)).astype(np.float32)
    (y,) = run_npu(module, machine, [x]).outputs
    np.testing.assert_allclose(y, reference(x), rtol=1e-5, atol=1e-6)


def _contraction(ins: str, out: str, maps: str = MATMUL_MAPS) -> str:
    return CONTRACTION.format(maps=maps, ins=ins, out=out).replace("      ", "  ", 1)


def ragged_matmul() -> str:
    """A 100x77x300 f16 matmul on davinci in two K tiles (160, then 140), buffers rounded up to the
    16x16x16 cube and padded with zeros by mte2, as loop-promote-to-memory-space stages them."""
    g = "gm"
    text = f"""func.func @main(%A: memref<100x300xf16, "{g}">, %B: memref<300x77xf16, "{g}">, %result0: memref<100x77xf32, "{g}">) {{
  %zero = arith.constant 0.000000e+00 : f32
  %c = memref.alloc() : memref<112x80xf32, "l0c">
  linalg.fill ins(%zero : f32) outs(%c : memref<112x80xf32, "l0c">)
"""
    for step, (k0, kt, kp) in enumerate(((0, 160, 160), (160, 140, 144))):
        a_src = f'memref<100x{kt}xf16, strided<[300, 1], offset: {k0}>, "{g}">'
        b_src = f'memref<{kt}x77xf16, strided<[77, 1], offset: {k0 * 77}>, "{g}">'
        a1, a0 = f'memref<112x{kp}xf16, "l1">', f'memref<112x{kp}xf16, "l0a">'
        b1, b0 = f'memref<{kp}x80xf16, "l1">', f'memref<{kp}x80xf16, "l0b">'
        text += f"""  %as{step} = memref.subview %A[0, {k0}] [100, {kt}] [1, 1] : memref<100x300xf16, "{g}"> to {a_src}
  %bs{step} = memref.subview %B[{k0}, 0] [{kt}, 77] [1, 1] : memref<300x77xf16, "{g}"> to {b_src}
  %a1_{step} = memref.alloc() : {a1}
  %a0_{step} = memref.alloc() : {a0}
  %b1_{step} = memref.alloc() : {b1}
  %b0_{step} = memref.alloc() : {b0}
  loop.copy %as{step} -> %a1_{step} {{pad = array<i64: 0, 12, 0, {kp - kt}>}} : {a_src} -> {a1}
  loop.copy %a1_{step} -> %a0_{step} : {a1} -> {a0}
  loop.copy %bs{step} -> %b1_{step} {{pad = array<i64: 0, {kp - kt}, 0, 3>}} : {b_src} -> {b1}
  loop.copy %b1_{step} -> %b0_{step} : {b1} -> {b0}
"""
        text += _contraction(
            f"%a0_{step}, %b0_{step} : {a0}, {b0}", '%c : memref<112x80xf32, "l0c">'
        )
    return (
        text
        + f"""  %cv = memref.subview %c[0, 0] [100, 77] [1, 1] : memref<112x80xf32, "l0c"> to memref<100x77xf32, strided<[80, 1]>, "l0c">
  loop.copy %cv -> %result0 : memref<100x77xf32, strided<[80, 1]>, "l0c"> -> memref<100x77xf32, "{g}">
  func.return
}}
"""
    )


def test_ragged_matmul_matches_numpy():
    module = lower(ragged_matmul(), "davinci")
    mmas = [op for op in module.walk() if isinstance(op, npu.MmaOp)]
    assert [(op.mnk, op.accumulate is not None) for op in mmas] == [
        ((112, 80, 160), False),
        ((112, 80, 144), True),
    ]
    a, b = _gemm_inputs(100, 77, 300)
    (c,) = run_npu(module, "davinci", [a, b]).outputs
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)


CONV_MAPS = "affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>"


def conv_tile() -> str:
    """out[f, ow] = sum_c W[f, c] * X[c, ow], one kernel position of an NCHW conv tile, X listed first."""
    text = """func.func @main(%X: memref<64x48xf16, "gm">, %W: memref<32x64xf16, "gm">, %result0: memref<32x48xf32, "gm">) {
  %zero = arith.constant 0.000000e+00 : f32
  %x1 = memref.alloc() : memref<64x48xf16, "l1">
  %x0 = memref.alloc() : memref<64x48xf16, "l0b">
  %w1 = memref.alloc() : memref<32x64xf16, "l1">
  %w0 = memref.alloc() : memref<32x64xf16, "l0a">
  %o = memref.alloc() : memref<32x48xf32, "l0c">
  loop.copy %X -> %x1 : memref<64x48xf16, "gm"> -> memref<64x48xf16, "l1">
  loop.copy %x1 -> %x0 : memref<64x48xf16, "l1"> -> memref<64x48xf16, "l0b">
  loop.copy %W -> %w1 : memref<32x64xf16, "gm"> -> memref<32x64xf16, "l1">
  loop.copy %w1 -> %w0 : memref<32x64xf16, "l1"> -> memref<32x64xf16, "l0a">
  linalg.fill ins(%zero : f32) outs(%o : memref<32x48xf32, "l0c">)
"""
    text += _contraction(
        '%x0, %w0 : memref<64x48xf16, "l0b">, memref<32x64xf16, "l0a">',
        '%o : memref<32x48xf32, "l0c">',
        CONV_MAPS,
    )
    return (
        text
        + """  loop.copy %o -> %result0 : memref<32x48xf32, "l0c"> -> memref<32x48xf32, "gm">
  func.return
}
"""
    )


def test_conv_tile_takes_the_weights_as_a():
    module = lower(conv_tile(), "davinci")
    (mma,) = [op for op in module.walk() if isinstance(op, npu.MmaOp)]
    assert (npu.space_of(mma.a), npu.space_of(mma.b), mma.mnk) == ("l0a", "l0b", (32, 48, 64))
    rng = np.random.default_rng(2)
    x, w = (
        rng.standard_normal((64, 48)).astype(np.float16),
        rng.standard_normal((32, 64)).astype(np.float16),
    )
    (out,) = run_npu(module, "davinci", [x, w]).outputs
    np.testing.assert_allclose(
        out, w.astype(np.float32) @ x.astype(np.float32), rtol=1e-3, atol=1e-3
    )


def test_an_error_names_the_op_the_machine_and_what_is_missing():
    a, b, c = 'memref<16x16xf16, "l1">', 'memref<16x16xf16, "l0b">', 'memref<16x16xf32, "l0c">'
    text = f"func.func @main(%a: {a}, %b: {b}, %c: {c}) {{\n"
    text += _contraction(f"%a, %b : {a}, {b}", f"%c : {c}") + "  func.return\n}\n"
    expected = "<test>:2:3: error: linalg.generic: operand A is in 'l1'; the matrix unit 'cube' of machine 'davinci'"
    with pytest.raises(DiagnosticError, match=expected):
        lower(text, "davinci")


CONV_NCHW_MAPS = (
    "affine_map<(d0, d1, d2, d3) -> (d3, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d3)>, "
    "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>"
)


def conv_1x1_nd() -> str:
    """out[f, oh, ow] = sum_c W[f, c] * X[c, oh, ow] with X and the accumulator staged in 3-d buffers
    (ow padded from 14 to 16), as loop-promote-to-memory-space stages a conv tile."""
    x1, x0 = 'memref<32x14x16xf16, "l1">', 'memref<32x14x16xf16, "l0b">'
    w1, w0 = 'memref<16x32xf16, "l1">', 'memref<16x32xf16, "l0a">'
    c, cv = 'memref<16x14x16xf32, "l0c">', 'memref<16x14x14xf32, strided<[224, 16, 1]>, "l0c">'
    text = f"""func.func @main(%X: memref<32x14x14xf16, "gm">, %W: memref<16x32xf16, "gm">, %result0: memref<16x14x14xf32, "gm">) {{
  %zero = arith.constant 0.000000e+00 : f32
  %x1 = memref.alloc() : {x1}
  %x0 = memref.alloc() : {x0}
  %w1 = memref.alloc() : {w1}
  %w0 = memref.alloc() : {w0}
  %c = memref.alloc() : {c}
  loop.copy %X -> %x1 {{pad = array<i64: 0, 0, 0, 0, 0, 2>}} : memref<32x14x14xf16, "gm"> -> {x1}
  loop.copy %x1 -> %x0 : {x1} -> {x0}
  loop.copy %W -> %w1 : memref<16x32xf16, "gm"> -> {w1}
  loop.copy %w1 -> %w0 : {w1} -> {w0}
  linalg.fill ins(%zero : f32) outs(%c : {c})
  linalg.generic {{indexing_maps = [{CONV_NCHW_MAPS}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}} ins(%x0, %w0 : {x0}, {w0}) outs(%c : {c}) {{
  ^bb0(%xv: f16, %wv: f16, %acc: f32):
    %xe = arith.extf %xv : f16 to f32
    %we = arith.extf %wv : f16 to f32
    %p = arith.mulf %we, %xe : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }}
  %cs = memref.subview %c[0, 0, 0] [16, 14, 14] [1, 1, 1] : {c} to {cv}
  loop.copy %cs -> %result0 : {cv} -> memref<16x14x14xf32, "gm">
  func.return
}}
"""
    return text


def test_nd_operand_buffers_are_relaid_as_matrices():
    module = lower(conv_1x1_nd(), "davinci")
    (mma,) = [op for op in module.walk() if isinstance(op, npu.MmaOp)]
    assert (mma.b.type.get_shape(), mma.c.type.get_shape(), mma.mnk) == (
        (32, 224),
        (16, 224),
        (16, 224, 32),
    )
    rng = np.random.default_rng(3)
    x, w = (
        rng.standard_normal((32, 14, 14)).astype(np.float16),
        rng.standard_normal((16, 32)).astype(np.float16),
    )
    (out,) = run_npu(module, "davinci", [x, w]).outputs
    expected = np.einsum("fc,chw->fhw", w.astype(np.float32), x.astype(np.float32))
    np.testing.assert_allclose(out, expected, rtol=1e-3, atol=1e-3)


LINEAR_MAPS = "affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>"


@pytest.mark.parametrize("machine", ["davinci", "tensorcore"])
def test_a_transposed_weight_is_written_transposed(machine):
    """y = x @ w^T (a Linear layer): w [N, K] staged as is; its local buffer becomes [K, N]."""
    a_hops, b_hops, c_space, _ = ROUTES[machine]
    allocs: list[str] = []
    a_code, a = _stage("a", "%X", 'memref<32x64xf16, "gm">', "32x64", a_hops, allocs)
    b_code, b = _stage("b", "%W", 'memref<48x64xf16, "gm">', "48x64", b_hops, allocs)
    c = f'memref<32x48xf32, "{c_space}">'
    text = 'func.func @main(%X: memref<32x64xf16, "gm">, %W: memref<48x64xf16, "gm">, %result0: memref<32x48xf32, "gm">) {\n'
    text += (
        "".join(allocs)
        + f"  %c = memref.alloc() : {c}\n"
        + (a_code + b_code).replace("      ", "  ")
    )
    ins = f'{a}, {b} : memref<32x64xf16, "{a_hops[-1]}">, memref<48x64xf16, "{b_hops[-1]}">'
    text += _contraction(ins, f"%c : {c}", LINEAR_MAPS)
    text += f'  loop.copy %c -> %result0 : {c} -> memref<32x48xf32, "gm">\n  func.return\n}}\n'
    module = lower(text, machine)
    (mma,) = [op for op in module.walk() if isinstance(op, npu.MmaOp)]
    assert mma.b.type.get_shape() == (64, 48)
    x, w = (
        _gemm_inputs(32, 48, 64)[0],
        np.random.default_rng(4).standard_normal((48, 64)).astype(np.float16),
    )
    (y,) = run_npu(module, machine, [x, w]).outputs
    np.testing.assert_allclose(
        y, x.astype(np.float32) @ w.astype(np.float32).T, rtol=1e-3, atol=1e-3
    )


def _differential_cases():
    for machine in sorted(ROUTES):
        yield f"matmul_relu-{machine}", matmul_relu(machine), machine
        for name, steps in (("softmax", SOFTMAX), ("layernorm", LAYERNORM)):
            yield f"{name}-{machine}", row_kernel(machine, 8, 100, steps), machine
    yield "ragged_matmul-davinci", ragged_matmul(), "davinci"
    yield "conv_tile-davinci", conv_tile(), "davinci"
    yield "conv_1x1_nd-davinci", conv_1x1_nd(), "davinci"
    yield "transpose_in_ub-davinci", TRANSPOSE_IN_UB, "davinci"


TRANSPOSE_IN_UB = """func.func @main(%k: memref<64x32xf16, "gm">, %result0: memref<32x64xf16, "gm">) {
  %a = memref.alloc() : memref<64x32xf16, "ub">
  %b = memref.alloc() : memref<32x64xf16, "ub">
  loop.copy %k -> %a : memref<64x32xf16, "gm"> -> memref<64x32xf16, "ub">
  linalg.transpose ins(%a : memref<64x32xf16, "ub">) outs(%b : memref<32x64xf16, "ub">) permutation = [1, 0]
  loop.copy %b -> %result0 : memref<32x64xf16, "ub"> -> memref<32x64xf16, "gm">
  func.return
}
"""


DIFFERENTIAL = list(_differential_cases())


@pytest.mark.parametrize(
    ("text", "machine"), [c[1:] for c in DIFFERENTIAL], ids=[c[0] for c in DIFFERENTIAL]
)
def test_loop_interpreter_and_run_npu_agree(text, machine):
    """The loop level on the loop interpreter against loop-to-npu, npu-plan-memory and npu-insert-sync on run_npu."""
    spec = f"{{machine={machine}}}"
    report = check_pass_preserves_numerics(
        text, f"loop-to-npu{spec},npu-plan-memory{spec},npu-insert-sync{spec}", machine=machine
    )
    assert report.ok, report
