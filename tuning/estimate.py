"""The analytic cost of a tile schedule, which `ziggurat-tune` uses to rank candidates before measuring
them: good enough to rank tiles, not to replace the interpreter's timing, which confirms the best.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

from xdsl.ir import Operation

from ziggurat.interpreters.timing import dma_cycles, mma_cycles
from ziggurat.ir.contraction import contraction_dims
from ziggurat.machine import Machine
from ziggurat.transforms.loop.memory_routes import hops, route
from ziggurat.transforms.loop.staging import ping_pongs
from ziggurat.transforms.tile.tiling_interface import Tile, access_slice, tiling_of


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def _dtype_name(value) -> str:
    return str(value.type.get_element_type())


def element_bytes_of(value) -> int:
    """Bytes per element of a shaped value (at least one: an i1 takes a byte)."""
    return max(1, value.type.get_element_type().bitwidth // 8)


def dma_chain(machine: Machine, source: str, destination: str):
    """The DMA hops (source, destination, engine) from one space to another; [] when none connects them."""
    chain = route(machine, source, destination)
    return hops(machine, chain) if chain is not None else []


def estimate_cycles(root: Operation, machine: Machine, sizes: Sequence[int]) -> float:
    """Cycles of `root` (a matrix-unit contraction, the root of a group) tiled with `sizes`.

    It models what `lower-to-npu` makes of the root: for each step of the tile
    loops, the operand tiles travel along their DMA chains from global memory
    (`memory_routes.hops`; a convolution's input tile with its halo, one transfer
    per window point past the staging space), the matrix unit runs one
    instruction per window point, and each output tile goes back from `c_space`.
    Each transfer costs what the timing model charges (`timing.dma_cycles`,
    `timing.mma_cycles`), summed per pipe. Pipes overlap (double buffering), so
    the estimate is the busiest pipe's sum plus the first step's loads and the
    last tile's store; a convolution's window points overlap like the steps
    unless a tile fits its space only once. The scalar unit, flags and the vector
    epilogue are ignored.
    """
    roles = contraction_dims(root)
    extents = [loop.extent for loop in tiling_of(root).domain(root)]
    lhs, out = root.operands[0], root.results[0]
    in_dtype, acc_dtype = _dtype_name(lhs), _dtype_name(out)
    in_bytes, acc_bytes = element_bytes_of(lhs), element_bytes_of(out)
    matrix = machine.matrix
    um, un, uk = matrix.instruction_shape(in_dtype, acc_dtype)

    def tile(dims: list[int]) -> int:
        """Elements of an average tile over `dims` (a remainder tile is smaller than `sizes`)."""
        return math.ceil(math.prod(extents[d] / math.ceil(extents[d] / sizes[d]) for d in dims))

    def count(dims: list[int]) -> int:
        return math.prod(math.ceil(extents[d] / sizes[d]) for d in dims)

    outer, inner = count(roles.batch + roles.m + roles.n), count(roles.k)
    window = math.prod(extents[d] for d in roles.window)
    rm, rn, rk = (
        _round_up(tile(roles.m), um),
        _round_up(tile(roles.n), un),
        _round_up(tile(roles.k), uk),
    )
    box = [extents[d] if d in roles.window else sizes[d] for d in range(len(extents))]
    a_global = (
        math.prod(access_slice(tiling_of(root).indexing_maps(root)[0], Tile.whole(box))[0].sizes)
        * in_bytes
    )
    b_global = tile(roles.k) * tile(roles.n) * window * in_bytes

    steps = outer * inner
    busy: dict[str, float] = defaultdict(float)
    fill = 0.0
    point = mma_cycles(
        machine, rm, rn, rk, in_dtype, acc_dtype
    )  # one window point: its loads and its mma
    busy[matrix.pipe] += steps * window * point
    for space, first_bytes, local_bytes in (
        (matrix.a_space, a_global, rm * rk * in_bytes),
        (matrix.b_space, b_global, rk * rn * in_bytes),
    ):
        for position, (src, dst, engine) in enumerate(
            dma_chain(machine, machine.global_memory().name, space)
        ):
            if position == 0:
                one = dma_cycles(machine, engine, src, dst, first_bytes, first_bytes)
            else:
                one = dma_cycles(machine, engine, src, dst, local_bytes, local_bytes)
                point += one
                one *= window
            busy[engine.pipe] += steps * one
            fill += one
    ping_pong = ping_pongs(machine, matrix.a_space, rm * rk * in_bytes) and ping_pongs(
        machine, matrix.b_space, rk * rn * in_bytes
    )
    if window > 1 and not ping_pong:
        # tile-decompose-conv unrolls the window within one iteration; loop-promote-to-memory-space
        # gives the points two buffers per operand in turn where they fit, else one: then a
        # point's load waits for the previous mma
        busy["window points"] = steps * window * point
    store = 0.0
    for src, dst, engine in dma_chain(machine, matrix.c_space, machine.global_memory().name):
        one = dma_cycles(machine, engine, src, dst, rm * rn * acc_bytes, rm * rn * acc_bytes)
        busy[engine.pipe] += outer * one
        store += one
    return max(busy.values()) + fill + store


__all__ = ["dma_chain", "element_bytes_of", "estimate_cycles"]
