"""tile-and-fuse and the tiling interface: numerics against the graph interpreter,
loop structure, tile sizes from the machines."""

from __future__ import annotations

import pytest
from xdsl.dialects import func, scf, tensor
from xdsl.dialects.linalg import ops as linalg

from ziggurat.context import default_context
from ziggurat.diagnostics import DiagnosticError
from ziggurat.machine import load_machine
from ziggurat.parsing import parse_source
from ziggurat.testing.differential import check_pass_preserves_numerics

MACHINES = ["davinci", "systolic", "tensorcore"]

KERNELS = {
    "ragged_matmul": """
    func.func @main(%a: tensor<100x300xf16>, %b: tensor<300x77xf16>) -> tensor<100x77xf16> {
      %y = graph.matmul %a, %b : (tensor<100x300xf16>, tensor<300x77xf16>) -> tensor<100x77xf16>
      func.return %y : tensor<100x77xf16>
    }""",
    "conv3x3": """
    func.func @main(%x: tensor<1x16x20x20xf16>, %w: tensor<32x16x3x3xf16>) -> tensor<1x32x20x20xf16> {
      %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x20x20xf16>, tensor<32x16x3x3xf16>) -> tensor<1x32x20x20xf16>
      func.return %y : tensor<1x32x20x20xf16>
    }""",
    "conv1x1": """
    func.func @main(%x: tensor<2x64x14x14xf16>, %w: tensor<48x64x1x1xf16>) -> tensor<2x48x14x14xf16> {
      %y = graph.conv2d %x, %w : (tensor<2x64x14x14xf16>, tensor<48x64x1x1xf16>) -> tensor<2x48x14x14xf16>
      func.return %y : tensor<2x48x14x14xf16>
    }""",
    "depthwise": """
    func.func @main(%x: tensor<1x32x40x40xf16>, %w: tensor<32x1x3x3xf16>) -> tensor<1x32x40x40xf16> {
      %y = graph.conv2d %x, %w {groups = 32 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x40x40xf16>, tensor<32x1x3x3xf16>) -> tensor<1x32x40x40xf16>
      func.return %y : tensor<1x32x40x40xf16>
    }""",
    "strided_conv": """
    func.func @main(%x: tensor<1x16x23x23xf16>, %w: tensor<32x16x3x3xf16>) -> tensor<1x32x11x11xf16> {
      %y = graph.conv2d %x, %w {strides = array<i64: 2, 2>} : (tensor<1x16x23x23xf16>, tensor<32x16x3x3xf16>) -> tensor<1x32x11x11xf16>
      func.return %y : tensor<1x32x11x11xf16>
    }""",
    "conv_bias_relu_add": """
    func.func @main(%x: tensor<1x32x24x24xf16>, %w: tensor<32x32x3x3xf16>, %b: tensor<32xf16>) -> tensor<1x32x24x24xf16> {
      %c = graph.conv2d %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x32x24x24xf16>, tensor<32x32x3x3xf16>, tensor<32xf16>) -> tensor<1x32x24x24xf16>
      %r = graph.relu %c : tensor<1x32x24x24xf16>
      %y = graph.add %r, %x : (tensor<1x32x24x24xf16>, tensor<1x32x24x24xf16>) -> tensor<1x32x24x24xf16>
      func.return %y : tensor<1x32x24x24xf16>
    }""",
    "softmax": """
    func.func @main(%x: tensor<256x300xf16>) -> tensor<256x300xf16> {
      %y = graph.softmax %x : tensor<256x300xf16>
      func.return %y : tensor<256x300xf16>
    }""",
    "layer_norm": """
    func.func @main(%x: tensor<4x128x256xf16>, %g: tensor<256xf16>, %b: tensor<256xf16>) -> tensor<4x128x256xf16> {
      %y = graph.layer_norm %x, %g, %b {axis = -1 : i64} : (tensor<4x128x256xf16>, tensor<256xf16>, tensor<256xf16>) -> tensor<4x128x256xf16>
      func.return %y : tensor<4x128x256xf16>
    }""",
    "attention": """
    func.func @main(%q: tensor<128x64xf16>, %k: tensor<64x128xf16>, %v: tensor<128x64xf16>) -> tensor<128x64xf16> {
      %s = graph.matmul %q, %k : (tensor<128x64xf16>, tensor<64x128xf16>) -> tensor<128x128xf16>
      %scale = graph.constant dense<0.125> : tensor<f16>
      %z = graph.mul %s, %scale : (tensor<128x128xf16>, tensor<f16>) -> tensor<128x128xf16>
      %p = graph.softmax %z : tensor<128x128xf16>
      %o = graph.matmul %p, %v : (tensor<128x128xf16>, tensor<128x64xf16>) -> tensor<128x64xf16>
      func.return %o : tensor<128x64xf16>
    }""",
}

PIPELINE = "graph-fuse,graph-to-tile,tile-and-fuse{{machine={machine}}}"


def loops_of(module) -> list[scf.ForOp]:
    return [op for op in module.walk() if isinstance(op, scf.ForOp)]


@pytest.mark.parametrize("machine", MACHINES)
@pytest.mark.parametrize("name", list(KERNELS))
def test_tiled_kernel_keeps_the_numerics(name, machine):
    report = check_pass_preserves_numerics(KERNELS[name], PIPELINE.format(machine=machine))
    assert report.ok, report


# --------------------------------------------------------------------------- #
# Forced tile sizes: every kernel is tiled, its numerics kept
# --------------------------------------------------------------------------- #

SIZED = {
    # f32: linalg.matmul with its fill; K 300 = 4 x 64 + 44, M 100 = 3 x 32 + 4.
    "f32_ragged_matmul": (
        """
    func.func @main(%a: tensor<100x300xf32>, %b: tensor<300x77xf32>) -> tensor<100x77xf32> {
      %y = graph.matmul %a, %b : (tensor<100x300xf32>, tensor<300x77xf32>) -> tensor<100x77xf32>
      func.return %y : tensor<100x77xf32>
    }""",
        "32,77,64",
    ),
    # f32: tensor.pad + linalg.conv_2d_nchw_fchw + the bias generic.
    "f32_conv_bias": (
        """
    func.func @main(%x: tensor<1x8x12x12xf32>, %w: tensor<16x8x3x3xf32>, %b: tensor<16xf32>) -> tensor<1x16x12x12xf32> {
      %y = graph.conv2d %x, %w, %b {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x12x12xf32>, tensor<16x8x3x3xf32>, tensor<16xf32>) -> tensor<1x16x12x12xf32>
      func.return %y : tensor<1x16x12x12xf32>
    }""",
        "1,8,5,12,4,3,3",
    ),
    "strided_dilated_conv": (
        """
    func.func @main(%x: tensor<1x4x17x17xf16>, %w: tensor<6x4x3x3xf16>) -> tensor<1x6x8x8xf16> {
      %y = graph.conv2d %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x17x17xf16>, tensor<6x4x3x3xf16>) -> tensor<1x6x8x8xf16>
      func.return %y : tensor<1x6x8x8xf16>
    }""",
        "1,2,3,8,2,3,3",
    ),
    # A pad of 3 with rows of 2: the tiles between the peeled first and last would
    # still need padding, so they slice the whole pad, computed outside the loop.
    "wide_pad_conv": (
        """
    func.func @main(%x: tensor<1x2x12x12xf32>, %w: tensor<4x2x7x7xf32>) -> tensor<1x4x12x12xf32> {
      %y = graph.conv2d %x, %w {pads = array<i64: 3, 3, 3, 3>} : (tensor<1x2x12x12xf32>, tensor<4x2x7x7xf32>) -> tensor<1x4x12x12xf32>
      func.return %y : tensor<1x4x12x12xf32>
    }""",
        "1,4,2,12",
    ),
    # linalg.index in the body (cumsum's triangle, arg_max's positions) moves with the tile.
    "cumsum": (
        """
    func.func @main(%x: tensor<6x40xf32>) -> tensor<6x40xf32> {
      %y = graph.cumsum %x {axis = 1 : i64} : tensor<6x40xf32> -> tensor<6x40xf32>
      func.return %y : tensor<6x40xf32>
    }""",
        "4,16",
    ),
    "arg_max": (
        """
    func.func @main(%x: tensor<12x9xf32>) -> tensor<12xi64> {
      %y = graph.arg_max %x {axis = 1 : i64, keepdims = false} : tensor<12x9xf32> -> tensor<12xi64>
      func.return %y : tensor<12xi64>
    }""",
        "5",
    ),
    "transpose_broadcast_add": (
        """
    func.func @main(%x: tensor<24x10xf32>, %b: tensor<24xf32>) -> tensor<10x24xf32> {
      %t = graph.transpose %x {perm = array<i64: 1, 0>} : tensor<24x10xf32> -> tensor<10x24xf32>
      %y = graph.add %t, %b : (tensor<10x24xf32>, tensor<24xf32>) -> tensor<10x24xf32>
      %r = graph.tanh %y : tensor<10x24xf32>
      func.return %r : tensor<10x24xf32>
    }""",
        "4,8",
    ),
    # A negative step reads through `d2 * -2 + 19`: each tile's slice is shifted.
    "reversed_slice": (
        """
    func.func @main(%x: tensor<2x3x20xf32>) -> tensor<2x3x10xf32> {
      %y = graph.slice %x {starts = array<i64: -1>, ends = array<i64: -9223372036854775808>, axes = array<i64: 2>, steps = array<i64: -2>} : tensor<2x3x20xf32> -> tensor<2x3x10xf32>
      %r = graph.exp %y : tensor<2x3x10xf32>
      func.return %r : tensor<2x3x10xf32>
    }""",
        "1,2,4",
    ),
    "softmax_rows": (
        """
    func.func @main(%x: tensor<10x33xf32>) -> tensor<10x33xf32> {
      %y = graph.softmax %x : tensor<10x33xf32>
      func.return %y : tensor<10x33xf32>
    }""",
        "3,8",
    ),
}


@pytest.mark.parametrize("name", list(SIZED))
def test_forced_tiles_keep_the_numerics(name):
    text, sizes = SIZED[name]
    report = check_pass_preserves_numerics(
        text, f"graph-fuse,graph-to-tile,tile-and-fuse{{sizes={sizes}}}"
    )
    assert report.ok, report
    assert any(isinstance(op, tensor.InsertSliceOp) for op in report.transformed.walk())


def lowered(text: str, options: str):
    report = check_pass_preserves_numerics(
        text, f"graph-fuse,graph-to-tile,tile-and-fuse{{{options}}}"
    )
    assert report.ok, report
    return report.transformed


def static_bounds(loop: scf.ForOp) -> tuple[int, int, int]:
    return tuple(v.owner.value.value.data for v in (loop.lb, loop.ub, loop.step))


def test_remainder_tiles_are_straight_line_code():
    module = lowered(SIZED["f32_ragged_matmul"][0], "sizes=32,77,64")
    assert sorted(static_bounds(loop) for loop in loops_of(module)) == [
        (0, 96, 32),
        (0, 256, 64),
        (0, 256, 64),
    ]
    inserts = [op for op in module.walk() if isinstance(op, tensor.InsertSliceOp)]
    assert [
        (list(op.static_offsets.get_values()), list(op.static_sizes.get_values())) for op in inserts
    ][-1] == (
        [96, 0],
        [4, 77],
    )
    matmuls = [
        op.results[0].type.get_shape() for op in module.walk() if isinstance(op, linalg.MatmulOp)
    ]
    assert set(matmuls) == {(32, 77), (4, 77)}


def test_pad_is_fused_only_with_static_amounts():
    module = lowered(SIZED["f32_conv_bias"][0], "sizes=1,8,5,12,4,3,3")
    for pad in (op for op in module.walk() if isinstance(op, tensor.PadOp)):
        assert pad.source.type.get_shape()[2] < 12
    module = lowered(SIZED["wide_pad_conv"][0], "sizes=1,4,2,12")
    pads = [op for op in module.walk() if isinstance(op, tensor.PadOp)]
    assert not any(isinstance(pad.parent_op(), scf.ForOp) for pad in pads)
    assert (1, 2, 18, 18) in [pad.result.type.get_shape() for pad in pads]


def test_one_iteration_loops_are_not_emitted():
    module = lowered(SIZED["f32_ragged_matmul"][0], "sizes=100,77,300")
    assert not loops_of(module)
    assert not any(isinstance(op, tensor.InsertSliceOp) for op in module.walk())


def test_softmax_tiles_rows_and_keeps_the_reduced_dim_whole():
    module = lowered(SIZED["softmax_rows"][0], "sizes=3,8")
    assert [static_bounds(loop) for loop in loops_of(module)] == [(0, 9, 3)]
    shapes = {
        op.results[0].type.get_shape() for op in module.walk() if isinstance(op, linalg.GenericOp)
    }
    assert shapes == {(3, 33), (3,), (1, 33), (1,)}


def test_tile_sizes_attribute_wins_over_the_option():
    text = """
    func.func @main(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>) -> tensor<64x48xf32> {
      %y = graph.matmul %a, %b {tile.sizes = array<i64: 16, 0, 0>} : (tensor<64x32xf32>, tensor<32x48xf32>) -> tensor<64x48xf32>
      func.return %y : tensor<64x48xf32>
    }"""
    module = lowered(text, "sizes=32,16,8")
    assert [static_bounds(loop) for loop in loops_of(module)] == [(0, 64, 16)]


@pytest.mark.parametrize("interchange", [None, "2, 1"])
def test_interchange_nests_the_tile_loops_in_its_order(interchange):
    """A conv + relu tiled rows x output channels, the rows in three segments (the first and last
    tiles peeled for the halo, the middle ones a loop): by default each segment is nested in a
    channels' loop; `tile.interchange = [2, 1]` puts the segments outside, a channels' loop in
    each. The numerics stay (`lowered` checks them), the inner reduction loop included."""
    attribute = "" if interchange is None else f", tile.interchange = array<i64: {interchange}>"
    text = f"""
    func.func @main(%x: tensor<1x16x20x20xf32>, %w: tensor<48x16x3x3xf32>) -> tensor<1x48x20x20xf32> {{
      %y = graph.conv2d %x, %w {{pads = array<i64: 1, 1, 1, 1>, tile.sizes = array<i64: 1, 16, 4, 20, 8, 3, 3>{attribute}}} : (tensor<1x16x20x20xf32>, tensor<48x16x3x3xf32>) -> tensor<1x48x20x20xf32>
      %r = graph.relu %y : tensor<1x48x20x20xf32>
      func.return %r : tensor<1x48x20x20xf32>
    }}"""
    module = lowered(text, "sizes=1")
    outermost = [
        static_bounds(loop)
        for loop in loops_of(module)
        if isinstance(loop.parent_op(), func.FuncOp)
    ]
    channels, rows = (0, 48, 16), (4, 16, 4)
    assert outermost == ([channels] * 3 if interchange is None else [channels, rows, channels])


def test_options_are_required():
    module = parse_source(default_context(), KERNELS["softmax"], "<test>")
    from ziggurat.transforms.tile.tile_and_fuse import TileAndFusePass

    with pytest.raises(DiagnosticError, match="needs machine=NAME or sizes="):
        TileAndFusePass().apply(default_context(), module)


# --------------------------------------------------------------------------- #
# Tile sizes from the machines
# --------------------------------------------------------------------------- #


def contraction_of(text: str):
    from ziggurat.ir.contraction import is_contraction

    report = check_pass_preserves_numerics(text, "graph-to-tile")
    return next(op for op in report.transformed.walk() if is_contraction(op))


GEMM_F16 = """
    func.func @main(%a: tensor<1024x1024xf16>, %b: tensor<1024x1024xf16>) -> tensor<1024x1024xf16> {
      %y = graph.matmul %a, %b : (tensor<1024x1024xf16>, tensor<1024x1024xf16>) -> tensor<1024x1024xf16>
      func.return %y : tensor<1024x1024xf16>
    }"""


@pytest.mark.parametrize(
    "extents, multiple, padded",
    [
        (
            {0: 7, 1: 7},
            16,
            {0: 8, 1: 8},
        ),  # a conv tile's 7x7 output points: 64, not the 112 of 7x16
        ({0: 7, 1: 8}, 16, {0: 8, 1: 8}),
        ({0: 3, 1: 7}, 16, {0: 4, 1: 8}),
        ({0: 6, 1: 6}, 16, {0: 6, 1: 8}),  # a tie: the inner dim grows
        ({0: 1, 1: 7}, 16, {0: 1, 1: 16}),  # a unit dim (a tile's single row) stays
        ({0: 1, 1: 1}, 16, {0: 1, 1: 16}),  # all unit: the innermost grows
        ({0: 9, 1: 28}, 16, {0: 9, 1: 32}),
        ({0: 4, 1: 28}, 16, {0: 4, 1: 28}),  # already whole instructions
        ({0: 7, 1: 7}, 32, {0: 8, 1: 8}),
    ],
)
def test_round_product_pads_the_least(extents, multiple, padded):
    from ziggurat.transforms.tile.tile_sizes import round_product

    result = dict(extents)
    result.update(round_product(extents, sorted(extents), multiple))
    assert result == padded


def test_round_product_is_the_smallest_padded_box():
    """Against every box of two dims, each padded by less than the multiple."""
    import itertools

    from ziggurat.transforms.tile.tile_sizes import round_product

    for a, b, multiple in itertools.product(range(1, 21), range(1, 21), (8, 16)):
        result = {0: a, 1: b}
        result.update(round_product({0: a, 1: b}, [0, 1], multiple))
        product = result[0] * result[1]
        assert product % multiple == 0 and result[0] >= a and result[1] >= b
        smallest = min(
            x * y
            for x, y in itertools.product(range(a, a + multiple), range(b, b + multiple))
            # only dims longer than 1 grow, the inner one when both are 1
            if x * y % multiple == 0 and (x == a or a > 1) and (y == b or b > 1 or a == 1)
        )
        assert product == smallest, (a, b, multiple)


def test_gemm_tiles_on_davinci_fill_l0_twice():
    from xdsl.parser import Parser

    from ziggurat.ir.contraction import is_contraction
    from ziggurat.lowering.graph_to_tile import GraphToTilePass
    from ziggurat.transforms.tile.tile_sizes import contraction_sizes

    module = Parser(default_context(), GEMM_F16).parse_module()
    GraphToTilePass().apply(default_context(), module)
    op = next(op for op in module.walk() if is_contraction(op))
    assert contraction_sizes(op, load_machine("davinci"), [1024, 1024, 1024]) == [128, 256, 64]


def test_a_conv_whose_epilogue_never_fits_takes_its_fewest_output_points():
    """No tile of this conv keeps a 4 KiB-per-element epilogue within the vector space: its
    tile is then the one with the fewest output points whose operands fit (the retry in
    `tile.fit` goes on from there), never the whole layer, which could not fit either."""
    from ziggurat.ir.contraction import contraction_dims
    from ziggurat.transforms.tile.tile_sizes import Limits, contraction_sizes, conv_options
    from ziggurat.transforms.tile.tiling_interface import tiling_of

    op = contraction_of(KERNELS["conv3x3"])
    machine = load_machine("davinci")
    extents = [loop.extent for loop in tiling_of(op).domain(op)]
    roles = contraction_dims(op)
    rows, channels = roles.m[-2], roles.n[0]
    usual = contraction_sizes(op, machine, extents)
    assert usual[rows] > 1
    starved = contraction_sizes(op, machine, extents, epilogue_bytes=4096)
    fewest = min(o["m"] * o["n"] for o in conv_options(op, machine, roles, extents, Limits(2)))
    assert starved != extents and starved[rows] * starved[channels] == fewest


@pytest.mark.parametrize("machine", MACHINES)
def test_matmul_tiles_fit_the_spaces(machine):
    from xdsl.parser import Parser

    from ziggurat.ir.contraction import is_contraction
    from ziggurat.lowering.graph_to_tile import GraphToTilePass
    from ziggurat.transforms.tile.tile_sizes import contraction_sizes

    module = Parser(default_context(), GEMM_F16).parse_module()
    GraphToTilePass().apply(default_context(), module)
    op = next(op for op in module.walk() if is_contraction(op))
    spec = load_machine(machine)
    tm, tn, tk = contraction_sizes(op, spec, [1024, 1024, 1024])
    unit = spec.matrix
    assert tm % unit.m == 0 and tn % unit.n == 0 and tk % unit.k == 0
    a, b, c = tm * tk * 2, tk * tn * 2, tm * tn * 4
    capacity = {name: space.capacity for name, space in spec.memories.items()}
    used: dict[str, int] = {}
    for space, size in ((unit.a_space, 2 * a), (unit.b_space, 2 * b), (unit.c_space, c)):
        used[space] = used.get(space, 0) + size
    assert all(size <= capacity[space] for space, size in used.items())
    assert tm * tn >= 64 * 64


# --------------------------------------------------------------------------- #
# The tiling interface
# --------------------------------------------------------------------------- #


def test_window_access_gives_the_halo_and_a_local_map():
    from xdsl.ir.affine import AffineExpr, AffineMap

    from ziggurat.transforms.tile.tiling_interface import Linear, Tile, access_slice

    d = [AffineExpr.dimension(i) for i in range(3)]
    window = AffineMap(3, 0, (d[0] * 2 + d[2] * 3, d[1] * -1 + 9))
    box, local = access_slice(window, Tile((Linear((), 4), Linear((), 2), Linear()), (5, 3, 3)))
    # rows 2*4 .. 2*8 + 3*2 = 8 .. 22; columns 9 - 4 .. 9 - 2 = 5 .. 7
    assert [o.static for o in box.offsets] == [8, 5]
    assert box.sizes == (15, 3)
    assert local == AffineMap(3, 0, (d[0] * 2 + d[2] * 3, d[1] * -1 + 2))


def test_linear_offsets_and_their_ranges():
    from xdsl.dialects.builtin import IndexType
    from xdsl.ir import Block

    from ziggurat.transforms.tile.tiling_interface import Linear

    i, k = Block(arg_types=[IndexType(), IndexType()]).args
    offset = Linear.of(i) * 2 + Linear.of(k) - 1
    assert offset.static is None
    assert offset.bounds({i: (0, 8), k: (4, 12)}) == (3, 27)
    assert offset.bounds({i: (0, 8)}) is None
    assert (offset - Linear.of(i) * 2).terms == ((k, 1),)
    assert Linear((), 3).static == 3


def test_vector_groups_fit_half_the_vector_space():
    text = """
    func.func @main(%x: tensor<512x1024xf16>, %y: tensor<512x1024xf16>) -> tensor<512x1024xf16> {
      %s = graph.add %x, %y : (tensor<512x1024xf16>, tensor<512x1024xf16>) -> tensor<512x1024xf16>
      %r = graph.sigmoid %s : tensor<512x1024xf16>
      func.return %r : tensor<512x1024xf16>
    }"""
    spec = load_machine("davinci")
    module = lowered(text, "machine=davinci")
    assert loops_of(module)
    lanes = spec.vector.lanes(2)
    for op in module.walk():
        if isinstance(op, linalg.GenericOp):
            rows, cols = op.results[0].type.get_shape()
            assert cols % lanes == 0
            assert 3 * rows * cols * 2 <= spec.memories[spec.vector.spaces[0]].capacity // 2


def test_softmax_rows_from_the_machine_keep_whole_rows():
    module = lowered(KERNELS["softmax"], "machine=davinci")
    assert [static_bounds(loop)[:2] for loop in loops_of(module)] == [(0, 256)]
    for op in module.walk():
        if isinstance(op, linalg.GenericOp) and len(op.results[0].type.get_shape()) == 2:
            assert op.results[0].type.get_shape()[1] == 300


def tile_and_fuse_text(text: str, options: str):
    from xdsl.parser import Parser

    from ziggurat.transforms.tile.tile_and_fuse import TileAndFusePass

    module = Parser(default_context(), text).parse_module()
    TileAndFusePass(**options).apply(default_context(), module)
    module.verify()
    return module


def test_ops_on_memrefs_and_unreadable_maps_are_left_alone():
    text = """
    func.func @f(%x: memref<16x16xf16>, %r: memref<16x16xf16>, %t: tensor<8x8xf32>) -> tensor<8x8xf32> {
      linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<16x16xf16>) outs(%r : memref<16x16xf16>) {
      ^bb0(%a: f16, %o: f16):
        linalg.yield %a : f16
      }
      %e = tensor.empty() : tensor<8x8xf32>
      %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, (d0 + d1) mod 8)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
      ^bb0(%a: f32, %b: f32):
        linalg.yield %a : f32
      } -> tensor<8x8xf32>
      func.return %y : tensor<8x8xf32>
    }"""
    module = tile_and_fuse_text(text, {"sizes": (2, 2)})
    assert not loops_of(module)
    assert sum(isinstance(op, linalg.GenericOp) for op in module.walk()) == 2


def test_a_fill_outside_the_group_is_filled_per_tile():
    # A splat weight: the fill is read by the matmul only in slices.
    text = """
    func.func @f(%a: tensor<64x256xf32>) -> tensor<64x128xf32> {
      %one = arith.constant 1.0 : f32
      %zero = arith.constant 0.0 : f32
      %we = tensor.empty() : tensor<256x128xf32>
      %w = linalg.fill ins(%one : f32) outs(%we : tensor<256x128xf32>) -> tensor<256x128xf32>
      %ie = tensor.empty() : tensor<64x128xf32>
      %init = linalg.fill ins(%zero : f32) outs(%ie : tensor<64x128xf32>) -> tensor<64x128xf32>
      %y = linalg.matmul {tile.group = "g_0", tile.root} ins(%a, %w : tensor<64x256xf32>, tensor<256x128xf32>) outs(%init : tensor<64x128xf32>) -> tensor<64x128xf32>
      func.return %y : tensor<64x128xf32>
    }"""
    report = check_pass_preserves_numerics(text, "tile-and-fuse{sizes=32,64,64}")
    assert report.ok, report
    module = report.transformed
    fills = [
        op.results[0].type.get_shape() for op in module.walk() if isinstance(op, linalg.FillOp)
    ]
    assert set(fills) == {(64, 64), (32, 64)}


LATE_1X1 = """
    func.func @main(%x: tensor<1x1024x14x14xf16>, %w: tensor<256x1024x1x1xf16>) -> tensor<1x256x14x14xf16> {
      %y = graph.conv2d %x, %w : (tensor<1x1024x14x14xf16>, tensor<256x1024x1x1xf16>) -> tensor<1x256x14x14xf16>
      func.return %y : tensor<1x256x14x14xf16>
    }"""


def test_halving_for_cores_splits_a_layer_into_as_many_tiles_on_its_longer_side():
    """ResNet-50's 1x1 reduce at 14x14 gets two tiles on one davinci core; halved for 32 cores
    its tile is split until it has 32, output channels first while they are the longer side
    (each core then reads a slice of the weights, not all of them), never below the cube's N."""
    from ziggurat.ir.contraction import contraction_dims
    from ziggurat.transforms.tile.tile_sizes import (
        contraction_sizes,
        halved_for_cores,
        tile_count,
    )
    from ziggurat.transforms.tile.tiling_interface import tiling_of

    op = contraction_of(LATE_1X1)
    machine = load_machine("davinci")
    extents = [loop.extent for loop in tiling_of(op).domain(op)]
    roles = contraction_dims(op)
    parallel = [*roles.batch, *roles.m, *roles.n]
    one = contraction_sizes(op, machine, extents)
    assert tile_count(extents, one, parallel) < 32
    spread = halved_for_cores(op, machine, extents, one, 32)
    assert tile_count(extents, spread, parallel) >= 32
    (channels,) = roles.n
    assert spread[channels] < one[channels] and spread[channels] % 16 == 0
    assert [spread[d] for d in roles.k] == [one[d] for d in roles.k]  # a conv's K is untouched
    # a layer with fewer points than cores stops at the floors
    floor = halved_for_cores(op, machine, extents, one, 10**6)
    assert floor[channels] == 16 and all(floor[d] == 1 for d in roles.m)


LATE_3X3 = """
    func.func @main(%x: tensor<1x512x7x7xf16>, %w: tensor<512x512x3x3xf16>) -> tensor<1x512x7x7xf16> {
      %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x512x7x7xf16>, tensor<512x512x3x3xf16>) -> tensor<1x512x7x7xf16>
      func.return %y : tensor<1x512x7x7xf16>
    }"""


@pytest.mark.parametrize("text", [LATE_1X1, LATE_3X3], ids=["1x1 at 14x14", "3x3 at 7x7"])
def test_several_cores_take_the_tile_the_layer_runs_fastest_with(text):
    """For several cores, `spread_contraction` takes the tile of least modelled time among every
    tile that fits, the one-core tile and its halving; the last 3x3 convs of ResNet-50, whose
    weights outweigh their input 28 to 1, keep all 7 output rows in one tile and split only
    their output channels: each core reads its slice of the weights once (halving had three row
    tiles reading them three times), and the result is the graph's."""
    from ziggurat.ir.contraction import contraction_dims
    from ziggurat.transforms.tile.tile_sizes import (
        CoreTime,
        contraction_sizes,
        halved_for_cores,
        spread_contraction,
    )
    from ziggurat.transforms.tile.tiling_interface import tiling_of

    op = contraction_of(text)
    machine = load_machine("davinci")
    extents = [loop.extent for loop in tiling_of(op).domain(op)]
    one = contraction_sizes(op, machine, extents)
    halved = halved_for_cores(op, machine, extents, one, 32)
    chosen = spread_contraction(op, machine, extents, one, 32)
    time = CoreTime(op, machine, extents, 32)
    assert time(chosen) <= min(time(one), time(halved))
    if text is LATE_3X3:
        rows = contraction_dims(op).m[-2]
        assert chosen[rows] == extents[rows] and halved[rows] < extents[rows]
        assert time(chosen) < time(halved)
    report = check_pass_preserves_numerics(
        text, "graph-to-tile,tile-and-fuse{machine=davinci cores=32}"
    )
    assert report.ok, report


def test_several_cores_split_a_vector_group_down_to_its_lanes():
    from ziggurat.transforms.tile.tile_sizes import spread_vector, tile_count

    extents, sizes = [1, 64, 7, 7 * 32], [1, 64, 7, 224]
    spread = spread_vector(extents, sizes, whole=set(), lanes=64, cores=32)
    assert tile_count(extents, spread, range(4)) >= 32
    assert spread[3] % 64 == 0 or spread[3] == extents[3]
    assert spread_vector(extents, sizes, whole={1, 2, 3}, lanes=64, cores=32) == sizes
