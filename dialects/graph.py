"""The `graph` dialect: neural-network operators on whole tensors (value semantics).

Each op infers its result types, carries its numpy reference semantics (ONNX's where ONNX has the
operator) and its TVM-style fusion pattern kind; `GraphOp` states that contract. The spatial ops
(conv2d and the pools) take `layout = "NCHW"` (the default, weights OIHW) or `"NHWC"` (weights
OHWI), and `pads = array<i64: top, left, bottom, right>`, ONNX's order.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import ClassVar

import ml_dtypes
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from xdsl.dialects.builtin import (
    I64,
    BoolAttr,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    TensorType,
    f32,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    ParamAttrConstraint,
    ParsePropInAttrDict,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.pattern_rewriter import RewritePattern
from xdsl.traits import (
    ConstantLike,
    HasCanonicalizationPatternsTrait,
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    OpTrait,
    Pure,
)
from xdsl.utils.exceptions import VerifyException

from ziggurat.dtypes import is_float, tensor_type_of, to_numpy_dtype
from ziggurat.ir.tensor_constants import elements_to_array

# --------------------------------------------------------------------------- #
# Shared vocabulary
# --------------------------------------------------------------------------- #


class OpPatternKind(IntEnum):
    """How an op combines with its neighbours in operator fusion (TVM's op pattern kinds).

    Lower is easier to fuse: an `ELEMWISE` op maps each output element to the
    same input element; `BROADCAST` reads inputs along broadcast axes;
    `INJECTIVE` is any one-to-one index map (reshape, transpose, slice);
    `REDUCE` reduces axes; `OUT_ELEMWISE_FUSABLE` (conv, matmul) can absorb
    elementwise consumers; `OPAQUE` fuses with nothing.
    """

    ELEMWISE = 0
    BROADCAST = 1
    INJECTIVE = 2
    REDUCE = 3
    OUT_ELEMWISE_FUSABLE = 4
    OPAQUE = 8


@dataclass(frozen=True)
class FusionPattern(OpTrait):
    """The op's `OpPatternKind`, read by `graph-fuse` through `pattern_kind_of`."""

    kind: OpPatternKind = OpPatternKind.OPAQUE


class GraphCanonicalization(HasCanonicalizationPatternsTrait):
    """Canonicalization patterns of graph ops, kept in `ziggurat.dialects.graph_canonicalization`
    and looked up by op type."""

    def get_patterns(self, op: type[Operation]) -> tuple[RewritePattern, ...]:
        from ziggurat.dialects.graph_canonicalization import patterns_for

        return patterns_for(op)

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return ()


STOP_FUSION = "graph.stop_fusion"
"""A unit attribute that makes an op opaque to `graph-fuse`: it stays a group of its own (TVM's
`annotation.stop_fusion`). ziggurat-tune puts it on the transposes between groups it runs in
different layouts, which it costed as groups of their own."""


def pattern_kind_of(op: Operation) -> OpPatternKind:
    """The fusion pattern kind of `op` (ops without the trait, or marked `graph.stop_fusion`, are opaque)."""
    trait = op.get_trait(FusionPattern)
    return OpPatternKind.OPAQUE if trait is None or STOP_FUSION in op.attributes else trait.kind


def ranked_tensor(value_type: Attribute, what: str) -> TensorType:
    """`value_type` as a statically shaped tensor type, or a verifier error naming `what`."""
    if not isinstance(value_type, TensorType):
        raise VerifyException(f"{what} must be a ranked tensor, got {value_type}")
    if any(dim < 0 for dim in value_type.get_shape()):
        raise VerifyException(
            f"{what} must have a static shape, got {value_type} "
            "(set the dynamic dimensions, e.g. with --input-shape)"
        )
    return value_type


def float_tensor(value_type: Attribute, what: str) -> TensorType:
    """`ranked_tensor` with a floating-point element type."""
    tensor = ranked_tensor(value_type, what)
    if not is_float(tensor.get_element_type()):
        raise VerifyException(f"{what} must have a floating-point element type, got {tensor}")
    return tensor


def same_element_type(types: Sequence[TensorType], what: str) -> Attribute:
    """The common element type of `types`, or a verifier error naming `what`."""
    element_types = {t.get_element_type() for t in types}
    if len(element_types) != 1:
        listed = ", ".join(str(t) for t in types)
        raise VerifyException(f"{what} must have the same element type, got {listed}")
    return types[0].get_element_type()


def broadcast_shapes(lhs: Sequence[int], rhs: Sequence[int]) -> tuple[int, ...]:
    """numpy/ONNX multidirectional broadcasting of two static shapes."""
    rank = max(len(lhs), len(rhs))
    padded_lhs = [1] * (rank - len(lhs)) + list(lhs)
    padded_rhs = [1] * (rank - len(rhs)) + list(rhs)
    shape: list[int] = []
    for a, b in zip(padded_lhs, padded_rhs):
        if a != b and a != 1 and b != 1:
            raise VerifyException(
                f"operand shapes {list(lhs)} and {list(rhs)} are not broadcast-compatible"
            )
        shape.append(b if a == 1 else a)
    return tuple(shape)


def check_broadcasts_to(shape: Sequence[int], target: Sequence[int], what: str) -> None:
    """ONNX unidirectional broadcasting: `shape` must broadcast to `target` unchanged."""
    if len(shape) > len(target) or any(
        dim not in (1, goal) for dim, goal in zip(reversed(shape), reversed(target))
    ):
        raise VerifyException(f"{what} shape {list(shape)} does not broadcast to {list(target)}")


def int_array(values: Sequence[int]) -> DenseArrayBase:
    """An `array<i64: ...>` property."""
    return DenseArrayBase.from_list(i64, list(values))


def f32_attr(value: float) -> FloatAttr:
    """A float property, `1.000000e-01 : f32`."""
    return FloatAttr(value, f32)


def i64_attr(value: int) -> IntegerAttr:
    """An integer property, `1 : i64`."""
    return IntegerAttr(value, i64)


def bool_attr(value: bool) -> IntegerAttr:
    """A flag property, `true`."""
    return IntegerAttr.from_bool(value)


def ints_of(properties: Mapping[str, Attribute], name: str) -> list[int] | None:
    """The values of an `array<i64: ...>` property, None when it is absent."""
    attr = properties.get(name)
    return None if attr is None else [int(v) for v in attr.get_values()]


def scalar_of(properties: Mapping[str, Attribute], name: str):
    """The Python value of an integer, float, flag or string property (None if absent)."""
    attr = properties.get(name)
    if attr is None:
        return None
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, IntegerAttr) and attr.type == IntegerType(1):
        return bool(attr.value.data)
    return attr.value.data


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    """`axis` in [0, rank), accepting ONNX's negative axes (a rank-0 tensor has none)."""
    if not -rank <= axis < rank:
        raise VerifyException(f"{what} {axis} is out of range for rank {rank}")
    return axis % rank


def normalize_axes(axes: Sequence[int], rank: int, what: str = "axes") -> list[int]:
    """Distinct axes in [0, rank), accepting ONNX's negative axes."""
    normalized = [normalize_axis(axis, rank, f"{what} entry") for axis in axes]
    if len(set(normalized)) != len(normalized):
        raise VerifyException(f"{what} {list(axes)} name an axis twice")
    return normalized


def compute_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype arithmetic on `dtype` runs in: fp32 for fp16/bf16/fp8, int32 for
    narrow integers and bool, the dtype itself otherwise."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iub":
        return np.dtype(np.int64) if dtype.itemsize == 8 else np.dtype(np.int32)
    if dtype == np.float64:
        return dtype
    return np.dtype(np.float32)


def widen(array: np.ndarray) -> np.ndarray:
    return array.astype(compute_dtype(array.dtype), copy=False)


def widen_for_sums(array: np.ndarray) -> np.ndarray:
    """`array` in the type a contraction (matmul, gemm, conv) sums its products in: f64 for
    floats, rounded once to the compute type after, so that each output is the same whatever
    order BLAS adds in (its kernels sum edge tiles otherwise than inner ones, and numpy's
    OpenBLAS changes between releases): with ConstantOfShape weights every output channel of
    a light model is the same sum, which a softmax of logits near 1e10 must not see differ."""
    return array.astype(np.float64, copy=False) if array.dtype.kind not in "iub" else widen(array)


def lowest_value(dtype: np.dtype):
    """The identity of max for a compute dtype (also the max of an empty set, as in ONNX)."""
    if dtype.kind in "iu":
        return np.iinfo(dtype).min
    # ml_dtypes' floats (bf16, fp8) are kind "V"; float8_e4m3fn has no infinity.
    return (
        -np.inf if np.isinf(np.array(-np.inf).astype(dtype)) else float(ml_dtypes.finfo(dtype).min)
    )


def element_dtype(value_type: TensorType) -> np.dtype:
    return to_numpy_dtype(value_type.get_element_type())


# --------------------------------------------------------------------------- #
# Spatial (conv and pool) helpers
# --------------------------------------------------------------------------- #

LAYOUTS = ("NCHW", "NHWC")
# NHWC -> NCHW, applied to inputs and to OHWI weights alike, and its inverse.
_TO_CHANNELS_FIRST = (0, 3, 1, 2)
_TO_CHANNELS_LAST = (0, 2, 3, 1)


def layout_of(properties: Mapping[str, Attribute]) -> str:
    layout = scalar_of(properties, "layout")
    if layout not in LAYOUTS:
        raise VerifyException(f'layout must be "NCHW" or "NHWC", got "{layout}"')
    return layout


def to_nchw(shape_or_array, layout: str):
    """A shape or array in `layout` as NCHW (weights: OHWI as OIHW)."""
    if layout == "NCHW":
        return shape_or_array
    if isinstance(shape_or_array, np.ndarray):
        return np.transpose(shape_or_array, _TO_CHANNELS_FIRST)
    return [shape_or_array[p] for p in _TO_CHANNELS_FIRST]


def from_nchw(shape_or_array, layout: str):
    if layout == "NCHW":
        return shape_or_array
    if isinstance(shape_or_array, np.ndarray):
        return np.transpose(shape_or_array, _TO_CHANNELS_LAST)
    return [shape_or_array[p] for p in _TO_CHANNELS_LAST]


def checked_ints(
    properties: Mapping[str, Attribute], name: str, length: int, minimum: int
) -> list[int]:
    """An int-list property of `length` values, each at least `minimum`."""
    values = ints_of(properties, name)
    if values is None:
        raise VerifyException(f"property {name} is required")
    if len(values) != length:
        raise VerifyException(f"{name} must have {length} values, got {values}")
    if any(v < minimum for v in values):
        rule = "positive" if minimum == 1 else "non-negative"
        raise VerifyException(f"{name} must be {rule}, got {values}")
    return values


def window_output_size(
    size: int,
    kernel: int,
    stride: int,
    dilation: int,
    pad_begin: int,
    pad_end: int,
    ceil_mode: bool,
    dim: str,
) -> int:
    """Output length of a sliding window along one spatial dimension (ONNX's formula).

    With `ceil_mode` a last partial window counts, unless it would start in
    the end padding (as in onnxruntime and PyTorch).
    """
    span = dilation * (kernel - 1) + 1
    padded = size + pad_begin + pad_end
    if padded < span:
        raise VerifyException(
            f"the {dim} window spans {span} elements (kernel {kernel}, dilation "
            f"{dilation}), more than the padded input's {padded} "
            f"({size} + pads {pad_begin} and {pad_end})"
        )
    if not ceil_mode:
        return (padded - span) // stride + 1
    out = -(-(padded - span) // stride) + 1
    return out - 1 if (out - 1) * stride >= size + pad_begin else out


def window_geometry(
    spatial: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    pads: Sequence[int],
    ceil_mode: bool,
) -> tuple[list[int], list[int]]:
    """(output sizes, end padding) of a 2-D window; the end padding includes the
    extra rows and columns that a ceil-mode last window reads past the pads."""
    outs, ends = [], []
    for i, dim in enumerate(("height", "width")):
        out = window_output_size(
            spatial[i], kernel[i], strides[i], dilations[i], pads[i], pads[i + 2], ceil_mode, dim
        )
        reach = (out - 1) * strides[i] + dilations[i] * (kernel[i] - 1) + 1
        outs.append(out)
        ends.append(max(pads[i + 2], reach - spatial[i] - pads[i]))
    return outs, ends


def sliding_windows(
    padded: np.ndarray,
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    out: Sequence[int],
) -> np.ndarray:
    """A (N, C, OH, OW, KH, KW) view of the windows of a padded NCHW array (no copy)."""
    spans = [d * (k - 1) + 1 for k, d in zip(kernel, dilations)]
    windows = sliding_window_view(padded, spans, axis=(2, 3))
    return windows[
        :,
        :,
        : (out[0] - 1) * strides[0] + 1 : strides[0],
        : (out[1] - 1) * strides[1] + 1 : strides[1],
        :: dilations[0],
        :: dilations[1],
    ]


def pad_spatial(x: np.ndarray, begins: Sequence[int], ends: Sequence[int], value) -> np.ndarray:
    return np.pad(
        x, ((0, 0), (0, 0), (begins[0], ends[0]), (begins[1], ends[1])), constant_values=value
    )


# --------------------------------------------------------------------------- #
# Base classes
# --------------------------------------------------------------------------- #


class GraphOp(IRDLOperation, abc.ABC):
    """Base of every `graph` op: shape/dtype inference, numpy semantics, fusion kind.

    * `infer_result_types(operand_types, properties)` computes the result types,
      raising a `VerifyException` that states the violated rule; the verifier
      compares the declared types with it, and builders use it so callers never
      spell types. Ops whose result type is their target (reshape, cast,
      broadcast_to) are `ResultTypedOp`s instead.
    * `evaluate(*arrays)` is the numpy reference semantics, called by the graph
      interpreter and `graph-fold-constants` alike. Arithmetic runs in
      `compute_dtype` (fp16, bf16 and fp8 in fp32, narrow integers in int32) and
      the result is converted back to the result's element type.
    * the `FusionPattern` trait gives the op's `OpPatternKind`; where TVM's kind
      differs the op's docstring says so.

    Properties print in the attribute dictionary and are left out when equal to
    their default (ONNX's): `graph.op %a, %b {attrs} : (type_a, type_b) -> result`
    for several operands, `graph.op %x {attrs} : type -> result` for one, and
    `graph.op %x {attrs} : type` when the result keeps the operand's type.
    `Op.build_inferred(operands, properties)` builds any op but a `ResultTypedOp`,
    filling in the defaults (`Op.with_defaults`).
    """

    # Attributes read as `{strides = ...}` in the attribute dictionary, as in MLIR.
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(GraphCanonicalization())

    @classmethod
    @abc.abstractmethod
    def infer_result_types(
        cls, operand_types: Sequence[Attribute], properties: Mapping[str, Attribute]
    ) -> list[Attribute]:
        """Result types for these operands and properties (defaults filled in);
        raises VerifyException."""

    @abc.abstractmethod
    def evaluate(self, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """numpy reference semantics: one array per result, of the result types.
        Absent optional operands are not passed."""

    @classmethod
    def with_defaults(cls, properties: Mapping[str, Attribute | None]) -> dict[str, Attribute]:
        """`properties` (None meaning absent) completed with the defaults of those left out,
        as `infer_result_types` expects them."""
        defaults = {
            name: definition.default_value
            for name, definition in cls.get_irdl_definition().properties.items()
            if definition.default_value is not None
        }
        return defaults | {k: v for k, v in properties.items() if v is not None}

    @classmethod
    def build_inferred(
        cls,
        operands: Sequence[SSAValue | Operation | None],
        properties: Mapping[str, Attribute | None] | None = None,
    ):
        """Build the op with its result types inferred from operands and properties.

        `None` stands for an absent optional operand or property; properties
        left out take their defaults.
        """
        properties = cls.with_defaults(properties or {})
        present = [SSAValue.get(o) for o in operands if o is not None]
        result_types = cls.infer_result_types([v.type for v in present], properties)
        # `create` bypasses the ops' convenience `__init__`s; with at most one
        # optional or variadic operand per op, the flat operand list is unambiguous.
        return cls.create(operands=present, properties=properties, result_types=result_types)

    def verify_(self) -> None:
        inferred = type(self).infer_result_types(
            [operand.type for operand in self.operands], self.properties
        )
        for index, (result, expected) in enumerate(zip(self.results, inferred)):
            if result.type != expected:
                raise VerifyException(
                    f"result #{index} has type {result.type}, but the operands and "
                    f"attributes imply {expected}"
                )


class UnaryElementwiseOp(GraphOp, abc.ABC):
    """`%y = graph.<op> %x : tensor<...>`: same shape and element type in and out."""

    traits = traits_def(Pure(), FusionPattern(OpPatternKind.ELEMWISE))

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    output = result_def(T)

    assembly_format = "$input attr-dict `:` type($input)"

    FLOAT_ONLY: ClassVar[bool] = True

    def __init__(self, input: SSAValue | Operation, **properties: Attribute):
        super().__init__(
            operands=[input],
            result_types=[SSAValue.get(input).type],
            properties=properties,
        )

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        input_type = ranked_tensor(operand_types[0], "input")
        if cls.FLOAT_ONLY and not is_float(input_type.get_element_type()):
            raise VerifyException(
                f"input must have a floating-point element type, got {input_type}"
            )
        return [input_type]

    @abc.abstractmethod
    def compute(self, x: np.ndarray) -> np.ndarray:
        """The elementwise function on an array of `compute_dtype`."""

    def evaluate(self, *inputs):
        (x,) = inputs
        return (np.asarray(self.compute(widen(x))).astype(x.dtype),)


class BinaryBroadcastOp(GraphOp, abc.ABC):
    """`%z = graph.<op> %a, %b : (tensor<A>, tensor<B>) -> tensor<C>` with numpy broadcasting."""

    traits = traits_def(Pure(), FusionPattern(OpPatternKind.BROADCAST))

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    output = result_def(TensorType)

    assembly_format = (
        "$lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` `->` type($output)"
    )

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        lhs_type, rhs_type = SSAValue.get(lhs).type, SSAValue.get(rhs).type
        (result_type,) = self.infer_result_types([lhs_type, rhs_type], {})
        super().__init__(operands=[lhs, rhs], result_types=[result_type])

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        lhs = ranked_tensor(operand_types[0], "lhs")
        rhs = ranked_tensor(operand_types[1], "rhs")
        element_type = same_element_type([lhs, rhs], "lhs and rhs")
        shape = broadcast_shapes(lhs.get_shape(), rhs.get_shape())
        return [TensorType(element_type, shape)]

    @staticmethod
    @abc.abstractmethod
    def compute(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The elementwise function with numpy broadcasting, on arrays of `compute_dtype`."""

    def evaluate(self, *inputs):
        a, b = inputs
        return (np.asarray(self.compute(widen(a), widen(b))).astype(a.dtype),)


class UnaryShapedOp(GraphOp, abc.ABC):
    """`%y = graph.<op> %x {...} : tensor<A> -> tensor<B>`: one operand, one result."""

    input = operand_def(TensorType)
    output = result_def(TensorType)

    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"


class ResultTypedOp(UnaryShapedOp, abc.ABC):
    """An op whose result type is its target (reshape's shape, cast's element type).

    Nothing else states the target, so the result type cannot be inferred:
    build these with `Op(input, result_type)`; the verifier checks that the
    result type is one the op can produce from its input.
    """

    def __init__(self, input: SSAValue | Operation, result_type: Attribute):
        super().__init__(operands=[input], result_types=[result_type])

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        raise VerifyException(
            f"'{cls.name}' takes its target from its result type; "
            f"build it with {cls.__name__}(input, result_type)"
        )

    @classmethod
    @abc.abstractmethod
    def check_result_type(cls, input_type: TensorType, result_type: TensorType) -> None:
        """Raise VerifyException if `input_type` cannot become `result_type`."""

    def verify_(self) -> None:
        self.check_result_type(
            ranked_tensor(self.input.type, "input"), ranked_tensor(self.output.type, "result")
        )


# --------------------------------------------------------------------------- #
# Constants
# --------------------------------------------------------------------------- #


@irdl_op_definition
class ConstantOp(GraphOp):
    """A tensor constant: `%c = graph.constant dense<...> : tensor<...>`."""

    name = "graph.constant"
    traits = traits_def(Pure(), ConstantLike(), FusionPattern(OpPatternKind.OPAQUE))

    _T: ClassVar = VarConstraint("T", base(TensorType))
    output = result_def(_T)
    value = prop_def(ParamAttrConstraint(DenseIntOrFPElementsAttr, (_T, AnyAttr())))

    assembly_format = "attr-dict $value"

    def __init__(self, value: DenseIntOrFPElementsAttr):
        super().__init__(properties={"value": value}, result_types=[value.type])

    @staticmethod
    def from_array(array: np.ndarray) -> ConstantOp:
        array = np.asarray(array, order="C")  # not ascontiguousarray: it makes 0-d arrays 1-d
        return ConstantOp(
            DenseIntOrFPElementsAttr(tensor_type_of(array), BytesAttr(array.tobytes()))
        )

    def to_array(self) -> np.ndarray:
        return elements_to_array(self.value)

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        return [properties["value"].type]

    def evaluate(self, *inputs):
        return (self.to_array(),)


# --------------------------------------------------------------------------- #
# Elementwise activations and math
# --------------------------------------------------------------------------- #


def sigmoid(x: np.ndarray) -> np.ndarray:
    # Split by sign so neither branch overflows exp.
    z = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + z), z / (1 + z))


_erf = np.vectorize(math.erf, otypes=[np.float64])


def erf(x: np.ndarray) -> np.ndarray:
    """math.erf elementwise in float64 (scipy is not a dependency), then rounded to x's dtype."""
    return _erf(x).astype(x.dtype)


@irdl_op_definition
class ReluOp(UnaryElementwiseOp):
    """max(x, 0)."""

    name = "graph.relu"
    FLOAT_ONLY: ClassVar[bool] = False

    @staticmethod
    def compute(x):
        return np.maximum(x, 0)


@irdl_op_definition
class Relu6Op(UnaryElementwiseOp):
    """min(max(x, 0), 6) (ONNX: Clip with min 0 and max 6)."""

    name = "graph.relu6"
    FLOAT_ONLY: ClassVar[bool] = False

    @staticmethod
    def compute(x):
        return np.clip(x, 0, 6)


@irdl_op_definition
class LeakyReluOp(UnaryElementwiseOp):
    """x if x >= 0 else alpha * x (ONNX LeakyRelu)."""

    name = "graph.leaky_relu"
    alpha = prop_def(FloatAttr[Float32Type], default_value=f32_attr(0.01))

    def compute(self, x):
        return np.where(x >= 0, x, x * x.dtype.type(self.alpha.value.data))


@irdl_op_definition
class EluOp(UnaryElementwiseOp):
    """x if x > 0 else alpha * (exp(x) - 1) (ONNX Elu)."""

    name = "graph.elu"
    alpha = prop_def(FloatAttr[Float32Type], default_value=f32_attr(1.0))

    def compute(self, x):
        alpha = x.dtype.type(self.alpha.value.data)
        return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


@irdl_op_definition
class GeluOp(UnaryElementwiseOp):
    """0.5 x (1 + erf(x / sqrt 2)), or its tanh approximation (ONNX Gelu)."""

    name = "graph.gelu"
    approximate = prop_def(StringAttr, default_value=StringAttr("none"))

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        approximate = scalar_of(properties, "approximate")
        if approximate not in ("none", "tanh"):
            raise VerifyException(f'approximate must be "none" or "tanh", got "{approximate}"')
        return super().infer_result_types(operand_types, properties)

    def compute(self, x):
        if self.approximate.data == "tanh":
            inner = np.sqrt(2 / np.pi).astype(x.dtype) * (x + x.dtype.type(0.044715) * x**3)
            return x.dtype.type(0.5) * x * (1 + np.tanh(inner))
        return x.dtype.type(0.5) * x * (1 + erf(x / np.sqrt(x.dtype.type(2))))


@irdl_op_definition
class SigmoidOp(UnaryElementwiseOp):
    """1 / (1 + e**-x)."""

    name = "graph.sigmoid"

    @staticmethod
    def compute(x):
        return sigmoid(x)


@irdl_op_definition
class TanhOp(UnaryElementwiseOp):
    """tanh(x)."""

    name = "graph.tanh"

    @staticmethod
    def compute(x):
        return np.tanh(x)


@irdl_op_definition
class SiluOp(UnaryElementwiseOp):
    """x * sigmoid(x) (swish; ONNX has no single op for it)."""

    name = "graph.silu"

    @staticmethod
    def compute(x):
        return x * sigmoid(x)


@irdl_op_definition
class HardSigmoidOp(UnaryElementwiseOp):
    """max(0, min(1, alpha * x + beta)) (ONNX HardSigmoid)."""

    name = "graph.hard_sigmoid"
    alpha = prop_def(FloatAttr[Float32Type], default_value=f32_attr(0.2))
    beta = prop_def(FloatAttr[Float32Type], default_value=f32_attr(0.5))

    def compute(self, x):
        alpha, beta = (x.dtype.type(a.value.data) for a in (self.alpha, self.beta))
        return np.clip(alpha * x + beta, 0, 1)


@irdl_op_definition
class HardSwishOp(UnaryElementwiseOp):
    """x * max(0, min(1, x / 6 + 1/2)) (ONNX HardSwish)."""

    name = "graph.hard_swish"

    @staticmethod
    def compute(x):
        return x * np.clip(x * x.dtype.type(1 / 6) + x.dtype.type(0.5), 0, 1)


@irdl_op_definition
class SoftplusOp(UnaryElementwiseOp):
    """log(1 + e**x), computed without overflow."""

    name = "graph.softplus"

    @staticmethod
    def compute(x):
        return np.logaddexp(x, 0)


@irdl_op_definition
class ClipOp(UnaryElementwiseOp):
    """min(max(x, min), max) with either bound optional (ONNX Clip with constant bounds)."""

    name = "graph.clip"
    FLOAT_ONLY: ClassVar[bool] = False
    min = opt_prop_def(FloatAttr[Float32Type])
    max = opt_prop_def(FloatAttr[Float32Type])

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        low, high = scalar_of(properties, "min"), scalar_of(properties, "max")
        if low is not None and high is not None and low > high:
            raise VerifyException(f"min ({low}) must not exceed max ({high})")
        return super().infer_result_types(operand_types, properties)

    def compute(self, x):
        if self.min is not None:
            x = np.maximum(x, np.asarray(self.min.value.data).astype(x.dtype))
        if self.max is not None:
            x = np.minimum(x, np.asarray(self.max.value.data).astype(x.dtype))
        return x


@irdl_op_definition
class ExpOp(UnaryElementwiseOp):
    """e**x."""

    name = "graph.exp"

    @staticmethod
    def compute(x):
        return np.exp(x)


@irdl_op_definition
class LogOp(UnaryElementwiseOp):
    """Natural logarithm."""

    name = "graph.log"

    @staticmethod
    def compute(x):
        return np.log(x)


@irdl_op_definition
class SqrtOp(UnaryElementwiseOp):
    """Square root."""

    name = "graph.sqrt"

    @staticmethod
    def compute(x):
        return np.sqrt(x)


@irdl_op_definition
class RsqrtOp(UnaryElementwiseOp):
    """1 / sqrt(x)."""

    name = "graph.rsqrt"

    @staticmethod
    def compute(x):
        return 1 / np.sqrt(x)


@irdl_op_definition
class ReciprocalOp(UnaryElementwiseOp):
    """1 / x."""

    name = "graph.reciprocal"

    @staticmethod
    def compute(x):
        return 1 / x


@irdl_op_definition
class NegOp(UnaryElementwiseOp):
    """-x (integers wrap around, as in ONNX)."""

    name = "graph.neg"
    FLOAT_ONLY: ClassVar[bool] = False

    @staticmethod
    def compute(x):
        return -x


@irdl_op_definition
class AbsOp(UnaryElementwiseOp):
    """|x| (|-128| is -128 in i8, as in ONNX)."""

    name = "graph.abs"
    FLOAT_ONLY: ClassVar[bool] = False

    @staticmethod
    def compute(x):
        return np.abs(x)


@irdl_op_definition
class ErfOp(UnaryElementwiseOp):
    """The error function."""

    name = "graph.erf"

    @staticmethod
    def compute(x):
        return erf(x)


@irdl_op_definition
class SinOp(UnaryElementwiseOp):
    """sin(x)."""

    name = "graph.sin"

    @staticmethod
    def compute(x):
        return np.sin(x)


@irdl_op_definition
class CosOp(UnaryElementwiseOp):
    """cos(x)."""

    name = "graph.cos"

    @staticmethod
    def compute(x):
        return np.cos(x)


@irdl_op_definition
class TanOp(UnaryElementwiseOp):
    """tan(x)."""

    name = "graph.tan"

    @staticmethod
    def compute(x):
        return np.tan(x)


@irdl_op_definition
class AsinOp(UnaryElementwiseOp):
    """arcsin(x) (NaN outside [-1, 1])."""

    name = "graph.asin"

    @staticmethod
    def compute(x):
        return np.arcsin(x)


@irdl_op_definition
class AcosOp(UnaryElementwiseOp):
    """arccos(x) (NaN outside [-1, 1])."""

    name = "graph.acos"

    @staticmethod
    def compute(x):
        return np.arccos(x)


@irdl_op_definition
class AtanOp(UnaryElementwiseOp):
    """arctan(x)."""

    name = "graph.atan"

    @staticmethod
    def compute(x):
        return np.arctan(x)


@irdl_op_definition
class SinhOp(UnaryElementwiseOp):
    """sinh(x)."""

    name = "graph.sinh"

    @staticmethod
    def compute(x):
        return np.sinh(x)


@irdl_op_definition
class CoshOp(UnaryElementwiseOp):
    """cosh(x)."""

    name = "graph.cosh"

    @staticmethod
    def compute(x):
        return np.cosh(x)


@irdl_op_definition
class AsinhOp(UnaryElementwiseOp):
    """arsinh(x)."""

    name = "graph.asinh"

    @staticmethod
    def compute(x):
        return np.arcsinh(x)


@irdl_op_definition
class AcoshOp(UnaryElementwiseOp):
    """arcosh(x) (NaN below 1)."""

    name = "graph.acosh"

    @staticmethod
    def compute(x):
        return np.arccosh(x)


@irdl_op_definition
class AtanhOp(UnaryElementwiseOp):
    """artanh(x) (NaN outside [-1, 1])."""

    name = "graph.atanh"

    @staticmethod
    def compute(x):
        return np.arctanh(x)


@irdl_op_definition
class FloorOp(UnaryElementwiseOp):
    """The largest integer not above x."""

    name = "graph.floor"

    @staticmethod
    def compute(x):
        return np.floor(x)


@irdl_op_definition
class CeilOp(UnaryElementwiseOp):
    """The smallest integer not below x."""

    name = "graph.ceil"

    @staticmethod
    def compute(x):
        return np.ceil(x)


@irdl_op_definition
class RoundOp(UnaryElementwiseOp):
    """The nearest integer, halves to even (ONNX Round)."""

    name = "graph.round"

    @staticmethod
    def compute(x):
        return np.rint(x)


# --------------------------------------------------------------------------- #
# Binary elementwise with broadcasting
# --------------------------------------------------------------------------- #


@irdl_op_definition
class AddOp(BinaryBroadcastOp):
    """a + b."""

    name = "graph.add"

    @staticmethod
    def compute(a, b):
        return a + b


@irdl_op_definition
class SubOp(BinaryBroadcastOp):
    """a - b."""

    name = "graph.sub"

    @staticmethod
    def compute(a, b):
        return a - b


@irdl_op_definition
class MulOp(BinaryBroadcastOp):
    """a * b."""

    name = "graph.mul"

    @staticmethod
    def compute(a, b):
        return a * b


@irdl_op_definition
class DivOp(BinaryBroadcastOp):
    """a / b; integer division truncates toward zero (ONNX, C), unlike numpy's floor."""

    name = "graph.div"

    @staticmethod
    def compute(a, b):
        if a.dtype.kind in "iu":
            quotient = np.abs(a) // np.abs(b)
            return np.where((a < 0) != (b < 0), -quotient, quotient)
        return a / b


@irdl_op_definition
class PowOp(BinaryBroadcastOp):
    """a ** b (both operands of one element type).

    An integer power with a negative exponent is an evaluation error (numpy's
    ValueError): ONNX gives it no value (onnxruntime truncates 1 / a**n).
    """

    name = "graph.pow"

    @staticmethod
    def compute(a, b):
        return np.power(a, b)


@irdl_op_definition
class MaxOp(BinaryBroadcastOp):
    """Elementwise maximum (NaN propagates)."""

    name = "graph.max"

    @staticmethod
    def compute(a, b):
        return np.maximum(a, b)


@irdl_op_definition
class MinOp(BinaryBroadcastOp):
    """Elementwise minimum (NaN propagates)."""

    name = "graph.min"

    @staticmethod
    def compute(a, b):
        return np.minimum(a, b)


@irdl_op_definition
class ModOp(BinaryBroadcastOp):
    """The remainder of a / b (ONNX Mod): with the divisor's sign (Python's %), or with
    `fmod` the dividend's (C's fmod). Integers are computed in their own type, so that
    64-bit and unsigned remainders are exact; a zero divisor gives 0 for integers."""

    name = "graph.mod"
    fmod = prop_def(BoolAttr, default_value=bool_attr(False))

    def compute(self, a, b):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.fmod(a, b) if self.fmod.value.data else np.mod(a, b)

    def evaluate(self, *inputs):
        a, b = inputs
        if a.dtype.kind not in "iub":
            a, b = widen(a), widen(b)
        return (np.asarray(self.compute(a, b)).astype(inputs[0].dtype),)


class IntegerBinaryOp(BinaryBroadcastOp, abc.ABC):
    """A binary op on integer tensors only (the bitwise ops and shifts)."""

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        (result,) = super().infer_result_types(operand_types, properties)
        if not isinstance(result.get_element_type(), IntegerType):
            raise VerifyException(f"operands must have an integer element type, got {result}")
        return [result]


@irdl_op_definition
class BitwiseAndOp(IntegerBinaryOp):
    """a & b on integers (ONNX BitwiseAnd)."""

    name = "graph.bitwise_and"

    @staticmethod
    def compute(a, b):
        return a & b


@irdl_op_definition
class BitwiseOrOp(IntegerBinaryOp):
    """a | b on integers (ONNX BitwiseOr)."""

    name = "graph.bitwise_or"

    @staticmethod
    def compute(a, b):
        return a | b


@irdl_op_definition
class BitwiseXorOp(IntegerBinaryOp):
    """a ^ b on integers (ONNX BitwiseXor)."""

    name = "graph.bitwise_xor"

    @staticmethod
    def compute(a, b):
        return a ^ b


@irdl_op_definition
class BitShiftOp(IntegerBinaryOp):
    """a shifted by b bits (ONNX BitShift): `direction` "left" or "right" (arithmetic for
    signed integers). A shift outside [0, bit width) gives 0, or -1 for a right shift
    of a negative number, as ONNX's reference."""

    name = "graph.bit_shift"
    direction = prop_def(StringAttr, default_value=StringAttr("left"))

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        direction = scalar_of(properties, "direction")
        if direction not in ("left", "right"):
            raise VerifyException(f'direction must be "left" or "right", got "{direction}"')
        return super().infer_result_types(operand_types, properties)

    def evaluate(self, *inputs):
        # In the operands' own type: widened, a right shift would bring in bits from above.
        return (self.compute(*inputs),)

    def compute(self, a, b):
        a, b = np.broadcast_arrays(a, b)
        unsigned = np.dtype(f"u{a.dtype.itemsize}")
        valid = (b >= 0) & (b < 8 * a.dtype.itemsize)
        shift = np.where(valid, b, 0).astype(unsigned)
        if self.direction.data == "left":
            shifted = np.left_shift(a.view(unsigned), shift).view(a.dtype)
            fill = np.zeros_like(a)
        else:
            shifted = np.right_shift(a, shift.astype(a.dtype))
            fill = np.where(a < 0, -1, 0).astype(a.dtype)
        return np.where(valid, shifted, fill).astype(a.dtype)


@irdl_op_definition
class PReluOp(GraphOp):
    """x if x >= 0 else slope * x; `slope` broadcasts to x (ONNX PRelu)."""

    name = "graph.prelu"
    traits = traits_def(Pure(), FusionPattern(OpPatternKind.BROADCAST))

    input = operand_def(TensorType)
    slope = operand_def(TensorType)
    output = result_def(TensorType)

    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        x = float_tensor(operand_types[0], "input")
        slope = ranked_tensor(operand_types[1], "slope")
        same_element_type([x, slope], "input and slope")
        check_broadcasts_to(slope.get_shape(), x.get_shape(), "slope")
        return [x]

    def evaluate(self, *inputs):
        x, slope = (widen(a) for a in inputs)
        return (np.where(x >= 0, x, slope * x).astype(inputs[0].dtype),)


@irdl_op_definition
class WhereOp(GraphOp):
    """`condition ? x : y` elementwise, the three operands broadcast together (ONNX Where)."""

    name = "graph.where"
    traits = traits_def(Pure(), FusionPattern(OpPatternKind.BROADCAST))

    condition = operand_def(TensorType)
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    output = result_def(TensorType)

    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        condition = ranked_tensor(operand_types[0], "condition")
        if condition.get_element_type() != IntegerType(1):
            raise VerifyException(f"condition must have element type i1, got {condition}")
        lhs = ranked_tensor(operand_types[1], "lhs")
        rhs = ranked_tensor(operand_types[2], "rhs")
        element_type = same_element_type([lhs, rhs], "lhs and rhs")
        shape = broadcast_shapes(
            condition.get_shape(), broadcast_shapes(lhs.get_shape(), rhs.get_shape())
        )
        return [TensorType(element_type, shape)]

    def evaluate(self, *inputs):
        condition, a, b = inputs
        return (np.where(condition, a, b),)


class CompareOp(BinaryBroadcastOp, abc.ABC):
    """`%m = graph.<cmp> %a, %b : (tensor<A>, tensor<B>) -> tensor<Cxi1>`: an elementwise
    comparison with broadcasting, giving a boolean (i1) tensor."""

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        (compared,) = super().infer_result_types(operand_types, properties)
        return [TensorType(IntegerType(1), compared.get_shape())]

    def evaluate(self, *inputs):
        a, b = inputs
        return (np.asarray(self.compute(widen(a), widen(b))),)


@irdl_op_definition
class EqualOp(CompareOp):
    """a == b (ONNX Equal)."""

    name = "graph.equal"

    @staticmethod
    def compute(a, b):
        return a == b


@irdl_op_definition
class GreaterOp(CompareOp):
    """a > b (ONNX Greater)."""

    name = "graph.greater"

    @staticmethod
    def compute(a, b):
        return a > b


@irdl_op_definition
class LessOp(CompareOp):
    """a < b (ONNX Less)."""

    name = "graph.less"

    @staticmethod
    def compute(a, b):
        return a < b


@irdl_op_definition
class NotOp(UnaryElementwiseOp):
    """Logical negation of a boolean (i1) tensor (ONNX Not)."""

    name = "graph.not"
    FLOAT_ONLY: ClassVar[bool] = False

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        (x,) = super().infer_result_types(operand_types, properties)
        if x.get_element_type() != IntegerType(1):
            raise VerifyException(f"input must have element type i1, got {x}")
        return [x]

    @staticmethod
    def compute(x):
        return x == 0


@irdl_op_definition
class BitwiseNotOp(UnaryElementwiseOp):
    """~x on integers (ONNX BitwiseNot); -x - 1 for signed ones, so it never overflows."""

    name = "graph.bitwise_not"
    FLOAT_ONLY: ClassVar[bool] = False

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        (x,) = super().infer_result_types(operand_types, properties)
        if not isinstance(x.get_element_type(), IntegerType):
            raise VerifyException(f"input must have an integer element type, got {x}")
        return [x]

    @staticmethod
    def compute(x):
        return ~x


# --------------------------------------------------------------------------- #
# Contractions
# --------------------------------------------------------------------------- #


@irdl_op_definition
class MatMulOp(GraphOp):
    """numpy.matmul: batched, with broadcasting of the batch dimensions.

    1-D operands are promoted as numpy does (a vector lhs gets a leading 1, a
    vector rhs a trailing 1, and the promoted dimension is dropped from the result).
    """

    name = "graph.matmul"
    traits = traits_def(Pure(), FusionPattern(OpPatternKind.OUT_ELEMWISE_FUSABLE))

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    output = result_def(TensorType)

    assembly_format = BinaryBroadcastOp.assembly_format

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        lhs = ranked_tensor(operand_types[0], "lhs")
        rhs = ranked_tensor(operand_types[1], "rhs")
        element_type = same_element_type([lhs, rhs], "lhs and rhs")
        a, b = list(lhs.get_shape()), list(rhs.get_shape())
        if not a or not b:
            raise VerifyException("matmul operands must have rank >= 1")
        a_vector, b_vector = len(a) == 1, len(b) == 1
        a = [1, *a] if a_vector else a
        b = [*b, 1] if b_vector else b
        if a[-1] != b[-2]:
            raise VerifyException(
                f"contraction dimensions differ: lhs {lhs} has K={a[-1]}, rhs {rhs} has K={b[-2]}"
            )
        batch = broadcast_shapes(a[:-2], b[:-2])
        shape = [*batch, *([] if a_vector else [a[-2]]), *([] if b_vector else [b[-1]])]
        return [TensorType(element_type, shape)]

    def evaluate(self, *inputs):
        a, b = inputs
        return (np.matmul(widen_for_sums(a), widen_for_sums(b)).astype(a.dtype),)


@irdl_op_definition
class GemmOp(GraphOp):
    """alpha * op(a) @ op(b) + beta * c, op transposing when trans_a / trans_b (ONNX Gemm).

    `a` and `b` are 2-D; the optional `c` broadcasts to the (M, N) result.
    """

    name = "graph.gemm"
    traits = traits_def(Pure(), FusionPattern(OpPatternKind.OUT_ELEMWISE_FUSABLE))

    a = operand_def(TensorType)
    b = operand_def(TensorType)
    c = opt_operand_def(TensorType)
    output = result_def(TensorType)
    alpha = prop_def(FloatAttr[Float32Type], default_value=f32_attr(1.0))
    beta = prop_def(FloatAttr[Float32Type], default_value=f32_attr(1.0))
    trans_a = prop_def(BoolAttr, default_value=bool_attr(False))
    trans_b = prop_def(BoolAttr, default_value=bool_attr(False))

    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        types = [ranked_tensor(t, name) for t, name in zip(operand_types, "abc")]
        element_type = same_element_type(types, "a, b and c")
        a, b = types[0].get_shape(), types[1].get_shape()
        if len(a) != 2 or len(b) != 2:
            raise VerifyException(f"a and b must be 2-D, got {types[0]} and {types[1]}")
        m, k = a[::-1] if scalar_of(properties, "trans_a") else a
        k_b, n = b[::-1] if scalar_of(properties, "trans_b") else b
        if k != k_b:
            raise VerifyException(
                f"contraction dimensions differ: op(a) is {m}x{k}, op(b) is {k_b}x{n}"
            )
        if len(types) == 3:
            check_broadcasts_to(types[2].get_shape(), (m, n), "c")
        return [TensorType(element_type, (m, n))]

    def evaluate(self, *inputs):
        a, b, *c = (widen_for_sums(x) for x in inputs)
        a = a.T if self.trans_a.value.data else a
        b = b.T if self.trans_b.value.data else b
        alpha, beta = self.alpha.value.data, self.beta.value.data
        result = a @ b
        if alpha != 1:
            result = result * a.dtype.type(alpha)
        if c and beta != 0:
            result = result + (c[0] if beta == 1 else c[0] * a.dtype.type(beta))
        return (result.astype(inputs[0].dtype),)


@irdl_op_definition
class Conv2dOp(GraphOp):
    """2-D convolution (ONNX Conv), grouped and depthwise included.

    `%y = graph.conv2d %x, %w[, %bias] {...} : (...) -> ...`. In NCHW the
    weights are OIHW, in NHWC they are OHWI; I (the weights' input channels) is
    C / groups, so depthwise is groups = C with O = C * multiplier. `pads` is
    [top, left, bottom, right] (ONNX's order).
    """

    name = "graph.conv2d"
    traits = traits_def(Pure(), FusionPattern(OpPatternKind.OUT_ELEMWISE_FUSABLE))

    input = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    output = result_def(TensorType)
    strides = prop_def(DenseArrayBase[I64], default_value=int_array([1, 1]))
    pads = prop_def(DenseArrayBase[I64], default_value=int_array([0, 0, 0, 0]))
    dilations = prop_def(DenseArrayBase[I64], default_value=int_array([1, 1]))
    groups = prop_def(IntegerAttr[I64], default_value=i64_attr(1))
    layout = prop_def(StringAttr, default_value=StringAttr("NCHW"))

    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        x = ranked_tensor(operand_types[0], "input")
        w = ranked_tensor(operand_types[1], "weight")
        types = [x, w]
        if len(operand_types) == 3:
            types.append(ranked_tensor(operand_types[2], "bias"))
        element_type = same_element_type(types, "input, weight and bias")
        layout = layout_of(properties)
        if x.get_num_dims() != 4 or w.get_num_dims() != 4:
            raise VerifyException(f"input and weight must be 4-D ({layout}), got {x} and {w}")
        strides = checked_ints(properties, "strides", 2, 1)
        pads = checked_ints(properties, "pads", 4, 0)
        dilations = checked_ints(properties, "dilations", 2, 1)
        groups = scalar_of(properties, "groups")
        if groups < 1:
            raise VerifyException(f"groups must be positive, got {groups}")
        n, c, h, width = to_nchw(x.get_shape(), layout)
        o, c_per_group, kh, kw = to_nchw(w.get_shape(), layout)
        if c != c_per_group * groups:
            raise VerifyException(
                f"input channels ({c}) must equal weight input channels "
                f"({c_per_group}) times groups ({groups})"
            )
        if o % groups:
            raise VerifyException(f"output channels ({o}) must be a multiple of groups ({groups})")
        if len(types) == 3 and types[2].get_shape() != (o,):
            raise VerifyException(
                f"bias must have shape [{o}] (the output channels), got {types[2]}"
            )
        (oh, ow), _ = window_geometry((h, width), (kh, kw), strides, dilations, pads, False)
        return [TensorType(element_type, from_nchw([n, o, oh, ow], layout))]

    def evaluate(self, *inputs):
        x, w, *bias = inputs
        layout = self.layout.data
        x, w = widen_for_sums(to_nchw(x, layout)), widen_for_sums(to_nchw(w, layout))
        strides, pads, dilations = (
            ints_of(self.properties, name) for name in ("strides", "pads", "dilations")
        )
        groups = self.groups.value.data
        n, c, h, width = x.shape
        o, c_per_group, kh, kw = w.shape
        out, ends = window_geometry((h, width), (kh, kw), strides, dilations, pads, False)
        windows = sliding_windows(
            pad_spatial(x, pads[:2], ends, 0), (kh, kw), strides, dilations, out
        )
        # One matrix product per group, (O/G, C/G*KH*KW) x (C/G*KH*KW, OH*OW): BLAS on
        # im2col columns, 1.5-5x faster than the equivalent einsum (which also copies the
        # windows, in a worse order); a 1x1 stride-1 conv's columns are a view of x.
        columns = windows.reshape(n, groups, c_per_group, *out, kh, kw).transpose(
            0, 1, 2, 5, 6, 3, 4
        )
        columns = columns.reshape(n, groups, c_per_group * kh * kw, out[0] * out[1])
        w = w.reshape(groups, o // groups, c_per_group * kh * kw)
        y = np.matmul(w, columns).reshape(n, o, *out)
        if bias:
            y = y + widen_for_sums(bias[0]).reshape(o, 1, 1)
        return (from_nchw(y, layout).astype(inputs[0].dtype),)


# --------------------------------------------------------------------------- #
# Normalization and softmax
# --------------------------------------------------------------------------- #


@irdl_op_definition
class BatchNormOp(GraphOp):
    """Inference batch normalization (ONNX BatchNormalization, training_mode = 0).

    `(x - mean) / sqrt(var + epsilon) * scale + bias` with the four statistics
    of shape [C], C the channel axis 1 of an (N, C, ...) input.
    """

    name = "graph.batch_norm"
    traits = traits_def(Pure(), FusionPattern(OpPatternKind.BROADCAST))

    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    mean = operand_def(TensorType)
    variance = operand_def(TensorType)
    output = result_def(TensorType)
    epsilon = prop_def(FloatAttr[Float32Type], default_value=f32_attr(1e-5))

    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        x = float_tensor(operand_types[0], "input")
        names = ("scale", "bias", "mean", "variance")
        stats = [ranked_tensor(t, name) for t, name in zip(operand_types[1:], names)]
        same_element_type([x, *stats], "input, scale, bias, mean and variance")
        if x.get_num_dims() < 2:
            raise VerifyException(f"input must have rank >= 2 (N, C, ...), got {x}")
        channels = x.get_shape()[1]
        for name, stat in zip(names, stats):
            if stat.get_shape() != (channels,):
                raise VerifyException(
                    f"{name} must have shape [{channels}] (the input channels), got {stat}"
                )
        return [x]

    def evaluate(self, *inputs):
        x, scale, bias, mean, variance = (widen(a) for a in inputs)
        shape = (-1,) + (1,) * (x.ndim - 2)
        epsilon = x.dtype.type(self.epsilon.value.data)
        factor = scale / np.sqrt(variance + epsilon)
        y = (x - mean.reshape(shape)) * factor.reshape(shape) + bias.reshape(shape)
        return (y.astype(inputs[0].dtype),)


@irdl_op_definition
class LayerNormOp(GraphOp):
    """ONNX LayerNormalization: normalize over the axes [axis, rank), then `* scale + bias`.

    Statistics are computed in fp32 (ONNX's default stash_type); scale and bias
    broadcast to the normalized shape. Only the normalized output is produced.
    Opaque to fusion like softmax: a mean and a variance pass before the
    elementwise tail.
    """

    name = "graph.layer_norm"
    traits = traits_def(Pure(), FusionPattern(OpPatternKind.OPAQUE))

    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    output = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64], default_value=i64_attr(-1))
    epsilon = prop_def(FloatAttr[Float32Type], default_value=f32_attr(1e-5))

    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        x = float_tensor(operand_types[0], "input")
        names = ("scale", "bias")
        params = [ranked_tensor(t, name) for t, name in zip(operand_types[1:], names)]
        same_element_type([x, *params], "input, scale and bias")
        axis = normalize_axis(scalar_of(properties, "axis"), x.get_num_dims())
        normalized = x.get_shape()[axis:]
        for name, param in zip(names, params):
            check_broadcasts_to(param.get_shape(), normalized, name)
        return [x]

    def evaluate(self, *inputs):
        x, scale, *bias = (widen(a) for a in inputs)
        axes = tuple(range(self.axis.value.data % x.ndim, x.ndim))
        mean = x.mean(axis=axes, keepdims=True)
        variance = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
        y = (x - mean) / np.sqrt(variance + x.dtype.type(self.epsilon.value.data)) * scale
        if bias:
            y = y + bias[0]
        return (y.astype(inputs[0].dtype),)


class SoftmaxFamilyOp(GraphOp, abc.ABC):
    """`%y = graph.<op> %x {axis} : tensor<...>`: a normalization along one axis.

    Fusion kind OPAQUE, as TVM's Relay registers nn.softmax: the op is a max,
    an exp-sum and a divide over the same axis, scheduled as one kernel rather
    than as the root of an elementwise group.
    """

    traits = traits_def(Pure(), FusionPattern(OpPatternKind.OPAQUE))

    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    output = result_def(T)
    axis = prop_def(IntegerAttr[I64], default_value=i64_attr(-1))

    assembly_format = "$input attr-dict `:` type($input)"

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        x = float_tensor(operand_types[0], "input")
        normalize_axis(scalar_of(properties, "axis"), x.get_num_dims())
        return [x]

    @staticmethod
    @abc.abstractmethod
    def compute(shifted: np.ndarray, axis: int) -> np.ndarray:
        """The function of `x - max(x, axis)`."""

    def evaluate(self, *inputs):
        x = widen(inputs[0])
        axis = self.axis.value.data
        shifted = x - x.max(axis=axis, keepdims=True, initial=-np.inf)
        return (self.compute(shifted, axis).astype(inputs[0].dtype),)


@irdl_op_definition
class SoftmaxOp(SoftmaxFamilyOp):
    """exp(x) / sum(exp(x)) along `axis` (ONNX Softmax, opset >= 13)."""

    name = "graph.softmax"

    @staticmethod
    def compute(shifted, axis):
        e = np.exp(shifted)
        return e / e.sum(axis=axis, keepdims=True)


@irdl_op_definition
class LogSoftmaxOp(SoftmaxFamilyOp):
    """log(softmax(x)) along `axis`, computed as x - max - log(sum(exp(x - max)))."""

    name = "graph.log_softmax"

    @staticmethod
    def compute(shifted, axis):
        return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


# --------------------------------------------------------------------------- #
# Pooling
# --------------------------------------------------------------------------- #


class Pool2dOp(UnaryShapedOp, abc.ABC):
    """A 2-D window reduction (`kernel`, `strides`, `pads`, `ceil_mode`, `layout`).

    Fusion kind OUT_ELEMWISE_FUSABLE, as TVM registers max_pool2d and avg_pool2d.
    """

    traits = traits_def(Pure(), FusionPattern(OpPatternKind.OUT_ELEMWISE_FUSABLE))

    kernel = prop_def(DenseArrayBase[I64])
    strides = prop_def(DenseArrayBase[I64], default_value=int_array([1, 1]))
    pads = prop_def(DenseArrayBase[I64], default_value=int_array([0, 0, 0, 0]))
    ceil_mode = prop_def(BoolAttr, default_value=bool_attr(False))
    layout = prop_def(StringAttr, default_value=StringAttr("NCHW"))

    # Averages are float-only, as in ONNX; maxima are defined for integers too.
    FLOAT_ONLY: ClassVar[bool] = False

    @classmethod
    def window(cls, properties) -> tuple[list[int], list[int], list[int], list[int]]:
        """kernel, strides, pads, dilations, checked."""
        kernel = checked_ints(properties, "kernel", 2, 1)
        strides = checked_ints(properties, "strides", 2, 1)
        pads = checked_ints(properties, "pads", 4, 0)
        dilations = (
            checked_ints(properties, "dilations", 2, 1) if "dilations" in properties else [1, 1]
        )
        if any(pad >= kernel[i % 2] for i, pad in enumerate(pads)):
            raise VerifyException(f"pads {pads} must be smaller than the kernel {kernel}")
        return kernel, strides, pads, dilations

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        x = (float_tensor if cls.FLOAT_ONLY else ranked_tensor)(operand_types[0], "input")
        layout = layout_of(properties)
        if x.get_num_dims() != 4:
            raise VerifyException(f"input must be 4-D ({layout}), got {x}")
        kernel, strides, pads, dilations = cls.window(properties)
        n, c, h, w = to_nchw(x.get_shape(), layout)
        ceil_mode = scalar_of(properties, "ceil_mode")
        (oh, ow), _ = window_geometry((h, w), kernel, strides, dilations, pads, ceil_mode)
        return [TensorType(x.get_element_type(), from_nchw([n, c, oh, ow], layout))]

    @abc.abstractmethod
    def pool(self, x: np.ndarray, window, ends: list[int], out: list[int]) -> np.ndarray:
        """Pool an NCHW array of compute dtype; `ends` is the end padding."""

    def evaluate(self, *inputs):
        layout = self.layout.data
        x = widen(to_nchw(inputs[0], layout))
        window = self.window(self.properties)
        kernel, strides, pads, dilations = window
        out, ends = window_geometry(
            x.shape[2:], kernel, strides, dilations, pads, self.ceil_mode.value.data
        )
        y = self.pool(x, window, ends, out)
        return (from_nchw(y, layout).astype(inputs[0].dtype),)


@irdl_op_definition
class MaxPoolOp(Pool2dOp):
    """ONNX MaxPool (2-D, one output): padding never wins the max."""

    name = "graph.max_pool"
    dilations = prop_def(DenseArrayBase[I64], default_value=int_array([1, 1]))

    def pool(self, x, window, ends, out):
        kernel, strides, pads, dilations = window
        padded = pad_spatial(x, pads[:2], ends, lowest_value(x.dtype))
        return sliding_windows(padded, kernel, strides, dilations, out).max(axis=(-2, -1))


@irdl_op_definition
class AvgPoolOp(Pool2dOp):
    """ONNX AveragePool (2-D): the divisor counts the window's elements inside the
    input, or inside the padded input when `count_include_pad`; the extra
    elements a ceil-mode window reads past the pads never count."""

    name = "graph.avg_pool"
    count_include_pad = prop_def(BoolAttr, default_value=bool_attr(False))
    FLOAT_ONLY: ClassVar[bool] = True

    def pool(self, x, window, ends, out):
        kernel, strides, pads, dilations = window
        sums = sliding_windows(pad_spatial(x, pads[:2], ends, 0), kernel, strides, dilations, out)
        sums = sums.sum(axis=(-2, -1))
        h, w = x.shape[2:]
        if self.count_include_pad.value.data:
            inside = np.ones((1, 1, h + pads[0] + pads[2], w + pads[1] + pads[3]), x.dtype)
            mask = pad_spatial(inside, (0, 0), (ends[0] - pads[2], ends[1] - pads[3]), 0)
        else:
            mask = pad_spatial(np.ones((1, 1, h, w), x.dtype), pads[:2], ends, 0)
        counts = sliding_windows(mask, kernel, strides, dilations, out).sum(axis=(-2, -1))
        return sums / counts


class GlobalPoolOp(UnaryShapedOp, abc.ABC):
    """Reduce all spatial axes to 1 (ONNX GlobalAveragePool / GlobalMaxPool).

    For any rank >= 3: channels-first ("NCHW": axes 2..) or channels-last
    ("NHWC": axes 1..rank-2). OUT_ELEMWISE_FUSABLE, as TVM registers them.
    """

    traits = traits_def(Pure(), FusionPattern(OpPatternKind.OUT_ELEMWISE_FUSABLE))

    layout = prop_def(StringAttr, default_value=StringAttr("NCHW"))

    FLOAT_ONLY: ClassVar[bool] = False

    @staticmethod
    def spatial_axes(rank: int, layout: str) -> tuple[int, ...]:
        return tuple(range(2, rank)) if layout == "NCHW" else tuple(range(1, rank - 1))

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        x = (float_tensor if cls.FLOAT_ONLY else ranked_tensor)(operand_types[0], "input")
        layout = layout_of(properties)
        if x.get_num_dims() < 3:
            raise VerifyException(f"input must have rank >= 3 (batch, channels, spatial), got {x}")
        axes = cls.spatial_axes(x.get_num_dims(), layout)
        shape = [1 if i in axes else d for i, d in enumerate(x.get_shape())]
        return [TensorType(x.get_element_type(), shape)]

    @staticmethod
    @abc.abstractmethod
    def reduce(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray: ...

    def evaluate(self, *inputs):
        x = inputs[0]
        axes = self.spatial_axes(x.ndim, self.layout.data)
        return (self.reduce(widen(x), axes).astype(x.dtype),)


@irdl_op_definition
class GlobalAvgPoolOp(GlobalPoolOp):
    """Mean over the spatial axes."""

    name = "graph.global_avg_pool"
    FLOAT_ONLY: ClassVar[bool] = True

    @staticmethod
    def reduce(x, axes):
        return x.mean(axis=axes, keepdims=True)


@irdl_op_definition
class GlobalMaxPoolOp(GlobalPoolOp):
    """Maximum over the spatial axes."""

    name = "graph.global_max_pool"

    @staticmethod
    def reduce(x, axes):
        return x.max(axis=axes, keepdims=True, initial=lowest_value(x.dtype))


# --------------------------------------------------------------------------- #
# Reductions
# --------------------------------------------------------------------------- #


class ReduceOp(UnaryShapedOp, abc.ABC):
    """Reduce `axes` (all axes when absent, as ONNX with noop_with_empty_axes = 0),
    keeping them as size-1 dimensions when `keepdims` (the default)."""

    traits = traits_def(Pure(), FusionPattern(OpPatternKind.REDUCE))

    axes = opt_prop_def(DenseArrayBase[I64])
    keepdims = prop_def(BoolAttr, default_value=bool_attr(True))

    @staticmethod
    def reduced_axes(rank: int, properties) -> tuple[int, ...]:
        axes = ints_of(properties, "axes")
        return tuple(range(rank)) if not axes else tuple(normalize_axes(axes, rank))

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        x = ranked_tensor(operand_types[0], "input")
        axes = cls.reduced_axes(x.get_num_dims(), properties)
        keepdims = scalar_of(properties, "keepdims")
        shape = [
            1 if i in axes else d for i, d in enumerate(x.get_shape()) if keepdims or i not in axes
        ]
        return [TensorType(x.get_element_type(), shape)]

    @staticmethod
    @abc.abstractmethod
    def reduce(x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
        """The reduction on an array of compute dtype."""

    def evaluate(self, *inputs):
        x = inputs[0]
        axes = self.reduced_axes(x.ndim, self.properties)
        y = self.reduce(widen(x), axes, bool(self.keepdims.value.data))
        return (np.asarray(y).astype(x.dtype),)


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    """Sum (ONNX ReduceSum)."""

    name = "graph.reduce_sum"

    @staticmethod
    def reduce(x, axes, keepdims):
        return x.sum(axis=axes, keepdims=keepdims)


@irdl_op_definition
class ReduceMeanOp(ReduceOp):
    """Mean (ONNX ReduceMean); integer means truncate toward zero."""

    name = "graph.reduce_mean"

    @staticmethod
    def reduce(x, axes, keepdims):
        count = math.prod(x.shape[a] for a in axes)
        total = x.sum(axis=axes, keepdims=keepdims)
        return np.trunc(total / count) if x.dtype.kind in "iu" else total / count


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    """Maximum (ONNX ReduceMax)."""

    name = "graph.reduce_max"

    @staticmethod
    def reduce(x, axes, keepdims):
        return x.max(axis=axes, keepdims=keepdims, initial=lowest_value(x.dtype))


@irdl_op_definition
class ReduceProdOp(ReduceOp):
    """Product (ONNX ReduceProd); integers wrap around."""

    name = "graph.reduce_prod"

    @staticmethod
    def reduce(x, axes, keepdims):
        return x.prod(axis=axes, keepdims=keepdims)


@irdl_op_definition
class ArgMaxOp(UnaryShapedOp):
    """Index (i64) of the maximum along `axis` (ONNX ArgMax): the first one, or the
    last one with `select_last_index`. REDUCE for fusion, as TVM's argmax."""

    name = "graph.arg_max"
    traits = traits_def(Pure(), FusionPattern(OpPatternKind.REDUCE))

    axis = prop_def(IntegerAttr[I64], default_value=i64_attr(0))
    keepdims = prop_def(BoolAttr, default_value=bool_attr(True))
    select_last_index = prop_def(BoolAttr, default_value=bool_attr(False))

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        x = ranked_tensor(operand_types[0], "input")
        axis = normalize_axis(scalar_of(properties, "axis"), x.get_num_dims())
        if x.get_shape()[axis] == 0:
            raise VerifyException(f"axis {axis} of {x} is empty: it has no maximum")
        shape = list(x.get_shape())
        if scalar_of(properties, "keepdims"):
            shape[axis] = 1
        else:
            del shape[axis]
        return [TensorType(i64, shape)]

    def evaluate(self, *inputs):
        # Integers compare in their own type: widening 32- and 64-bit unsigned ones would wrap.
        x = inputs[0] if inputs[0].dtype.kind in "iu" else widen(inputs[0])
        axis = self.axis.value.data % x.ndim
        if self.select_last_index.value.data:
            last = x.shape[axis] - 1
            index = last - np.argmax(np.flip(x, axis), axis=axis, keepdims=True)
        else:
            index = np.argmax(x, axis=axis, keepdims=True)
        return (index.astype(np.int64).reshape(self.output.type.get_shape()),)


class CumulativeOp(UnaryShapedOp, abc.ABC):
    """A running sum or product along `axis` (ONNX CumSum, CumProd with a constant axis):
    `exclusive` leaves each element out of its own total, `reverse` runs from the end.
    OPAQUE for fusion, as TVM's cumsum (a scan)."""

    traits = traits_def(Pure(), FusionPattern(OpPatternKind.OPAQUE))

    axis = prop_def(IntegerAttr[I64])
    exclusive = prop_def(BoolAttr, default_value=bool_attr(False))
    reverse = prop_def(BoolAttr, default_value=bool_attr(False))

    IDENTITY: ClassVar[int]

    @staticmethod
    @abc.abstractmethod
    def accumulate(x: np.ndarray, axis: int) -> np.ndarray:
        """The inclusive running total along `axis`, in x's dtype."""

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        x = ranked_tensor(operand_types[0], "input")
        normalize_axis(scalar_of(properties, "axis"), x.get_num_dims())
        return [x]

    def evaluate(self, *inputs):
        x = widen(inputs[0])
        axis = self.axis.value.data % x.ndim
        reverse = self.reverse.value.data
        ordered = np.flip(x, axis) if reverse else x
        totals = self.accumulate(ordered, axis)
        if self.exclusive.value.data:
            # Shift by one along the axis (undoing each element's own share would round).
            shifted = np.full_like(totals, self.IDENTITY)
            into, start = [slice(None)] * x.ndim, [slice(None)] * x.ndim
            into[axis], start[axis] = slice(1, None), slice(None, -1)
            shifted[tuple(into)] = totals[tuple(start)]
            totals = shifted
        result = np.flip(totals, axis) if reverse else totals
        return (result.astype(inputs[0].dtype),)


@irdl_op_definition
class CumSumOp(CumulativeOp):
    """Running sum along `axis` (ONNX CumSum)."""

    name = "graph.cumsum"
    IDENTITY: ClassVar[int] = 0

    @staticmethod
    def accumulate(x, axis):
        return np.cumsum(x, axis=axis, dtype=x.dtype)


@irdl_op_definition
class CumProdOp(CumulativeOp):
    """Running product along `axis` (ONNX CumProd)."""

    name = "graph.cumprod"
    IDENTITY: ClassVar[int] = 1

    @staticmethod
    def accumulate(x, axis):
        return np.cumprod(x, axis=axis, dtype=x.dtype)


# --------------------------------------------------------------------------- #
# Shape manipulation
# --------------------------------------------------------------------------- #


@irdl_op_definition
class TransposeOp(GraphOp):
    """numpy.transpose with an explicit permutation: `{perm = array<i64: 0, 2, 1>}`."""

    name = "graph.transpose"
    traits = traits_def(Pure(), FusionPattern(OpPatternKind.INJECTIVE))

    input = operand_def(TensorType)
    perm = prop_def(DenseArrayBase[I64])
    output = result_def(TensorType)

    assembly_format = "$input attr-dict `:` type($input) `->` type($output)"

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        input_type = ranked_tensor(operand_types[0], "input")
        perm = list(properties["perm"].get_values())
        rank = input_type.get_num_dims()
        if sorted(perm) != list(range(rank)):
            raise VerifyException(
                f"perm {perm} is not a permutation of the {rank} dimensions of {input_type}"
            )
        shape = input_type.get_shape()
        return [TensorType(input_type.get_element_type(), [shape[p] for p in perm])]

    def evaluate(self, *inputs):
        return (np.transpose(inputs[0], self.perm.get_values()),)


@irdl_op_definition
class ReshapeOp(ResultTypedOp):
    """Row-major reshape to the result type's shape (ONNX Reshape with the shape resolved)."""

    name = "graph.reshape"
    traits = traits_def(Pure(), FusionPattern(OpPatternKind.INJECTIVE))

    @classmethod
    def check_result_type(cls, input_type, result_type):
        same_element_type([input_type, result_type], "input and result")
        count, result_count = (math.prod(t.get_shape()) for t in (input_type, result_type))
        if count != result_count:
            raise VerifyException(
                f"cannot reshape {input_type} ({count} elements) to {result_type} "
                f"({result_count} elements)"
            )

    def evaluate(self, *inputs):
        return (inputs[0].reshape(self.output.type.get_shape()),)


@irdl_op_definition
class BroadcastToOp(ResultTypedOp):
    """Broadcast to the result type's shape (ONNX Expand with the shape resolved)."""

    name = "graph.broadcast_to"
    traits = traits_def(Pure(), FusionPattern(OpPatternKind.BROADCAST))

    @classmethod
    def check_result_type(cls, input_type, result_type):
        same_element_type([input_type, result_type], "input and result")
        check_broadcasts_to(input_type.get_shape(), result_type.get_shape(), "input")

    def evaluate(self, *inputs):
        return (np.broadcast_to(inputs[0], self.output.type.get_shape()).copy(),)


@irdl_op_definition
class FlattenOp(UnaryShapedOp):
    """To 2-D: (product of dims before `axis`, product of the rest) (ONNX Flatten)."""

    name = "graph.flatten"
    traits = traits_def(Pure(), FusionPattern(OpPatternKind.INJECTIVE))

    axis = prop_def(IntegerAttr[I64], default_value=i64_attr(1))

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        x = ranked_tensor(operand_types[0], "input")
        rank, axis = x.get_num_dims(), scalar_of(properties, "axis")
        if not -rank <= axis <= rank:
            raise VerifyException(f"axis {axis} is out of range [{-rank}, {rank}]")
        axis = axis + rank if axis < 0 else axis
        shape = x.get_shape()
        return [
            TensorType(x.get_element_type(), (math.prod(shape[:axis]), math.prod(shape[axis:])))
        ]

    def evaluate(self, *inputs):
        return (inputs[0].reshape(self.output.type.get_shape()),)


@irdl_op_definition
class SqueezeOp(UnaryShapedOp):
    """Drop size-1 dimensions: those in `axes`, or all of them (ONNX Squeeze)."""

    name = "graph.squeeze"
    traits = traits_def(Pure(), FusionPattern(OpPatternKind.INJECTIVE))

    axes = opt_prop_def(DenseArrayBase[I64])

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        x = ranked_tensor(operand_types[0], "input")
        shape = x.get_shape()
        axes = ints_of(properties, "axes")
        if axes is None:
            dropped = [i for i, d in enumerate(shape) if d == 1]
        else:
            dropped = normalize_axes(axes, len(shape))
            for axis in dropped:
                if shape[axis] != 1:
                    raise VerifyException(
                        f"cannot squeeze axis {axis} of {x}: its size is {shape[axis]}, not 1"
                    )
        return [
            TensorType(x.get_element_type(), [d for i, d in enumerate(shape) if i not in dropped])
        ]

    def evaluate(self, *inputs):
        return (inputs[0].reshape(self.output.type.get_shape()),)


@irdl_op_definition
class UnsqueezeOp(UnaryShapedOp):
    """Insert size-1 dimensions at `axes` of the result (ONNX Unsqueeze)."""

    name = "graph.unsqueeze"
    traits = traits_def(Pure(), FusionPattern(OpPatternKind.INJECTIVE))

    axes = prop_def(DenseArrayBase[I64])

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        x = ranked_tensor(operand_types[0], "input")
        rank = x.get_num_dims() + len(ints_of(properties, "axes"))
        inserted = normalize_axes(ints_of(properties, "axes"), rank)
        dims = iter(x.get_shape())
        shape = [1 if i in inserted else next(dims) for i in range(rank)]
        return [TensorType(x.get_element_type(), shape)]

    def evaluate(self, *inputs):
        return (inputs[0].reshape(self.output.type.get_shape()),)


@irdl_op_definition
class ConcatOp(GraphOp):
    """Join tensors along `axis` (ONNX Concat).

    `%y = graph.concat %a, %b {axis = 1 : i64} : (tensor<A>, tensor<B>) -> tensor<C>`
    """

    name = "graph.concat"
    traits = traits_def(Pure(), FusionPattern(OpPatternKind.INJECTIVE))

    inputs = var_operand_def(TensorType)
    output = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])

    assembly_format = "$inputs attr-dict `:` functional-type($inputs, results)"

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        if not operand_types:
            raise VerifyException("concat needs at least one operand")
        types = [ranked_tensor(t, f"operand #{i}") for i, t in enumerate(operand_types)]
        element_type = same_element_type(types, "operands")
        first = types[0]
        rank = first.get_num_dims()
        axis = normalize_axis(scalar_of(properties, "axis"), rank)
        for index, t in enumerate(types[1:], start=1):
            other = t.get_shape()
            if len(other) != rank or any(
                a != b for i, (a, b) in enumerate(zip(first.get_shape(), other)) if i != axis
            ):
                raise VerifyException(
                    f"operand #{index} {t} must match operand #0 {first} in every "
                    f"dimension but the concatenation axis {axis}"
                )
        shape = list(first.get_shape())
        shape[axis] = sum(t.get_shape()[axis] for t in types)
        return [TensorType(element_type, shape)]

    def evaluate(self, *inputs):
        return (np.concatenate(inputs, axis=self.axis.value.data),)


_SLICE_TO_THE_END = (2**31 - 1, 2**63 - 1)


@irdl_op_definition
class SliceOp(UnaryShapedOp):
    """ONNX Slice with constant `starts`, `ends`, `axes` (default: 0, 1, ...) and
    `steps` (default: 1s): negative starts and ends count from the end and both
    are clamped to the dimension. As in onnxruntime, an end of INT32_MAX or
    INT64_MAX means "through the last element in the step's direction" (so
    with a negative step it reaches index 0, where plain clamping would stop
    before it)."""

    name = "graph.slice"
    traits = traits_def(Pure(), FusionPattern(OpPatternKind.INJECTIVE))

    starts = prop_def(DenseArrayBase[I64])
    ends = prop_def(DenseArrayBase[I64])
    axes = opt_prop_def(DenseArrayBase[I64])
    steps = opt_prop_def(DenseArrayBase[I64])

    @staticmethod
    def slices(shape: Sequence[int], properties) -> list[slice]:
        """One Python slice per dimension, as ONNX resolves starts/ends/steps."""
        starts, ends = ints_of(properties, "starts"), ints_of(properties, "ends")
        axes = ints_of(properties, "axes")
        axes = list(range(len(starts))) if axes is None else axes
        steps = ints_of(properties, "steps") or [1] * len(starts)
        if not len(starts) == len(ends) == len(axes) == len(steps):
            raise VerifyException(
                f"starts {starts}, ends {ends}, axes {axes} and steps {steps} "
                "must have the same length"
            )
        if 0 in steps:
            raise VerifyException(f"steps must be non-zero, got {steps}")
        result = [slice(None)] * len(shape)
        for axis, start, end, step in zip(normalize_axes(axes, len(shape)), starts, ends, steps):
            dim = shape[axis]
            if end in _SLICE_TO_THE_END:
                end = dim if step > 0 else -1
            else:
                end = end + dim if end < 0 else end
            start = start + dim if start < 0 else start
            if step > 0:
                start, end = min(max(start, 0), dim), min(max(end, 0), dim)
            else:
                start, end = min(max(start, 0), dim - 1), min(max(end, -1), dim - 1)
            # An end of -1 (before the first element) must not read as "the last".
            result[axis] = slice(start, None if end < 0 else end, step)
        return result

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        x = ranked_tensor(operand_types[0], "input")
        shape = x.get_shape()
        slices = cls.slices(shape, properties)
        sizes = [len(range(*s.indices(d))) for s, d in zip(slices, shape)]
        return [TensorType(x.get_element_type(), sizes)]

    def evaluate(self, *inputs):
        (x,) = inputs
        return (x[tuple(self.slices(x.shape, self.properties))].copy(),)


@irdl_op_definition
class PadOp(UnaryShapedOp):
    """ONNX Pad with constant `pads` ([x1_begin, x2_begin, ..., x1_end, x2_end, ...];
    negative values crop), `mode` "constant" (with `value`), "reflect" or "edge"."""

    name = "graph.pad"
    traits = traits_def(Pure(), FusionPattern(OpPatternKind.INJECTIVE))

    pads = prop_def(DenseArrayBase[I64])
    mode = prop_def(StringAttr, default_value=StringAttr("constant"))
    value = prop_def(FloatAttr[Float32Type], default_value=f32_attr(0.0))

    MODES: ClassVar[tuple[str, ...]] = ("constant", "reflect", "edge")

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        x = ranked_tensor(operand_types[0], "input")
        shape, rank = x.get_shape(), x.get_num_dims()
        pads = ints_of(properties, "pads")
        mode = scalar_of(properties, "mode")
        if mode not in cls.MODES:
            raise VerifyException(f'mode must be "constant", "reflect" or "edge", got "{mode}"')
        if len(pads) != 2 * rank:
            raise VerifyException(f"pads must have 2 x rank = {2 * rank} values, got {pads}")
        result = [d + pads[i] + pads[i + rank] for i, d in enumerate(shape)]
        for i, (dim, size) in enumerate(zip(shape, result)):
            if size < 0:
                raise VerifyException(f"pads {pads} crop dimension {i} of {x} below zero")
            grows = pads[i] > 0 or pads[i + rank] > 0
            if mode == "reflect" and grows and max(pads[i], pads[i + rank]) >= dim:
                raise VerifyException(
                    f"reflect pads of dimension {i} must be smaller than its size {dim}, "
                    f"got {pads[i]} and {pads[i + rank]}"
                )
            if mode == "edge" and grows and dim == 0:
                raise VerifyException(f"edge padding of empty dimension {i}")
        return [TensorType(x.get_element_type(), result)]

    def evaluate(self, *inputs):
        (x,) = inputs
        pads = ints_of(self.properties, "pads")
        rank = x.ndim
        if rank == 0:  # np.pad rejects 0-d arrays; there is nothing to pad
            return (x.copy(),)
        widths = [(max(pads[i], 0), max(pads[i + rank], 0)) for i in range(rank)]
        mode = self.mode.data
        if mode == "constant":
            value = np.asarray(self.value.value.data).astype(x.dtype)
            padded = np.pad(x, widths, mode="constant", constant_values=value)
        else:
            padded = np.pad(x, widths, mode=mode)
        crop = tuple(
            slice(max(-pads[i], 0), padded.shape[i] - max(-pads[i + rank], 0)) for i in range(rank)
        )
        return (padded[crop].copy(),)


@irdl_op_definition
class GatherOp(GraphOp):
    """ONNX Gather: take entries of `data` along `axis` at `indices` (negative ones
    count from the end). Result shape: data[:axis] + indices + data[axis+1:]."""

    name = "graph.gather"
    traits = traits_def(Pure(), FusionPattern(OpPatternKind.INJECTIVE))

    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    output = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64], default_value=i64_attr(0))

    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        data = ranked_tensor(operand_types[0], "data")
        indices = ranked_tensor(operand_types[1], "indices")
        if indices.get_element_type() not in (IntegerType(32), IntegerType(64)):
            raise VerifyException(f"indices must have element type i32 or i64, got {indices}")
        axis = normalize_axis(scalar_of(properties, "axis"), data.get_num_dims())
        shape = data.get_shape()
        return [
            TensorType(
                data.get_element_type(), [*shape[:axis], *indices.get_shape(), *shape[axis + 1 :]]
            )
        ]

    def evaluate(self, *inputs):
        data, indices = inputs
        axis = self.axis.value.data % data.ndim
        dim = data.shape[axis]
        if indices.size and (indices.min() < -dim or indices.max() >= dim):
            raise ValueError(
                f"gather indices must be in [{-dim}, {dim}), got {indices.min()}..{indices.max()}"
            )
        return (np.take(data, np.where(indices < 0, indices + dim, indices), axis=axis),)


@irdl_op_definition
class TopKOp(GraphOp):
    """The `k` largest (or smallest) entries along `axis` and their i64 indices (ONNX TopK with
    a constant k), in order from the first, equal values by lower index, NaN above every number.
    OPAQUE for fusion, as TVM's topk."""

    name = "graph.top_k"
    traits = traits_def(Pure(), FusionPattern(OpPatternKind.OPAQUE))

    input = operand_def(TensorType)
    values = result_def(TensorType)
    indices = result_def(TensorType)
    k = prop_def(IntegerAttr[I64])
    axis = prop_def(IntegerAttr[I64], default_value=i64_attr(-1))
    largest = prop_def(BoolAttr, default_value=bool_attr(True))

    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        x = ranked_tensor(operand_types[0], "input")
        axis = normalize_axis(scalar_of(properties, "axis"), x.get_num_dims())
        k = scalar_of(properties, "k")
        shape = list(x.get_shape())
        if not 0 <= k <= shape[axis]:
            raise VerifyException(
                f"k must be in [0, {shape[axis]}] (dimension {axis} of {x}), got {k}"
            )
        shape[axis] = k
        return [TensorType(x.get_element_type(), shape), TensorType(i64, shape)]

    def evaluate(self, *inputs):
        (x,) = inputs
        axis = self.axis.value.data % x.ndim
        keys = x if x.dtype.kind in "iub" else widen(x)
        if self.largest.value.data:
            # Descending with ties by lower index: a stable ascending sort of the reversed axis, reversed
            # (NaN, last in numpy's ascending order, comes first).
            last = x.shape[axis] - 1
            order = last - np.flip(np.argsort(np.flip(keys, axis), axis=axis, kind="stable"), axis)
        else:
            order = np.argsort(keys, axis=axis, kind="stable")
        index = np.take(order, np.arange(self.k.value.data), axis=axis).astype(np.int64)
        return np.take_along_axis(x, index, axis=axis), index


# --------------------------------------------------------------------------- #
# Type conversion and quantization
# --------------------------------------------------------------------------- #


@irdl_op_definition
class CastOp(ResultTypedOp):
    """Convert to the result's element type (ONNX Cast, saturate = 1).

    float -> integer truncates toward zero (onnxruntime's static_cast; ONNX
    leaves out-of-range values undefined), float -> fp8 saturates infinities
    and overflows to the largest finite value, integer -> narrower integer
    wraps around, anything -> i1 is "non-zero".
    """

    name = "graph.cast"
    traits = traits_def(Pure(), FusionPattern(OpPatternKind.ELEMWISE))

    @classmethod
    def check_result_type(cls, input_type, result_type):
        if input_type.get_shape() != result_type.get_shape():
            raise VerifyException(
                f"cast keeps the shape: input {input_type} and result {result_type} differ"
            )
        for t, what in ((input_type, "input"), (result_type, "result")):
            try:
                element_dtype(t)
            except ValueError:
                raise VerifyException(
                    f"{what} element type {t.get_element_type()} has no cast semantics"
                ) from None

    def evaluate(self, *inputs):
        (x,) = inputs
        target = element_dtype(self.output.type)
        if target.itemsize == 1 and target.kind == "V" and x.dtype.kind not in "iub":
            # ONNX's saturate: infinities and finite overflows become +-max, NaN stays NaN.
            largest = float(ml_dtypes.finfo(target).max)
            x = np.clip(x.astype(np.float32), -largest, largest)
        return (x.astype(target),)


def bit_width(element_type: Attribute) -> int | None:
    """Bits per element of an integer or float type (None for index and other types)."""
    if isinstance(element_type, IntegerType):
        return element_type.width.data
    try:
        return to_numpy_dtype(element_type).itemsize * 8
    except (KeyError, ValueError, TypeError):
        return None


@irdl_op_definition
class BitcastOp(ResultTypedOp):
    """Reinterpret each element's bits as the result's element type of the same width (ONNX BitCast).

    A boolean is a byte: to i1, a byte is true when it is not zero."""

    name = "graph.bitcast"
    traits = traits_def(Pure(), FusionPattern(OpPatternKind.ELEMWISE))

    @classmethod
    def check_result_type(cls, input_type, result_type):
        if input_type.get_shape() != result_type.get_shape():
            raise VerifyException(
                f"bitcast keeps the shape: input {input_type} and result {result_type} differ"
            )
        # A boolean takes a byte, as in ONNX's tensors.
        widths = [bit_width(t.get_element_type()) for t in (input_type, result_type)]
        widths = [8 if width == 1 else width for width in widths]
        if None in widths or widths[0] != widths[1]:
            raise VerifyException(
                "bitcast needs integer or float element types of the same width, got "
                f"{input_type.get_element_type()} and {result_type.get_element_type()}"
            )

    def evaluate(self, *inputs):
        (x,) = inputs
        target = element_dtype(self.output.type)
        if target == np.bool_:
            return (x.view(np.uint8) != 0,)  # a byte is true when it is not zero
        return (np.asarray(x).copy(order="C").view(target),)


QUANTIZED_TYPES = (
    IntegerType(8),
    IntegerType(8, Signedness.UNSIGNED),
    IntegerType(16),
    IntegerType(16, Signedness.UNSIGNED),
)


def check_quantized_type(
    value_type: TensorType, what: str, allowed: Sequence[Attribute] = QUANTIZED_TYPES
) -> None:
    if value_type.get_element_type() not in allowed:
        listed = ", ".join(str(t) for t in allowed)
        raise VerifyException(f"{what} must have element type {listed}; got {value_type}")


def check_quantization(x: TensorType, scale: TensorType, zero_point: TensorType, axis: int) -> None:
    """Per-tensor (scalar or [1] scale) or per-channel ([C] scale, C = x.shape[axis])."""
    if zero_point.get_shape() != scale.get_shape():
        raise VerifyException(f"zero_point {zero_point} must have the shape of scale {scale}")
    scale_shape = scale.get_shape()
    if scale_shape in ((), (1,)):
        return
    if len(scale_shape) != 1:
        raise VerifyException(
            f"scale must be a scalar (per-tensor) or 1-D (per-channel), got {scale}"
        )
    axis = normalize_axis(axis, x.get_num_dims())
    if scale_shape[0] != x.get_shape()[axis]:
        raise VerifyException(
            f"per-channel scale {scale} must have one entry per element of axis {axis} "
            f"of {x} ({x.get_shape()[axis]})"
        )


def channel_shape(x: np.ndarray, scale: np.ndarray, axis: int) -> tuple[int, ...]:
    """The shape that broadcasts a scale (scalar, [1] or [C]) along `axis` of x."""
    if scale.size == 1 and scale.ndim <= 1:
        return ()
    shape = [1] * x.ndim
    shape[axis % x.ndim] = scale.shape[0]
    return tuple(shape)


class QuantizationOp(GraphOp, abc.ABC):
    """`%y = graph.<op> %x, %scale, %zero_point {axis} : (...) -> ...`.

    BROADCAST for fusion: the scale and zero point broadcast along `axis`.
    """

    traits = traits_def(Pure(), FusionPattern(OpPatternKind.BROADCAST))

    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    zero_point = operand_def(TensorType)
    output = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64], default_value=i64_attr(1))

    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    def broadcast(self, x: np.ndarray, parameter: np.ndarray) -> np.ndarray:
        return parameter.reshape(channel_shape(x, parameter, self.axis.value.data))


@irdl_op_definition
class QuantizeOp(QuantizationOp):
    """ONNX QuantizeLinear: saturate(round_half_even(x / scale) + zero_point).

    The result takes the zero point's element type (i8, ui8, i16 or ui16).
    """

    name = "graph.quantize"

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        x = float_tensor(operand_types[0], "input")
        scale = ranked_tensor(operand_types[1], "scale")
        zero_point = ranked_tensor(operand_types[2], "zero_point")
        same_element_type([x, scale], "input and scale")
        check_quantized_type(zero_point, "zero_point")
        check_quantization(x, scale, zero_point, scalar_of(properties, "axis"))
        return [TensorType(zero_point.get_element_type(), x.get_shape())]

    def evaluate(self, *inputs):
        x, scale, zero_point = inputs
        target = zero_point.dtype
        wide = widen(x)
        scaled = np.rint(wide / self.broadcast(x, widen(scale)))
        shifted = scaled + self.broadcast(x, zero_point.astype(wide.dtype))
        info = np.iinfo(target)
        return (np.clip(shifted, info.min, info.max).astype(target),)


@irdl_op_definition
class DequantizeOp(QuantizationOp):
    """ONNX DequantizeLinear: (x - zero_point) * scale, in scale's element type.

    The input is i8, ui8, i16, ui16 or i32 (QDQ models' biases).
    """

    name = "graph.dequantize"

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        x = ranked_tensor(operand_types[0], "input")
        scale = float_tensor(operand_types[1], "scale")
        zero_point = ranked_tensor(operand_types[2], "zero_point")
        # int32 too: QDQ models dequantize int32 biases (with a zero point of 0).
        check_quantized_type(x, "input", (*QUANTIZED_TYPES, IntegerType(32)))
        same_element_type([x, zero_point], "input and zero_point")
        check_quantization(x, scale, zero_point, scalar_of(properties, "axis"))
        return [TensorType(scale.get_element_type(), x.get_shape())]

    def evaluate(self, *inputs):
        x, scale, zero_point = inputs
        difference = x.astype(np.int64) - self.broadcast(x, zero_point.astype(np.int64))
        wide_scale = widen(scale)
        y = difference.astype(wide_scale.dtype) * self.broadcast(x, wide_scale)
        return (y.astype(scale.dtype),)


# --------------------------------------------------------------------------- #
# Fusion groups
# --------------------------------------------------------------------------- #


@irdl_op_definition
class FusedOp(GraphOp):
    """A fusion group formed by `graph-fuse`: graph ops that run as one kernel.

    `%r = graph.fused "conv2d_add_relu" (%x, %w, %b) {root = "graph.conv2d"} ({
    ^bb0(%a : ..., %b : ..., %c : ...): ... graph.yield %v : ...}) : (...) -> ...`

    The body is isolated from above: its block arguments are the group's
    inputs (the operands, constants included) and `graph.yield` gives the
    results, the members' values used outside the group. `group_name` joins
    the members' op names; `root` names the anchor op kind (the member with
    the highest `OpPatternKind`), the op a tiling pass tiles first. The group
    itself fuses with nothing else (`OPAQUE`).
    """

    name = "graph.fused"
    traits = traits_def(
        Pure(), IsolatedFromAbove(), FusionPattern(OpPatternKind.OPAQUE), GraphCanonicalization()
    )

    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    group_name = prop_def(StringAttr)
    root = prop_def(StringAttr)
    body = region_def("single_block")

    assembly_format = (
        "$group_name `(` $inputs `)` attr-dict `(` $body `)` `:` functional-type($inputs, $outputs)"
    )

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        raise VerifyException(
            f"'{cls.name}' takes its result types from its body's 'graph.yield'; "
            f"build it with {cls.__name__}.create(...)"
        )

    def verify_(self) -> None:
        block = self.body.block
        arg_types = [arg.type for arg in block.args]
        operand_types = [operand.type for operand in self.inputs]
        if arg_types != operand_types:
            raise VerifyException(
                f"the body's block argument types {arg_types} must be the operand types "
                f"{operand_types}"
            )
        terminator = block.last_op
        if not isinstance(terminator, YieldOp):
            raise VerifyException("the body must end with 'graph.yield'")
        yielded = [value.type for value in terminator.values]
        result_types = [result.type for result in self.outputs]
        if yielded != result_types:
            raise VerifyException(
                f"'graph.yield' gives types {yielded}, but the results have types {result_types}"
            )
        for op in block.ops:
            if op is not terminator and not isinstance(op, GraphOp):
                raise VerifyException(f"the body may hold only graph ops, but holds '{op.name}'")

    def evaluate(self, *inputs):
        values: dict[SSAValue, np.ndarray] = dict(zip(self.body.block.args, inputs))
        for op in self.body.block.ops:
            if isinstance(op, YieldOp):
                return tuple(values[value] for value in op.values)
            results = op.evaluate(*(values[operand] for operand in op.operands))
            values.update(zip(op.results, results))
        raise VerifyException("the body must end with 'graph.yield'")


@irdl_op_definition
class YieldOp(IRDLOperation):
    """`graph.yield %a, %b : tensor<...>, tensor<...>`: the results of a `graph.fused` body."""

    name = "graph.yield"
    traits = traits_def(IsTerminator(), HasParent(FusedOp), Pure())

    values = var_operand_def(TensorType)

    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, *values: SSAValue | Operation):
        super().__init__(operands=[values])


FUSION_OPS: tuple[type[Operation], ...] = (FusedOp, YieldOp)
"""The ops `graph-fuse` creates: they hold other graph ops rather than compute on tensors."""


Graph = Dialect(
    "graph",
    [
        ConstantOp,
        # activations and unary math
        ReluOp,
        Relu6Op,
        LeakyReluOp,
        EluOp,
        GeluOp,
        SigmoidOp,
        TanhOp,
        SiluOp,
        HardSigmoidOp,
        HardSwishOp,
        SoftplusOp,
        ClipOp,
        ExpOp,
        LogOp,
        SqrtOp,
        RsqrtOp,
        ReciprocalOp,
        NegOp,
        AbsOp,
        ErfOp,
        SinOp,
        CosOp,
        TanOp,
        AsinOp,
        AcosOp,
        AtanOp,
        SinhOp,
        CoshOp,
        AsinhOp,
        AcoshOp,
        AtanhOp,
        FloorOp,
        CeilOp,
        RoundOp,
        # binary and ternary with broadcasting
        AddOp,
        SubOp,
        MulOp,
        DivOp,
        PowOp,
        MaxOp,
        MinOp,
        ModOp,
        BitwiseAndOp,
        BitwiseOrOp,
        BitwiseXorOp,
        BitShiftOp,
        PReluOp,
        WhereOp,
        EqualOp,
        GreaterOp,
        LessOp,
        NotOp,
        BitwiseNotOp,
        # contractions
        MatMulOp,
        GemmOp,
        Conv2dOp,
        # normalization
        BatchNormOp,
        LayerNormOp,
        SoftmaxOp,
        LogSoftmaxOp,
        # pooling
        MaxPoolOp,
        AvgPoolOp,
        GlobalAvgPoolOp,
        GlobalMaxPoolOp,
        # reductions
        ReduceSumOp,
        ReduceMeanOp,
        ReduceMaxOp,
        ReduceProdOp,
        ArgMaxOp,
        CumSumOp,
        CumProdOp,
        # shape manipulation
        TransposeOp,
        ReshapeOp,
        BroadcastToOp,
        FlattenOp,
        SqueezeOp,
        UnsqueezeOp,
        ConcatOp,
        SliceOp,
        PadOp,
        GatherOp,
        TopKOp,
        # conversion and quantization
        CastOp,
        BitcastOp,
        QuantizeOp,
        DequantizeOp,
        # fusion groups
        FusedOp,
        YieldOp,
    ],
)
