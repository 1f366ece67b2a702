"""`graph-split-grouped-conv`: split a grouped convolution with several output channels per group into
one convolution per group, so that each tiles as an ordinary convolution.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from ziggurat.dialects.graph import (
    ConcatOp,
    Conv2dOp,
    SliceOp,
    i64_attr,
    int_array,
    layout_of,
    to_nchw,
)
from ziggurat.locations import Located


def _channel_slice(
    value: SSAValue, axis: int, start: int, size: int, rewriter: PatternRewriter
) -> SSAValue:
    """`value[start : start + size]` along `axis`, a `graph.slice` inserted before the rewritten op."""
    properties = {
        "starts": int_array([start]),
        "ends": int_array([start + size]),
        "axes": int_array([axis]),
    }
    op = SliceOp.build_inferred([value], properties)
    rewriter.insert(op)
    return op.output


@dataclass(frozen=True)
class SplitGroupedConv(RewritePattern):
    """`conv2d {groups = g}` with O / g >= `min_out_per_group` (and > 1) -> g convs on channel
    slices + `concat`."""

    min_out_per_group: int = 2

    @op_type_rewrite_pattern
    def match_and_rewrite(self, conv: Conv2dOp, rewriter: PatternRewriter, /):
        groups = conv.groups.value.data
        layout = layout_of(conv.properties)
        out_channels, in_per_group = to_nchw(conv.weight.type.get_shape(), layout)[:2]
        out_per_group = out_channels // groups
        if groups == 1 or out_per_group < max(2, self.min_out_per_group):
            return
        channel_axis = layout.index("C")
        properties = dict(conv.properties) | {"groups": i64_attr(1)}
        parts = []
        for g in range(groups):
            x = _channel_slice(conv.input, channel_axis, g * in_per_group, in_per_group, rewriter)
            w = _channel_slice(conv.weight, 0, g * out_per_group, out_per_group, rewriter)
            bias = (
                None
                if conv.bias is None
                else _channel_slice(conv.bias, 0, g * out_per_group, out_per_group, rewriter)
            )
            part = Conv2dOp.build_inferred([x, w, bias], properties)
            rewriter.insert(part)
            parts.append(part.output)
        rewriter.replace(conv, ConcatOp.build_inferred(parts, {"axis": i64_attr(channel_axis)}))


@dataclass(frozen=True)
class GraphSplitGroupedConvPass(ModulePass):
    """Split grouped convs with several output channels per group into one conv per group.

    `graph-to-tile` lowers a grouped conv as one contraction over (n, g, og, oh, ow)
    whose groups are a tile loop, so `graph-opt` keeps it whole (NCHW); this pass
    is for where that path does not lower yet (`graph-opt{layout=NHWC}` runs it) or
    where one conv per group is wanted. Split, each group is an ordinary conv on its
    slices of the input channels, the weights' and the bias' output channels, and
    `tile-to-loop` computes each straight into its slice of the concat; the IR grows
    with the number of groups. Depthwise convs (one output channel per group) are
    left alone, and so are convs with fewer than `min-out-per-group` output channels
    per group (default 2: every other grouped conv is split).

        %y = graph.conv2d %x, %w, %b {groups = 2 : i64}
            : (tensor<1x8x5x5xf32>, tensor<6x4x3x3xf32>, tensor<6xf32>) -> tensor<1x6x3x3xf32>

    becomes

        %x0 = graph.slice %x {starts = array<i64: 0>, ends = array<i64: 4>, axes = array<i64: 1>} : ...
        %w0 = graph.slice %w {starts = array<i64: 0>, ends = array<i64: 3>, axes = array<i64: 0>} : ...
        %b0 = graph.slice %b {starts = array<i64: 0>, ends = array<i64: 3>, axes = array<i64: 0>} : ...
        %y0 = graph.conv2d %x0, %w0, %b0 : (...) -> tensor<1x3x3x3xf32>
        ... the same for group 1 (channels 4..8 of %x, 3..6 of %w and %b) ...
        %y = graph.concat %y0, %y1 {axis = 1 : i64} : (...) -> tensor<1x6x3x3xf32>
    """

    name = "graph-split-grouped-conv"

    min_out_per_group: int = 2
    """Split only convs with at least this many output channels per group."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pattern = SplitGroupedConv(self.min_out_per_group)
        PatternRewriteWalker(Located(pattern)).rewrite_module(op)
