"""The `graph` dialect: neural-network operators on whole tensors (value semantics).

Every op here follows the same contract, so passes, the interpreter and the
frontends can treat the dialect uniformly:

* `infer_result_types(operand_types, properties)` (a classmethod) computes the
  result types from the operand types and the op's properties, raising a
  `VerifyException` that states the violated rule. The verifier compares the
  declared result types with it; builders use it so callers never spell types.
* `evaluate(*arrays)` is the numpy reference semantics (ONNX semantics where
  ONNX has the operator). The graph interpreter and `graph-fold-constants` both
  call it, so there is one definition of what an op computes.
* its `FusionPattern` trait gives the op's fusion class, TVM-style (see
  `OpPatternKind`).

Attributes are stored as properties and printed in the attribute dictionary,
e.g. `graph.conv2d %x, %w {strides = array<i64: 2, 2>} : (...) -> ...`.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    I64,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    AnyAttr,
    ParamAttrConstraint,
    ParsePropInAttrDict,
    VarConstraint,
    base,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.pattern_rewriter import RewritePattern
from xdsl.traits import (
    ConstantLike,
    HasCanonicalizationPatternsTrait,
    OpTrait,
    Pure,
)
from xdsl.utils.exceptions import VerifyException

from ziggurat.dtypes import is_float, tensor_type_of, to_numpy_dtype

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
    """Canonicalization patterns of graph ops, kept beside the passes in
    `ziggurat.transforms.graph.canonicalization_patterns` and looked up by op type."""

    def get_patterns(self, op: type[Operation]) -> tuple[RewritePattern, ...]:
        from ziggurat.transforms.graph.canonicalization_patterns import patterns_for

        return patterns_for(op)

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return ()


def pattern_kind_of(op: Operation) -> OpPatternKind:
    """The fusion pattern kind of `op` (ops without the trait are opaque)."""
    trait = op.get_trait(FusionPattern)
    return OpPatternKind.OPAQUE if trait is None else trait.kind


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


def int_array(values: Sequence[int]) -> DenseArrayBase:
    """An `array<i64: ...>` property."""
    return DenseArrayBase.from_list(i64, list(values))


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    """`axis` in [0, rank), accepting ONNX's negative axes."""
    if not -rank <= axis < max(rank, 1):
        raise VerifyException(f"{what} {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


# --------------------------------------------------------------------------- #
# Base classes
# --------------------------------------------------------------------------- #


class GraphOp(IRDLOperation, abc.ABC):
    """Base of every `graph` op: shape/dtype inference, numpy semantics, fusion kind."""

    # Attributes read as `{strides = ...}` in the attribute dictionary, as in MLIR.
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(GraphCanonicalization())

    @classmethod
    @abc.abstractmethod
    def infer_result_types(
        cls, operand_types: Sequence[Attribute], properties: Mapping[str, Attribute]
    ) -> list[Attribute]:
        """Result types for these operands and properties; raises VerifyException."""

    @abc.abstractmethod
    def evaluate(self, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        """numpy reference semantics: one array per result, of the result types."""

    @classmethod
    def build_inferred(
        cls,
        operands: Sequence[SSAValue | Operation | None],
        properties: Mapping[str, Attribute | None] | None = None,
    ):
        """Build the op with its result types inferred from operands and properties."""
        properties = {k: v for k, v in (properties or {}).items() if v is not None}
        present = [SSAValue.get(o) for o in operands if o is not None]
        result_types = cls.infer_result_types([v.type for v in present], properties)
        op_operands = [[] if o is None else o for o in operands]
        return cls(operands=op_operands, properties=properties, result_types=result_types)

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

    @staticmethod
    @abc.abstractmethod
    def compute(x: np.ndarray) -> np.ndarray:
        """The elementwise function on an array (computed in at least fp32)."""

    def evaluate(self, *inputs):
        (x,) = inputs
        out_dtype = x.dtype
        wide = x.astype(np.float32) if x.dtype.itemsize < 4 and out_dtype.kind != "i" else x
        return (np.asarray(self.compute(wide)).astype(out_dtype),)


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
        """The elementwise function with numpy broadcasting."""

    def evaluate(self, *inputs):
        a, b = inputs
        return (np.asarray(self.compute(a, b)).astype(a.dtype),)


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
        array = np.ascontiguousarray(array)
        return ConstantOp(
            DenseIntOrFPElementsAttr(tensor_type_of(array), BytesAttr(array.tobytes()))
        )

    def to_array(self) -> np.ndarray:
        value_type = self.value.type
        dtype = to_numpy_dtype(value_type.get_element_type())
        data = np.frombuffer(self.value.data.data, dtype=dtype)
        shape = value_type.get_shape()
        if data.size == 1 and int(np.prod(shape)) != 1:
            return np.broadcast_to(data.reshape(()), shape).copy()
        return data.reshape(shape).copy()

    @classmethod
    def infer_result_types(cls, operand_types, properties):
        return [properties["value"].type]

    def evaluate(self, *inputs):
        return (self.to_array(),)


# --------------------------------------------------------------------------- #
# Elementwise activations and math
# --------------------------------------------------------------------------- #


@irdl_op_definition
class ReluOp(UnaryElementwiseOp):
    """max(x, 0)."""

    name = "graph.relu"
    FLOAT_ONLY: ClassVar[bool] = False

    @staticmethod
    def compute(x):
        return np.maximum(x, 0)


@irdl_op_definition
class ExpOp(UnaryElementwiseOp):
    """e**x."""

    name = "graph.exp"

    @staticmethod
    def compute(x):
        return np.exp(x)


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
                f"contraction dimensions differ: lhs {lhs} has K={a[-1]}, "
                f"rhs {rhs} has K={b[-2]}"
            )
        batch = broadcast_shapes(a[:-2], b[:-2])
        shape = [*batch, *([] if a_vector else [a[-2]]), *([] if b_vector else [b[-1]])]
        return [TensorType(element_type, shape)]

    def evaluate(self, *inputs):
        a, b = inputs
        accumulate = np.int32 if a.dtype.kind in "iu" else np.float32
        wide_a = a.astype(np.float64 if a.dtype == np.float64 else accumulate)
        wide_b = b.astype(wide_a.dtype)
        return (np.matmul(wide_a, wide_b).astype(a.dtype),)


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


Graph = Dialect(
    "graph",
    [
        ConstantOp,
        ReluOp,
        ExpOp,
        AddOp,
        MatMulOp,
        TransposeOp,
    ],
)
