"""The `npu` dialect: the instructions of an accelerator core described by a machine model.

Values are buffers, memrefs at a static byte offset of one of the machine's memory spaces
(`memref<16x256xf16, "l1">`); each instruction addresses a window of a buffer by element indices
(`%l1[%i, 0]`) and runs on the in-order queue of a pipe, with `npu.set_flag`/`npu.wait_flag`
ordering pipes against each other. `interpreters/npu_interpreter.py` runs it; docs/lowering.md
shows the code `loop-to-npu` writes.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects import scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I64,
    BFloat16Type,
    DenseArrayBase,
    Float8E4M3FNType,
    Float8E5M2Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StringAttr,
    UnitAttr,
    i64,
)
from xdsl.dialects.utils.dynamic_index_list import (
    DynamicIndexList,
    parse_dynamic_index_list_without_types,
    print_dynamic_index_list,
    verify_dynamic_index_list,
)
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    IRDLOperationInvT,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import NoMemoryEffect, Pure
from xdsl.utils.exceptions import VerifyException

from ziggurat.diagnostics import DiagnosticError, error_at
from ziggurat.dtypes import is_float, to_numpy_dtype
from ziggurat.machine import Machine, load_machine

MACHINE_ATTR = "npu.machine"
"""Module attribute naming the machine (a preset or a TOML path) the program targets."""

CORES_ATTR = "npu.cores"
"""Module attribute: how many cores the program was compiled for (`loop-distribute`; absent: one,
or a hand-written program that reads `npu.num_cores`)."""

# (input element type, accumulator element type) pairs a matrix instruction can mean;
# the machine decides which of them its unit implements and at what rate.
_MMA_PAIRS: dict[type[Attribute], type[Attribute]] = {
    Float16Type: Float32Type,
    BFloat16Type: Float32Type,
    Float8E4M3FNType: Float32Type,
    Float8E5M2Type: Float32Type,
}

# --------------------------------------------------------------------------- #
# Buffers and addresses
# --------------------------------------------------------------------------- #


def buffer_type(value: SSAValue, what: str) -> MemRefType:
    """The type of a buffer operand, or a verifier error naming `what`.

    Buffers are statically shaped, row-major memrefs whose memory space is the
    name of a space of the machine (a string attribute).
    """
    value_type = value.type
    if not isinstance(value_type, MemRefType):
        raise VerifyException(f"{what} must be a memref buffer, got {value_type}")
    if not isinstance(value_type.memory_space, StringAttr):
        raise VerifyException(
            f'{what} must name its memory space, e.g. memref<16x16xf16, "l1">, got {value_type}'
        )
    if any(dim < 0 for dim in value_type.get_shape()):
        raise VerifyException(f"{what} must have a static shape, got {value_type}")
    if not isinstance(value_type.layout, NoneAttr):
        raise VerifyException(f"{what} must have the row-major (identity) layout, got {value_type}")
    try:
        to_numpy_dtype(value_type.get_element_type())
    except ValueError:
        raise VerifyException(
            f"{what} must hold numbers of a machine type (f16, bf16, f32, f8, i8, i32, ...), got {value_type}"
        ) from None
    return value_type


def space_of(value: SSAValue) -> str:
    """The memory space name of a (verified) buffer value."""
    memory_space = value.type.memory_space
    assert isinstance(memory_space, StringAttr)
    return memory_space.data


def element_bytes(element_type: Attribute) -> int:
    return to_numpy_dtype(element_type).itemsize


def row_major_strides(shape: Sequence[int]) -> list[int]:
    strides = [1] * len(shape)
    for dim in range(len(shape) - 2, -1, -1):
        strides[dim] = strides[dim + 1] * shape[dim + 1]
    return strides


def type_bytes(memref_type: MemRefType) -> int:
    return math.prod(memref_type.get_shape()) * element_bytes(memref_type.get_element_type())


def _verify_indices(
    buffer: SSAValue, static: DenseArrayBase, dynamic: Sequence[SSAValue], what: str
) -> MemRefType:
    memref_type = buffer_type(buffer, what)
    values = static.get_values()
    verify_dynamic_index_list(values, dynamic, DYNAMIC_INDEX, f" in the indices of {what}")
    shape = memref_type.get_shape()
    if len(values) != len(shape):
        raise VerifyException(
            f"{what} takes one index per dimension of {memref_type} ({len(shape)}), got {len(values)}"
        )
    for dim, (index, size) in enumerate(zip(values, shape)):
        if index != DYNAMIC_INDEX and not 0 <= index < size:
            raise VerifyException(
                f"index {index} of {what} is outside dimension {dim} of size {size}"
            )
    return memref_type


def static_linear_index(static: DenseArrayBase, memref_type: MemRefType) -> int | None:
    """The element offset of a fully static index list, None when an index is dynamic."""
    values = static.get_values()
    if DYNAMIC_INDEX in values:
        return None
    return sum(i * s for i, s in zip(values, row_major_strides(memref_type.get_shape())))


def window_extent(shape: Sequence[int], strides: Sequence[int]) -> int:
    """Elements from a window's first element to one past its last."""
    return 1 + sum((size - 1) * stride for size, stride in zip(shape, strides)) if all(shape) else 0


def _verify_window_fits(
    static: DenseArrayBase,
    memref_type: MemRefType,
    shape: Sequence[int],
    strides: Sequence[int],
    what: str,
) -> None:
    base = static_linear_index(static, memref_type)
    if base is None:
        return  # checked when the instruction runs
    end = base + window_extent(shape, strides)
    elements = math.prod(memref_type.get_shape())
    if end > elements:
        raise VerifyException(
            f"{what} window of shape {list(shape)} with strides {list(strides)} at element {base} "
            f"ends at element {end}, past the {elements} elements of {memref_type}"
        )


def _verify_tile_fits(
    static: DenseArrayBase, memref_type: MemRefType, shape: Sequence[int], what: str
) -> None:
    """A tile spans the innermost `len(shape)` dimensions of its buffer without wrapping around any of them."""
    rank = len(shape)
    dims = memref_type.get_shape()[-rank:]
    for dim, (index, size, extent) in enumerate(zip(static.get_values()[-rank:], shape, dims)):
        start = 0 if index == DYNAMIC_INDEX else index
        if start + size > extent:
            raise VerifyException(
                f"{what} tile of shape {list(shape)} does not fit dimension {memref_type.get_num_dims() - rank + dim} "
                f"of {memref_type}: {start} + {size} > {extent}"
            )


@functools.lru_cache(maxsize=4096)
def _int_prop(value: int) -> IntegerAttr:
    # immutable, as `_i64_array`'s: npu-insert-sync makes two flags per dependence, each with
    # its event id, and building and verifying the attribute again cost as much as the flag
    return IntegerAttr(value, i64)


@functools.lru_cache(maxsize=256)
def _name(value: str) -> StringAttr:
    """A pipe's or engine's name as an attribute (a few distinct names, made thousands of times)."""
    return StringAttr(value)


def _array(values: Sequence[int]) -> DenseArrayBase:
    return _i64_array(tuple(values))


@functools.lru_cache(maxsize=4096)
def _i64_array(values: tuple[int, ...]) -> DenseArrayBase:
    # attributes are immutable, and lowering a network builds the same few shapes, strides and
    # indices tens of thousands of times: xDSL packs each element in Python
    return DenseArrayBase.from_list(i64, values)


def split_indices(indices: Sequence[SSAValue | int]) -> tuple[DenseArrayBase, list[SSAValue]]:
    """MLIR's mixed index list: the static indices (DYNAMIC_INDEX where a value stands) and the values."""
    static = [i if isinstance(i, int) else DYNAMIC_INDEX for i in indices]
    return _array(static), [i for i in indices if isinstance(i, SSAValue)]


# npu.dma and npu.mma are parsed and printed by hand, as their assembly formats
# (`$src `` custom<DynamicIndexList>($src_indices, $static_src_indices)` per buffer, `attr-dict`
# holding the other properties, then the buffers' types) would: a compiled network has thousands
# of each, and xDSL's declarative format spent 0.35 ms parsing a DMA and 0.5 ms an mma.


def _parse_buffers(
    cls: type[IRDLOperationInvT],
    parser: Parser,
    buffers: Sequence[str],
    separators: Sequence[str],
    leading: dict[str, Attribute],
) -> IRDLOperationInvT:
    """`%a[0, %i] sep %b[...] ... attr-dict : type sep type ...`, one indexed operand per name in
    `buffers` (its values `<name>_indices`, its static indices `static_<name>_indices`), the
    separators as printed (", ", " -> "); `leading`: the properties parsed before the buffers.
    The dictionary holds the properties in `cls._IN_DICTIONARY` and the op's attributes."""
    indexed = []
    for position, _ in enumerate(buffers):
        if position:
            parser.parse_punctuation(separators[position - 1].strip())
        buffer = parser.parse_unresolved_operand()
        values, static = parse_dynamic_index_list_without_types(parser, DYNAMIC_INDEX)
        indexed.append((buffer, values, static))
    attributes = parser.parse_optional_attr_dict()
    in_format = {"operandSegmentSizes", *leading, *(f"static_{name}_indices" for name in buffers)}
    if reserved := in_format & attributes.keys():
        parser.raise_error(
            f"attributes {', '.join(reserved)} are defined in other parts of the assembly "
            "format, and thus should not be defined in the attribute dictionary."
        )
    properties = {
        name: attributes.pop(name) for name in list(attributes) if name in cls._IN_DICTIONARY
    }
    properties |= leading
    parser.parse_punctuation(":")
    operands: list[SSAValue | Sequence[SSAValue]] = []
    index = IndexType()
    for position, (name, (buffer, values, static)) in enumerate(zip(buffers, indexed)):
        if position:
            parser.parse_punctuation(separators[position - 1].strip())
        properties[f"static_{name}_indices"] = _array(static)
        operands.append(parser.resolve_operand(buffer, parser.parse_type()))
        operands.append(parser.resolve_operands(values, [index] * len(values), parser.pos))
    return cls.build(operands=operands, properties=properties, attributes=attributes)


def _print_buffers(
    printer: Printer, op: IRDLOperation, buffers: Sequence[str], separators: Sequence[str]
) -> None:
    """What `_parse_buffers` reads, after the properties printed before the buffers."""
    in_dictionary = op._IN_DICTIONARY
    if not op.attributes.keys().isdisjoint(in_dictionary):
        raise ValueError(
            "Cannot print attributes and properties with the same name in a single dictionary"
        )
    for position, name in enumerate(buffers):
        printer.print_string(separators[position - 1] if position else " ")
        printer.print_ssa_value(getattr(op, name))
        static = getattr(op, f"static_{name}_indices").get_values()
        print_dynamic_index_list(printer, DYNAMIC_INDEX, getattr(op, f"{name}_indices"), static)
    printer.print_op_attributes(
        op.attributes | {k: v for k, v in op.properties.items() if k in in_dictionary}
    )
    printer.print_string(" : ")
    for position, name in enumerate(buffers):
        if position:
            printer.print_string(separators[position - 1])
        printer.print_attribute(getattr(op, name).type)


@dataclass(frozen=True)
class BufferWindow:
    """Elements `indices + strides . j` (j in `shape`) of a buffer that an instruction reads or writes.

    `indices` index the buffer (MLIR's mixed form: ints and index values); `strides`
    are in elements of the buffer, row-major as a flat array.
    """

    buffer: SSAValue
    indices: tuple[SSAValue | int, ...]
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    write: bool


def buffer_window(
    buffer: SSAValue, static: DenseArrayBase, dynamic: Sequence[SSAValue], shape: Sequence[int],
    strides: Sequence[int] | None, write: bool,
) -> BufferWindow:  # fmt: skip
    """A window; without `strides`, a tile strided as the buffer's innermost dimensions are."""
    values = iter(dynamic)
    indices = tuple(
        next(values) if index == DYNAMIC_INDEX else index for index in static.get_values()
    )
    if strides is None:
        strides = row_major_strides(buffer.type.get_shape())[-len(shape) :]
    return BufferWindow(buffer, indices, tuple(shape), tuple(strides), write)


class NpuOperation(IRDLOperation):
    """Base of the npu ops: machine rules run from the verifier when the module names a machine.

    Verification has two layers. Structural rules (ranks, dtypes, windows inside
    their buffer) always hold. Machine rules (an engine serves the src/dst space
    pair, operands live where the unit reads them, buffers fit the space's
    capacity and alignment, instruction shapes are multiples of the unit's) are
    `verify_machine(machine)`; `verify_()` runs them when the enclosing module
    names its machine with `npu.machine = "davinci"`, and `verify_for_machine`
    runs them for a machine given by a tool.

    An instruction (an op that a pipe executes; plugins define their own) tells the
    passes that schedule and synchronize it which pipe it issues on (`pipe`) and
    which buffer windows it reads and writes (`buffer_windows`); ops that are not
    instructions (buffers, flags, core ids) return None and no windows.
    """

    def pipe(self, machine: Machine) -> str | None:
        """The pipe this instruction issues on; None for an op that is not an instruction."""
        raise VerifyException(f"'{self.name}' does not declare its pipe (NpuOperation.pipe)")

    def buffer_windows(self, machine: Machine) -> list[BufferWindow] | None:
        """The buffer windows the instruction reads and writes; None when it does not say
        (passes then assume it may touch any buffer)."""
        return None

    def verify_machine(self, machine: Machine) -> None:
        """Raise a VerifyException stating the machine rule this op breaks."""

    def verify_(self) -> None:
        self.verify_structure()
        machine = machine_of(self)
        if machine is not None:
            self.verify_machine(machine)

    def verify_structure(self) -> None:
        """Raise a VerifyException stating the structural rule this op breaks."""


@functools.cache
def _load_machine(name: str) -> Machine:
    return load_machine(name)


def machine_of(op: Operation) -> Machine | None:
    """The machine named by the `npu.machine` attribute of the closest enclosing module."""
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, ModuleOp) and MACHINE_ATTR in parent.attributes:
            name = parent.attributes[MACHINE_ATTR]
            if not isinstance(name, StringAttr):
                raise VerifyException(
                    f"{MACHINE_ATTR} must be a string naming a machine, got {name}"
                )
            try:
                return _load_machine(name.data)
            except DiagnosticError as error:  # MachineError: an unknown preset, a bad TOML file
                detail = "; ".join(d.message for d in error.diagnostics)
                raise VerifyException(f"{MACHINE_ATTR} = {name}: {detail}") from error
        parent = parent.parent_op()
    return None


def verify_for_machine(module: Operation, machine: Machine) -> None:
    """Check every npu op in `module` against `machine`: a DiagnosticError at the first op that breaks a rule."""
    for op in module.walk():
        if isinstance(op, NpuOperation):
            try:
                op.verify_machine(machine)
            except VerifyException as error:
                raise error_at(op, str(error)) from None


def _require_space(machine: Machine, space: str, what: str) -> None:
    if space not in machine.memories:
        raise VerifyException(
            f"{what} is in memory space '{space}', which machine '{machine.name}' does not have "
            f"(it has {', '.join(machine.memories)})"
        )


def _require_pipe(machine: Machine, pipe: str, what: str) -> None:
    if pipe not in machine.pipes:
        raise VerifyException(
            f"{what} '{pipe}' is not a pipe of machine '{machine.name}' (its pipes: {', '.join(machine.pipes)})"
        )


def _require_aligned(machine: Machine, space: str, byte_offset: int, what: str) -> None:
    alignment = machine.memories[space].alignment
    if byte_offset % alignment:
        raise VerifyException(
            f"{what} starts at byte {byte_offset} of '{space}', "
            f"which is not a multiple of its {alignment}-byte alignment"
        )


# --------------------------------------------------------------------------- #
# npu.buffer
# --------------------------------------------------------------------------- #


@irdl_op_definition
class BufferOp(NpuOperation):
    """A buffer at a static byte offset of its memory space; its size is its type's.

    `%a = npu.buffer offset 0 : memref<16x256xf16, "l1">`
    """

    name = "npu.buffer"

    offset = prop_def(IntegerAttr[I64])
    result = result_def(MemRefType)

    assembly_format = "`offset` $offset attr-dict `:` type($result)"
    traits = traits_def(NoMemoryEffect())

    def pipe(self, machine: Machine) -> None:
        return None

    def buffer_windows(self, machine: Machine) -> list[BufferWindow]:
        return []

    def __init__(self, memref_type: MemRefType, offset: int):
        super().__init__(result_types=[memref_type], properties={"offset": _int_prop(offset)})

    @property
    def byte_offset(self) -> int:
        return self.offset.value.data

    def verify_structure(self) -> None:
        buffer_type(self.result, "npu.buffer result")
        if self.byte_offset < 0:
            raise VerifyException(f"npu.buffer offset must be non-negative, got {self.byte_offset}")

    def verify_machine(self, machine: Machine) -> None:
        space = space_of(self.result)
        _require_space(machine, space, "npu.buffer")
        _require_aligned(machine, space, self.byte_offset, "npu.buffer")
        end = self.byte_offset + type_bytes(self.result.type)
        capacity = machine.memories[space].capacity
        if end > capacity:
            raise VerifyException(
                f"npu.buffer [{self.byte_offset}, {end}) does not fit in '{space}' "
                f"(capacity {capacity} bytes on machine '{machine.name}')"
            )


# --------------------------------------------------------------------------- #
# npu.dma
# --------------------------------------------------------------------------- #


@irdl_op_definition
class DmaOp(NpuOperation):
    """Moves an N-d window from one buffer to another on a DMA engine.

    `npu.dma "mte2" %gm[%i, 0] -> %l1[0, 0] {shape = array<i64: 16, 256>} : memref<..., "gm"> -> memref<..., "l1">`

    Indices are static or index values the scalar unit computes (loop counters, or a
    value `npu.load` read: the row of an embedding lookup); a window outside its buffer
    is an error when the DMA runs.

    The source window has `shape` and starts at the source indices; its element
    `j` is `src_strides . j` elements after the start (default: the source
    buffer's own strides of its last `len(shape)` dimensions: a tile, which
    must fit those dimensions from its indices rather than wrap around them).
    On the way it is padded (`pad = [lo0, hi0, lo1, hi1, ...]` elements of
    `pad_value`, default 0; e.g. -inf ahead of a max pool), its two
    innermost dimensions swapped (`transpose`), and cast when the buffers'
    element types differ (floats round to nearest even; to integers, rounded
    and saturated). The destination window has the resulting shape and is
    laid out by `dst_strides` (default: the destination buffer's strides).
    """

    name = "npu.dma"

    engine = prop_def(StringAttr)
    src = operand_def(MemRefType)
    src_indices = var_operand_def(IndexType)
    static_src_indices = prop_def(DenseArrayBase.constr(i64))
    dst = operand_def(MemRefType)
    dst_indices = var_operand_def(IndexType)
    static_dst_indices = prop_def(DenseArrayBase.constr(i64))
    shape = prop_def(DenseArrayBase.constr(i64))
    src_strides = opt_prop_def(DenseArrayBase.constr(i64))
    dst_strides = opt_prop_def(DenseArrayBase.constr(i64))
    pad = opt_prop_def(DenseArrayBase.constr(i64))
    pad_value = opt_prop_def(FloatAttr)
    transpose = opt_prop_def(UnitAttr)

    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())

    # `"engine" %src[indices] -> %dst[indices] attr-dict : type -> type`, by hand
    # (`_parse_buffers`)
    _IN_DICTIONARY: ClassVar[frozenset[str]] = frozenset(
        ("shape", "src_strides", "dst_strides", "pad", "pad_value", "transpose")
    )

    @classmethod
    def parse(cls, parser: Parser) -> DmaOp:
        engine = parser.parse_attribute()
        return _parse_buffers(cls, parser, ("src", "dst"), (" -> ",), {"engine": engine})

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.engine)
        _print_buffers(printer, self, ("src", "dst"), (" -> ",))

    def __init__(
        self,
        engine: str,
        src: SSAValue,
        src_indices: Sequence[SSAValue | int],
        dst: SSAValue,
        dst_indices: Sequence[SSAValue | int],
        shape: Sequence[int],
        *,
        src_strides: Sequence[int] | None = None,
        dst_strides: Sequence[int] | None = None,
        pad: Sequence[int] | None = None,
        pad_value: float | None = None,
        transpose: bool = False,
    ):
        static_src, dynamic_src = split_indices(src_indices)
        static_dst, dynamic_dst = split_indices(dst_indices)
        properties: dict[str, Attribute] = {
            "engine": _name(engine),
            "static_src_indices": static_src,
            "static_dst_indices": static_dst,
            "shape": _array(shape),
        }
        for key, values in (
            ("src_strides", src_strides),
            ("dst_strides", dst_strides),
            ("pad", pad),
        ):
            if values is not None:
                properties[key] = _array(values)
        if pad_value is not None:
            properties["pad_value"] = FloatAttr(pad_value, Float64Type())
        if transpose:
            properties["transpose"] = UnitAttr()
        super().__init__(operands=[src, dynamic_src, dst, dynamic_dst], properties=properties)

    @property
    def src_shape(self) -> list[int]:
        return list(self.shape.get_values())

    @property
    def dst_shape(self) -> list[int]:
        """The window written: the source window padded, then transposed."""
        shape = self.src_shape
        if self.pad is not None:
            pads = self.pad.get_values()
            shape = [size + pads[2 * d] + pads[2 * d + 1] for d, size in enumerate(shape)]
        if self.transpose is not None:
            shape[-2], shape[-1] = shape[-1], shape[-2]
        return shape

    def window_strides(self, side: str) -> list[int]:
        """Element strides of the `side` ("src" or "dst") window inside its buffer."""
        explicit = self.src_strides if side == "src" else self.dst_strides
        if explicit is not None:
            return list(explicit.get_values())
        buffer = self.src if side == "src" else self.dst
        rank = len(self.shape.get_values())
        return row_major_strides(buffer.type.get_shape())[-rank:]

    def pipe(self, machine: Machine) -> str:
        return machine.dmas[self.engine.data].pipe

    def buffer_windows(self, machine: Machine) -> list[BufferWindow]:
        return [
            buffer_window(
                self.src,
                self.static_src_indices,
                self.src_indices,
                self.src_shape,
                self.window_strides("src"),
                False,
            ),
            buffer_window(
                self.dst,
                self.static_dst_indices,
                self.dst_indices,
                self.dst_shape,
                self.window_strides("dst"),
                True,
            ),
        ]

    def verify_structure(self) -> None:
        src_type = _verify_indices(
            self.src, self.static_src_indices, self.src_indices, "npu.dma source"
        )
        dst_type = _verify_indices(
            self.dst, self.static_dst_indices, self.dst_indices, "npu.dma destination"
        )
        shape = self.src_shape
        if not shape or any(size <= 0 for size in shape):
            raise VerifyException(
                f"npu.dma shape must be non-empty with positive sizes, got {shape}"
            )
        if self.pad_value is not None and self.pad is None:
            raise VerifyException("npu.dma pad_value is the value of the padding and needs pad")
        if self.pad is not None:
            pads = self.pad.get_values()
            if len(pads) != 2 * len(shape) or any(p < 0 for p in pads):
                raise VerifyException(
                    "npu.dma pad takes a non-negative (low, high) pair per dimension of shape "
                    f"{shape}, got {list(pads)}"
                )
        if self.transpose is not None and len(shape) < 2:
            raise VerifyException(
                "npu.dma transpose swaps the two innermost dimensions and needs a shape of rank >= 2"
            )
        for side, explicit, memref_type in (
            ("src", self.src_strides, src_type),
            ("dst", self.dst_strides, dst_type),
        ):
            if explicit is None:
                if len(shape) > memref_type.get_num_dims():
                    raise VerifyException(
                        f"npu.dma shape {shape} has more dimensions than {memref_type}; give {side}_strides"
                    )
                static = self.static_src_indices if side == "src" else self.static_dst_indices
                window = shape if side == "src" else self.dst_shape
                _verify_tile_fits(
                    static,
                    memref_type,
                    window,
                    f"npu.dma {'source' if side == 'src' else 'destination'}",
                )
            elif len(explicit.get_values()) != len(shape) or any(
                s < 0 for s in explicit.get_values()
            ):
                raise VerifyException(
                    f"npu.dma {side}_strides takes one non-negative stride per dimension of shape {shape}, "
                    f"got {list(explicit.get_values())}"
                )
        _verify_window_fits(
            self.static_src_indices, src_type, shape, self.window_strides("src"), "npu.dma source"
        )
        _verify_window_fits(
            self.static_dst_indices,
            dst_type,
            self.dst_shape,
            self.window_strides("dst"),
            "npu.dma destination",
        )

    def verify_machine(self, machine: Machine) -> None:
        src, dst, name = space_of(self.src), space_of(self.dst), self.engine.data
        _require_space(machine, src, "npu.dma source")
        _require_space(machine, dst, "npu.dma destination")
        engine = machine.dmas.get(name)
        if engine is None:
            raise VerifyException(
                f"machine '{machine.name}' has no DMA engine '{name}' (its engines: {', '.join(machine.dmas)})"
            )
        if (src, dst) not in engine.paths:
            served = ", ".join(f"{a}->{b}" for a, b in engine.paths)
            raise VerifyException(
                f"engine '{name}' cannot move data from '{src}' to '{dst}' (it serves {served})"
            )
        if len(self.src_shape) > engine.max_dims:
            raise VerifyException(
                f"engine '{name}' moves at most {engine.max_dims}-d windows, got shape {self.src_shape}"
            )
        for flag, able, what in (
            (self.transpose is not None, engine.transpose, "transpose"),
            (self.pad is not None, engine.pad, "pad"),
            (
                self.src.type.get_element_type() != self.dst.type.get_element_type(),
                engine.cast,
                "cast",
            ),
        ):
            if flag and not able:
                raise VerifyException(f"engine '{name}' cannot {what} in flight")


# --------------------------------------------------------------------------- #
# npu.mma
# --------------------------------------------------------------------------- #


@irdl_op_definition
class MmaOp(NpuOperation):
    """C (MxN) = or += A (MxK) x B (KxN) on the matrix unit.

    `npu.mma %a[0, 0], %b[0, 0] -> %c[0, 0] {m = 16 : i64, n = 16 : i64, k = 16 : i64, accumulate} : ...`

    Each matrix is a tile of the two innermost dimensions of its buffer,
    starting at its indices. Inputs are f16/bf16/f8 (accumulated in f32) or
    i8 (accumulated in i32); without `accumulate` C is overwritten.
    """

    name = "npu.mma"

    a = operand_def(MemRefType)
    a_indices = var_operand_def(IndexType)
    static_a_indices = prop_def(DenseArrayBase.constr(i64))
    b = operand_def(MemRefType)
    b_indices = var_operand_def(IndexType)
    static_b_indices = prop_def(DenseArrayBase.constr(i64))
    c = operand_def(MemRefType)
    c_indices = var_operand_def(IndexType)
    static_c_indices = prop_def(DenseArrayBase.constr(i64))
    m = prop_def(IntegerAttr[I64])
    n = prop_def(IntegerAttr[I64])
    k = prop_def(IntegerAttr[I64])
    accumulate = opt_prop_def(UnitAttr)

    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())

    # `%a[indices], %b[indices] -> %c[indices] attr-dict : type, type -> type`, by hand
    # (`_parse_buffers`)
    _IN_DICTIONARY: ClassVar[frozenset[str]] = frozenset(("m", "n", "k", "accumulate"))

    @classmethod
    def parse(cls, parser: Parser) -> MmaOp:
        return _parse_buffers(cls, parser, ("a", "b", "c"), (", ", " -> "), {})

    def print(self, printer: Printer) -> None:
        _print_buffers(printer, self, ("a", "b", "c"), (", ", " -> "))

    def __init__(
        self,
        a: SSAValue,
        a_indices: Sequence[SSAValue | int],
        b: SSAValue,
        b_indices: Sequence[SSAValue | int],
        c: SSAValue,
        c_indices: Sequence[SSAValue | int],
        m: int,
        n: int,
        k: int,
        accumulate: bool = False,
    ):
        operands: list[SSAValue | list[SSAValue]] = []
        properties: dict[str, Attribute] = {"m": _int_prop(m), "n": _int_prop(n), "k": _int_prop(k)}
        for key, buffer, indices in (("a", a, a_indices), ("b", b, b_indices), ("c", c, c_indices)):
            static, dynamic = split_indices(indices)
            operands += [buffer, dynamic]
            properties[f"static_{key}_indices"] = static
        if accumulate:
            properties["accumulate"] = UnitAttr()
        super().__init__(operands=operands, properties=properties)

    @property
    def mnk(self) -> tuple[int, int, int]:
        return self.m.value.data, self.n.value.data, self.k.value.data

    def tiles(self) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]]:
        m, n, k = self.mnk
        return (m, k), (k, n), (m, n)

    def pipe(self, machine: Machine) -> str:
        return machine.matrix.pipe

    def buffer_windows(self, machine: Machine) -> list[BufferWindow]:
        windows = [
            buffer_window(getattr(self, key), getattr(self, f"static_{key}_indices"), getattr(self, f"{key}_indices"),
                          tile, None, key == "c")
            for key, tile in zip("abc", self.tiles())
        ]  # fmt: skip
        if self.accumulate is not None:
            windows.append(
                BufferWindow(
                    windows[2].buffer,
                    windows[2].indices,
                    windows[2].shape,
                    windows[2].strides,
                    False,
                )
            )
        return windows

    def verify_structure(self) -> None:
        m, n, k = self.mnk
        if min(m, n, k) <= 0:
            raise VerifyException(f"npu.mma m, n, k must be positive, got {m}x{n}x{k}")
        types = []
        for key, tile in zip("abc", self.tiles()):
            what = f"npu.mma operand {key.upper()}"
            memref_type = _verify_indices(
                getattr(self, key),
                getattr(self, f"static_{key}_indices"),
                getattr(self, f"{key}_indices"),
                what,
            )
            if memref_type.get_num_dims() < 2:
                raise VerifyException(f"{what} must be a buffer of rank >= 2, got {memref_type}")
            _verify_tile_fits(getattr(self, f"static_{key}_indices"), memref_type, tile, what)
            types.append(memref_type.get_element_type())
        a_type, b_type, c_type = types
        if a_type != b_type:
            raise VerifyException(
                f"npu.mma operands A and B must have the same element type, got {a_type} and {b_type}"
            )
        expected = _mma_accumulator(a_type)
        if expected != c_type:
            raise VerifyException(
                f"npu.mma accumulates {a_type} in {expected or 'nothing'}, got C of {c_type} "
                "(pairs: f16/bf16/f8 -> f32, i8 -> i32)"
            )

    def verify_machine(self, machine: Machine) -> None:
        unit = machine.matrix
        for key, space in zip("abc", (unit.a_space, unit.b_space, unit.c_space)):
            actual = space_of(getattr(self, key))
            if actual != space:
                raise VerifyException(
                    f"npu.mma operand {key.upper()} must be in '{space}' on machine '{machine.name}', got '{actual}'"
                )
        pair = (str(self.a.type.get_element_type()), str(self.c.type.get_element_type()))
        if pair not in unit.dtypes:
            supported = ", ".join(f"{i}->{o}" for i, o in unit.dtypes)
            raise VerifyException(
                f"matrix unit '{unit.name}' has no {pair[0]}->{pair[1]} instruction (it has {supported})"
            )
        m, n, k = self.mnk
        um, un, uk = unit.instruction_shape(*pair)
        if m % um or n % un or k % uk:
            raise VerifyException(
                f"npu.mma shape {m}x{n}x{k} must be a multiple of the {pair[0]}->{pair[1]} "
                f"instruction shape {um}x{un}x{uk}"
            )


def _mma_accumulator(input_type: Attribute) -> Attribute | None:
    """The element type the matrix unit accumulates `input_type` products in."""
    if isinstance(input_type, IntegerType):
        return IntegerType(32) if input_type.width.data == 8 else None
    for input_class, acc_class in _MMA_PAIRS.items():
        if isinstance(input_type, input_class):
            return acc_class()
    return None


# --------------------------------------------------------------------------- #
# npu.vec.*
# --------------------------------------------------------------------------- #


class VectorOperation(NpuOperation):
    """An instruction of the vector unit, Ascend-style.

    It runs `repeat` times (default 1). Each repetition processes one block of
    the unit's width, `lanes = vector bytes per cycle / element bytes`, of
    which the first `mask` lanes are active (default: all); inactive lanes of
    the destination are left untouched. (Ascend's mask is a bit pattern; a
    count covers the contiguous prefixes that tiled code uses.) Repetition `r` reads and writes its
    block of each buffer operand `r * stride` elements after that operand's
    start; `stride` has one entry per buffer operand, sources first, then the
    destination (default: `lanes`, blocks back to back; 1 for the scalar side of
    `reduce` and `broadcast`). Each operand's view is flat: its indices give the
    first element, and blocks run through the buffer in row-major order.
    """

    SOURCES: ClassVar[tuple[str, ...]] = ("src",)
    repeat = opt_prop_def(IntegerAttr[I64])
    mask = opt_prop_def(IntegerAttr[I64])
    stride = opt_prop_def(DenseArrayBase.constr(i64))

    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    custom_directives = (DynamicIndexList,)

    @classmethod
    def from_buffers(
        cls,
        sources: Sequence[tuple[SSAValue, Sequence[SSAValue | int]]],
        dst: tuple[SSAValue, Sequence[SSAValue | int]],
        *,
        repeat: int | None = None,
        mask: int | None = None,
        stride: Sequence[int] | None = None,
        **properties: Attribute,
    ):
        """The op on (buffer, indices) pairs, sources first.

        `VecAddOp.from_buffers([(x, [0]), (y, [0])], (z, [0]), repeat=4)`
        """
        operands: list[SSAValue | list[SSAValue]] = []
        props: dict[str, Attribute] = dict(properties)
        for key, (buffer, indices) in zip((*cls.SOURCES, "dst"), (*sources, dst), strict=True):
            static, dynamic = split_indices(indices)
            operands += [buffer, dynamic]
            props[f"static_{key}_indices"] = static
        for key, value in (("repeat", repeat), ("mask", mask)):
            if value is not None:
                props[key] = _int_prop(value)
        if stride is not None:
            props["stride"] = _array(stride)
        return cls(operands=operands, properties=props)

    @property
    def kind(self) -> str:
        """The operation name the machine's vector unit lists (`add`, `exp`, `reduce`, ...)."""
        return self.name.removeprefix("npu.vec.")

    @property
    def repeats(self) -> int:
        return 1 if self.repeat is None else self.repeat.value.data

    def buffers(self) -> list[tuple[SSAValue, DenseArrayBase, Sequence[SSAValue]]]:
        """(buffer, static indices, dynamic indices) per operand: sources, then the destination."""
        return [
            (
                getattr(self, key),
                getattr(self, f"static_{key}_indices"),
                getattr(self, f"{key}_indices"),
            )
            for key in (*self.SOURCES, "dst")
        ]

    def lanes(
        self,
        machine: Machine,
        operands: Sequence[tuple[SSAValue, DenseArrayBase, Sequence[SSAValue]]] | None = None,
    ) -> int:
        """Lanes of the widest element type among `operands` (default: `buffers()`)."""
        widest = max(
            element_bytes(buffer.type.get_element_type())
            for buffer, _, _ in (operands or self.buffers())
        )
        return max(1, machine.vector.lanes(widest))

    def active_lanes(self, machine: Machine, lanes: int | None = None) -> int:
        if self.mask is not None:
            return self.mask.value.data
        return self.lanes(machine) if lanes is None else lanes

    def block_lengths(self, active: int) -> list[int]:
        """Elements each repetition touches in each operand (sources, then destination)."""
        return [active] * (len(self.SOURCES) + 1)

    def default_strides(self, lanes: int) -> list[int]:
        return [lanes] * (len(self.SOURCES) + 1)

    def strides(self, machine: Machine, lanes: int | None = None) -> list[int]:
        if self.stride is not None:
            return list(self.stride.get_values())
        return self.default_strides(self.lanes(machine) if lanes is None else lanes)

    def pipe(self, machine: Machine) -> str:
        return machine.vector.pipe

    def buffer_windows(self, machine: Machine) -> list[BufferWindow]:
        """Each operand's `repeat` blocks of its active lanes, `stride` elements apart; the last one written."""
        operands = self.buffers()
        lanes = self.lanes(machine, operands)  # buffers() reads every operand's properties: once
        lengths = self.block_lengths(self.active_lanes(machine, lanes))
        strides = self.strides(machine, lanes)
        return [
            buffer_window(
                buffer,
                static,
                dynamic,
                (self.repeats, length),
                (stride, 1),
                index == len(operands) - 1,
            )
            for index, ((buffer, static, dynamic), length, stride) in enumerate(
                zip(operands, lengths, strides)
            )
        ]

    def verify_structure(self) -> None:
        operands = self.buffers()
        types = [
            _verify_indices(b, s, d, f"{self.name} operand #{i}")
            for i, (b, s, d) in enumerate(operands)
        ]
        if self.repeats < 1:
            raise VerifyException(f"{self.name} repeat must be >= 1, got {self.repeats}")
        if self.mask is not None and self.mask.value.data < 1:
            raise VerifyException(
                f"{self.name} mask must count at least one active lane, got {self.mask.value.data}"
            )
        if self.stride is not None:
            strides = self.stride.get_values()
            if len(strides) != len(operands) or any(s < 0 for s in strides):
                raise VerifyException(
                    f"{self.name} stride takes one non-negative stride per buffer operand "
                    f"({len(operands)}: sources, then destination), got {list(strides)}"
                )
        self.verify_types([t.get_element_type() for t in types])
        if self.mask is not None and self.stride is not None:
            for (_, static, _), memref_type, length, stride in zip(
                operands, types, self.block_lengths(self.mask.value.data), self.stride.get_values()
            ):
                _verify_window_fits(
                    static, memref_type, (self.repeats, length), (stride, 1), self.name
                )

    def verify_types(self, element_types: list[Attribute]) -> None:
        if len(set(element_types)) != 1:
            raise VerifyException(
                f"{self.name} operands must share one element type, got {', '.join(map(str, element_types))}"
            )

    def verify_machine(self, machine: Machine) -> None:
        unit = machine.vector
        if self.kind not in unit.ops:
            raise VerifyException(
                f"vector unit '{unit.name}' of machine '{machine.name}' has no '{self.kind}'"
            )
        operands = self.buffers()  # reads every operand's properties: once
        for index, (buffer, _, _) in enumerate(operands):
            space = space_of(buffer)
            if space not in unit.spaces:
                raise VerifyException(
                    f"{self.name} operand #{index} is in '{space}'; the vector unit reads and writes "
                    f"{', '.join(unit.spaces)}"
                )
        lanes = self.lanes(machine, operands)
        active = self.active_lanes(machine, lanes)
        if active > lanes:
            raise VerifyException(
                f"{self.name} mask {active} exceeds the {lanes} lanes of the vector unit"
            )
        strides = self.strides(machine, lanes)
        for (buffer, static, _), length, stride in zip(
            operands, self.block_lengths(active), strides
        ):
            _verify_window_fits(static, buffer.type, (self.repeats, length), (stride, 1), self.name)


def _vector_format(sources: Sequence[str], prefix: str = "") -> str:
    operands = " `,` ".join(
        f"${s} `` custom<DynamicIndexList>(${s}_indices, $static_{s}_indices)" for s in sources
    )
    types = " `,` ".join(f"type(${s})" for s in sources)
    return (
        f"{prefix}{operands} `->` $dst `` custom<DynamicIndexList>($dst_indices, $static_dst_indices) "
        f"attr-dict `:` {types} `->` type($dst)"
    )


class UnaryVectorOperation(VectorOperation):
    src = operand_def(MemRefType)
    src_indices = var_operand_def(IndexType)
    static_src_indices = prop_def(DenseArrayBase.constr(i64))
    dst = operand_def(MemRefType)
    dst_indices = var_operand_def(IndexType)
    static_dst_indices = prop_def(DenseArrayBase.constr(i64))

    assembly_format = _vector_format(("src",))


class BinaryVectorOperation(VectorOperation):
    SOURCES: ClassVar[tuple[str, ...]] = ("lhs", "rhs")
    lhs = operand_def(MemRefType)
    lhs_indices = var_operand_def(IndexType)
    static_lhs_indices = prop_def(DenseArrayBase.constr(i64))
    rhs = operand_def(MemRefType)
    rhs_indices = var_operand_def(IndexType)
    static_rhs_indices = prop_def(DenseArrayBase.constr(i64))
    dst = operand_def(MemRefType)
    dst_indices = var_operand_def(IndexType)
    static_dst_indices = prop_def(DenseArrayBase.constr(i64))

    assembly_format = _vector_format(("lhs", "rhs"))


@irdl_op_definition
class VecAddOp(BinaryVectorOperation):
    """dst = lhs + rhs, lane by lane."""

    name = "npu.vec.add"


@irdl_op_definition
class VecMulOp(BinaryVectorOperation):
    """dst = lhs * rhs, lane by lane."""

    name = "npu.vec.mul"


@irdl_op_definition
class VecMaxOp(BinaryVectorOperation):
    """dst = max(lhs, rhs), lane by lane."""

    name = "npu.vec.max"


@irdl_op_definition
class VecMinOp(BinaryVectorOperation):
    """dst = min(lhs, rhs), lane by lane."""

    name = "npu.vec.min"


@irdl_op_definition
class VecSubOp(BinaryVectorOperation):
    """dst = lhs - rhs, lane by lane."""

    name = "npu.vec.sub"


def _require_floats(op: VectorOperation, element_types: list[Attribute]) -> None:
    if not is_float(element_types[0]):
        raise VerifyException(f"{op.name} computes on floats, got {element_types[0]}")


@irdl_op_definition
class VecDivOp(BinaryVectorOperation):
    """dst = lhs / rhs, lane by lane, on floats."""

    name = "npu.vec.div"

    def verify_types(self, element_types: list[Attribute]) -> None:
        super().verify_types(element_types)
        _require_floats(self, element_types)


class ScalarVectorOperation(UnaryVectorOperation):
    """dst = src (op) scalar, lane by lane; the scalar is converted to the operands' element type.

    `npu.vec.muls %ub[0] -> %ub[0] {scalar = 5.000000e-01 : f64} : ...`
    """

    scalar = prop_def(FloatAttr)


@irdl_op_definition
class VecAddsOp(ScalarVectorOperation):
    """dst = src + scalar, lane by lane."""

    name = "npu.vec.adds"


@irdl_op_definition
class VecMulsOp(ScalarVectorOperation):
    """dst = src * scalar, lane by lane."""

    name = "npu.vec.muls"


@irdl_op_definition
class VecDupOp(VectorOperation):
    """The active lanes of each block of dst = scalar (converted to dst's element type): fills a buffer.

    `npu.vec.dup %ub[0, 0] {scalar = 0.000000e+00 : f64, repeat = 4 : i64} : memref<4x64xf32, "ub">`
    """

    name = "npu.vec.dup"

    SOURCES: ClassVar[tuple[str, ...]] = ()
    dst = operand_def(MemRefType)
    dst_indices = var_operand_def(IndexType)
    static_dst_indices = prop_def(DenseArrayBase.constr(i64))
    scalar = prop_def(FloatAttr)

    assembly_format = "$dst `` custom<DynamicIndexList>($dst_indices, $static_dst_indices) attr-dict `:` type($dst)"


class FloatUnaryVectorOperation(UnaryVectorOperation):
    def verify_types(self, element_types: list[Attribute]) -> None:
        super().verify_types(element_types)
        _require_floats(self, element_types)


@irdl_op_definition
class VecExpOp(FloatUnaryVectorOperation):
    """dst = exp(src), lane by lane (a transcendental: slower on most units)."""

    name = "npu.vec.exp"


@irdl_op_definition
class VecRsqrtOp(FloatUnaryVectorOperation):
    """dst = 1 / sqrt(src), lane by lane (a transcendental)."""

    name = "npu.vec.rsqrt"


@irdl_op_definition
class VecReluOp(UnaryVectorOperation):
    """dst = max(src, 0), lane by lane."""

    name = "npu.vec.relu"


@irdl_op_definition
class VecCastOp(UnaryVectorOperation):
    """dst = src converted to dst's element type (floats round to nearest even; to integers, rounded and saturated).

    Integer buffers are signless; `unsigned = "src"` reads the source's integers as unsigned
    (zero-extending, as Ascend's vconv from u8), `unsigned = "dst"` converts to unsigned
    integers (saturating to [0, 2^bits - 1]) and stores their bits.
    """

    name = "npu.vec.cast"

    unsigned = opt_prop_def(StringAttr)

    SIDES: ClassVar[tuple[str, ...]] = ("src", "dst")

    def verify_types(self, element_types: list[Attribute]) -> None:
        # any pair of numeric element types; buffer_type already required them
        if self.unsigned is None:
            return
        side = self.unsigned.data
        if side not in self.SIDES:
            raise VerifyException(f'npu.vec.cast: unsigned is "src" or "dst", got "{side}"')
        element = element_types[self.SIDES.index(side)]
        if not isinstance(element, IntegerType):
            raise VerifyException(
                f'npu.vec.cast: unsigned = "{side}" needs an integer {side}, got {element}'
            )


@irdl_op_definition
class VecReduceOp(UnaryVectorOperation):
    """dst[r] = sum or max of the active lanes of block r of src: one element per repetition.

    `npu.vec.reduce "sum" %ub[0, 0] -> %ub2[0] {repeat = 16 : i64, mask = 64 : i64} : ...`
    reduces the innermost dimension of a 16x64 tile; sums accumulate in f32 (floats) or i32 (integers).
    """

    name = "npu.vec.reduce"

    combiner = prop_def(StringAttr)
    assembly_format = _vector_format(("src",), prefix="$combiner ")

    COMBINERS: ClassVar[tuple[str, ...]] = ("sum", "max")

    def block_lengths(self, active: int) -> list[int]:
        return [active, 1]

    def default_strides(self, lanes: int) -> list[int]:
        return [lanes, 1]

    def verify_types(self, element_types: list[Attribute]) -> None:
        super().verify_types(element_types)
        if self.combiner.data not in self.COMBINERS:
            raise VerifyException(
                f"npu.vec.reduce combines with one of {', '.join(self.COMBINERS)}, got '{self.combiner.data}'"
            )


@irdl_op_definition
class VecBroadcastOp(UnaryVectorOperation):
    """The active lanes of block r of dst = element r of src (src stride defaults to 1)."""

    name = "npu.vec.broadcast"

    def block_lengths(self, active: int) -> list[int]:
        return [1, active]

    def default_strides(self, lanes: int) -> list[int]:
        return [1, lanes]


@irdl_op_definition
class VecSelectOp(VectorOperation):
    """dst = cond != 0 ? lhs : rhs, lane by lane; cond is a buffer of integers (one per lane)."""

    name = "npu.vec.select"

    SOURCES: ClassVar[tuple[str, ...]] = ("cond", "lhs", "rhs")
    cond = operand_def(MemRefType)
    cond_indices = var_operand_def(IndexType)
    static_cond_indices = prop_def(DenseArrayBase.constr(i64))
    lhs = operand_def(MemRefType)
    lhs_indices = var_operand_def(IndexType)
    static_lhs_indices = prop_def(DenseArrayBase.constr(i64))
    rhs = operand_def(MemRefType)
    rhs_indices = var_operand_def(IndexType)
    static_rhs_indices = prop_def(DenseArrayBase.constr(i64))
    dst = operand_def(MemRefType)
    dst_indices = var_operand_def(IndexType)
    static_dst_indices = prop_def(DenseArrayBase.constr(i64))

    assembly_format = _vector_format(("cond", "lhs", "rhs"))

    def verify_types(self, element_types: list[Attribute]) -> None:
        if not isinstance(element_types[0], IntegerType):
            raise VerifyException(
                f"npu.vec.select condition must hold integers, got {element_types[0]}"
            )
        super().verify_types(element_types[1:])


# --------------------------------------------------------------------------- #
# npu.load
# --------------------------------------------------------------------------- #


@irdl_op_definition
class LoadOp(NpuOperation):
    """The scalar unit reads one integer element of a buffer, a value it computes addresses with.

    `%v = npu.load %ids[0, %j] : memref<1x32xi64, "ub"> -> i64`

    An embedding lookup reads each index so, wraps it with scalar `arith`, and moves the
    row it names with an `npu.dma` whose source index is that value. The load runs on the
    machine's scalar pipe and stalls the scalar unit until the element arrives (the
    latency of its memory space): what it issues next, whose addresses may depend on the
    value, starts after it. A load of bytes another pipe writes waits for that pipe's flag.
    """

    name = "npu.load"

    buffer = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    static_indices = prop_def(DenseArrayBase.constr(i64))
    result = result_def(IntegerType)

    irdl_options = (ParsePropInAttrDict(),)
    custom_directives = (DynamicIndexList,)
    assembly_format = (
        "$buffer `` custom<DynamicIndexList>($indices, $static_indices) "
        "attr-dict `:` type($buffer) `->` type($result)"
    )

    def __init__(self, buffer: SSAValue, indices: Sequence[SSAValue | int]):
        static, dynamic = split_indices(indices)
        super().__init__(
            operands=[buffer, dynamic],
            properties={"static_indices": static},
            result_types=[buffer.type.get_element_type()],
        )

    def pipe(self, machine: Machine) -> str:
        return machine.scalar_pipe

    def buffer_windows(self, machine: Machine) -> list[BufferWindow]:
        return [buffer_window(self.buffer, self.static_indices, self.indices, (1,), (1,), False)]

    def verify_structure(self) -> None:
        memref_type = _verify_indices(
            self.buffer, self.static_indices, self.indices, "npu.load buffer"
        )
        element_type = memref_type.get_element_type()
        if not isinstance(element_type, IntegerType):
            raise VerifyException(
                f"npu.load reads integers for the scalar unit to compute with, got {memref_type}"
            )
        if self.result.type != element_type:
            raise VerifyException(
                f"npu.load result must be the buffer's element type {element_type}, got {self.result.type}"
            )

    def verify_machine(self, machine: Machine) -> None:
        _require_space(machine, space_of(self.buffer), "npu.load buffer")


# --------------------------------------------------------------------------- #
# Synchronization
# --------------------------------------------------------------------------- #


class FlagOperation(NpuOperation):
    src_pipe = prop_def(StringAttr)
    dst_pipe = prop_def(StringAttr)
    event_id = prop_def(IntegerAttr[I64])

    def __init__(self, src_pipe: str, dst_pipe: str, event_id: int):
        # Operation's own constructor, as `create` uses: the properties are built right here, so
        # the IRDL argument checks of `super().__init__` (0.1 ms an op; npu-insert-sync makes
        # two per dependence, 12,000 for the light ResNet-50) have nothing to catch.
        Operation.__init__(
            self,
            properties={
                "src_pipe": _name(src_pipe),
                "dst_pipe": _name(dst_pipe),
                "event_id": _int_prop(event_id),
            },
        )

    # `"src" -> "dst", id attr-dict`, parsed and printed by hand rather than by an assembly
    # format: half the ops of a compiled network are flags, and xDSL's declarative format spent
    # about 0.1 ms on each (1.8 s of the 5 s that parsing the light ResNet-50 took).
    @classmethod
    def parse(cls, parser: Parser) -> FlagOperation:
        src = parser.parse_str_literal(" (the pipe that sets the flag)")
        parser.parse_punctuation("->")
        dst = parser.parse_str_literal(" (the pipe that waits for it)")
        parser.parse_punctuation(",")
        event = parser.parse_integer(allow_boolean=False, context_msg=" (the event id)")
        attributes = parser.parse_optional_attr_dict()
        return cls.create(
            properties={
                "src_pipe": StringAttr(src),
                "dst_pipe": StringAttr(dst),
                "event_id": _int_prop(event),
            },
            attributes=attributes,
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.src_pipe.data)
        printer.print_string(" -> ")
        printer.print_string_literal(self.dst_pipe.data)
        printer.print_string(f", {self.event_id.value.data}")
        printer.print_op_attributes(self.attributes)

    @property
    def event(self) -> int:
        return self.event_id.value.data

    @event.setter
    def event(self, event: int) -> None:
        self.properties["event_id"] = _int_prop(event)

    def pipe(self, machine: Machine) -> None:
        return None

    def buffer_windows(self, machine: Machine) -> list[BufferWindow]:
        return []

    def verify_structure(self) -> None:
        if self.src_pipe == self.dst_pipe:
            raise VerifyException(
                f"{self.name} orders two different pipes; '{self.src_pipe.data}' is already ordered with itself"
            )
        if self.event < 0:
            raise VerifyException(f"{self.name} event id must be non-negative, got {self.event}")

    def verify_machine(self, machine: Machine) -> None:
        _require_pipe(machine, self.src_pipe.data, f"{self.name} source pipe")
        _require_pipe(machine, self.dst_pipe.data, f"{self.name} destination pipe")
        if self.event >= machine.flag_ids:
            raise VerifyException(
                f"{self.name} event id {self.event} is out of range: machine '{machine.name}' has "
                f"{machine.flag_ids} per pipe pair"
            )


@irdl_op_definition
class SetFlagOp(FlagOperation):
    """Issued on `src_pipe`: once every earlier instruction of that pipe has finished, sets the event.

    `npu.set_flag "mte2" -> "mte1", 0`
    """

    name = "npu.set_flag"


@irdl_op_definition
class WaitFlagOp(FlagOperation):
    """Issued on `dst_pipe`: later instructions of that pipe wait until the event is set, then it is cleared.

    `npu.wait_flag "mte2" -> "mte1", 0`
    """

    name = "npu.wait_flag"


@irdl_op_definition
class CoreIdOp(NpuOperation):
    """The index of the core running the program, in [0, npu.num_cores): how a kernel splits its work.

    `%core = npu.core_id`
    """

    name = "npu.core_id"

    result = result_def(IndexType)
    assembly_format = "attr-dict"
    traits = traits_def(Pure())

    def pipe(self, machine: Machine) -> None:
        return None

    def buffer_windows(self, machine: Machine) -> list[BufferWindow]:
        return []


@irdl_op_definition
class NumCoresOp(NpuOperation):
    """How many cores run the program (each with its own local memories, all sharing global memory).

    `%cores = npu.num_cores`
    """

    name = "npu.num_cores"

    result = result_def(IndexType)
    assembly_format = "attr-dict"
    traits = traits_def(Pure())

    def pipe(self, machine: Machine) -> None:
        return None

    def buffer_windows(self, machine: Machine) -> list[BufferWindow]:
        return []


@irdl_op_definition
class BarrierOp(NpuOperation):
    """The scalar unit waits until `pipe` (default: every pipe) has drained; later instructions start after it.

    `npu.barrier` or `npu.barrier "v"`
    """

    name = "npu.barrier"

    pipe = opt_prop_def(StringAttr)
    assembly_format = "($pipe^)? attr-dict"

    def __init__(self, pipe: str | None = None):
        super().__init__(properties={} if pipe is None else {"pipe": _name(pipe)})

    # Its `pipe` is the property above (the pipe it drains): a barrier is not an instruction of a pipe.
    def buffer_windows(self, machine: Machine) -> list[BufferWindow]:
        return []

    def verify_machine(self, machine: Machine) -> None:
        if self.pipe is not None:
            _require_pipe(machine, self.pipe.data, "npu.barrier pipe")


@irdl_op_definition
class SyncCoresOp(NpuOperation):
    """A barrier of all cores: each core drains its pipes and waits until every core has arrived.

    `npu.sync_cores`

    What a core wrote to global memory before it, every core reads after it. All cores
    leave together, `sync_cores_latency` cycles (the machine's `[sync]`) after the last
    one arrives. Every core must pass as many as the others (one under an `scf.if` on
    `npu.core_id`, or in a loop whose trip count depends on it, may break that): a core
    that ends while others wait at one is a deadlock, diagnosed when the program runs;
    one under an `scf.if` whose condition is computed from `npu.core_id` is refused here.
    """

    name = "npu.sync_cores"

    assembly_format = "attr-dict"

    def pipe(self, machine: Machine) -> None:
        return None

    def buffer_windows(self, machine: Machine) -> list[BufferWindow]:
        return []

    def verify_structure(self) -> None:
        parent = self.parent_op()
        while parent is not None:
            if isinstance(parent, scf.IfOp) and _computed_from_core_id(parent.cond):
                raise VerifyException(
                    "npu.sync_cores under an scf.if on npu.core_id: the cores that skip it never "
                    "arrive, and those that wait there deadlock"
                )
            parent = parent.parent_op()


def _computed_from_core_id(value: SSAValue) -> bool:
    """Whether `value` is computed (through ops of the same block or enclosing ones) from `npu.core_id`."""
    seen: set[SSAValue] = set()
    stack = [value]
    while stack:
        value = stack.pop()
        if value in seen or not isinstance(value.owner, Operation):
            continue
        seen.add(value)
        if isinstance(value.owner, CoreIdOp):
            return True
        stack.extend(value.owner.operands)
    return False


Npu = Dialect(
    "npu",
    [
        BufferOp,
        DmaOp,
        MmaOp,
        VecAddOp,
        VecMulOp,
        VecMaxOp,
        VecMinOp,
        VecSubOp,
        VecDivOp,
        VecAddsOp,
        VecMulsOp,
        VecDupOp,
        VecExpOp,
        VecRsqrtOp,
        VecReluOp,
        VecCastOp,
        VecReduceOp,
        VecBroadcastOp,
        VecSelectOp,
        LoadOp,
        SetFlagOp,
        WaitFlagOp,
        BarrierOp,
        SyncCoresOp,
        CoreIdOp,
        NumCoresOp,
    ],
)
