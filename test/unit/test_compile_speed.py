"""The shortcuts that made compiling ResNet-50 faster compute what the slow paths did.

Each replaces a slow computation by an equivalent one (docs/performance.md, "Compile
and simulation speed"); these tests hold them to the original on the cases that could
tell them apart.
"""

from __future__ import annotations

import io
import itertools
import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import (
    BFloat16Type,
    ComplexType,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    TensorType,
)
from xdsl.parser import Parser
from xdsl.printer import Printer as XdslPrinter

from ziggurat.context import default_context
from ziggurat.diagnostics import Diagnostic, DiagnosticError
from ziggurat.dtypes import is_splat
from ziggurat.interpreters.timing import Access, _AccessLog, _Record
from ziggurat.ir.contraction import is_contraction
from ziggurat.parsing import parse_source
from ziggurat.printing import Printer
from ziggurat.transforms.npu.insert_sync import _ANYWHERE, _Access, _envelopes_meet, _Step
from ziggurat.transforms.npu.plan_memory import _Buffer, _clear_of, _find_conflicts
from ziggurat.transforms.tile.tile_sizes import slice_elements
from ziggurat.transforms.tile.tiling_interface import Tile, access_slice, linear_form, tiling_of

NAN = float("nan")
ELEMENT_TYPES = [
    Float16Type(),
    Float32Type(),
    BFloat16Type(),
    IntegerType(32),
    IntegerType(8),
    IntegerType(1),
    IndexType(),
]
VALUES = {
    "mixed": [1.0, 2.0, 1.0],
    "equal": [3.0, 3.0, 3.0],
    "signed zeros": [0.0, -0.0, 0.0],
    "nans": [NAN, NAN],
    "one nan": [NAN],
    "one": [5.0],
    "long": [float(i % 7) for i in range(150)],
    "long splat": [1.0] * 150,
}


def dense(element_type, values: list[float]) -> DenseIntOrFPElementsAttr:
    if isinstance(element_type, IntegerType | IndexType):
        values = [int(v) if v == v else 1 for v in values]
        if isinstance(element_type, IntegerType) and element_type.width.data == 1:
            values = [min(abs(v), 1) for v in values]
    return DenseIntOrFPElementsAttr.from_list(TensorType(element_type, [len(values)]), values)


@pytest.mark.parametrize("element_type", ELEMENT_TYPES, ids=str)
@pytest.mark.parametrize("values", VALUES.values(), ids=VALUES.keys())
def test_is_splat_is_xdsls(element_type, values):
    attr = dense(element_type, values)
    assert is_splat(attr) == attr.is_splat()


@pytest.mark.parametrize("element_type", ELEMENT_TYPES, ids=str)
@pytest.mark.parametrize("values", VALUES.values(), ids=VALUES.keys())
def test_printer_prints_dense_as_xdsl(element_type, values):
    attr = dense(element_type, values)
    ours, theirs = io.StringIO(), io.StringIO()
    Printer(stream=ours).print_attribute(attr)
    XdslPrinter(stream=theirs).print_attribute(attr)
    assert ours.getvalue() == theirs.getvalue()


CONVS = {
    "3x3 pad 1": """
    func.func @main(%x: tensor<1x16x20x20xf16>, %w: tensor<32x16x3x3xf16>) -> tensor<1x32x20x20xf16> {
      %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x20x20xf16>, tensor<32x16x3x3xf16>) -> tensor<1x32x20x20xf16>
      func.return %y : tensor<1x32x20x20xf16>
    }""",
    "strided dilated": """
    func.func @main(%x: tensor<1x4x17x17xf16>, %w: tensor<6x4x3x3xf16>) -> tensor<1x6x7x7xf16> {
      %y = graph.conv2d %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 2, 2>} : (tensor<1x4x17x17xf16>, tensor<6x4x3x3xf16>) -> tensor<1x6x7x7xf16>
      func.return %y : tensor<1x6x7x7xf16>
    }""",
}


@pytest.mark.parametrize("text", CONVS.values(), ids=CONVS.keys())
def test_slice_elements_is_access_slices_size(text):
    from ziggurat.lowering.graph_to_tile import GraphToTilePass

    module = Parser(default_context(), text).parse_module()
    GraphToTilePass().apply(default_context(), module)
    op = next(op for op in module.walk() if is_contraction(op))
    for indexing in tiling_of(op).indexing_maps(op):
        forms = [linear_form(result)[0] for result in indexing.results]
        for box in itertools.product((1, 2, 5), repeat=indexing.num_dims):
            expected = math.prod(access_slice(indexing, Tile.whole(list(box)))[0].sizes)
            assert slice_elements(forms, box) == expected


def test_envelopes_never_hide_a_conflict():
    """Two steps whose accesses conflict pairwise always pass the envelope test (which only skips)."""
    rng = random.Random(7)
    storages = ["ub", "l1", ("space", "ub"), _ANYWHERE]

    def accesses(count: int) -> tuple[_Access, ...]:
        found = []
        for _ in range(count):
            start = rng.randrange(0, 64)
            found.append(
                _Access(
                    rng.choice(storages), start, start + rng.randrange(0, 16), rng.random() < 0.3
                )
            )
        return tuple(found)

    skipped = 0
    for _ in range(3000):
        mine = _Step([], {"p": accesses(rng.randrange(1, 4))})
        theirs = _Step([], {"q": accesses(rng.randrange(1, 4))})
        pairwise = any(a.conflicts(b) for a in mine.accesses["p"] for b in theirs.accesses["q"])
        meet = _envelopes_meet(mine.envelopes("p"), theirs.envelopes("q"))
        assert meet or not pairwise
        assert mine.conflicts("p", theirs, "q") == pairwise
        skipped += not meet
    assert skipped > 100  # the test draws pairs the envelopes rule out, not only ones they pass


# Splat literals of each element type: decimals, signed zeros, and the hex bit patterns of NaN and
# the infinities (how MLIR and xDSL print them).
FLOAT_SPLATS = ["0.02", "-0.0", "0.0", "-1.5e-3", "3"]
SPLAT_LITERALS = [
    *(
        (Float16Type(), v)
        for v in [*FLOAT_SPLATS, "65504.0", "0x7E00", "0x7C00", "0xFC00", "0x8000"]
    ),
    *((BFloat16Type(), v) for v in [*FLOAT_SPLATS, "0x7FC0", "0x7F80", "0xFF80", "0xFFC1"]),
    *(
        (Float32Type(), v)
        for v in [*FLOAT_SPLATS, "0x7FC00000", "0x7F800000", "0xFF800000", "0x80000000"]
    ),
    *((Float64Type(), v) for v in [*FLOAT_SPLATS, "0x7FF8000000000000", "0xFFF0000000000000"]),
    *((IntegerType(1), v) for v in ["true", "false", "1", "0"]),
    *((IntegerType(8), v) for v in ["-3", "127", "-128", "255", "0x7F"]),
    *((IntegerType(32), v) for v in ["-7", "2147483647", "0xFFFFFFFF"]),
    *((IntegerType(64), v) for v in ["-9223372036854775808", "42"]),
    *((IndexType(), v) for v in ["5", "-1"]),
    (ComplexType(Float32Type()), "(1.5, -0.0)"),
]
SPLAT_SHAPES = [[2, 3], [], [0], [1]]


def constant(typed_attribute: str) -> DenseIntOrFPElementsAttr:
    text = f"%c = arith.constant {typed_attribute}"
    return parse_source(default_context(), text, "splat.mlir").ops.first.value


def written_out(literal: str, shape: list[int]) -> str:
    """`literal` as a tensor literal of `shape` listing every element."""
    if not shape:
        return literal
    return "[" + ", ".join([written_out(literal, shape[1:])] * shape[0]) + "]"


@pytest.mark.parametrize("shape", SPLAT_SHAPES, ids=str)
@pytest.mark.parametrize("element_type, literal", SPLAT_LITERALS, ids=str)
def test_a_splat_parses_as_its_elements_written_out(element_type, literal, shape):
    """The splat shortcut gives the bytes of xDSL's path for the literal with every element
    written out (the project's reading of hex floats included), and round-trips through the printer."""
    tensor = TensorType(element_type, shape)
    splat = constant(f"dense<{literal}> : {tensor}")
    one_or_more = TensorType(
        element_type, shape or [1]
    )  # a rank-0 literal is the splat's own syntax
    assert (
        splat.data.data
        == constant(f"dense<{written_out(literal, shape or [1])}> : {one_or_more}").data.data
    )
    assert splat.get_type() == tensor
    printed = io.StringIO()
    Printer(stream=printed).print_attribute(splat)
    assert constant(printed.getvalue()) == splat


@pytest.mark.parametrize("element_type, literal", SPLAT_LITERALS, ids=str)
def test_a_splat_parses_as_xdsls_parser_reads_it(element_type, literal):
    if literal.startswith("0x") and not isinstance(element_type, IntegerType):
        pytest.skip("xDSL reads a hex float element of a dense literal as an integer's value")
    text = f"%c = arith.constant dense<{literal}> : tensor<4x2x{element_type}>"
    theirs = Parser(default_context(), text).parse_module().ops.first.value
    assert constant(f"dense<{literal}> : tensor<4x2x{element_type}>") == theirs


def test_a_splat_is_packed_from_one_value(monkeypatch):
    """ResNet-50's 11.4 M splat weights took half of parsing its npu file when xDSL packed a
    Python value per element: the parser packs one, whatever the element count."""
    packed: list[int] = []
    pack = BFloat16Type.pack
    monkeypatch.setattr(
        BFloat16Type, "pack", lambda self, values: packed.append(len(values)) or pack(self, values)
    )
    splat = constant("dense<0.02> : tensor<64x256x3x3xbf16>")
    assert packed == [1]
    assert splat.data.data == bytes.fromhex("A43C") * (64 * 256 * 3 * 3)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 200), st.sampled_from([0, 1, 3, 16, 70, 900]), st.booleans()),
        max_size=40,
    ),
    st.lists(
        st.tuples(st.integers(0, 200), st.integers(0, 100), st.booleans(), st.booleans()),
        max_size=10,
    ),
)
def test_the_hazard_log_finds_the_records_of_each_kind(logged, queries):
    """The log keeps reads and writes apart (a read looks up only writes): a lookup of either
    kind or both finds exactly the overlapping records of that kind, `first` names the one
    a single list sorted by (start byte, arrival) holds first, and `inside` finds exactly the
    overlapping records an access contains (the ones it may supersede)."""
    log, records = _AccessLog(), []
    for start, length, write in logged:
        records.append(_Record(Access("ub", start, start + length, length), "mte2", 1, write, None))
        log.add(records[-1])
    for start, length, reads, writes in queries:
        access = Access("ub", start, start + length, length)
        expected = [
            r
            for r in records
            if r.access.start < access.end
            and r.access.end > access.start
            and (reads, writes)[r.write]
        ]
        found = log.overlapping(access, reads=reads, writes=writes)
        assert sorted(map(id, found)) == sorted(map(id, expected))
        if expected:
            assert log.first(found) is min(
                expected, key=lambda r: r.access.start
            )  # stable: by arrival
        contained = [
            r
            for r in records
            if r.access.start < access.end
            and access.start < r.access.end <= access.end
            and access.start <= r.access.start
            and (writes or not r.write)
        ]
        assert sorted(map(id, log.inside(access, writes=writes))) == sorted(map(id, contained))


REPEATED_TYPES = """
func.func @f(%a: memref<4x4xf32, strided<[4, 1], offset: ?>>, %b: memref<4x4xf32, affine_map<(d0, d1) -> (d1, d0)>>,
             %c: memref<8xbf16, "ub">, %d: vector<4xf32>, %e: tensor<2x3xi8>) {
  %0 = "test.op"(%a, %b, %c) {shape = array<i64: 4, 4>, other = array<i64: 4, 4>} : (memref<4x4xf32, strided<[4, 1], offset: ?>>, memref<4x4xf32, affine_map<(d0, d1) -> (d1, d0)>>, memref<8xbf16, "ub">) -> memref<8xbf16, "ub">
  %1 = "test.op"(%d, %e) {shape = array<i64: 4, 4>, v = array<i64>} : (vector<4xf32>, tensor<2x3xi8>) -> memref<8xbf16,"ub">
  %2 = "test.op"() {t = memref<8xbf16, "ub">, u = array<i64: 4,4>, w = array<i32: 4, 4>} : () -> (memref<8xbf16, "l1">)
  func.return
}
"""


def test_a_repeated_type_or_array_parses_as_the_first(monkeypatch):
    """The parser reuses what it parsed for the same text of a memref, tensor or vector type or an
    `array<...>`; the module is the one parsing every occurrence gives (locations included)."""
    from ziggurat.parsing import _LocatingParser

    def printed(module) -> str:
        text = io.StringIO()
        Printer(stream=text, print_debuginfo=True, print_generic_format=True).print_op(module)
        return text.getvalue()

    context = default_context()
    context.allow_unregistered = True
    module = parse_source(context, REPEATED_TYPES, "types.mlir")
    ops = list(module.walk())
    first, second = ops[2].attributes["shape"], ops[3].attributes["shape"]
    assert first is second  # the second one was not parsed again
    assert ops[4].attributes["w"] != first
    monkeypatch.setattr(_LocatingParser, "_memoize", lambda self, starts, parse: parse())
    assert printed(module) == printed(parse_source(context, REPEATED_TYPES, "types.mlir"))


def _random_accesses(rng: random.Random, count: int) -> tuple[_Access, ...]:
    storages = ["ub", "l1", ("space", "ub"), _ANYWHERE]
    found = []
    for _ in range(count):
        start = rng.randrange(0, 64)
        storage = rng.choice(storages)
        found.append(_Access(storage, start, start + rng.randrange(0, 16), rng.random() < 0.3))
    return tuple(found)


def test_first_needing_is_the_first_op_of_the_step_a_producer_conflicts_with():
    """`_Step.first_needing` (which skips the last op and scans the nearest producers first)
    names the op the scan of every op against every producer in order names."""
    rng = random.Random(11)
    answers = set()
    for _ in range(2000):
        members = [
            {"p": _random_accesses(rng, rng.randrange(0, 3))} for _ in range(rng.randrange(1, 5))
        ]
        step = _Step([], {"p": tuple(a for m in members for a in m["p"])}, members=members)
        producers = [
            _Step([], {rng.choice("qr"): _random_accesses(rng, rng.randrange(1, 4))})
            for _ in range(rng.randrange(0, 6))
        ]
        expected = next(
            (
                index
                for index, member in enumerate(members)
                if any(
                    a.conflicts(b)
                    for producer in producers
                    for a in member["p"]
                    for b in producer.accesses.get("q", ())
                )
            ),
            len(members) - 1,
        )
        assert step.first_needing("p", producers, "q") == expected
        answers.add((expected, len(members)))
    assert any(index < count - 1 for index, count in answers)  # not only "the last op"


def _random_buffers(rng: random.Random) -> list[_Buffer]:
    buffers = []
    for _ in range(rng.randrange(1, 30)):
        ranges, position = [], rng.randrange(0, 20)
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            end = position + rng.randrange(0, 8)
            ranges.append((position, end))
            position = end + 1 + rng.randrange(0, 6)
        if rng.random() < 0.1:
            ranges = [(0, 100)]  # an npu.buffer placed already: live everywhere
        buffer = _Buffer(None, "ub", rng.randrange(1, 5) * 32, ranges)
        if rng.random() < 0.5:
            buffer.offset = rng.randrange(0, 8) * 32
        buffers.append(buffer)
    return buffers


@pytest.mark.parametrize("reuse", [True, False])
def test_the_conflict_sweep_finds_every_pair_live_at_once(reuse):
    """`_find_conflicts` (a sweep over the buffers' spans) gives each buffer the buffers of its
    space that the pairwise test finds live with it, in the same order."""
    rng = random.Random(5)
    for _ in range(300):
        group = _random_buffers(rng)
        expected = [
            [o for o in group if o is not b and (not reuse or b.lives_with(o))] for b in group
        ]
        _find_conflicts(group, reuse)
        assert [list(map(id, b.conflicts)) for b in group] == [list(map(id, e)) for e in expected]


def test_the_buffers_to_clear_are_those_the_sorts_of_every_mate_gave():
    """`_clear_of`, from the placed buffers kept in order of offset, yields the lists that
    filtering every other buffer of the space and sorting the placed ones by offset gave."""
    rng = random.Random(3)
    for _ in range(300):
        group = _random_buffers(rng)
        _find_conflicts(group, True)
        order = {id(b): i for i, b in enumerate(group)}
        placed = sorted(
            (b for b in group if b.offset is not None), key=lambda b: (b.offset, order[id(b)])
        )
        for buffer in (b for b in group if b.offset is None):
            mates = [o for o in group if o is not buffer]
            conflicting = {id(o) for o in buffer.conflicts}
            slow = [
                mates,
                [o for o in mates if id(o) in conflicting or o.spans_with(buffer)],
                buffer.conflicts,
            ]
            expected = [
                sorted((b for b in avoid if b.offset is not None), key=lambda b: b.offset)
                for avoid in slow
            ]
            got = list(_clear_of(buffer, placed))
            assert [list(map(id, a)) for a in got] == [list(map(id, e)) for e in expected]


TOP_ALLOCS = """
func.func @f(%arg: memref<8xf32>) {
  %a = memref.alloc() : memref<8xf32>
  %b = memref.alloc() : memref<4x8xf32>
  %c = arith.constant 0 : index
  %d = memref.alloc() : memref<2xf32>
  func.return
}
"""


def test_top_allocs_go_where_a_scan_from_the_top_puts_them():
    """`TopAllocs` (which resumes the scan at its last alloc) puts each alloc where
    `alloc_at_top` scanning the function from its start does, with static views of them
    inserted after and the last alloc erased between."""
    from xdsl.dialects import memref
    from xdsl.dialects.builtin import MemRefType, f32
    from xdsl.rewriter import InsertPoint, Rewriter

    from ziggurat.transforms.loop.buffers import TopAllocs, alloc_at_top, slot_view_type

    def build(insert) -> str:
        module = parse_source(default_context(), TOP_ALLOCS, "top.mlir")
        function = module.ops.first
        types = [MemRefType(f32, [n + 1]) for n in range(6)]
        for step, memref_type in enumerate(types):
            buffer = insert(function, memref_type)
            if step == 1:  # a slot view of it, right after it
                slots = alloc_at_top(function, MemRefType(f32, [2, 4]))
                view = memref.SubviewOp.from_static_parameters(
                    slots, slots.type, [1, 0], [1, 4], [1, 1], reduce_rank=True
                )
                assert view.result.type == slot_view_type(slots.type, 1)
                Rewriter.insert_op(view, InsertPoint.after(slots.owner))
            if step == 3:  # the last one inserted goes away
                Rewriter.erase_op(buffer.owner)
        text = io.StringIO()
        Printer(stream=text).print_op(module)
        return text.getvalue()

    top: dict[int, TopAllocs] = {}

    def resuming(function, memref_type):
        return top.setdefault(id(function), TopAllocs(function)).alloc(memref_type)

    assert build(resuming) == build(
        lambda function, memref_type: alloc_at_top(function, memref_type)
    )


def test_positions_around_an_op_are_its_blocks_order():
    """`_positions_around` numbers the ops it is asked for as enumerating the whole block does,
    counted from the op it starts at."""
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import i32
    from xdsl.ir import Block

    from ziggurat.transforms.loop.promote_to_memory_space import _positions_around

    block = Block([arith.ConstantOp.from_int_and_width(i, i32) for i in range(40)])
    ops = list(block.ops)
    rng = random.Random(2)
    for _ in range(200):
        op = rng.choice(ops)
        wanted = set(rng.sample(ops, rng.randrange(0, 6)))
        got = _positions_around(op, wanted)
        assert got == {o: ops.index(o) - ops.index(op) for o in wanted | {op}}


def test_the_tools_collect_young_garbage_less_often():
    """A tool's `run_main` raises the collector's first threshold (its IR would be walked again
    every few hundred allocations) and keeps the others."""
    import gc

    from ziggurat.cli import YOUNG_OBJECTS_PER_COLLECTION, run_main

    old = gc.get_threshold()
    try:
        with pytest.raises(SystemExit):
            run_main(lambda: 0)
        assert gc.get_threshold() == (YOUNG_OBJECTS_PER_COLLECTION, *old[1:])
    finally:
        gc.set_threshold(*old)


class _Op:
    """Stands for the op of an access in the check across cores (its name, its location)."""

    name = "npu.dma"

    def __init__(self, number: int):
        self.number = number


def _first_race_core_by_core(per_core):
    """The check across cores as it was: each core's writes in a log of its own, each access
    looked up in every other core's log, in core order."""
    from ziggurat.interpreters.timing import windows_overlap

    written = []
    for core, accesses in enumerate(per_core):
        log = _AccessLog()
        for access, write, op in accesses:
            if write:
                log.add(_Record(access, f"core {core}", 0, True, op))
        written.append(log)
    for core, accesses in enumerate(per_core):
        for access, _, op in accesses:
            for other, log in enumerate(written):
                if other == core:
                    continue
                races = [r for r in log.overlapping(access) if windows_overlap(access, r.access)]
                if races:
                    return core, op, other, log.first(races).op
    return None


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(st.integers(0, 300), st.integers(1, 40), st.booleans()),
            max_size=12,
        ),
        min_size=1,
        max_size=5,
    )
)
def test_the_check_across_cores_finds_the_race_a_scan_core_by_core_finds(cores):
    """One log of all cores' writes reports the same race as looking each access up in every
    other core's log: the same access, the lowest-numbered other core, its earliest write."""
    from unittest.mock import patch

    from ziggurat.interpreters import timing

    number = iter(range(10**6))
    per_core = [
        [(Access("gm", s, s + n, n), write, _Op(next(number))) for s, n, write in accesses]
        for accesses in cores
    ]
    expected = _first_race_core_by_core(per_core)
    raised = []

    def error_at(op, message):
        raised.append((op, message))
        return DiagnosticError(Diagnostic("error", message))

    with patch.object(timing, "error_at", error_at), patch.object(timing, "note_at") as note:
        try:
            timing.check_cores_disjoint(per_core)
        except DiagnosticError:
            pass
    if expected is None:
        assert not raised
    else:
        core, op, other, write = expected
        assert raised[0][0] is op
        assert f"on core {core} " in raised[0][1] and f"on core {other} writes" in raised[0][1]
        assert note.call_args[0][0] is write


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(["float32", "float16", "bfloat16", "int8", "int64", "complex128", "bool"]),
    st.lists(st.sampled_from([0.0, -0.0, 1.0, float("nan"), 2.5]), min_size=1, max_size=9),
)
def test_the_splat_test_compares_bits_as_a_byte_by_byte_compare_does(dtype, values):
    """`_all_bitwise_equal` compares an element as one word: the same answer as comparing every
    byte with the first element's, signed zeros and NaNs told apart by their bits."""
    import ml_dtypes

    from ziggurat.ir.tensor_constants import _all_bitwise_equal

    numpy_type = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    with np.errstate(invalid="ignore"):
        data = np.array(values).astype(numpy_type)
    raw = data.view(np.uint8).reshape(data.size, data.dtype.itemsize)
    assert _all_bitwise_equal(data) == bool((raw == raw[0]).all())


_LEXER_FRAGMENTS = [
    "%",
    "#",
    "!",
    "^",
    "@",
    "-",
    ">",
    "{",
    "}",
    "-#",
    "#-}",
    "{-#",
    "0x",
    "0x1F",
    "12",
    "0",
    "5.",
    "1.5e3",
    "e5",
    "abc",
    "_x",
    "a.b$c",
    '"s"',
    '"a\\"b"',
    '"\\0A"',
    '""',
    " ",
    "\n",
    "//c\n",
    "/",
    "*",
    "...",
    ".",
    ":",
    ",",
    "(",
    ")",
    "[",
    "]",
    "<",
    "=",
    "+",
    "?",
    "|",
    "é",
    "x",
    '"open',
    "\t",
    "\v",
    "$",
    "-1",
    "->",
    "%0",
    "%arg1",
    "@f",
    '@"s"',
    "i64",
    "4x4xf32",
]


def _tokens(lexer_class, text: str) -> list:
    from xdsl.utils.lexer import Input
    from xdsl.utils.mlir_lexer import MLIRTokenKind

    lexer, found = lexer_class(Input(text, "t.mlir")), []
    while True:
        try:
            token = lexer.lex()
        except Exception as error:  # the same error, at the same place
            return [*found, (type(error).__name__, str(error))]
        found.append((token.kind, token.span.start, token.span.end, type(token.span)))
        if token.kind == MLIRTokenKind.EOF:
            return found


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(_LEXER_FRAGMENTS), max_size=14))
def test_the_fast_lexer_lexes_as_xdsls(fragments):
    """`FastLexer` gives xDSL's tokens (kind, span, span type) and errors, on text made of the
    fragments where the two could part: prefixes, numbers, strings, comments, punctuation."""
    from xdsl.utils.mlir_lexer import MLIRLexer

    from ziggurat.parsing import FastLexer

    text = "".join(fragments)
    assert _tokens(FastLexer, text) == _tokens(MLIRLexer, text)


def test_the_fast_lexer_lexes_the_lit_tests_as_xdsls():
    from pathlib import Path

    from xdsl.utils.mlir_lexer import MLIRLexer

    from ziggurat.parsing import FastLexer

    files = sorted(Path(__file__).parents[1].glob("**/*.mlir"))
    assert len(files) > 100
    for path in files:
        text = path.read_text()
        assert _tokens(FastLexer, text) == _tokens(MLIRLexer, text), path


def test_the_printer_prints_each_attribute_as_xdsls():
    """`Printer` prints an attribute's text once and reuses it, and writes plain tokens straight
    to its stream: the lit tests' npu and loop modules print as xDSL's printer prints them,
    generic form included."""
    from pathlib import Path

    root = Path(__file__).parents[1]
    printed = 0
    for path in sorted([*root.glob("npu/*.mlir"), *root.glob("loop/*.mlir")]):
        context = default_context()
        context.allow_unregistered = True
        try:
            module = parse_source(context, path.read_text().split("// -----")[0], path.name)
        except DiagnosticError:
            continue
        for generic in (False, True):
            ours, theirs = io.StringIO(), io.StringIO()
            Printer(stream=ours, print_generic_format=generic).print_op(module)
            XdslPrinter(stream=theirs, print_generic_format=generic).print_op(module)
            assert ours.getvalue() == theirs.getvalue(), path
        printed += 1
    assert printed > 20


def _declarative_twins():
    """npu.dma and npu.mma as they were declared before their hand-written parsers and printers:
    the same fields, with the assembly formats that parsed and printed them."""
    from xdsl.dialects.builtin import (
        I64,
        DenseArrayBase,
        FloatAttr,
        IndexType,
        IntegerAttr,
        MemRefType,
        StringAttr,
        UnitAttr,
        i64,
    )
    from xdsl.dialects.utils.dynamic_index_list import DynamicIndexList
    from xdsl.irdl import (
        AttrSizedOperandSegments,
        IRDLOperation,
        ParsePropInAttrDict,
        irdl_op_definition,
        operand_def,
        opt_prop_def,
        prop_def,
        var_operand_def,
    )

    indices = DenseArrayBase.constr(i64)

    @irdl_op_definition
    class DeclarativeDma(IRDLOperation):
        name = "test.declarative_dma"
        engine = prop_def(StringAttr)
        src = operand_def(MemRefType)
        src_indices = var_operand_def(IndexType)
        static_src_indices = prop_def(indices)
        dst = operand_def(MemRefType)
        dst_indices = var_operand_def(IndexType)
        static_dst_indices = prop_def(indices)
        shape = prop_def(indices)
        src_strides = opt_prop_def(indices)
        dst_strides = opt_prop_def(indices)
        pad = opt_prop_def(indices)
        pad_value = opt_prop_def(FloatAttr)
        transpose = opt_prop_def(UnitAttr)
        irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
        custom_directives = (DynamicIndexList,)
        assembly_format = (
            "$engine $src `` custom<DynamicIndexList>($src_indices, $static_src_indices) `->` "
            "$dst `` custom<DynamicIndexList>($dst_indices, $static_dst_indices) "
            "attr-dict `:` type($src) `->` type($dst)"
        )

    @irdl_op_definition
    class DeclarativeMma(IRDLOperation):
        name = "test.declarative_mma"
        a = operand_def(MemRefType)
        a_indices = var_operand_def(IndexType)
        static_a_indices = prop_def(indices)
        b = operand_def(MemRefType)
        b_indices = var_operand_def(IndexType)
        static_b_indices = prop_def(indices)
        c = operand_def(MemRefType)
        c_indices = var_operand_def(IndexType)
        static_c_indices = prop_def(indices)
        m = prop_def(IntegerAttr[I64])
        n = prop_def(IntegerAttr[I64])
        k = prop_def(IntegerAttr[I64])
        accumulate = opt_prop_def(UnitAttr)
        irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
        custom_directives = (DynamicIndexList,)
        assembly_format = (
            "$a `` custom<DynamicIndexList>($a_indices, $static_a_indices) `,` "
            "$b `` custom<DynamicIndexList>($b_indices, $static_b_indices) `->` "
            "$c `` custom<DynamicIndexList>($c_indices, $static_c_indices) "
            "attr-dict `:` type($a) `,` type($b) `->` type($c)"
        )

    return {"npu.dma": DeclarativeDma, "npu.mma": DeclarativeMma}


def test_npu_dma_and_mma_print_and_parse_as_their_assembly_formats():
    """`npu.dma` and `npu.mma` are parsed and printed by hand: each of them in the lit tests'
    modules prints as the declarative assembly format it replaces prints it, and reads back with
    the properties, attributes and operand types that format reads."""
    from pathlib import Path

    twins = _declarative_twins()

    def text_of(op) -> str:
        stream = io.StringIO()
        Printer(stream=stream).print_op(op)
        return stream.getvalue()

    def declarative(text: str) -> str:
        for name, twin in twins.items():
            text = text.replace(name + " ", twin.name + " ")
        return text

    root = Path(__file__).parents[1]
    compared = {name: 0 for name in twins}
    for path in sorted(root.glob("**/*.mlir")):
        source = path.read_text()
        if "npu.dma" not in source and "npu.mma" not in source:
            continue
        for chunk in source.split("// -----"):
            context = default_context()
            context.allow_unregistered = True
            try:
                module = parse_source(context, chunk, path.name)
            except DiagnosticError:
                continue
            ops = [op for op in module.walk() if op.name in twins]
            for op in ops:
                twin = twins[op.name].create(
                    operands=op.operands,
                    properties=dict(op.properties),
                    attributes=dict(op.attributes),
                )
                assert text_of(op) == text_of(twin).replace(twin.name, op.name)
                compared[op.name] += 1
            for twin in twins.values():
                context.load_op(twin)
            read = [
                op
                for op in parse_source(context, declarative(text_of(module)), "twin.mlir").walk()
                if isinstance(op, tuple(twins.values()))
            ]
            assert len(read) == len(ops)
            for op, twin in zip(ops, read):
                assert twin.name == twins[op.name].name
                assert op.properties == twin.properties and op.attributes == twin.attributes
                assert [o.type for o in op.operands] == [o.type for o in twin.operands]
    assert min(compared.values()) > 50, compared


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["i8", "i32", "i64", "f32", "f64"]),
    st.lists(st.integers(-100, 100), max_size=8),
)
def test_dense_array_values_are_kept_as_unpacked(element_type, values):
    """`get_values` keeps its tuple with the attribute (`keep_dense_array_values`): the values are
    xDSL's unpacking of the bytes, and the attribute equals and hashes as one never asked."""
    from xdsl.dialects.builtin import BytesAttr, DenseArrayBase, f32, f64, i8, i32, i64

    import ziggurat.parsing  # noqa: F401  (installs the workaround)

    element = {"i8": i8, "i32": i32, "i64": i64, "f32": f32, "f64": f64}[element_type]
    data = [float(v) for v in values] if element_type.startswith("f") else values
    asked = DenseArrayBase.from_list(element, data)
    # built from its bytes, not from_list: integer arrays from from_list are one shared object
    fresh = DenseArrayBase(element, BytesAttr(asked.data.data))
    expected = element.unpack(asked.data.data, len(asked))
    assert asked.get_values() == expected and asked.get_values() is asked.get_values()
    assert asked == fresh and hash(asked) == hash(fresh)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["i1", "i8", "i32", "i64"]),
    st.lists(st.integers(-(2**7), 2**7 - 1), max_size=8),
)
def test_integer_dense_arrays_are_built_once_as_xdsl_builds_them(element_type, values):
    """`reuse_integer_dense_arrays`: the same integer array asked again is the first one, and each
    is the attribute xDSL's own packing gives (bytes and values)."""
    from xdsl.dialects.builtin import BytesAttr, DenseArrayBase, i1, i8, i32, i64

    import ziggurat.parsing  # noqa: F401  (installs the workaround)

    element = {"i1": i1, "i8": i8, "i32": i32, "i64": i64}[element_type]
    if element_type == "i1":
        values = [v & 1 for v in values]
    built = DenseArrayBase.from_list(element, values)
    assert DenseArrayBase.from_list(element, tuple(values)) is built
    normalized = tuple(element.get_normalized_value(v) for v in values)
    assert built == DenseArrayBase(element, BytesAttr(element.pack(normalized)))
    assert built.get_values() == element.unpack(element.pack(normalized), len(values))


def test_xdsl_interpreters_is_whole_when_used_whole_and_lean_otherwise():
    """`import ziggurat` defers `xdsl.interpreters`' `__init__` (which imports every interpreter
    xDSL has, RISC-V's among them); submodules import alone, and a name only the `__init__`
    defines runs it, so the package is the same to code that uses it whole."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "import ziggurat.tools.ziggurat_compile\n"
        "from xdsl.interpreters import builtin, scf\n"
        "assert 'xdsl.interpreters.riscv' not in sys.modules, 'riscv imported'\n"
        "import xdsl.interpreters as package\n"
        "assert callable(package.register_implementations)\n"
        "from xdsl.interpreters import riscv\n"
        "assert package.riscv is riscv and package.builtin is builtin\n"
        "try:\n"
        "    package.no_such_name\n"
        "except AttributeError:\n"
        "    pass\n"
        "else:\n"
        "    raise AssertionError('no AttributeError')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(
                st.integers(0, 200),  # start byte
                st.lists(st.tuples(st.integers(1, 4), st.integers(1, 12)), min_size=1, max_size=3),
                st.sampled_from([1, 2, 4]),  # element size
                st.booleans(),  # a write
            ),
            max_size=6,
        ),
        min_size=2,
        max_size=4,
    )
)
def test_the_check_across_cores_sees_strided_windows_byte_by_byte(cores):
    """Whether `check_cores_disjoint` reports a race is whether some byte an access of one core
    touches is written by another, counted byte by byte over the strided windows (its numpy
    filter over merged runs must never pass a race, nor hide one behind interleaved rows)."""
    from ziggurat.interpreters import timing

    per_core, touched = [], []
    for accesses in cores:
        logged, sets = [], []
        for start, dims, itemsize, write in accesses:
            shape = tuple(size for size, _ in dims)
            strides = tuple(stride for _, stride in dims)
            offsets = {
                start + sum(i * s for i, s in zip(index, strides)) * itemsize + byte
                for index in itertools.product(*(range(n) for n in shape))
                for byte in range(itemsize)
            }
            end = max(offsets) + 1
            access = Access("gm", start, end, len(offsets), (shape, strides, itemsize))
            logged.append((access, write, _Op(len(logged))))
            sets.append((offsets, write))
        per_core.append(logged)
        touched.append(sets)
    race = any(
        a & b
        for core, sets in enumerate(touched)
        for other, others in enumerate(touched)
        if other != core
        for a, _ in sets
        for b, write in others
        if write
    )
    assert timing._cores_may_race(per_core) or not race
    from unittest.mock import patch

    def error_at(op, message):
        return DiagnosticError(Diagnostic("error", message))

    with patch.object(timing, "error_at", error_at), patch.object(timing, "note_at"):
        try:
            timing.check_cores_disjoint(per_core)
            reported = False
        except DiagnosticError:
            reported = True
    assert reported == race
