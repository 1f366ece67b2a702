"""`tile-record-useful-work`: the multiply-accumulates the model asks of the matrix unit, counted on the
whole-layer contractions before tiling pads them, and kept on the module for the run's report
(docs/lowering.md, section 3; docs/performance.md, "The report").
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, ModuleOp, i64
from xdsl.passes import ModulePass

from ziggurat.diagnostics import error_at
from ziggurat.ir.useful_work import (
    USEFUL_MACS_ATTR,
    contraction_macs,
    contraction_pair,
    is_static,
    runs_on_matrix_unit,
)


@dataclass(frozen=True)
class TileRecordUsefulWorkPass(ModulePass):
    """Record the multiply-accumulates of the matrix-unit contractions as the module attribute
    `ziggurat.useful_macs`, per input -> output element type pair.

    Run right after `graph-to-tile`, when each contraction is a whole layer: later
    passes pad tiles to the matrix unit's instruction shape and split layers, so the
    MACs the run executes (`TimingStats.macs`) grow with that waste, while these are
    the MACs the model asks for (a conv's `N * OC * OH * OW * IC/groups * KH * KW`).
    The run's report bounds the run by them (its useful roofline). A depthwise conv
    runs on the vector unit and is not counted; a module without contractions gets
    no attribute, and one that has it already is recounted. A contraction with a
    dynamic shape is refused.

        builtin.module {
          ... linalg.matmul ins(%a, %b : tensor<100x64xf16>, tensor<64x30xf16>) outs(%c : tensor<100x30xf32>) ...
        }

    becomes

        builtin.module attributes {ziggurat.useful_macs = {"f16->f32" = 192000 : i64}} {
          ...
        }
    """

    name = "tile-record-useful-work"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        counts: dict[str, int] = defaultdict(int)
        for inner in op.walk():
            if not runs_on_matrix_unit(inner):
                continue
            if not is_static(inner):
                raise error_at(
                    inner,
                    f"{self.name}: cannot count the work of a contraction with a dynamic shape",
                )
            counts[contraction_pair(inner)] += contraction_macs(inner)
        if counts:
            op.attributes[USEFUL_MACS_ATTR] = DictionaryAttr(
                {pair: IntegerAttr(macs, i64) for pair, macs in sorted(counts.items())}
            )
        else:
            op.attributes.pop(USEFUL_MACS_ATTR, None)
