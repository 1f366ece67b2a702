"""The tensor level on numpy: `linalg` and `tensor` ops, and the `arith`/`math` bodies of
`linalg.generic`, each as whole-array numpy code rather than element by element, so that the
output of `graph-to-tile` and the tile passes (tiled IR included) runs at the speed of numpy.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import arith, math, memref, tensor
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, TensorType
from xdsl.dialects.linalg import attrs as linalg_attrs
from xdsl.dialects.linalg import ops as linalg
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.interpreters.builtin import scalar_attr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)

from ziggurat.diagnostics import error_at
from ziggurat.dialects import tile
from ziggurat.dialects.graph import erf, sliding_windows, widen
from ziggurat.dtypes import to_numpy_dtype
from ziggurat.interpreters.interpreter import scalar_value


def numpy_dtype(value_type: Attribute) -> np.dtype:
    """The dtype of a value of `value_type` (its element type for tensors; int64 for index)."""
    if isinstance(value_type, TensorType):
        value_type = value_type.get_element_type()
    if isinstance(value_type, IndexType):
        return np.dtype(np.int64)
    return to_numpy_dtype(value_type)


# --------------------------------------------------------------------------- #
# Scalar ops on whole arrays
# --------------------------------------------------------------------------- #

ScalarFunction = Callable[[Operation, Sequence[np.ndarray]], np.ndarray]

# arith.cmpf predicates in MLIR's order; the first element says "unordered".
_CMPF = [
    (False, lambda a, b: np.zeros(np.broadcast_shapes(np.shape(a), np.shape(b)), bool)),
    (False, operator.eq),
    (False, operator.gt),
    (False, operator.ge),
    (False, operator.lt),
    (False, operator.le),
    (False, operator.ne),
    (False, lambda a, b: np.ones(np.broadcast_shapes(np.shape(a), np.shape(b)), bool)),
    (True, operator.eq),
    (True, operator.gt),
    (True, operator.ge),
    (True, operator.lt),
    (True, operator.le),
    (True, operator.ne),
    (True, lambda a, b: np.zeros(np.broadcast_shapes(np.shape(a), np.shape(b)), bool)),
    (True, lambda a, b: np.ones(np.broadcast_shapes(np.shape(a), np.shape(b)), bool)),
]


def _cmpf(op: arith.CmpfOp, args):
    a, b = args
    unordered, compare = _CMPF[op.predicate.value.data]
    nan = np.isnan(a) | np.isnan(b)
    return compare(a, b) | nan if unordered else compare(a, b) & ~nan


def _as_unsigned(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    return a if a.dtype == np.bool_ else a.view(a.dtype.str.replace("i", "u"))


_CMPI = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]


def _cmpi(op: arith.CmpiOp, args):
    a, b = (np.asarray(x) for x in args)
    predicate = op.predicate.value.data
    if predicate >= 6:  # ult, ule, ugt, uge
        return _CMPI[predicate - 4](_as_unsigned(a), _as_unsigned(b))
    return _CMPI[predicate](a, b)


def _divsi(op, args):
    a, b = args
    quotient = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -quotient, quotient)


def _constant(op: arith.ConstantOp, args):
    value = op.value
    if isinstance(value, (FloatAttr, IntegerAttr)):
        return np.asarray(value.value.data).astype(numpy_dtype(op.result.type))
    from ziggurat.ir.tensor_constants import constant_array

    return constant_array(op.result)


def _astype(op, args):
    return np.asarray(args[0]).astype(numpy_dtype(op.results[0].type))


def _from_unsigned(op, args):
    return _as_unsigned(args[0]).astype(numpy_dtype(op.results[0].type))


def _to_unsigned(op, args):
    """float -> unsigned integer, as the signless integer holding its bits."""
    signless = numpy_dtype(op.results[0].type)
    return np.asarray(args[0]).astype(signless.str.replace("i", "u")).view(signless)


def _rsqrt(x: np.ndarray) -> np.ndarray:
    """1 / sqrt(x) rounded once: a narrow float computes in f32, as the vector unit's rsqrt does
    (rounding the square root first would round twice)."""
    return (1 / np.sqrt(widen(x))).astype(x.dtype)


def _binary(function) -> ScalarFunction:
    return lambda op, args: function(args[0], args[1])


def _unary(function) -> ScalarFunction:
    return lambda op, args: function(args[0])


SCALAR_FUNCTIONS: dict[type[Operation], ScalarFunction] = {
    arith.ConstantOp: _constant,
    arith.AddfOp: _binary(operator.add),
    arith.SubfOp: _binary(operator.sub),
    arith.MulfOp: _binary(operator.mul),
    arith.DivfOp: _binary(operator.truediv),
    arith.NegfOp: _unary(operator.neg),
    arith.MaximumfOp: _binary(np.maximum),
    arith.MinimumfOp: _binary(np.minimum),
    arith.MaxnumfOp: _binary(np.fmax),
    arith.MinnumfOp: _binary(np.fmin),
    arith.AddiOp: _binary(operator.add),
    arith.SubiOp: _binary(operator.sub),
    arith.MuliOp: _binary(operator.mul),
    arith.DivSIOp: _divsi,
    arith.RemSIOp: _binary(np.fmod),
    arith.FloorDivSIOp: _binary(np.floor_divide),
    arith.MaxSIOp: _binary(np.maximum),
    arith.MinSIOp: _binary(np.minimum),
    arith.AndIOp: _binary(operator.and_),
    arith.OrIOp: _binary(operator.or_),
    arith.XOrIOp: _binary(operator.xor),
    arith.ShLIOp: _binary(np.left_shift),
    arith.ShRSIOp: _binary(np.right_shift),
    arith.CmpfOp: _cmpf,
    arith.CmpiOp: _cmpi,
    arith.SelectOp: lambda op, args: np.where(args[0], args[1], args[2]),
    arith.ExtFOp: _astype,
    arith.TruncFOp: _astype,
    arith.SIToFPOp: _astype,
    arith.UIToFPOp: _from_unsigned,
    # C's conversion: toward zero (numpy's astype), as ONNX's Cast in onnxruntime.
    arith.FPToSIOp: _astype,
    arith.FPToUIOp: _to_unsigned,
    arith.ExtSIOp: _astype,
    arith.ExtUIOp: _from_unsigned,
    arith.TruncIOp: _astype,
    arith.IndexCastOp: _astype,
    math.ExpOp: _unary(np.exp),
    math.ExpM1Op: _unary(np.expm1),
    math.Exp2Op: _unary(np.exp2),
    math.LogOp: _unary(np.log),
    math.Log1pOp: _unary(np.log1p),
    math.Log2Op: _unary(np.log2),
    math.SqrtOp: _unary(np.sqrt),
    math.RsqrtOp: lambda op, args: _rsqrt(args[0]),
    math.TanhOp: _unary(np.tanh),
    # The graph dialect's erf, so both levels share one definition.
    math.ErfOp: lambda op, args: erf(np.asarray(args[0])),
    math.AbsFOp: _unary(np.abs),
    math.AbsIOp: _unary(np.abs),
    math.PowFOp: _binary(np.power),
    math.RoundEvenOp: _unary(np.rint),
    math.FloorOp: _unary(np.floor),
    math.CeilOp: _unary(np.ceil),
    math.TruncOp: _unary(np.trunc),
    math.SinOp: _unary(np.sin),
    math.CosOp: _unary(np.cos),
    math.TanOp: _unary(np.tan),
    math.AsinOp: _unary(np.arcsin),
    math.AcosOp: _unary(np.arccos),
    math.AtanOp: _unary(np.arctan),
    math.SinhOp: _unary(np.sinh),
    math.CoshOp: _unary(np.cosh),
    math.AsinhOp: _unary(np.arcsinh),
    math.AcoshOp: _unary(np.arccosh),
    math.AtanhOp: _unary(np.arctanh),
    math.FmaOp: lambda op, args: args[0] * args[1] + args[2],
}
"""numpy for each scalar op, applied to whole arrays (or 0-d arrays) of its operands."""


def apply_scalar(op: Operation, args: Sequence[np.ndarray]) -> np.ndarray:
    function = SCALAR_FUNCTIONS.get(type(op))
    if function is None:
        raise error_at(op, f"no vectorized implementation for '{op.name}'")
    with np.errstate(all="ignore"):  # inf and NaN are values here, as in the reference
        result = function(op, [np.asarray(a) for a in args])
    return np.asarray(result).astype(numpy_dtype(op.results[0].type), copy=False)


# --------------------------------------------------------------------------- #
# linalg.generic, vectorized
# --------------------------------------------------------------------------- #


def _affine(expr: AffineExpr, grids: Sequence[np.ndarray]):
    if isinstance(expr, AffineDimExpr):
        return grids[expr.position]
    if isinstance(expr, AffineConstantExpr):
        return expr.value
    if isinstance(expr, AffineBinaryOpExpr):
        lhs, rhs = _affine(expr.lhs, grids), _affine(expr.rhs, grids)
        match expr.kind:
            case AffineBinaryOpKind.Add:
                return lhs + rhs
            case AffineBinaryOpKind.Mul:
                return lhs * rhs
            case AffineBinaryOpKind.Mod:
                return np.mod(lhs, rhs)
            case AffineBinaryOpKind.FloorDiv:
                return np.floor_divide(lhs, rhs)
            case AffineBinaryOpKind.CeilDiv:
                return -np.floor_divide(-lhs, rhs)
    raise ValueError(f"affine expression {expr} has symbols")


def _permutation(indexing: AffineMap) -> tuple[list[int], list[int]] | None:
    """(axes in the order of their dims, each axis's dim) if `indexing` is a projected permutation."""
    results = indexing.results
    positions = [r.position for r in results if isinstance(r, AffineDimExpr)]
    if len(positions) != len(results) or len(set(positions)) != len(positions):
        return None
    return sorted(range(len(positions)), key=lambda k: positions[k]), positions


def _read(
    array: np.ndarray,
    indexing: AffineMap,
    grids: Sequence[np.ndarray] | None,
    rank: int,
    permutation: tuple[list[int], list[int]] | None,
) -> np.ndarray:
    """`array` read over the iteration space: element `array[map(i)]` at point `i`
    (broadcastable to the iteration space, not materialized). `permutation`: `_permutation(indexing)`;
    `grids` (needed when it is None): one index array per loop dim."""
    if permutation is not None:
        # A projected permutation: a transposed view with size-1 axes inserted.
        order, positions = permutation
        shape = [1] * rank
        for k in order:
            shape[positions[k]] = array.shape[k]
        return np.transpose(array, order).reshape(shape)
    assert grids is not None
    indices = tuple(np.asarray(_affine(r, grids)) for r in indexing.results)
    if not indices:
        return np.asarray(array).reshape([1] * rank)
    value = array[indices]
    return value.reshape(np.broadcast_shapes(*(i.shape for i in indices), (1,) * rank))


def loop_ranges(op: linalg.GenericOp, shapes: Sequence[tuple[int, ...]]) -> list[int]:
    """The size of each loop dimension, from the operands its maps name directly."""
    maps = [m.data for m in op.indexing_maps.data]
    ranges: list[int | None] = [None] * maps[0].num_dims
    for indexing, shape in zip(maps, shapes):
        for result, size in zip(indexing.results, shape):
            if isinstance(result, AffineDimExpr) and ranges[result.position] is None:
                ranges[result.position] = size
    missing = [f"d{i}" for i, size in enumerate(ranges) if size is None]
    if missing:
        raise error_at(op, f"no operand's indexing map gives the size of {', '.join(missing)}")
    return ranges  # type: ignore[return-value]


_COMBINERS: dict[type[Operation], Callable] = {
    arith.AddfOp: np.add,
    arith.AddiOp: np.add,
    arith.MulfOp: np.multiply,
    arith.MuliOp: np.multiply,
    arith.MaximumfOp: np.maximum,
    arith.MinimumfOp: np.minimum,
    arith.MaxSIOp: np.maximum,
    arith.MinSIOp: np.minimum,
    arith.MaxnumfOp: np.fmax,
    arith.MinnumfOp: np.fmin,
    arith.OrIOp: np.logical_or,
    arith.AndIOp: np.logical_and,
}


def _reduction_of(op: linalg.GenericOp, value: SSAValue, accumulator: SSAValue):
    """(combiner op, the operand it combines into `accumulator`) for a yielded reduction."""
    combiner = value.owner
    if type(combiner) in _COMBINERS and len(combiner.operands) == 2:
        lhs, rhs = combiner.operands
        if rhs == accumulator and lhs != accumulator:
            return combiner, lhs
        if lhs == accumulator and rhs != accumulator:
            return combiner, rhs
    raise error_at(
        op,
        "cannot evaluate this reduction body vectorized: each yielded value must be "
        "combine(x, accumulator) with combine one of addf, mulf, maximumf, minimumf (or the "
        "integer forms) and x independent of the accumulators",
    )


@dataclass
class _GenericPlan:
    """What evaluating a generic needs from its attributes and body, worked out once per op and run."""

    maps: list[AffineMap]
    dim_sources: list[tuple[int, int]]
    """Per loop dim, the (operand, axis) whose size gives its extent (`loop_ranges`)."""
    permutations: list[tuple[list[int], list[int]] | None]
    """Per operand whose map is a projected permutation, (axis order, dim of each axis) for `_read`."""
    needs_grids: bool
    """Whether index grids are needed: a map other than a projected permutation, or linalg.index."""
    reduction_dims: tuple[int, ...]
    parallel: list[int]
    steps: list[Operation]
    """The body ops evaluated on whole arrays, in order (not the yield, combiners or contractions)."""
    reductions: dict[int, tuple[Operation, SSAValue]]
    """Output index -> (combiner, the value it combines into that output's accumulator)."""
    contractions: set[Operation]
    """The products that a sum reduction adds up: one einsum each."""
    output_orders: list[list[int]]
    """Per output, the transpose from the parallel dims in order to the output map's order."""


def _plan(op: linalg.GenericOp) -> _GenericPlan:
    maps = [m.data for m in op.indexing_maps.data]
    rank = maps[0].num_dims
    sources: dict[int, tuple[int, int]] = {}
    for operand, indexing in enumerate(maps):
        for axis, result in enumerate(indexing.results):
            if isinstance(result, AffineDimExpr):
                sources.setdefault(result.position, (operand, axis))
    missing = [f"d{d}" for d in range(rank) if d not in sources]
    if missing:
        raise error_at(op, f"no operand's indexing map gives the size of {', '.join(missing)}")
    permutations = [_permutation(indexing) for indexing in maps]
    reduction_dims = tuple(
        d
        for d, it in enumerate(op.iterator_types.data)
        if it.data == linalg_attrs.IteratorType.REDUCTION
    )
    parallel = [d for d in range(rank) if d not in reduction_dims]
    block = op.body.block
    outputs = block.args[len(op.inputs) :]
    yielded = block.last_op.operands
    reductions = (
        {i: _reduction_of(op, v, outputs[i]) for i, v in enumerate(yielded)}
        if reduction_dims
        else {}
    )
    combiners = {combiner for combiner, _ in reductions.values()}
    # A sum of products (matmul, conv) is one einsum of the two factors, so the
    # product over the whole iteration space is never materialized.
    contractions = {
        contribution.owner
        for combiner, contribution in reductions.values()
        if isinstance(combiner, (arith.AddfOp, arith.AddiOp))
        and isinstance(contribution.owner, (arith.MulfOp, arith.MuliOp))
        and contribution.has_one_use()
    }
    steps = [
        o
        for o in block.ops
        if o is not block.last_op and o not in combiners and o not in contractions
    ]
    for step in steps:
        if reduction_dims and any(o in outputs for o in step.operands):
            raise error_at(op, f"'{step.name}' reads the accumulator of a reduction")
    output_orders = []
    for out_map in maps[len(op.inputs) :]:
        positions = [r.position for r in out_map.results if isinstance(r, AffineDimExpr)]
        if len(positions) != len(out_map.results) or sorted(positions) != parallel:
            raise error_at(
                op, f"output map {out_map} is not a permutation of the parallel dimensions"
            )
        output_orders.append([parallel.index(p) for p in positions])
    needs_grids = None in permutations or any(isinstance(step, linalg.IndexOp) for step in steps)
    return _GenericPlan(
        maps,
        [sources[d] for d in range(rank)],
        permutations,
        needs_grids,
        reduction_dims,
        parallel,
        steps,
        reductions,
        contractions,
        output_orders,
    )


def _with_rank(array: np.ndarray, rank: int) -> np.ndarray:
    """`array` with leading size-1 axes up to `rank` (a 0-d constant among the body's values)."""
    return array if array.ndim == rank else array.reshape((1,) * (rank - array.ndim) + array.shape)


Plans = dict[Operation, Any]
"""What one run worked out from each op's attributes (`TensorFunctions.plans`: a generic's
`_GenericPlan`, a slice's static offsets, sizes and strides). An op in a loop body runs once per
iteration (a nest of 1x1 tiles runs the same few ops tens of thousands of times), and decoding
its attributes each time would dominate; a new run plans again, as passes may have changed the IR."""


def _planned(plans: Plans | None, op: Operation, make: Callable[[Operation], Any]) -> Any:
    if plans is None:
        return make(op)
    if op not in plans:
        plans[op] = make(op)
    return plans[op]


EINSUM_PATH_MIN_POINTS = 4096
"""Iteration spaces from this many points up take numpy's optimized einsum (BLAS where it can);
below, working out the path costs more than the contraction."""


def run_generic(
    interpreter: Interpreter, op: linalg.GenericOp, args: PythonValues, plans: Plans | None = None
) -> tuple[np.ndarray, ...]:
    plan = _planned(plans, op, _plan)
    arrays = [np.asarray(scalar_value(a)) for a in args]
    ranges = [arrays[operand].shape[axis] for operand, axis in plan.dim_sources]
    rank = len(ranges)
    grids = (
        [
            np.arange(n).reshape([n if i == d else 1 for i in range(rank)])
            for d, n in enumerate(ranges)
        ]
        if plan.needs_grids
        else None
    )
    reduction_dims, parallel = plan.reduction_dims, plan.parallel
    block = op.body.block
    num_inputs = len(op.inputs)
    values: dict[SSAValue, np.ndarray] = {}
    for arg, array, indexing, permutation in zip(block.args, arrays, plan.maps, plan.permutations):
        values[arg] = _read(array, indexing, grids, rank, permutation)
    outputs = block.args[num_inputs:]
    yielded = block.last_op.operands

    def value_of(operand: SSAValue) -> np.ndarray:
        if operand in values:
            return values[operand]
        # Defined above the generic (e.g. the tensor a `tensor.extract` reads).
        return np.asarray(scalar_value(interpreter.get_values((operand,))[0]))

    for body_op in plan.steps:
        operands = [value_of(o) for o in body_op.operands]
        if isinstance(body_op, linalg.IndexOp):
            assert grids is not None
            result = grids[body_op.dim.value.data]
        elif isinstance(body_op, (tensor.ExtractOp, memref.LoadOp)):
            # memref.load: tile-to-loop's form of a tensor.extract of an outer tensor.
            source = operands[0]
            result = (
                source[tuple(np.asarray(i) for i in operands[1:])] if operands[1:] else source[()]
            )
        else:
            result = apply_scalar(body_op, operands)
        values[body_op.results[0]] = np.asarray(result)

    results = []
    full_shape = tuple(ranges)
    for index, (init, order) in enumerate(zip(arrays[num_inputs:], plan.output_orders)):
        if index in plan.reductions:
            combiner, contribution = plan.reductions[index]
            with np.errstate(all="ignore"):
                if contribution.owner in plan.contractions:
                    lhs, rhs = (value_of(o) for o in contribution.owner.operands)
                    every = list(range(rank))
                    reduced = np.einsum(
                        _with_rank(lhs, rank),
                        every,
                        _with_rank(rhs, rank),
                        every,
                        parallel,
                        optimize=int(np.prod(full_shape)) >= EINSUM_PATH_MIN_POINTS,
                    )
                    reduced = np.broadcast_to(reduced, [full_shape[d] for d in parallel])
                else:
                    spread = np.broadcast_to(value_of(contribution), full_shape)
                    reduced = _COMBINERS[type(combiner)].reduce(spread, axis=reduction_dims)
                accumulator = np.squeeze(values[outputs[index]], axis=reduction_dims)
                value = _COMBINERS[type(combiner)](accumulator, reduced)
        else:
            value = np.broadcast_to(value_of(yielded[index]), full_shape)
            value = (
                value.reshape([n for d, n in enumerate(full_shape) if d in parallel])
                if reduction_dims
                else value
            )
        value = np.broadcast_to(value, [full_shape[d] for d in parallel])
        value = np.transpose(value, order)
        results.append(np.array(value, dtype=init.dtype))
    return tuple(results)


# --------------------------------------------------------------------------- #
# The interpreter functions
# --------------------------------------------------------------------------- #


def _result_array(op: Operation, value) -> np.ndarray:
    return np.asarray(value).astype(numpy_dtype(op.results[0].type), copy=False)


def _filled(static: Sequence[int], dynamic: Sequence[int]) -> list[int]:
    """Static values with each `DYNAMIC_INDEX` replaced by the next dynamic value."""
    values = iter(dynamic)
    return [int(scalar_value(next(values))) if v == tensor.DYNAMIC_INDEX else v for v in static]


def _static_slice(op) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], int, int]:
    """An extract/insert_slice's static offsets, sizes, strides, and how many offsets and sizes are dynamic."""
    statics = (
        op.static_offsets.get_values(),
        op.static_sizes.get_values(),
        op.static_strides.get_values(),
    )
    return (*statics, len(op.offsets), len(op.sizes))


def _slices(
    op, args: Sequence, shape: Sequence[int], plans: Plans | None = None
) -> tuple[slice, ...]:
    """The numpy slices of an extract/insert_slice of a tensor of `shape`; `args` are its operands
    past the tensors (dynamic offsets, then sizes, then strides). A slice reaching outside the
    tensor is an error at the op (numpy would clip it silently or fail to reshape)."""
    static_offsets, static_sizes, static_strides, n_offsets, n_sizes = _planned(
        plans, op, _static_slice
    )
    offsets = _filled(static_offsets, args[:n_offsets])
    sizes = _filled(static_sizes, args[n_offsets : n_offsets + n_sizes])
    strides = _filled(static_strides, args[n_offsets + n_sizes :])
    for dim, (offset, size, stride, extent) in enumerate(zip(offsets, sizes, strides, shape)):
        last = offset + (size - 1) * stride
        if size < 0 or stride < 1 or (size > 0 and not 0 <= offset <= last < extent):
            raise error_at(
                op,
                f"{op.name} reaches outside its tensor: dim {dim} has {extent} elements, the slice takes "
                f"{size} from offset {offset} with stride {stride}",
            )
    return tuple(
        slice(offset, offset + (size - 1) * stride + 1 if size else offset, stride)
        for offset, size, stride in zip(offsets, sizes, strides)
    )


@register_impls
class TensorFunctions(InterpreterFunctions):
    """linalg and tensor ops; math and arith inside generic bodies.

    `linalg.generic` is evaluated vectorized over its iteration space: each input
    is read through its indexing map with index grids (one `np.arange` per loop
    dimension, shaped to broadcast), the body's scalar ops are applied to whole
    arrays (`SCALAR_FUNCTIONS`), and a reduction body `acc' = combine(f(ins), acc)`
    becomes one numpy reduction of `f(ins)` over the reduction dimensions; a sum of
    products is one `np.einsum`, so the product is never materialized. A body whose
    reduction is not of that form is reported at the generic. `tile.bitcast` is a
    numpy view; `tensor.extract_slice`/`insert_slice` take dynamic offsets, sizes
    and strides.

    `linalg.conv_2d_nchw_fchw` is ours (sliding windows and an einsum), not xDSL's,
    whose interpreter is wrong whenever C > 1 or F > 1. `math` and the `arith` ops
    xDSL lacks (divf, extf, truncf, ...) run inside generic bodies only: graph-to-tile
    emits them nowhere else, and registering them for the whole runner would take
    them from plugins that provide them. An f16 or bf16 `math.rsqrt` computes in f32 and
    rounds once, as the npu's vector unit does.
    """

    def __init__(self) -> None:
        self.plans: Plans = {}

    @impl(linalg.GenericOp)
    def run_generic(self, interpreter: Interpreter, op: linalg.GenericOp, args: PythonValues):
        return run_generic(interpreter, op, args, self.plans)

    @impl(linalg.FillOp)
    def run_fill(self, interpreter: Interpreter, op: linalg.FillOp, args: PythonValues):
        value, init = args
        return (
            np.full(np.shape(init), scalar_value(value), dtype=numpy_dtype(op.results[0].type)),
        )

    @impl(linalg.MatmulOp)
    def run_matmul(self, interpreter: Interpreter, op: linalg.MatmulOp, args: PythonValues):
        a, b, init = args
        return (_result_array(op, init + np.matmul(a, b)),)

    @impl(linalg.TransposeOp)
    def run_transpose(self, interpreter: Interpreter, op: linalg.TransposeOp, args: PythonValues):
        return (np.transpose(args[0], op.permutation.get_values()).copy(),)

    @impl(linalg.BroadcastOp)
    def run_broadcast(self, interpreter: Interpreter, op: linalg.BroadcastOp, args: PythonValues):
        x, init = args
        expanded = np.expand_dims(x, tuple(op.dimensions.get_values()))
        return (np.broadcast_to(expanded, np.shape(init)).copy(),)

    @impl(linalg.Conv2DNchwFchwOp)
    def run_conv_2d_nchw_fchw(
        self, interpreter: Interpreter, op: linalg.Conv2DNchwFchwOp, args: PythonValues
    ):
        x, w, init = args
        strides = [int(s) for s in op.strides.get_values()]
        dilations = [int(d) for d in op.dilations.get_values()]
        out = np.shape(init)[2:]
        windows = sliding_windows(x, w.shape[2:], strides, dilations, out)
        y = np.einsum("nchwij,fcij->nfhw", windows, w, optimize=True)
        return (_result_array(op, init + y),)

    @impl(tile.BitcastOp)
    def run_bitcast(self, interpreter: Interpreter, op: tile.BitcastOp, args: PythonValues):
        return (np.asarray(args[0]).view(numpy_dtype(op.result.type)),)

    @impl(tensor.EmptyOp)
    def run_empty(self, interpreter: Interpreter, op: tensor.EmptyOp, args: PythonValues):
        if args:
            raise error_at(op, "tensor.empty with dynamic sizes is not supported")
        result_type = op.tensor.type
        return (np.zeros(result_type.get_shape(), numpy_dtype(result_type)),)

    @impl(tensor.ExtractSliceOp)
    def run_extract_slice(
        self, interpreter: Interpreter, op: tensor.ExtractSliceOp, args: PythonValues
    ):
        source = args[0]
        window = source[_slices(op, args[1:], np.shape(source), self.plans)]
        shape = op.result.type.get_shape()
        if window.size != np.prod(shape, dtype=np.int64):
            raise error_at(
                op, f"tensor.extract_slice takes a slice of {window.shape} as {tuple(shape)}"
            )
        return (window.reshape(shape).copy(),)

    @impl(tensor.InsertSliceOp)
    def run_insert_slice(
        self, interpreter: Interpreter, op: tensor.InsertSliceOp, args: PythonValues
    ):
        source, dest = args[:2]
        result = np.array(dest, copy=True)
        slices = _slices(op, args[2:], result.shape, self.plans)
        target = result[slices].shape
        if np.size(source) != np.prod(target, dtype=np.int64):
            raise error_at(
                op, f"tensor.insert_slice inserts {np.shape(source)} into a slice of {target}"
            )
        result[slices] = np.reshape(source, target)
        return (result,)

    @impl(tensor.PadOp)
    def run_pad(self, interpreter: Interpreter, op: tensor.PadOp, args: PythonValues):
        if len(args) != 1:
            raise error_at(op, "tensor.pad with dynamic low or high padding is not supported")
        body = op.region.block
        yielded = body.last_op.operands[0]
        if not isinstance(yielded.owner, arith.ConstantOp):
            raise error_at(op, "tensor.pad is supported with a constant padding value only")
        value = apply_scalar(yielded.owner, [])
        widths = list(zip(op.static_low.get_values(), op.static_high.get_values()))
        return (np.pad(args[0], widths, constant_values=value),)

    @impl(tensor.CollapseShapeOp)
    def run_collapse_shape(
        self, interpreter: Interpreter, op: tensor.CollapseShapeOp, args: PythonValues
    ):
        return (np.reshape(args[0], op.result.type.get_shape()),)

    @impl(tensor.ExpandShapeOp)
    def run_expand_shape(
        self, interpreter: Interpreter, op: tensor.ExpandShapeOp, args: PythonValues
    ):
        return (np.reshape(args[0], op.result.type.get_shape()),)

    @impl(tensor.ReshapeOp)
    def run_reshape(self, interpreter: Interpreter, op: tensor.ReshapeOp, args: PythonValues):
        return (np.reshape(args[0], [int(d) for d in args[1]]),)

    @impl(tensor.ExtractOp)
    def run_extract(self, interpreter: Interpreter, op: tensor.ExtractOp, args: PythonValues):
        value = np.asarray(args[0])[tuple(scalar_value(i) for i in args[1:])].item()
        return (scalar_attr(value, op.result.type, interpreter.index_bitwidth),)
