"""Numerics and error detection of the npu interpreter (`run_npu`), on a small hand-built machine.

The machine here has round figures so the tests do not move when a preset's
published numbers are revised; test_npu_timing.py reuses it.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ziggurat.context import default_context
from ziggurat.diagnostics import DiagnosticError, collect_diagnostics
from ziggurat.interpreters.npu_interpreter import is_npu_program, run_npu
from ziggurat.machine import VECTOR_OPS, DmaEngine, Machine, MatrixUnit, MemorySpace, VectorUnit
from ziggurat.parsing import parse_source


def tiny_machine() -> Machine:
    def space(
        name: str, capacity: int, level: str = "local", bandwidth: float = 256
    ) -> MemorySpace:
        return MemorySpace(name, capacity, level, bandwidth, bandwidth, 1, alignment=32)

    memories = {
        "gm": space("gm", 1 << 30, "global", bandwidth=64),
        "l1": space("l1", 64 << 10),
        "l0a": space("l0a", 16 << 10),
        "l0b": space("l0b", 16 << 10),
        "l0c": space("l0c", 32 << 10),
        "ub": space("ub", 32 << 10),
    }
    dmas = {
        "mte2": DmaEngine(
            "mte2", "mte2", (("gm", "l1"), ("gm", "ub")), 32, 100, 4, True, True, True, "gm"
        ),
        "mte1": DmaEngine(
            "mte1", "mte1", (("l1", "l0a"), ("l1", "l0b")), 128, 10, 3, True, True, False
        ),
        "mte3": DmaEngine("mte3", "mte3", (("ub", "gm"),), 32, 100, 4, False, False, True, "gm"),
        "fixpipe": DmaEngine(
            "fixpipe",
            "fixpipe",
            (("l0c", "gm"), ("l0c", "ub")),
            64,
            20,
            3,
            False,
            False,
            True,
            "gm",
        ),
    }
    matrix = MatrixUnit(
        "cube", "cube", 16, 16, 16,
        {("f16", "f32"): 4096, ("bf16", "f32"): 4096, ("i8", "i32"): 8192, ("f8E4M3FN", "f32"): 8192, ("f8E5M2", "f32"): 8192},
        "l0a", "l0b", "l0c", latency=8,
    )  # fmt: skip
    vector = VectorUnit(
        "vector", "vector", 256, ("ub",),
        VECTOR_OPS,
        latency=2, transcendental_cost=4,
    )  # fmt: skip
    return Machine(
        "tiny", "a test machine with round figures", 1e9, 4, memories, dmas, matrix, vector,
        "scalar", ("scalar", "mte2", "mte1", "mte3", "fixpipe", "cube", "vector"), 4, "<test>",
    )  # fmt: skip


TINY = tiny_machine()


def run(text: str, inputs=(), machine: Machine = TINY, **kwargs):
    module = parse_source(default_context(), text, "test.mlir")
    return run_npu(module, machine, inputs, **kwargs)


def diagnose(text: str, inputs=(), machine: Machine = TINY, **kwargs) -> str:
    with pytest.raises(DiagnosticError) as info:
        run(text, inputs, machine, **kwargs)
    return info.value.format()


def memref(shape, dtype: str, space: str) -> str:
    return f'memref<{"x".join(map(str, shape))}x{dtype}, "{space}">'


# --------------------------------------------------------------------------- #
# mma
# --------------------------------------------------------------------------- #

MMA_PAIRS = [
    ("f16", "f32", np.float16),
    ("bf16", "f32", ml_dtypes.bfloat16),
    ("f8E4M3FN", "f32", ml_dtypes.float8_e4m3fn),
    ("f8E5M2", "f32", ml_dtypes.float8_e5m2),
    ("i8", "i32", np.int8),
]


def mma_program(dtype: str, acc: str) -> str:
    """C = A(16x32) @ B(32x16) as two k=16 instructions, the second accumulating; A and B reach L0 through L1.

    L0A holds A as two 16x16 blocks, one per k step (a 3-d strided transfer), so each block starts aligned.
    """
    a, b, c = (
        memref((16, 32), dtype, "gm"),
        memref((32, 16), dtype, "gm"),
        memref((16, 16), acc, "gm"),
    )
    return f"""
func.func @main(%a: {a}, %b: {b}, %c: {c}) {{
  %a1 = npu.buffer offset 0 : {memref((16, 32), dtype, "l1")}
  %b1 = npu.buffer offset 4096 : {memref((32, 16), dtype, "l1")}
  %a0 = npu.buffer offset 0 : {memref((2, 16, 16), dtype, "l0a")}
  %b0 = npu.buffer offset 0 : {memref((32, 16), dtype, "l0b")}
  %c0 = npu.buffer offset 0 : {memref((16, 16), acc, "l0c")}
  npu.dma "mte2" %a[0, 0] -> %a1[0, 0] {{shape = array<i64: 16, 32>}} : {a} -> {memref((16, 32), dtype, "l1")}
  npu.dma "mte2" %b[0, 0] -> %b1[0, 0] {{shape = array<i64: 32, 16>}} : {b} -> {memref((32, 16), dtype, "l1")}
  npu.set_flag "mte2" -> "mte1", 0
  npu.wait_flag "mte2" -> "mte1", 0
  npu.dma "mte1" %a1[0, 0] -> %a0[0, 0, 0] {{shape = array<i64: 16, 2, 16>, src_strides = array<i64: 32, 16, 1>, dst_strides = array<i64: 16, 256, 1>}} : {memref((16, 32), dtype, "l1")} -> {memref((2, 16, 16), dtype, "l0a")}
  npu.dma "mte1" %b1[0, 0] -> %b0[0, 0] {{shape = array<i64: 32, 16>}} : {memref((32, 16), dtype, "l1")} -> {memref((32, 16), dtype, "l0b")}
  npu.set_flag "mte1" -> "cube", 0
  npu.wait_flag "mte1" -> "cube", 0
  npu.mma %a0[0, 0, 0], %b0[0, 0] -> %c0[0, 0] {{m = 16 : i64, n = 16 : i64, k = 16 : i64}} : {memref((2, 16, 16), dtype, "l0a")}, {memref((32, 16), dtype, "l0b")} -> {memref((16, 16), acc, "l0c")}
  npu.mma %a0[1, 0, 0], %b0[16, 0] -> %c0[0, 0] {{m = 16 : i64, n = 16 : i64, k = 16 : i64, accumulate}} : {memref((2, 16, 16), dtype, "l0a")}, {memref((32, 16), dtype, "l0b")} -> {memref((16, 16), acc, "l0c")}
  npu.set_flag "cube" -> "fixpipe", 0
  npu.wait_flag "cube" -> "fixpipe", 0
  npu.dma "fixpipe" %c0[0, 0] -> %c[0, 0] {{shape = array<i64: 16, 16>}} : {memref((16, 16), acc, "l0c")} -> {c}
  func.return
}}
"""


@pytest.mark.parametrize("dtype, acc, np_dtype", MMA_PAIRS, ids=[p[0] for p in MMA_PAIRS])
def test_mma_matches_numpy_for_each_dtype_pair(dtype, acc, np_dtype):
    rng = np.random.default_rng(1)
    if np.dtype(np_dtype).kind == "i":
        a = rng.integers(-128, 128, (16, 32)).astype(np_dtype)
        b = rng.integers(-128, 128, (32, 16)).astype(np_dtype)
        expected = a.astype(np.int32) @ b.astype(np.int32)
    else:
        a = rng.standard_normal((16, 32)).astype(np_dtype)
        b = rng.standard_normal((32, 16)).astype(np_dtype)
        expected = a.astype(np.float64) @ b.astype(np.float64)
    (c,) = run(mma_program(dtype, acc), [a, b]).outputs
    assert c.dtype == (np.int32 if acc == "i32" else np.float32)
    if acc == "i32":
        np.testing.assert_array_equal(c, expected)
    else:
        np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-4)


def test_mma_without_accumulate_overwrites():
    text = mma_program("f16", "f32").replace(", accumulate}", "}")
    rng = np.random.default_rng(2)
    a = rng.standard_normal((16, 32)).astype(np.float16)
    b = rng.standard_normal((32, 16)).astype(np.float16)
    (c,) = run(text, [a, b]).outputs
    expected = a[:, 16:].astype(np.float32) @ b[16:].astype(np.float32)
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------------------- #
# dma
# --------------------------------------------------------------------------- #


def staged(body: str, args: str, ub_buffers: str) -> str:
    """A function whose body moves data through UB: mte2 in, the vector unit, mte3 out."""
    return f"func.func @main({args}) {{\n{ub_buffers}\n{body}\n  func.return\n}}\n"


def test_dma_strides_pad_transpose_and_cast_in_one_transfer():
    # rows 0, 2, 4, 6 of x; one zero row above, two zero columns after; transposed; f32 -> f16
    x_t, t_t, y_t = (
        memref((8, 16), "f32", "gm"),
        memref((18, 5), "f16", "ub"),
        memref((18, 5), "f16", "gm"),
    )
    text = staged(
        f"""
  npu.dma "mte2" %x[0, 0] -> %t[0, 0] {{shape = array<i64: 4, 16>, src_strides = array<i64: 32, 1>, pad = array<i64: 1, 0, 0, 2>, transpose}} : {x_t} -> {t_t}
  npu.set_flag "mte2" -> "mte3", 0
  npu.wait_flag "mte2" -> "mte3", 0
  npu.dma "mte3" %t[0, 0] -> %y[0, 0] {{shape = array<i64: 18, 5>}} : {t_t} -> {y_t}""",
        f"%x: {x_t}, %y: {y_t}",
        f"  %t = npu.buffer offset 0 : {t_t}",
    )
    x = np.random.default_rng(3).standard_normal((8, 16)).astype(np.float32)
    (y,) = run(text, [x]).outputs
    expected = np.pad(x[::2][:4], ((1, 0), (0, 2))).T.astype(np.float16)
    np.testing.assert_array_equal(y, expected)


def test_dma_pads_with_a_given_value():
    x_t, t_t, y_t = (
        memref((4, 8), "f16", "gm"),
        memref((6, 16), "f16", "ub"),
        memref((6, 16), "f16", "gm"),
    )
    text = staged(
        f"""
  npu.dma "mte2" %x[0, 0] -> %t[0, 0] {{shape = array<i64: 4, 8>, pad = array<i64: 1, 1, 0, 8>, pad_value = 0xFFF0000000000000 : f64}} : {x_t} -> {t_t}
  npu.set_flag "mte2" -> "mte3", 0
  npu.wait_flag "mte2" -> "mte3", 0
  npu.dma "mte3" %t[0, 0] -> %y[0, 0] {{shape = array<i64: 6, 16>}} : {t_t} -> {y_t}""",
        f"%x: {x_t}, %y: {y_t}",
        f"  %t = npu.buffer offset 0 : {t_t}",
    )
    x = np.arange(32, dtype=np.float16).reshape(4, 8)
    (y,) = run(text, [x]).outputs
    np.testing.assert_array_equal(y, np.pad(x, ((1, 1), (0, 8)), constant_values=-np.inf))


def test_dma_tile_at_dynamic_offsets_and_strided_destination():
    # gather the 4x4 tile at rows [i, i+4) of each loop step into columns of a 4x16 buffer
    x_t, t_t, y_t = (
        memref((16, 4), "i32", "gm"),
        memref((4, 32), "i32", "ub"),
        memref((4, 32), "i32", "gm"),
    )
    text = staged(
        f"""
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c16 = arith.constant 16 : index
  %c2 = arith.constant 2 : index
  scf.for %i = %c0 to %c16 step %c4 {{
    %col = arith.muli %i, %c2 : index
    npu.dma "mte2" %x[%i, 0] -> %t[0, %col] {{shape = array<i64: 4, 4>}} : {x_t} -> {t_t}
  }}
  npu.set_flag "mte2" -> "mte3", 0
  npu.wait_flag "mte2" -> "mte3", 0
  npu.dma "mte3" %t[0, 0] -> %y[0, 0] {{shape = array<i64: 4, 32>}} : {t_t} -> {y_t}""",
        f"%x: {x_t}, %y: {y_t}",
        f"  %t = npu.buffer offset 0 : {t_t}",
    )
    x = np.arange(64, dtype=np.int32).reshape(16, 4)
    (y,) = run(text, [x]).outputs
    expected = np.zeros((4, 32), np.int32)
    for step in range(4):
        expected[:, 8 * step : 8 * step + 4] = x[4 * step : 4 * step + 4]
    np.testing.assert_array_equal(y, expected)


def test_dma_cast_to_integers_rounds_and_saturates():
    x_t, t_t, y_t = memref((32,), "f32", "gm"), memref((32,), "i8", "ub"), memref((32,), "i8", "gm")
    text = staged(
        f"""
  npu.dma "mte2" %x[0] -> %t[0] {{shape = array<i64: 32>}} : {x_t} -> {t_t}
  npu.set_flag "mte2" -> "mte3", 0
  npu.wait_flag "mte2" -> "mte3", 0
  npu.dma "mte3" %t[0] -> %y[0] {{shape = array<i64: 32>}} : {t_t} -> {y_t}""",
        f"%x: {x_t}, %y: {y_t}",
        f"  %t = npu.buffer offset 0 : {t_t}",
    )
    x = np.linspace(-300, 300, 32).astype(np.float32)
    x[:3] = [2.5, 3.5, -2.5]
    (y,) = run(text, [x]).outputs
    np.testing.assert_array_equal(y, np.clip(np.rint(x), -128, 127).astype(np.int8))
    assert list(y[:3]) == [2, 4, -2]


# --------------------------------------------------------------------------- #
# vector unit
# --------------------------------------------------------------------------- #


def vector_program(
    instruction: str, sources: list[tuple[str, tuple, str]], dst: tuple[str, tuple, str]
) -> str:
    """Load each source and the destination's initial contents into UB, run `instruction`, store the destination."""
    lines, args, buffers, offset = [], [], [], 0
    for name, shape, dtype in [*sources, dst]:
        args.append(f"%{name}_gm: {memref(shape, dtype, 'gm')}")
        buffers.append(f"  %{name} = npu.buffer offset {offset} : {memref(shape, dtype, 'ub')}")
        offset += -(-int(np.prod(shape)) * np.dtype(_NP[dtype]).itemsize // 32) * 32
        zeros = ", ".join("0" for _ in shape)
        lines.append(
            f'  npu.dma "mte2" %{name}_gm[{zeros}] -> %{name}[{zeros}] {{shape = array<i64: {", ".join(map(str, shape))}>}}'
            f" : {memref(shape, dtype, 'gm')} -> {memref(shape, dtype, 'ub')}"
        )
    name, shape, dtype = dst
    zeros = ", ".join("0" for _ in shape)
    lines += [
        '  npu.set_flag "mte2" -> "vector", 0',
        '  npu.wait_flag "mte2" -> "vector", 0',
        f"  {instruction}",
        '  npu.set_flag "vector" -> "mte3", 0',
        '  npu.wait_flag "vector" -> "mte3", 0',
        f'  npu.dma "mte3" %{name}[{zeros}] -> %{name}_gm[{zeros}] {{shape = array<i64: {", ".join(map(str, shape))}>}}'
        f" : {memref(shape, dtype, 'ub')} -> {memref(shape, dtype, 'gm')}",
    ]
    return staged("\n".join(lines), ", ".join(args), "\n".join(buffers))


_NP = {
    "f32": np.float32,
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "i8": np.int8,
    "i32": np.int32,
}


def run_vector(instruction, sources, dst, arrays):
    result = run(vector_program(instruction, sources, dst), arrays)
    return result.arguments[f"{dst[0]}_gm"]


@pytest.mark.parametrize(
    "kind, reference",
    [
        ("add", np.add),
        ("sub", np.subtract),
        ("mul", np.multiply),
        ("div", np.divide),
        ("max", np.maximum),
        ("min", np.minimum),
    ],
)
def test_binary_vector_ops_with_repeat_mask_and_stride(kind, reference):
    # 4 repeats of 48 active f32 lanes (of 64), the sources' blocks 64 elements apart, the destination's 80
    rng = np.random.default_rng(4)
    x, y = (
        rng.standard_normal((4, 64)).astype(np.float32),
        rng.standard_normal((4, 64)).astype(np.float32),
    )
    z = np.full((4, 80), 7.0, np.float32)
    t = 'memref<4x64xf32, "ub">'
    instruction = (
        f"npu.vec.{kind} %x[0, 0], %y[0, 0] -> %z[0, 0] {{repeat = 4 : i64, mask = 48 : i64, stride = array<i64: 64, 64, 80>}}"
        f' : {t}, {t} -> memref<4x80xf32, "ub">'
    )
    out = run_vector(
        instruction,
        [("x", (4, 64), "f32"), ("y", (4, 64), "f32")],
        ("z", (4, 80), "f32"),
        [x, y, z],
    )
    expected = z.copy()
    expected[:, :48] = reference(x[:, :48], y[:, :48])
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize(
    "kind, reference",
    [("exp", np.exp), ("rsqrt", lambda v: 1 / np.sqrt(v)), ("relu", lambda v: np.maximum(v, 0))],
)
def test_unary_vector_ops_in_f16_round_once_from_f32(kind, reference):
    # default mask and stride: 128 f16 lanes per repeat, blocks back to back
    x = (
        np.random.default_rng(5)
        .uniform(-4 if kind == "relu" else 0.1, 4, (2, 128))
        .astype(np.float16)
    )
    t = 'memref<2x128xf16, "ub">'
    instruction = f"npu.vec.{kind} %x[0, 0] -> %y[0, 0] {{repeat = 2 : i64}} : {t} -> {t}"
    out = run_vector(
        instruction, [("x", (2, 128), "f16")], ("y", (2, 128), "f16"), [x, np.zeros_like(x)]
    )
    np.testing.assert_array_equal(out, reference(x.astype(np.float32)).astype(np.float16))


def test_scalar_operand_ops_and_dup():
    x = np.random.default_rng(9).standard_normal((2, 128)).astype(np.float16)
    t = 'memref<2x128xf16, "ub">'
    for kind, scalar, reference in (("adds", 0.1, np.add), ("muls", -3.0, np.multiply)):
        instruction = f"npu.vec.{kind} %x[0, 0] -> %y[0, 0] {{repeat = 2 : i64, scalar = {scalar} : f64}} : {t} -> {t}"
        out = run_vector(
            instruction, [("x", (2, 128), "f16")], ("y", (2, 128), "f16"), [x, np.zeros_like(x)]
        )
        # the scalar is first rounded to the element type, the result once from f32
        expected = reference(x.astype(np.float32), np.float32(np.float16(scalar))).astype(
            np.float16
        )
        np.testing.assert_array_equal(out, expected)
    # dup fills 40 of the 64 f32 lanes of each of 3 blocks spaced 70 apart
    instruction = (
        "npu.vec.dup %y[0] {scalar = 2.5 : f64, repeat = 3 : i64, mask = 40 : i64, stride = array<i64: 70>}"
        ' : memref<200xf32, "ub">'
    )
    out = run_vector(instruction, [], ("y", (200,), "f32"), [np.zeros(200, np.float32)])
    expected = np.zeros(200, np.float32)
    for block in range(3):
        expected[70 * block : 70 * block + 40] = 2.5
    np.testing.assert_array_equal(out, expected)


def test_vector_cast_f32_to_bf16_and_f16_to_i8():
    x = np.random.default_rng(6).standard_normal(64).astype(np.float32) * 100
    instruction = 'npu.vec.cast %x[0] -> %y[0] : memref<64xf32, "ub"> -> memref<64xbf16, "ub">'
    out = run_vector(
        instruction,
        [("x", (64,), "f32")],
        ("y", (64,), "bf16"),
        [x, np.zeros(64, ml_dtypes.bfloat16)],
    )
    np.testing.assert_array_equal(out, x.astype(ml_dtypes.bfloat16))
    h = np.array([1.5, -1.5, 200, -200, 0.4] + [0] * 123, np.float16)
    instruction = 'npu.vec.cast %x[0] -> %y[0] : memref<128xf16, "ub"> -> memref<128xi8, "ub">'
    out = run_vector(
        instruction, [("x", (128,), "f16")], ("y", (128,), "i8"), [h, np.zeros(128, np.int8)]
    )
    assert list(out[:5]) == [2, -2, 127, -128, 0]


@pytest.mark.parametrize("combiner, reference", [("sum", np.sum), ("max", np.max)])
def test_reduce_innermost_dimension(combiner, reference):
    x = np.random.default_rng(7).standard_normal((8, 32)).astype(np.float16)
    instruction = (
        f'npu.vec.reduce "{combiner}" %x[0, 0] -> %r[0] {{repeat = 8 : i64, mask = 32 : i64, stride = array<i64: 32, 1>}}'
        ' : memref<8x32xf16, "ub"> -> memref<16xf16, "ub">'
    )
    out = run_vector(
        instruction, [("x", (8, 32), "f16")], ("r", (16,), "f16"), [x, np.zeros(16, np.float16)]
    )
    expected = reference(x.astype(np.float32), axis=1).astype(np.float16)
    np.testing.assert_array_equal(out[:8], expected)
    assert not out[8:].any()


def test_broadcast_and_select():
    r = np.arange(4, dtype=np.float32)
    instruction = (
        "npu.vec.broadcast %r[0] -> %y[0, 0] {repeat = 4 : i64, mask = 16 : i64, stride = array<i64: 1, 16>}"
        ' : memref<4xf32, "ub"> -> memref<4x16xf32, "ub">'
    )
    out = run_vector(
        instruction, [("r", (4,), "f32")], ("y", (4, 16), "f32"), [r, np.zeros((4, 16), np.float32)]
    )
    np.testing.assert_array_equal(out, np.repeat(r[:, None], 16, axis=1))

    rng = np.random.default_rng(8)
    cond = rng.integers(0, 2, 64).astype(np.int8)
    a, b = rng.standard_normal(64).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    t = 'memref<64xf32, "ub">'
    instruction = (
        f'npu.vec.select %m[0], %a[0], %b[0] -> %y[0] : memref<64xi8, "ub">, {t}, {t} -> {t}'
    )
    out = run_vector(
        instruction,
        [("m", (64,), "i8"), ("a", (64,), "f32"), ("b", (64,), "f32")],
        ("y", (64,), "f32"),
        [cond, a, b, np.zeros(64, np.float32)],
    )
    np.testing.assert_array_equal(out, np.where(cond != 0, a, b))


# --------------------------------------------------------------------------- #
# What the interpreter reports
# --------------------------------------------------------------------------- #

COPY = """
func.func @main(%x: memref<64xf32, "gm">, %y: memref<64xf32, "gm">) {
  %t = npu.buffer offset 0 : memref<64xf32, "ub">
  npu.dma "mte2" %x[0] -> %t[0] {shape = array<i64: 64>} : memref<64xf32, "gm"> -> memref<64xf32, "ub">
  npu.set_flag "mte2" -> "mte3", 0
  npu.wait_flag "mte2" -> "mte3", 0
  npu.dma "mte3" %t[0] -> %y[0] {shape = array<i64: 64>} : memref<64xf32, "ub"> -> memref<64xf32, "gm">
  func.return
}
"""


def test_npu_programs_are_recognized():
    assert is_npu_program(parse_source(default_context(), COPY, "test.mlir"))
    assert not is_npu_program(
        parse_source(default_context(), "func.func @main() {\n  func.return\n}\n", "t.mlir")
    )


def test_inputs_by_name_and_outputs_are_the_arguments_not_given():
    x = np.arange(64, dtype=np.float32)
    result = run(COPY, {"x": x})
    (y,) = result.outputs
    np.testing.assert_array_equal(y, x)
    assert set(result.arguments) == {"x", "y"}


def test_missing_wait_is_a_hazard_at_the_reader_with_a_note_at_the_writer():
    text = COPY.replace('  npu.wait_flag "mte2" -> "mte3", 0\n', "")
    message = diagnose(text, [np.zeros(64, np.float32)])
    assert message.startswith(
        "test.mlir:6:3: error: npu.dma on pipe 'mte3' reads 'ub' bytes [0, 256)"
    )
    assert "while npu.dma on pipe 'mte2' may still be writing" in message
    assert "test.mlir:4:3: note: the earlier access on pipe 'mte2'" in message


def test_overwriting_a_buffer_another_pipe_still_reads_is_a_hazard():
    text = COPY.replace(
        "  func.return",
        '  npu.dma "mte2" %x[0] -> %t[0] {shape = array<i64: 64>} : memref<64xf32, "gm"> -> memref<64xf32, "ub">\n'
        "  func.return",
    )
    message = diagnose(text, [np.zeros(64, np.float32)])
    assert "test.mlir:8:3: error: npu.dma on pipe 'mte2' writes 'ub'" in message
    assert "npu.dma on pipe 'mte3' may still be reading" in message


def test_a_barrier_orders_every_pipe():
    text = COPY.replace(
        '  npu.set_flag "mte2" -> "mte3", 0\n  npu.wait_flag "mte2" -> "mte3", 0\n',
        "  npu.barrier\n",
    )
    x = np.arange(64, dtype=np.float32)
    np.testing.assert_array_equal(run(text, [x]).outputs[0], x)


def test_a_wait_without_a_pending_set_is_a_deadlock():
    text = COPY.replace('  npu.set_flag "mte2" -> "mte3", 0\n', "")
    message = diagnose(text, [np.zeros(64, np.float32)])
    assert (
        'test.mlir:5:3: error: npu.wait_flag "mte2" -> "mte3", 0 can never be satisfied' in message
    )
    assert "(deadlock)" in message


def test_index_past_the_buffer_at_run_time():
    text = COPY.replace(
        '  npu.dma "mte2" %x[0]',
        '  %c = arith.constant 64 : index\n  npu.dma "mte2" %x[%c]',
    )
    message = diagnose(text, [np.zeros(64, np.float32)])
    assert "error: index 64 of the source is out of bounds: dimension 0 has size 64" in message


def test_window_past_the_buffer_at_run_time():
    text = COPY.replace(
        '  npu.dma "mte2" %x[0]', '  %c = arith.constant 8 : index\n  npu.dma "mte2" %x[%c]'
    )
    message = diagnose(text, [np.zeros(64, np.float32)])
    assert (
        "error: the source tile of shape [64] is out of bounds: it does not fit dimension 0: 8 + 64 > 64"
        in message
    )
    strided = text.replace(
        "{shape = array<i64: 64>}", "{shape = array<i64: 32>, src_strides = array<i64: 2>}", 1
    )
    strided = strided.replace(
        "-> %t[0] {shape = array<i64: 32>",
        "-> %t[0] {shape = array<i64: 32>, dst_strides = array<i64: 1>",
    )
    message = diagnose(strided, [np.zeros(64, np.float32)])
    assert (
        "the source window of shape [32] with strides [2] at element 8 is out of bounds: it ends at element 71"
        in message
    )


def test_dma_windows_start_anywhere_but_compute_operands_are_aligned():
    shifted = COPY.replace(
        '  npu.dma "mte2" %x[0] -> %t[0] {shape = array<i64: 64>}',
        '  %c = arith.constant 1 : index\n  npu.dma "mte2" %x[0] -> %t[%c] {shape = array<i64: 63>}',
    )
    x = np.arange(64, dtype=np.float32)
    assert list(run(shifted, [x]).outputs[0][1:]) == list(x[:63])
    relu = shifted.replace(
        '  npu.set_flag "mte2" -> "mte3", 0\n  npu.wait_flag "mte2" -> "mte3", 0\n',
        '  npu.set_flag "mte2" -> "vector", 0\n  npu.wait_flag "mte2" -> "vector", 0\n'
        '  npu.vec.relu %t[%c] -> %t[%c] {mask = 8 : i64} : memref<64xf32, "ub"> -> memref<64xf32, "ub">\n'
        '  npu.set_flag "vector" -> "mte3", 0\n  npu.wait_flag "vector" -> "mte3", 0\n',
    )
    message = diagnose(relu, [x])
    assert (
        "the operand #0 starts at byte 4 of 'ub', which is misaligned: addresses must be multiples of 32"
        in message
    )


def test_machine_rules_are_checked_before_running():
    text = COPY.replace('npu.dma "mte3"', 'npu.dma "mte1"')
    message = diagnose(text, [np.zeros(64, np.float32)])
    assert (
        "test.mlir:7:3: error: engine 'mte1' cannot move data from 'ub' to 'gm' (it serves l1->l0a, l1->l0b)"
        in message
    )


def test_ops_the_scalar_unit_cannot_run():
    text = COPY.replace("  func.return", "  %f = arith.constant 1.0 : f32\n  func.return")
    assert "the scalar unit computes on integers and indices" in diagnose(
        text, [np.zeros(64, np.float32)]
    )


# --------------------------------------------------------------------------- #
# dma against an element-by-element reference, on random transfers
# --------------------------------------------------------------------------- #

_CAST_PAIRS = [
    ("f32", "f32"),
    ("f32", "f16"),
    ("f16", "f32"),
    ("f32", "bf16"),
    ("i32", "i8"),
    ("f32", "i32"),
]


@st.composite
def transfers(draw):
    rank = draw(st.integers(1, 3))
    shape = draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    # source strides in elements, possibly overlapping or gapped; the source is a flat buffer big enough
    strides = draw(st.lists(st.integers(0, 9), min_size=rank, max_size=rank))
    pad = (
        draw(st.lists(st.integers(0, 2), min_size=2 * rank, max_size=2 * rank))
        if draw(st.booleans())
        else None
    )
    transpose = rank >= 2 and draw(st.booleans())
    src_type, dst_type = draw(st.sampled_from(_CAST_PAIRS))
    return shape, strides, pad, transpose, src_type, dst_type


@settings(max_examples=40, deadline=None)
@given(transfers())
def test_random_dma_matches_an_elementwise_reference(transfer):
    shape, strides, pad, transpose, src_type, dst_type = transfer
    src_len = 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    out_shape = [n + (pad[2 * d] + pad[2 * d + 1] if pad else 0) for d, n in enumerate(shape)]
    if transpose:
        out_shape[-1], out_shape[-2] = out_shape[-2], out_shape[-1]
    # mte2 (gm -> ub) pads and casts; the test machine also lets it transpose
    attrs = [
        f"shape = array<i64: {', '.join(map(str, shape))}>",
        f"src_strides = array<i64: {', '.join(map(str, strides))}>",
    ]
    if pad:
        attrs.append(f"pad = array<i64: {', '.join(map(str, pad))}>")
    if transpose:
        attrs.append("transpose")
    x_t, t_t, y_t = (
        memref((src_len,), src_type, "gm"),
        memref(out_shape, dst_type, "ub"),
        memref(out_shape, dst_type, "gm"),
    )
    zeros = ", ".join("0" for _ in out_shape)
    text = staged(
        f"""
  npu.dma "mte2" %x[0] -> %t[{zeros}] {{{", ".join(attrs)}}} : {x_t} -> {t_t}
  npu.set_flag "mte2" -> "mte3", 0
  npu.wait_flag "mte2" -> "mte3", 0
  npu.dma "mte3" %t[{zeros}] -> %y[{zeros}] {{shape = array<i64: {", ".join(map(str, out_shape))}>}} : {t_t} -> {y_t}""",
        f"%x: {x_t}, %y: {y_t}",
        f"  %t = npu.buffer offset 0 : {t_t}",
    )
    x = (np.arange(src_len) * 1.25 - 7).astype(_NP[src_type])
    (y,) = run(text, [x]).outputs

    window = np.zeros(shape, x.dtype)
    for index in np.ndindex(*shape):
        window[index] = x[sum(i * s for i, s in zip(index, strides))]
    if pad:
        window = np.pad(window, [(pad[2 * d], pad[2 * d + 1]) for d in range(len(shape))])
    if transpose:
        window = np.swapaxes(window, -1, -2)
    dtype = np.dtype(_NP[dst_type])
    expected = np.rint(window).astype(dtype) if dtype.kind == "i" else window.astype(dtype)
    np.testing.assert_array_equal(y, expected)


def test_arguments_must_be_buffers_in_global_memory():
    text = (
        'func.func @main(%x: memref<64xf32, "gm">, %y: memref<64xf32, "ub">) {\n  func.return\n}\n'
    )
    assert "error: argument %y must be in a global memory space, got 'ub'" in diagnose(text)
    text = 'func.func @main(%x: memref<64xf32, "gm">, %n: index) {\n  func.return\n}\n'
    assert "error: argument %n must be a memref buffer, got index" in diagnose(text)


def test_a_set_never_waited_for_is_a_warning():
    text = COPY.replace("  func.return", '  npu.set_flag "mte3" -> "mte2", 1\n  func.return')
    with collect_diagnostics() as diagnostics:
        run(text, [np.zeros(64, np.float32)])
    (warning,) = diagnostics
    assert warning.format().startswith(
        'test.mlir:8:3: warning: npu.set_flag "mte3" -> "mte2", 1 is never waited for: the flag is still set at the end'
    )
    with collect_diagnostics() as diagnostics:
        run(COPY, [np.zeros(64, np.float32)])
    assert diagnostics == []


@st.composite
def vector_instructions(draw):
    kind = draw(st.sampled_from(["add", "max", "relu", "reduce", "broadcast"]))
    repeat = draw(st.integers(1, 4))
    mask = draw(st.integers(1, 64))  # f32: 64 lanes on the test machine
    sources = 2 if kind in ("add", "max") else 1
    # each operand's blocks may overlap (stride < mask), abut or leave gaps
    strides = draw(st.lists(st.integers(0, 80), min_size=sources + 1, max_size=sources + 1))
    return kind, repeat, mask, strides


@settings(max_examples=40, deadline=None)
@given(vector_instructions())
def test_random_vector_instruction_matches_an_elementwise_reference(instruction):
    kind, repeat, mask, strides = instruction
    sources = len(strides) - 1
    lengths = {"reduce": [mask, 1], "broadcast": [1, mask]}.get(kind, [mask] * (sources + 1))
    sizes = [(repeat - 1) * stride + length for stride, length in zip(strides, lengths)]
    names = ["x", "y"][:sources]
    t = [memref((n,), "f32", "ub") for n in sizes]
    combiner = '"max" ' if kind == "reduce" else ""
    operands = ", ".join(f"%{name}[0]" for name in names)
    text = vector_program(
        f"npu.vec.{kind} {combiner}{operands} -> %z[0] {{repeat = {repeat} : i64, mask = {mask} : i64, "
        f"stride = array<i64: {', '.join(map(str, strides))}>}} : {', '.join(t[:-1])} -> {t[-1]}",
        [(name, (n,), "f32") for name, n in zip(names, sizes)],
        ("z", (sizes[-1],), "f32"),
    )
    rng = np.random.default_rng(repeat * 1000 + mask)
    arrays = [rng.standard_normal(n).astype(np.float32) for n in sizes]
    out = run(text, arrays).arguments["z_gm"]

    expected = arrays[-1].copy()
    for r in range(
        repeat
    ):  # repetitions in order: a later block overwrites an overlapping earlier one
        blocks = [a[r * s : r * s + n] for a, s, n in zip(arrays[:-1], strides, lengths)]
        start = r * strides[-1]
        if kind == "reduce":
            expected[start] = blocks[0].max()
        elif kind == "broadcast":
            expected[start : start + mask] = blocks[0][0]
        else:
            reference = {"add": np.add, "max": np.maximum, "relu": lambda v: np.maximum(v, 0)}[kind]
            expected[start : start + mask] = reference(*blocks)
    np.testing.assert_array_equal(out, expected)


def test_scalar_unit_control_flow_ping_pong_buffers():
    # tile t of x goes to half (t mod 2) of a 2-slot UB buffer, then to row t of y; an iter_arg counts rows
    x_t, t_t, y_t = (
        memref((4, 8), "i32", "gm"),
        memref((2, 8), "i32", "ub"),
        memref((4, 8), "i32", "gm"),
    )
    text = staged(
        f"""
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %rows = scf.for %t = %c0 to %c4 step %c1 iter_args(%done = %c0) -> (index) {{
    %slot = arith.remui %t, %c2 : index
    %odd = arith.cmpi eq, %slot, %c1 : index
    %row = arith.select %odd, %t, %t : index
    npu.dma "mte2" %x[%row, 0] -> %b[%slot, 0] {{shape = array<i64: 1, 8>}} : {x_t} -> {t_t}
    npu.set_flag "mte2" -> "mte3", 0
    npu.wait_flag "mte2" -> "mte3", 0
    npu.dma "mte3" %b[%slot, 0] -> %y[%done, 0] {{shape = array<i64: 1, 8>}} : {t_t} -> {y_t}
    npu.set_flag "mte3" -> "mte2", 0
    npu.wait_flag "mte3" -> "mte2", 0
    %next = arith.addi %done, %c1 : index
    scf.yield %next : index
  }}""",
        f"%x: {x_t}, %y: {y_t}",
        f"  %b = npu.buffer offset 0 : {t_t}",
    )
    x = np.arange(32, dtype=np.int32).reshape(4, 8)
    (y,) = run(text, [x]).outputs
    np.testing.assert_array_equal(y, x)
    assert "divides by zero" in diagnose(
        text.replace("arith.remui %t, %c2", "arith.remui %t, %c0"), [x]
    )
