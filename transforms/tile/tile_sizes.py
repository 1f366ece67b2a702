"""Tile sizes from a machine description, per op kind, for `tile-and-fuse` and the tuner: matrix-unit
tiles for contractions (`contraction_sizes`, `candidate_sizes`), vector tiles for the other groups
(`vector_sizes`), and the `tile.sizes` override (`apply_override`).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation

from ziggurat.dtypes import to_numpy_dtype
from ziggurat.ir.contraction import ContractionDims, contraction_dims
from ziggurat.machine import Machine
from ziggurat.transforms.tile.tiling_interface import linear_form, tiling_of


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def round_product(extents: dict[int, int], dims: list[int], multiple: int) -> dict[int, int]:
    """Round up some of `dims` so that their product is a multiple of `multiple`, padding least:
    7x8 to 8x8 and 7x7 to 8x8 (64 points, not the 112 of 7x16) for 16. On a tie, fewer dims
    padded, then the inner ones. Only dims longer than 1 grow (the innermost when all are 1):
    a unit dim is a batch or a tile's single row.

    Several dims may grow because the matrix instruction reads the dims of one role (a conv's
    output rows x cols) as one run (loop-to-npu regroups them): the padded box only has to
    fill whole instructions."""
    total = math.prod(extents[d] for d in dims)
    if total % multiple == 0:
        return {}
    grown = [d for d in dims if extents[d] > 1] or [max(dims)]
    fixed = total // math.prod(extents[d] for d in grown)
    return dict(zip(grown, _least_padded_box(tuple(extents[d] for d in grown), fixed, multiple)))


@functools.cache
def _least_padded_box(sizes: tuple[int, ...], fixed: int, multiple: int) -> tuple[int, ...]:
    """`sizes`, each rounded up by less than `multiple`, so that `fixed` times their product is a
    multiple of `multiple`, with the least product (ties as `round_product` breaks them)."""
    best: tuple | None = None
    for box in itertools.product(*(range(size, size + multiple) for size in sizes)):
        product = fixed * math.prod(box)
        if product % multiple == 0:
            padded = tuple(b != s for b, s in zip(box, sizes))
            rank = (product, sum(padded), padded)  # False < True: the outer dims kept first
            if best is None or rank < best[0]:
                best = (rank, box)
    assert best is not None  # every dim a multiple of `multiple` qualifies
    return best[1]


def _candidates(extent: int, unit: int) -> list[int]:
    """`unit` times powers of two up to `extent`, and `extent` itself."""
    sizes = {extent}
    size = unit
    while size <= extent:
        sizes.add(size)
        size *= 2
    return sorted(sizes)


def _element_bytes(op: Operation) -> tuple[int, int]:
    """(input element bytes, accumulator element bytes) of a contraction."""
    return (
        to_numpy_dtype(op.operands[0].type.get_element_type()).itemsize,
        to_numpy_dtype(op.results[0].type.get_element_type()).itemsize,
    )


def _staging_space(machine: Machine) -> str | None:
    """The local space the a operand passes through on its way from global memory."""
    a_space = machine.matrix.a_space
    for dma in machine.dmas.values():
        for src, dst in dma.paths:
            if dst == a_space and machine.memories[src].level != "global":
                return src
    return None


@dataclass(frozen=True)
class _Budget:
    a: int
    b: int
    c: int
    shared_ab: bool
    shared_abc: bool
    staging: int | None


def _budget(machine: Machine) -> _Budget:
    matrix, memories = machine.matrix, machine.memories
    staging = _staging_space(machine)
    return _Budget(
        memories[matrix.a_space].capacity,
        memories[matrix.b_space].capacity,
        memories[matrix.c_space].capacity,
        matrix.a_space == matrix.b_space,
        matrix.a_space == matrix.b_space == matrix.c_space,
        None if staging is None else memories[staging].capacity,
    )


def _fits(budget: _Budget, a: int, b: int, c: int, staged: int, c_copies: int) -> bool:
    """Whether a/b tiles of `a`/`b` bytes (double buffered), an accumulator of `c` bytes
    (`c_copies` times) and `staged` bytes in the staging space (double buffered) fit."""
    if budget.staging is not None and 2 * staged > budget.staging:
        return False
    if budget.shared_abc:
        return 2 * (a + b) + c_copies * c <= budget.a
    if budget.shared_ab:
        ab_fits = 2 * (a + b) <= budget.a
    else:
        ab_fits = 2 * a <= budget.a and 2 * b <= budget.b
    return ab_fits and c_copies * c <= budget.c


def _unit_shape(machine: Machine, op: Operation) -> tuple[int, int, int]:
    matrix = machine.matrix
    # A systolic array takes any shape but fills only in multiples of its rows/cols;
    # N and K tiles are contiguous runs of b and a in global memory, whose DMAs must
    # start aligned.
    aligned = machine.global_memory().alignment // _element_bytes(op)[0]
    granule = (matrix.rows or 1, max(matrix.cols or 1, aligned), aligned)
    try:
        in_dtype = str(to_numpy_dtype(op.operands[0].type.get_element_type()))
        acc_dtype = str(to_numpy_dtype(op.results[0].type.get_element_type()))
        shape = matrix.shape_for(in_dtype, acc_dtype)
    except (KeyError, TypeError, ValueError):
        shape = None
    return tuple(max(u, g) for u, g in zip(shape or (matrix.m, matrix.n, matrix.k), granule))


def _best(options):
    """A matmul's option with the largest output tile (the fewest operand bytes per MAC), then
    the most square, the longest K, the widest N."""
    return max(options, key=lambda o: (o["mn"], -o["traffic"], o["k"], o["n"]), default=None)


def _best_conv(options):
    """A convolution's option with the most multiply-accumulates per step (output tile x K tile),
    then the most square, the largest output tile, the widest N. Its output tile is bounded by
    whole rows and by its epilogue in the vector space, so the largest one tends to come with a
    K of 16 or 32 input channels: a step each, each paying DMA setups for the input tile's halo
    and every window point's weights."""
    return max(
        options, key=lambda o: (o["mn"] * o["rk"], -o["traffic"], o["mn"], o["n"]), default=None
    )


EPILOGUE_SHARE = 2
"""The heuristic's output tile fits 1/EPILOGUE_SHARE of the vector space with its epilogue. The
count is an upper bound (every operand of every fused op, at the op's widest element type) and
the half leaves room for loop-double-buffer's second slots: whatever the fusion, the heuristic's tiles
lower. `ziggurat-tune` also tries tiles whose epilogue takes the whole space (share 1), which
the lowering may refuse (the candidate is then discarded) and that are often faster."""


@dataclass(frozen=True)
class Limits:
    """The capacity rules a contraction's tile must keep beyond its operands fitting twice."""

    c_copies: int
    """Accumulators that must fit `c_space` at once (2: the next tile's beside the one draining)."""
    epilogue_bytes: int = 0
    """Bytes per output element of the vector ops fused after the contraction."""
    epilogue_share: int = EPILOGUE_SHARE
    """The output tile with its epilogue fits 1/epilogue_share of the vector space."""

    def epilogue_fits(self, machine: Machine, points: int) -> bool:
        """Whether an output tile of `points` elements fits its share of the vector space."""
        return (
            points * self.epilogue_bytes
            <= machine.memories[machine.vector.spaces[0]].capacity // self.epilogue_share
        )


def matmul_options(
    op: Operation, machine: Machine, roles: ContractionDims, extents: Sequence[int], limits: Limits
) -> list[dict]:
    """Every M/N/K tile (`{"m", "n", "k", ...}`) of a contraction with one M, N and K loop
    that fits the machine within `limits` (the candidates `matmul_sizes` chooses from, and
    `ziggurat-tune` searches)."""
    um, un, uk = _unit_shape(machine, op)
    in_bytes, acc_bytes = _element_bytes(op)
    budget = _budget(machine)
    m_extent, n_extent, k_extent = (
        math.prod(extents[d] for d in dims) for dims in (roles.m, roles.n, roles.k)
    )
    options = []
    for tm, tn, tk in itertools.product(
        _candidates(m_extent, um), _candidates(n_extent, un), _candidates(k_extent, uk)
    ):
        rm, rn, rk = _round_up(tm, um), _round_up(tn, un), _round_up(tk, uk)
        a, b, c = rm * rk * in_bytes, rk * rn * in_bytes, rm * rn * acc_bytes
        if _fits(budget, a, b, c, a + b, limits.c_copies) and limits.epilogue_fits(
            machine, tm * tn
        ):
            options.append({"m": tm, "n": tn, "k": tk, "mn": rm * rn, "traffic": rm + rn})
    return options


def matmul_roles(roles: ContractionDims, extents: Sequence[int]) -> ContractionDims:
    """`roles` with its unit M/N/K dims (but one where a role has only those: a GEMV's
    M of 1), and its M dims but the innermost, as batch dims (tiled 1): a matmul of a
    1x32x128 activation has M = (1, 32), which would leave it untiled; one of a 4x16x256
    activation takes a plane of 16 rows at a time, each a row-major tile for the matrix unit."""
    m, n, k = (
        tuple(d for d in dims if extents[d] != 1) or dims[-1:]
        for dims in (roles.m, roles.n, roles.k)
    )
    kept = {*m[-1:], *n, *k}
    moved = [d for d in roles.m + roles.n + roles.k if d not in kept]
    return ContractionDims(tuple(sorted({*roles.batch, *moved})), m[-1:], n, k, roles.window)


def matmul_sizes(
    op: Operation,
    machine: Machine,
    roles: ContractionDims,
    extents: Sequence[int],
    epilogue_bytes: int = 0,
) -> list[int]:
    """One size per loop of a matmul-like contraction (every loop batch, M, N or K); batch loops 1.

    M/N/K are multiples of the matrix unit's shape (N and K also of the global
    space's alignment in elements, so each tile's DMA starts aligned; or a whole
    dim), such that the a and b operand tiles fit `matrix.a_space`/`b_space` twice
    (double buffering), both fit their staging space (the local space the DMA
    chain from global memory passes before `a_space`) twice, and the accumulator
    fits `c_space`, twice if any tile allows it. With an epilogue (vector ops fused
    after the contraction) the output tile must also fit half the vector space
    with their operands (`EPILOGUE_SHARE`). Among those: the largest output tile,
    then the most square (least operand traffic), then the longest K, then the
    widest N.
    """
    roles = matmul_roles(roles, extents)
    sizes = list(extents)
    for d in roles.batch:
        sizes[d] = 1
    if len(roles.m) != 1 or len(roles.n) != 1 or len(roles.k) != 1:
        return sizes
    for c_copies in (2, 1):
        best = _best(matmul_options(op, machine, roles, extents, Limits(c_copies, epilogue_bytes)))
        if best is not None:
            sizes[roles.m[0]], sizes[roles.n[0]], sizes[roles.k[0]] = (
                best["m"],
                best["n"],
                best["k"],
            )
            return sizes
    return [1 if d in roles.m or d in roles.n else e for d, e in enumerate(extents)]


def _conv_base(roles: ContractionDims, extents: Sequence[int]) -> list[int]:
    """A conv's sizes before choosing: the outer output dims and the batch 1, the rest whole."""
    sizes = list(extents)
    for d in roles.m[:-2] + roles.batch:
        sizes[d] = 1
    return sizes


def slice_elements(forms: Sequence[dict[int, int]], box: Sequence[int]) -> int:
    """Elements of the box an indexing map reads over a domain tile of sizes `box`, the map's
    results given as `linear_form` coefficients: the size of `access_slice`'s tile, without
    building it (conv_options asks for every candidate tile of every conv)."""
    return math.prod(1 + sum(abs(c) * (box[d] - 1) for d, c in form.items()) for form in forms)


def conv_options(
    op: Operation, machine: Machine, roles: ContractionDims, extents: Sequence[int], limits: Limits
) -> list[dict]:
    """Every output-rows x output-channels x input-channels tile (`{"m": rows, "n", "k", ...}`)
    of a convolution (two or more M loops, one N and K) that fits the machine with its halo,
    within `limits` (what `conv_sizes` chooses from)."""
    um, un, uk = _unit_shape(machine, op)
    in_bytes, acc_bytes = _element_bytes(op)
    budget = _budget(machine)
    lhs_map = tiling_of(op).indexing_maps(op)[0]
    sizes = _conv_base(roles, extents)
    rows, cols = roles.m[-2], roles.m[-1]
    window = math.prod(extents[d] for d in roles.window)
    lhs_forms = [linear_form(result)[0] for result in lhs_map.results]

    @functools.cache  # the same for every N candidate
    def input_tile(r: int, tk: int) -> int:
        """Elements of the input tile with its halo."""
        box = list(sizes)
        box[rows], box[roles.k[0]] = r, tk
        return slice_elements(lhs_forms, box)

    options = []
    for r, tn, tk in itertools.product(
        range(1, extents[rows] + 1),
        _candidates(extents[roles.n[0]], un),
        _candidates(extents[roles.k[0]], uk),
    ):
        # what the buffers take is the spatial tile as loop-promote-to-memory-space pads it (9 rows of
        # 28 to 9 x 32); what the ranking counts is the points computed (the padding is waste)
        spatial = {0: r, 1: extents[cols]}
        spatial.update(round_product(spatial, [0, 1], um))
        padded = spatial[0] * spatial[1]
        rm, rn, rk = _round_up(r * extents[cols], um), _round_up(tn, un), _round_up(tk, uk)
        a, b, c = padded * rk * in_bytes, rk * rn * in_bytes, padded * rn * acc_bytes
        staged = (input_tile(r, tk) + tn * tk * window) * in_bytes
        points = r * extents[cols] * tn
        if _fits(budget, a, b, c, staged, limits.c_copies) and limits.epilogue_fits(
            machine, points
        ):
            options.append({"m": r, "n": tn, "k": tk, "mn": rm * rn, "rk": rk, "traffic": rm + rn})
    return options


def conv_sizes(
    op: Operation,
    machine: Machine,
    roles: ContractionDims,
    extents: Sequence[int],
    epilogue_bytes: int = 0,
) -> list[int]:
    """Output rows x output channels x input channels of a convolution; batch 1, output width and window whole.

    The input tile with its halo (counted as loop-promote-to-memory-space pads it) and
    the weight tile must fit the staging space twice. Among those: the most
    multiply-accumulates per step (output tile x K tile), then as for matmuls. When no tile
    keeps its epilogue within half the vector space, within all of it; when none does either
    (the count is an upper bound), the tile with the fewest output points whose operands fit:
    the smallest epilogue, which the lowering places or `tile.fit` shrinks further, rather than
    the whole layer, which could never fit.
    """
    if len(roles.n) != 1 or len(roles.k) != 1 or len(roles.m) < 2:
        return list(extents)
    sizes = _conv_base(roles, extents)
    rows = roles.m[-2]

    def chosen(option: dict) -> list[int]:
        sizes[rows], sizes[roles.n[0]], sizes[roles.k[0]] = option["m"], option["n"], option["k"]
        return sizes

    for share in (EPILOGUE_SHARE, 1):
        for c_copies in (2, 1):
            best = _best_conv(
                conv_options(op, machine, roles, extents, Limits(c_copies, epilogue_bytes, share))
            )
            if best is not None:
                return chosen(best)
    for c_copies in (2, 1):
        options = conv_options(op, machine, roles, extents, Limits(c_copies))
        if options:
            fewest = min(option["m"] * option["n"] for option in options)
            return chosen(_best_conv([o for o in options if o["m"] * o["n"] == fewest]))
    return sizes


def vector_sizes(
    extents: Sequence[int],
    whole: set[int],
    footprint: Callable[[Sequence[int]], int],
    machine: Machine,
    lane_bytes: int,
) -> list[int]:
    """Parallel tiles of a vector group: whole loops, shrunk from the outermost until the tile fits half
    the vector space; dims in `whole` stay whole.

    `footprint(sizes)` is the bytes a tile of `sizes` touches. The innermost loop
    stays a multiple of the lanes unless even one block of lanes does not fit
    (a reduction's producers hold its whole window per output element).
    """
    space = machine.memories[machine.vector.spaces[0]].capacity // 2
    lanes = machine.vector.lanes(lane_bytes)
    sizes = list(extents)

    def fits() -> bool:
        return footprint(sizes) <= space

    for d in range(len(sizes) - 1):
        while not fits() and d not in whole and sizes[d] > 1:
            sizes[d] = max(1, sizes[d] // 2)
    last = len(sizes) - 1
    if sizes and last not in whole:
        while not fits() and sizes[last] > lanes:
            sizes[last] = max(lanes, _round_up(sizes[last] // 2, lanes))
        while not fits() and sizes[last] > 1:
            sizes[last] = max(1, sizes[last] // 2)
    return sizes


def tile_count(extents: Sequence[int], sizes: Sequence[int], loops: Sequence[int]) -> int:
    """Tiles of `sizes` over `loops` (remainders count as tiles)."""
    return math.prod(-(-extents[d] // sizes[d]) for d in loops)


def _halve_until(
    extents: Sequence[int],
    sizes: Sequence[int],
    cores: int,
    order: Callable[[list[int]], list[int]],
    floors: dict[int, int],
    multiples: dict[int, int],
) -> list[int]:
    """`sizes` halved a loop at a time (`_halve_once`, the loops in `order(sizes)`) until the
    loops of `floors` make `cores` tiles or none can shrink."""
    sizes = list(sizes)
    while tile_count(extents, sizes, list(floors)) < cores:
        halved = _halve_once(sizes, order(sizes), floors, multiples)
        if halved is None:
            break
        sizes = halved
    return sizes


def spread_contraction(
    op: Operation,
    machine: Machine,
    extents: Sequence[int],
    sizes: Sequence[int],
    cores: int,
    epilogue_bytes: int = 0,
) -> list[int]:
    """The tile of a contraction whose layer runs fastest on `cores` cores by `CoreTime`:
    among every tile that fits (`conv_options`, `matmul_options`; with its accumulator once,
    charged its drain, or twice), the one-core tile, and that tile split by `halved_for_cores`.
    A layer whose weights outweigh its activations then splits its output channels among the
    cores, each core reading a slice of the weights once, where halving the longer side had
    kept several row tiles, each reading all of its channels' weights again (ResNet-50's 7x7
    3x3 convs on 32 cores: three row tiles)."""
    halved = halved_for_cores(op, machine, extents, sizes, cores)
    single = _option_sizes(op, machine, extents, epilogue_bytes, c_copies=1)
    double = {tuple(tile) for tile in _option_sizes(op, machine, extents, epilogue_bytes)}
    # a tile whose accumulator fits only once waits for it to drain before the next starts
    once = {tuple(tile) for tile in single} - double
    core_time = CoreTime(op, machine, extents, cores)

    def time(tile: list[int]) -> float:
        return core_time(tile, drains=tuple(tile) in once)

    return min([list(sizes), halved, *single], key=time)


def _option_sizes(
    op: Operation, machine: Machine, extents: Sequence[int], epilogue_bytes: int, c_copies: int = 2
) -> list[list[int]]:
    """Every tile that fits with `c_copies` accumulators in the matrix unit's output space, as
    sizes per loop; with one accumulator where none fits `c_copies`."""
    roles = contraction_dims(op)
    if roles.is_convolution:
        if len(roles.n) != 1 or len(roles.k) != 1 or len(roles.m) < 2:
            return []
        base, rows, options_of = _conv_base(roles, extents), roles.m[-2], conv_options
    else:
        roles = matmul_roles(roles, extents)
        if len(roles.m) != 1 or len(roles.n) != 1 or len(roles.k) != 1:
            return []
        base, rows, options_of = list(extents), roles.m[0], matmul_options
        for d in roles.batch:
            base[d] = 1
    for copies in sorted({c_copies, 1}, reverse=True):
        options = options_of(op, machine, roles, extents, Limits(copies, epilogue_bytes))
        if options:
            break
    tiles = []
    for option in options:
        tile = list(base)
        tile[rows], tile[roles.n[0]], tile[roles.k[0]] = option["m"], option["n"], option["k"]
        tiles.append(tile)
    return tiles


class CoreTime:
    """The cycles of the busiest core for each tile of one contraction on `cores` cores (a model
    for choosing, not a timing; `CoreTime(op, machine, extents, cores)(sizes)`): its tiles
    (ceil(tiles / cores)), each taking the longer of moving its operands from global memory (all
    of K: the input rows its output rows need, the weights of its output channels) at the core's
    share of the bandwidth and computing its multiply-accumulates, plus a DMA setup per K step (a
    conv's window taps are steps of their own), and, where its accumulator fits only once
    (`drains`), the time to drain it. What does not depend on the tile is worked out once."""

    def __init__(self, op: Operation, machine: Machine, extents: Sequence[int], cores: int):
        self.extents, self.cores = extents, cores
        roles = contraction_dims(op)
        self.parallel = [*roles.batch, *roles.m, *roles.n]
        self.whole = [*roles.k, *roles.window]
        self.k, self.window = roles.k, roles.window
        self.in_bytes, self.acc_bytes = _element_bytes(op)
        self.forms = [
            [linear_form(result)[0] for result in indexing_map.results]
            for indexing_map in tiling_of(op).indexing_maps(op)[:2]
        ]
        gm = machine.global_memory()
        loader = next((e for e in machine.dmas.values() if e.shared_bandwidth == gm.name), None)
        self.gm_bandwidth = gm.read_bytes_per_cycle
        self.loader_bandwidth = loader.bytes_per_cycle if loader is not None else None
        self.setup = loader.setup_latency if loader is not None else 0
        source = str(op.operands[0].type.get_element_type())
        self.peak = max(
            (rate for (given, _), rate in machine.matrix.dtypes.items() if given == source),
            default=0.0,
        )
        drain = next(
            (
                e
                for e in machine.dmas.values()
                if e.paths and e.paths[0][0] == machine.matrix.c_space
            ),
            None,
        )
        self.drain_bandwidth = drain.bytes_per_cycle if drain is not None else None

    def __call__(self, sizes: Sequence[int], drains: bool = False) -> float:
        extents = self.extents
        tiles = tile_count(extents, sizes, self.parallel)
        box = [min(s, e) for s, e in zip(sizes, extents)]
        for d in self.whole:
            box[d] = extents[d]
        moved = sum(slice_elements(forms, box) for forms in self.forms) * self.in_bytes
        bandwidth = self.gm_bandwidth / min(tiles, self.cores)
        if self.loader_bandwidth is not None:
            bandwidth = min(bandwidth, self.loader_bandwidth)
        points = math.prod(box[d] for d in self.parallel)
        macs = points * math.prod(extents[d] for d in self.whole)
        steps = math.prod(-(-extents[d] // max(1, sizes[d])) for d in self.k) * math.prod(
            extents[d] for d in self.window
        )
        compute = macs / self.peak if self.peak else 0.0
        per_tile = max(moved / bandwidth, compute) + 2 * self.setup * steps
        if drains and self.drain_bandwidth is not None:
            per_tile += points * self.acc_bytes / self.drain_bandwidth
        return -(-tiles // self.cores) * per_tile


def halved_for_cores(
    op: Operation, machine: Machine, extents: Sequence[int], sizes: Sequence[int], cores: int
) -> list[int]:
    """`sizes` with the contraction's output tile split until there are `cores` tiles, where the
    layer has that many (then a matmul's K grown into the room left, `_longest_k`):
    `loop-distribute` gives each core whole tiles, so a layer of fewer tiles
    leaves cores idle (ResNet-50's 14x14 layers took two tiles on davinci's 32 cores).

    Each split halves the output rows (M loops, outermost first, down to one) or the output
    channels (N, down to the matrix unit's N), whichever tile side is longer: every M tile reads
    all of B's N columns of its tile and every N tile all of A's rows, so the global traffic,
    K * (M * N-tiles + N * M-tiles), grows least by splitting the longer side (a late layer's
    weights are split among the cores rather than each core reading them all)."""
    roles = contraction_dims(op)
    _, unit_n, _ = _unit_shape(machine, op)
    rows, columns = [*roles.batch, *roles.m], list(roles.n)
    floors = {**{d: 1 for d in rows}, **{d: unit_n for d in columns}}

    def longer_side_first(sizes: list[int]) -> list[int]:
        sides = sorted((rows, columns), key=lambda side: -math.prod(sizes[d] for d in side))
        return [d for side in sides for d in side]

    spread = _halve_until(extents, sizes, cores, longer_side_first, floors, floors)
    if spread == list(sizes) or roles.is_convolution:
        return spread
    return _longest_k(op, machine, extents, spread)


def _longest_k(
    op: Operation, machine: Machine, extents: Sequence[int], sizes: list[int]
) -> list[int]:
    """`sizes` with a matmul's K tile grown to the longest that still fits beside its (split)
    output tile: the K tile was chosen for the output tile before the split, and a smaller output
    tile leaves room for more of K. A core's K loop then takes fewer, longer steps (a classifier
    GEMV split over 32 cores took 128 steps of K = 16, each a DMA of 1 KiB paying its latency)."""
    roles = matmul_roles(contraction_dims(op), extents)
    if len(roles.m) != 1 or len(roles.n) != 1 or len(roles.k) != 1:
        return sizes
    (m,), (n,), (k,) = roles.m, roles.n, roles.k
    um, un, uk = _unit_shape(machine, op)
    in_bytes, acc_bytes = _element_bytes(op)
    rm, rn = _round_up(sizes[m], um), _round_up(sizes[n], un)
    budget = _budget(machine)

    def fits(tk: int, c_copies: int) -> bool:
        rk = _round_up(tk, uk)
        a, b = rm * rk * in_bytes, rk * rn * in_bytes
        return _fits(budget, a, b, rm * rn * acc_bytes, a + b, c_copies)

    # as many accumulator copies as the split tile has room for (the epilogue does not depend on K)
    copies = 2 if fits(sizes[k], 2) else 1
    fitting = [tk for tk in _candidates(extents[k], uk) if tk >= sizes[k] and fits(tk, copies)]
    grown = list(sizes)
    grown[k] = max(fitting, default=sizes[k])
    return grown


def spread_vector(
    extents: Sequence[int], sizes: Sequence[int], whole: set[int], lanes: int, cores: int
) -> list[int]:
    """`vector_sizes`' tile split, as `spread_contraction`'s, until there are `cores` tiles where
    the group has that many: outer loops halve first, down to one; the innermost down to the
    lanes. Of the tiles on the way, the one whose busiest core has the fewest elements to do
    (its tiles, ceil(tiles / cores), times a tile's elements) is taken, the larger on a tie:
    48 channels on 32 cores take 24 tiles of 2, one per core, not 48 of 1, two on some cores,
    each paying its transfers' latency."""
    last = len(sizes) - 1
    loops = [d for d in range(len(sizes)) if d not in whole]
    floors = {d: min(lanes, extents[d]) if d == last else 1 for d in loops}
    multiples = {d: lanes if d == last else 1 for d in loops}
    steps = [list(sizes)]
    while tile_count(extents, steps[-1], loops) < cores:
        halved = _halve_once(steps[-1], loops, floors, multiples)
        if halved is None:
            break
        steps.append(halved)

    def busiest(tile: list[int]) -> tuple[int, int]:
        tiles = tile_count(extents, tile, loops)
        elements = math.prod(min(tile[d], extents[d]) for d in loops)
        return -(-tiles // cores) * elements, tiles

    return min(steps, key=busiest)


def _halve_once(
    sizes: Sequence[int],
    loops: list[int],
    floors: dict[int, int],
    multiples: dict[int, int],
) -> list[int] | None:
    """`sizes` with the first of `loops` above its floor halved (rounded up to its multiple, never
    below the floor); None when none can shrink."""
    d = next((d for d in loops if sizes[d] > floors[d]), None)
    if d is None:
        return None
    halved = list(sizes)
    halved[d] = max(floors[d], _round_up(-(-sizes[d] // 2), multiples[d]))
    return halved


def apply_override(extents: Sequence[int], override: Sequence[int]) -> list[int]:
    """`override` per loop (0 or missing: whole), clipped to the extents."""
    sizes = list(extents)
    for d, size in enumerate(list(override)[: len(extents)]):
        if size > 0:
            sizes[d] = min(size, extents[d])
    return sizes


def contraction_sizes(
    op: Operation, machine: Machine, extents: Sequence[int], epilogue_bytes: int = 0
) -> list[int]:
    """Matrix-unit tile sizes for a contraction's loops (conv or matmul-like), whose output
    tile also passes through the vector unit with `epilogue_bytes` per element."""
    roles = contraction_dims(op)
    if roles.is_convolution:
        return conv_sizes(op, machine, roles, extents, epilogue_bytes)
    return matmul_sizes(op, machine, roles, extents, epilogue_bytes)


def element_bytes(op: Operation) -> int:
    return max(
        (
            to_numpy_dtype(v.type.get_element_type()).itemsize
            for v in (*op.operands, *op.results)
            if isinstance(v.type, TensorType)
        ),
        default=4,
    )


__all__ = [
    "EPILOGUE_SHARE",
    "Limits",
    "apply_override",
    "contraction_sizes",
    "conv_options",
    "element_bytes",
    "matmul_options",
    "matmul_roles",
    "slice_elements",
    "vector_sizes",
]


def candidate_sizes(
    root: Operation, machine: Machine, epilogue: int = 0, cores: int = 1
) -> list[tuple[int, ...]]:
    """`tile.sizes` values for a matrix-unit root (default first), or [] when it has none to search;
    `epilogue` bytes per output element of the vector ops fused after it, as tile-and-fuse counts them.
    On `cores` cores the default is the heuristic's tile for that many (`spread_contraction`), and
    each tile that fits also comes split until the layer has a tile per core (`halved_for_cores`):
    the split is searched with the tile."""
    extents = [loop.extent for loop in tiling_of(root).domain(root)]
    roles = contraction_dims(root)
    roles = roles if roles.is_convolution else matmul_roles(roles, extents)
    if not roles.is_matrix_shaped:
        return []
    if roles.is_convolution and len(roles.m) >= 2:
        options_of, m_dim = conv_options, roles.m[-2]
    elif not roles.is_convolution and len(roles.m) == 1:
        options_of, m_dim = matmul_options, roles.m[0]
    else:
        return []
    base = contraction_sizes(root, machine, extents, epilogue)
    default = (
        spread_contraction(root, machine, extents, base, cores, epilogue) if cores > 1 else base
    )
    found = [tuple(default)]
    options: set[tuple[int, ...]] = set()
    # the heuristic's rules first, then tiles whose epilogue takes the whole vector space (which
    # the heuristic never risks: the lowering decides when they are measured)
    for c_copies, share in ((2, EPILOGUE_SHARE), (1, EPILOGUE_SHARE), (2, 1), (1, 1)):
        for option in options_of(root, machine, roles, extents, Limits(c_copies, epilogue, share)):
            sizes = list(base)
            sizes[m_dim], sizes[roles.n[0]], sizes[roles.k[0]] = (
                option["m"],
                option["n"],
                option["k"],
            )
            if tuple(sizes) in options:
                continue  # a later rule's copy of a tile: its split is the same
            options.add(tuple(sizes))
            split = halved_for_cores(root, machine, extents, sizes, cores) if cores > 1 else sizes
            for tile in (sizes, split):
                if tuple(tile) not in found:
                    found.append(tuple(tile))
    return found
