"""kept_dims: which dims a rank-reduced subview keeps (shared by loop-double-buffer and loop-to-npu)."""

from ziggurat.transforms.loop.buffers import kept_dims


def test_bias_view_keeps_its_leading_unit_dim():
    assert kept_dims([1, 128, 1, 1], [1, 128]) == [0, 1]


def test_drops_every_unit_dim_the_result_lacks():
    assert kept_dims([1, 128, 1, 1], [128]) == [1]
    assert kept_dims([1, 1, 32, 32], [32, 32]) == [2, 3]


def test_unreduced_view_keeps_all():
    assert kept_dims([1, 4, 1], [1, 4, 1]) == [0, 1, 2]
