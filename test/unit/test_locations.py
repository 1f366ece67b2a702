"""Every op a pass creates carries the location of the op it rewrote (MLIR's convention): after each
pass below, every op in the function bodies of an input parsed from text that has an unknown
location was already there before the pass (the parser leaves implicit terminators unlocated).
Each pass adds its case to CASES: (pass pipeline, input file)."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import UnknownLoc

from ziggurat.context import default_context
from ziggurat.parsing import parse_source
from ziggurat.testing.differential import apply_pipeline

TEST = Path(__file__).parents[1]

CASES = [
    ("loop-promote-to-memory-space{machine=davinci}", TEST / "loop" / "promote.mlir"),
    ("loop-promote-to-memory-space{machine=tensorcore}", TEST / "loop" / "promote-copies.mlir"),
    ("loop-promote-to-memory-space{machine=davinci}", TEST / "loop" / "promote-epilogue.mlir"),
    (
        "loop-promote-to-memory-space{machine=davinci},loop-hoist-copies,loop-double-buffer",
        TEST / "loop" / "double-buffer.mlir",
    ),
    (
        "loop-promote-to-memory-space{machine=tensorcore},loop-legalize-copies{machine=tensorcore}",
        TEST / "loop" / "promote-copies.mlir",
    ),
    ("loop-legalize-copies{machine=davinci}", TEST / "loop" / "legalize-copies.mlir"),
    ("loop-stage-reduction{all=true}", TEST / "loop" / "stage-reduction-stays.mlir"),
    ("loop-to-npu{machine=davinci}", TEST / "npu" / "loop-to-npu.mlir"),
    ("graph-to-tile", TEST / "tile" / "graph-to-tile.mlir"),
    (
        "graph-fuse,graph-to-tile,tile-and-fuse{sizes=32,64,16}",
        TEST / "tile" / "tile-and-fuse.mlir",
    ),
    ("tile-decompose-conv", TEST / "tile" / "decompose-conv.mlir"),
    ("tile-vectorize{machine=davinci}", TEST / "tile" / "vectorize.mlir"),
    ("tile-to-loop{machine=davinci}", TEST / "loop" / "tile-to-loop.mlir"),
    ("graph-fold-batch-norm", TEST / "graph" / "fold-batch-norm.mlir"),
    ("graph-canonicalize", TEST / "graph" / "canonicalize.mlir"),
]


def _chunks(path: Path) -> list[str]:
    return [chunk for chunk in path.read_text().split("// -----") if "func.func" in chunk]


def _unlocated(module) -> list:
    return [
        op
        for function in module.walk()
        if isinstance(function, func.FuncOp)
        for op in function.body.walk()
        if isinstance(op.location, UnknownLoc)
    ]


@pytest.mark.parametrize(("pipeline", "path"), CASES, ids=[c[0] for c in CASES])
def test_created_ops_are_located(pipeline, path):
    for chunk in _chunks(path):
        module = parse_source(default_context(), chunk, str(path))
        before = {id(op) for op in _unlocated(module)}
        apply_pipeline(module, pipeline)
        unknown = [op.name for op in _unlocated(module) if id(op) not in before]
        assert not unknown, f"{pipeline} leaves ops without a location: {sorted(set(unknown))}"
