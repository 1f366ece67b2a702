"""Category `shapes`: graph ops on valid but odd shapes through `ziggurat-run`, against onnxruntime.

A case draws one op (elementwise, broadcasting, matmul, softmax, reductions,
transpose, concat, conv2d, pools) with shapes made of size-1 dimensions,
primes and, where the op allows it, zero; builds the function with
`build_inferred` (so the IR text is xDSL's own printing), runs it with
`ziggurat-run --inputs --outputs` and compares the results with the same
op as a one-node ONNX model on onnxruntime. Small cases run a second time
with the inputs as constants that `graph-fold-constants` folds (the result
is a printed constant, read back by `ziggurat-run`). A shape the op rejects is a
diagnostic and is fine; so is one onnxruntime cannot run (nothing to
compare with).
"""

from __future__ import annotations

import functools
import io
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import strategies as st

from .outcome import IR_LOCATION, Outcome, run_in_process
from .pipelines import mismatch

DIMS = (1, 1, 2, 3, 5, 7, 13)
ZERO_DIMS = (0, *DIMS)
ONNX_OPSET = 18

UNARY = {
    "relu": "Relu",
    "sigmoid": "Sigmoid",
    "tanh": "Tanh",
    "exp": "Exp",
    "log": "Log",
    "sqrt": "Sqrt",
    "abs": "Abs",
    "neg": "Neg",
    "erf": "Erf",
    "reciprocal": "Reciprocal",
    "softplus": "Softplus",
}
BINARY = {
    "add": "Add",
    "sub": "Sub",
    "mul": "Mul",
    "div": "Div",
    "max": "Max",
    "min": "Min",
    "pow": "Pow",
}
REDUCE = {"reduce_sum": "ReduceSum", "reduce_mean": "ReduceMean", "reduce_max": "ReduceMax"}


@dataclass
class ShapeCase:
    op: str
    onnx_op: str
    input_shapes: list[tuple[int, ...]]
    properties: dict[str, Any]
    """graph property name -> Python value (ints, lists of ints, bools)."""
    onnx_attributes: dict[str, Any] = field(default_factory=dict)
    onnx_axes: list[int] | None = None
    """Reductions take their axes as an input in opset 18."""
    dtype: str = "float32"
    text: str = ""

    def describe(self) -> str:
        shapes = ", ".join("x".join(map(str, s)) or "scalar" for s in self.input_shapes)
        return f"graph.{self.op} on ({shapes}) {self.dtype} {self.properties}"


def _shape(rank_min: int, rank_max: int, dims=DIMS):
    return st.lists(st.sampled_from(dims), min_size=rank_min, max_size=rank_max).map(tuple)


@st.composite
def _broadcastable(draw, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts with `shape`: some dims set to 1, some leading dims dropped."""
    drop = draw(st.integers(0, len(shape)))
    return tuple(1 if draw(st.booleans()) else d for d in shape[drop:])


@st.composite
def _case(draw) -> ShapeCase:
    family = draw(
        st.sampled_from(
            (
                "unary",
                "binary",
                "matmul",
                "softmax",
                "reduce",
                "transpose",
                "concat",
                "conv2d",
                "pool",
            )
        )
    )
    if family == "unary":
        op = draw(st.sampled_from(sorted(UNARY)))
        dtype = draw(st.sampled_from(("float32", "float32", "float16")))
        return ShapeCase(op, UNARY[op], [draw(_shape(0, 4, ZERO_DIMS))], {}, dtype=dtype)
    if family == "binary":
        op = draw(st.sampled_from(sorted(BINARY)))
        shape = draw(_shape(0, 4, ZERO_DIMS))
        other = draw(_broadcastable(shape))
        shapes = [shape, other] if draw(st.booleans()) else [other, shape]
        return ShapeCase(op, BINARY[op], shapes, {})
    if family == "matmul":
        m, k, n = (draw(st.sampled_from(ZERO_DIMS)) for _ in range(3))
        batch = draw(_shape(0, 2))
        rhs_batch = draw(_broadcastable(batch))
        lhs = (*batch, m, k)
        rhs = (*rhs_batch, k, n) if draw(st.booleans()) else (k, n)
        return ShapeCase("matmul", "MatMul", [lhs, rhs], {})
    if family == "softmax":
        shape = draw(_shape(1, 4))
        axis = draw(st.integers(-len(shape), len(shape) - 1))
        op = draw(st.sampled_from(("softmax", "log_softmax")))
        onnx = {"softmax": "Softmax", "log_softmax": "LogSoftmax"}[op]
        return ShapeCase(op, onnx, [shape], {"axis": axis}, {"axis": axis})
    if family == "reduce":
        op = draw(st.sampled_from(sorted(REDUCE)))
        shape = draw(_shape(1, 4, DIMS if op == "reduce_max" else ZERO_DIMS))
        axes = sorted(draw(st.sets(st.integers(0, len(shape) - 1), min_size=1)))
        axes = [a - len(shape) if draw(st.booleans()) else a for a in axes]
        keepdims = draw(st.booleans())
        return ShapeCase(
            op,
            REDUCE[op],
            [shape],
            {"axes": axes, "keepdims": keepdims},
            {"keepdims": int(keepdims)},
            onnx_axes=axes,
        )
    if family == "transpose":
        shape = draw(_shape(1, 5, ZERO_DIMS))
        perm = draw(st.permutations(range(len(shape))))
        return ShapeCase(
            "transpose", "Transpose", [shape], {"perm": list(perm)}, {"perm": list(perm)}
        )
    if family == "concat":
        shape = draw(_shape(1, 4, ZERO_DIMS))
        axis = draw(st.integers(-len(shape), len(shape) - 1))
        shapes = []
        for _ in range(draw(st.integers(1, 3))):
            other = list(shape)
            other[axis] = draw(st.sampled_from(ZERO_DIMS))
            shapes.append(tuple(other))
        return ShapeCase("concat", "Concat", shapes, {"axis": axis}, {"axis": axis})
    kernel = [draw(st.sampled_from((1, 2, 3))) for _ in range(2)]
    strides = [draw(st.sampled_from((1, 2, 3))) for _ in range(2)]
    pads = [draw(st.integers(0, k - 1)) for k in kernel * 2]
    batch = draw(st.sampled_from((1, 2)))
    spatial = [draw(st.sampled_from((1, 2, 3, 5, 7))) + kernel[i] - 1 for i in range(2)]
    attributes = {"strides": strides, "pads": pads, "kernel_shape": kernel}
    properties = {"strides": strides, "pads": pads}
    if family == "conv2d":
        groups = draw(st.sampled_from((1, 1, 2, 3)))
        channels, features = (
            groups * draw(st.sampled_from((1, 2))),
            groups * draw(st.sampled_from((1, 3))),
        )
        dilations = [draw(st.sampled_from((1, 1, 2))) for _ in range(2)]
        spatial = [s + (d - 1) * (k - 1) for s, d, k in zip(spatial, dilations, kernel)]
        shapes = [(batch, channels, *spatial), (features, channels // groups, *kernel)]
        if draw(st.booleans()):
            shapes.append((features,))
        properties |= {"dilations": dilations, "groups": groups}
        attributes |= {"dilations": dilations, "group": groups}
        return ShapeCase("conv2d", "Conv", shapes, properties, attributes)
    op = draw(st.sampled_from(("max_pool", "avg_pool")))
    properties["kernel"] = kernel
    if op == "avg_pool" and draw(st.booleans()):
        properties["count_include_pad"] = True
        attributes["count_include_pad"] = 1
    shape = (batch, draw(st.sampled_from(DIMS)), *spatial)
    return ShapeCase(
        op, {"max_pool": "MaxPool", "avg_pool": "AveragePool"}[op], [shape], properties, attributes
    )


@st.composite
def shape_cases(draw) -> ShapeCase:
    case = draw(_case())
    text = ir_text(case)
    if text is None:
        # The op rejects these shapes or properties: nothing to run.
        from hypothesis import reject

        reject()
    case.text = text
    return case


def _property(name: str, value: Any):
    from ziggurat.dialects.graph import bool_attr, i64_attr, int_array

    if isinstance(value, bool):
        return bool_attr(value)
    if isinstance(value, list):
        return int_array(value)
    return i64_attr(value)


@functools.cache
def _op_class(op: str):
    from ziggurat.dialects.graph import Graph

    return next(o for o in Graph.operations if o.name == f"graph.{op}")


def ir_text(case: ShapeCase, constants: list[np.ndarray] | None = None) -> str | None:
    """`@main` applying the op to its arguments, as xDSL prints it; None if the op rejects the case.

    With `constants`, the operands are `graph.constant`s of those arrays and
    `@main` takes no arguments.
    """
    from xdsl.dialects import func
    from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, ModuleOp, TensorType
    from xdsl.printer import Printer
    from xdsl.utils.exceptions import VerifyException

    from ziggurat.dialects.graph import ConstantOp
    from ziggurat.dtypes import from_numpy_dtype

    element = from_numpy_dtype(np.dtype(case.dtype))
    arg_types = [TensorType(element, shape) for shape in case.input_shapes]
    properties = {name: _property(name, value) for name, value in case.properties.items()}
    try:
        probe = _op_class(case.op).infer_result_types(arg_types, _defaults(case.op) | properties)
    except VerifyException:
        return None
    function = func.FuncOp("main", ([] if constants is not None else arg_types, probe))
    block = function.body.block
    operands = list(block.args)
    if constants is not None:
        # Not ConstantOp.from_array: it turns a 0-d array into tensor<1x...> (see test_fuzz.py).
        constant_ops = [
            ConstantOp(DenseIntOrFPElementsAttr(t, BytesAttr(np.ascontiguousarray(a).tobytes())))
            for a, t in zip(constants, arg_types)
        ]
        block.add_ops(constant_ops)
        operands = [c.output for c in constant_ops]
    op = _op_class(case.op).build_inferred(operands, properties)
    block.add_ops([op, func.ReturnOp(*op.results)])
    stream = io.StringIO()
    Printer(stream=stream).print_op(ModuleOp([function]))
    return stream.getvalue() + "\n"


def _defaults(op: str) -> dict:
    definition = _op_class(op).get_irdl_definition()
    return {
        n: d.default_value for n, d in definition.properties.items() if d.default_value is not None
    }


def inputs_for(case: ShapeCase) -> list[np.ndarray]:
    rng = np.random.default_rng(len(case.text))
    arrays = [rng.standard_normal(shape).astype(case.dtype) for shape in case.input_shapes]
    if case.op == "pow" and arrays:
        # Negative bases with fractional exponents are NaN in both; keep most of the numbers finite.
        arrays[0] = np.abs(arrays[0])
    return arrays


def reference_results(case: ShapeCase, inputs: list[np.ndarray]) -> list[np.ndarray] | None:
    """What the op must compute: onnxruntime's results, numpy's for reductions of nothing.

    onnxruntime returns a wrongly shaped result for a reduction over an empty
    axis; ONNX (and numpy) define it as the identity: sum 0, mean NaN.
    """
    if case.op in REDUCE and inputs[0].size == 0:
        reduce = {"reduce_sum": np.sum, "reduce_mean": np.mean}[case.op]
        with warnings.catch_warnings():
            warnings.simplefilter(
                "ignore", RuntimeWarning
            )  # the mean of nothing is NaN, as it should be
            result = reduce(
                inputs[0], axis=tuple(case.onnx_axes), keepdims=case.properties["keepdims"]
            )
        return [np.asarray(result, dtype=inputs[0].dtype)]
    return onnx_results(case, inputs)


def onnx_model(case: ShapeCase, output_shape: tuple[int, ...] | None = None):
    """The op as a one-node ONNX model with inputs x0, x1, ... and output y (of unknown shape if not given)."""
    from onnx import TensorProto, helper

    element = {"float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16}[case.dtype]
    names = [f"x{i}" for i in range(len(case.input_shapes))]
    initializers = []
    node_inputs = list(names)
    if case.onnx_axes is not None:
        initializers.append(
            helper.make_tensor("axes", TensorProto.INT64, [len(case.onnx_axes)], case.onnx_axes)
        )
        node_inputs.append("axes")
    node = helper.make_node(
        case.onnx_op, node_inputs, ["y"], name=f"{case.op}_node", **case.onnx_attributes
    )
    graph = helper.make_graph(
        [node],
        "case",
        [
            helper.make_tensor_value_info(n, element, list(s))
            for n, s in zip(names, case.input_shapes)
        ],
        [
            helper.make_tensor_value_info(
                "y", element, None if output_shape is None else list(output_shape)
            )
        ],
        initializer=initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", ONNX_OPSET)])
    model.ir_version = 8
    return model


def onnx_results(case: ShapeCase, inputs: list[np.ndarray]) -> list[np.ndarray] | None:
    """The op's results on onnxruntime, or None if onnxruntime cannot run it."""
    import onnxruntime

    try:
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 4
        session = onnxruntime.InferenceSession(
            onnx_model(case).SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
        return list(session.run(None, {f"x{i}": array for i, array in enumerate(inputs)}))
    except Exception:  # noqa: BLE001 - onnxruntime refusing a case only means there is no reference
        return None


FOLDED_MAX_ELEMENTS = 4096
"""Inputs up to this size are also folded as constants (larger ones print slowly)."""


def check_shape_case(case: ShapeCase, workdir: Path) -> dict[str, Outcome]:
    """Run the op on arguments; small cases also as constants folded by graph-fold-constants, then run."""
    from ziggurat.tools import ziggurat_opt, ziggurat_run

    inputs = inputs_for(case)
    expected = reference_results(case, inputs)
    source, inputs_path = workdir / "input.mlir", workdir / "inputs.npz"
    source.write_text(case.text)
    np.savez(inputs_path, *inputs)
    outcomes = {
        "ziggurat-run": _run_and_compare(
            ziggurat_run.main, source, ["--inputs", str(inputs_path)], expected
        )
    }
    if sum(array.size for array in inputs) <= FOLDED_MAX_ELEMENTS:
        constants, folded = workdir / "constants.mlir", workdir / "folded.mlir"
        constants.write_text(ir_text(case, inputs) or "")
        # The folded constant goes through printing and parsing: NaN, infinities and signed zeros must survive.
        fold = run_in_process(
            ziggurat_opt.main, [str(constants), "-p", "graph-fold-constants", "-o", str(folded)]
        )
        outcomes["ziggurat-opt -p graph-fold-constants"] = fold
        if fold.kind == "success":
            outcomes["ziggurat-run (folded)"] = _run_and_compare(
                ziggurat_run.main, folded, [], expected
            )
    return outcomes


def _run_and_compare(
    main, source: Path, arguments: list[str], expected: list[np.ndarray] | None
) -> Outcome:
    outputs = source.with_suffix(".npz")
    outcome = run_in_process(
        main, [str(source), *arguments, "--outputs", str(outputs)], IR_LOCATION
    )
    if outcome.kind == "success" and expected is not None:
        with np.load(outputs) as archive:
            actual = [archive[f"result{i}"] for i in range(len(archive.files))]
        for index, (want, got) in enumerate(zip(expected, actual)):
            if (difference := mismatch(want, got)) is not None:
                outcome.kind, outcome.detail = (
                    "mismatch",
                    f"result #{index} against the reference: {difference}",
                )
    return outcome
