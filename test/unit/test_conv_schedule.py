"""How lower-to-npu schedules a convolution on davinci: its window points overlap on the cube.

tile-decompose-conv makes one contraction per window point in one loop body. Their l0a/l0b
operands come from two buffers used in turn (loop-promote-to-memory-space), and the tile sizes count
the rows as promote pads them, so that both buffers fit: the load of one point's operands runs
on mte1 while the cube multiplies the previous point's (before: one buffer, each load waited
for the previous instruction, and the cube was busy 61% of the run; now 69%).
"""

from __future__ import annotations

import re
from io import StringIO

from ziggurat.context import default_context
from ziggurat.interpreters.interpreter import find_function, run_function
from ziggurat.interpreters.npu_interpreter import run_npu
from ziggurat.machine import load_machine
from ziggurat.parsing import parse_source
from ziggurat.printing import Printer
from ziggurat.testing.differential import apply_pipeline, compare_outputs, level_inputs

CONV = """
func.func @main(%x: tensor<1x128x28x28xf16>, %w: tensor<128x128x3x3xf16>) -> tensor<1x128x28x28xf16> {
  %y = graph.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x128x28x28xf16>, tensor<128x128x3x3xf16>) -> tensor<1x128x28x28xf16>
  func.return %y : tensor<1x128x28x28xf16>
}
"""


def lowered():
    module = parse_source(default_context(), CONV, "conv.mlir")
    inputs = level_inputs(find_function(module), 0)
    expected = run_function(module, inputs)
    apply_pipeline(module, "lower-to-npu{machine=davinci}")
    return module, inputs, expected


def test_window_points_alternate_between_two_operand_buffers_and_keep_the_numerics():
    module, inputs, expected = lowered()
    stream = StringIO()
    Printer(stream=stream).print_op(module)
    text = stream.getvalue()
    reads = re.findall(r"npu\.mma (%\d+)\[[^\]]*\], (%\d+)\[", text)
    for operand, space in ((0, "l0a"), (1, "l0b")):
        turns = sum(a[operand] != b[operand] for a, b in zip(reads, reads[1:]))
        assert turns > len(reads) / 2, (
            f"consecutive matrix instructions read one {space} buffer: {reads}"
        )
    result = run_npu(module, load_machine("davinci"), inputs)
    assert all(c.ok for c in compare_outputs(expected, result.outputs, None, None, scale_atol=True))
    stats = result.stats
    assert stats.utilization("cube") > 0.65, f"cube busy {stats.utilization('cube'):.0%} of the run"
