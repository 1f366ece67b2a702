"""Which fusion groups run in NHWC: given each group's measured cycles in either layout and the cost of
the transposes where neighbours differ, a minimum cut over the function's groups.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp, TensorType, UnitAttr
from xdsl.ir import Operation, SSAValue

from ziggurat.dialects import graph
from ziggurat.dialects.tile import TUNE_ID_ATTR
from ziggurat.machine import load_machine
from ziggurat.testing.differential import apply_pipeline
from ziggurat.transforms.graph.layout import TO_TARGET, transposed_type
from ziggurat.tuning.space import (
    SPACE_VERSION,
    Group,
    functions_of,
    fused_with_marks,
    target_name,
)
from ziggurat.tuning.tuner import Choice, Measurement, Task, TuneCache, TuneOptions, run_tasks

TO_NHWC, TO_NCHW = TO_TARGET["NHWC"], TO_TARGET["NCHW"]
SOURCE, SINK = "nchw", "nhwc"


@dataclass(frozen=True)
class Transpose:
    """A transpose a change of layout may need: of a tensor of `type` by `perm`."""

    type: TensorType
    perm: tuple[int, ...]

    def key(self, machine_name: str) -> str:
        """Its tuning-cache key (a measured transpose is cached like a group)."""
        return f"v{SPACE_VERSION}|{machine_name}|transpose|{self.type}|{list(self.perm)}".replace(
            " ", ""
        )

    def module_text(self) -> str:
        """The transpose alone, as the graph-level `@main` the tuner measures."""
        result = transposed_type(self.type, self.perm)
        perm = ", ".join(map(str, self.perm))
        return (
            f"func.func @main(%x: {self.type}) -> {result} {{\n"
            f"  %y = graph.transpose %x {{perm = array<i64: {perm}>}} : {self.type} -> {result}\n"
            f"  func.return %y : {result}\n}}\n"
        )


@dataclass
class LayoutGraph:
    """The function's groups as nodes: `costs[node] = (NCHW cycles, NHWC cycles)` for a node that
    may change layout (keyed by its schedule target), the function's own transposes between the
    layouts (`transposes_in`, keyed by their op's index), and per ordered pair of nodes (either one
    may be SOURCE, the fixed NCHW ops) the transposes that a change between them needs."""

    costs: dict[int, tuple[float, float]]
    transposes_in: dict[int, Transpose]
    """A `graph.transpose` NHWC -> NCHW costs its cycles if what reads it stays NCHW, nothing if
    that is NHWC (it cancels with graph-layout's transpose back); one NCHW -> NHWC costs nothing
    if what it reads is NHWC. Its label is the layout of that side."""
    edges: dict[tuple[int | str, int | str], list[Transpose]]

    def transposes(self) -> set[Transpose]:
        return {t for ts in self.edges.values() for t in ts} | set(self.transposes_in.values())


def layout_graph(module: ModuleOp, costs: dict[int, tuple[float, float]]) -> LayoutGraph:
    """The groups of `module` (graph level, not fused) as `graph-fuse` forms them; `costs` by the
    index in `module.walk()` of the op that schedules a group (`space.Group.target`)."""
    edges: dict[tuple[int | str, int | str], list[Transpose]] = {}
    transposes_in: dict[int, Transpose] = {}
    for function in functions_of(fused_with_marks(module)):
        node_of: dict[Operation, int | str] = {}
        for op in function.body.block.ops:
            node_of[op] = next((i for i in _marks(op) if i in costs), SOURCE)
            perm = tuple(op.perm.get_values()) if isinstance(op, graph.TransposeOp) else None
            if perm in (TO_NCHW, TO_NHWC) and _is_activation(op.input):
                node_of[op] = op.attributes[TUNE_ID_ATTR].value.data
                transposes_in[node_of[op]] = Transpose(op.input.type, perm)
        for op in function.body.block.ops:
            consumer = node_of[op]
            if consumer in transposes_in and transposes_in[consumer].perm == TO_NCHW:
                continue  # its label is its result's layout: what it reads is the same either way
            for value in op.operands:
                if not _is_activation(value):
                    continue
                producer = (
                    node_of.get(value.owner, SOURCE)
                    if isinstance(value.owner, Operation)
                    else SOURCE
                )
                if producer in transposes_in and transposes_in[producer].perm == TO_NHWC:
                    producer = SOURCE  # its label is its operand's layout: its result is the same either way
                if producer == consumer:
                    continue
                nchw = value.type
                nhwc = transposed_type(nchw, TO_NHWC)
                # producer NCHW and consumer NHWC: transpose to NHWC; the other way: back
                edges.setdefault((producer, consumer), []).append(Transpose(nchw, TO_NHWC))
                edges.setdefault((consumer, producer), []).append(Transpose(nhwc, TO_NCHW))
    return LayoutGraph(costs, transposes_in, edges)


def _marks(op: Operation) -> list[int]:
    return [
        o.attributes[TUNE_ID_ATTR].value.data for o in op.walk() if TUNE_ID_ATTR in o.attributes
    ]


def _is_activation(value: SSAValue) -> bool:
    """A 4-D tensor computed at run time (a constant changes layout at compile time)."""
    if not isinstance(value.type, TensorType) or value.type.get_num_dims() != 4:
        return False
    return not isinstance(value.owner, graph.ConstantOp)


def choose_layouts(layouts: LayoutGraph, transpose_cycles: dict[Transpose, float]) -> set[int]:
    """The nodes that run in NHWC in a cheapest assignment; a transpose not measured
    (missing from `transpose_cycles`) is taken as infinitely costly.

    Choosing a layout per group is a two-label problem whose pairwise costs are
    paid only where labels differ, so a minimum s-t cut solves it exactly
    (Kolmogorov and Zabih, "What energy functions can be minimized via graph
    cuts?", 2004). The source side is NCHW, the sink side NHWC: a group's extra
    cost in NCHW is an edge to the sink, its extra cost in NHWC an edge from the
    source; a tensor from group u to group v is an edge u -> v weighing the NCHW ->
    NHWC transpose and v -> u the way back. The function's arguments and results
    (constants aside, which graph-layout permutes at compile time) and every op
    without an NHWC twin are fixed to the source. A tensor read by several groups
    of the other layout counts one transpose per reader, so the cut can only
    overestimate the cost of a change.
    """
    capacity: dict[int | str, dict[int | str, float]] = {SOURCE: {}, SINK: {}}

    def add(u, v, c: float) -> None:
        capacity.setdefault(u, {})
        capacity.setdefault(v, {})
        capacity[u][v] = capacity[u].get(v, 0.0) + c
        capacity[v].setdefault(u, 0.0)

    costs = dict(layouts.costs)
    costs.update(
        {
            node: (transpose_cycles.get(t, math.inf), 0.0)
            for node, t in layouts.transposes_in.items()
        }
    )
    for node, (nchw, nhwc) in costs.items():
        if nchw > nhwc:
            add(node, SINK, nchw - nhwc)
        else:
            add(SOURCE, node, nhwc - nchw)
    for (u, v), transposes in layouts.edges.items():
        if u == v or v == SOURCE:  # a change can only cut edges leaving the NCHW side
            continue
        add(u, v, sum(transpose_cycles.get(t, math.inf) for t in transposes))
    _max_flow(capacity)
    nchw_side = _reachable(capacity)
    return {node for node in layouts.costs if node not in nchw_side}


def _max_flow(residual: dict) -> None:
    """Edmonds-Karp: push flow from SOURCE to SINK along shortest augmenting paths, in place."""
    while True:
        parent = {SOURCE: None}
        queue = deque([SOURCE])
        while queue and SINK not in parent:
            u = queue.popleft()
            for v, c in residual[u].items():
                if c > 1e-9 and v not in parent:
                    parent[v] = u
                    queue.append(v)
        if SINK not in parent:
            return
        path, v = [], SINK
        while parent[v] is not None:
            path.append((parent[v], v))
            v = parent[v]
        pushed = min(residual[u][v] for u, v in path)  # finite: every edge into SINK is
        for u, v in path:
            residual[u][v] -= pushed
            residual[v][u] += pushed


def _reachable(residual: dict) -> set:
    seen, queue = {SOURCE}, deque([SOURCE])
    while queue:
        u = queue.popleft()
        for v, c in residual[u].items():
            if c > 1e-9 and v not in seen:
                seen.add(v)
                queue.append(v)
    return seen


def tune_layouts(
    module: ModuleOp,
    choices: Sequence[Choice],
    machine: str,
    options: TuneOptions,
    cache: TuneCache,
    on_measurement: Callable[[Group, Measurement], None] = lambda group, m: None,
) -> None:
    """Set `Choice.layout` to NHWC for the groups of `module` that run faster so, transposes
    included. Only when some group is faster in NHWC alone are the transposes measured (within
    `options.budget`, cached)."""
    costs = twin_costs(choices)
    if not any(nhwc < nchw for nchw, nhwc in costs.values()):
        return
    layouts = layout_graph(module, costs)
    machine_name = target_name(load_machine(machine), options.cores)
    cycles: dict[Transpose, float] = {}
    todo = []
    for transpose in sorted(layouts.transposes(), key=str):
        cached = cache.cycles_of(transpose.key(machine_name))
        if cached is not None:
            cycles[transpose] = cached
        else:
            todo.append(transpose)
    tasks = [
        Task(i, 0, t.module_text(), -1, None, machine, options.seed) for i, t in enumerate(todo)
    ]

    def record(m: Measurement) -> None:
        transpose = todo[m.group]
        on_measurement(transpose_group(transpose), m)
        if m.cycles is not None:
            cycles[transpose] = m.cycles
            cache.put_cycles(transpose.key(machine_name), "transpose", m.cycles)

    run_tasks(tasks, options, record)
    nhwc = choose_layouts(layouts, cycles)
    for choice in choices:
        if choice.group.target in nhwc:
            choice.layout = "NHWC"


def transpose_group(transpose: Transpose) -> Group:
    """A transpose as a `Group` for progress reports (nothing of it is searched)."""
    return Group(
        f"transpose {transpose.type}",
        -1,
        transpose.module_text(),
        "",
        (),
        (),
        ((),),
        (math.nan,),
        (False,),
    )


def convert_marked(module: ModuleOp) -> None:
    """Convert the spatial ops marked `tile.layout` (graph-layout{marked=true}) and make each
    transpose left between the layouts a group of its own (`graph.stop_fusion`), as
    `choose_layouts` costed it: fused into a neighbour, it would change a group whose schedule
    was measured without it. A transpose of a constant (a weight in the other layout) is folded
    at compile time, never left to run on the device."""
    apply_pipeline(module, "graph-layout{marked=true},graph-fold-constants")
    for op in module.walk():
        if isinstance(op, graph.TransposeOp) and tuple(op.perm.get_values()) in (TO_NHWC, TO_NCHW):
            op.attributes[graph.STOP_FUSION] = UnitAttr()


def twin_costs(choices: Sequence[Choice]) -> dict[int, tuple[float, float]]:
    """(NCHW, NHWC) cycles per schedule target, for the choices with both measured."""
    costs = {}
    for choice in choices:
        nchw = choice.cycles if choice.cycles is not None else choice.default_cycles
        if nchw is not None and choice.nhwc_cycles is not None:
            costs[choice.group.target] = (nchw, choice.nhwc_cycles)
    return costs


__all__ = [
    "LayoutGraph",
    "Transpose",
    "choose_layouts",
    "convert_marked",
    "layout_graph",
    "tune_layouts",
    "twin_costs",
]
