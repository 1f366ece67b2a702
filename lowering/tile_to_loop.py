"""`tile-to-loop{machine=M}`: bufferization, from tensors to memrefs in the machine's memory spaces, in
place where safe (docs/lowering.md, section 4).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StridedLayoutAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.dialects.linalg import abstract_ops
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue, Use
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from ziggurat.diagnostics import error_at
from ziggurat.dialects import loop, tile
from ziggurat.dialects.npu import MACHINE_ATTR
from ziggurat.dialects.tile import GROUP_ATTR
from ziggurat.dtypes import is_splat, to_numpy_dtype
from ziggurat.locations import locate
from ziggurat.machine import Machine, load_machine
from ziggurat.transforms.loop.buffers import kept_dims
from ziggurat.transforms.tile.builders import is_signless, signless

Dest = Callable[[Operation], SSAValue | None]
"""Where a tensor value would best be computed: the buffer, made before the given op, or None
when it cannot be made there (an index it needs is defined later)."""

VIEW_OPS = (tensor.ExtractSliceOp, tensor.CollapseShapeOp, tensor.ExpandShapeOp)


# --------------------------------------------------------------------------- #
# Types and IR helpers
# --------------------------------------------------------------------------- #


def _static_tensor(value: SSAValue, op: Operation) -> TensorType:
    value_type = value.type
    assert isinstance(value_type, TensorType)
    if any(dim == DYNAMIC_INDEX for dim in value_type.get_shape()):
        raise error_at(
            op, f"tile-to-loop needs static shapes; '{op.name}' has the dynamic type {value_type}"
        )
    return value_type


def _signless_tensor(tensor_type: TensorType) -> TensorType:
    return TensorType(signless(tensor_type.get_element_type()), tensor_type.get_shape())


def _memref(tensor_type: TensorType, space: str | None) -> MemRefType:
    """The row-major memref holding a tensor of `tensor_type`, in `space` (None: unplaced)."""
    memory_space = StringAttr(space) if space is not None else NoneAttr()
    return MemRefType(
        tensor_type.get_element_type(), tensor_type.get_shape(), NoneAttr(), memory_space
    )


def _strides_and_offset(memref_type: MemRefType) -> tuple[list[int | None], int | None]:
    if isinstance(memref_type.layout, NoneAttr):
        return list(memref_type.get_strides()), 0
    assert isinstance(memref_type.layout, StridedLayoutAttr)
    return list(memref_type.layout.get_strides()), memref_type.layout.get_offset()


def _subview_type(
    source: MemRefType,
    offsets: Sequence[int],
    sizes: Sequence[int],
    steps: Sequence[int],
    shape: Sequence[int],
) -> MemRefType:
    """The strided type of the subview of `source` of result `shape` (offsets DYNAMIC_INDEX where dynamic)."""
    strides, offset = _strides_and_offset(source)
    kept = kept_dims(sizes, shape)
    view_strides = [None if strides[d] is None else strides[d] * steps[d] for d in kept]
    for start, stride in zip(offsets, strides):
        if offset is None or start == DYNAMIC_INDEX or stride is None:
            offset = None
        else:
            offset += start * stride
    layout = StridedLayoutAttr(
        [NoneAttr() if s is None else IntAttr(s) for s in view_strides],
        NoneAttr() if offset is None else IntAttr(offset),
    )
    return MemRefType(source.get_element_type(), shape, layout, source.memory_space)


def _dominates(value: SSAValue, op: Operation) -> bool:
    """Whether `value` is defined before `op` in a block that holds `op` or one of its ancestors."""
    defining_block = value.block if isinstance(value, BlockArgument) else value.owner.parent_block()
    ancestor: Operation | None = op
    while ancestor is not None and ancestor.parent_block() is not defining_block:
        ancestor = ancestor.parent_op()
    if ancestor is None:
        return False
    return isinstance(value, BlockArgument) or value.owner.is_before_in_block(ancestor)


def _only_detached_users(value: SSAValue) -> bool:
    """Whether every user of `value` is outside the IR (an op some pass built and dropped):
    such users do not keep a tensor value alive."""
    return all(use.operation.parent_op() is None for use in value.uses)


def _within_one_group(value: SSAValue) -> bool:
    """Whether every op that reads or writes the buffer of `value` (its users, and those of
    the results computed into it in place) carries one and the same `tile.group`."""
    groups: set[Attribute | None] = set()
    pending = [value]
    while pending:
        for use in pending.pop().uses:
            user = use.operation
            groups.add(user.attributes.get(GROUP_ATTR))
            first_init = (
                len(user.operands) - len(_inits(user)) if _is_linalg(user) else len(user.operands)
            )
            if use.index >= first_init:
                pending.append(user.results[use.index - first_init])
    return len(groups) == 1 and None not in groups


def _reads_where_written(use: Use, writer: Operation | None) -> bool:
    """Whether `use` is an input of the all-parallel generic `writer` read through its
    output's map: each element is read only where, and before, it is written."""
    if (
        use.operation is not writer
        or not isinstance(writer, linalg.GenericOp)
        or len(writer.outputs) != 1
    ):
        return False
    if any(iterator.data != IteratorType.PARALLEL for iterator in writer.iterator_types.data):
        return False
    maps = writer.indexing_maps.data
    return use.index < len(writer.inputs) and maps[use.index] == maps[-1]


def _only_inserted_besides(view: Operation) -> bool:
    """Whether every other user of the tensor `view` looks into only inserts into it."""
    return all(
        isinstance(use.operation, tensor.InsertSliceOp)
        for use in view.operands[0].uses
        if use.operation is not view
    )


def _located(new: Operation, old: Operation) -> Operation:
    """`new`, which replaces `old`, at `old`'s location."""
    new.location = old.location
    return new


def _first_user_in_block(op: Operation) -> Operation:
    """The first op of `op`'s block that uses one of its results (itself, or an op whose
    regions hold the use); `op` when nothing uses it."""
    block = op.parent_block()
    users = set()
    for result in op.results:
        for use in result.uses:
            users.add(block.find_ancestor_op_in_block(use.operation))
    return next((candidate for candidate in block.ops if candidate in users), op)


def _inside_loop(op: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        if isinstance(parent, scf.ForOp):
            return True
        parent = parent.parent_op()
    return False


def _inits(op: Operation) -> Sequence[SSAValue]:
    """The `outs` operands of a destination-style linalg op, one per result."""
    if isinstance(op, linalg.BroadcastOp):
        return [op.init]
    assert isinstance(op, abstract_ops.LinalgStructuredOperation)
    return op.outputs


def _is_linalg(op: Operation) -> bool:
    return isinstance(op, abstract_ops.LinalgStructuredOperation | linalg.BroadcastOp)


def _same_slice(view: SSAValue, base: SSAValue, insert: tensor.InsertSliceOp) -> bool:
    """Whether `view` is the subview of `base` that `insert` writes."""
    owner = view.owner
    return (
        isinstance(owner, memref.SubviewOp)
        and owner.source == base
        and owner.static_offsets == insert.static_offsets
        and owner.static_sizes == insert.static_sizes
        and owner.static_strides == insert.static_strides
        and tuple(owner.offsets) == tuple(insert.offsets)
    )


def _disjoint(a: tensor.InsertSliceOp, b: tensor.InsertSliceOp) -> bool:
    """Whether two static insert_slices write no element in common."""
    boxes = []
    for op in (a, b):
        offsets, sizes, steps = (
            attr.get_values() for attr in (op.static_offsets, op.static_sizes, op.static_strides)
        )
        if DYNAMIC_INDEX in (*offsets, *sizes, *steps):
            return False
        boxes.append([(o, o + (n - 1) * s) for o, n, s in zip(offsets, sizes, steps)])
    return any(hi_a < lo_b or hi_b < lo_a for (lo_a, hi_a), (lo_b, hi_b) in zip(*boxes))


def _hoist_insert_destinations(block: Block) -> set[SSAValue]:
    """Moves each `tensor.empty` that `insert_slice`s fill (a concat) to the top of the
    function, so that the parts inserted into it can be computed straight into their
    slices of its buffer (the later destinations first: a concat inserted into another).
    Returns the values of those empties."""
    hoisted = set()
    for op in list(block.ops):
        if (
            isinstance(op, tensor.EmptyOp)
            and not op.operands
            and any(
                isinstance(use.operation, tensor.InsertSliceOp) and use.operation.dest is op.tensor
                for use in op.tensor.uses
            )
        ):
            op.detach()
            block.insert_op_before(op, block.first_op)
            hoisted.add(op.tensor)
    return hoisted


def _pad_value(op: tensor.PadOp) -> float:
    yielded = op.region.block.last_op.operands[0]
    constant = yielded.owner
    if not isinstance(constant, arith.ConstantOp) or not isinstance(
        constant.value, FloatAttr | IntegerAttr
    ):
        raise error_at(op, "tile-to-loop bufferizes tensor.pad with a constant padding value only")
    return float(constant.value.value.data)


def machine_of(module: ModuleOp, machine: str) -> Machine:
    """The machine of the `machine` option, else of the module's `npu.machine`."""
    if not machine:
        attribute = module.attributes.get(MACHINE_ATTR)
        if not isinstance(attribute, StringAttr):
            raise error_at(
                module,
                f"tile-to-loop needs a machine: tile-to-loop{{machine=NAME}} or a module attribute {MACHINE_ATTR}",
            )
        machine = attribute.data
    return load_machine(machine)


def local_limit(machine: Machine) -> int:
    """The most bytes an unplaced (local) buffer outside tile loops may take: half the
    vector space, as the vector tiles of tile-and-fuse (0: no vector space)."""
    spaces = machine.vector.spaces
    return machine.memories[spaces[0]].capacity // 2 if spaces else 0


# --------------------------------------------------------------------------- #
# Destinations: where each tensor would best be computed (a backward walk)
# --------------------------------------------------------------------------- #


@dataclass
class _Bufferizer:
    """Bufferizes one function: `buffers` maps each tensor value to the memref that holds it."""

    space: str
    module: ModuleOp
    local_bytes: int
    """The largest buffer of one group outside tile loops that stays local (unplaced)."""
    buffers: dict[SSAValue, SSAValue] = field(default_factory=dict)
    preferred: dict[SSAValue, Dest] = field(default_factory=dict)
    dead: list[Operation] = field(default_factory=list)
    loops: list[tuple[scf.ForOp, list[BlockArgument]]] = field(default_factory=list)
    tensor_args: list[BlockArgument] = field(default_factory=list)
    outputs: list[BlockArgument] = field(default_factory=list)
    concats: set[SSAValue] = field(default_factory=set)
    """Concat destinations: whole tensors that no tile loop covers, so never local."""
    declared: dict[BlockArgument, Attribute] = field(default_factory=dict)
    """Arguments whose memref holds signless integers for a signed or unsigned tensor: the
    element type the function's caller reads and writes (`loop.ABI_ELEMENT_TYPE`)."""

    # -- destinations -------------------------------------------------------

    def _prefer(self, value: SSAValue, dest: Dest) -> None:
        if isinstance(value.type, TensorType) and value not in self.preferred:
            self.preferred[value] = dest

    def _propagate(self, block: Block) -> None:
        """Walks `block` backwards and passes each value's destination on to the value it is computed in."""
        for op in reversed(list(block.ops)):
            if _is_linalg(op):
                for result, init in zip(op.results, _inits(op)):
                    if result in self.preferred and init.has_one_use():
                        self._prefer(init, self.preferred[result])
            elif isinstance(op, tensor.InsertSliceOp):
                if op.result in self.preferred and op.dest.has_one_use():
                    self._prefer(op.dest, self.preferred[op.result])
                if op.source.has_one_use() and op.dest.has_one_use():
                    self._prefer(op.source, self._slice_of(op))
            elif isinstance(op, tensor.CollapseShapeOp | tensor.ExpandShapeOp):
                if op.result in self.preferred and op.src.has_one_use():
                    self._prefer(op.src, self._as_source(op))
            elif isinstance(op, tile.BitcastOp):  # the same buffer, read another way
                if op.result in self.preferred and op.source.has_one_use():
                    self._prefer(op.source, self.preferred[op.result])
            elif isinstance(op, scf.ForOp):
                self._propagate_loop(op)

    def _propagate_loop(self, op: scf.ForOp) -> None:
        yielded = op.body.block.last_op.operands
        for result, init, arg, value in zip(
            op.results, op.iter_args, op.body.block.args[1:], yielded
        ):
            if not isinstance(result.type, TensorType):
                continue
            if result in self.preferred and init.has_one_use():
                self._prefer(init, self.preferred[result])
            if value is not arg:
                self._prefer(value, self._same_as(arg))
        self._propagate(op.body.block)

    def _as_source(self, reshape: tensor.CollapseShapeOp | tensor.ExpandShapeOp) -> Dest:
        """The destination of a reshape's result, viewed in the shape of its source by the
        inverse reshape: a collapse's (a grouped conv's (g, og) output) and an expansion's (a
        reduction's kept dims reinserted) source is computed straight into the function's
        result, not into a buffer of its own copied there after."""
        dest = self.preferred[reshape.result]

        def make(at: Operation) -> SSAValue | None:
            buffer = dest(at)
            if buffer is None or not isinstance(buffer.type.layout, NoneAttr):
                return None
            source_type = _static_tensor(reshape.src, at)
            view_type = MemRefType(
                source_type.get_element_type(),
                source_type.get_shape(),
                NoneAttr(),
                buffer.type.memory_space,
            )
            properties: dict[str, Attribute] = {"reassociation": reshape.reassociation}
            if isinstance(reshape, tensor.CollapseShapeOp):
                properties["static_output_shape"] = DenseArrayBase.from_list(
                    i64, source_type.get_shape()
                )
                view = memref.ExpandShapeOp.create(
                    operands=[buffer], result_types=[view_type], properties=properties
                )
            else:
                view = memref.CollapseShapeOp.create(
                    operands=[buffer], result_types=[view_type], properties=properties
                )
            return self._insert(view, at)

        return make

    def _same_as(self, value: SSAValue) -> Dest:
        return lambda at: self.buffers.get(value)

    def _slice_of(self, insert: tensor.InsertSliceOp) -> Dest:
        def make(at: Operation) -> SSAValue | None:
            base = self._insert_base(insert)
            if base is None or not all(_dominates(v, at) for v in (base, *insert.offsets)):
                return None
            return self._subview(base, insert, at)

        return make

    def _insert_base(self, insert: tensor.InsertSliceOp) -> SSAValue | None:
        """The buffer `insert` will write into. Before the inserts into its destination
        are converted, it is the buffer they all write in place (a concat's), when
        they write other elements than `insert` does."""
        dest = insert.dest
        while dest not in self.buffers and isinstance(dest.owner, tensor.InsertSliceOp):
            if not dest.has_one_use() or not _disjoint(dest.owner, insert):
                return None
            dest = dest.owner.dest
        base = self.buffers.get(dest)
        if dest is not insert.dest and (
            base is None or not dest.has_one_use() or self._read_only(base)
        ):
            return None
        return base

    # -- buffers ------------------------------------------------------------

    def _insert(self, op: Operation, at: Operation) -> SSAValue | None:
        locate(op, at.location)
        Rewriter.insert_op(op, InsertPoint.before(at))
        return op.results[0] if op.results else None

    def _copy(self, source: SSAValue, destination: SSAValue, at: Operation) -> None:
        self._insert(loop.CopyOp(source, destination), at)

    def _subview(
        self, base: SSAValue, slice_op: tensor.ExtractSliceOp | tensor.InsertSliceOp, at: Operation
    ) -> SSAValue:
        """The subview of `base` that `slice_op` reads or writes, rank-reduced as its slice is."""
        offsets = slice_op.static_offsets.get_values()
        sizes = slice_op.static_sizes.get_values()
        steps = slice_op.static_strides.get_values()
        if DYNAMIC_INDEX in sizes or DYNAMIC_INDEX in steps:
            raise error_at(
                slice_op, f"tile-to-loop needs static slice sizes and strides in '{slice_op.name}'"
            )
        sliced = slice_op.result if isinstance(slice_op, tensor.ExtractSliceOp) else slice_op.source
        result_type = _subview_type(base.type, offsets, sizes, steps, sliced.type.get_shape())
        view = memref.SubviewOp(base, slice_op.offsets, [], [], offsets, sizes, steps, result_type)
        return self._insert(view, at)

    def _place(self, value: SSAValue, at: Operation) -> SSAValue:
        """A buffer for `value`: its preferred destination when that can be made here, else a new alloc."""
        tensor_type = _static_tensor(value, at)
        dest = self.preferred.get(value)
        buffer = dest(at) if dest is not None else None
        if (
            buffer is not None
            and buffer.type.get_shape() == tensor_type.get_shape()
            and (buffer.type.get_element_type() == tensor_type.get_element_type())
        ):
            return buffer
        size = (
            math.prod(tensor_type.get_shape())
            * to_numpy_dtype(tensor_type.get_element_type()).itemsize
        )
        one_tile = size <= self.local_bytes and value not in self.concats
        local = _inside_loop(at) or (_within_one_group(value) and one_tile)
        space = None if local else self.space
        return self._insert(memref.AllocOp([], [], _memref(tensor_type, space)), at)

    def _read_only(self, buffer: SSAValue) -> bool:
        while isinstance(
            buffer.owner, memref.SubviewOp | memref.CollapseShapeOp | memref.ExpandShapeOp
        ):
            buffer = buffer.owner.operands[0]
        return isinstance(buffer.owner, memref.GetGlobalOp) or (
            isinstance(buffer, BlockArgument)
            and isinstance(buffer.block.parent_op(), func.FuncOp)
            and buffer not in self.outputs
        )

    def _consumed(self, value: SSAValue, writer: Operation | None = None) -> bool:
        """Whether the buffer of `value` may be overwritten: no one reads `value` again, nor the
        tensor it is a view of (except by inserting into it). Reads by `writer` of each element
        where it writes it do not count (`acc = acc + x` updates `acc` in place)."""
        uses = [use for use in value.uses if not _reads_where_written(use, writer)]
        if len(uses) != 1 or self._read_only(self.buffers[value]):
            return False
        owner = value.owner
        if not isinstance(owner, VIEW_OPS):
            return True
        return _only_inserted_besides(owner) and self._consumed_source(owner)

    def _consumed_source(self, view: Operation) -> bool:
        """Whether what `view` looks into may be overwritten, up its chain of views: no view
        above it has a reader besides the chain (a channel slice of LRN's padded squares
        overlaps the other slices, which still read it)."""
        source = view.operands[0]
        if self._read_only(self.buffers[source]):
            return False
        parent = source.owner
        if not isinstance(parent, VIEW_OPS):
            return True
        return _only_inserted_besides(parent) and self._consumed_source(parent)

    def _writable(self, init: SSAValue, result: SSAValue, op: Operation) -> SSAValue:
        """The buffer `op` writes `result` into, given its `outs` tensor `init`."""
        if self._consumed(init, op):
            return self.buffers[init]
        buffer = self._place(result, op)
        if not isinstance(init.owner, tensor.EmptyOp):
            self._copy(self.buffers[init], buffer, op)
        return buffer

    # -- ops ----------------------------------------------------------------

    def run(self, function: func.FuncOp) -> None:
        block = function.body.block
        results = self._signature(function)
        returned = block.last_op
        assert isinstance(returned, func.ReturnOp)
        for value, result in zip(returned.operands, results):
            if not isinstance(value, BlockArgument):
                self._prefer(value, lambda at, result=result: result)
        self.concats = _hoist_insert_destinations(block)
        self._propagate(block)
        self._convert_block(block)
        for value, result in zip(returned.operands, results):
            if self.buffers[value] is not result:
                self._copy(self.buffers[value], result, returned)
        Rewriter.replace_op(returned, _located(func.ReturnOp(), returned))
        for op in reversed(self.dead):
            Rewriter.erase_op(op, safe_erase=not all(_only_detached_users(r) for r in op.results))
        for new_loop, args in self.loops:
            for arg in args:
                new_loop.body.block.erase_arg(arg, safe_erase=not _only_detached_users(arg))
        for arg in self.tensor_args:
            block.erase_arg(arg, safe_erase=not _only_detached_users(arg))
        function.function_type = func.FunctionType.from_lists([a.type for a in block.args], [])
        self._argument_attributes(function)

    def _signature(self, function: func.FuncOp) -> list[BlockArgument]:
        """Arguments to global memrefs, results to appended `%result<i>` arguments."""
        block = function.body.block
        for arg in block.args:
            if isinstance(arg.type, TensorType):
                tensor_type = _static_tensor(arg, function)
                memref_arg = block.insert_arg(
                    _memref(_signless_tensor(tensor_type), self.space), arg.index
                )
                memref_arg.name_hint = arg.name_hint
                self._declare(memref_arg, tensor_type)
                self.buffers[arg] = memref_arg
                self.tensor_args.append(arg)  # dropped once its users are gone
        for index, result_type in enumerate(function.function_type.outputs.data):
            if not isinstance(result_type, TensorType):
                raise error_at(function, f"tile-to-loop returns tensors only, got {result_type}")
            arg = block.insert_arg(
                _memref(_signless_tensor(result_type), self.space), len(block.args)
            )
            arg.name_hint = loop.output_argument_name(index)
            self._declare(arg, result_type)
            self.outputs.append(arg)
        return self.outputs

    def _declare(self, arg: BlockArgument, tensor_type: TensorType) -> None:
        element_type = tensor_type.get_element_type()
        if not is_signless(element_type):
            self.declared[arg] = element_type

    def _argument_attributes(self, function: func.FuncOp) -> None:
        """Each argument whose memref is signless for a signed or unsigned tensor says which
        (`loop.ABI_ELEMENT_TYPE`), so that callers read and write its bytes as that type."""
        if not self.declared:
            return
        function.arg_attrs = ArrayAttr(
            [
                DictionaryAttr(
                    {loop.ABI_ELEMENT_TYPE: self.declared[arg]} if arg in self.declared else {}
                )
                for arg in function.body.block.args
            ]
        )

    def _bitcast(self, op: tile.BitcastOp) -> None:
        """Integers of one width read as signed, unsigned or signless: the same buffer (buffers hold
        signless integers, as arith computes on them)."""
        source, target = op.source.type.get_element_type(), op.result.type.get_element_type()
        if signless(source) != signless(target):
            raise error_at(op, f"tile-to-loop cannot bufferize a bitcast from {source} to {target}")
        self.buffers[op.result] = self.buffers[op.source]
        self.dead.append(op)

    def _convert_block(self, block: Block) -> None:
        for op in list(block.ops):
            self._convert(op)

    def _convert(self, op: Operation) -> None:
        handler = _HANDLERS.get(type(op))
        if handler is None and _is_linalg(op):
            handler = _Bufferizer._linalg
        if handler is not None:
            handler(self, op)
            return
        if isinstance(op, func.ReturnOp | scf.YieldOp):
            return
        if any(isinstance(v.type, TensorType) for v in (*op.operands, *op.results)):
            raise error_at(op, f"tile-to-loop cannot bufferize '{op.name}'")

    def _empty(self, op: tensor.EmptyOp) -> None:
        self.buffers[op.tensor] = self._place(op.tensor, op)
        self.dead.append(op)

    def _constant(self, op: arith.ConstantOp) -> None:
        if not isinstance(op.result.type, TensorType):
            return
        value = op.value
        assert isinstance(value, DenseIntOrFPElementsAttr)
        tensor_type = _static_tensor(op.result, op)
        # A splat outside tile loops is a whole tensor (e.g. the weights of a model
        # exported with ConstantOfShape); filling it would need it in the vector
        # unit's memory at once, so it is a global like any other constant.
        if is_splat(value) and (_inside_loop(op) or _within_one_group(op.result)):
            # Filled where it is first used: constants sit at the top of the function,
            # and a buffer filled there would stay live (and take space) until that use.
            at = _first_user_in_block(op)
            buffer = self._place(op.result, at)
            scalar = self._insert(arith.ConstantOp(value.get_attrs()[0]), at)
            self._insert(linalg.FillOp((scalar,), (buffer,), ()), at)
        else:
            buffer = self._insert(
                memref.GetGlobalOp(
                    self._global(value, tensor_type), _memref(tensor_type, self.space)
                ),
                op,
            )
        self.buffers[op.result] = buffer
        self.dead.append(op)

    def _global(self, value: DenseIntOrFPElementsAttr, tensor_type: TensorType) -> str:
        names = {o.sym_name.data for o in self.module.ops if isinstance(o, memref.GlobalOp)}
        name = next(f"constant{i}" for i in range(len(names) + 1) if f"constant{i}" not in names)
        declaration = memref.GlobalOp.get(
            StringAttr(name), _memref(tensor_type, self.space), value, constant=UnitAttr()
        )
        self.module.body.block.insert_op_before(declaration, self.module.body.block.first_op)
        return name

    def _linalg(self, op: Operation) -> None:
        inits = list(_inits(op))
        outputs = [
            self._overwritable_input(op, init, result) or self._writable(init, result, op)
            for init, result in zip(inits, op.results)
        ]
        inputs = [self.buffers.get(v, v) for v in op.operands[: len(op.operands) - len(inits)]]
        for region in op.regions:
            self._convert_extracts(region.block)
        new = type(op).create(
            operands=[*inputs, *outputs],
            result_types=[],
            properties=dict(op.properties),
            attributes=dict(op.attributes),
            regions=[op.detach_region(region) for region in list(op.regions)],
        )
        self._insert(new, op)
        for result, buffer in zip(op.results, outputs):
            self.buffers[result] = buffer
        self.dead.append(op)

    def _overwritable_input(
        self, op: Operation, init: SSAValue, result: SSAValue
    ) -> SSAValue | None:
        """The buffer of an input that an elementwise generic can overwrite instead of the new
        alloc of its `tensor.empty` outs: same type as the result, read where the result is
        written, and read by no one else. The alloc is dropped."""
        if not isinstance(op, linalg.GenericOp) or len(op.outputs) != 1 or init in self.preferred:
            return None
        fresh = self.buffers.get(init)
        if (
            not isinstance(init.owner, tensor.EmptyOp)
            or not isinstance(fresh.owner, memref.AllocOp)
            or list(fresh.uses)
        ):
            return None
        if any(iterator.data != IteratorType.PARALLEL for iterator in op.iterator_types.data):
            return None
        maps = op.indexing_maps.data
        for value, indexing in zip(op.inputs, maps):
            if (
                value.type == result.type
                and indexing == maps[-1]
                and value in self.buffers
                and self.buffers[value].type.memory_space == fresh.type.memory_space
                and self._consumed(value)
            ):
                Rewriter.erase_op(fresh.owner)
                return self.buffers[value]
        return None

    def _convert_extracts(self, block: Block) -> None:
        """`tensor.extract` of an outer tensor in a generic body reads its buffer."""
        for body_op in list(block.ops):
            if isinstance(body_op, tensor.ExtractOp):
                self._extract(body_op)

    def _extract(self, op: tensor.ExtractOp) -> None:
        load = memref.LoadOp.get(self.buffers[op.tensor], op.indices)
        Rewriter.replace_op(op, load)

    def _extract_slice(self, op: tensor.ExtractSliceOp) -> None:
        _static_tensor(op.result, op)
        self.buffers[op.result] = self._subview(self.buffers[op.source], op, op)
        self.dead.append(op)

    def _insert_slice(self, op: tensor.InsertSliceOp) -> None:
        _static_tensor(op.result, op)
        source = self.buffers[op.source]
        if self._consumed(op.dest):
            target = self.buffers[op.dest]
        else:
            target = self._place(op.result, op)
            self._copy(self.buffers[op.dest], target, op)
        if not _same_slice(source, target, op):
            self._copy(source, self._subview(target, op, op), op)
        self.buffers[op.result] = target
        self.dead.append(op)

    def _pad(self, op: tensor.PadOp) -> None:
        if op.low or op.high:
            raise error_at(op, "tile-to-loop needs static padding in tensor.pad")
        buffer = self._place(op.result, op)
        pads = [
            p for pair in zip(op.static_low.get_values(), op.static_high.get_values()) for p in pair
        ]
        self._insert(
            loop.CopyOp(self.buffers[op.source], buffer, pad=pads, pad_value=_pad_value(op)), op
        )
        self.buffers[op.result] = buffer
        self.dead.append(op)

    def _reshape(self, op: tensor.CollapseShapeOp | tensor.ExpandShapeOp) -> None:
        result_type = _static_tensor(op.result, op)
        source = self.buffers[op.src]
        undone = source.owner
        inverse = (
            memref.ExpandShapeOp
            if isinstance(op, tensor.CollapseShapeOp)
            else memref.CollapseShapeOp
        )
        if (
            isinstance(undone, inverse)
            and undone.reassociation == op.reassociation
            and undone.src.type.get_shape() == result_type.get_shape()
        ):
            self.buffers[op.result] = undone.src  # a reshape that undoes the view of this buffer
            self.dead.append(op)
            return
        if not isinstance(source.type.layout, NoneAttr):
            contiguous = self._insert(
                memref.AllocOp([], [], _memref(_static_tensor(op.src, op), self._space_at(op))), op
            )
            self._copy(source, contiguous, op)
            source = contiguous
        view_type = MemRefType(
            result_type.get_element_type(),
            result_type.get_shape(),
            NoneAttr(),
            source.type.memory_space,
        )
        if isinstance(op, tensor.CollapseShapeOp):
            view = memref.CollapseShapeOp.create(
                operands=[source],
                result_types=[view_type],
                properties={"reassociation": op.reassociation},
            )
        else:
            view = memref.ExpandShapeOp.create(
                operands=[source],
                result_types=[view_type],
                properties={
                    "reassociation": op.reassociation,
                    "static_output_shape": op.static_output_shape,
                },
            )
        self.buffers[op.result] = self._insert(view, op)
        self.dead.append(op)

    def _space_at(self, op: Operation) -> str | None:
        return None if _inside_loop(op) else self.space

    def _for(self, op: scf.ForOp) -> None:
        block = op.body.block
        tensor_args = [arg for arg in block.args[1:] if isinstance(arg.type, TensorType)]
        for init, arg, result in zip(op.iter_args, block.args[1:], op.results):
            if isinstance(arg.type, TensorType):
                self.buffers[arg] = self._writable(init, result, op)
        self._convert_block(block)
        yield_op = block.last_op
        assert isinstance(yield_op, scf.YieldOp)
        kept = []
        for value, arg in zip(yield_op.operands, block.args[1:]):
            if not isinstance(arg.type, TensorType):
                kept.append(value)
            elif self.buffers[value] is not self.buffers[arg]:
                self._copy(self.buffers[value], self.buffers[arg], yield_op)
        Rewriter.replace_op(yield_op, _located(scf.YieldOp(*kept), yield_op))
        scalar_inits = [v for v in op.iter_args if not isinstance(v.type, TensorType)]
        new = _located(
            scf.ForOp(op.lb, op.ub, op.step, scalar_inits, op.detach_region(op.body)), op
        )
        Rewriter.insert_op(new, InsertPoint.before(op))
        scalar_results = iter(new.results)
        for arg, result in zip(block.args[1:], op.results):
            if isinstance(arg.type, TensorType):
                self.buffers[result] = self.buffers[arg]
            else:
                result.replace_by(next(scalar_results))
        self.loops.append((new, tensor_args))
        self.dead.append(op)


_HANDLERS: dict[type[Operation], Callable[[_Bufferizer, Operation], None]] = {
    tensor.EmptyOp: _Bufferizer._empty,
    arith.ConstantOp: _Bufferizer._constant,
    tensor.ExtractSliceOp: _Bufferizer._extract_slice,
    tensor.InsertSliceOp: _Bufferizer._insert_slice,
    tensor.PadOp: _Bufferizer._pad,
    tensor.CollapseShapeOp: _Bufferizer._reshape,
    tensor.ExpandShapeOp: _Bufferizer._reshape,
    tensor.ExtractOp: _Bufferizer._extract,
    scf.ForOp: _Bufferizer._for,
    tile.BitcastOp: _Bufferizer._bitcast,
}


@dataclass(frozen=True)
class TileToLoopPass(ModulePass):
    """Bufferize every function of the module.

    * function arguments become memrefs in the machine's global space; each result
      becomes one more argument `%result<i>` after the inputs (destination-passing
      style) and the function returns nothing;
    * `tensor.empty` becomes `memref.alloc`: unplaced (no memory space) inside tile
      loops or within one fusion group that fits one tile, in the global space
      otherwise, unless its value ends up somewhere known (a `%result<i>`, the
      slice an `insert_slice` writes), which the op then computes straight into;
    * `tensor.extract_slice` becomes `memref.subview`; an `insert_slice` of a value
      computed into its slice is elided, else it is a `loop.copy`; a concat's
      `tensor.empty` moves to the top of the function so that its parts are
      computed into their slices;
    * `tensor.pad` becomes `loop.copy {pad, pad_value}` into a new buffer;
      `collapse_shape`/`expand_shape` become memref views (of a row-major copy of a
      strided source); `tensor.extract` becomes `memref.load`;
    * `scf.for` keeps its iter_args only for non-tensor values: a tensor iter_arg
      is one buffer updated in place;
    * a splat tensor constant inside a tile loop or one group becomes an alloc
      filled by `linalg.fill`, any other a read-only `memref.global` in the global
      space.

    A linalg op writes its `outs` in place when no one reads that tensor afterwards
    and it is not a function input, a constant or a view of a tensor read
    elsewhere; otherwise into a fresh buffer. An elementwise generic whose `outs`
    would be a new buffer overwrites an input of the result's type that no one else
    reads (`relu(truncf(acc))` needs one buffer, not two). The machine is the
    `machine` option, else the module's `npu.machine`. Dynamic shapes are refused.

        func.func @f(%a: tensor<64x32xf32>) -> tensor<64x32xf32> {
          %e = tensor.empty() : tensor<64x32xf32>
          %r = linalg.generic {relu} ins(%a : ...) outs(%e : ...) -> tensor<64x32xf32>
          func.return %r : tensor<64x32xf32>
        }

    becomes

        func.func @f(%a: memref<64x32xf32, "gm">, %result0: memref<64x32xf32, "gm">) {
          linalg.generic {relu} ins(%a : ...) outs(%result0 : ...)
          func.return
        }
    """

    name = "tile-to-loop"

    machine: str = ""
    """A preset name or machine TOML file; default: the module's `npu.machine` attribute."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        machine = machine_of(op, self.machine)
        for function in [f for f in op.ops if isinstance(f, func.FuncOp)]:
            _bufferize(function, machine, op)


def _bufferize(function: func.FuncOp, machine: Machine, module: ModuleOp) -> None:
    if not function.body.blocks:
        raise error_at(
            function, "tile-to-loop bufferizes function definitions only, not declarations"
        )
    _Bufferizer(machine.global_memory().name, module, local_limit(machine)).run(function)
