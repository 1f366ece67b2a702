"""The `gemm` dialect: the command set of a Gemmini-style accelerator.

Four commands, each queued on one of the machine's pipes:

    gemm.load %dram[%i, 0] -> %spad[0, 0] {rows = 16, cols = 64} : memref<..., "dram"> -> memref<..., "spad">
    gemm.compute %spad[0, 0], %spad[0, 64] -> %acc[0, 0] {m = 16, n = 16, k = 64, accumulate} : ...
    gemm.alu "relu" %acc[0, 0] -> %acc[0, 0] {rows = 16, cols = 16} : memref<..., "acc"> -> memref<..., "acc">
    gemm.store %acc[0, 0] -> %dram[%i, 0] {rows = 16, cols = 16} : memref<..., "acc"> -> memref<..., "dram">

`load` (mvin) and `store` (mvout) move a rows x cols tile between main memory and
the scratchpad or accumulator, casting when the element types differ; `compute`
multiplies an m x k tile by a k x n tile of the scratchpad into the accumulator
(overwriting it, or adding with `accumulate`); `alu` applies an activation to an
accumulator tile (in place when source and destination are the same tile). Ordering between the queues (Gemmini's and VTA's
dependence tokens) is the machine's flags: `npu.set_flag "load" -> "ex", 0`.

The ops subclass `npu.NpuOperation`, so they are verified against the machine
(`npu.machine` on the module, or the tool's `--machine`) and ziggurat-run runs a
module holding them on the machine model (see `instructions.py`).
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    MemRefType,
    StringAttr,
    UnitAttr,
    i64,
)
from xdsl.dialects.utils.dynamic_index_list import DynamicIndexList
from xdsl.ir import Attribute, Dialect
from xdsl.irdl import (
    AttrSizedOperandSegments,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    var_operand_def,
)
from xdsl.utils.exceptions import VerifyException

from ziggurat.dialects import npu
from ziggurat.dialects.npu import BufferWindow, buffer_window, space_of, split_indices

_INDEX_LIST = "custom<DynamicIndexList>"


class GemmOperation(npu.NpuOperation):
    """A command of the accelerator; `pipe(machine)` is the queue it goes to."""

    def pipe(self, machine) -> str:
        raise NotImplementedError


class TileOperation(GemmOperation):
    """A command from a rows x cols tile of `src` to one of `dst`; a tile is row-major in its
    buffer unless `src_strides`/`dst_strides` give its row and column strides in elements
    (Gemmini's mvin/mvout take a main-memory row stride)."""

    src = operand_def(MemRefType)
    src_indices = var_operand_def(IndexType)
    static_src_indices = prop_def(DenseArrayBase.constr(i64))
    dst = operand_def(MemRefType)
    dst_indices = var_operand_def(IndexType)
    static_dst_indices = prop_def(DenseArrayBase.constr(i64))
    rows = prop_def(IntegerAttr[I64])
    cols = prop_def(IntegerAttr[I64])
    src_strides = opt_prop_def(DenseArrayBase.constr(i64))
    dst_strides = opt_prop_def(DenseArrayBase.constr(i64))

    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    custom_directives = (DynamicIndexList,)
    assembly_format = (
        f"$src `` {_INDEX_LIST}($src_indices, $static_src_indices) `->` "
        f"$dst `` {_INDEX_LIST}($dst_indices, $static_dst_indices) attr-dict `:` type($src) `->` type($dst)"
    )

    def __init__(
        self, src, src_indices, dst, dst_indices, rows: int, cols: int, **properties: Attribute
    ):
        static_src, dynamic_src = split_indices(src_indices)
        static_dst, dynamic_dst = split_indices(dst_indices)
        super().__init__(
            operands=[src, dynamic_src, dst, dynamic_dst],
            properties={
                "static_src_indices": static_src,
                "static_dst_indices": static_dst,
                "rows": IntegerAttr(rows, i64),
                "cols": IntegerAttr(cols, i64),
                **properties,
            },
        )

    @property
    def tile(self) -> tuple[int, int]:
        return self.rows.value.data, self.cols.value.data

    def strides(self, key: str) -> tuple[int, ...] | None:
        """The element strides of the `key` ("src" or "dst") tile, None when row-major."""
        explicit = getattr(self, f"{key}_strides")
        return None if explicit is None else tuple(explicit.get_values())

    def buffer_windows(self, machine) -> list[BufferWindow]:
        return [
            buffer_window(
                self.src,
                self.static_src_indices,
                self.src_indices,
                self.tile,
                self.strides("src"),
                False,
            ),
            buffer_window(
                self.dst,
                self.static_dst_indices,
                self.dst_indices,
                self.tile,
                self.strides("dst"),
                True,
            ),
        ]

    def verify_structure(self) -> None:
        for key in ("src", "dst"):
            strides = self.strides(key)
            if strides is not None and len(strides) != 2:
                raise VerifyException(
                    f"{self.name} {key}_strides must have 2 entries (row, column), got {len(strides)}"
                )
            buffer = getattr(self, key)
            rank = buffer.type.get_num_dims()
            if rank < 2:
                raise VerifyException(
                    f"{self.name} {key} must be a buffer of rank >= 2, got {buffer.type}"
                )
            if len(getattr(self, f"static_{key}_indices").get_values()) != rank:
                raise VerifyException(f"{self.name} {key} needs {rank} indices")


class TransferOperation(TileOperation):
    """A command of one of the machine's DMA engines (`ENGINE`)."""

    ENGINE: ClassVar[str] = ""

    def pipe(self, machine) -> str:
        return machine.dmas[self.ENGINE].pipe

    def verify_machine(self, machine) -> None:
        """The rule: the machine's engine of this command serves the (src, dst) space pair."""
        engine = machine.dmas.get(self.ENGINE)
        pair = (space_of(self.src), space_of(self.dst))
        if engine is None or pair not in engine.paths:
            raise VerifyException(
                f"{self.name} cannot move {pair[0]} -> {pair[1]} on machine '{machine.name}'"
            )


@irdl_op_definition
class LoadOp(TransferOperation):
    """mvin: a tile from main memory into the scratchpad or the accumulator."""

    name = "gemm.load"
    ENGINE: ClassVar[str] = "load"


@irdl_op_definition
class StoreOp(TransferOperation):
    """mvout: a tile from the accumulator (or scratchpad) back to main memory."""

    name = "gemm.store"
    ENGINE: ClassVar[str] = "store"


@irdl_op_definition
class ComputeOp(GemmOperation):
    """C[m, n] (+)= A[m, k] @ B[k, n] on the systolic array."""

    name = "gemm.compute"

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
    custom_directives = (DynamicIndexList,)
    assembly_format = (
        f"$a `` {_INDEX_LIST}($a_indices, $static_a_indices) `,` "
        f"$b `` {_INDEX_LIST}($b_indices, $static_b_indices) `->` "
        f"$c `` {_INDEX_LIST}($c_indices, $static_c_indices) attr-dict `:` type($a) `,` type($b) `->` type($c)"
    )

    def __init__(
        self, a, a_indices, b, b_indices, c, c_indices, m: int, n: int, k: int, accumulate: bool
    ):
        operands: list = []
        properties: dict[str, Attribute] = {
            key: IntegerAttr(v, i64) for key, v in (("m", m), ("n", n), ("k", k))
        }
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

    def pipe(self, machine) -> str:
        return machine.matrix.pipe

    def buffer_windows(self, machine) -> list[BufferWindow]:
        m, n, k = self.mnk
        c = buffer_window(self.c, self.static_c_indices, self.c_indices, (m, n), None, True)
        windows = [
            buffer_window(self.a, self.static_a_indices, self.a_indices, (m, k), None, False),
            buffer_window(self.b, self.static_b_indices, self.b_indices, (k, n), None, False),
            c,
        ]
        if self.accumulate is not None:
            windows.append(BufferWindow(c.buffer, c.indices, c.shape, c.strides, write=False))
        return windows

    def verify_machine(self, machine) -> None:
        """The rule: A and B in the array's input space, C in its accumulator space."""
        unit = machine.matrix
        for key, space in zip("abc", (unit.a_space, unit.b_space, unit.c_space)):
            if space_of(getattr(self, key)) != space:
                raise VerifyException(f"gemm.compute operand {key.upper()} must be in '{space}'")


@irdl_op_definition
class AluOp(TileOperation):
    """An activation (`relu`) or a type conversion (`cast`) from one accumulator tile to another."""

    name = "gemm.alu"

    FUNCTIONS: ClassVar[tuple[str, ...]] = ("relu", "cast")

    function = prop_def(StringAttr)

    assembly_format = f"$function {TileOperation.assembly_format}"

    def __init__(self, function: str, src, src_indices, dst, dst_indices, rows: int, cols: int):
        super().__init__(
            src, src_indices, dst, dst_indices, rows, cols, function=StringAttr(function)
        )

    def pipe(self, machine) -> str:
        return machine.vector.pipe

    def verify_structure(self) -> None:
        super().verify_structure()
        if self.function.data not in self.FUNCTIONS:
            raise VerifyException(
                f"gemm.alu function must be one of {', '.join(self.FUNCTIONS)}, got '{self.function.data}'"
            )

    def verify_machine(self, machine) -> None:
        """The rule: the ALU works on the spaces the machine's vector unit reaches."""
        for buffer in (self.src, self.dst):
            if space_of(buffer) not in machine.vector.spaces:
                raise VerifyException(
                    f"gemm.alu works in {', '.join(machine.vector.spaces)}, got '{space_of(buffer)}'"
                )


Gemm = Dialect("gemm", [LoadOp, StoreOp, ComputeOp, AluOp])
