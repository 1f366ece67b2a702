"""`graph-fuse`: TVM-style operator fusion, grouping graph ops into `graph.fused` ops by their fusion
pattern kind; the groups are the units the lower levels tile, fuse and schedule together.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from ziggurat.dialects.graph import (
    ConstantOp,
    FusedOp,
    GraphOp,
    OpPatternKind,
    YieldOp,
    pattern_kind_of,
)

DEFAULT_MAX_OPS = 256


@dataclass(eq=False)
class Node:
    """An op of the dataflow graph, with its place in the post-dominator tree."""

    op: Operation
    index: int
    pattern: OpPatternKind
    outputs: list[tuple[Node, OpPatternKind]] = field(default_factory=list)
    extern_ref: bool = False
    ipdom: Node | None = None
    depth: int = 1
    path_pattern: OpPatternKind = OpPatternKind.ELEMWISE


def edge_pattern(user: Operation, operand: SSAValue) -> OpPatternKind:
    kind = pattern_kind_of(user)
    if (
        kind == OpPatternKind.BROADCAST
        and isinstance(operand.type, TensorType)
        and all(
            isinstance(r.type, TensorType) and r.type.get_shape() == operand.type.get_shape()
            for r in user.results
        )
    ):
        return OpPatternKind.ELEMWISE
    return kind


def build_graph(block: Block) -> list[Node]:
    nodes: dict[Operation, Node] = {}
    for op in block.ops:
        if isinstance(op, GraphOp) and not isinstance(op, ConstantOp):
            nodes[op] = Node(op, len(nodes), pattern_kind_of(op))
    for node in nodes.values():
        for result in node.op.results:
            for use in result.uses:
                user = nodes.get(use.operation)
                if user is None:
                    node.extern_ref = True
                else:
                    node.outputs.append((user, edge_pattern(use.operation, result)))
    return list(nodes.values())


def least_common_ancestor(node: Node) -> tuple[Node | None, OpPatternKind]:
    """The users' common post-dominator and the max pattern of the edges up to it."""
    pattern = OpPatternKind.ELEMWISE
    parent: Node | None = None
    for index, (user, kind) in enumerate(node.outputs):
        pattern = max(pattern, kind)
        if index == 0:
            parent = user
            continue
        lhs, rhs = parent, user
        while lhs is not rhs:
            if lhs is None or rhs is None:
                return None, pattern
            if lhs.depth < rhs.depth:
                pattern = max(pattern, rhs.path_pattern)
                rhs = rhs.ipdom
            elif rhs.depth < lhs.depth:
                pattern = max(pattern, lhs.path_pattern)
                lhs = lhs.ipdom
            else:
                pattern = max(pattern, lhs.path_pattern, rhs.path_pattern)
                lhs, rhs = lhs.ipdom, rhs.ipdom
        parent = lhs
    return parent, pattern


def build_post_dominators(nodes: list[Node]) -> None:
    for node in reversed(nodes):
        if node.extern_ref or not node.outputs:
            node.ipdom, node.depth, node.path_pattern = None, 1, OpPatternKind.OPAQUE
            continue
        node.ipdom, node.path_pattern = least_common_ancestor(node)
        node.depth = node.ipdom.depth + 1 if node.ipdom else 1


@dataclass(eq=False)
class Group:
    """A union-find set of nodes: the root holds the pattern and the size."""

    pattern: OpPatternKind
    parent: Group | None = None
    size: int = 1

    def find_root(self) -> Group:
        root = self
        while root.parent is not None:
            root = root.parent
        return root


class Fuser:
    """TVM's GraphPartitioner over one block's dataflow graph."""

    def __init__(self, nodes: list[Node], max_ops: int):
        self.nodes = nodes
        self.max_ops = max_ops
        self.groups = [Group(node.pattern) for node in nodes]

    def root_pattern(self, node: Node) -> OpPatternKind:
        return self.groups[node.index].find_root().pattern

    def check_path(
        self, src: Node, sink: Node, condition: Callable[[OpPatternKind, bool], bool]
    ) -> bool:
        """Whether every node on every path from src (excluded) to sink satisfies `condition`."""
        visited: set[int] = set()

        def visit(node: Node) -> bool:
            if node.index in visited:
                return True
            visited.add(node.index)
            if not condition(self.root_pattern(node), node is sink):
                return False
            return node is sink or all(visit(user) for user, _ in node.outputs)

        return all(visit(user) for user, _ in src.outputs)

    def nodes_on_paths(self, src: Node, sink: Node) -> list[Node]:
        """src and every node on a path from it to sink, sink excluded."""
        visited: dict[int, Node] = {}

        def visit(node: Node) -> None:
            if node is sink or node.index in visited:
                return
            visited[node.index] = node
            for user, _ in node.outputs:
                visit(user)

        visit(src)
        return list(visited.values())

    def merge(self, child: Group, parent: Group) -> None:
        child, parent = child.find_root(), parent.find_root()
        if child is parent:
            return
        parent.size += child.size
        child.parent = parent
        parent.pattern = max(parent.pattern, child.pattern)

    def commit(self, src: Node, sink: Node) -> bool:
        target = self.groups[sink.index].find_root()
        members = self.nodes_on_paths(src, sink)
        new = {
            id(self.groups[n.index].find_root()): self.groups[n.index].find_root() for n in members
        }
        new.pop(id(target), None)
        if target.size + sum(group.size for group in new.values()) > self.max_ops:
            return False
        for node in members:
            self.merge(self.groups[node.index], target)
        return True

    def run(self, phase: int) -> None:
        for node in self.nodes:
            # As in TVM, the node's own group record: its pattern is the node's
            # unless the node is a group's root, whose pattern covers the group.
            group = self.groups[node.index]
            sink = node.ipdom
            if group.pattern == OpPatternKind.OPAQUE or sink is None:
                continue
            if group.find_root() is self.groups[sink.index].find_root():
                continue
            if group.pattern == OpPatternKind.OUT_ELEMWISE_FUSABLE:
                if (
                    phase == 0
                    and node.path_pattern == OpPatternKind.ELEMWISE
                    and self.check_path(
                        node, sink, lambda kind, is_sink: kind <= OpPatternKind.BROADCAST
                    )
                ):
                    self.commit(node, sink)
            elif group.pattern <= OpPatternKind.BROADCAST:
                if (
                    node.path_pattern <= OpPatternKind.INJECTIVE
                    or node.path_pattern == OpPatternKind.REDUCE
                ):
                    if self.check_path(
                        node,
                        sink,
                        lambda kind, is_sink: (
                            kind != OpPatternKind.OPAQUE
                            if is_sink
                            else kind <= OpPatternKind.INJECTIVE
                        ),
                    ):
                        self.commit(node, sink)
            elif group.pattern == OpPatternKind.INJECTIVE:
                if phase == 1 and self.check_path(
                    node, sink, lambda kind, is_sink: kind <= OpPatternKind.INJECTIVE
                ):
                    self.commit(node, sink)

    def partition(self) -> list[list[Operation]]:
        """The groups of two or more ops, each in block order."""
        for phase in (0, 1):
            self.run(phase)
        members: dict[int, list[Operation]] = {}
        for node in self.nodes:
            members.setdefault(id(self.groups[node.index].find_root()), []).append(node.op)
        return [ops for ops in members.values() if len(ops) > 1]


def group_name(ops: list[Operation]) -> str:
    return "_".join(op.name.removeprefix("graph.") for op in ops)


def outline(ops: list[Operation]) -> FusedOp:
    """Replace `ops` (block order) by one `graph.fused` at the place of the last."""
    members = set(ops)
    inputs: list[SSAValue] = []
    for op in ops:
        for operand in op.operands:
            if operand.owner not in members and operand not in inputs:
                inputs.append(operand)
    outputs = [
        result
        for op in ops
        for result in op.results
        if any(use.operation not in members for use in result.uses)
    ]
    block = Block(arg_types=[value.type for value in inputs])
    mapping: dict[SSAValue, SSAValue] = dict(zip(inputs, block.args))
    for op in ops:
        block.add_op(op.clone(value_mapper=mapping))
    block.add_op(YieldOp(*(mapping[value] for value in outputs)))
    anchor = max(ops, key=pattern_kind_of)
    fused = FusedOp.create(
        operands=inputs,
        result_types=[value.type for value in outputs],
        properties={"group_name": StringAttr(group_name(ops)), "root": StringAttr(anchor.name)},
        regions=[Region(block)],
    )
    block_of_ops = ops[-1].parent_block()
    block_of_ops.insert_op_after(fused, ops[-1])
    for value, result in zip(outputs, fused.results):
        value.replace_all_uses_with(result)
    for op in reversed(ops):
        block_of_ops.erase_op(op)
    return fused


def sort_topologically(block: Block) -> None:
    """Reorder `block` so every op follows its operands' definitions, keeping the
    original order wherever it already does (a fused group sits where its last
    member was, which may come after users of its earlier members)."""
    ops = list(block.ops)
    position = {op: index for index, op in enumerate(ops)}
    waiting = {
        op: {operand.owner for operand in op.operands if operand.owner in position} for op in ops
    }
    users: dict[Operation, list[Operation]] = {op: [] for op in ops}
    for op, producers in waiting.items():
        for producer in producers:
            users[producer].append(op)
    ready = [position[op] for op, producers in waiting.items() if not producers]
    heapq.heapify(ready)
    order: list[Operation] = []
    while ready:
        op = ops[heapq.heappop(ready)]
        order.append(op)
        for user in users[op]:
            waiting[user].discard(op)
            if not waiting[user]:
                heapq.heappush(ready, position[user])
    for op in order:
        op.detach()
        block.add_op(op)


def fuse_block(block: Block, max_ops: int) -> None:
    nodes = build_graph(block)
    build_post_dominators(nodes)
    groups = Fuser(nodes, max_ops).partition()
    for ops in groups:
        outline(ops)
    if groups:
        sort_topologically(block)


@dataclass(frozen=True)
class GraphFusePass(ModulePass):
    """Group graph ops into `graph.fused` ops by their `OpPatternKind`.

    This is TVM's FuseOps (relay/transforms/fuse_ops.cc) on each function body.
    The dataflow graph has one node per graph op but `graph.constant` (constants
    enter groups as operands), in block order; an edge to each user is labelled
    with the user's pattern kind (a `BROADCAST` user whose operand already has the
    result's shape labels it `ELEMWISE`). An op used outside the graph ops of its
    block (`func.return`, another dialect) is externally referenced and has no
    post-dominator. Each node's immediate post-dominator `p` is the least common
    ancestor of its users, with the combined (max) edge pattern along the paths.
    Then, in phase 0 and phase 1, each node `n` whose `p` is not yet in n's group,
    neither of them `OPAQUE`:

    * `OUT_ELEMWISE_FUSABLE` (conv2d, matmul, gemm, pools), phase 0 only: fused
      up to `p` if the path pattern is `ELEMWISE` and every op on the paths, `p`
      included, is `ELEMWISE` or `BROADCAST` (bias add, batch norm, activation,
      residual add);
    * `ELEMWISE`/`BROADCAST`, both phases: fused up to `p` if the path pattern is
      at most `INJECTIVE` or is `REDUCE`, every op between is at most `INJECTIVE`
      and `p` is anything but `OPAQUE`;
    * `INJECTIVE`, phase 1 only (so that convolutions finish first): fused up to
      `p` if every op on the paths, `p` included, is at most `INJECTIVE`;
    * `REDUCE` absorbs producers but fuses into no consumer.

    A group's pattern is the max of its members'; checks on a path use the group's
    pattern. TVM's phase 2 (injective ops into tuples) has no counterpart: the
    dialect has no tuple ops. Each group of two or more ops becomes one
    `graph.fused` named after its members in order, with `root` the member of the
    highest pattern kind; a group of one stays a plain op. An op marked
    `graph.stop_fusion` is `OPAQUE` (TVM's `annotation.stop_fusion`).
    `graph-unfuse` is the inverse.

        %bias = graph.constant dense<0.5> : tensor<1x4x1x1xf32>
        %c = graph.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
        %a = graph.add %c, %bias : (tensor<1x4x6x6xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x6x6xf32>
        %r = graph.relu %a : tensor<1x4x6x6xf32>

    becomes

        %bias = graph.constant dense<0.5> : tensor<1x4x1x1xf32>
        %r = graph.fused "conv2d_add_relu"(%x, %w, %bias) {root = "graph.conv2d"}({
        ^bb0(%0: tensor<1x3x8x8xf32>, %1: tensor<4x3x3x3xf32>, %2: tensor<1x4x1x1xf32>):
          %c = graph.conv2d %0, %1 : ...
          %a = graph.add %c, %2 : ...
          %3 = graph.relu %a : tensor<1x4x6x6xf32>
          graph.yield %3 : tensor<1x4x6x6xf32>
        }) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x6x6xf32>

    Option `max-ops` (TVM's `max_fuse_depth`, default 256): a fusion that would give
    a group more ops than this is not made.
    """

    name = "graph-fuse"

    max_ops: int = DEFAULT_MAX_OPS
    """The most ops a fusion group may hold (TVM's max_fuse_depth)."""

    def __post_init__(self):
        if self.max_ops < 1:
            raise ValueError(f"max-ops must be >= 1, got {self.max_ops}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in op.walk():
            if isinstance(function, func.FuncOp):
                for block in function.body.blocks:
                    fuse_block(block, self.max_ops)
