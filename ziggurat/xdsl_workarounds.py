"""Workarounds for gaps in xDSL (each checked on 0.75): inputs on which its parser or verifiers crash, hang or give a
wrong value, and what ziggurat does instead. Each is one unit that can be deleted on its own once
xDSL closes the gap (a `Parser` mixin that `WorkaroundParser` lists, a verifier that
`VERIFIERS_BEFORE_XDSL` or `VERIFIERS_AFTER_XDSL` lists, or a function):

* `lex_string_literals_in_linear_time`: xDSL's string-literal pattern nests `+` inside `*`, so on a
  `"` with no closing quote on its line the regex engine tries every split of the line (2^n; a
  stray quote hung the parser for minutes). It is replaced by the same language matched in
  possessive runs, which never backtrack: it fails in linear time, and matches a long string (a
  weight's hex, megabytes) 25x faster than one character per repetition; `ziggurat.parsing`
  calls it once, on import. No upstream issue found.
* `accept_numeric_block_labels`: the parser sets a block's name hint to its label unchecked, and
  a numeric label (`^0`, valid MLIR) is not a valid hint, so the input is refused ("Invalid Block
  name format"); such a label is parsed and the block printed under a generated name. No upstream
  issue found.
* `HexFloatElements`: a hexadecimal element of a dense literal of floats (`dense<0x7FC00000>`, how
  xDSL and MLIR print NaN and infinities) is read as an integer and converted (2143289344.0); it is
  read as the element type's bits, as MLIR does. xdslproject/xdsl#3370 fixed this for scalar
  float attributes only.
* `ClosedComplexLiterals`: a complex element `(re, im` missing its `)` fails an assertion in
  `_parse_optional_complex` (`AssertionError: Unexpected token ..., expected
  MLIRTokenKind.R_PAREN`); it is a parse error at the token found instead. No upstream issue found.
* `PackableElements`: a dense literal or array of integers wider than 64 bits or of f80/f128
  (`array<i604: 1>`, `dense<1> : tensor<2xi128>`) raises `NotImplementedError` from the packing of
  its elements; it is a parse error at the literal. Related: xdslproject/xdsl#3728 (packs
  integers of any width up to 64 bits).
* `CheckedOpLiterals`: custom op parsers pack values without a range check (`tile.unpack`'s
  `inner_tiles = [2^63]`: `struct.error`, `OverflowError`) and convert words unchecked
  (linalg.generic's `"par5llel"`: `ValueError`); each is a parse error at the op. No upstream
  issue found.
* `UndefinedValues`: xDSL reports a value that is never defined at the end of the input, and
  does not report one used before its definition in a nested region (it stays a placeholder
  that the verifiers crash on); both are reported at the first use, as MLIR does. Related:
  xdslproject/xdsl#4023 (open).
* `reuse_isa_constraints`: `isa` converts a generic hint to a constraint on every call; the
  conversion is memoized per hint (speed only: 10,000 calls, 0.6 s, in ResNet-50's lowering). No
  upstream issue found.
* `without_module_dump`: `Operation.verify` reports a failing verifier through `emit_error`,
  which prints the whole module into the exception's notes; `verify_module` never shows that
  dump, and printing it once per failing op made verifying a large file with many errors
  quadratic. Related: xdslproject/xdsl#4631 (open; prints it once rather than twice).
* `Dominance`: xDSL's verifier does not check that a value's definition dominates its uses, so
  swapped lines verify and fail later wherever the value is read. xdslproject/xdsl#1033 (open).
* Verifiers xDSL lacks or that crash, each MLIR's rule: `verify_affine_divisors` (`mod 0` in an
  affine map divides by zero when linalg.generic's verifier evaluates it), `verify_linalg_index`
  (a `linalg.index` past the loops crashed the interpreter), `verify_scf_for_step` (a zero step
  crashed the interpreters), `verify_subview_layout` (a `memref.subview` result layout that does
  not follow from the source crashed the interpreters), `verify_transpose_permutation`
  (`linalg.transpose`'s verifier raises `IndexError` on an out-of-range permutation). No upstream
  issues found.
"""

from __future__ import annotations

import functools
import re
import struct
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NoReturn

import xdsl.irdl
from xdsl.context import Context
from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    AnyFloat,
    ArrayAttr,
    DenseArrayBase,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.dialects.linalg.ops import GenericOp, IndexOp, TransposeOp
from xdsl.dialects.memref import SubviewOp
from xdsl.dialects.scf import ForOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineConstantExpr, AffineMap
from xdsl.irdl import AttributeInvT
from xdsl.irdl.dominance import DominanceInfo
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.parser.core import ForwardDeclaredValue
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Span
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind

from ziggurat.diagnostics import error_at

# --------------------------------------------------------------------------- #
# Lexer
# --------------------------------------------------------------------------- #


def lex_string_literals_in_linear_time() -> None:
    """Match string literals in linear time, in every xDSL lexer of the process.

    The lexer is built inside xDSL's `Parser.__init__`, which already lexes the first token,
    hence a class attribute rather than a parser subclass.
    """
    # Possessive: a run of plain characters is taken whole and never given back, so a string
    # with no closing quote fails in linear time, and a long one (a weight's hex, megabytes)
    # is matched by the run, not one alternation per character (25x faster).
    MLIRLexer._unescaped_characters_regex = re.compile(
        r'"(?:[^"\\\n\v\f]++|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+"'
    )


def reuse_isa_constraints() -> None:
    """Build the constraint of each generic hint `isa` is given once per process, not once per call.

    `xdsl.utils.hints.isa(x, ArrayAttr[IntAttr])` converts its hint with `irdl_to_attr_constraint`
    on every call (about 80 us): `MemRefType.__init__` and the `DynamicIndexList` printer call it
    for every memref type built and every npu.dma printed, 10,000 times in ResNet-50's lowering.
    `isa` imports the converter when it runs, so the memoized one replaces it there; a hint is a
    generic alias (equal, and hashing equal, for the same arguments), its constraint immutable."""
    if getattr(xdsl.irdl.irdl_to_attr_constraint, "memoized", False):
        return
    convert = xdsl.irdl.irdl_to_attr_constraint
    constraints: dict[object, object] = {}

    def memoized(hint, *args, **kwargs):
        if args or kwargs:
            return convert(hint, *args, **kwargs)
        try:
            return constraints[hint]
        except KeyError:
            constraints[hint] = converted = convert(hint)
            return converted
        except TypeError:  # an unhashable hint
            return convert(hint)

    memoized.memoized = True
    xdsl.irdl.irdl_to_attr_constraint = memoized


def keep_dense_array_values() -> None:
    """Unpack a `DenseArrayBase`'s values once per attribute, not on every `get_values` call.

    xDSL builds a struct format and unpacks the bytes each time (about 1 us); the lowering asks a
    DMA's or a subview's indices, shape and strides for their values hundreds of thousands of times
    (246,000 calls for the light ResNet-50's kernels, 7% of their lowering). An attribute is
    immutable, so the tuple is kept with it, outside its parameters (equality, hashing and printing
    see only those)."""
    unpack = DenseArrayBase.get_values
    if getattr(unpack, "keeps_values", False):
        return

    def get_values(self):
        values = self.__dict__.get("_values")
        if values is None:
            values = self.__dict__["_values"] = unpack(self)
        return values

    get_values.keeps_values = True
    DenseArrayBase.get_values = get_values


def reuse_integer_dense_arrays() -> None:
    """Build each integer `DenseArrayBase` once per process, as xDSL's `from_list` is given it.

    `from_list` normalizes and packs every element in Python; IRDL's op constructor calls it for
    the `operandSegmentSizes` of every op with variadic operands it builds, and the lowering
    builds the same few index, shape and segment arrays thousands of times. The attribute is
    immutable; float arrays are built as before (0.0 and -0.0 are equal keys but differ in bits)."""
    build = DenseArrayBase.from_list
    if getattr(build, "reuses", False):
        return

    @functools.lru_cache(maxsize=8192)
    def built(data_type: IntegerType, data: tuple[int, ...]) -> DenseArrayBase:
        return build(data_type, data)

    def from_list(data_type, data):
        if isinstance(data_type, IntegerType):
            try:
                return built(data_type, tuple(data))
            except TypeError:  # an unhashable element: xDSL's own error, or its array
                pass
        return build(data_type, data)

    from_list.reuses = True
    DenseArrayBase.from_list = staticmethod(from_list)


def accept_numeric_block_labels() -> None:
    """Give a block no name hint where its label is not a valid one (`^0`), in every parser of the
    process: `Parser._parse_block` assigns the hint from within, so a subclass cannot intercept it.
    Values keep the strict setter: only `Block` gets its own property."""
    if "name_hint" in Block.__dict__:
        return
    inherited = Block.name_hint

    def set_name_hint(block: Block, name: str | None) -> None:
        inherited.fset(block, name if Block.is_valid_name(name) else None)

    Block.name_hint = property(inherited.fget, set_name_hint)


# --------------------------------------------------------------------------- #
# Parser
# --------------------------------------------------------------------------- #


class _HexTensorLiteralElement(Parser._TensorLiteralElement):
    """A hexadecimal element of a dense literal: for a float element type, its bit pattern."""

    def to_type(self, parser, type):  # pyright: ignore[reportIncompatibleMethodOverride]
        if not isinstance(type, AnyFloat):
            return super().to_type(parser, type)
        assert isinstance(self.value, int)
        width = type.bitwidth
        if self.value >= 1 << width:
            parser.raise_error(
                f"hexadecimal float literal {self.span.text} does not fit the {width} bits of {type}",
                self.span,
            )
        return next(type.iter_unpack(self.value.to_bytes(type.compile_time_size, "little")))


class HexFloatElements(Parser):
    """Reads a hexadecimal element of a dense literal of floats as the element type's bits."""

    def _parse_tensor_literal_element(self) -> Parser._TensorLiteralElement:
        token = self._current_token
        if token.kind == MLIRTokenKind.INTEGER_LIT and token.text[:2] in ("0x", "0X"):
            self._consume_token(MLIRTokenKind.INTEGER_LIT)
            return _HexTensorLiteralElement(False, int(token.text, 16), token.span)
        return super()._parse_tensor_literal_element()


class ClosedComplexLiterals(Parser):
    """xDSL's `_parse_optional_complex`, with a parse error (MLIR's words) for a missing `)`."""

    def _parse_optional_complex(self):
        if self._current_token.kind != MLIRTokenKind.L_PAREN:
            return None
        start = self._consume_token(MLIRTokenKind.L_PAREN).span.start
        real, _ = self._parse_bool_int_or_float()
        self.parse_punctuation(",")
        imag, _ = self._parse_bool_int_or_float()
        if type(real) is not type(imag):
            self.raise_error("Complex value must be either (float, float) or (int, int)")
        end = self._parse_token(
            MLIRTokenKind.R_PAREN, "Expected ')' after complex elements"
        ).span.end
        return (real, imag), Span(start, end, self.lexer.input)


class PackableElements(Parser):
    """Dense literals and arrays whose elements xDSL cannot pack are parse errors at the literal."""

    def _parse_optional_builtin_parametrized_attr(self) -> Attribute | None:
        start = self._current_token.span.start
        try:
            return super()._parse_optional_builtin_parametrized_attr()
        except NotImplementedError:
            # IntegerType.format and the float types' have no struct format past 64 bits.
            raise ParseError(
                Span(start, self._current_token.span.start, self.lexer.input),
                "xDSL cannot hold this dense literal or array: its elements must be integers or floats "
                "of at most 64 bits",
            ) from None


class CheckedOpLiterals(Parser):
    """Values of an op that xDSL's custom parsers cannot convert are parse errors at the op."""

    def parse_operation(self) -> Operation:
        start = self._current_token.span.start
        try:
            return super().parse_operation()
        except (struct.error, OverflowError) as e:
            # xDSL packs array<i64: ...> and other literals without a range check first.
            raise ParseError(
                Span(start, self._current_token.span.start, self.lexer.input),
                f"a value of this op is out of range for its type ({e})",
            ) from None
        except ValueError as e:
            # Custom op parsers convert words to values unchecked (linalg.generic's iterator
            # types: "'par5llel' is not a valid IteratorType").
            raise ParseError(
                Span(start, self._current_token.span.start, self.lexer.input),
                f"invalid value in this op: {e}",
            ) from None


class UndefinedValues(Parser):
    """Undefined values reported at their first use, including those xDSL leaves as placeholders."""

    def __init__(self, ctx: Context, input: str, name: str = "<unknown>"):
        super().__init__(ctx, input, name)
        self._first_uses: dict[str, Span] = {}
        self._forward_names: dict[ForwardDeclaredValue, str] = {}

    def resolve_operand(
        self, operand: UnresolvedOperand, type: AttributeInvT
    ) -> SSAValue[AttributeInvT]:
        if operand.operand_name not in self.ssa_values:
            self._first_uses.setdefault(operand.operand_name, operand.span)
        value = super().resolve_operand(operand, type)
        if isinstance(value, ForwardDeclaredValue):
            self._forward_names[value] = operand.operand_name
        return value

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        try:
            module = super().parse_module(allow_implicit_module)
        except ParseError as e:
            # xDSL reports values never defined at the end of the input; MLIR points at the use.
            undefined = [name for name in self.forward_ssa_references if name in self._first_uses]
            if e.msg.startswith("values used but not defined") and undefined:
                raise ParseError(
                    self._first_uses[undefined[0]], f"use of undefined value '%{undefined[0]}'"
                ) from None
            raise
        self._check_no_forward_references_left(module)
        return module

    def _check_no_forward_references_left(self, module: ModuleOp) -> None:
        # A value used before its name is defined in a nested region (lines swapped) can stay a
        # placeholder that xDSL does not report; the verifiers then crash on it.
        for op in module.walk():
            for operand in op.operands:
                if isinstance(operand, ForwardDeclaredValue):
                    name = self._forward_names.get(operand, "?")
                    if (span := self._first_uses.get(name)) is None:
                        raise error_at(op, f"use of undefined value '%{name}'")
                    raise ParseError(span, f"use of undefined value '%{name}'")


class WorkaroundParser(
    UndefinedValues, CheckedOpLiterals, PackableElements, ClosedComplexLiterals, HexFloatElements
):
    """xDSL's parser with every parser workaround of this module."""


# --------------------------------------------------------------------------- #
# Verification
# --------------------------------------------------------------------------- #


def _raise_without_dump(self: Operation, message: str, underlying_error: Exception) -> NoReturn:
    raise underlying_error


@contextmanager
def without_module_dump() -> Iterator[None]:
    """Inside, a failing verifier raises its own exception, with no dump of the module in its notes."""
    emit_error = Operation.emit_error
    Operation.emit_error = _raise_without_dump  # type: ignore[method-assign]
    try:
        yield
    finally:
        Operation.emit_error = emit_error  # type: ignore[method-assign]


class Dominance:
    """MLIR's SSA dominance rule.

    A value must be defined before its use: earlier in the same block, or in a
    block that dominates the use's block, or in an enclosing region. The body of
    a `builtin.module` is a graph region, where order does not matter.
    """

    def __init__(self):
        self._positions: dict[Block, dict[Operation, int]] = {}
        self._regions: dict[Region, DominanceInfo] = {}

    def dominates_use(self, value: SSAValue, user: Operation) -> bool:
        if isinstance(value, OpResult):
            definer: Operation | None = value.op
            block = definer.parent_block()
        elif isinstance(value, BlockArgument):
            definer, block = None, value.block
        else:
            return True
        if block is None or block.parent is None or isinstance(block.parent_op(), ModuleOp):
            return True
        # The user, or its ancestor, that sits in the defining region.
        ancestor: Operation | None = user
        while ancestor is not None and (
            ancestor.parent_block() is None or ancestor.parent_block().parent is not block.parent
        ):
            ancestor = ancestor.parent_op()
        if ancestor is None:
            return False
        use_block = ancestor.parent_block()
        assert use_block is not None
        if use_block is not block:
            region = block.parent
            if region not in self._regions:
                self._regions[region] = DominanceInfo(region)
            return self._regions[region].dominates(block, use_block)
        if definer is None:
            return True
        positions = self._positions.get(block)
        if positions is None:
            positions = self._positions[block] = {op: i for i, op in enumerate(block.ops)}
        return positions[definer] < positions[ancestor]


def _affine_maps(attribute: Attribute) -> Iterator[AffineMap]:
    if isinstance(attribute, AffineMapAttr):
        yield attribute.data
    elif isinstance(attribute, ArrayAttr):
        for element in attribute.data:
            yield from _affine_maps(element)


def verify_affine_divisors(op: Operation) -> None:
    # MLIR's rule for affine expressions: mod, floordiv and ceildiv take a positive constant. xDSL
    # accepts `mod 0`, and evaluating the map (linalg.generic's verifier does) divides by zero.

    divisions = (AffineBinaryOpKind.Mod, AffineBinaryOpKind.FloorDiv, AffineBinaryOpKind.CeilDiv)
    for attribute in (*op.attributes.values(), *op.properties.values()):
        for affine_map in _affine_maps(attribute):
            for result in affine_map.results:
                for expr in result.dfs():
                    if (
                        isinstance(expr, AffineBinaryOpExpr)
                        and expr.kind in divisions
                        and isinstance(expr.rhs, AffineConstantExpr)
                        and expr.rhs.value <= 0
                    ):
                        raise VerifyException(
                            f"affine map {affine_map} divides by {expr.rhs.value}: "
                            "mod, floordiv and ceildiv take a positive constant"
                        )


def verify_transpose_permutation(op: Operation) -> None:
    # MLIR's linalg.transpose verifier checks the permutation first; xDSL's indexes the input's
    # shape with it unchecked (IndexError on an entry past the rank).

    if not isinstance(op, TransposeOp):
        return
    if not isinstance(permutation := op.properties.get("permutation"), DenseArrayBase):
        return
    values = permutation.get_values()
    if sorted(values) != list(range(len(values))):
        raise VerifyException("permutation is not valid")


def verify_linalg_index(op: Operation) -> None:
    # MLIR's linalg.index verifier, which xDSL lacks: an index past the loops crashed the interpreter.

    if not isinstance(op, IndexOp):
        return
    parent = op.parent_op()
    if not isinstance(parent, GenericOp):
        raise VerifyException("expected parent op with LinalgOp interface")
    dim, loops = op.dim.value.data, len(parent.iterator_types)
    if dim >= loops:
        raise VerifyException(
            f"expected dim ({dim}) to be lower than the number of loops ({loops}) of the enclosing LinalgOp"
        )


def verify_scf_for_step(op: Operation) -> None:
    # MLIR's scf.for verifier, which xDSL lacks: a zero step crashed the interpreters.

    if not isinstance(op, ForOp) or not isinstance(step := op.step.owner, ConstantOp):
        return
    if isinstance(step.value, IntegerAttr) and step.value.value.data <= 0:
        raise VerifyException("constant step operand must be positive")


def verify_subview_layout(op: Operation) -> None:
    # MLIR's memref.subview verifier, which xDSL lacks: the result's layout is the source's strides
    # times the subview's, at the source's offset plus the offsets along them (a zero stride the
    # result type did not say crashed the interpreters).

    if not isinstance(op, SubviewOp):
        return
    source, result = op.source.type, op.result.type
    if not isinstance(source, MemRefType) or not isinstance(result, MemRefType):
        return
    offsets, strides = op.static_offsets.get_values(), op.static_strides.get_values()
    source_strides, source_offset = source.get_strides(), source.get_offset()
    if (
        source.get_num_dims() != result.get_num_dims()
        or source_strides is None
        or DYNAMIC_INDEX in source_strides
    ):
        return
    strides_have = result.get_strides()
    if (
        DYNAMIC_INDEX not in strides
        and strides_have is not None
        and DYNAMIC_INDEX not in strides_have
    ):
        expected_strides = [s * t for s, t in zip(source_strides, strides)]
        if list(strides_have) != expected_strides:
            raise VerifyException(
                f"expected result type {result} to have strides {expected_strides} (the source's times the subview's)"
            )
    offset_have = result.get_offset()
    if (
        DYNAMIC_INDEX not in offsets
        and DYNAMIC_INDEX not in (source_offset, offset_have)
        and None not in (source_offset, offset_have)
    ):
        expected_offset = source_offset + sum(o * s for o, s in zip(offsets, source_strides))
        if offset_have != expected_offset:
            raise VerifyException(f"expected result type {result} to have offset {expected_offset}")


VERIFIERS_BEFORE_XDSL: tuple[Callable[[Operation], None], ...] = (
    verify_affine_divisors,
    verify_transpose_permutation,
)
"""Checks that must pass before xDSL's verifier runs on an op, which would crash otherwise."""

VERIFIERS_AFTER_XDSL: tuple[Callable[[Operation], None], ...] = (
    verify_linalg_index,
    verify_scf_for_step,
    verify_subview_layout,
)
"""MLIR's checks that xDSL's verifiers lack, run once they pass."""
