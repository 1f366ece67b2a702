"""Builders of tensor-level IR for `graph-to-tile`: generics, fills, broadcasts, reshapes.

`Emitter` inserts ops before the graph op being lowered; `Body` builds the
scalar region of a `linalg.generic` (arith and math ops on element values).
Arithmetic runs in the same compute types as the graph dialect's reference
semantics (`ziggurat.dialects.graph.compute_dtype`): narrow floats are
extended to f32 when read and truncated when written, narrow integers are
sign-extended to i32.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    Signedness,
    TensorType,
    i64,
)
from xdsl.dialects.linalg import attrs as linalg_attrs
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from ziggurat.diagnostics import error_at
from ziggurat.dialects import tile
from ziggurat.dialects.graph import compute_dtype
from ziggurat.dtypes import from_numpy_dtype, is_float, to_numpy_dtype
from ziggurat.locations import locate

PARALLEL = linalg_attrs.IteratorTypeAttr.parallel()
REDUCTION = linalg_attrs.IteratorTypeAttr.reduction()


def scalar_attr(value: float | int, value_type: Attribute) -> IntegerAttr | FloatAttr:
    """`value` as an attribute of the integer, index or float type `value_type`."""
    if isinstance(value_type, (IndexType, IntegerType)):
        return IntegerAttr(int(value), value_type)
    return FloatAttr(float(value), value_type)


def compute_type(element_type: Attribute) -> Attribute:
    """The element type arithmetic on `element_type` runs in (f32 for f16, i32 for i8, ...)."""
    return from_numpy_dtype(compute_dtype(to_numpy_dtype(element_type)))


class Body:
    """The single block of a `linalg.generic`, built op by op."""

    def __init__(self, arg_types: Sequence[Attribute]):
        self.block = Block(arg_types=arg_types)

    @property
    def args(self) -> tuple[SSAValue, ...]:
        return self.block.args

    def add(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0]

    def constant(self, value: float | int, value_type: Attribute) -> SSAValue:
        return self.add(arith.ConstantOp(scalar_attr(value, value_type)))

    def convert(
        self,
        value: SSAValue,
        target: Attribute,
        *,
        unsigned_source: bool = False,
        unsigned_target: bool = False,
    ) -> SSAValue:
        """`value` as `target`, by the conversion ONNX's Cast (and numpy's astype) makes.

        Integers are signless; `unsigned_source` / `unsigned_target` say that their
        bits hold an unsigned number (a `ui8` tensor bitcast to `i8`)."""
        source = value.type
        if source == target:
            return value
        if target == IntegerType(1):
            zero = self.constant(0, source)
            if is_float(source):
                return self.add(arith.CmpfOp(value, zero, "une"))
            return self.add(arith.CmpiOp(value, zero, "ne"))
        zero_extend = unsigned_source or source == IntegerType(1)
        if is_float(source) and is_float(target):
            wider = to_numpy_dtype(target).itemsize > to_numpy_dtype(source).itemsize
            return self.add((arith.ExtFOp if wider else arith.TruncFOp)(value, target))
        if is_float(target):
            return self.add((arith.UIToFPOp if zero_extend else arith.SIToFPOp)(value, target))
        if is_float(source):
            return self.add((arith.FPToUIOp if unsigned_target else arith.FPToSIOp)(value, target))
        if target.width.data > source.width.data:
            return self.add((arith.ExtUIOp if zero_extend else arith.ExtSIOp)(value, target))
        return self.add(arith.TruncIOp(value, target))

    def widen(self, value: SSAValue) -> SSAValue:
        return self.convert(value, compute_type(value.type))

    def yield_(self, *values: SSAValue) -> None:
        self.block.add_op(linalg.YieldOp(*values))


BodyFunction = Callable[[Body, tuple[SSAValue, ...]], Sequence[SSAValue]]


def tile_attributes(op: Operation) -> dict[str, Attribute]:
    """The `tile.*` discardable attributes of a graph op (`tile.group`, `tile.root`,
    `tile.sizes`), which every op it lowers to carries."""
    return {
        name: value for name, value in op.attributes.items() if name.startswith(tile.ATTR_PREFIX)
    }


@dataclass
class Emitter:
    """Inserts tensor-level ops in front of the graph op `root`, each with the root's
    `tile.*` attributes."""

    rewriter: PatternRewriter
    root: Operation

    def emit(self, op: Operation) -> SSAValue:
        op.attributes.update(tile_attributes(self.root))
        locate(op, self.root.location)
        self.rewriter.insert(op, InsertPoint.before(self.root))
        return op.results[0]

    def fail(self, message: str):
        return error_at(self.root, f"graph-to-tile: {message}")

    # ---- tensors ----

    def bitcast(self, value: SSAValue, element_type: Attribute) -> SSAValue:
        """`value`'s bits as a tensor of `element_type` (e.g. ui8 <-> i8); no-op if it is one.
        A bitcast of a bitcast reads the first one's source (a ui8 constant read as i8 is the
        i8 constant), so that the tensors a bitcast pair leaves are no buffers of their own."""
        if isinstance(value.owner, tile.BitcastOp):
            value = value.owner.source
        if value.type.get_element_type() == element_type:
            return value
        return self.emit(tile.BitcastOp(value, TensorType(element_type, shape_of(value))))

    def empty(self, shape: Sequence[int], element_type: Attribute) -> SSAValue:
        return self.emit(tensor.EmptyOp([], TensorType(element_type, shape)))

    def scalar_constant(self, value: float | int, element_type: Attribute) -> SSAValue:
        return self.emit(arith.ConstantOp(scalar_attr(value, element_type)))

    def dense_constant(self, array: np.ndarray) -> SSAValue:
        array = np.ascontiguousarray(array)
        value_type = TensorType(from_numpy_dtype(array.dtype), array.shape)
        return self.emit(
            arith.ConstantOp(DenseIntOrFPElementsAttr(value_type, BytesAttr(array.tobytes())))
        )

    def filled(self, shape: Sequence[int], element_type: Attribute, value: float | int) -> SSAValue:
        """`linalg.fill` of a fresh tensor: the init of a reduction or contraction."""
        scalar = self.scalar_constant(value, element_type)
        init = self.empty(shape, element_type)
        return self.emit(linalg.FillOp([scalar], [init], [init.type]))

    def generic(
        self,
        inputs: Sequence[tuple[SSAValue, AffineMap]],
        out_shape: Sequence[int],
        out_element_type: Attribute,
        out_map: AffineMap,
        iterators: Sequence[linalg_attrs.IteratorTypeAttr],
        body: BodyFunction,
        init: SSAValue | None = None,
    ) -> SSAValue:
        """A `linalg.generic` with one result; `body(b, args)` returns the yielded value.

        Without `init` the output is a `tensor.empty` and the body must not read it.
        """
        if init is None:
            init = self.empty(out_shape, out_element_type)
        arg_types = [TensorType.get_element_type(v.type) for v, _ in inputs]
        block = Body([*arg_types, out_element_type])
        block.yield_(*body(block, block.args))
        maps = [AffineMapAttr(m) for _, m in inputs] + [AffineMapAttr(out_map)]
        return self.emit(
            linalg.GenericOp(
                [v for v, _ in inputs],
                [init],
                Region(block.block),
                maps,
                list(iterators),
                [init.type],
            )
        )

    def elementwise(
        self,
        operands: Sequence[SSAValue],
        out_shape: Sequence[int],
        out_element_type: Attribute,
        body: BodyFunction,
        maps: Sequence[AffineMap | None] | None = None,
    ) -> SSAValue:
        """A parallel generic over `out_shape`; operands broadcast numpy-style unless
        `maps` gives their indexing map."""
        rank = len(out_shape)
        maps = maps or [None] * len(operands)
        inputs = [
            (v, m if m is not None else broadcast_map(shape_of(v), out_shape))
            for v, m in zip(operands, maps)
        ]
        return self.generic(
            inputs,
            out_shape,
            out_element_type,
            AffineMap.identity(rank),
            [PARALLEL] * rank,
            body,
        )

    # ---- reshapes ----

    def reshape(self, value: SSAValue, shape: Sequence[int]) -> SSAValue:
        """`value` with the row-major shape `shape`: a collapse_shape when it merges
        dimensions, an expand_shape when it splits them, a collapse_shape to the finest
        shape both coarsen to and an expand_shape from it when it does both (each a view
        of a row-major buffer), `tensor.reshape` with a shape constant for an empty
        tensor."""
        source = shape_of(value)
        shape = tuple(shape)
        if source == shape:
            return value
        element_type = value.type.get_element_type()
        collapse = reassociation(source, shape)
        if collapse is not None:
            return self.emit(collapse_shape(value, collapse, TensorType(element_type, shape)))
        expand = reassociation(shape, source)
        if expand is not None:
            return self.emit(expand_shape(value, expand, shape))
        middle = common_coarsening(source, shape)
        if middle is not None:
            merged = self.reshape(value, middle)
            return self.emit(expand_shape(merged, reassociation(shape, middle), shape))
        target = self.dense_constant(np.asarray(shape, np.int64))
        return self.emit(tensor.ReshapeOp(value, target, TensorType(element_type, shape)))


def shape_of(value: SSAValue) -> tuple[int, ...]:
    return tuple(value.type.get_shape())


def dims(*positions: int) -> list[AffineExpr]:
    return [AffineExpr.dimension(p) for p in positions]


def broadcast_map(shape: Sequence[int], out_shape: Sequence[int]) -> AffineMap:
    """numpy broadcasting as an indexing map: trailing dimensions align, a size-1
    dimension under a larger one reads index 0."""
    rank, offset = len(out_shape), len(out_shape) - len(shape)
    results = [
        AffineExpr.constant(0)
        if size == 1 and out_shape[offset + i] != 1
        else AffineExpr.dimension(offset + i)
        for i, size in enumerate(shape)
    ]
    return AffineMap(rank, 0, tuple(results))


def reassociation(fine: Sequence[int], coarse: Sequence[int]) -> list[list[int]] | None:
    """Groups of consecutive dimensions of `fine` whose products are the dimensions of
    `coarse` (the reassociation of a collapse_shape fine -> coarse), or None when the
    reshape is not such a regrouping. Trailing size-1 dimensions join the last group."""
    if not coarse:
        return [] if all(d == 1 for d in fine) else None
    groups: list[list[int]] = []
    position = 0
    for size in coarse:
        group, product = [], 1
        while position < len(fine):
            group.append(position)
            product *= fine[position]
            position += 1
            if product >= size:
                break
        if product != size or not group:
            return None
        groups.append(group)
    rest = list(range(position, len(fine)))
    if any(fine[i] != 1 for i in rest):
        return None
    groups[-1].extend(rest)
    return groups


def common_coarsening(a: Sequence[int], b: Sequence[int]) -> tuple[int, ...] | None:
    """The finest shape that both `a` and `b` collapse to (its dimensions end where the
    running products of `a` and of `b` meet), or None when they differ in size or hold
    no elements."""
    if math.prod(a) != math.prod(b) or 0 in a or 0 in b:
        return None
    ends = set(itertools.accumulate(a, operator.mul)) & set(itertools.accumulate(b, operator.mul))
    common = sorted(ends - {1})
    return tuple(high // low for low, high in zip([1, *common], common))


def _reassociation_attr(groups: Sequence[Sequence[int]]) -> ArrayAttr:
    return ArrayAttr([ArrayAttr([IntegerAttr(i, i64) for i in group]) for group in groups])


def reassociation_groups(op: Operation) -> list[list[int]]:
    """The dims of the expanded shape that each dim of the collapsed one stands for, of a
    tensor's or memref's collapse_shape or expand_shape."""
    return [[d.value.data for d in group.data] for group in op.reassociation.data]


def collapse_shape(value: SSAValue, groups: Sequence[Sequence[int]], result_type: TensorType):
    return tensor.CollapseShapeOp(
        operands=[value],
        result_types=[result_type],
        properties={"reassociation": _reassociation_attr(groups)},
    )


def expand_shape(value: SSAValue, groups: Sequence[Sequence[int]], shape: Sequence[int]):
    result_type = TensorType(value.type.get_element_type(), shape)
    return tensor.ExpandShapeOp(value, [], _reassociation_attr(groups), list(shape), result_type)


def element_count(shape: Sequence[int]) -> int:
    return math.prod(shape)


def signless(element_type: Attribute) -> Attribute:
    """The signless integer type of the same width (other types unchanged)."""
    if isinstance(element_type, IntegerType):
        return IntegerType(element_type.width.data)
    return element_type


def is_signless(element_type: Attribute) -> bool:
    return not isinstance(element_type, IntegerType) or (
        element_type.signedness.data == Signedness.SIGNLESS
    )
