"""`tile.pack` and `tile.unpack` on numpy (`tile.bitcast` runs with the tensor level).

Packing pads each tiled dim up to whole tiles with the padding value, splits it
into (outer, tile), and moves the tiles innermost (in `inner_dims_pos` order)
after the outer dims (in `outer_dims_perm` order): one reshape and one
transpose. Unpacking is the inverse, then drops the padding.
"""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls

from ziggurat.dialects import tile
from ziggurat.dialects.tile import packed_shape
from ziggurat.interpreters.interpreter import scalar_value
from ziggurat.interpreters.tensor_interpreter import numpy_dtype


def _split_order(rank: int, positions, perm) -> tuple[list[int], list[int]]:
    """(the shape of each dim split into (outer, tile) as indices into the split array,
    the transpose that puts it in packed order)."""
    outer = list(perm) if perm is not None else list(range(rank))
    # In the split array, dim d is at 2d (outer) and 2d+1 (tile; size 1 if untiled).
    order = [2 * d for d in outer] + [2 * d + 1 for d in positions]
    untiled = [2 * d + 1 for d in range(rank) if d not in positions]
    return order, untiled


def pack(array: np.ndarray, positions, tiles, perm, padding) -> np.ndarray:
    shape = array.shape
    tile_of = dict(zip(positions, tiles))
    widths = [(0, -shape[d] % tile_of.get(d, 1)) for d in range(array.ndim)]
    padded = np.pad(array, widths, constant_values=padding) if any(w for _, w in widths) else array
    split = [
        size
        for d in range(array.ndim)
        for size in (padded.shape[d] // tile_of.get(d, 1), tile_of.get(d, 1))
    ]
    order, untiled = _split_order(array.ndim, positions, perm)
    result = np.transpose(padded.reshape(split), order + untiled)
    return result.reshape(packed_shape(shape, positions, tiles, perm)).copy()


def unpack(packed: np.ndarray, shape, positions, tiles, perm) -> np.ndarray:
    rank = len(shape)
    tile_of = dict(zip(positions, tiles))
    order, untiled = _split_order(rank, positions, perm)
    full = order + untiled
    sizes = [0] * (2 * rank)
    for d in range(rank):
        sizes[2 * d] = -(-shape[d] // tile_of.get(d, 1))
        sizes[2 * d + 1] = tile_of.get(d, 1)
    blocked = packed.reshape([sizes[i] for i in full])
    split = np.transpose(blocked, np.argsort(full))
    padded = split.reshape([sizes[2 * d] * sizes[2 * d + 1] for d in range(rank)])
    return padded[tuple(slice(0, n) for n in shape)].copy()


@register_impls
class TileFunctions(InterpreterFunctions):
    """tile.pack and tile.unpack."""

    @impl(tile.PackOp)
    def run_pack(self, interpreter: Interpreter, op: tile.PackOp, args: PythonValues):
        source = np.asarray(args[0])
        padding = scalar_value(args[2]) if len(args) > 2 else 0
        positions, tiles, perm = op.layout()
        result = pack(source, positions, tiles, perm, padding)
        return (result.astype(numpy_dtype(op.result.type), copy=False),)

    @impl(tile.UnpackOp)
    def run_unpack(self, interpreter: Interpreter, op: tile.UnpackOp, args: PythonValues):
        positions, tiles, perm = op.layout()
        shape = op.result.type.get_shape()
        return (unpack(np.asarray(args[0]), shape, positions, tiles, perm),)
