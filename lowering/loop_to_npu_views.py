"""Views for `loop-to-npu`: chains of `memref.subview` folded into a base buffer with per-dimension
offsets and steps, which is how npu instructions address data; `Emitter` builds the index arithmetic
and loop nests the instructions need.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    IntegerAttr,
    MemRefType,
    NoneAttr,
    StringAttr,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from ziggurat.diagnostics import error_at
from ziggurat.dialects.npu import row_major_strides
from ziggurat.transforms.loop.buffers import kept_dims
from ziggurat.transforms.tile.builders import reassociation_groups


@dataclass(frozen=True)
class Linear:
    """An index value: `constant + sum(coefficient * value)` over index SSA values."""

    constant: int = 0
    terms: tuple[tuple[SSAValue, int], ...] = ()

    @staticmethod
    def of(value: int | SSAValue) -> Linear:
        return Linear(value) if isinstance(value, int) else Linear(0, ((value, 1),))

    def __add__(self, other: Linear) -> Linear:
        coefficients: dict[SSAValue, int] = dict(self.terms)
        for value, coefficient in other.terms:
            coefficients[value] = coefficients.get(value, 0) + coefficient
        return Linear(
            self.constant + other.constant, tuple((v, c) for v, c in coefficients.items() if c)
        )

    def scaled(self, factor: int) -> Linear:
        if factor == 0:
            return Linear()
        return Linear(self.constant * factor, tuple((v, c * factor) for v, c in self.terms))

    @property
    def static(self) -> int | None:
        return None if self.terms else self.constant


@dataclass(frozen=True)
class Dim:
    """A view dimension: it walks `base_dim` of the buffer (None: a broadcast) `size` times by `step`."""

    base_dim: int | None
    size: int
    step: int = 1


@dataclass(frozen=True)
class View:
    """A strided window of `base`: the element at view index j is at buffer index `offsets + sum(j_d * step_d)`."""

    base: SSAValue
    offsets: tuple[Linear, ...]
    dims: tuple[Dim, ...]

    @property
    def base_type(self) -> MemRefType:
        return self.base.type

    @property
    def space(self) -> str:
        space = self.base_type.memory_space
        return space.data if isinstance(space, StringAttr) else ""

    @property
    def shape(self) -> list[int]:
        return [d.size for d in self.dims]

    def element_strides(self) -> list[int]:
        """Elements between neighbours along each view dimension (0 for a broadcast)."""
        base = row_major_strides(self.base_type.get_shape())
        return [0 if d.base_dim is None else d.step * base[d.base_dim] for d in self.dims]

    def shifted(self, dim: Dim, by: Linear) -> View:
        """The view moved by `by` steps of `dim` (a dimension of this view)."""
        if dim.base_dim is None:
            return self
        offsets = list(self.offsets)
        offsets[dim.base_dim] = offsets[dim.base_dim] + by.scaled(dim.step)
        return replace(self, offsets=tuple(offsets))

    def with_dims(self, dims: Sequence[Dim]) -> View:
        return replace(self, dims=tuple(dims))


def _is_buffer(value: SSAValue) -> bool:
    value_type = value.type
    return isinstance(value_type, MemRefType) and isinstance(value_type.layout, NoneAttr)


def view_of(value: SSAValue, user: Operation) -> View:
    """The view `value` names, followed through `memref.subview` to its row-major buffer.

    Offsets are linear combinations of index values, so loop induction variables
    stay symbolic:

        %s = memref.subview %a[%i, 8] [16, 32] [1, 2] : memref<64x128xf16> to memref<16x32xf16, strided<[128, 2], ...>>
        view_of(%s) = View(base=%a, offsets=[%i, 8], dims=[Dim(0, 16, 1), Dim(1, 32, 2)])
    """
    owner = value.owner
    if isinstance(owner, memref.SubviewOp):
        return _subview(view_of(owner.source, user), owner)
    if isinstance(owner, memref.ExpandShapeOp):
        return _expanded(view_of(owner.src, user), owner)
    if isinstance(owner, memref.CollapseShapeOp):
        return _collapsed(view_of(owner.src, user), owner)
    if isinstance(owner, memref.ReinterpretCastOp):
        return _reinterpreted(view_of(owner.source, user), owner)
    value_type = value.type
    if not _is_buffer(value):
        raise error_at(
            user, f"loop-to-npu cannot follow the view {value_type} back to a row-major buffer"
        )
    shape = value_type.get_shape()
    if any(size == DYNAMIC_INDEX for size in shape):
        raise error_at(user, f"loop-to-npu needs static shapes, got {value_type}")
    return View(
        value, tuple(Linear() for _ in shape), tuple(Dim(d, size) for d, size in enumerate(shape))
    )


def _mixed(static: Sequence[int], dynamic: Sequence[SSAValue]) -> list[Linear]:
    values = iter(dynamic)
    return [Linear.of(next(values)) if s == DYNAMIC_INDEX else Linear(s) for s in static]


def _subview(parent: View, op: memref.SubviewOp) -> View:
    offsets = _mixed(op.static_offsets.get_values(), op.offsets)
    sizes = op.static_sizes.get_values()
    strides = op.static_strides.get_values()
    if DYNAMIC_INDEX in sizes or DYNAMIC_INDEX in strides:
        raise error_at(op, "loop-to-npu needs static subview sizes and strides")
    kept = kept_dims(sizes, op.result.type.get_shape())
    view = parent
    for dim, offset in zip(parent.dims, offsets):
        view = view.shifted(dim, offset)
    dims = [
        Dim(p.base_dim, size, p.step * stride)
        for i, (p, size, stride) in enumerate(zip(parent.dims, sizes, strides))
        if i in kept
    ]
    return view.with_dims(dims)


def _expanded(parent: View, op: memref.ExpandShapeOp) -> View:
    """Each dim split into the group of dims the expansion gives it: all walk the same buffer dim."""
    shape = op.result.type.get_shape()
    dims: list[Dim] = []
    for dim, group in zip(parent.dims, reassociation_groups(op)):
        sizes = [shape[d] for d in group]
        for position, size in enumerate(sizes):
            inner = 1
            for later in sizes[position + 1 :]:
                inner *= later
            dims.append(Dim(dim.base_dim, size, dim.step * inner))
    return parent.with_dims(dims)


def _collapsed(parent: View, op: memref.CollapseShapeOp) -> View:
    """Each group of dims merged into one: possible where all but one are unit dims, or where they walk
    one buffer dim contiguously (an expansion undone)."""
    dims: list[Dim] = []
    for group in reassociation_groups(op):
        members = [parent.dims[d] for d in group if parent.dims[d].size > 1] or [
            parent.dims[group[-1]]
        ]
        merged = members[-1]
        for outer in reversed(members[:-1]):
            if outer.base_dim != merged.base_dim or outer.step != merged.step * merged.size:
                raise error_at(
                    op,
                    f"loop-to-npu cannot fold a {op.name} of dims {group} walking different buffer dims",
                )
            merged = Dim(merged.base_dim, outer.size * merged.size, merged.step)
        dims.append(merged)
    return parent.with_dims(dims)


def _reinterpreted(parent: View, op: memref.ReinterpretCastOp) -> View:
    """A static strided view of a whole buffer, from a static element offset into it (as MLIR's, from
    the buffer's start): each dim walks the outermost buffer dim whose row-major stride divides its
    stride (as the transposed or regrouped views that loop-to-npu itself writes do)."""
    strides = op.static_strides.get_values()
    (offset,) = op.static_offsets.get_values() or (0,)
    in_place = [d.base_dim for d in parent.dims] == list(range(len(parent.dims)))
    whole = in_place and all(o.static == 0 for o in parent.offsets)
    shape = parent.base_type.get_shape()
    if not whole or DYNAMIC_INDEX in (offset, *strides) or not 0 <= offset < math.prod(shape):
        raise error_at(
            op, "loop-to-npu folds only static memref.reinterpret_cast views inside a whole buffer"
        )
    base_strides = row_major_strides(shape)
    dims = []
    for size, stride in zip(op.result.type.get_shape(), strides):
        base_dim = next(
            (d for d, s in enumerate(base_strides) if stride % s == 0), len(base_strides) - 1
        )
        dims.append(Dim(base_dim, size, stride // base_strides[base_dim]))
    offsets = tuple(Linear(offset // step % size) for step, size in zip(base_strides, shape))
    return View(parent.base, offsets, tuple(dims))


@dataclass
class Emitter:
    """Inserts index arithmetic, loops and instructions at one point of the IR.

    Each op it inserts takes `location`, the source position of the loop-level op
    it comes from, so that run_npu's errors point at that op.
    """

    rewriter: PatternRewriter
    point: InsertPoint
    location: Attribute | None = None
    _constants: dict[int, SSAValue] = field(default_factory=dict)

    def insert(self, op: Operation) -> Operation:
        if self.location is not None:
            op.location = self.location
        self.rewriter.insert(op, self.point)
        return op

    def at(self, point: InsertPoint) -> Emitter:
        """An emitter inserting at `point`, from the same source op."""
        return Emitter(self.rewriter, point, self.location)

    def constant(self, value: int) -> SSAValue:
        if value not in self._constants:
            self._constants[value] = self.insert(
                arith.ConstantOp(IntegerAttr(value, IndexType()))
            ).results[0]
        return self._constants[value]

    def index(self, value: Linear) -> int | SSAValue:
        """`value` as an npu index: an int when static, else arith ops computing it."""
        if value.static is not None:
            return value.static
        result: SSAValue | None = None
        for term, coefficient in value.terms:
            product = (
                term
                if coefficient == 1
                else self.insert(arith.MuliOp(term, self.constant(coefficient))).result
            )
            result = (
                product if result is None else self.insert(arith.AddiOp(result, product)).result
            )
        if value.constant:
            result = self.insert(arith.AddiOp(result, self.constant(value.constant))).result
        return result

    def indices(self, view: View) -> list[int | SSAValue]:
        return [self.index(offset) for offset in view.offsets]

    def loop(self, extent: int, step: int = 1) -> tuple[Emitter, SSAValue]:
        """An `scf.for` from 0 to `extent`; an emitter inside its body and its induction variable."""
        body = Block(arg_types=[IndexType()])
        inner = self.at(InsertPoint.at_end(body))
        inner.insert(scf.YieldOp())
        self.insert(
            scf.ForOp(self.constant(0), self.constant(extent), self.constant(step), [], body)
        )
        return self.at(InsertPoint.before(body.last_op)), body.args[0]

    def branch(self, condition: SSAValue) -> tuple[Emitter, Emitter]:
        """An `scf.if` on `condition`; emitters inside its then and else blocks."""
        then_block, else_block = Block(), Block()
        for block in (then_block, else_block):
            self.at(InsertPoint.at_end(block)).insert(scf.YieldOp())
        self.insert(scf.IfOp(condition, [], [then_block], [else_block]))
        return self.at(InsertPoint.before(then_block.last_op)), self.at(
            InsertPoint.before(else_block.last_op)
        )


def squeezed(views: Sequence[View], keep: Sequence[bool] | None = None) -> list[View]:
    """The views (sharing one shape) without their unit dimensions, except those `keep` marks."""
    drop = [size == 1 and not (keep and keep[d]) for d, size in enumerate(views[0].shape)]
    return [v.with_dims([dim for dim, gone in zip(v.dims, drop) if not gone]) for v in views]


def merged_groups(views: Sequence[View], fixed: Sequence[bool] | None = None) -> list[list[int]]:
    """Runs of adjacent dimensions that every view walks contiguously (row-major), outermost first.

    A group's elements are evenly spaced in every view, so an instruction can walk
    it as one dimension. Dimensions `fixed` marks (e.g. padded ones) stay alone.
    """
    strides = [v.element_strides() for v in views]
    shape = views[0].shape
    groups: list[list[int]] = []
    for dim in range(len(shape)):
        joins = (
            groups
            and not (fixed and (fixed[dim] or fixed[groups[-1][-1]]))
            and all(s[dim - 1] == s[dim] * shape[dim] for s in strides)
        )
        if joins:
            groups[-1].append(dim)
        else:
            groups.append([dim])
    return groups


def group_extent(views: Sequence[View], group: Sequence[int]) -> tuple[int, list[int]]:
    """The size of a merged group and each view's element stride along it."""
    size = 1
    for dim in group:
        size *= views[0].dims[dim].size
    return size, [v.element_strides()[group[-1]] for v in views]


def loop_over(
    emitter: Emitter, views: Sequence[View], dims: Sequence[int]
) -> tuple[Emitter, list[View]]:
    """Loops over `dims` of the views (outermost first); the emitter inside and the views at the loops' indices."""
    views = list(views)
    for dim in dims:
        emitter, iv = emitter.loop(views[0].dims[dim].size)
        views = [v.shifted(v.dims[dim], Linear.of(iv)) for v in views]
    return emitter, views
