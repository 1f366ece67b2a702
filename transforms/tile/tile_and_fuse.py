"""`tile-and-fuse{machine=NAME | sizes=...}`: tile each fusion group into static tiles that fit the
machine's memories, fusing the group's producers into the tile loops (docs/lowering.md, section 2).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial

from xdsl.context import Context
from xdsl.dialects import arith, func, scf, tensor
from xdsl.dialects.builtin import DenseArrayBase, IndexType, ModuleOp, TensorType
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from ziggurat.diagnostics import error_at
from ziggurat.dialects.tile import GROUP_ATTR, INTERCHANGE_ATTR, ROOT_ATTR, SIZES_ATTR
from ziggurat.ir.contraction import contraction_dims, is_contraction
from ziggurat.machine import Machine, load_machine
from ziggurat.transforms.tile.builders import REDUCTION
from ziggurat.transforms.tile.tile_sizes import (
    apply_override,
    contraction_sizes,
    element_bytes,
    spread_contraction,
    spread_vector,
    vector_sizes,
)
from ziggurat.transforms.tile.tiling_interface import (
    Linear,
    NotTileable,
    Tile,
    TileBuilder,
    access_slice,
    linear_form,
    tiling_of,
)

# --------------------------------------------------------------------------- #
# Groups
# --------------------------------------------------------------------------- #


def is_tileable(op: Operation) -> bool:
    """An op with a tiling implementation, one ranked tensor result, a domain, maps the
    interval arithmetic follows and an output map of plain dims (an op that is not
    is left whole)."""
    impl = tiling_of(op)
    if impl is None or len(op.results) != 1:
        return False
    result_type = op.results[0].type
    if not isinstance(result_type, TensorType) or not result_type.get_shape():
        return False
    try:
        impl.domain(op)
        maps = impl.indexing_maps(op)
        for indexing in maps:
            for expr in indexing.results if indexing is not None else ():
                linear_form(expr)
    except NotTileable:
        return False
    return all(isinstance(expr, AffineDimExpr) for expr in maps[-1].results)


@dataclass
class Group:
    ops: list[Operation]
    """Members in block order."""
    last: Operation
    fused: set[Operation]
    """The members computed per tile: `last` and producers whose values only these read."""
    anchor: Operation | None
    """The root contraction, whose reduction loops get the inner loop."""


def _helpers(op: Operation) -> list[Operation]:
    """The ungrouped `linalg.fill` of an ungrouped op's init and `tensor.pad`s of its inputs."""
    found = []
    for operand in op.operands:
        producer = operand.owner
        if (
            isinstance(producer, (linalg.FillOp, tensor.PadOp))
            and GROUP_ATTR not in producer.attributes
            and producer.results[0].has_one_use()
            and is_tileable(producer)
        ):
            found.append(producer)
    return found


def _make_group(members: list[Operation], block_order: dict[Operation, int]) -> Group | None:
    tileable = [op for op in members if is_tileable(op)]
    if not tileable:
        return None
    last = tileable[-1]
    fused = {last}
    for op in reversed(tileable[:-1]):
        if all(use.operation in fused for result in op.results for use in result.uses):
            fused.add(op)
    roots = [
        op
        for op in tileable
        if is_contraction(op) and (ROOT_ATTR in op.attributes or GROUP_ATTR not in op.attributes)
    ]
    anchor = next((op for op in roots if op in fused), None)
    return Group(sorted(members, key=block_order.get), last, fused, anchor)


def _unfused_generics(group: Group) -> list[Group]:
    """Single-op groups for the elementwise generics of `group` that its tile loop cannot
    compute (read through a reshape, or also outside the group): tiled on their own
    rather than computed whole (a relu before a channel shuffle, 1x112x56x56)."""
    return [
        Group([op], op, {op}, None)
        for op in group.ops
        if op not in group.fused
        and isinstance(op, linalg.GenericOp)
        and is_tileable(op)
        and not is_contraction(op)
    ]


def collect_groups(block: Block) -> list[Group]:
    """The groups of a function body, in the order of their last ops."""
    order = {op: i for i, op in enumerate(block.ops)}
    named: dict[str, list[Operation]] = {}
    singles: list[list[Operation]] = []
    helpers = set()
    for op in reversed(list(block.ops)):
        if GROUP_ATTR in op.attributes:
            named.setdefault(op.attributes[GROUP_ATTR].data, []).insert(0, op)
        elif (
            is_tileable(op)
            and op not in helpers
            and not isinstance(op, (linalg.FillOp, tensor.PadOp))
        ):
            extra = _helpers(op)
            helpers.update(extra)
            singles.append([*extra, op])
    groups = [
        g
        for g in (_make_group(members, order) for members in [*named.values(), *singles])
        if g is not None
    ]
    groups += [single for g in groups for single in _unfused_generics(g)]
    return sorted(groups, key=lambda g: order[g.last])


# --------------------------------------------------------------------------- #
# Which loops of the last op tile, and how they reach the other members
# --------------------------------------------------------------------------- #

Deps = frozenset  # the last op's loops a member's loop (or a value's dim) follows


@dataclass
class Analysis:
    deps: dict[Operation, list[Deps]]
    """Per fused member, per loop of its domain: the last op's loops it follows
    (empty: computed whole in each tile)."""
    whole: set[int]
    """Loops of the last op that must stay whole."""
    halo: set[int]
    """Loops of the last op whose slices reach a padded dim of a fused pad."""


def analyze(group: Group) -> Analysis:
    last = group.last
    impl = tiling_of(last)
    deps: dict[Operation, list[Deps]] = {
        last: [Deps() if loop.reduction else Deps({d}) for d, loop in enumerate(impl.domain(last))]
    }
    reads: dict[SSAValue, list[list[Deps]]] = {}
    whole: set[int] = set()
    halo: set[int] = set()
    for op in sorted(group.fused, key=lambda o: group.ops.index(o), reverse=True):
        op_impl = tiling_of(op)
        maps = op_impl.indexing_maps(op)
        n_inputs = len(op.operands) - len(op.results)
        if op is not last:
            dims = _result_deps(reads.get(op.results[0], []), whole)
            outputs = maps[n_inputs]
            loops = [Deps()] * len(op_impl.domain(op))
            for expr, dim_deps in zip(outputs.results, dims):
                for d in linear_form(expr)[0]:
                    loops[d] = dim_deps
            deps[op] = loops
            if isinstance(op, tensor.PadOp):
                for dim_deps, low, high in zip(
                    dims, op.static_low.get_values(), op.static_high.get_values()
                ):
                    if low or high:
                        halo |= dim_deps
        for operand, indexing in zip(op.operands, maps):
            if indexing is None or operand.owner not in group.fused:
                continue
            operand_deps = [
                Deps().union(*(deps[op][d] for d in linear_form(expr)[0]))
                for expr in indexing.results
            ]
            reads.setdefault(operand, []).append(operand_deps)
    return Analysis(deps, whole, halo)


def _result_deps(reads: list[list[Deps]], whole: set[int]) -> list[Deps]:
    """A value's dims as its consumers read them; a dim read in different ways makes
    the loops involved whole."""
    if not reads:
        return []
    merged = []
    for per_dim in zip(*reads):
        if len(set(per_dim)) > 1:
            whole.update(*per_dim)
            merged.append(Deps())
        else:
            merged.append(per_dim[0])
    return merged


# --------------------------------------------------------------------------- #
# Tile sizes of a group
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class Sizes:
    outer: list[int]
    """Per loop of the last op."""
    reduction: dict[int, int]
    """Per reduction loop of the anchor that is tiled."""
    order: list[int] = field(default_factory=list)
    """The last op's loops from the outermost tile loop in; loops not listed follow in their order."""


def _override(op: Operation, option: Sequence[int]) -> Sequence[int] | None:
    if SIZES_ATTR in op.attributes:
        attr = op.attributes[SIZES_ATTR]
        return attr.get_values() if isinstance(attr, DenseArrayBase) else None
    return option or None


def group_sizes(
    group: Group,
    analysis: Analysis,
    machine: Machine | None,
    option: Sequence[int],
    cores: int = 1,
) -> Sizes:
    last_domain = tiling_of(group.last).domain(group.last)
    extents = [loop.extent for loop in last_domain]
    outer = list(extents)
    reduction: dict[int, int] = {}
    anchor = group.anchor
    matrix = anchor is not None and contraction_dims(anchor).is_matrix_shaped
    if matrix:
        anchor_domain = tiling_of(anchor).domain(anchor)
        anchor_extents = [loop.extent for loop in anchor_domain]
        override = _override(anchor, option)
        if override is not None:
            sizes = apply_override(anchor_extents, override)
        elif machine is not None:
            epilogue = epilogue_bytes(group)
            sizes = contraction_sizes(anchor, machine, anchor_extents, epilogue)
            if cores > 1:
                sizes = spread_contraction(anchor, machine, anchor_extents, sizes, cores, epilogue)
        else:
            sizes = anchor_extents
        window = set(contraction_dims(anchor).window)
        for d, (loop, size) in enumerate(zip(anchor_domain, sizes)):
            if loop.reduction and d not in window and size < loop.extent:
                reduction[d] = size
            if not loop.reduction and len(analysis.deps[anchor][d]) == 1:
                (target,) = analysis.deps[anchor][d]
                outer[target] = size
        order = []
        for d in _interchange(anchor):
            if len(analysis.deps[anchor][d]) != 1:
                raise error_at(
                    anchor,
                    f"{INTERCHANGE_ATTR}: loop {d} of this op is not one tile loop of its group",
                )
            order.extend(analysis.deps[anchor][d])
    else:
        order = _interchange(group.last)
        override = _override(group.last, option)
        if override is not None:
            outer = apply_override(extents, override)
        elif machine is not None:
            whole = analysis.whole | {d for d, loop in enumerate(last_domain) if loop.reduction}
            lane_bytes = element_bytes(group.last)
            outer = vector_sizes(
                extents, whole, partial(_vector_footprint, group, analysis), machine, lane_bytes
            )
            if cores > 1:
                # where the group reduces its operands' innermost dim (a global pool), the lanes
                # run along that dim: the output's innermost dim may split down to one element
                lanes = 1 if _reduces_innermost(group) else machine.vector.lanes(lane_bytes)
                outer = spread_vector(extents, outer, whole, lanes, cores)
    for d, loop in enumerate(last_domain):
        if d in analysis.whole or loop.reduction:
            outer[d] = loop.extent
    return Sizes(outer, reduction, order)


def _reduces_innermost(group: Group) -> bool:
    """Whether a member of `group` reduces its innermost loop (a sum over a row, say)."""
    return any(
        isinstance(op, linalg.GenericOp)
        and op.iterator_types.data
        and op.iterator_types.data[-1].data == REDUCTION.data
        for op in group.ops
    )


def _interchange(op: Operation) -> list[int]:
    """`op`'s `tile.interchange`: its parallel loops that the group's tile loops follow, outermost
    first (MLIR's tiling `interchange`); [] without one. Each must be a distinct parallel loop
    that only one loop of the group's last op follows."""
    attr = op.attributes.get(INTERCHANGE_ATTR)
    if attr is None:
        return []
    loops = attr.get_values() if isinstance(attr, DenseArrayBase) else None
    domain = tiling_of(op).domain(op)
    if (
        loops is None
        or len(set(loops)) != len(loops)
        or any(not 0 <= d < len(domain) or domain[d].reduction for d in loops)
    ):
        raise error_at(
            op,
            f"{INTERCHANGE_ATTR} must list distinct parallel loops of this op (0 to {len(domain) - 1}, "
            f"reductions excluded), outermost first; got {attr}",
        )
    return list(loops)


def _vector_footprint(group: Group, analysis: Analysis, sizes: Sequence[int]) -> int:
    """Bytes of the operand slices of a vector group's tile of `sizes` (per loop of the
    last op). Each member's tile follows the loops of the last op it depends on and
    spans its other loops whole, so a fused reduction's producers count the whole
    window per output element, and a conv's input its halo, not one copy per tap.
    Every operand counts at the op's widest element type: tile-vectorize widens an
    f16 input of an f32 reduction into a buffer of its own."""
    total = 0
    for op in group.fused:
        impl = tiling_of(op)
        width = element_bytes(op)
        box = [
            min(loop.extent, math.prod(sizes[d] for d in deps)) if deps else loop.extent
            for loop, deps in zip(impl.domain(op), analysis.deps[op])
        ]
        for operand, indexing in zip(op.operands, impl.indexing_maps(op)):
            if indexing is None or not isinstance(operand.type, TensorType):
                continue
            box_sizes = access_slice(indexing, Tile.whole(box))[0].sizes
            elements = math.prod(min(n, e) for n, e in zip(box_sizes, operand.type.get_shape()))
            total += elements * width
    return total


def epilogue_bytes(group: Group) -> int:
    """Operand bytes per output element of the vector ops fused after a group's contraction;
    a generic that only converts types is none (the DMA out of the accumulator converts)."""
    return sum(
        element_bytes(op) * len(op.operands)
        for op in group.fused
        if op is not group.anchor and isinstance(op, linalg.GenericOp) and not _converts_only(op)
    )


def _converts_only(op: linalg.GenericOp) -> bool:
    return all(
        isinstance(inner, (arith.ExtFOp, arith.TruncFOp, linalg.YieldOp))
        for inner in op.body.block.ops
    )


# --------------------------------------------------------------------------- #
# Building the loops
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class Segment:
    """`count` tiles of `size` at `start`, `start + size`, ... (a loop if count > 1)."""

    start: int
    count: int
    size: int


def segments(extent: int, size: int, peel: bool) -> list[Segment]:
    """Static tiles of a loop: full tiles (first and last peeled if `peel`), then the
    remainder."""
    full, remainder = divmod(extent, size)
    parts = []
    if peel and full > 2:
        parts = [
            Segment(0, 1, size),
            Segment(size, full - 2, size),
            Segment((full - 1) * size, 1, size),
        ]
    elif peel:
        parts = [Segment(i * size, 1, size) for i in range(full)]
    elif full:
        parts = [Segment(0, full, size)]
    if remainder:
        parts.append(Segment(full * size, 1, remainder))
    return parts


@dataclass
class Scope:
    """What a tile's body may reuse: tiles already built in this or an enclosing loop,
    and the ranges of the enclosing loops' induction variables."""

    bounds: dict[SSAValue, tuple[int, int]] = field(default_factory=dict)
    built: dict[tuple[Operation, Tile], list[SSAValue]] = field(default_factory=dict)
    parent: Scope | None = None

    def child(self, iv: SSAValue, first: int, last: int) -> Scope:
        return Scope({**self.bounds, iv: (first, last)}, {}, self)

    def lookup(self, key) -> list[SSAValue] | None:
        scope = self
        while scope is not None:
            if key in scope.built:
                return scope.built[key]
            scope = scope.parent
        return None


Body = Callable[
    [TileBuilder, dict[int, Linear], dict[int, int], list[SSAValue], Scope], list[SSAValue]
]


def build_nest(
    b: TileBuilder,
    loops: list[tuple[int, int, int, bool]],
    values: list[SSAValue],
    body: Body,
    scope: Scope,
) -> list[SSAValue]:
    """The tiles of `loops` ((dim, extent, size, peel) each), the segments of each loop
    one after another, carrying `values` through; `body` builds one tile."""
    for combination in itertools.product(*(segments(e, s, p) for _, e, s, p in loops)):
        values = _build_segments(
            b, [loop[0] for loop in loops], list(combination), values, body, scope, {}, {}
        )
    return values


def _build_segments(b, dims, parts, values, body, scope, offsets, sizes) -> list[SSAValue]:
    if not dims:
        return body(b, offsets, sizes, values, scope)
    dim, part = dims[0], parts[0]
    sizes = {**sizes, dim: part.size}
    if part.count == 1:
        offsets = {**offsets, dim: Linear((), part.start)}
        return _build_segments(b, dims[1:], parts[1:], values, body, scope, offsets, sizes)
    bounds = [b.constant(v) for v in (part.start, part.start + part.count * part.size, part.size)]
    block = Block(arg_types=[IndexType(), *(v.type for v in values)])
    inner = b.at(InsertPoint.at_end(block))
    iv = block.args[0]
    last = part.start + (part.count - 1) * part.size
    results = _build_segments(
        inner,
        dims[1:],
        parts[1:],
        list(block.args[1:]),
        body,
        scope.child(iv, part.start, last),
        {**offsets, dim: Linear.of(iv)},
        sizes,
    )
    inner.emit(scf.YieldOp(*results))
    return list(b.emit(scf.ForOp(*bounds, values, Region(block))).results)


@dataclass
class GroupTiler:
    group: Group
    sizes: Sizes

    def produce(self, value: SSAValue, box: Tile, b: TileBuilder, scope: Scope) -> SSAValue:
        """The `box` slice of `value`: computed in the tile when a fused member produces
        it, else sliced (a fresh `tensor.empty` for an empty init)."""
        producer = value.owner
        # A fill is cheap and has no inputs: each tile fills its own slice, whether the
        # fill belongs to the group or not (a splat weight, shared by several groups).
        if producer in self.group.fused or (
            isinstance(producer, linalg.FillOp) and is_tileable(producer)
        ):
            impl = tiling_of(producer)
            tile = impl.domain_tile_for_result(producer, value.index, box)
            if impl.can_tile(producer, tile, scope.bounds):
                built = scope.lookup((producer, tile))
                if built is None:
                    built = self.tile_op(producer, tile, b, scope)
                    scope.built[(producer, tile)] = built
                return built[value.index]
        if isinstance(producer, tensor.EmptyOp):
            return b.empty(box.sizes, value.type.get_element_type())
        return b.extract(value, box)

    def tile_op(self, op: Operation, tile: Tile, b: TileBuilder, scope: Scope) -> list[SSAValue]:
        """`op`'s tile, its operands' slices produced first; what it creates has its location."""
        impl = tiling_of(op)
        with b.located(op.location):
            if op is self.group.anchor and self.sizes.reduction:
                return self.tile_reduction(op, tile, b, scope)
            operands = [
                value if box is None else self.produce(value, box, b, scope)
                for value, box in zip(op.operands, impl.operand_slices(op, tile))
            ]
            return impl.tile(op, b, operands, tile)

    def tile_reduction(
        self, op: Operation, tile: Tile, b: TileBuilder, scope: Scope
    ) -> list[SSAValue]:
        """The anchor's tile with its reduction loops tiled, accumulating through iter_args."""
        impl = tiling_of(op)
        n_inputs = len(op.operands) - len(op.results)
        init_box = impl.operand_slices(op, tile)[n_inputs]
        init = self.produce(op.operands[n_inputs], init_box, b, scope)
        extents = [loop.extent for loop in impl.domain(op)]
        loops = [(d, extents[d], size, False) for d, size in sorted(self.sizes.reduction.items())]

        def step(inner: TileBuilder, offsets, sizes, values, inner_scope) -> list[SSAValue]:
            part = Tile(
                tuple(offsets.get(d, o) for d, o in enumerate(tile.offsets)),
                tuple(sizes.get(d, s) for d, s in enumerate(tile.sizes)),
            )
            slices = impl.operand_slices(op, part)[:n_inputs]
            inputs = [
                value if box is None else self.produce(value, box, inner, inner_scope)
                for value, box in zip(op.operands[:n_inputs], slices)
            ]
            return impl.tile(op, inner, [*inputs, *values], part)

        return build_nest(b, loops, [init], step, scope)

    def build(self, b: TileBuilder, analysis: Analysis) -> SSAValue:
        last = self.group.last
        impl = tiling_of(last)
        domain = impl.domain(last)
        first = {d: i for i, d in enumerate(self.sizes.order)}
        loops = sorted(
            (
                (d, loop.extent, size, d in analysis.halo)
                for d, (loop, size) in enumerate(zip(domain, self.sizes.outer))
                if size < loop.extent
            ),
            key=lambda entry: (first.get(entry[0], len(first)), entry[0]),
        )
        result = last.results[0]
        dest = b.empty(result.type.get_shape(), result.type.get_element_type())

        def tile_body(inner: TileBuilder, offsets, sizes, values, scope) -> list[SSAValue]:
            tile = Tile(
                tuple(offsets.get(d, Linear()) for d in range(len(domain))),
                tuple(sizes.get(d, loop.extent) for d, loop in enumerate(domain)),
            )
            value = self.tile_op(last, tile, inner, scope)[0]
            return [inner.insert(value, values[0], impl.result_slice(last, tile))]

        return build_nest(b, loops, [dest], tile_body, Scope())[0]


# --------------------------------------------------------------------------- #
# The pass
# --------------------------------------------------------------------------- #

_REMOVABLE = (
    linalg.GenericOp,
    linalg.FillOp,
    linalg.MatmulOp,
    linalg.TransposeOp,
    linalg.BroadcastOp,
    linalg.Conv2DNchwFchwOp,
    tensor.PadOp,
    tensor.EmptyOp,
    tensor.ExtractSliceOp,
    arith.ConstantOp,
)


def remove_dead(block: Block) -> None:
    """Erase the tensor-level ops whose results nothing reads any more (what tiling
    replaced); ops without results (a generic on memrefs writes them) stay."""
    for op in reversed(list(block.ops)):
        if (
            isinstance(op, _REMOVABLE)
            and op.results
            and all(
                isinstance(r.type, TensorType) or isinstance(op, arith.ConstantOp)
                for r in op.results
            )
            and all(r.first_use is None for r in op.results)
        ):
            Rewriter.erase_op(op)


def check_static(function: func.FuncOp) -> None:
    for op in function.walk():
        for value in (*op.operands, *op.results):
            if isinstance(value.type, TensorType) and any(d < 0 for d in value.type.get_shape()):
                raise error_at(
                    op, f"tile-and-fuse: dynamic shapes are not supported, got {value.type}"
                )


def tile_group(
    group: Group, machine: Machine | None, option: Sequence[int], cores: int = 1
) -> None:
    analysis = analyze(group)
    sizes = group_sizes(group, analysis, machine, option, cores)
    extents = [loop.extent for loop in tiling_of(group.last).domain(group.last)]
    if sizes.outer == extents and not sizes.reduction:
        return
    b = TileBuilder(InsertPoint.before(group.last), group.last.location)
    result = GroupTiler(group, sizes).build(b, analysis)
    group.last.results[0].replace_all_uses_with(result)


@dataclass(frozen=True)
class TileAndFusePass(ModulePass):
    """Tile each fusion group into static tiles, its producers fused.

    A group is the ops with the same `tile.group` attribute; an op outside every
    group is a group of its own, with the `linalg.fill` of its init and the
    `tensor.pad`s of its inputs. The group's last op is tiled over its parallel
    loops (`scf.for` with the result in `iter_args`, each tile written back with
    `tensor.insert_slice`); each producer whose values only the group reads is
    fused into the loop, computing just the slice its consumer reads (halos
    included); the root contraction's (`tile.root`) reduction loops become an inner
    `scf.for` accumulating through `iter_args`. Tiles are static: a remainder tile
    is straight-line code after its loop, and a padded input's first and last tiles
    are peeled. Tile sizes come from `tile_sizes.py`, overridden by a `tile.sizes`
    attribute on the root (or on the last op of a vector group) or by the `sizes`
    option; the tile loops nest in the order of the last op's loops unless the root
    has `tile.interchange`. Dynamic shapes are refused.

        %y = linalg.matmul ins(%a, %b : tensor<256x512xf32>, tensor<512x256xf32>) outs(%init) ...
        %r = linalg.generic {relu} ins(%y) outs(%e) ...

    becomes (sizes=128,256,64)

        %r = scf.for %i = %c0 to %c256 step %c128 iter_args(%o = %empty) -> (tensor<256x256xf32>) {
          %f = linalg.fill ins(%zero : f32) outs(%t : tensor<128x256xf32>)
          %acc = scf.for %k = %c0 to %c512 step %c64 iter_args(%a = %f) -> (tensor<128x256xf32>) {
            %as = tensor.extract_slice %A[%i, %k] [128, 64] [1, 1]
            %bs = tensor.extract_slice %B[%k, 0] [64, 256] [1, 1]
            %m = linalg.matmul ins(%as, %bs) outs(%a) -> tensor<128x256xf32>
            scf.yield %m
          }
          %y = linalg.generic {relu} ins(%acc) outs(...) -> tensor<128x256xf32>
          %n = tensor.insert_slice %y into %o[%i, 0] [128, 256] [1, 1]
          scf.yield %n
        }
    """

    name = "tile-and-fuse"

    machine: str | None = None
    """A preset name (davinci, systolic, tensorcore) or a machine TOML file: tile sizes from it."""

    sizes: tuple[int, ...] = ()
    """Tile sizes for every group's root (0: whole); wins over the machine's."""

    cores: int = 1
    """The cores `loop-distribute` will divide each group's tiles among: a contraction takes the
    tile its layer runs fastest with on that many cores (`spread_contraction`), a vector group's
    tiles are split until it has that many where its loops allow (`spread_vector`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.machine is None and not self.sizes:
            raise error_at(op, "tile-and-fuse needs machine=NAME or sizes=S1,S2,...")
        if any(size < 0 for size in self.sizes):
            raise error_at(
                op, f"tile-and-fuse: tile sizes must be positive (0: whole), got {list(self.sizes)}"
            )
        machine = load_machine(self.machine) if self.machine is not None else None
        for function in [f for f in op.walk() if isinstance(f, func.FuncOp)]:
            if function.is_declaration:
                continue
            check_static(function)
            block = function.body.block
            for group in collect_groups(block):
                tile_group(group, machine, self.sizes, self.cores)
            remove_dead(block)


__all__ = ["TileAndFusePass", "collect_groups", "segments"]
