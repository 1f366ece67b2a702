"""Graph-level passes: every lit input computes the same before and after its passes, on the graph interpreter."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from ziggurat.context import default_context
from ziggurat.diagnostics import DiagnosticError, collect_diagnostics
from ziggurat.dialects.graph import ConstantOp, ExpOp, TransposeOp
from ziggurat.dialects.graph_canonicalization import compose_permutations, widens_exactly
from ziggurat.interpreters.graph_interpreter import random_inputs, run_function
from ziggurat.ir.tensor_constants import splat_value
from ziggurat.parsing import parse_source
from ziggurat.tools.ziggurat_opt import split_input
from ziggurat.transforms.graph.canonicalize import GraphCanonicalizePass
from ziggurat.transforms.graph.fold_constants import GraphFoldConstantsPass

LIT_DIR = Path(__file__).parent.parent / "graph"

LIT_PASSES: dict[str, list[ModulePass]] = {
    "canonicalize.mlir": [GraphCanonicalizePass(), CanonicalizePass()],
    "fold-constants.mlir": [GraphFoldConstantsPass(), GraphFoldConstantsPass(max_elements=4)],
    "cse-dce.mlir": [CommonSubexpressionElimination(), DeadCodeElimination()],
}


def parse(text: str, filename: str = "test.mlir", line_offset: int = 0) -> ModuleOp:
    return parse_source(default_context(), text, filename, line_offset)


def apply(module: ModuleOp, pass_: ModulePass) -> ModuleOp:
    after = module.clone()
    pass_.apply(default_context(), after)
    after.verify()
    return after


def lit_cases():
    for file_name, passes in LIT_PASSES.items():
        path = LIT_DIR / file_name
        for chunk, offset in split_input(path.read_text()):
            module = parse(chunk, str(path), offset)
            for function in module.ops:
                assert isinstance(function, func.FuncOp)
                for pass_ in passes:
                    yield pytest.param(
                        chunk,
                        str(path),
                        offset,
                        function.sym_name.data,
                        pass_,
                        id=f"{file_name}:@{function.sym_name.data}:{pass_.pipeline_pass_spec()}",
                    )


# inf and NaN are part of what @ieee_specials checks; numpy's warnings about them are not.
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize(("chunk", "path", "offset", "function", "pass_"), list(lit_cases()))
def test_lit_function_computes_the_same(chunk, path, offset, function, pass_):
    before = parse(chunk, path, offset)
    after = apply(before, pass_)
    function_op = next(f for f in before.ops if f.sym_name.data == function)
    inputs = random_inputs(function_op, seed=7)
    expected = run_function(before, inputs, function)
    actual = run_function(after, inputs, function)
    assert len(actual) == len(expected)
    for got, want in zip(actual, expected):
        assert got.dtype == want.dtype and got.shape == want.shape
        # Folding runs the same evaluate, and the patterns are exact up to the sign of zero.
        np.testing.assert_array_equal(got, want)


# --------------------------------------------------------------------------- #
# transpose of transpose, over random permutations
# --------------------------------------------------------------------------- #


@st.composite
def two_permutations(draw):
    shape = draw(st.lists(st.integers(1, 3), min_size=1, max_size=5))
    axes = list(range(len(shape)))
    inner = draw(st.permutations(axes))
    outer = draw(st.permutations(axes))
    return shape, inner, outer


def tensor(shape) -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}f32>"


@settings(max_examples=40, deadline=None)
@given(two_permutations())
def test_transpose_of_transpose_composes(case):
    shape, inner, outer = case
    middle = [shape[p] for p in inner]
    final = [middle[p] for p in outer]
    module = parse(
        f"""
        func.func @main(%x: {tensor(shape)}) -> {tensor(final)} {{
          %0 = graph.transpose %x {{perm = array<i64: {", ".join(map(str, inner))}>}} : {tensor(shape)} -> {tensor(middle)}
          %1 = graph.transpose %0 {{perm = array<i64: {", ".join(map(str, outer))}>}} : {tensor(middle)} -> {tensor(final)}
          func.return %1 : {tensor(final)}
        }}
        """
    )
    after = apply(module, GraphCanonicalizePass())

    composed = compose_permutations(inner, outer)
    transposes = [op for op in after.walk() if isinstance(op, TransposeOp)]
    if composed == tuple(range(len(shape))):
        assert transposes == []
    else:
        assert [tuple(t.perm.get_values()) for t in transposes] == [composed]

    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    (got,) = run_function(after, [x])
    np.testing.assert_array_equal(got, np.transpose(np.transpose(x, inner), outer))


# --------------------------------------------------------------------------- #
# What folding refuses, and how constants are read and written
# --------------------------------------------------------------------------- #

EXP_OF_CONSTANT = """
func.func @main() -> tensor<3xf32> {
  %c = graph.constant dense<[0.0, 1.0, 2.0]> : tensor<3xf32>
  %0 = graph.exp %c : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}
"""


def test_fold_leaves_an_op_whose_evaluate_fails_with_a_warning(monkeypatch):
    def failing(self, *inputs):
        raise FloatingPointError("overflow")

    monkeypatch.setattr(ExpOp, "evaluate", failing)
    module = parse(EXP_OF_CONSTANT, "exp.mlir")
    with collect_diagnostics() as produced:
        after = apply(module, GraphFoldConstantsPass())
    assert any(isinstance(op, ExpOp) for op in after.walk())
    [warning] = produced
    assert (warning.severity, warning.file, warning.line) == ("warning", "exp.mlir", 4)
    assert (
        "'graph.exp' not folded: evaluating it failed: FloatingPointError: overflow"
        in warning.message
    )


def test_fold_reports_an_evaluate_of_the_wrong_dtype(monkeypatch):
    monkeypatch.setattr(ExpOp, "evaluate", lambda self, x: (np.exp(x).astype(np.float64),))
    module = parse(EXP_OF_CONSTANT, "exp.mlir")
    with pytest.raises(DiagnosticError) as error:
        apply(module, GraphFoldConstantsPass())
    [diagnostic] = error.value.diagnostics
    assert diagnostic.line == 4
    assert "dtype float64, but its type is tensor<3xf32>" in diagnostic.message


def test_uniform_fold_result_is_a_splat():
    module = parse(
        """
        func.func @main() -> tensor<64x64xi32> {
          %a = graph.constant dense<3> : tensor<64x1xi32>
          %b = graph.constant dense<4> : tensor<1x64xi32>
          %0 = graph.add %a, %b : (tensor<64x1xi32>, tensor<1x64xi32>) -> tensor<64x64xi32>
          func.return %0 : tensor<64x64xi32>
        }
        """
    )
    after = apply(module, GraphFoldConstantsPass())
    [constant] = [op for op in after.walk() if isinstance(op, ConstantOp)]
    assert len(constant.value.data.data) == 4
    np.testing.assert_array_equal(constant.to_array(), np.full((64, 64), 7, np.int32))


@pytest.mark.parametrize(
    ("values", "splat"),
    [
        ([0.0, 0.0], 0.0),
        ([-0.0, -0.0], -0.0),
        ([0.0, -0.0], None),  # bitwise different
        ([np.nan, np.nan], "nan"),
        ([1.0, 2.0], None),
    ],
)
def test_splat_value(values, splat):
    constant = ConstantOp.from_array(np.array(values, np.float32))
    element = splat_value(constant.output)
    if splat is None:
        assert element is None
    elif splat == "nan":
        assert element is not None and np.isnan(element)
    else:
        assert element is not None and element == splat and np.signbit(element) == np.signbit(splat)


def every_value(dtype: np.dtype) -> np.ndarray:
    """All values of a dtype of at most 16 bits, from its bit patterns."""
    if dtype == np.bool_:
        return np.array([False, True])
    bits = np.dtype(f"uint{8 * dtype.itemsize}")
    return np.arange(2 ** (8 * dtype.itemsize)).astype(bits).view(dtype)


@pytest.mark.parametrize(
    ("source", "target", "exact"),
    [
        (np.float16, np.float32, True),
        (np.float32, np.float16, False),
        (ml_dtypes.bfloat16, np.float32, True),
        (np.float16, ml_dtypes.bfloat16, False),  # bf16 has fewer mantissa bits
        (ml_dtypes.float8_e4m3fn, np.float16, True),
        (ml_dtypes.float8_e5m2, ml_dtypes.float8_e4m3fn, False),  # e4m3 has less range
        (np.int8, np.int16, True),
        (np.uint8, np.int8, False),
        (np.uint8, np.int16, True),
        (np.bool_, np.int8, True),
        (np.int8, np.bool_, False),
        (np.int8, np.float16, False),  # exact, but graph.cast treats the kinds differently
    ],
)
def test_widens_exactly(source, target, exact):
    source, target = np.dtype(source), np.dtype(target)
    assert widens_exactly(source, target) is exact
    if (source.kind in "iub") == (target.kind in "iub") and source.itemsize <= 2:
        # Compared in a type that holds both exactly.
        wide = np.int64 if source.kind in "iub" else np.float64
        values = every_value(source)
        with np.errstate(invalid="ignore", over="ignore"):  # narrowing overflows, as it should
            want, got = values.astype(wide), values.astype(target).astype(wide)
        assert np.array_equal(got, want, equal_nan=wide is np.float64) is exact


# --------------------------------------------------------------------------- #
# Random chains of simplifiable ops, on inputs with NaN, infinities and -0.0
# --------------------------------------------------------------------------- #


class ChainBuilder:
    """`func.func @main(%x)` as a chain of steps on f32 tensors, each rewriting the current value."""

    def __init__(self, shape: list[int]):
        self.input_shape, self.shape = list(shape), list(shape)
        self.lines: list[str] = []
        self.value, self.count = "%x", 0
        self.may_remain = {
            "graph.neg",
            "graph.relu",
            "graph.relu6",
            "graph.transpose",
            "graph.reshape",
        }
        """Ops canonicalization may leave; every other op of a chain is an identity."""

    def fresh(self) -> str:
        self.count += 1
        return f"%v{self.count}"

    def emit(self, text: str, shape: list[int] | None = None) -> None:
        name = self.fresh()
        self.lines.append(f"{name} = {text}")
        self.value, self.shape = name, self.shape if shape is None else shape

    def binary(self, op: str, scalar: float, constant_first: bool) -> None:
        # All-1 dimensions: the constant never broadcasts the value to a bigger shape.
        constant_type, value_type = tensor([1] * len(self.shape)), tensor(self.shape)
        constant = self.fresh()
        self.lines.append(f"{constant} = graph.constant dense<{scalar}> : {constant_type}")
        operands = [(constant, constant_type), (self.value, value_type)]
        if not constant_first:
            operands.reverse()
        (lhs, lhs_type), (rhs, rhs_type) = operands
        self.emit(f"graph.{op} {lhs}, {rhs} : ({lhs_type}, {rhs_type}) -> {value_type}")

    def unary(self, op: str) -> None:
        self.emit(f"graph.{op} {self.value} : {tensor(self.shape)}")

    def transpose(self, perm: list[int]) -> None:
        shape = [self.shape[p] for p in perm]
        self.emit(
            f"graph.transpose {self.value} {{perm = array<i64: {', '.join(map(str, perm))}>}} : "
            f"{tensor(self.shape)} -> {tensor(shape)}",
            shape,
        )

    def reshape(self, shape: list[int]) -> None:
        self.emit(f"graph.reshape {self.value} : {tensor(self.shape)} -> {tensor(shape)}", shape)

    def cast_through_f64(self) -> None:
        narrow = tensor(self.shape)
        wide = narrow.replace("f32", "f64")
        self.emit(f"graph.cast {self.value} : {narrow} -> {wide}")
        self.emit(f"graph.cast {self.value} : {wide} -> {narrow}")

    def module(self) -> str:
        body = "\n  ".join(self.lines)
        return (
            f"func.func @main(%x: {tensor(self.input_shape)}) -> {tensor(self.shape)} {{\n"
            f"  {body}\n  func.return {self.value} : {tensor(self.shape)}\n}}"
        )


@st.composite
def chains(draw):
    chain = ChainBuilder(draw(st.lists(st.integers(1, 3), min_size=1, max_size=3)))
    steps = [
        "add",
        "sub",
        "mul",
        "div",
        "pow",
        "mul0",
        "neg",
        "relu",
        "relu6",
        "transpose",
        "reshape",
        "cast",
    ]
    for _ in range(draw(st.integers(1, 8))):
        match draw(st.sampled_from(steps)):
            case "add" | "sub" as op:
                chain.binary(op, 0.0, constant_first=op == "add" and draw(st.booleans()))
            case "mul" | "div" | "pow" as op:
                chain.binary(op, 1.0, constant_first=op == "mul" and draw(st.booleans()))
            case "mul0":
                # Not 0 for floats (inf * 0 is NaN): must stay.
                chain.binary("mul", 0.0, constant_first=draw(st.booleans()))
                chain.may_remain |= {"graph.mul", "graph.constant"}
            case "neg" | "relu" | "relu6" as op:
                chain.unary(op)
            case "transpose":
                chain.transpose(draw(st.permutations(range(len(chain.shape)))))
            case "reshape":
                chain.reshape(list(reversed(chain.shape)))
            case "cast":
                chain.cast_through_f64()
    return chain


@settings(max_examples=40, deadline=None)
@given(chains(), st.integers(0, 2**31 - 1))
def test_random_chains_canonicalize_to_the_same_values(chain, seed):
    module = parse(chain.module())
    after = apply(module, GraphCanonicalizePass())
    assert {op.name for op in after.walk() if op.name.startswith("graph.")} <= chain.may_remain

    rng = np.random.default_rng(seed)
    x = rng.standard_normal(chain.input_shape).astype(np.float32)
    x.reshape(-1)[rng.integers(0, x.size, 4)] = rng.choice([np.nan, np.inf, -np.inf, -0.0], 4)
    with np.errstate(invalid="ignore"):  # inf * 0
        (want,) = run_function(module, [x])
        (got,) = run_function(after, [x])
    np.testing.assert_array_equal(got, want)
