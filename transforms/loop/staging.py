"""Staging buffers and the DMA copies through them, shared by `loop-promote-to-memory-space` and
`loop-legalize-copies`: routes that report a missing path at the op, the pool of local
buffers that the ops of a block take in turn, and the copy + wait pair each hop is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import FloatAttr, MemRefType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, Operation, SSAValue

from ziggurat.diagnostics import error_at
from ziggurat.dialects.loop import CopyAsyncOp, CopyOp, WaitOp
from ziggurat.machine import DmaEngine, Machine
from ziggurat.transforms.loop.buffers import TopAllocs, byte_size, contiguous
from ziggurat.transforms.loop.memory_routes import describe_paths, route
from ziggurat.transforms.tile.fit import does_not_fit


def static_shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, MemRefType)
    return tuple(value.type.get_shape())


def engine_can(engine: DmaEngine, copy: CopyOp | CopyAsyncOp) -> bool:
    """Whether `engine` does `copy` in one go: it pads if the copy pads, casts if it casts."""
    pads = any(p for pair in copy.padding() for p in pair)
    casts = copy.source.type.element_type != copy.destination.type.element_type
    return (engine.pad or not pads) and (engine.cast or not casts)


def aligned(machine: Machine, view: SSAValue, space: str) -> bool:
    """Whether a view starts at a static offset that `space`'s alignment allows (units need it; DMAs do not)."""
    offset = view.type.get_offset()
    element_bytes = (view.type.element_type.bitwidth + 7) // 8
    return offset is not None and offset * element_bytes % machine.memories[space].alignment == 0


def ping_pongs(machine: Machine, space: str, tile_bytes: int) -> bool:
    """Whether consecutive ops of a block (a convolution's window points, the unrolled steps of
    a reduction) get two staging buffers of `tile_bytes` in `space`, used in turn, rather than
    one: in the matrix unit's operand spaces, where tile sizes leave room for two of each tile,
    so the DMA loading one op's operand overlaps the instruction reading the previous op's."""
    unit = machine.matrix
    return (
        space in (unit.a_space, unit.b_space) and 2 * tile_bytes <= machine.memories[space].capacity
    )


def checked_route(
    machine: Machine, op: Operation, source: str, destination: str, what: str
) -> tuple[str, ...]:
    """`route` from `source` to `destination`; an error at `op` about `what` when there is none."""
    if source not in machine.memories:
        raise error_at(
            op,
            f"{what} is in memory space '{source}', which machine '{machine.name}' does not have "
            f"(spaces: {', '.join(machine.memories)})",
        )
    chain = route(machine, source, destination)
    if chain is None:
        raise error_at(
            op,
            f"no DMA route from '{source}' to '{destination}' on machine '{machine.name}' for {what} "
            f"(paths: {describe_paths(machine)})",
        )
    return chain


def copy_route(machine: Machine, copy: Operation, source: str, destination: str) -> tuple[str, ...]:
    """The route between two spaces, or out of a space and back into it (through the nearest space)."""
    if source != destination:
        return checked_route(machine, copy, source, destination, "the copy")
    bounces = [
        there + back[1:]
        for space in machine.memories
        if space != source
        and (there := route(machine, source, space)) is not None
        and (back := route(machine, space, source)) is not None
    ]
    if not bounces:
        raise error_at(copy, f"no DMA route out of '{source}' and back on machine '{machine.name}'")
    return min(bounces, key=len)


def async_copy(
    source: SSAValue,
    destination: SSAValue,
    pad: Sequence[int] | None = None,
    pad_value: FloatAttr | None = None,
) -> tuple[CopyAsyncOp, WaitOp]:
    """A `loop.copy_async` and the `loop.wait` on it; the padding only where some is nonzero."""
    padded = pad is not None and any(pad)
    copy = CopyAsyncOp(
        source,
        destination,
        pad=list(pad) if padded else None,
        pad_value=pad_value.value.data if padded and pad_value is not None else None,
    )
    return copy, WaitOp(copy.token)


def check_fits(machine: Machine, op: Operation, what: str, memref_type: MemRefType) -> None:
    """An error at `op` (that tile-and-fuse's fitting reads) when `memref_type` is larger than its space."""
    space = memref_type.memory_space.data
    capacity = machine.memories[space].capacity
    if byte_size(memref_type) > capacity:
        raise does_not_fit(
            op,
            f"{what}, {memref_type} ({byte_size(memref_type)} bytes), does not fit "
            f"'{space}' ({capacity} bytes) on machine '{machine.name}'",
            space,
            byte_size(memref_type),
            capacity,
            memref_type.get_shape(),
        )


@dataclass
class StagingBuffers:
    """The staging buffers of one function: pools by type, block, owner (a fusion group, or a
    program copy whose pieces share them) and whether ops take two in turn, shared by the ops
    of a block one after the other (each op's copies and compute are done before the next
    op's start), and the buffers of the op being staged, which it does not share."""

    machine: Machine
    func: FuncOp
    pools: dict[
        tuple[MemRefType, Block | None, Attribute | Operation | None, bool], list[SSAValue]
    ] = field(default_factory=dict)
    busy: set[SSAValue] = field(default_factory=set)
    top: TopAllocs = field(init=False)
    """Where new buffers go: after the allocs at the top of `func`."""

    def __post_init__(self) -> None:
        self.top = TopAllocs(self.func)

    def start(self) -> None:
        """Begin staging the next op: every buffer of the pools is free again."""
        self.busy = set()

    def take(
        self,
        op: Operation,
        what: str,
        element_type: Attribute,
        shape: Sequence[int],
        space: str,
        owner: Attribute | Operation | None,
        alternate: bool = False,
    ) -> SSAValue:
        """A staging buffer for `op`: one of an earlier op's in the same block and of the same
        owner when one of the type is free, else a new alloc; with `alternate` (a weight
        tile's first hop) or in the matrix unit's operand spaces (`ping_pongs`), consecutive
        ops take two in turn, so that one op's load overlaps the previous op's use. Not
        across owners: a buffer shared by two layers lives from the first to the last, across
        the layers between, and npu-plan-memory cannot reuse its bytes there."""
        memref_type = contiguous(element_type, shape, space)
        check_fits(self.machine, op, f"the buffer for {what}", memref_type)
        pool = self.pools.setdefault((memref_type, op.parent_block(), owner, alternate), [])
        free = [b for b in pool if b not in self.busy]
        two = alternate or ping_pongs(self.machine, space, byte_size(memref_type))
        if free and not (len(pool) == 1 and two):
            buffer = free[0]
            pool.remove(buffer)  # least recently used first: consecutive ops alternate
        else:
            buffer = self.top.alloc(memref_type, op.location)
        pool.append(buffer)
        self.busy.add(buffer)
        return buffer

    def forget(self, buffer: SSAValue) -> None:
        """Share `buffer` no more (later ops read what it holds)."""
        for pool in self.pools.values():
            if buffer in pool:
                pool.remove(buffer)


__all__ = [
    "StagingBuffers",
    "aligned",
    "async_copy",
    "check_fits",
    "checked_route",
    "copy_route",
    "engine_can",
    "ping_pongs",
    "static_shape",
]
