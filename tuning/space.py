"""The search space of `ziggurat-tune`: the fusion groups of a graph-level module that `lower-to-npu`
will tile, each as a module of its own with its tile-size candidates, the loop orders and the NHWC
twin the tuner also tries.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    ShapedType,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Operation, SSAValue

from ziggurat.context import default_context
from ziggurat.diagnostics import DiagnosticError, op_location
from ziggurat.dialects import graph
from ziggurat.dialects.tile import (
    BUFFERING_ATTR,
    GROUP_ATTR,
    INTERCHANGE_ATTR,
    SIZES_ATTR,
    STAGE_REDUCTION_ATTR,
    TUNE_ID_ATTR,
)
from ziggurat.dtypes import is_splat
from ziggurat.ir.contraction import contraction_dims, is_contraction
from ziggurat.lowering.kernels import (
    extract_group,
    is_group,
    printed,
    without_ids_and_locations,
)
from ziggurat.machine import Machine
from ziggurat.parsing import parse_source
from ziggurat.testing.differential import apply_pipeline
from ziggurat.transforms.graph.layout import TO_TARGET, transposed_type
from ziggurat.transforms.tile.tile_and_fuse import Group as TileGroup
from ziggurat.transforms.tile.tile_and_fuse import (
    analyze,
    collect_groups,
    epilogue_bytes,
    group_sizes,
)
from ziggurat.transforms.tile.tile_sizes import CoreTime, candidate_sizes, tile_count
from ziggurat.transforms.tile.tiling_interface import Tile, access_slice, tiling_of
from ziggurat.tuning.estimate import dma_chain, element_bytes_of, estimate_cycles

SPACE_VERSION = 10
"""Bump when the candidates or the lowering they are measured with change meaning: old cache entries are ignored."""


SMALL_CONSTANT = 64
"""Integer constants of at most this many elements (shapes), scalar and splat constants are copied
into an extracted group (`_copied_in`); other constants (weights, biases) become arguments, as they
live in global memory anyway, and their values would make a layer repeated in a model hash as a
different group."""


@dataclass(frozen=True)
class Group:
    name: str
    """The group's kind and the input line of its root (e.g. `matmul_relu:3`), for progress and reports."""
    target: int
    """The index in the input module's `walk()` of the graph op whose `tile.sizes` schedules the group."""
    module_text: str
    """The group alone as the graph-level function `@main`, marked with `TUNE_ID_ATTR` (see `schedule_group`)."""
    key: str
    """The cache key: `v<SPACE_VERSION>|<machine>|<op kinds>|<signature>|<hash of the IR>`."""
    loops: tuple[str, ...]
    """Per loop of the root's domain, its role: "m", "n", "k", "batch" or "window"; in a vector group,
    per loop of its last op, "parallel" or "reduction"."""
    extents: tuple[int, ...]
    candidates: tuple[tuple[int, ...], ...]
    """`tile.sizes` values: the default heuristic's first, then the others by their estimate."""
    estimates: tuple[float, ...]
    """`estimate.estimate_cycles` of each candidate (NaN in a vector group, which has no estimate)."""
    stageable: tuple[bool, ...]
    """Per candidate, whether staging its reduction can change it (`stages_reduction`)."""
    convertible: bool = False
    """Its schedule is on an NCHW conv or pool, the op graph-layout converts: it may have an NHWC twin."""
    nhwc: Group | None = None
    """The group in NHWC, operands and results included (`with_nhwc_twin`, only for a group that is
    searched); None when it is not convertible, or does not convert without transposes inside."""
    cores: int = 1
    """The cores its tiles are divided among (`lower-to-npu{cores=N}`), which its candidates and
    measurements are for."""


def _is_graph_op(op: Operation) -> bool:
    return op.name.startswith("graph.") and op.name not in ("graph.fused", "graph.yield")


def _extract(op: Operation) -> ModuleOp:
    """`op` (a top-level op of a function after graph-fuse) alone in `@main`: the producers of
    shapes, scalars and splats are copied in (`_copied_in`), every other operand is an argument."""
    return extract_group(op, _copied_in)


def _elements(value: SSAValue) -> int:
    return math.prod(value.type.get_shape()) if isinstance(value.type, ShapedType) else 1


def _copied_in(value: SSAValue) -> bool:
    """A constant an extracted group keeps: a scalar, a splat (graph-to-tile folds it into the
    ops that read it as a scalar, so as an argument it would tile and run differently from the
    group in its model: the light ResNet-50's biases), or a small integer tensor (a shape)."""
    producer = value.owner
    if not isinstance(producer, Operation) or producer.operands:
        return False
    if isinstance(producer, graph.ConstantOp) and is_splat(producer.value):
        return True
    elements = _elements(value)
    element = value.type.get_element_type() if isinstance(value.type, ShapedType) else value.type
    return (
        elements == 1
        or elements <= SMALL_CONSTANT
        and isinstance(element, (IntegerType, IndexType))
    )


def _roles_by_loop(op: Operation) -> tuple[str, ...]:
    roles = contraction_dims(op)
    by_loop = {}
    for role in ("batch", "m", "n", "k", "window"):
        for d in getattr(roles, role):
            by_loop[d] = role
    return tuple(by_loop[d] for d in range(len(by_loop)))


def _alternating_occupancy(
    ranked: list[tuple[int, ...]], loops: Sequence[str], extents: Sequence[int], cores: int
) -> list[tuple[int, ...]]:
    """`ranked` (best estimate first) reordered to take in turn the best tile that gives every one
    of `cores` cores a tile and the best that leaves some idle. The estimate on several cores
    (`CoreTime`) weighs the operands each tile reads again against the cores left idle
    only roughly, so the measurements the budget allows cover both sides of the split."""
    parallel = [d for d, role in enumerate(loops) if role in ("batch", "m", "n")]
    full = [c for c in ranked if tile_count(extents, c, parallel) >= cores]
    partial = [c for c in ranked if tile_count(extents, c, parallel) < cores]
    alternated = []
    for pair in itertools.zip_longest(full, partial):
        alternated.extend(c for c in pair if c is not None)
    return alternated


def target_name(machine: Machine, cores: int = 1) -> str:
    """What a schedule is tuned for, in cache keys: the machine's name, and `xN` on N cores
    (`davinci x32`); one core's keys are the machine's name alone, as before cores were searched."""
    return machine.name if cores == 1 else f"{machine.name} x{cores}"


def _cache_key(machine: Machine, extracted: ModuleOp, text: str, cores: int = 1) -> str:
    kinds = "+".join(op.name.removeprefix("graph.") for op in extracted.walk() if _is_graph_op(op))
    function = next(op for op in extracted.walk() if isinstance(op, func.FuncOp))
    signature = str(function.function_type).replace(" ", "")
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    return f"v{SPACE_VERSION}|{target_name(machine, cores)}|{kinds}|{signature}|{digest}"


def _without_ids_and_locations(module: ModuleOp) -> str:
    """The IR a cache key hashes: the same group anywhere in any model prints the same."""
    return without_ids_and_locations(module, drop=(TUNE_ID_ATTR,))


def tunable_groups(module: ModuleOp, machine: Machine, cores: int = 1) -> list[Group]:
    """The groups of `module` (graph level) with a schedule to search on `cores` cores, in
    program order.

    The groups are those `lower-to-npu` makes (`graph-fuse`, `graph-to-tile`, then
    `tile-and-fuse`'s own grouping) whose schedule comes from one graph op. A
    contraction's candidates are every M/N/K tile (for a convolution: output rows,
    output channels, input channels) that `tile_sizes.matmul_options`/`conv_options`
    accept, with the fused epilogue in half the vector space as the heuristic has
    it (`EPILOGUE_SHARE`) or in the whole, where the lowering may refuse one; a
    vector group's are the heuristic's sizes and its outermost tiled loop's tile 2
    to 16 times as large and half (`vector_candidates`). The heuristic's own choice
    comes first. A group whose schedule is on an NCHW conv or pool is `convertible`
    and gets its NHWC twin when searched (`with_nhwc_twin`). On several cores the heuristic's
    tile is its tile for that many, and the candidates include the tiles split among them
    (`candidate_sizes`, `vector_candidates`).
    """
    groups = []
    for function in functions_of(fused_with_marks(module)):
        for op in list(function.body.block.ops):
            if is_group(op):
                try:
                    extracted = _extract(op)
                    found = _groups_of(extracted, machine, cores)
                except DiagnosticError:
                    continue  # a group that does not lower alone keeps the heuristic
                if len(found) == 1 and _is_nchw_spatial(_target_op(extracted, found[0].target)):
                    # graph-layout converts the op that carries the schedule, so it must be the conv or pool
                    found = [replace(found[0], convertible=True)]
                groups.extend(found)
    return groups


def fused_with_marks(module: ModuleOp) -> ModuleOp:
    """A copy of `module` with each graph op marked `TUNE_ID_ATTR` (its index in `module.walk()`), then
    fused as `lower-to-npu` fuses it: its top-level ops are the groups."""
    tagged = module.clone()
    for index, op in enumerate(tagged.walk()):
        if _is_graph_op(op):
            op.attributes[TUNE_ID_ATTR] = IntegerAttr(index, 64)
    apply_pipeline(tagged, "graph-fuse")
    return tagged


def functions_of(module: ModuleOp) -> list[func.FuncOp]:
    return [f for f in module.walk() if isinstance(f, func.FuncOp) and not f.is_declaration]


def _target_op(extracted: ModuleOp, target: int) -> Operation | None:
    marked = (op for op in extracted.walk() if TUNE_ID_ATTR in op.attributes)
    return next((op for op in marked if op.attributes[TUNE_ID_ATTR].value.data == target), None)


def _is_nchw_spatial(op: Operation | None) -> bool:
    return (
        isinstance(op, graph.Conv2dOp | graph.Pool2dOp) and graph.layout_of(op.properties) == "NCHW"
    )


def with_nhwc_twin(group: Group, machine: Machine) -> Group:
    """`group` with its NHWC twin (`Group.nhwc`) if it is convertible. The tuner builds twins only
    for the groups it measures: a cached group needs none, and building one lowers it again."""
    if not group.convertible or group.nhwc is not None:
        return group
    extracted = parse_source(default_context(), group.module_text, f"<group {group.name}>")
    return replace(group, nhwc=nhwc_group(extracted, machine, group.cores))


def nhwc_group(extracted: ModuleOp, machine: Machine, cores: int = 1) -> Group | None:
    """The group of `extracted` (one group, see `_extract`) in NHWC: its 4-D arguments and
    results permuted to NHWC (weights to OHWI), its convs and pools converted by graph-layout,
    which cancels the transposes between; None if a transpose is left inside, or if it is not one
    group with a schedule to search."""
    module = extracted.clone()
    apply_pipeline(module, "graph-unfuse")
    function = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    block = function.body.block
    to_nhwc, to_nchw = TO_TARGET["NHWC"], TO_TARGET["NCHW"]
    for index, argument in enumerate(list(block.args)):
        if isinstance(argument.type, TensorType) and argument.type.get_num_dims() == 4:
            permuted = block.insert_arg(transposed_type(argument.type, to_nhwc), index)
            back = graph.TransposeOp.build_inferred(
                [permuted], {"perm": graph.int_array(list(to_nchw))}
            )
            block.insert_op_before(back, block.first_op)
            argument.replace_all_uses_with(back.output)
            block.erase_arg(argument)
    ret = block.last_op
    for index, value in enumerate(list(ret.operands)):
        if isinstance(value.type, TensorType) and value.type.get_num_dims() == 4:
            out = graph.TransposeOp.build_inferred(
                [value], {"perm": graph.int_array(list(to_nhwc))}
            )
            block.insert_op_before(out, ret)
            ret.operands[index] = out.output
    function.update_function_type()
    try:
        apply_pipeline(module, "graph-layout{layout=NHWC},graph-fuse")
        if any(isinstance(op, graph.TransposeOp) for op in module.walk()):
            return None  # the group does not run in NHWC on its own
        found = _groups_of(module, machine, cores)
    except DiagnosticError:
        return None
    return found[0] if len(found) == 1 else None


def nhwc_sizes(group: Group, sizes: Sequence[int] | None) -> tuple[int, ...] | None:
    """`sizes` (of `group`, NCHW) for the loops of `group.nhwc`: a contraction's loops matched by
    role, in order (n, oh, ow are M loops in both; o is N; c is K; kh, kw the window); a vector
    group's four parallel loops (its output's dims) by the permutation NCHW -> NHWC. None (the
    twin's heuristic) for the heuristic's own schedule or loops that do not match."""
    twin = group.nhwc
    if twin is None or sizes is None or len(twin.loops) != len(group.loops):
        return None
    if group.loops == ("parallel",) * 4 and twin.loops == group.loops:
        return tuple(sizes[d] for d in (0, 2, 3, 1))
    mapped = [0] * len(sizes)
    for role in set(group.loops):
        ours = [d for d, r in enumerate(group.loops) if r == role]
        theirs = [d for d, r in enumerate(twin.loops) if r == role]
        if len(ours) != len(theirs) or role in ("parallel", "reduction"):
            return None
        for d, t in zip(ours, theirs):
            mapped[t] = sizes[d]
    return tuple(mapped)


def _line(op: Operation) -> str:
    location = op_location(op)
    return "" if location is None else f":{location.line.data}"


def _groups_of(extracted: ModuleOp, machine: Machine, cores: int = 1) -> list[Group]:
    module_text = printed(extracted)
    key = _cache_key(machine, extracted, _without_ids_and_locations(extracted), cores)
    lowered = extracted.clone()
    apply_pipeline(lowered, "graph-to-tile")
    function = next(op for op in lowered.walk() if isinstance(op, func.FuncOp))
    found = []
    groups = collect_groups(function.body.block)
    # the graph op whose `tile.sizes` each group reads: its contraction root's, else its last op's
    scheduled = [
        group.anchor if group.anchor is not None and is_contraction(group.anchor) else group.last
        for group in groups
    ]
    marks = [
        op.attributes[TUNE_ID_ATTR].value.data if TUNE_ID_ATTR in op.attributes else None
        for op in scheduled
    ]
    for group, root, mark in zip(groups, scheduled, marks):
        if mark is None or marks.count(mark) > 1:
            continue  # not from one graph op alone: one tile.sizes would schedule two groups
        if root is group.last and root is not group.anchor:
            loops = tuple(
                "reduction" if loop.reduction else "parallel"
                for loop in tiling_of(root).domain(root)
            )
            ranked = vector_candidates(group, machine, cores)
            estimates = tuple(math.nan for _ in ranked)
            stageable = tuple(False for _ in ranked)
        else:
            loops = _roles_by_loop(root)
            extents = [loop.extent for loop in tiling_of(root).domain(root)]
            candidates = candidate_sizes(root, machine, epilogue_bytes(group), cores)
            estimate = _estimator(root, machine, extents, cores)
            by_sizes = {sizes: estimate(sizes) for sizes in candidates}
            ranked = candidates[:1] + sorted(candidates[1:], key=by_sizes.__getitem__)
            if cores > 1:
                ranked = ranked[:1] + _alternating_occupancy(ranked[1:], loops, extents, cores)
            estimates = tuple(by_sizes[sizes] for sizes in ranked)
            stageable = tuple(_stageable(root, machine, sizes) for sizes in ranked)
        if len(ranked) < 2:
            continue
        group_name = (
            root.attributes[GROUP_ATTR].data if GROUP_ATTR in root.attributes else root.name
        )
        name = group_name.removesuffix("_0") + _line(root)  # where its root is in the input
        found.append(
            Group(
                name=name,
                target=mark,
                module_text=module_text,
                key=key if len(found) == 0 else f"{key}#{len(found)}",
                loops=loops,
                extents=tuple(loop.extent for loop in tiling_of(root).domain(root)),
                candidates=tuple(ranked),
                estimates=estimates,
                stageable=stageable,
                cores=cores,
            )
        )
    return found


VECTOR_SCALES = (2, 4, 8, 16)
"""The multiples of the heuristic's tile that `vector_candidates` offers, largest tiles last."""


def vector_candidates(group: TileGroup, machine: Machine, cores: int = 1) -> list[tuple[int, ...]]:
    """`tile.sizes` values for a group without a matrix-unit root (per loop of its last op), the
    heuristic's first: its outermost tiled loop's tile 2, 4, 8 and 16 times as large (up to the
    extent), then half as large. The heuristic fits every operand slice into half the vector
    space at the widest element type, an upper bound the lowering often stays well within (a
    max pool's window points share one staging buffer); the lowering refuses what does not fit.
    On `cores` cores the heuristic's tile is its tile split for them (`spread_vector`)."""
    default = tuple(group_sizes(group, analyze(group), machine, [], cores).outer)
    extents = [loop.extent for loop in tiling_of(group.last).domain(group.last)]
    tiled = next(
        (d for d, (size, extent) in enumerate(zip(default, extents)) if size < extent), None
    )
    if tiled is None:
        return [default]
    found = [default]
    for scale in (*VECTOR_SCALES, 0.5):
        size = min(extents[tiled], max(1, int(default[tiled] * scale)))
        sizes = tuple(size if d == tiled else s for d, s in enumerate(default))
        if sizes not in found and (
            scale > 1 or tiled < len(extents) - 1
        ):  # the innermost tile stays whole lanes
            found.append(sizes)
    return found


def _estimator(
    root: Operation, machine: Machine, extents: Sequence[int], cores: int
) -> Callable[[tuple[int, ...]], float]:
    """The cycles of `root` tiled by given sizes: one core's by `estimate_cycles`; on several, the
    busiest core's by one `CoreTime` of the root (what does not depend on the tile worked out
    once); infinite for a dtype pair or route the machine lacks (the lowering will say)."""
    try:
        model = (
            CoreTime(root, machine, extents, cores)
            if cores > 1
            else partial(estimate_cycles, root, machine)
        )
    except (KeyError, ValueError):
        return lambda sizes: math.inf

    def estimate(sizes: tuple[int, ...]) -> float:
        try:
            return model(sizes)
        except (KeyError, ValueError):
            return math.inf

    return estimate


def set_sizes(op: Operation, sizes: Sequence[int]) -> None:
    op.attributes[SIZES_ATTR] = DenseArrayBase.from_list(i64, list(sizes))


def set_buffering(op: Operation, depth: int) -> None:
    op.attributes[BUFFERING_ATTR] = IntegerAttr(depth, i64)


def set_interchange(op: Operation, loops: Sequence[int]) -> None:
    op.attributes[INTERCHANGE_ATTR] = DenseArrayBase.from_list(i64, list(loops))


def set_stage_reduction(op: Operation) -> None:
    op.attributes[STAGE_REDUCTION_ATTR] = UnitAttr()


def stages_reduction(group: Group, candidate: int) -> bool:
    """Whether staging the reduction (`tile.stage_reduction`) can change candidate `candidate` of
    `group`: it tiles its reduction (K) loop, and the slices of all its steps of one operand fit
    half the space they are staged in (`_stageable`)."""
    return group.stageable[candidate]


def _stageable(root: Operation, machine: Machine, sizes: Sequence[int]) -> bool:
    """Whether `root` tiled with `sizes` tiles its reduction, and one of its operands' slices over
    the whole reduction fits half of its first local space (where loop-stage-reduction puts them; with
    less, the staged buffer could not be double-buffered there, or would not fit at all)."""
    impl = tiling_of(root)
    extents = [loop.extent for loop in impl.domain(root)]
    roles = contraction_dims(root)
    if not any(0 < sizes[d] < extents[d] for d in roles.k):
        return False
    box = [
        extents[d] if d in roles.k or d in roles.window else sizes[d] for d in range(len(extents))
    ]
    global_space = machine.global_memory().name
    for operand, indexing, space in zip(
        root.operands, impl.indexing_maps(root), (machine.matrix.a_space, machine.matrix.b_space)
    ):
        steps = dma_chain(machine, global_space, space)
        if indexing is None or not isinstance(operand.type, ShapedType) or not steps:
            continue
        elements = math.prod(access_slice(indexing, Tile.whole(box))[0].sizes)
        if elements * element_bytes_of(operand) <= machine.memories[steps[0][1]].capacity // 2:
            return True
    return False


def loop_orders(group: Group, sizes: Sequence[int] | None) -> list[tuple[int, ...]]:
    """The `tile.interchange` values other than tile-and-fuse's own order for the root tiled with
    `sizes` (None: the heuristic's): every order of its parallel loops that `sizes` tiles (batch,
    M and N loops smaller than their extent), outermost first; [] when fewer than two are tiled."""
    sizes = group.candidates[0] if sizes is None else sizes
    tiled = [
        d
        for d, role in enumerate(group.loops)
        if role in ("batch", "m", "n") and 0 < sizes[d] < group.extents[d]
    ]
    return [order for order in itertools.permutations(tiled) if list(order) != tiled]


def schedule_group(
    extracted: ModuleOp,
    target: int,
    sizes: Sequence[int] | None,
    buffering: int | None = None,
    interchange: Sequence[int] | None = None,
    stage: bool = False,
) -> None:
    """In a `Group.module_text` module: give the group's root `tile.sizes = sizes` (None: keep
    the heuristic), `tile.buffering = buffering` (None: loop-double-buffer's depth),
    `tile.interchange = interchange` (None: tile-and-fuse's order) and, with `stage`,
    `tile.stage_reduction`; and drop the marks, so the module lowers as the tuned input would."""
    for op in extracted.walk():
        mark = op.attributes.pop(TUNE_ID_ATTR, None)
        if mark is None or mark.value.data != target:
            continue
        if sizes is not None:
            set_sizes(op, sizes)
        if buffering is not None:
            set_buffering(op, buffering)
        if interchange is not None:
            set_interchange(op, interchange)
        if stage:
            set_stage_reduction(op)


__all__ = [
    "SPACE_VERSION",
    "Group",
    "candidate_sizes",
    "functions_of",
    "fused_with_marks",
    "loop_orders",
    "nhwc_group",
    "nhwc_sizes",
    "with_nhwc_twin",
    "schedule_group",
    "stages_reduction",
    "set_buffering",
    "set_interchange",
    "set_stage_reduction",
    "set_sizes",
    "target_name",
    "tunable_groups",
]
