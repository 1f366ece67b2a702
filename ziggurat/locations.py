"""Keeping source locations through rewrites (MLIR's convention: what a pass creates while
rewriting an op carries that op's location). Reports group instructions by location
(`interpreters/report.py`: cycles per ONNX node), and diagnostics point at it."""

from __future__ import annotations

from xdsl.dialects.builtin import LocationAttr, UnknownLoc
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern


def locate(op: Operation, location: LocationAttr) -> None:
    """Give `op` and the ops in its regions that have none `location`."""
    for inner in op.walk():
        if isinstance(inner.location, UnknownLoc):
            inner.location = location


class Located(RewritePattern):
    """`pattern`, with every op it inserts located at the op it matched."""

    def __init__(self, pattern: RewritePattern):
        self.pattern = pattern

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        location = op.location

        def handler(inserted: Operation) -> None:
            locate(inserted, location)

        rewriter.operation_insertion_handler.append(handler)
        try:
            self.pattern.match_and_rewrite(op, rewriter)
        finally:
            rewriter.operation_insertion_handler.remove(handler)
