"""`graph-integer-qdq`: a QDQ convolution or matrix product (DequantizeLinear of the input and of
constant weights, a float Conv, Gemm or MatMul, an optional Relu, QuantizeLinear) as an integer one:
int8 operands, exact int32 sums, and the rescaling in one float epilogue.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import Float32Type, IntegerType, ModuleOp, Signedness, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from ziggurat.dialects.graph import (
    AddOp,
    CastOp,
    ConstantOp,
    Conv2dOp,
    DequantizeOp,
    GemmOp,
    GraphOp,
    MatMulOp,
    MulOp,
    QuantizeOp,
    ReluOp,
    ReshapeOp,
    SubOp,
    ints_of,
    window_geometry,
)
from ziggurat.ir.tensor_constants import constant_array
from ziggurat.locations import Located
from ziggurat.machine import Machine, load_machine

I8 = IntegerType(8)
UI8 = IntegerType(8, Signedness.UNSIGNED)
I32 = IntegerType(32)
F32 = Float32Type()

ACCUMULATOR_LIMIT = 2**31
"""A rewritten product's int32 sum (with its corrections) must stay below this in magnitude."""


def _through_copies(value: SSAValue) -> SSAValue:
    """`value` before the reshapes to its own type (the ONNX importer names values with them)."""
    while isinstance(value.owner, ReshapeOp) and value.owner.input.type == value.type:
        value = value.owner.input
    return value


def _sole_use(value: SSAValue) -> Operation | None:
    """The one op reading `value` (once), else None."""
    uses = list(value.uses)
    return uses[0].operation if len(uses) == 1 else None


def _single_path(start: SSAValue, end: Operation) -> list[Operation] | None:
    """The ops from `start`'s one user to `end`, each the sole user of the one before, else None."""
    path, value = [], start
    while (user := _sole_use(value)) is not None:
        path.append(user)
        if user is end:
            return path
        if len(user.results) != 1:
            return None
        value = user.results[0]
    return None


def _eight_bit(value: SSAValue) -> bool:
    return value.type.get_element_type() in (I8, UI8)


@dataclass
class Quantized:
    """An operand as DequantizeLinear reads it: integers `q` (i8 or ui8), `scale` and `zero_point`
    (arrays; per tensor, or per channel along `axis`)."""

    q: SSAValue
    scale: np.ndarray
    zero_point: np.ndarray
    axis: int

    @property
    def per_tensor(self) -> bool:
        return self.scale.size == 1


def _dequantized(value: SSAValue) -> Quantized | None:
    """`value` as a DequantizeLinear of 8-bit integers with constant f32 parameters, else None."""
    op = _through_copies(value).owner
    if not isinstance(op, DequantizeOp) or not _eight_bit(op.input):
        return None
    scale, zero_point = constant_array(op.scale), constant_array(op.zero_point)
    if scale is None or zero_point is None or scale.dtype != np.float32:
        return None
    rank = len(op.input.type.get_shape())
    return Quantized(op.input, scale.reshape(-1), zero_point.reshape(-1), op.axis.value.data % rank)


def _centred(values: np.ndarray, unsigned: bool) -> np.ndarray:
    """8-bit integers as int64, moved to int8's range when unsigned (u - 128: their differences
    with the zero point, equally moved, are unchanged)."""
    return values.astype(np.int64) - (128 if unsigned else 0)


@dataclass(frozen=True)
class Contraction:
    """The geometry of a matched Conv, Gemm or MatMul: where its weights' output channels lie and how
    a per-channel array broadcasts over its result."""

    op: Conv2dOp | GemmOp | MatMulOp
    x: SSAValue
    w: SSAValue
    bias: SSAValue | None

    @property
    def channel_axis(self) -> int:
        """The axis of the weights holding the output channels."""
        if isinstance(self.op, Conv2dOp):
            return 0
        if isinstance(self.op, GemmOp):
            return 0 if self.op.trans_b.value.data else 1
        return 1

    def per_channel_shape(self, channels: int) -> list[int]:
        if isinstance(self.op, Conv2dOp):
            return [1, channels, 1, 1]
        return [channels]

    def reduction_sums(self, w: np.ndarray) -> np.ndarray:
        """For each output channel and output position, the sum of the weights its window reads
        inside the input (a padded conv's border windows read fewer): broadcastable to the result."""
        if not isinstance(self.op, Conv2dOp):
            return w.sum(axis=1 - self.channel_axis)
        strides, pads, dilations = (
            ints_of(self.op.properties, name) for name in ("strides", "pads", "dilations")
        )
        _, _, h, width = self.x.type.get_shape()
        o, _, kh, kw = w.shape
        taps = w.sum(axis=1)  # [O, kh, kw]
        (oh, ow), _ = window_geometry((h, width), (kh, kw), strides, dilations, pads, False)

        def inside(out: int, size: int, kernel: int, axis: int) -> np.ndarray:
            rows = np.arange(out)[:, None] * strides[axis] - pads[axis]
            at = rows + np.arange(kernel)[None, :] * dilations[axis]
            return ((at >= 0) & (at < size)).astype(np.int64)

        sums = np.einsum("ai,bj,cij->cab", inside(oh, h, kh, 0), inside(ow, width, kw, 1), taps)
        if (sums == sums[:, :1, :1]).all():
            return sums[:, 0, 0].reshape(1, o, 1, 1)
        return sums.reshape(1, o, oh, ow)


def _contraction(value: SSAValue) -> Contraction | None:
    op = value.owner
    if isinstance(op, Conv2dOp) and op.layout.data == "NCHW":
        return Contraction(op, op.input, op.weight, op.bias)
    if isinstance(op, GemmOp):
        alpha, beta = op.alpha.value.data, op.beta.value.data
        if op.trans_a.value.data or alpha != 1 or (op.c is not None and beta != 1):
            return None
        return Contraction(op, op.a, op.b, op.c)
    if isinstance(op, MatMulOp) and len(op.rhs.type.get_shape()) == 2:
        if len(op.lhs.type.get_shape()) < 2:
            return None
        return Contraction(op, op.lhs, op.rhs, None)
    return None


def _bias_integers(bias: SSAValue, scale: np.ndarray, channels: int) -> np.ndarray | None:
    """The int32 bias `q` with DequantizeLinear(q, scale, 0) equal to the bias, per output channel
    (a constant float bias whose values are such products too), else None."""
    op = _through_copies(bias).owner
    if isinstance(op, DequantizeOp) and op.input.type.get_element_type() == I32:
        q, bias_scale = constant_array(op.input), constant_array(op.scale)
        zero_point = constant_array(op.zero_point)
        if q is None or bias_scale is None or zero_point is None or zero_point.any():
            return None
        bias_scale = np.broadcast_to(bias_scale.reshape(-1), (channels,))
        # The bias scale is x_scale * w_scale in f32, as quantize_static writes it.
        if (
            bias_scale.dtype != np.float32
            or bias_scale.view(np.int32).tolist()
            != np.broadcast_to(scale, (channels,)).view(np.int32).tolist()
        ):
            return None
        return np.broadcast_to(q.reshape(-1), (channels,)).astype(np.int64)
    values = None if isinstance(op, DequantizeOp) else _constant_bias(bias, channels)
    if values is None:
        return None
    q = np.rint(values.astype(np.float64) / scale.astype(np.float64))
    if not np.isfinite(q).all() or (np.abs(q) >= 2**24).any():
        return None
    if (q.astype(np.float32) * scale).view(np.int32).tolist() != values.view(np.int32).tolist():
        return None
    return q.astype(np.int64)


def _constant_bias(bias: SSAValue, channels: int) -> np.ndarray | None:
    """A constant f32 bias (or a DequantizeLinear of constants: the f32 values it defines), per
    output channel, else None."""
    op = _through_copies(bias).owner
    if isinstance(op, DequantizeOp):
        operands = [constant_array(v) for v in (op.input, op.scale, op.zero_point)]
        values = None if any(a is None for a in operands) else op.evaluate(*operands)[0]
    else:
        values = constant_array(bias)
    if values is None or values.dtype != np.float32 or values.size not in (1, channels):
        return None
    return np.ascontiguousarray(np.broadcast_to(values.reshape(-1), (channels,)))


@dataclass(frozen=True)
class IntegerQDQ(RewritePattern):
    """QuantizeLinear([Relu](Conv | Gemm | MatMul(DequantizeLinear(x), DequantizeLinear(w) [, bias])))
    -> QuantizeLinear([Relu](f32(int32 product + correction) * x_scale * w_scale))."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, quantize: QuantizeOp, rewriter: PatternRewriter, /):
        y_scale, y_zero_point = constant_array(quantize.scale), constant_array(quantize.zero_point)
        if y_scale is None or y_zero_point is None or y_scale.size != 1:
            return
        value = _through_copies(quantize.input)
        relu = isinstance(value.owner, ReluOp)
        if relu:
            value = _through_copies(value.owner.input)
        contraction = _contraction(value)
        if contraction is None or value.type.get_element_type() != F32:
            return
        path = _single_path(value, quantize)
        if path is None:
            return
        x, w = _dequantized(contraction.x), _dequantized(contraction.w)
        if x is None or w is None or not x.per_tensor:
            return
        w_q = constant_array(w.q)
        if w_q is None or not (w.per_tensor or w.axis == contraction.channel_axis):
            return
        channels = w_q.shape[contraction.channel_axis]
        w_ints = _centred(w_q, w.q.type.get_element_type() == UI8)
        w_zero = _centred(
            np.broadcast_to(w.zero_point, (channels,)), w.q.type.get_element_type() == UI8
        )
        x_zero = int(_centred(x.zero_point, x.q.type.get_element_type() == UI8)[0])
        scale = np.float32(x.scale[0]) * np.broadcast_to(w.scale, (channels,)).astype(np.float32)
        bias = np.zeros(channels, np.int64)
        float_bias = None
        if contraction.bias is not None:
            bias = _bias_integers(contraction.bias, scale, channels)
            if bias is None:
                # A float bias that is no integer multiple of the scale (TensorRT-style QDQ keeps
                # the bias float): added to the rescaled sum in the f32 epilogue.
                float_bias = _constant_bias(contraction.bias, channels)
                if float_bias is None:
                    return
                bias = np.zeros(channels, np.int64)
        channel_shape = [1] * w_ints.ndim
        channel_shape[contraction.channel_axis] = channels
        w_zero_full = np.broadcast_to(w_zero.reshape(channel_shape), w_ints.shape)
        # sum (x - zx)(w - zw) = sum x w - sum x zw - zx sum (w - zw), the sums over the window's
        # positions inside the input (padding is a dequantized 0, i.e. x = zx).
        correction = -x_zero * contraction.reduction_sums(w_ints - w_zero_full)
        correction = correction + bias.reshape(contraction.per_channel_shape(channels))
        reduced = tuple(i for i in range(w_ints.ndim) if i != contraction.channel_axis)
        magnitude = 255 * np.abs(w_ints - w_zero_full).sum(axis=reduced) + np.abs(bias)
        if magnitude.max() >= ACCUMULATOR_LIMIT:
            return

        def insert(op: GraphOp) -> SSAValue:
            rewriter.insert_op(op)
            return op.results[0]

        def constant(array: np.ndarray) -> SSAValue:
            return insert(ConstantOp.from_array(array))

        x_i8 = self.signed_input(x, rewriter)
        x_wide = insert(CastOp(x_i8, TensorType(I32, x_i8.type.get_shape())))

        def product(weights: np.ndarray) -> SSAValue:
            op = contraction.op
            rhs = constant(weights.astype(np.int32))
            if isinstance(op, Conv2dOp):
                new = Conv2dOp.build_inferred([x_wide, rhs, None], dict(op.properties))
            elif isinstance(op, GemmOp):
                new = GemmOp.build_inferred([x_wide, rhs, None], dict(op.properties))
            else:
                new = MatMulOp.build_inferred([x_wide, rhs])
            return insert(new)

        accumulator = product(w_ints)
        if w_zero.any():
            accumulator = insert(SubOp.build_inferred([accumulator, product(w_zero_full)]))
        if correction.any():
            accumulator = insert(
                AddOp.build_inferred([accumulator, constant(correction.astype(np.int32))])
            )
        result = insert(CastOp(accumulator, TensorType(F32, accumulator.type.get_shape())))
        if scale.size == 1 or (scale == scale[0]).all():
            multiplier = np.asarray(scale[0], np.float32)
        else:
            multiplier = scale.reshape(contraction.per_channel_shape(channels))
        result = insert(MulOp.build_inferred([result, constant(multiplier)]))
        if float_bias is not None:
            shaped = float_bias.reshape(contraction.per_channel_shape(channels))
            result = insert(AddOp.build_inferred([result, constant(shaped)]))
        if relu:
            result = insert(ReluOp.build_inferred([result]))
        new = QuantizeOp.build_inferred(
            [result, quantize.scale, quantize.zero_point], {"axis": quantize.axis}
        )
        rewriter.replace_op(quantize, new)
        for dead in reversed([value.owner, *path[:-1]]):
            rewriter.erase_op(dead)

    @staticmethod
    def signed_input(x: Quantized, rewriter: PatternRewriter) -> SSAValue:
        """x's integers as int8: themselves, or u - 128 for uint8 (from the QuantizeLinear that
        makes them, given a zero point 128 lower, where there is one)."""
        q = _through_copies(x.q)
        if q.type.get_element_type() == I8:
            return q
        producer = q.owner
        if isinstance(producer, QuantizeOp):
            zero_point = constant_array(producer.zero_point)
            if zero_point is not None:
                shifted = ConstantOp.from_array((zero_point.astype(np.int16) - 128).astype(np.int8))
                rewriter.insert_op(shifted)
                op = QuantizeOp.build_inferred(
                    [producer.input, producer.scale, shifted.output], {"axis": producer.axis}
                )
                rewriter.insert_op(op)
                return op.output
        shape = q.type.get_shape()
        wide = CastOp(q, TensorType(I32, shape))
        half = ConstantOp.from_array(np.asarray(128, np.int32))
        moved = SubOp.build_inferred([wide.output, half.output])
        narrow = CastOp(moved.output, TensorType(I8, shape))
        rewriter.insert_op([wide, half, moved, narrow])
        return narrow.output


@dataclass(frozen=True)
class SignedActivations(RewritePattern):
    """QuantizeLinear to uint8 read only by DequantizeLinears (through reshapes to the same type)
    -> QuantizeLinear to int8 with the zero point 128 lower, the DequantizeLinears' zero points
    likewise: the same values, u - 128, which int8 arithmetic (and the matrix unit) takes."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, quantize: QuantizeOp, rewriter: PatternRewriter, /):
        zero_point = constant_array(quantize.zero_point)
        if quantize.output.type.get_element_type() != UI8 or zero_point is None:
            return
        copies, readers, pending = [], [], [quantize.output]
        while pending:
            for use in list(pending.pop().uses):
                user = use.operation
                if isinstance(user, ReshapeOp) and user.output.type == user.input.type:
                    copies.append(user)
                    pending.append(user.output)
                elif isinstance(user, DequantizeOp) and use.index == 0:
                    readers.append(user)
                else:
                    return
        reader_zero_points = [constant_array(r.zero_point) for r in readers]
        if any(z is None for z in reader_zero_points):
            return

        def shifted(array: np.ndarray) -> SSAValue:
            op = ConstantOp.from_array((array.astype(np.int16) - 128).astype(np.int8))
            rewriter.insert_op(op, InsertPoint.before(quantize))
            return op.output

        new = QuantizeOp.build_inferred(
            [quantize.input, quantize.scale, shifted(zero_point)], {"axis": quantize.axis}
        )
        rewriter.insert_op(new, InsertPoint.before(quantize))
        for reader, reader_zero_point in zip(readers, reader_zero_points):
            rewriter.replace_op(
                reader,
                DequantizeOp.build_inferred(
                    [new.output, reader.scale, shifted(reader_zero_point)], {"axis": reader.axis}
                ),
            )
        for copy in reversed(copies):
            rewriter.erase_op(copy)
        rewriter.erase_op(quantize)


def has_integer_matrix(machine: Machine) -> bool:
    """Whether the machine's matrix unit multiplies int8 into int32."""
    return ("i8", "i32") in machine.matrix.dtypes


@dataclass(frozen=True)
class GraphIntegerQDQPass(ModulePass):
    """Rewrite each QDQ convolution or matrix product into an integer one.

        %xf = graph.dequantize %xq, %sx, %zx : (tensor<1x8x8x8xui8>, ...) -> tensor<1x8x8x8xf32>
        %wf = graph.dequantize %wq, %sw, %zw {axis = 0} : (tensor<16x8x3x3xi8>, ...) -> ...
        %bf = graph.dequantize %bq, %sb, %zb {axis = 0} : (tensor<16xi32>, ...) -> ...
        %c = graph.conv2d %xf, %wf, %bf {pads = ...} : (...) -> tensor<1x16x8x8xf32>
        %r = graph.relu %c : tensor<1x16x8x8xf32>
        %y = graph.quantize %r, %sy, %zy : (...) -> tensor<1x16x8x8xui8>

    becomes, with x' = x - 128 in int8 (a QuantizeLinear of x's producer with zero point
    zx - 128) and the weights' constant integers w,

        %a = graph.conv2d cast<i32>(x'), w {pads = ...}      (exact int32 sums)
        %t = %a + correction                                 (zero points and bias, constant)
        %y = graph.quantize relu(f32(%t) * S), %sy, %zy      (S = f32(sx * sw) per channel)

    The correction is bq - zx' * (sum of w - zw over the window's positions inside the input)
    (per output position where padding makes border windows differ), and a nonzero weight zero
    point subtracts a second product with the weights' zero points. `graph-to-tile` reads the
    int32 operands as the int8 values they hold, so the matrix unit multiplies int8 into int32.

    The result is QuantizeLinear(f32(S * (acc + bq))): ONNX's definition with the dequantized
    products (x - zx) * sx * (w - zw) * sw and the bias bq * sb taken exactly rather than as f32
    roundings, summed exactly and rounded once to f32. It differs from a float evaluation only
    where that float value lies within its rounding error of a .5 midpoint of QuantizeLinear.

    Matched: per-tensor x parameters and per-tensor or per-output-channel weight parameters,
    constant (int8 or uint8, any zero points), an optional bias that is a DequantizeLinear of
    int32 with scale sx * sw and zero point 0 (or a float constant of such values: both are
    added to the int32 sum) or any other f32 constant (added in the epilogue, f32(%t) * S + b),
    an NCHW
    Conv, a Gemm without alpha, beta or trans_a, or a MatMul by a 2-D weight; each float value
    on the way to the QuantizeLinear read by nothing else. Anything else is left alone.

    Option `machine`: rewrite only where that machine's matrix unit multiplies int8 into int32.
    """

    name = "graph-integer-qdq"

    machine: str | None = None
    """A preset or machine TOML file whose matrix unit must have an int8 instruction."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.machine is not None and not has_integer_matrix(load_machine(self.machine)):
            return
        PatternRewriteWalker(Located(SignedActivations()), apply_recursively=False).rewrite_module(
            op
        )
        PatternRewriteWalker(Located(IntegerQDQ()), apply_recursively=False).rewrite_module(op)
