"""`graph-space-to-depth`: rewrite a strided convolution over few input channels (ResNet's stem) as a
stride-1 convolution over the input's space-to-depth rearrangement, so that a matrix unit that
pads the reduction to a multiple of its K wastes less of it; docs/lowering.md says when it pays.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from ziggurat.dialects.graph import Conv2dOp, PadOp, ReshapeOp, TransposeOp, int_array, layout_of
from ziggurat.locations import Located
from ziggurat.machine import Machine, load_machine
from ziggurat.transforms.loop.memory_routes import route

_BLOCKS_AFTER_CHANNELS = (0, 1, 3, 5, 2, 4)
"""`N x C x H/sh x sh x W/sw x sw` -> `N x C x sh x sw x H/sh x W/sw` (and so for the weights' O x C x ...)."""


def _padded_work(channels: int, kernel_h: int, kernel_w: int, k_multiple: int) -> int:
    """Multiply-accumulates per output element once the matrix unit pads the channels to `k_multiple`."""
    return math.ceil(channels / k_multiple) * k_multiple * kernel_h * kernel_w


def _to_depth(value: SSAValue, sh: int, sw: int, rewriter: PatternRewriter) -> SSAValue:
    """`value` (`A x C x H x W`) as `A x (C * sh * sw) x H/sh x W/sw`, block rows then columns inside each channel."""
    a, c, h, w = value.type.get_shape()
    element = value.type.get_element_type()
    blocks = ReshapeOp(value, TensorType(element, [a, c, h // sh, sh, w // sw, sw]))
    moved = TransposeOp.build_inferred(
        [blocks.output], {"perm": int_array(list(_BLOCKS_AFTER_CHANNELS))}
    )
    merged = ReshapeOp(moved.output, TensorType(element, [a, c * sh * sw, h // sh, w // sw]))
    rewriter.insert_op([blocks, moved, merged])
    return merged.output


def rearranges(machine: Machine) -> bool:
    """Whether DMAs connect global memory and the vector unit's space both ways, directly or
    through other spaces (tensorcore: gm -> smem -> rf, rf -> gm), so that the input's
    rearrangement can be lowered."""
    outer, inner = machine.global_memory().name, machine.vector.spaces[0]
    return all(route(machine, a, b) is not None for a, b in ((outer, inner), (inner, outer)))


def matrix_k(machine: Machine, conv: Conv2dOp) -> int | None:
    """The K the machine's matrix unit pads the conv's reduction to, or None if it has no rate for its type."""
    element = str(conv.input.type.get_element_type())
    unit = machine.matrix
    pairs = [pair for pair in unit.dtypes if pair[0] == element]
    if not pairs:
        return None
    return unit.instruction_shape(*pairs[0])[2]


@dataclass(frozen=True)
class SpaceToDepthConv(RewritePattern):
    """A strided conv over few channels -> the same conv over the space-to-depth input (see `GraphSpaceToDepthPass`)."""

    k_multiple: int
    machine: Machine | None = None

    @op_type_rewrite_pattern
    def match_and_rewrite(self, conv: Conv2dOp, rewriter: PatternRewriter, /):
        if layout_of(conv.properties) != "NCHW" or conv.groups.value.data != 1:
            return
        k_multiple = self.k_multiple if self.machine is None else matrix_k(self.machine, conv)
        if k_multiple is None:
            return
        if list(conv.dilations.get_values()) != [1, 1]:
            return
        sh, sw = conv.strides.get_values()
        if sh * sw == 1:
            return
        _, channels, height, width = conv.input.type.get_shape()
        _, _, out_h, out_w = conv.output.type.get_shape()
        _, _, kernel_h, kernel_w = conv.weight.type.get_shape()
        if height % sh or width % sw:
            return
        top, left, _, _ = conv.pads.get_values()
        shift_h, shift_w = (
            -top % sh,
            -left % sw,
        )  # zero taps in front: the top (left) padding in whole blocks
        blocks_h, blocks_w = (
            math.ceil((shift_h + kernel_h) / sh),
            math.ceil((shift_w + kernel_w) / sw),
        )
        new_top, new_left = (top + shift_h) // sh, (left + shift_w) // sw
        # the rows after the input that give the same number of output rows
        new_bottom = out_h - 1 + blocks_h - height // sh - new_top
        new_right = out_w - 1 + blocks_w - width // sw - new_left
        if new_bottom < 0 or new_right < 0:
            return
        old = _padded_work(channels, kernel_h, kernel_w, k_multiple)
        if _padded_work(channels * sh * sw, blocks_h, blocks_w, k_multiple) >= old:
            return
        weight_pads = [
            0,
            0,
            shift_h,
            shift_w,
            0,
            0,
            blocks_h * sh - kernel_h - shift_h,
            blocks_w * sw - kernel_w - shift_w,
        ]
        taps = PadOp.build_inferred([conv.weight], {"pads": int_array(weight_pads)})
        rewriter.insert_op(taps)
        weight = _to_depth(taps.output, sh, sw, rewriter)
        bias = [] if conv.bias is None else [conv.bias]
        properties = {"pads": int_array([new_top, new_left, new_bottom, new_right])}
        rewriter.replace_op(
            conv,
            Conv2dOp.build_inferred(
                [_to_depth(conv.input, sh, sw, rewriter), weight, *bias], properties
            ),
        )


@dataclass(frozen=True)
class GraphSpaceToDepthPass(ModulePass):
    """Rewrite strided convs over few input channels as stride-1 convs over the space-to-depth input.

    Each `sh x sw` block of input pixels moves into the channels (`C` becomes
    `C * sh * sw`) and the kernel with it (`KH` becomes `ceil(KH / sh)`): the input
    is reshaped to `N x C x H/sh x sh x W/sw x sw`, transposed to put the block
    positions after the channels and reshaped to `N x (C * sh * sw) x H/sh x W/sw`;
    the weights the same way, after zero taps pad the kernel to a multiple of the
    stride. Zero taps in front make the top (left) padding whole blocks; rows read
    through zero taps are never used, so the sums are unchanged for finite inputs (an
    infinity or NaN read through a zero tap makes its output NaN, as under fast-math
    rewrites: the pass assumes finite activations).

        %y = graph.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 3, 3, 3, 3>}
            : (tensor<1x3x16x16xf32>, tensor<8x3x7x7xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>

    becomes (the weights' four ops fold away when they are constants)

        %wp = graph.pad %w {pads = array<i64: 0, 0, 1, 1, 0, 0, 0, 0>} : tensor<8x3x7x7xf32> -> tensor<8x3x8x8xf32>
        ... %ws : tensor<8x12x4x4xf32> ...
        %x6 = graph.reshape %x : tensor<1x3x16x16xf32> -> tensor<1x3x8x2x8x2xf32>
        %xt = graph.transpose %x6 {perm = array<i64: 0, 1, 3, 5, 2, 4>} : ... -> tensor<1x3x2x2x8x8xf32>
        %xs = graph.reshape %xt : tensor<1x3x2x2x8x8xf32> -> tensor<1x12x8x8xf32>
        %y = graph.conv2d %xs, %ws, %b {pads = array<i64: 2, 2, 1, 1>} : (...) -> tensor<1x8x8x8xf32>

    It applies to an NCHW, ungrouped, undilated conv with a stride above 1 whose
    input height and width are multiples of the strides, and only where it shrinks
    the padded work, `ceil(C * sh * sw / k) * KH/sh * KW/sw < ceil(C / k) * KH * KW`.

    Option `k-multiple` (default 16): `k`, the multiple of channels the matrix unit
    pads a reduction to. Option `machine` (a preset or TOML file) takes `k` from the
    machine's matrix unit instead, and rewrites only where DMAs connect global memory
    and the vector unit's space both ways, as the input's rearrangement goes through it.
    """

    name = "graph-space-to-depth"

    k_multiple: int = 16
    """Channels the matrix unit's reduction is padded to a multiple of (without `machine`)."""
    machine: str | None = None
    """The machine whose matrix unit and DMA paths decide (see `GraphSpaceToDepthPass`)."""

    def __post_init__(self):
        if self.k_multiple < 1:  # the driver reports the ValueError as invalid options
            raise ValueError(f"k-multiple must be >= 1, got {self.k_multiple}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        machine = None if self.machine is None else load_machine(self.machine)
        if machine is not None and not rearranges(machine):
            return
        PatternRewriteWalker(Located(SpaceToDepthConv(self.k_multiple, machine))).rewrite_module(op)
