"""`graph-fold-batch-norm`: fold inference batch norms into the convolution or GEMM before them, so that
the normalization costs nothing at run time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from ziggurat.dialects.graph import (
    AddOp,
    BatchNormOp,
    ConstantOp,
    Conv2dOp,
    GemmOp,
    MatMulOp,
    bool_attr,
    f32_attr,
    layout_of,
)
from ziggurat.dtypes import tensor_type_of, to_numpy_dtype
from ziggurat.ir.tensor_constants import constant_array, dense_elements
from ziggurat.locations import Located


def affine_of(bn: BatchNormOp) -> tuple[np.ndarray, np.ndarray] | None:
    """The batch norm's per-channel factor and shift in float64, or None if a statistic is not constant."""
    stats = [constant_array(v) for v in (bn.scale, bn.bias, bn.mean, bn.variance)]
    if any(s is None for s in stats):
        return None
    scale, bias, mean, variance = (s.astype(np.float64) for s in stats)
    factor = scale / np.sqrt(variance + float(bn.epsilon.value.data))
    return factor, bias - mean * factor


def constant_like(array: np.ndarray, like: TensorType, rewriter: PatternRewriter):
    """A new `graph.constant` holding `array` in `like`'s element type, inserted before the rewritten op."""
    value = array.astype(to_numpy_dtype(like.get_element_type()))
    op = ConstantOp(dense_elements(value, tensor_type_of(value)))
    rewriter.insert(op)
    return op.output


@dataclass(frozen=True)
class FoldBatchNorm(RewritePattern):
    """`batch_norm(conv2d | gemm | matmul [+ constant])` with constant parameters -> the producer with folded constants."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, bn: BatchNormOp, rewriter: PatternRewriter, /):
        producer = bn.input.owner
        if (
            not isinstance(producer, Conv2dOp | GemmOp | MatMulOp | AddOp)
            or not bn.input.has_one_use()
        ):
            return
        affine = affine_of(bn)
        if affine is None:
            return
        factor, shift = affine
        erased = [producer]
        if isinstance(producer, Conv2dOp):
            new = self.fold_conv(producer, factor, shift, rewriter)
        elif isinstance(producer, GemmOp):
            new = self.fold_gemm(producer, factor, shift, rewriter)
        elif isinstance(producer, MatMulOp):
            new = self.fold_matmul(producer, np.zeros(()), factor, shift, rewriter)
        else:
            found = self.matmul_and_addend(producer)
            if found is None:
                return
            matmul, addend = found
            new = self.fold_matmul(matmul, addend, factor, shift, rewriter)
            erased.append(matmul)
        if new is None:
            return
        rewriter.replace(bn, new)
        for op in erased:
            rewriter.erase(op)

    def fold_conv(self, conv: Conv2dOp, factor, shift, rewriter):
        if layout_of(conv.properties) != "NCHW":
            return None
        weight = constant_array(conv.weight)
        bias = constant_array(conv.bias) if conv.bias is not None else np.zeros_like(shift)
        if weight is None or bias is None:
            return None
        weight_type = conv.weight.type
        new_weight = weight.astype(np.float64) * factor.reshape(-1, *(1,) * (weight.ndim - 1))
        new_bias = bias.astype(np.float64) * factor + shift
        operands = [
            conv.input,
            constant_like(new_weight, weight_type, rewriter),
            constant_like(new_bias, weight_type, rewriter),
        ]
        return Conv2dOp.build_inferred(operands, dict(conv.properties))

    def fold_gemm(self, gemm: GemmOp, factor, shift, rewriter):
        b = constant_array(gemm.b)
        c = constant_array(gemm.c) if gemm.c is not None else np.zeros(())
        if b is None or c is None:
            return None
        trans_b = bool(gemm.trans_b.value.data)
        # op(b) is (K, N): scale its columns, i.e. b's rows when it is stored transposed.
        new_b = b.astype(np.float64) * (factor[:, None] if trans_b else factor[None, :])
        beta = float(gemm.beta.value.data)
        new_c = beta * c.astype(np.float64) * factor + shift
        properties = dict(gemm.properties) | {"beta": f32_attr(1.0)}
        operands = [
            gemm.a,
            constant_like(new_b, gemm.b.type, rewriter),
            constant_like(new_c, gemm.b.type, rewriter),
        ]
        return GemmOp.build_inferred(operands, properties)

    @staticmethod
    def matmul_and_addend(add: AddOp) -> tuple[MatMulOp, np.ndarray] | None:
        """The single-use matmul operand of `add` and the constant it is added to, if that is the shape of `add`."""
        for matmul_value, addend in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
            constant = constant_array(addend)
            if (
                isinstance(matmul_value.owner, MatMulOp)
                and matmul_value.has_one_use()
                and constant is not None
                # an addend that broadcasts the product to a larger shape is not a bias
                and matmul_value.type == add.output.type
            ):
                return matmul_value.owner, constant
        return None

    def fold_matmul(self, matmul: MatMulOp, addend: np.ndarray, factor, shift, rewriter):
        rhs = constant_array(matmul.rhs)
        if rhs is None or rhs.ndim != 2 or matmul.lhs.type.get_num_dims() != 2:
            return None
        new_rhs = rhs.astype(np.float64) * factor[None, :]
        new_c = addend.astype(np.float64) * factor + shift
        operands = [
            matmul.lhs,
            constant_like(new_rhs, matmul.rhs.type, rewriter),
            constant_like(new_c, matmul.rhs.type, rewriter),
        ]
        return GemmOp.build_inferred(operands, {"trans_b": bool_attr(False)})


@dataclass(frozen=True)
class GraphFoldBatchNormPass(ModulePass):
    """Fold inference `graph.batch_norm`s into the conv2d/gemm/matmul that feeds them.

    An inference batch norm is the per-channel affine map `y * f + s` with
    `f = scale / sqrt(variance + epsilon)` and `s = bias - mean * f` on axis 1. When
    its input is the only use of

    * an NCHW `graph.conv2d`: the weights' output channels are scaled by `f` and
      the bias becomes `conv_bias * f + s` (created if absent). An NHWC conv has
      its channels last, not on axis 1, and is left alone;
    * a `graph.gemm`: `op(b)`'s columns are scaled by `f` and `c` becomes
      `beta * c * f + s` with `beta = 1` (created if absent);
    * a 2-D `graph.matmul` with a constant rhs, alone or followed by a `graph.add`
      of a constant used only there: it becomes a `graph.gemm` with the scaled rhs
      and `c = s` (or `c = added * f + s`),

    and the weights, the existing bias and the four statistics are constants, the
    producer is rebuilt with new constants (computed in float64, stored in the
    original element type) and the batch norm disappears. Anything else is left
    unchanged.

        %c = graph.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
        %b = graph.batch_norm %c, %scale, %bias, %mean, %var {epsilon = 1.0 : f32} : (...) -> tensor<1x2x3x3xf32>

    becomes, with constant `%w`, `%scale`, `%bias`, `%mean`, `%var`,

        %w2 = graph.constant dense<2.000000e+00> : tensor<2x1x1x1xf32>
        %b2 = graph.constant dense<[-1.500000e+00, -1.000000e+00]> : tensor<2xf32>
        %c = graph.conv2d %x, %w2, %b2 : (...) -> tensor<1x2x3x3xf32>
    """

    name = "graph-fold-batch-norm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(Located(FoldBatchNorm())).rewrite_module(op)
