"""`graph-to-tile`: lower every `graph` op to structured ops on tensors (`linalg`, `tensor`, `arith`,
`math`), in forms whose iteration domains a tiling interface reads from the indexing maps, and which
upstream MLIR tools read too.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable
from dataclasses import dataclass

import ml_dtypes
import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, func, math, tensor
from xdsl.dialects.builtin import (
    AffineMapAttr,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter

from ziggurat.dialects import graph
from ziggurat.dialects.graph import (
    GraphOp,
    from_nchw,
    int_array,
    ints_of,
    lowest_value,
    to_nchw,
    window_geometry,
)
from ziggurat.dialects.tile import GROUP_ATTR, ROOT_ATTR
from ziggurat.dtypes import is_float, to_numpy_dtype
from ziggurat.interpreters.tensor_interpreter import SCALAR_FUNCTIONS, apply_scalar
from ziggurat.ir.contraction import contraction_dims, is_contraction
from ziggurat.ir.tensor_constants import elements_to_array, splat_value
from ziggurat.locations import Located, locate
from ziggurat.transforms.tile.builders import (
    PARALLEL,
    REDUCTION,
    Body,
    Emitter,
    collapse_shape,
    compute_type,
    dims,
    expand_shape,
    is_signless,
    reassociation,
    reassociation_groups,
    scalar_attr,
    shape_of,
    signless,
)

Lowering = Callable[[Emitter, GraphOp], SSAValue | list[SSAValue]]
"""One value per result of the op (a single one for single-result ops)."""
LOWERINGS: dict[type[GraphOp], Lowering] = {}


def lowers(*op_types: type[GraphOp]):
    def register(function: Lowering) -> Lowering:
        for op_type in op_types:
            LOWERINGS[op_type] = function
        return function

    return register


def element_type_of(value: SSAValue):
    return value.type.get_element_type()


def out_type(op: GraphOp) -> TensorType:
    return op.results[0].type


# --------------------------------------------------------------------------- #
# Scalar bodies
# --------------------------------------------------------------------------- #


def _float_or_int(b: Body, x: SSAValue, float_op, int_op, y: SSAValue) -> SSAValue:
    return b.add(float_op(x, y) if is_float(x.type) else int_op(x, y))


def maximum(b: Body, x: SSAValue, y: SSAValue) -> SSAValue:
    return _float_or_int(b, x, arith.MaximumfOp, arith.MaxSIOp, y)


def minimum(b: Body, x: SSAValue, y: SSAValue) -> SSAValue:
    return _float_or_int(b, x, arith.MinimumfOp, arith.MinSIOp, y)


def add(b: Body, x: SSAValue, y: SSAValue) -> SSAValue:
    return _float_or_int(b, x, arith.AddfOp, arith.AddiOp, y)


def sub(b: Body, x: SSAValue, y: SSAValue) -> SSAValue:
    return _float_or_int(b, x, arith.SubfOp, arith.SubiOp, y)


def mul(b: Body, x: SSAValue, y: SSAValue) -> SSAValue:
    return _float_or_int(b, x, arith.MulfOp, arith.MuliOp, y)


def div(b: Body, x: SSAValue, y: SSAValue) -> SSAValue:
    # divsi truncates toward zero, as the graph dialect's integer division.
    return _float_or_int(b, x, arith.DivfOp, arith.DivSIOp, y)


def const_like(b: Body, value: float, like: SSAValue) -> SSAValue:
    return b.constant(value, like.type)


def compare(b: Body, x: SSAValue, y: SSAValue, float_predicate: str, int_predicate: str):
    if is_float(x.type):
        return b.add(arith.CmpfOp(x, y, float_predicate))
    return b.add(arith.CmpiOp(x, y, int_predicate))


def sigmoid(b: Body, x: SSAValue) -> SSAValue:
    one = const_like(b, 1, x)
    e = b.add(math.ExpOp(b.add(arith.NegfOp(x))))
    return b.add(arith.DivfOp(one, b.add(arith.AddfOp(one, e))))


def clamp(b: Body, x: SSAValue, low: float | None, high: float | None) -> SSAValue:
    if low is not None:
        x = maximum(b, x, const_like(b, low, x))
    if high is not None:
        x = minimum(b, x, const_like(b, high, x))
    return x


def _f(attr) -> float:
    return attr.value.data


UNARY_MATH = {
    graph.SinOp: math.SinOp,
    graph.CosOp: math.CosOp,
    graph.TanOp: math.TanOp,
    graph.AsinOp: math.AsinOp,
    graph.AcosOp: math.AcosOp,
    graph.AtanOp: math.AtanOp,
    graph.SinhOp: math.SinhOp,
    graph.CoshOp: math.CoshOp,
    graph.AsinhOp: math.AsinhOp,
    graph.AcoshOp: math.AcoshOp,
    graph.AtanhOp: math.AtanhOp,
    graph.FloorOp: math.FloorOp,
    graph.CeilOp: math.CeilOp,
    graph.RoundOp: math.RoundEvenOp,
}
"""Unary graph ops that are one `math` op."""


def _unary_body(op: GraphOp) -> Callable[[Body, SSAValue], SSAValue]:
    """The scalar function of a unary elementwise op, on a compute-type value."""
    match op:
        case graph.ReluOp():
            return lambda b, x: maximum(b, x, const_like(b, 0, x))
        case graph.Relu6Op():
            return lambda b, x: clamp(b, x, 0, 6)
        case graph.LeakyReluOp():
            return lambda b, x: b.add(
                arith.SelectOp(
                    compare(b, x, const_like(b, 0, x), "oge", "sge"),
                    x,
                    mul(b, x, const_like(b, _f(op.alpha), x)),
                )
            )
        case graph.EluOp():

            def elu(b: Body, x: SSAValue) -> SSAValue:
                negative = b.add(math.ExpM1Op(minimum(b, x, const_like(b, 0, x))))
                scaled = mul(b, const_like(b, _f(op.alpha), x), negative)
                positive = compare(b, x, const_like(b, 0, x), "ogt", "sgt")
                return b.add(arith.SelectOp(positive, x, scaled))

            return elu
        case graph.GeluOp():

            def gelu(b: Body, x: SSAValue) -> SSAValue:
                half, one = const_like(b, 0.5, x), const_like(b, 1, x)
                if op.approximate.data == "tanh":
                    cube = mul(b, mul(b, x, x), x)
                    inner = add(b, x, mul(b, const_like(b, 0.044715, x), cube))
                    inner = mul(b, const_like(b, pymath.sqrt(2 / pymath.pi), x), inner)
                    gate = b.add(math.TanhOp(inner))
                else:
                    gate = b.add(math.ErfOp(div(b, x, const_like(b, pymath.sqrt(2), x))))
                return mul(b, mul(b, half, x), add(b, one, gate))

            return gelu
        case graph.SigmoidOp():
            return sigmoid
        case graph.TanhOp():
            return lambda b, x: b.add(math.TanhOp(x))
        case graph.SiluOp():
            return lambda b, x: mul(b, x, sigmoid(b, x))
        case graph.HardSigmoidOp():
            return lambda b, x: clamp(
                b,
                add(b, mul(b, const_like(b, _f(op.alpha), x), x), const_like(b, _f(op.beta), x)),
                0,
                1,
            )
        case graph.HardSwishOp():
            return lambda b, x: mul(
                b,
                x,
                clamp(b, add(b, mul(b, x, const_like(b, 1 / 6, x)), const_like(b, 0.5, x)), 0, 1),
            )
        case graph.SoftplusOp():
            # log(1 + e^x) = max(x, 0) + log1p(e^-|x|), which never overflows.
            return lambda b, x: add(
                b,
                maximum(b, x, const_like(b, 0, x)),
                b.add(math.Log1pOp(b.add(math.ExpOp(b.add(arith.NegfOp(b.add(math.AbsFOp(x)))))))),
            )
        case graph.ClipOp():
            low = None if op.min is None else _f(op.min)
            high = None if op.max is None else _f(op.max)
            return lambda b, x: clamp(b, x, low, high)
        case graph.ExpOp():
            return lambda b, x: b.add(math.ExpOp(x))
        case graph.LogOp():
            return lambda b, x: b.add(math.LogOp(x))
        case graph.SqrtOp():
            return lambda b, x: b.add(math.SqrtOp(x))
        case graph.RsqrtOp():
            return lambda b, x: b.add(math.RsqrtOp(x))
        case graph.ReciprocalOp():
            return lambda b, x: div(b, const_like(b, 1, x), x)
        case graph.NegOp():
            return lambda b, x: (
                b.add(arith.NegfOp(x)) if is_float(x.type) else sub(b, const_like(b, 0, x), x)
            )
        case graph.AbsOp():
            return lambda b, x: b.add(math.AbsFOp(x) if is_float(x.type) else math.AbsIOp(x))
        case graph.ErfOp():
            return lambda b, x: b.add(math.ErfOp(x))
        case graph.BitwiseNotOp():
            return lambda b, x: b.add(arith.XOrIOp(x, const_like(b, -1, x)))
    function = UNARY_MATH.get(type(op))
    if function is not None:
        return lambda b, x: b.add(function(x))
    raise AssertionError(f"{op.name} is not a unary elementwise op")


def _binary_body(op: GraphOp) -> Callable[[Body, SSAValue, SSAValue], SSAValue]:
    match op:
        case graph.AddOp():
            return add
        case graph.SubOp():
            return sub
        case graph.MulOp():
            return mul
        case graph.DivOp():
            return div
        case graph.MaxOp():
            return maximum
        case graph.MinOp():
            return minimum
        case graph.PowOp():
            return lambda b, x, y: b.add(math.PowFOp(x, y))
        case graph.ModOp():
            return lambda b, x, y: integer_mod(b, x, y, bool(op.fmod.value.data))
        case graph.BitwiseAndOp():
            return lambda b, x, y: b.add(arith.AndIOp(x, y))
        case graph.BitwiseOrOp():
            return lambda b, x, y: b.add(arith.OrIOp(x, y))
        case graph.BitwiseXorOp():
            return lambda b, x, y: b.add(arith.XOrIOp(x, y))
        case graph.BitShiftOp():
            width = op.lhs.type.get_element_type().width.data
            return lambda b, x, y: bit_shift(b, x, y, op.direction.data == "left", width)
    raise AssertionError(f"{op.name} is not a binary elementwise op")


def integer_mod(b: Body, x: SSAValue, y: SSAValue, fmod: bool) -> SSAValue:
    # remsi has C's sign (the dividend's); Python's mod moves a nonzero remainder whose
    # sign differs from the divisor's by one divisor.
    remainder = b.add(arith.RemSIOp(x, y))
    if fmod:
        return remainder
    zero = const_like(b, 0, x)
    nonzero = b.add(arith.CmpiOp(remainder, zero, "ne"))
    signs_differ = b.add(
        arith.XOrIOp(
            b.add(arith.CmpiOp(remainder, zero, "slt")), b.add(arith.CmpiOp(y, zero, "slt"))
        )
    )
    adjust = b.add(arith.AndIOp(nonzero, signs_differ))
    return b.add(arith.SelectOp(adjust, b.add(arith.AddiOp(remainder, y)), remainder))


def bit_shift(b: Body, x: SSAValue, y: SSAValue, left: bool, width: int) -> SSAValue:
    """x shifted by y in the compute type, as the graph dialect's bit_shift in a `width`-bit
    type: sign-extended operands shift as the narrow ones do once truncated, but a shift
    outside [0, width) is the fill value rather than the wide type's result."""
    zero = const_like(b, 0, x)
    valid = b.add(
        arith.AndIOp(
            b.add(arith.CmpiOp(y, zero, "sge")),
            b.add(arith.CmpiOp(y, const_like(b, width, y), "slt")),
        )
    )
    amount = b.add(arith.SelectOp(valid, y, zero))
    if left:
        return b.add(arith.SelectOp(valid, b.add(arith.ShLIOp(x, amount)), zero))
    negative = b.add(arith.CmpiOp(x, zero, "slt"))
    fill = b.add(arith.SelectOp(negative, const_like(b, -1, x), zero))
    return b.add(arith.SelectOp(valid, b.add(arith.ShRSIOp(x, amount)), fill))


def check_signless(e: Emitter, op: Operation) -> None:
    for value in (*op.operands, *op.results):
        element_type = element_type_of(value)
        if not is_signless(element_type):
            raise e.fail(
                f"cannot lower '{op.name}' on {value.type} yet: arith and linalg bodies "
                "take signless integers (unsigned element types need a sign-aware lowering)"
            )


# --------------------------------------------------------------------------- #
# Elementwise
# --------------------------------------------------------------------------- #


@lowers(graph.ConstantOp)
def lower_constant(e: Emitter, op: graph.ConstantOp) -> SSAValue:
    value_type = op.value.type
    element_type = value_type.get_element_type()
    if is_signless(element_type):
        return e.emit(arith.ConstantOp(op.value))
    # An unsigned constant (a uint8 zero point) is its bits as a signless one, read back as unsigned.
    bits = DenseIntOrFPElementsAttr(
        TensorType(signless(element_type), value_type.get_shape()), op.value.data
    )
    return e.bitcast(e.emit(arith.ConstantOp(bits)), element_type)


def _elementwise(e: Emitter, op: GraphOp, operands, body, maps=None) -> SSAValue:
    """A parallel generic over the result's shape; `body` sees compute-type values and
    its result is converted to the result's element type."""
    result = out_type(op)
    element_type = result.get_element_type()

    def widened(b: Body, args):
        return [b.convert(body(b, *[b.widen(a) for a in args[: len(operands)]]), element_type)]

    return e.elementwise(operands, result.get_shape(), element_type, widened, maps)


@lowers(
    graph.ReluOp,
    graph.Relu6Op,
    graph.LeakyReluOp,
    graph.EluOp,
    graph.GeluOp,
    graph.SigmoidOp,
    graph.TanhOp,
    graph.SiluOp,
    graph.HardSigmoidOp,
    graph.HardSwishOp,
    graph.SoftplusOp,
    graph.ClipOp,
    graph.ExpOp,
    graph.LogOp,
    graph.SqrtOp,
    graph.RsqrtOp,
    graph.ReciprocalOp,
    graph.NegOp,
    graph.AbsOp,
    graph.ErfOp,
    graph.BitwiseNotOp,
    *UNARY_MATH,
)
def lower_unary(e: Emitter, op: GraphOp) -> SSAValue:
    return _elementwise(e, op, [op.input], _unary_body(op))


@lowers(
    graph.AddOp,
    graph.SubOp,
    graph.MulOp,
    graph.DivOp,
    graph.PowOp,
    graph.MaxOp,
    graph.MinOp,
    graph.ModOp,
    graph.BitwiseAndOp,
    graph.BitwiseOrOp,
    graph.BitwiseXorOp,
    graph.BitShiftOp,
)
def lower_binary(e: Emitter, op: GraphOp) -> SSAValue:
    if isinstance(op, graph.PowOp) and not is_float(element_type_of(op.lhs)):
        raise e.fail(
            "cannot lower integer 'graph.pow' yet: math.ipowi's negative exponents "
            "differ from the graph semantics"
        )
    if isinstance(op, graph.ModOp) and is_float(element_type_of(op.lhs)):
        raise e.fail("cannot lower floating-point 'graph.mod' yet: xDSL's arith has no remf")
    return _elementwise(e, op, [op.lhs, op.rhs], _binary_body(op))


@lowers(graph.PReluOp)
def lower_prelu(e: Emitter, op: graph.PReluOp) -> SSAValue:
    def prelu(b: Body, x: SSAValue, slope: SSAValue) -> SSAValue:
        negative = compare(b, x, const_like(b, 0, x), "oge", "sge")
        return b.add(arith.SelectOp(negative, x, mul(b, slope, x)))

    return _elementwise(e, op, [op.input, op.slope], prelu)


@lowers(graph.EqualOp, graph.GreaterOp, graph.LessOp)
def lower_compare(e: Emitter, op: graph.CompareOp) -> SSAValue:
    float_predicate, int_predicate = {
        graph.EqualOp: ("oeq", "eq"),
        graph.GreaterOp: ("ogt", "sgt"),
        graph.LessOp: ("olt", "slt"),
    }[type(op)]
    return _elementwise(
        e, op, [op.lhs, op.rhs], lambda b, x, y: compare(b, x, y, float_predicate, int_predicate)
    )


@lowers(graph.NotOp)
def lower_not(e: Emitter, op: graph.NotOp) -> SSAValue:
    return _elementwise(
        e, op, [op.input], lambda b, x: compare(b, x, const_like(b, 0, x), "oeq", "eq")
    )


@lowers(graph.WhereOp)
def lower_where(e: Emitter, op: graph.WhereOp) -> SSAValue:
    result = out_type(op)
    return e.elementwise(
        [op.condition, op.lhs, op.rhs],
        result.get_shape(),
        result.get_element_type(),
        lambda b, args: [b.add(arith.SelectOp(args[0], args[1], args[2]))],
    )


@lowers(graph.BatchNormOp)
def lower_batch_norm(e: Emitter, op: graph.BatchNormOp) -> SSAValue:
    rank = len(shape_of(op.input))
    channel = AffineMap(rank, 0, tuple(dims(1)))
    epsilon = _f(op.epsilon)

    def batch_norm(b: Body, x, scale, bias, mean, variance):
        eps = const_like(b, epsilon, x)
        factor = div(b, scale, b.add(math.SqrtOp(add(b, variance, eps))))
        return add(b, mul(b, sub(b, x, mean), factor), bias)

    operands = [op.input, op.scale, op.bias, op.mean, op.variance]
    return _elementwise(e, op, operands, batch_norm, [None, channel, channel, channel, channel])


@lowers(graph.CastOp)
def lower_cast(e: Emitter, op: graph.CastOp) -> SSAValue:
    result = out_type(op)
    target = result.get_element_type()
    target_dtype = to_numpy_dtype(target)
    source_type = element_type_of(op.input)
    saturate = target_dtype.itemsize == 1 and target_dtype.kind == "V" and is_float(source_type)

    def cast(b: Body, args):
        x = args[0]
        if saturate:
            # ONNX's saturating cast to fp8: clip to the largest finite value first.
            largest = float(ml_dtypes.finfo(target_dtype).max)
            x = clamp(b, b.widen(x), -largest, largest)
        converted = b.convert(
            x,
            signless(target),
            unsigned_source=not is_signless(source_type),
            unsigned_target=not is_signless(target),
        )
        return [converted]

    x = e.bitcast(op.input, signless(source_type))
    y = e.elementwise([x], result.get_shape(), signless(target), cast)
    return e.bitcast(y, target)


@lowers(graph.BitcastOp)
def lower_bitcast(e: Emitter, op: graph.BitcastOp) -> SSAValue:
    source, target = element_type_of(op.input), out_type(op).get_element_type()
    if IntegerType(1) not in (source, target):
        return e.bitcast(op.input, target)

    # i1 has no byte to reinterpret in arith: a bool's byte is 0 or 1, and a byte is true when not 0.
    def convert(b: Body, args):
        return [
            b.convert(
                args[0],
                signless(target),
                unsigned_source=True,
                unsigned_target=not is_signless(target),
            )
        ]

    y = e.elementwise(
        [e.bitcast(op.input, signless(source))], shape_of(op.input), signless(target), convert
    )
    return e.bitcast(y, target)


def _channel_map(op: graph.QuantizationOp, parameter: SSAValue) -> AffineMap:
    """How a per-tensor (shape [] or [1]) or per-channel ([C] along `axis`) scale or
    zero point indexes the input's iteration space."""
    rank = len(shape_of(op.input))
    shape = shape_of(parameter)
    if shape in ((), (1,)):
        return AffineMap(rank, 0, tuple(AffineExpr.constant(0) for _ in shape))
    return AffineMap(rank, 0, tuple(dims(op.axis.value.data % rank)))


QUANTIZE_BOUND = float(2**20)
"""Beyond this, x / scale saturates whatever the zero point (at most 16 bits)."""


@lowers(graph.QuantizeOp)
def lower_quantize(e: Emitter, op: graph.QuantizeOp) -> SSAValue:
    result = out_type(op)
    target = result.get_element_type()
    unsigned = not is_signless(target)
    info = np.iinfo(to_numpy_dtype(target))

    def quantize(b: Body, args):
        x, scale = b.widen(args[0]), b.widen(args[1])
        zero_point = b.convert(args[2], x.type, unsigned_source=unsigned)
        # Bounded first (any value beyond saturates all the same), so that what is rounded fits
        # an i32: the vector units round by converting to one.
        bounded = clamp(b, div(b, x, scale), -QUANTIZE_BOUND, QUANTIZE_BOUND)
        scaled = b.add(math.RoundEvenOp(bounded))
        shifted = clamp(b, add(b, scaled, zero_point), float(info.min), float(info.max))
        return [b.convert(shifted, signless(target), unsigned_target=unsigned)]

    zero_point = e.bitcast(op.zero_point, signless(target))
    maps = [None, _channel_map(op, op.scale), _channel_map(op, op.zero_point)]
    y = e.elementwise(
        [op.input, op.scale, zero_point], result.get_shape(), signless(target), quantize, maps
    )
    return e.bitcast(y, target)


@lowers(graph.DequantizeOp)
def lower_dequantize(e: Emitter, op: graph.DequantizeOp) -> SSAValue:
    result = out_type(op)
    target = result.get_element_type()
    quantized = element_type_of(op.input)
    unsigned = not is_signless(quantized)

    def dequantize(b: Body, args):
        scale = b.widen(args[1])
        x = b.convert(args[0], IntegerType(64), unsigned_source=unsigned)
        zero_point = b.convert(args[2], IntegerType(64), unsigned_source=unsigned)
        return [b.convert(mul(b, b.convert(sub(b, x, zero_point), scale.type), scale), target)]

    x = e.bitcast(op.input, signless(quantized))
    zero_point = e.bitcast(op.zero_point, signless(quantized))
    maps = [None, _channel_map(op, op.scale), _channel_map(op, op.zero_point)]
    return e.elementwise([x, op.scale, zero_point], result.get_shape(), target, dequantize, maps)


# --------------------------------------------------------------------------- #
# Contractions
# --------------------------------------------------------------------------- #


CONTRACTIONS = (graph.Conv2dOp, graph.MatMulOp, graph.GemmOp)


def is_int8_widening(op: Operation) -> bool:
    """A `graph.cast` of i8 to a wider signless integer whose every use is a contraction's
    multiplied operand: its lowering is left to the contraction, which reads the i8 values
    (`int8_operands`), as the matrix unit multiplies int8 into int32."""
    if not isinstance(op, graph.CastOp) or element_type_of(op.input) != IntegerType(8):
        return False
    target = out_type(op).get_element_type()
    if not isinstance(target, IntegerType) or not is_signless(target) or target.width.data <= 8:
        return False
    return all(isinstance(use.operation, CONTRACTIONS) and use.index < 2 for use in op.output.uses)


def _int8_value(e: Emitter, value: SSAValue) -> SSAValue | None:
    """The i8 tensor holding `value`'s integers: the source of a deferred widening, or a lowered
    integer constant whose elements all fit in i8; else None."""
    owner = value.owner
    if is_int8_widening(owner):
        return owner.input
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, DenseIntOrFPElementsAttr):
        if not isinstance(element_type_of(value), IntegerType):
            return None
        array = elements_to_array(owner.value)
        if array.size and (array.min() < -128 or array.max() > 127):
            return None
        return e.dense_constant(array.astype(np.int8))
    return None


def _lower_deferred(e: Emitter, value: SSAValue) -> SSAValue:
    """`value`, with a deferred widening lowered now (its contraction does not read i8)."""
    cast = value.owner
    if not is_int8_widening(cast):
        return value
    lowered = lower_cast(Emitter(e.rewriter, cast), cast)
    e.rewriter.replace_op(cast, [], [lowered])
    return lowered


def int8_operands(e: Emitter, lhs: SSAValue, rhs: SSAValue) -> tuple[SSAValue, SSAValue]:
    """An integer contraction's operands as the i8 tensors that hold them where both have one
    (the contraction body sign-extends them to its accumulator), else as they are."""
    narrow = [_int8_value(e, lhs), _int8_value(e, rhs)]
    if None not in narrow:
        return narrow[0], narrow[1]
    return _lower_deferred(e, lhs), _lower_deferred(e, rhs)


def contraction(
    e: Emitter,
    lhs: tuple[SSAValue, AffineMap],
    rhs: tuple[SSAValue, AffineMap],
    out_shape,
    iterators,
    accumulator_type,
) -> SSAValue:
    """sum over the reduction iterators of lhs * rhs, in `accumulator_type`; the output
    map is the identity over the parallel iterators, which come first."""
    rank = len(iterators)
    init = e.filled(out_shape, accumulator_type, 0)

    def multiply_add(b: Body, args):
        product = mul(b, b.convert(args[0], accumulator_type), b.convert(args[1], accumulator_type))
        return [add(b, args[2], product)]

    out_map = AffineMap(rank, 0, tuple(dims(*range(len(out_shape)))))
    return e.generic(
        [lhs, rhs], out_shape, accumulator_type, out_map, iterators, multiply_add, init
    )


def to_element_type(e: Emitter, value: SSAValue, element_type) -> SSAValue:
    if element_type_of(value) == element_type:
        return value
    shape = shape_of(value)
    return e.elementwise(
        [value], shape, element_type, lambda b, args: [b.convert(args[0], element_type)]
    )


@lowers(graph.MatMulOp)
def lower_matmul(e: Emitter, op: graph.MatMulOp) -> SSAValue:
    result = out_type(op)
    element_type = result.get_element_type()
    accumulator = compute_type(element_type)
    lhs, rhs = int8_operands(e, op.lhs, op.rhs)
    a, b = list(shape_of(lhs)), list(shape_of(rhs))
    if len(a) == 2 and len(b) == 2 and accumulator == element_type == element_type_of(lhs):
        init = e.filled(result.get_shape(), element_type, 0)
        return e.emit(linalg.MatmulOp([lhs, rhs], [init], [result]))
    # numpy's promotion of vectors, then batch dimensions broadcast through the maps.
    a_vector, b_vector = len(a) == 1, len(b) == 1
    a = [1, *a] if a_vector else a
    b = [*b, 1] if b_vector else b
    batch = np.broadcast_shapes(tuple(a[:-2]), tuple(b[:-2]))
    nb = len(batch)
    m, n, k = nb, nb + 1, nb + 2
    rank = nb + 3

    def operand_map(shape, rows, cols, drop):
        offset = nb - (len(shape) - 2)
        batch_results = [
            AffineExpr.constant(0)
            if size == 1 and batch[offset + i] != 1
            else AffineExpr.dimension(offset + i)
            for i, size in enumerate(shape[:-2])
        ]
        matrix = [AffineExpr.dimension(rows), AffineExpr.dimension(cols)]
        return AffineMap(
            rank, 0, tuple(batch_results + [r for i, r in enumerate(matrix) if i != drop])
        )

    lhs_map = operand_map(a, m, k, 0 if a_vector else None)
    rhs_map = operand_map(b, k, n, 1 if b_vector else None)
    full_shape = [*batch, a[-2], b[-1]]
    product = contraction(
        e,
        (lhs, lhs_map),
        (rhs, rhs_map),
        full_shape,
        [PARALLEL] * (nb + 2) + [REDUCTION],
        accumulator,
    )
    product = e.reshape(product, result.get_shape())
    return to_element_type(e, product, element_type)


@lowers(graph.GemmOp)
def lower_gemm(e: Emitter, op: graph.GemmOp) -> SSAValue:
    result = out_type(op)
    element_type = result.get_element_type()
    accumulator = compute_type(element_type)
    m, n, k = 0, 1, 2
    lhs = AffineMap(3, 0, tuple(dims(k, m) if op.trans_a.value.data else dims(m, k)))
    rhs = AffineMap(3, 0, tuple(dims(n, k) if op.trans_b.value.data else dims(k, n)))
    a, b = int8_operands(e, op.a, op.b)
    product = contraction(
        e,
        (a, lhs),
        (b, rhs),
        result.get_shape(),
        [PARALLEL, PARALLEL, REDUCTION],
        accumulator,
    )
    alpha, beta = _f(op.alpha), _f(op.beta)
    operands = [product] if op.c is None or beta == 0 else [product, op.c]

    def epilogue(b: Body, args):
        y = args[0]
        if alpha != 1:
            y = mul(b, y, const_like(b, alpha, y))
        if len(operands) == 2:
            c = b.convert(args[1], accumulator)
            y = add(b, y, c if beta == 1 else mul(b, c, const_like(b, beta, y)))
        return [b.convert(y, element_type)]

    return e.elementwise(operands, result.get_shape(), element_type, epilogue)


def transpose(e: Emitter, value: SSAValue, perm) -> SSAValue:
    shape = shape_of(value)
    init = e.empty([shape[p] for p in perm], element_type_of(value))
    return e.emit(linalg.TransposeOp(value, init, int_array(perm)))


def pad_constant(e: Emitter, value: SSAValue, low, high, fill) -> SSAValue:
    """`tensor.pad` with a constant (returns `value` when nothing is padded)."""
    if not any(low) and not any(high):
        return value
    element_type = element_type_of(value)
    shape = [d + lo + hi for d, lo, hi in zip(shape_of(value), low, high)]
    block = Block(arg_types=[IndexType()] * len(shape))
    constant = arith.ConstantOp(scalar_attr(fill, element_type))
    block.add_ops([constant, tensor.YieldOp(constant)])
    return e.emit(
        tensor.PadOp(
            value, [], [], Region(block), list(low), list(high), TensorType(element_type, shape)
        )
    )


def _conv_contraction(
    e: Emitter, x, w, groups, strides, dilations, out, accumulator, layout="NCHW"
) -> SSAValue:
    """A grouped convolution as one generic contraction over
    (n, g, og, oh, ow | c, kh, kw) in NCHW/OIHW, (n, oh, ow, g, og | c, kh, kw) in
    NHWC/OHWI, without the unit dims that need no loop: `g` for one group, `og` and
    `c` of a grouped conv when they are 1 (depthwise), so that the output is
    (n, o, oh, ow) or (n, oh, ow, o) and no reshape separates the conv from its
    epilogue; only a grouped conv with several output channels per group keeps
    (g, og) and collapses them."""
    nhwc = layout == "NHWC"
    n = shape_of(x)[0]
    o, cg, kh, kw = to_nchw(shape_of(w), layout)
    og = o // groups
    order = ("n", "oh", "ow", "g", "og") if nhwc else ("n", "g", "og", "oh", "ow")
    extents = {
        name: {"n": n, "g": groups, "og": og, "oh": out[0], "ow": out[1]}[name] for name in order
    }
    extents.update(c=cg, kh=kh, kw=kw)
    kept = [
        name
        for name in extents
        if not (name == "g" and groups == 1)
        and not (name == "og" and groups > 1 and og == 1)
        and not (name == "c" and groups > 1 and cg == 1)
    ]
    d = {name: AffineExpr.dimension(i) for i, name in enumerate(kept)}

    def index(outer: str, factor: int, inner: str) -> AffineExpr:
        """`outer * factor + inner` with missing dims left out (0 if both are)."""
        terms = [d[outer] * factor] if outer in d else []
        terms += [d[inner]] if inner in d else []
        return terms[0] + terms[1] if len(terms) == 2 else (terms or [AffineExpr.constant(0)])[0]

    rank = len(kept)
    rows, cols = (
        d["oh"] * strides[0] + d["kh"] * dilations[0],
        d["ow"] * strides[1] + d["kw"] * dilations[1],
    )
    channel, out_channel = index("g", cg, "c"), index("g", og, "og")
    if nhwc:
        x_map = AffineMap(rank, 0, (d["n"], rows, cols, channel))
        w_map = AffineMap(rank, 0, (out_channel, d["kh"], d["kw"], index("", 1, "c")))
    else:
        x_map = AffineMap(rank, 0, (d["n"], channel, rows, cols))
        w_map = AffineMap(rank, 0, (out_channel, index("", 1, "c"), d["kh"], d["kw"]))
    parallel = [name for name in kept if name in order]
    y = contraction(
        e,
        (x, x_map),
        (w, w_map),
        [extents[name] for name in parallel],
        [PARALLEL] * len(parallel) + [REDUCTION] * (rank - len(parallel)),
        accumulator,
    )
    return e.reshape(y, [n, *out, o] if nhwc else [n, o, *out])


@lowers(graph.Conv2dOp)
def lower_conv2d(e: Emitter, op: graph.Conv2dOp) -> SSAValue:
    layout = op.layout.data
    element_type = element_type_of(op.input)
    x, w = int8_operands(e, op.input, op.weight)
    accumulator = compute_type(element_type)
    strides, pads, dilations = (ints_of(op.properties, p) for p in ("strides", "pads", "dilations"))
    groups = op.groups.value.data
    n, _, h, width = to_nchw(shape_of(x), layout)
    o, _, kh, kw = to_nchw(shape_of(w), layout)
    (oh, ow), ends = window_geometry((h, width), (kh, kw), strides, dilations, pads, False)
    padded = pad_constant(
        e, x, from_nchw([0, 0, *pads[:2]], layout), from_nchw([0, 0, *ends], layout), 0
    )
    if groups == 1 and accumulator == element_type == element_type_of(x) and layout == "NCHW":
        init = e.filled([n, o, oh, ow], element_type, 0)
        y = e.emit(
            linalg.Conv2DNchwFchwOp(
                [padded, w],
                [init],
                [init.type],
                strides=DenseIntOrFPElementsAttr.from_list(TensorType(i64, [2]), strides),
                dilations=DenseIntOrFPElementsAttr.from_list(TensorType(i64, [2]), dilations),
            )
        )
    else:
        y = _conv_contraction(
            e, padded, w, groups, strides, dilations, (oh, ow), accumulator, layout
        )
    shape = shape_of(y)
    operands = [y] if op.bias is None else [y, op.bias]
    channel = from_nchw([0, 1, 2, 3], layout).index(1)
    maps = [None] if op.bias is None else [None, AffineMap(4, 0, tuple(dims(channel)))]
    if len(operands) > 1 or element_type_of(y) != element_type:

        def bias(b: Body, args):
            total = args[0] if len(args) == 2 else add(b, args[0], b.convert(args[1], args[0].type))
            return [b.convert(total, element_type)]

        y = e.elementwise(operands, shape, element_type, bias, maps)
    return y


# --------------------------------------------------------------------------- #
# Reductions, pooling and normalizations
# --------------------------------------------------------------------------- #


def reduce(e: Emitter, value: SSAValue, axes, kind: str, element_type=None) -> SSAValue:
    """`kind` ("sum", "prod" or "max") over `axes`, the reduced dimensions dropped; the result
    is in the compute type of `value` (or `element_type`). Several axes are reduced one
    at a time, the last first (a global pool sums w, then h): vector units reduce an
    innermost dimension, and a generic reducing one axis is what they lower."""
    accumulator = element_type or compute_type(element_type_of(value))
    axes = sorted(axes)
    if len(axes) > 1:
        partial = reduce(e, value, axes[-1:], kind, accumulator)
        return reduce(e, partial, axes[:-1], kind, accumulator)
    shape = shape_of(value)
    rank = len(shape)
    kept = [i for i in range(rank) if i not in axes]
    identity = {"sum": 0, "prod": 1, "max": lowest_value(to_numpy_dtype(accumulator))}[kind]
    init = e.filled([shape[i] for i in kept], accumulator, identity)
    combine = {"sum": add, "prod": mul, "max": maximum}[kind]
    iterators = [REDUCTION if i in axes else PARALLEL for i in range(rank)]

    def body(b: Body, args):
        return [combine(b, b.convert(args[0], accumulator), args[1])]

    return e.generic(
        [(value, AffineMap.identity(rank))],
        [shape[i] for i in kept],
        accumulator,
        AffineMap(rank, 0, tuple(dims(*kept))),
        iterators,
        body,
        init,
    )


def keep_dims(e: Emitter, value: SSAValue, shape) -> SSAValue:
    """Reinsert reduced dimensions as size 1 (expand_shape)."""
    groups = reassociation(shape, shape_of(value))
    return e.emit(expand_shape(value, groups, shape)) if shape_of(value) != tuple(shape) else value


def _reduced_map(rank: int, axes) -> AffineMap:
    return AffineMap(rank, 0, tuple(dims(*[i for i in range(rank) if i not in axes])))


def _finish_reduction(e: Emitter, op: GraphOp, total: SSAValue, axes, mean: bool) -> SSAValue:
    result = out_type(op)
    element_type = result.get_element_type()
    count = pymath.prod(shape_of(op.input)[a] for a in axes)

    def finish(b: Body, args):
        y = args[0]
        if mean:
            y = div(b, y, const_like(b, count, y))
        return [b.convert(y, element_type)]

    if mean or element_type_of(total) != element_type:
        total = e.elementwise([total], shape_of(total), element_type, finish)
    return keep_dims(e, total, result.get_shape())


@lowers(graph.ReduceSumOp, graph.ReduceMeanOp, graph.ReduceMaxOp, graph.ReduceProdOp)
def lower_reduce(e: Emitter, op: graph.ReduceOp) -> SSAValue:
    rank = len(shape_of(op.input))
    axes = op.reduced_axes(rank, op.properties)
    kind = {graph.ReduceMaxOp: "max", graph.ReduceProdOp: "prod"}.get(type(op), "sum")
    total = reduce(e, op.input, axes, kind)
    return _finish_reduction(e, op, total, axes, isinstance(op, graph.ReduceMeanOp))


@lowers(graph.ArgMaxOp)
def lower_arg_max(e: Emitter, op: graph.ArgMaxOp) -> SSAValue:
    x = op.input
    shape = shape_of(x)
    rank = len(shape)
    axis = op.axis.value.data % rank
    largest = reduce(e, x, [axis], "max")
    last = op.select_last_index.value.data
    # The first (or last) position that holds the maximum: a min- (max-) reduction of
    # the positions, with the others replaced by a value that never wins.
    never = -1 if last else shape[axis]
    kept = [shape[i] for i in range(rank) if i != axis]
    init = e.filled(kept, i64, never)

    def position(b: Body, args):
        is_largest = compare(b, b.widen(args[0]), args[1], "oeq", "eq")
        index = b.add(arith.IndexCastOp(b.add(linalg.IndexOp(axis)), i64))
        candidate = b.add(arith.SelectOp(is_largest, index, b.constant(never, i64)))
        return [(maximum if last else minimum)(b, candidate, args[2])]

    reduced = _reduced_map(rank, [axis])
    positions = e.generic(
        [(x, AffineMap.identity(rank)), (largest, reduced)],
        kept,
        i64,
        reduced,
        [REDUCTION if i == axis else PARALLEL for i in range(rank)],
        position,
        init,
    )
    return keep_dims(e, positions, out_type(op).get_shape())


@lowers(graph.CumSumOp, graph.CumProdOp)
def lower_cumsum(e: Emitter, op: graph.CumulativeOp) -> SSAValue:
    """A triangular reduction: y[.., i, ..] = sum (product) over j of x[.., j, ..] where j
    is before i (inclusive or not, from the start or the end)."""
    x = op.input
    shape = shape_of(x)
    rank = len(shape)
    axis = op.axis.value.data % rank
    element_type = element_type_of(x)
    accumulator = compute_type(element_type)
    exclusive, reverse = bool(op.exclusive.value.data), bool(op.reverse.value.data)
    predicate = {
        (False, False): "ule",
        (True, False): "ult",
        (False, True): "uge",
        (True, True): "ugt",
    }
    source = AffineMap(
        rank + 1, 0, tuple(AffineExpr.dimension(rank if i == axis else i) for i in range(rank))
    )
    identity = op.IDENTITY
    combine = mul if isinstance(op, graph.CumProdOp) else add
    init = e.filled(shape, accumulator, identity)

    def running_sum(b: Body, args):
        j, i = b.add(linalg.IndexOp(rank)), b.add(linalg.IndexOp(axis))
        counts = b.add(arith.CmpiOp(j, i, predicate[(exclusive, reverse)]))
        value = b.convert(args[0], accumulator)
        return [
            combine(
                b, b.add(arith.SelectOp(counts, value, const_like(b, identity, value))), args[1]
            )
        ]

    total = e.generic(
        [(x, source)],
        shape,
        accumulator,
        AffineMap(rank + 1, 0, tuple(dims(*range(rank)))),
        [PARALLEL] * rank + [REDUCTION],
        running_sum,
        init,
    )
    return to_element_type(e, total, element_type)


@lowers(graph.GlobalAvgPoolOp, graph.GlobalMaxPoolOp)
def lower_global_pool(e: Emitter, op: graph.GlobalPoolOp) -> SSAValue:
    rank = len(shape_of(op.input))
    axes = op.spatial_axes(rank, op.layout.data)
    kind = "max" if isinstance(op, graph.GlobalMaxPoolOp) else "sum"
    total = reduce(e, op.input, axes, kind)
    return _finish_reduction(e, op, total, axes, isinstance(op, graph.GlobalAvgPoolOp))


@lowers(graph.MaxPoolOp, graph.AvgPoolOp)
def lower_pool(e: Emitter, op: graph.Pool2dOp) -> SSAValue:
    x, layout = op.input, op.layout.data
    element_type = element_type_of(x)
    is_max = isinstance(op, graph.MaxPoolOp)
    # A maximum is exact in the element type; a sum is accumulated wider.
    accumulator = element_type if is_max else compute_type(element_type)
    kernel, strides, pads, dilations = op.window(op.properties)
    n, c, h, w = to_nchw(shape_of(x), layout)
    (oh, ow), ends = window_geometry(
        (h, w), kernel, strides, dilations, pads, op.ceil_mode.value.data
    )
    fill = lowest_value(to_numpy_dtype(element_type)) if is_max else 0
    padded = pad_constant(
        e, x, from_nchw([0, 0, *pads[:2]], layout), from_nchw([0, 0, *ends], layout), fill
    )
    # the output's dims in the layout's order, then the window's (kh, kw)
    d = [AffineExpr.dimension(i) for i in range(6)]
    dn, dc, dh, dw = to_nchw(d[:4], layout)
    window = from_nchw(
        [dn, dc, dh * strides[0] + d[4] * dilations[0], dw * strides[1] + d[5] * dilations[1]],
        layout,
    )
    shape = from_nchw([n, c, oh, ow], layout)
    identity = lowest_value(to_numpy_dtype(accumulator)) if is_max else 0
    init = e.filled(shape, accumulator, identity)
    combine = maximum if is_max else add
    # The window's shape enters as an operand, as in upstream's linalg.pooling_* ops, so
    # that every loop's size is read off an operand (the maps stay invertible).
    kernel_shape = e.empty(kernel, element_type)
    pooled = e.generic(
        [(padded, AffineMap(6, 0, tuple(window))), (kernel_shape, AffineMap(6, 0, (d[4], d[5])))],
        shape,
        accumulator,
        AffineMap(6, 0, tuple(d[:4])),
        [PARALLEL] * 4 + [REDUCTION] * 2,
        lambda b, args: [combine(b, b.convert(args[0], accumulator), args[2])],
        init,
    )
    operands = [pooled]
    if not is_max:
        counts = _avg_pool_counts(op, (h, w), ends, (oh, ow), accumulator)
        if layout == "NHWC":
            counts = counts[..., np.newaxis]  # the same for every channel, now innermost
        operands.append(e.dense_constant(counts))

    def finish(b: Body, args):
        y = args[0] if is_max else div(b, args[0], args[1])
        return [b.convert(y, element_type)]

    return e.elementwise(operands, shape, element_type, finish)


def _avg_pool_counts(op: graph.AvgPoolOp, spatial, ends, out, accumulator) -> np.ndarray:
    """The divisor of each output element: how many of its window's elements count."""
    kernel, strides, pads, dilations = op.window(op.properties)
    h, w = spatial
    if op.count_include_pad.value.data:
        inside = np.ones((h + pads[0] + pads[2], w + pads[1] + pads[3]))
        mask = np.pad(inside, ((0, ends[0] - pads[2]), (0, ends[1] - pads[3])))
    else:
        mask = np.pad(np.ones((h, w)), ((pads[0], ends[0]), (pads[1], ends[1])))
    counts = np.zeros(out)
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            rows = i * dilations[0] + strides[0] * np.arange(out[0])
            cols = j * dilations[1] + strides[1] * np.arange(out[1])
            counts += mask[np.ix_(rows, cols)]
    return counts.astype(to_numpy_dtype(accumulator))


@lowers(graph.SoftmaxOp, graph.LogSoftmaxOp)
def lower_softmax(e: Emitter, op: graph.SoftmaxFamilyOp) -> SSAValue:
    x = op.input
    shape = shape_of(x)
    rank = len(shape)
    axis = op.axis.value.data % rank
    element_type = element_type_of(x)
    reduced = _reduced_map(rank, [axis])
    largest = reduce(e, x, [axis], "max")
    accumulator = element_type_of(largest)

    def shifted(b: Body, args):
        return [sub(b, b.widen(args[0]), args[1])]

    shifted_x = e.elementwise([x, largest], shape, accumulator, shifted, [None, reduced])
    exponentials = e.elementwise(
        [shifted_x], shape, accumulator, lambda b, args: [b.add(math.ExpOp(args[0]))]
    )
    total = reduce(e, exponentials, [axis], "sum")
    if isinstance(op, graph.LogSoftmaxOp):
        operands = [shifted_x, total]

        def normalize(b: Body, args):
            return [b.convert(sub(b, args[0], b.add(math.LogOp(args[1]))), element_type)]
    else:
        operands = [exponentials, total]

        def normalize(b: Body, args):
            return [b.convert(div(b, args[0], args[1]), element_type)]

    return e.elementwise(operands, shape, element_type, normalize, [None, reduced])


@lowers(graph.LayerNormOp)
def lower_layer_norm(e: Emitter, op: graph.LayerNormOp) -> SSAValue:
    x = op.input
    shape = shape_of(x)
    rank = len(shape)
    axes = list(range(op.axis.value.data % rank, rank))
    count = pymath.prod(shape[a] for a in axes)
    element_type = element_type_of(x)
    reduced = _reduced_map(rank, axes)
    total = reduce(e, x, axes, "sum")
    accumulator = element_type_of(total)

    def center(b: Body, args):
        mean = div(b, args[1], const_like(b, count, args[1]))
        return [sub(b, b.widen(args[0]), mean)]

    centered = e.elementwise([x, total], shape, accumulator, center, [None, reduced])
    squares = e.elementwise(
        [centered], shape, accumulator, lambda b, args: [mul(b, args[0], args[0])]
    )
    square_total = reduce(e, squares, axes, "sum")
    epsilon = _f(op.epsilon)
    operands = [centered, square_total, op.scale] + ([] if op.bias is None else [op.bias])

    def normalize(b: Body, args):
        variance = div(b, args[1], const_like(b, count, args[1]))
        deviation = b.add(math.SqrtOp(add(b, variance, const_like(b, epsilon, variance))))
        y = mul(b, div(b, args[0], deviation), b.widen(args[2]))
        if len(operands) == 4:
            y = add(b, y, b.widen(args[3]))
        return [b.convert(y, element_type)]

    maps = [None, reduced] + [None] * (len(operands) - 2)
    return e.elementwise(operands, shape, element_type, normalize, maps)


# --------------------------------------------------------------------------- #
# Shape manipulation
# --------------------------------------------------------------------------- #


@lowers(graph.TransposeOp)
def lower_transpose(e: Emitter, op: graph.TransposeOp) -> SSAValue:
    return transpose(e, op.input, list(op.perm.get_values()))


@lowers(graph.ReshapeOp, graph.FlattenOp, graph.SqueezeOp, graph.UnsqueezeOp)
def lower_reshape(e: Emitter, op: GraphOp) -> SSAValue:
    return e.reshape(op.input, out_type(op).get_shape())


@lowers(graph.BroadcastToOp)
def lower_broadcast_to(e: Emitter, op: graph.BroadcastToOp) -> SSAValue:
    source, target = shape_of(op.input), out_type(op).get_shape()
    added = len(target) - len(source)
    element_type = element_type_of(op.input)
    if tuple(target[added:]) == source:
        init = e.empty(target, element_type)
        return e.emit(linalg.BroadcastOp(op.input, init, int_array(range(added))))
    return e.elementwise([op.input], target, element_type, lambda b, args: [args[0]])


@lowers(graph.ConcatOp)
def lower_concat(e: Emitter, op: graph.ConcatOp) -> SSAValue:
    result = out_type(op)
    rank = result.get_num_dims()
    axis = op.axis.value.data % rank
    y = e.empty(result.get_shape(), result.get_element_type())
    offset = 0
    for value in op.inputs:
        shape = shape_of(value)
        offsets = [offset if i == axis else 0 for i in range(rank)]
        y = e.emit(
            tensor.InsertSliceOp.from_static_parameters(value, y, offsets, list(shape), [1] * rank)
        )
        offset += shape[axis]
    return y


@lowers(graph.SliceOp)
def lower_slice(e: Emitter, op: graph.SliceOp) -> SSAValue:
    shape = shape_of(op.input)
    result = out_type(op)
    slices = op.slices(shape, op.properties)
    ranges = [range(*s.indices(d)) for s, d in zip(slices, shape)]
    if all(r.step > 0 for r in ranges):
        offsets = [r.start if len(r) else 0 for r in ranges]
        return e.emit(
            tensor.ExtractSliceOp(
                op.input, offsets, list(result.get_shape()), [r.step for r in ranges], result
            )
        )
    rank = len(shape)
    slice_map = AffineMap(
        rank,
        0,
        tuple(AffineExpr.dimension(i) * r.step + r.start for i, r in enumerate(ranges)),
    )
    return e.elementwise(
        [op.input],
        result.get_shape(),
        result.get_element_type(),
        lambda b, args: [args[0]],
        [slice_map],
    )


@lowers(graph.PadOp)
def lower_pad(e: Emitter, op: graph.PadOp) -> SSAValue:
    x = op.input
    shape = shape_of(x)
    rank = len(shape)
    pads = ints_of(op.properties, "pads")
    low, high = pads[:rank], pads[rank:]
    if any(p < 0 for p in pads):
        # Negative pads crop first; what stays is padded with the positive ones.
        begins = [max(-p, 0) for p in low]
        sizes = [d - begins[i] - max(-high[i], 0) for i, d in enumerate(shape)]
        cropped = TensorType(element_type_of(x), sizes)
        x = e.emit(tensor.ExtractSliceOp(x, begins, sizes, [1] * rank, cropped))
        shape = tuple(sizes)
        low, high = [max(p, 0) for p in low], [max(p, 0) for p in high]
    mode = op.mode.data
    if mode == "constant" or not rank:
        value = np.asarray(op.value.value.data).astype(to_numpy_dtype(element_type_of(x)))
        return pad_constant(e, x, low, high, value.item())
    result = out_type(op)

    def gather_padded(b: Body, args):
        indices = []
        for i, size in enumerate(shape):
            position = b.add(linalg.IndexOp(i))
            source = b.add(arith.SubiOp(position, b.constant(low[i], IndexType())))
            last = b.constant(size - 1, IndexType())
            zero = b.constant(0, IndexType())
            if mode == "edge":
                source = b.add(arith.MinSIOp(b.add(arith.MaxSIOp(source, zero)), last))
            else:
                # Reflection without the edge: last - |last - |i||.
                folded = b.add(arith.MaxSIOp(source, b.add(arith.SubiOp(zero, source))))
                distance = b.add(arith.SubiOp(last, folded))
                distance = b.add(arith.MaxSIOp(distance, b.add(arith.SubiOp(zero, distance))))
                source = b.add(arith.SubiOp(last, distance))
            indices.append(source)
        return [b.add(tensor.ExtractOp(x, indices, element_type_of(x)))]

    rank_map = AffineMap.identity(rank)
    return e.generic(
        [],
        result.get_shape(),
        result.get_element_type(),
        rank_map,
        [PARALLEL] * rank,
        gather_padded,
    )


@lowers(graph.GatherOp)
def lower_gather(e: Emitter, op: graph.GatherOp) -> SSAValue:
    data_shape = shape_of(op.data)
    axis = op.axis.value.data % len(data_shape)
    index_rank = len(shape_of(op.indices))
    result = out_type(op)
    rank = result.get_num_dims()
    index_map = AffineMap(rank, 0, tuple(dims(*range(axis, axis + index_rank))))

    def take(b: Body, args):
        index = b.add(arith.IndexCastOp(args[0], IndexType()))
        size = b.constant(data_shape[axis], IndexType())
        zero = b.constant(0, IndexType())
        negative = b.add(arith.CmpiOp(index, zero, "slt"))
        index = b.add(arith.SelectOp(negative, b.add(arith.AddiOp(index, size)), index))
        positions = [b.add(linalg.IndexOp(i)) for i in range(axis)]
        positions.append(index)
        positions += [b.add(linalg.IndexOp(i)) for i in range(axis + index_rank, rank)]
        return [b.add(tensor.ExtractOp(op.data, positions, element_type_of(op.data)))]

    return e.generic(
        [(op.indices, index_map)],
        result.get_shape(),
        result.get_element_type(),
        AffineMap.identity(rank),
        [PARALLEL] * rank,
        take,
    )


@lowers(graph.TopKOp)
def lower_top_k(e: Emitter, op: graph.TopKOp) -> list[SSAValue]:
    """Each element's place in the order (how many come before it: a reduction over a second
    position j along the axis), then each output position p takes the element whose place is p."""
    x = op.input
    shape = shape_of(x)
    rank = len(shape)
    axis = op.axis.value.data % rank
    largest = bool(op.largest.value.data)
    element_type = element_type_of(x)
    other = AffineMap(
        rank + 1, 0, tuple(AffineExpr.dimension(rank if d == axis else d) for d in range(rank))
    )
    own = AffineMap(rank + 1, 0, tuple(dims(*range(rank))))

    def count_before(b: Body, args):
        mine, theirs = b.widen(args[0]), b.widen(args[1])
        j, i = b.add(linalg.IndexOp(rank)), b.add(linalg.IndexOp(axis))
        earlier = b.add(arith.CmpiOp(j, i, "ult"))
        if is_float(mine.type):
            # NaN sorts above every number; NaNs are equal among themselves.
            mine_nan = b.add(arith.CmpfOp(mine, mine, "uno"))
            theirs_nan = b.add(arith.CmpfOp(theirs, theirs, "uno"))
            ordered = b.add(arith.CmpfOp(theirs, mine, "ogt" if largest else "olt"))
            one_nan = b.add(arith.XOrIOp(mine_nan, theirs_nan))
            nan_wins = b.add(arith.AndIOp(one_nan, theirs_nan if largest else mine_nan))
            ahead = b.add(arith.OrIOp(ordered, nan_wins))
            same = b.add(
                arith.OrIOp(
                    b.add(arith.CmpfOp(theirs, mine, "oeq")),
                    b.add(arith.AndIOp(mine_nan, theirs_nan)),
                )
            )
        else:
            ahead = b.add(arith.CmpiOp(theirs, mine, "sgt" if largest else "slt"))
            same = b.add(arith.CmpiOp(theirs, mine, "eq"))
        before = b.add(arith.OrIOp(ahead, b.add(arith.AndIOp(same, earlier))))
        one = b.add(arith.ExtUIOp(before, i64))
        return [b.add(arith.AddiOp(one, args[2]))]

    places = e.generic(
        [(x, own), (x, other)],
        shape,
        i64,
        own,
        [PARALLEL] * rank + [REDUCTION],
        count_before,
        e.filled(shape, i64, 0),
    )
    values_type, indices_type = op.values.type, op.indices.type
    out_shape = indices_type.get_shape()

    def position_of(b: Body, args):
        p = b.add(arith.IndexCastOp(b.add(linalg.IndexOp(axis)), i64))
        i = b.add(arith.IndexCastOp(b.add(linalg.IndexOp(rank)), i64))
        found = b.add(arith.CmpiOp(args[0], p, "eq"))
        # Exactly one position has each place: the max of it and zeros.
        return [b.add(arith.MaxSIOp(b.add(arith.SelectOp(found, i, b.constant(0, i64))), args[1]))]

    indices = e.generic(
        [(places, other)],
        out_shape,
        i64,
        own,
        [PARALLEL] * rank + [REDUCTION],
        position_of,
        e.filled(out_shape, i64, 0),
    )

    def take(b: Body, args):
        positions = [b.add(linalg.IndexOp(d)) for d in range(rank)]
        positions[axis] = b.add(arith.IndexCastOp(args[0], IndexType()))
        return [b.add(tensor.ExtractOp(x, positions, element_type))]

    values = e.generic(
        [(indices, AffineMap.identity(rank))],
        out_shape,
        values_type.get_element_type(),
        AffineMap.identity(rank),
        [PARALLEL] * rank,
        take,
    )
    return [values, indices]


# --------------------------------------------------------------------------- #
# The pass
# --------------------------------------------------------------------------- #


# Ops whose lowering reads unsigned integers as the signless bits arith takes
# (`tile.bitcast` of the tensor, zero-extending conversions in the body).
SIGN_AWARE = (
    graph.ConstantOp,
    graph.CastOp,
    graph.BitcastOp,
    graph.QuantizeOp,
    graph.DequantizeOp,
)


def inline_fused(fused: graph.FusedOp, group: str) -> None:
    """Move the group's members in front of it, marked with `tile.group` (and the
    root's with `tile.root`), and replace its results with the yielded values."""
    block = fused.body.block
    for arg, operand in zip(block.args, fused.inputs):
        arg.replace_all_uses_with(operand)
    members = [op for op in block.ops if not isinstance(op, graph.YieldOp)]
    root = next((op for op in members if op.name == fused.root.data), None)
    for op in members:
        op.detach()
        op.attributes[GROUP_ATTR] = StringAttr(group)
        if op is root:
            op.attributes[ROOT_ATTR] = UnitAttr()
        Rewriter.insert_op(op, InsertPoint.before(fused))
    for result, value in zip(fused.outputs, block.last_op.operands):
        result.replace_all_uses_with(value)
    Rewriter.erase_op(fused)


def mark_groups(function: Operation) -> set[str]:
    """`inline_fused` for each group of `function`, its name made unique with `_<k>`;
    every other graph op is marked as a group of its own (`softmax_0`), whose marks
    `unmark_single_ops` takes back unless the op lowers to several linalg ops.
    Returns the names of those single-op groups."""
    counts: dict[str, int] = {}

    def unique(name: str) -> str:
        counts[name] = counts.get(name, 0) + 1
        return f"{name}_{counts[name] - 1}"

    for fused in [op for op in function.walk() if isinstance(op, graph.FusedOp)]:
        inline_fused(fused, unique(fused.group_name.data))
    singles = set()
    for op in function.walk():
        if isinstance(op, GraphOp) and GROUP_ATTR not in op.attributes:
            name = unique(op.name.removeprefix("graph."))
            op.attributes[GROUP_ATTR] = StringAttr(name)
            op.attributes[ROOT_ATTR] = UnitAttr()
            singles.add(name)
    return singles


def unmark_single_ops(function: Operation, singles: set[str]) -> None:
    """Drop the group marks of single-op groups with fewer than two linalg ops besides
    fills (tile-and-fuse fuses an ungrouped op's fill and pads anyway)."""
    members: dict[str, list[Operation]] = {}
    for op in function.walk():
        group = op.attributes.get(GROUP_ATTR)
        if group is not None and group.data in singles:
            members.setdefault(group.data, []).append(op)
    for ops in members.values():
        if sum(op.name.startswith("linalg.") and op.name != "linalg.fill" for op in ops) < 2:
            for op in ops:
                del op.attributes[GROUP_ATTR]
                del op.attributes[ROOT_ATTR]


def splat_scalar(value: SSAValue) -> IntegerAttr | FloatAttr | None:
    """The one element of `value` as a scalar attribute when it is a splat tensor constant
    (a 0-d constant is one; bitwise equal, as graph-opt's folding counts splats: a constant
    mixing +0.0 and -0.0 stays a tensor), else None."""
    element = splat_value(value)
    return None if element is None else scalar_attr(element[()], value.type.get_element_type())


def fold_constant_ops(block: Block, rewriter: PatternRewriter) -> None:
    """Replace each op of `block` whose operands are all `arith.constant`s by the constant
    it computes (the tensor interpreter's arithmetic, so the numbers are the same): a
    batch norm of splat parameters computes `scale / sqrt(var + eps)` once, here, not
    on the vector unit as an instruction of scalars only."""
    for op in list(block.ops):
        if (
            type(op) not in SCALAR_FUNCTIONS
            or not op.operands
            or not all(isinstance(o.owner, arith.ConstantOp) for o in op.operands)
        ):
            continue
        value = apply_scalar(op, [apply_scalar(o.owner, []) for o in op.operands])
        rewriter.replace(op, arith.ConstantOp(scalar_attr(value.item(), op.results[0].type)))
    for op in reversed(list(block.ops)):
        if isinstance(op, arith.ConstantOp) and not op.result.uses:
            rewriter.erase(op)


class FoldSplatConstantInputs(RewritePattern):
    """A splat constant tensor read by an all-parallel generic is one scalar: it becomes an
    `arith.constant` in the body and the operand goes (MLIR's FoldScalarOrSplatConstant),
    so no later level stages a buffer of one repeated value (on systolic a 0-d scale
    took the 2 bytes that attention's tiles left free); tile-vectorize then reads it
    as a scalar operand (`muls`, `adds`). The body's ops on constants only are then
    folded (`fold_constant_ops`). A generic keeps one tensor input at least: one of
    splats only is graph-opt's constant folding, not a scalar op."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: linalg.GenericOp, rewriter: PatternRewriter) -> None:
        if any(iterator != PARALLEL for iterator in op.iterator_types.data):
            return
        scalars = [splat_scalar(value) for value in op.inputs]
        if all(s is None for s in scalars) or all(s is not None for s in scalars):
            return
        block = op.body.block
        for arg, scalar in zip(list(block.args), scalars):
            if scalar is not None:
                constant = arith.ConstantOp(scalar)
                rewriter.insert(constant, InsertPoint.at_start(block))
                arg.replace_all_uses_with(constant.result)
                rewriter.erase_block_argument(arg)
        fold_constant_ops(block, rewriter)
        kept = [i for i, s in enumerate(scalars) if s is None]
        maps = op.indexing_maps.data
        generic = linalg.GenericOp(
            [op.inputs[i] for i in kept],
            op.outputs,
            rewriter.move_region_contents_to_new_regions(op.body),
            [maps[i] for i in kept] + list(maps[len(op.inputs) :]),
            op.iterator_types.data,
            op.result_types,
        )
        generic.attributes.update(op.attributes)
        constants = {op.inputs[i].owner for i, s in enumerate(scalars) if s is not None}
        rewriter.replace(op, generic)
        for constant in constants:
            if not constant.result.uses:
                rewriter.erase(constant)


class SinkGroupedConvCollapse(RewritePattern):
    """A grouped conv's `collapse_shape` of (g, og) into the output channels, read by an
    all-parallel generic of its group, moves after that generic, which then runs over
    the uncollapsed dims (its other operands expanded to match), as MLIR's reshape
    propagation by expansion does. Repeated, the collapse leaves the group: every member
    is a plain generic of the same rank, which tile-and-fuse tiles together, the groups
    `g` a loop of their own, instead of a collapse that no tile loop reaches through."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tensor.CollapseShapeOp, rewriter: PatternRewriter) -> None:
        group = op.attributes.get(GROUP_ATTR)
        if group is None or not _sinks_from(op.src.owner, group):
            return
        users = [use.operation for use in op.result.uses]
        user = next((u for u in users if _sinkable_into(u, op, group)), None)
        if user is None:
            return
        groups = reassociation_groups(op)
        fine = shape_of(op.src)
        rank = len(fine)

        def expanded(value: SSAValue, indexing: AffineMap) -> tuple[SSAValue, AffineMap]:
            """`value` with each dim read by a collapsed loop split as the loop is; a collapse
            like `op` (of another user's result) read whole is its source."""
            source = value.owner
            if (
                isinstance(source, tensor.CollapseShapeOp)
                and reassociation_groups(source) == groups
                and shape_of(source.src) == fine
                and indexing == AffineMap.identity(len(groups))
            ):
                return source.src, AffineMap.identity(rank)
            results, split, sizes = [], [], []
            for expr, size in zip(indexing.results, shape_of(value)):
                if not isinstance(expr, AffineDimExpr):
                    split.append([len(sizes)])
                    results.append(expr)
                    sizes.append(size)
                    continue
                loops = groups[expr.position]
                split.append(list(range(len(sizes), len(sizes) + len(loops))))
                results.extend(AffineExpr.dimension(d) for d in loops)
                sizes.extend(fine[d] for d in loops)
            if len(sizes) == len(shape_of(value)):
                return value, AffineMap(rank, 0, tuple(results))
            view = expand_shape(value, split, sizes)
            rewriter.insert(view, InsertPoint.before(user))
            return view.results[0], AffineMap(rank, 0, tuple(results))

        maps = [m.data for m in user.indexing_maps.data]
        inputs = [expanded(v, m) for v, m in zip(user.inputs, maps)]
        out_type = user.results[0].type
        init = tensor.EmptyOp([], TensorType(out_type.get_element_type(), fine))
        rewriter.insert(init, InsertPoint.before(user))
        generic = linalg.GenericOp(
            [v for v, _ in inputs],
            [init.tensor],
            rewriter.move_region_contents_to_new_regions(user.body),
            [AffineMapAttr(m) for _, m in inputs] + [AffineMapAttr(AffineMap.identity(rank))],
            [PARALLEL] * rank,
            [init.tensor.type],
        )
        generic.attributes.update(user.attributes)
        collapse = collapse_shape(generic.results[0], groups, out_type)
        collapse.attributes.update(op.attributes)
        for new in (generic, collapse):
            locate(new, user.location)
        old_init = user.outputs[0].owner
        read = {v.owner for v in user.inputs if isinstance(v.owner, tensor.CollapseShapeOp)}
        rewriter.replace_op(user, [generic, collapse])
        for dead in read:
            if not dead.result.uses:
                rewriter.erase_op(dead)
        if isinstance(old_init, tensor.EmptyOp) and not old_init.tensor.uses:
            rewriter.erase_op(old_init)


def _sinkable_into(user: Operation, collapse: tensor.CollapseShapeOp, group: Attribute) -> bool:
    """Whether `collapse` may move past `user`: an all-parallel generic of `group` with one
    output, over the collapsed shape, that reads the collapse whole, every map a projected
    permutation."""
    rank = len(shape_of(collapse.result))
    identity = AffineMap.identity(rank)
    return (
        isinstance(user, linalg.GenericOp)
        and user.attributes.get(GROUP_ATTR) == group
        and len(user.outputs) == 1
        and shape_of(user.results[0]) == shape_of(collapse.result)
        and all(it == PARALLEL for it in user.iterator_types.data)
        and all(m.data.is_projected_permutation() for m in user.indexing_maps.data)
        and user.indexing_maps.data[-1].data == identity
        and all(v is not collapse.result for v in user.outputs)
        and all(
            m.data == identity
            for v, m in zip(user.inputs, user.indexing_maps.data)
            if v is collapse.result
        )
    )


def _sinks_from(producer: Operation, group: Attribute) -> bool:
    """Whether a collapse of `producer`'s result may sink: `producer` is a convolution of
    `group`, or a generic of `group` that such a collapse already passed (one of its inputs
    comes, through generics of `group`, from that convolution)."""
    if not isinstance(producer, linalg.GenericOp) or producer.attributes.get(GROUP_ATTR) != group:
        return False
    if is_contraction(producer):
        return contraction_dims(producer).is_convolution
    return any(_sinks_from(value.owner, group) for value in producer.inputs)


def ungroup_collapses(function: Operation) -> None:
    """A collapse that sank out of its group's generics (its value leaves the group) is no
    member any more: the group's tile loop ends at the generic before it."""
    for op in function.walk():
        if not isinstance(op, tensor.CollapseShapeOp) or GROUP_ATTR not in op.attributes:
            continue
        group = op.attributes[GROUP_ATTR]
        if not _sinks_from(op.src.owner, group):
            continue
        if all(use.operation.attributes.get(GROUP_ATTR) != group for use in op.result.uses):
            del op.attributes[GROUP_ATTR]
            op.attributes.pop(ROOT_ATTR, None)


class LowerGraphOp(RewritePattern):
    """Replaces one graph op by its structured form (see `LOWERINGS`)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, GraphOp):
            return
        if is_int8_widening(op):
            return  # lowered with (or erased after) the contraction reading it
        e = Emitter(rewriter, op)
        lowering = LOWERINGS.get(type(op))
        if lowering is None:
            raise e.fail(f"cannot lower '{op.name}' yet")
        if not isinstance(op, SIGN_AWARE):
            check_signless(e, op)
        lowered = lowering(e, op)
        rewriter.replace(op, [], lowered if isinstance(lowered, list) else [lowered])


@dataclass(frozen=True)
class GraphToTilePass(ModulePass):
    """Lower every `graph` op to `linalg`/`tensor`/`arith`/`math` on tensors.

    Each graph op takes one structured form, chosen so that the tiling interface
    reads its iteration domain from the indexing maps (parallel dims tile freely;
    reduction dims carry an accumulator):

    * constant: `arith.constant dense<...>`; a splat one read by an elementwise
      generic is a scalar `arith.constant` in its body (`FoldSplatConstantInputs`).
    * unary elementwise ops, not, bitwise_not, cast, and the binary and broadcast
      ones (add ... bit_shift, comparisons, prelu, where, batch_norm, quantize,
      dequantize): one parallel `linalg.generic`, broadcast operands read through
      their maps, the body in `arith`/`math`.
    * matmul: 2-D in its own compute type, `linalg.fill` + `linalg.matmul`;
      batched, broadcast, vector or narrow-float, one generic contraction
      accumulating in f32. gemm: a contraction with the transposes in its maps,
      then a parallel generic for alpha, beta and c.
    * conv2d: NCHW with one group in f32/f64, `tensor.pad` + `linalg.fill` +
      `linalg.conv_2d_nchw_fchw` (+ a bias generic); otherwise one generic
      contraction with window maps and no unit dims, (n, o, oh, ow | c, kh, kw),
      depthwise (n, g, oh, ow | kh, kw), NHWC (n, oh, ow, o | c, kh, kw); only a
      grouped conv with several output channels per group collapses (g, og) after,
      and that collapse sinks past its group's elementwise generics, which then run
      over (n, g, og, oh, ow) (`SinkGroupedConvCollapse`).
    * max_pool, avg_pool: `tensor.pad` + a generic with window maps and two
      reduction iterators (the window's shape an empty tensor operand, as in
      `linalg.pooling_*`); reductions and global pools: `linalg.fill` of the
      identity + a reduction generic (`tensor.expand_shape` for keepdims); arg_max:
      a max reduction, then a reduction of the positions holding it; cumsum,
      cumprod: a triangular reduction; softmax, log_softmax, layer_norm: their
      chains of reductions and elementwise generics.
    * transpose: `linalg.transpose`; broadcast_to: `linalg.broadcast` or a copy
      generic; bitcast: `tile.bitcast`; reshape, flatten, squeeze, unsqueeze:
      `tensor.collapse_shape` and/or `expand_shape` (one that splits a dim and
      merges others collapses to the finest shape both sides coarsen to, then
      expands), `tensor.reshape` only for an empty tensor; concat:
      `tensor.empty` + one `insert_slice` per operand; slice: `extract_slice` (a
      generic with a decreasing map for negative steps); pad: `extract_slice` +
      `tensor.pad`, or for reflect/edge a generic reading the source index with
      `tensor.extract`, as gather and top_k do.
    * graph.fused: its body inlined and lowered; every op a member lowers to
      carries `tile.group = "<group name>_<k>"` (unique in the function), those of
      the `root` member also `tile.root`. A graph op outside every group that lowers
      to two or more linalg ops besides fills (softmax, layer_norm, a conv with its
      bias) is a group of its own. A graph op's `tile.*` attributes are carried to
      every op it lowers to.

    Arithmetic runs in the graph dialect's compute types (f32 for f16/bf16/fp8,
    i32 for narrow integers), so the lowered program computes what the graph
    interpreter does. Unsigned tensors are reinterpreted as signless with
    `tile.bitcast`. Shapes must be static; an op without a lowering (integer pow,
    floating-point mod, unsigned arithmetic) is reported at its location.

        %y = graph.relu %x : tensor<4x8xf32>

    becomes

        %e = tensor.empty() : tensor<4x8xf32>
        %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                             iterator_types = ["parallel", "parallel"]}
               ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
        ^bb0(%a: f32, %o: f32):
          %z = arith.constant 0.000000e+00 : f32
          %m = arith.maximumf %a, %z : f32
          linalg.yield %m : f32
        } -> tensor<4x8xf32>
    """

    name = "graph-to-tile"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = [f for f in op.walk() if isinstance(f, func.FuncOp)]
        singles = {function: mark_groups(function) for function in functions}
        PatternRewriteWalker(LowerGraphOp(), apply_recursively=False).rewrite_module(op)
        for cast in [c for c in op.walk() if is_int8_widening(c) and not c.output.uses]:
            Rewriter.erase_op(cast)
        fold_splats = Located(FoldSplatConstantInputs())
        PatternRewriteWalker(fold_splats, apply_recursively=False).rewrite_module(op)
        PatternRewriteWalker(SinkGroupedConvCollapse()).rewrite_module(op)
        for function in functions:
            ungroup_collapses(function)
            unmark_single_ops(function, singles[function])


__all__ = ["LOWERINGS", "GraphToTilePass"]
