"""Kernels: each fusion group of a graph-level model lowered on its own, as a function that the npu
program's @main calls: `ziggurat-compile`'s npu code (docs/lowering.md, "Kernels").

A model repeats its layers (the light ResNet-50's 59 groups are 30 distinct ones), so lowering
each group once and calling it wherever it recurs makes the compile's work proportional to what
is distinct, as IREE's dispatch regions are outlined into executables and deduplicated. After
`graph-opt`, `outline` takes every group of @main (a `graph.fused` or a lone graph op; views are
not groups, `find_views`) out as a module of its own, its constants with it, and keys it by its
IR with the weights left out: groups that differ only in their weights share a key.
`lower_kernels` lowers one module per key through `lower-to-npu` (in worker processes with
`jobs` > 1, and read from or written to an on-disk `KernelCache`), and `assemble` builds the
npu program:

    func.func private @conv2d_relu_94c18d83cb(%0: memref<..., "gm">,
        %result0: memref<..., "gm">, %w0: memref<..., "gm">) { ...npu instructions... }
    func.func @main(%x: memref<..., "gm">, %result0: memref<..., "gm">) {
      %1 = npu.buffer offset 4064 : memref<..., "gm">    // an activation between kernels
      %7 = memref.get_global @weight0 : memref<..., "gm">
      func.call @conv2d_relu_94c18d83cb(%0, %1, %7) : (...) -> ()
      ...
    }

A kernel takes its group's inputs, then its results (destination-passing, as @main), then its
weights, which stay globals of the module, one per layer. A kernel is shared only where the lowered
kernel reads each weight unchanged (as a global with the weight's values, at most narrowed to the
type it is read in); otherwise each group with that key is lowered with its own weights. Each
kernel's global scratch starts at offset 0, the same bytes for every kernel, as kernels run one
after another; the activations between kernels are planned above the largest scratch, first fit
by live range. The interpreter runs a call as a kernel launch (`run_npu`).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from io import StringIO
from pathlib import Path

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    LocationAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    UnknownLoc,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass

from ziggurat.context import default_context
from ziggurat.diagnostics import Diagnostic, DiagnosticError, error_at
from ziggurat.dialects import graph, npu
from ziggurat.dialects.loop import output_argument_name
from ziggurat.dtypes import is_splat, to_numpy_dtype
from ziggurat.ir.useful_work import USEFUL_MACS_ATTR
from ziggurat.locations import locate
from ziggurat.machine import Machine
from ziggurat.parsing import parse_source
from ziggurat.printing import Printer
from ziggurat.timing_report import timed
from ziggurat.transforms.tile.fit import DoesNotFit, apply_passes
from ziggurat.verifier import verify_module

INTEGER_WEIGHT_ELEMENTS = 64
"""Integer constants of more elements (not splats) are weights; smaller ones may be shapes, which
decide the lowering, so they stay in the kernel and its key. Every non-splat float constant of
several elements is a weight (a bias, a per-channel scale)."""


# --------------------------------------------------------------------------- #
# One group alone
# --------------------------------------------------------------------------- #


def is_group(op: Operation) -> bool:
    """A top-level op of a function after `graph-fuse` that lowers to code: a `graph.fused`, or a
    graph op with operands (constants are not groups: their users take them in)."""
    return op.name == "graph.fused" or (
        op.name.startswith("graph.") and op.name != "graph.yield" and bool(op.operands)
    )


def extract_group(
    op: Operation,
    copied_in: Callable[[SSAValue], bool],
    narrowed: frozenset[SSAValue] = frozenset(),
    reshaped: Mapping[SSAValue, Attribute] | None = None,
) -> ModuleOp:
    """`op` (a group, `is_group`) alone in `@main`: the producers of the operands `copied_in`
    accepts are copied in, every other operand is an argument, in the order `op` first reads it.
    A value in `narrowed` (`narrow_widenings`) crosses as the narrow integers its producer
    widens last: `op` returns those if it produces it, and widens them first if it reads it.
    A value in `reshaped` (`reshaped_inputs`) is an argument of the shape `op` reshapes it to
    first, and that reshape is dropped: the caller passes the same bytes in that shape."""
    reshaped = reshaped or {}
    arguments: list[SSAValue] = []
    copied: list[Operation] = []
    for operand in op.operands:
        if copied_in(operand):
            producer = operand.owner
            if producer not in copied:
                copied.append(producer)
        elif operand not in arguments:
            arguments.append(operand)
    function = func.FuncOp(
        "main",
        (
            [_narrow_type(a) if a in narrowed else reshaped.get(a, a.type) for a in arguments],
            [_narrow_type(r) if r in narrowed else r.type for r in op.results],
        ),
    )
    block = function.body.block
    mapping: dict[SSAValue, SSAValue] = {}
    for value, argument in zip(arguments, block.args):
        if value in narrowed:
            widen = graph.CastOp(argument, value.type)
            block.add_op(widen)
            argument = widen.results[0]
        mapping[value] = argument
    for producer in copied:
        clone = producer.clone()
        block.add_op(clone)
        mapping.update(zip(producer.results, clone.results))
    clone = op.clone(value_mapper=dict(mapping))
    for index, operand in enumerate(op.operands):
        if operand in reshaped:
            _drop_leading_reshape(clone, index)
    if any(r in narrowed for r in op.results):
        clone = _returning_narrow(clone)
    block.add_op(clone)
    block.add_op(func.ReturnOp(*clone.results))
    return ModuleOp([function])


def reshaped_inputs(group: Operation) -> dict[int, Attribute]:
    """Per operand of a `graph.fused` that its body only reshapes (its one use a reshape,
    flatten, squeeze or unsqueeze of static shape), the type it is reshaped to. As a kernel's
    argument in that shape (the same bytes, row-major), the kernel does not reshape a buffer it
    does not own, which the lowering folds only into the producer's own loops."""
    if not isinstance(group, graph.FusedOp):
        return {}
    found: dict[int, Attribute] = {}
    for index, (operand, arg) in enumerate(zip(group.operands, group.body.block.args)):
        uses = list(arg.uses)
        if len(uses) != 1 or list(group.operands).count(operand) != 1:
            continue
        reshape = uses[0].operation
        result_type = reshape.results[0].type if reshape.results else None
        if isinstance(reshape, _RESHAPES) and isinstance(result_type, TensorType):
            if result_type.has_static_shape():
                found[index] = result_type
    return found


def _drop_leading_reshape(group: Operation, index: int) -> None:
    """In `group` (a clone whose operand `index` already has the reshaped type), the body's
    argument takes that type and its reshape is dropped."""
    block = group.body.block
    old = block.args[index]
    reshape = next(iter(old.uses)).operation
    new = block.insert_arg(group.operands[index].type, index)
    new.name_hint = old.name_hint
    reshape.results[0].replace_all_uses_with(new)
    reshape.detach()
    reshape.erase()
    block.erase_arg(old)


def _widened(value: SSAValue) -> SSAValue | None:
    """The narrow integers (at most 8 bits) that `value` widens, if it is a lone `graph.cast` that
    widens them or the result of a `graph.fused` that widens them last."""
    cast = value.owner
    if isinstance(cast, graph.FusedOp):
        last = cast.body.block.last_op
        if len(cast.results) != 1 or last is None or not last.operands:
            return None
        cast = last.operands[0].owner
    if not isinstance(cast, graph.CastOp):
        return None
    narrow, wide = cast.operands[0].type.get_element_type(), value.type.get_element_type()
    if not (isinstance(narrow, IntegerType) and isinstance(wide, IntegerType)):
        return None
    return cast.operands[0] if narrow.width.data <= 8 < wide.width.data else None


def _narrow_type(value: SSAValue) -> Attribute:
    narrow = _widened(value)
    assert narrow is not None
    return narrow.type


def _returning_narrow(group: Operation) -> Operation:
    """`group` (a `graph.fused` whose one result it widens last) yielding the narrow value."""
    terminator = group.body.block.last_op
    cast = terminator.operands[0].owner
    terminator.operands = [cast.operands[0]]
    narrowed = type(group).create(
        operands=list(group.operands),
        result_types=[cast.operands[0].type],
        properties=dict(group.properties),
        attributes=dict(group.attributes),
        regions=[group.detach_region(region) for region in list(group.regions)],
    )
    if not cast.results[0].uses:
        cast.detach()
        cast.erase()
    return narrowed


def narrow_widenings(function: func.FuncOp) -> frozenset[SSAValue]:
    """The results of groups of `function` that widen 8-bit integers (last, or as a lone cast: an
    int8 QDQ model's quantized activations, widened for the convolution that reads them) and
    that only other groups read: they cross between kernels as the narrow integers, as
    `graph-to-tile` has a contraction read them in one program, and each reader widens them
    itself. A lone cast is then no kernel (`find_views`)."""
    returned = set(function.body.block.last_op.operands)
    return frozenset(
        value
        for op in function.body.block.ops
        if is_group(op)
        for value in op.results
        if _widened(value) is not None
        and value not in returned
        and all(is_group(use.operation) for use in value.uses)
    )


def printed(op: Operation, generic: bool = False) -> str:
    stream = StringIO()
    Printer(stream=stream, print_generic_format=generic).print_op(op)
    return stream.getvalue()


def without_ids_and_locations(module: ModuleOp, drop: Sequence[str] = ()) -> str:
    """The IR a key hashes: the same group anywhere in any model prints the same (value names
    and the attributes `drop` names left out; locations are not printed)."""
    copy = module.clone()
    for op in copy.walk():
        for name in drop:
            op.attributes.pop(name, None)
        for value in (
            *op.results,
            *(arg for region in op.regions for block in region.blocks for arg in block.args),
        ):
            value.name_hint = None
    return printed(copy)


def _is_constant(value: SSAValue) -> bool:
    return isinstance(value.owner, graph.ConstantOp)


def _is_weight(value: SSAValue) -> bool:
    owner = value.owner
    if not isinstance(owner, graph.ConstantOp):
        return False
    elements = math.prod(owner.output.type.get_shape())
    if isinstance(owner.output.type.get_element_type(), IntegerType | IndexType):
        small = elements <= INTEGER_WEIGHT_ELEMENTS
    else:
        small = elements <= 1
    return not small and not is_splat(owner.value)


# --------------------------------------------------------------------------- #
# Views
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class View:
    """A group that only reinterprets bytes another group wrote (a reshape, a slice of
    contiguous rows): no kernel, its result is a buffer at those bytes. A lone cast that widens
    8-bit integers for kernels that read them narrow (`narrow_widenings`) is one too: its readers
    get its source."""

    source: SSAValue
    """The value it views: a kernel's result, or another view."""
    element_offset: int
    """Where its first element lies in `source`, in elements."""


_RESHAPES = (graph.ReshapeOp, graph.FlattenOp, graph.SqueezeOp, graph.UnsqueezeOp)


def view_offset(op: Operation) -> int | None:
    """The element of its input where `op`'s result starts, if the result is a row-major
    contiguous part of the input (a reshape; a slice whose rows are contiguous); else None."""
    if isinstance(op, _RESHAPES):
        return 0
    if not isinstance(op, graph.SliceOp):
        return None
    shape = list(op.operands[0].type.get_shape())
    ranges = []
    for dim, part in zip(shape, graph.SliceOp.slices(shape, op.properties)):
        if part.step not in (None, 1):
            return None
        start, stop, _ = part.indices(dim)
        ranges.append((start, max(stop, start)))
    partial = [d for d, (start, stop) in enumerate(ranges) if (start, stop) != (0, shape[d])]
    last = partial[-1] if partial else 0
    if any(stop - start != 1 for start, stop in ranges[:last]):
        return None
    strides = [math.prod(shape[d + 1 :]) for d in range(len(shape))]
    return sum(start * stride for (start, _), stride in zip(ranges, strides))


def find_views(
    function: func.FuncOp, narrowed: frozenset[SSAValue], alignment: int
) -> dict[SSAValue, View]:
    """The groups of `function` that `assemble` makes views (`View`): a lone view op of static
    shapes over a value another group computes, at an offset of `alignment` bytes, neither read
    as narrowed integers nor returned (@main's results are its arguments, written by kernels)."""
    returned = set(function.body.block.last_op.operands)
    views: dict[SSAValue, View] = {}
    for op in function.body.block.ops:
        if not is_group(op) or len(op.results) != 1 or op.results[0] in returned:
            continue
        source = op.operands[0]
        if isinstance(op, graph.CastOp) and op.results[0] in narrowed:
            views[op.results[0]] = View(source, 0)  # its readers take the narrow integers
            continue
        if source in narrowed or op.results[0] in narrowed:
            continue
        if not isinstance(source.owner, Operation) or not is_group(source.owner):
            continue
        if source in returned:  # @main's result argument, not a buffer it places
            continue
        if not all(
            isinstance(v.type, TensorType) and v.type.has_static_shape()
            for v in (source, op.results[0])
        ):
            continue
        offset = view_offset(op)
        if offset is None:
            continue
        element_bits = source.type.get_element_type().bitwidth
        if (offset * element_bits) % (8 * alignment):
            continue
        views[op.results[0]] = View(source, offset)
    return views


def _root(value: SSAValue, views: dict[SSAValue, View]) -> tuple[SSAValue, int]:
    """The kernel result that `value` views, and the element where it starts in it."""
    offset = 0
    while value in views:
        view = views[value]
        # a view's offset counts elements of its source; reshapes keep the element type
        offset += view.element_offset
        value = view.source
    return value, offset


# --------------------------------------------------------------------------- #
# Outlining
# --------------------------------------------------------------------------- #


class NotKernels(DiagnosticError):
    """The model has what a program of kernels cannot express (a result that no group of its own
    computes, a function besides @main, a group that lowers only with its neighbours, as a
    reshape of one group's output that the whole lowering folds into the next group's loops);
    `ziggurat-compile` then lowers @main whole."""


@dataclass
class Instance:
    """One group of the model, to be a call of its kernel."""

    op: Operation
    """The group in the graph-level @main."""
    inputs: list[SSAValue]
    """Its operands that are not constants: the kernel's first arguments."""
    weights: list[np.ndarray]
    """The values of its weights (`_is_weight`), in the order it reads them."""
    module: ModuleOp
    """The group alone as @main, with all of its constants: what is lowered."""
    key: str
    """The key of its kernel: groups with the same key differ at most in their weights."""
    reshaped: dict[SSAValue, Attribute] = field(default_factory=dict)
    """Inputs the kernel takes in the shape the group reshapes them to (`reshaped_inputs`)."""


def outline(
    function: func.FuncOp,
    salt: str,
    views: dict[SSAValue, View] | None = None,
    narrowed: frozenset[SSAValue] | None = None,
) -> list[Instance]:
    """The groups of `function` (graph level, after `graph-fuse`) in program order, but `views`,
    each alone with its key: a hash of `salt` (what else decides the lowering: the passes and the
    machine), of the group with its weights as arguments, and of each integer weight's range
    (whether it fits in i8, which decides how a contraction reads it). `narrowed`: the values
    that cross as narrow integers (default: `narrow_widenings`)."""
    instances = []
    narrowed = narrow_widenings(function) if narrowed is None else narrowed
    views = views or {}
    returned = set(function.body.block.last_op.operands)
    for op in function.body.block.ops:
        if not is_group(op) or any(r in views for r in op.results):
            continue
        weights = [v for v in dict.fromkeys(op.operands) if _is_weight(v)]
        # an input passed reshaped must be a buffer of @main's: another group's result or a view
        reshaped = {
            op.operands[index]: reshaped_type
            for index, reshaped_type in reshaped_inputs(op).items()
            if isinstance(op.operands[index].owner, Operation)
            and is_group(op.operands[index].owner)
            and op.operands[index] not in narrowed
            and op.operands[index] not in returned
        }
        shape = extract_group(
            op, lambda v: _is_constant(v) and not _is_weight(v), narrowed, reshaped
        )
        values = [v.owner.to_array() for v in weights]
        ranges = [
            bool(a.size and a.min() >= -128 and a.max() <= 127)
            if isinstance(v.type.get_element_type(), IntegerType)
            else None
            for v, a in zip(weights, values)
        ]
        text = f"{salt}\n{ranges}\n{without_ids_and_locations(shape)}"
        instances.append(
            Instance(
                op=op,
                inputs=[v for v in dict.fromkeys(op.operands) if not _is_constant(v)],
                weights=values,
                module=extract_group(op, _is_constant, narrowed, reshaped),
                key=hashlib.sha256(text.encode()).hexdigest()[:20],
                reshaped=reshaped,
            )
        )
    return instances


# --------------------------------------------------------------------------- #
# Lowering the distinct kernels
# --------------------------------------------------------------------------- #


@dataclass
class Kernel:
    """A lowered group as ops of the npu program: its function `@symbol` (the group's inputs, its
    results, then its weights if `shared`) and the globals only it reads (`@symbol_constant0`,
    ...), with what assembling the program needs. Nothing in it depends on the model around the
    group, so the cache keeps it as it is."""

    symbol: str
    text: str
    """The ops, printed as a module prints them (two spaces in)."""
    declaration: str
    """`func.func private @symbol(...)` in the generic form: the signature with its argument
    attributes (`loop.ABI_ELEMENT_TYPE`), no body."""
    shared: bool
    """Whether it takes its weights as arguments: any group of its key can call it. Otherwise its
    weights are its own globals, and only the group it was lowered from calls it."""
    scratch: int
    """Bytes of global memory it uses as scratch, from offset 0 (@main's buffers lie above)."""
    machine: str
    cores: int | None
    useful_macs: dict[str, int]
    module: ModuleOp | None = None
    """The ops themselves, as a module, when it was lowered in this process."""

    def to_json(self) -> str:
        fields = {k: v for k, v in self.__dict__.items() if k != "module"}
        return json.dumps(fields)

    @classmethod
    def from_json(cls, text: str) -> Kernel:
        return cls(**json.loads(text))

    def ops(self, ctx: Context) -> ModuleOp:
        """Its ops in a module of their own (a copy: callers move them)."""
        if self.module is None:
            self.module = parse_source(ctx, f"builtin.module {{\n{self.text}}}", f"<{self.symbol}>")
        return self.module.clone()


def _values_equal(global_value: np.ndarray, weight: np.ndarray) -> bool:
    if global_value.size != weight.size:
        return False
    with np.errstate(invalid="ignore"):
        return bool(
            np.array_equal(
                global_value.reshape(-1).astype(np.float64), weight.reshape(-1).astype(np.float64)
            )
        )


def weight_globals(module: ModuleOp, weights: Sequence[np.ndarray]) -> list[str] | None:
    """Per weight, the one global of the lowered `module` holding its values (at most narrowed),
    or None if a weight has none, or shares its values with another weight (the lowering may
    have merged them)."""
    globals_ = {
        op.sym_name.data: graph.ConstantOp(op.initial_value).to_array()
        for op in module.ops
        if isinstance(op, memref.GlobalOp)
        and isinstance(op.initial_value, DenseIntOrFPElementsAttr)
    }
    names: list[str] = []
    for index, weight in enumerate(weights):
        if any(_values_equal(other, weight) for other in weights[:index]):
            return None
        found = [name for name, value in globals_.items() if _values_equal(value, weight)]
        if len(found) != 1:
            return None
        names.append(found[0])
    return names


@dataclass(frozen=True)
class Job:
    """One group to lower: what a worker process gets."""

    module: str
    """The group alone as @main, printed (`Instance.module`)."""
    weights: list[np.ndarray]
    symbol: str
    passes: tuple[ModulePass, ...]
    global_space: str


def lower_kernel(job: Job, module: ModuleOp | None = None) -> Kernel:
    """Lower one group with `job.passes`, retrying smaller tiles where a buffer does not fit
    (`apply_passes`), make its @main the kernel `job.symbol` and verify it; each pass is a stage
    of `--timing` when it runs in process. `module`: the group's module itself, to lower in place
    of parsing `job.module`."""
    ctx = default_context()
    if module is None:
        module = parse_source(ctx, job.module, f"<{job.symbol}>")

    def run(index: int, one: ModulePass) -> None:
        with timed(one.name):
            one.apply(ctx, module)

    apply_passes(ctx, module, job.passes, run)
    found = weight_globals(module, job.weights)
    entry = _into_kernel(module, job.symbol, found or [])
    with timed("verify"):
        verify_module(module)
    machine = module.attributes.get(npu.MACHINE_ATTR)
    cores = module.attributes.get(npu.CORES_ATTR)
    macs = module.attributes.get(USEFUL_MACS_ATTR)
    scratch = max(
        (
            op.byte_offset + npu.type_bytes(op.result.type)
            for op in module.walk()
            if isinstance(op, npu.BufferOp) and npu.space_of(op.result) == job.global_space
        ),
        default=0,
    )
    declaration = func.FuncOp.external(job.symbol, list(entry.function_type.inputs.data), [])
    declaration.arg_attrs = entry.arg_attrs
    module.attributes.clear()
    with timed("print"):
        text = printed(module)
    return Kernel(
        symbol=job.symbol,
        text=text[text.index("\n") + 1 : text.rindex("}")],
        declaration=printed(declaration, generic=True),  # the custom form drops arg_attrs
        shared=found is not None,
        scratch=scratch,
        machine=machine.data if isinstance(machine, StringAttr) else "",
        cores=cores.value.data if isinstance(cores, IntegerAttr) else None,
        useful_macs={pair: count.value.data for pair, count in macs.data.items()}
        if isinstance(macs, DictionaryAttr)
        else {},
        module=module,
    )


class KernelCache:
    """The compile cache: files in a directory, each named by a hash of its key and of ziggurat's
    sources (`code_digest`), written atomically. It holds lowered kernels (`get`, `put`): a second
    compile of a model, or of another that shares its layers, reads them instead of lowering again;
    and, through `read` and `write`, other decisions a compile can reuse (`--precision auto`'s)."""

    def __init__(self, directory: Path | None):
        self.directory = directory

    def _path(self, key: str) -> Path | None:
        if self.directory is None:
            return None
        entry = hashlib.sha256(f"{key}|{code_digest()}".encode()).hexdigest()[:32]
        return self.directory / f"{entry}.json"

    def read(self, key: str) -> str | None:
        path = self._path(key)
        if path is None or not path.exists():
            return None
        try:
            return path.read_text()
        except OSError:
            return None

    def write(self, key: str, text: str) -> None:
        path = self._path(key)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(text)
        partial.replace(path)  # atomically: a concurrent compile reads a whole entry or none

    def get(self, key: str) -> Kernel | None:
        text = self.read(f"kernel|{key}")
        if text is None:
            return None
        try:
            kernel = Kernel.from_json(text)
        except (ValueError, KeyError, TypeError):
            return None  # a damaged entry is lowered again and rewritten
        return kernel

    def put(self, key: str, kernel: Kernel) -> None:
        self.write(f"kernel|{key}", kernel.to_json())


def _lower_in_worker(job: Job) -> Kernel | None:
    """`lower_kernel` in a worker process, the kernel without its module (the text goes back);
    None where the lowering reports an error, which the parent then meets again in its own
    process, with the group's locations."""
    try:
        kernel = lower_kernel(job)
    except DiagnosticError:
        return None
    kernel.module = None
    return kernel


def kernel_symbol(instance: Instance, key: str) -> str:
    """The kernel's function name: the group's kind and a hash of its key (`conv2d_relu_3fa9c1e2d4`)."""
    op = instance.op
    kind = op.group_name.data if isinstance(op, graph.FusedOp) else op.name.removeprefix("graph.")
    kind = re.sub(r"[^A-Za-z0-9_]", "_", kind)[:40]
    return f"{kind}_{hashlib.sha256(key.encode()).hexdigest()[:10]}"


def lower_kernels(
    instances: Sequence[Instance],
    passes: Sequence[ModulePass],
    global_space: str,
    jobs: int = 1,
    cache: KernelCache | None = None,
) -> dict[str, Kernel]:
    """The kernel of each instance, by `kernel_key`: one lowering per key whose kernel reads its
    weights unchanged, else one per instance; from `cache` where it has them, in `jobs` processes.
    The kernels do not depend on `jobs` or on the cache."""
    cache = cache or KernelCache(None)
    kernels: dict[str, Kernel] = {}
    first: dict[str, Instance] = {}
    for instance in instances:
        first.setdefault(instance.key, instance)
    _lower_all(first, passes, global_space, jobs, cache, kernels)
    # a kernel that does not read its weights unchanged serves only the group it was lowered from
    alone: dict[str, Instance] = {}
    for instance in instances:
        key = kernel_key(instance, kernels)
        if key not in kernels:
            alone.setdefault(key, instance)
    _lower_all(alone, passes, global_space, jobs, cache, kernels)
    return kernels


def _lower_all(
    wanted: dict[str, Instance],
    passes: Sequence[ModulePass],
    global_space: str,
    jobs: int,
    cache: KernelCache,
    kernels: dict[str, Kernel],
) -> None:
    pending: dict[str, Instance] = {}
    for key, instance in wanted.items():
        cached = cache.get(key)
        if cached is not None:
            kernels[key] = cached
        else:
            pending[key] = instance
    parallel = jobs > 1 and len(pending) > 1
    work = [
        Job(
            printed(i.module) if parallel else "",  # what a worker parses
            i.weights,
            kernel_symbol(i, key),
            tuple(passes),
            global_space,
        )
        for key, i in pending.items()
    ]
    lowered: list[Kernel | None] = [None] * len(work)
    if parallel:
        with ProcessPoolExecutor(min(jobs, len(work))) as pool:
            lowered = list(pool.map(_lower_in_worker, work))
    for index, instance in enumerate(pending.values()):
        if lowered[index] is None:
            try:
                lowered[index] = lower_kernel(work[index], instance.module.clone())
            except DoesNotFit:
                raise  # as the whole lowering would: the group's smallest tile does not fit
            except DiagnosticError as error:
                # what only the whole lowering does across groups (a view of one group's
                # output folded into the next group's loops): say so, with the group's error
                first = error.diagnostics[0]
                raise NotKernels(
                    [
                        replace(
                            first,
                            message=f"kernels: a group does not lower on its own: {first.message}",
                        ),
                        *error.diagnostics[1:],
                    ]
                ) from None
    for key, kernel in zip(pending, lowered):
        assert kernel is not None
        kernels[key] = kernel
        cache.put(key, kernel)


def kernel_key(instance: Instance, kernels: dict[str, Kernel]) -> str:
    """The key of the kernel `instance` calls: its own key where that kernel is shared, else its
    key with a hash of its weights."""
    shared = kernels.get(instance.key)
    if shared is not None and shared.shared:
        return instance.key
    digest = hashlib.sha256()
    update_with_arrays(digest, instance.weights)
    return f"{instance.key}-{digest.hexdigest()[:12]}"


def update_with_arrays(digest, arrays: Sequence[np.ndarray]) -> None:
    """Feed `digest` each array's type, shape and elements (row-major bytes): a cache key's part
    for values a compile reads (a group's weights, calibration inputs)."""
    for array in arrays:
        digest.update(str((array.dtype, array.shape)).encode())
        digest.update(array.tobytes())


# --------------------------------------------------------------------------- #
# Assembly
# --------------------------------------------------------------------------- #


def _round_up(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


def _plan_activations(
    instances: Sequence[Instance],
    returned: set[SSAValue],
    sizes: dict[SSAValue, int],
    alignment: int,
    views: dict[SSAValue, View],
) -> dict[SSAValue, int]:
    """Offsets in global memory for the results of `instances` that @main does not return, first
    fit by live range (from the call that writes one to the last that reads it or a view of it)."""
    last_use: dict[SSAValue, int] = {}
    for index, instance in enumerate(instances):
        for value in instance.inputs:
            last_use[_root(value, views)[0]] = index
    offsets: dict[SSAValue, int] = {}
    live: list[tuple[int, int, SSAValue]] = []  # (offset, end, value)
    for index, instance in enumerate(instances):
        live = [entry for entry in live if last_use.get(entry[2], -1) >= index]
        for result in instance.op.results:
            if result in returned:
                continue
            size = _round_up(max(sizes[result], 1), alignment)
            offset = 0
            for start, end, _ in sorted(live):
                if offset + size <= start:
                    break
                offset = max(offset, end)
            offsets[result] = offset
            live.append((offset, offset + size, result))
    return offsets


@dataclass
class Program:
    """The npu program: @main and the weights (`stub`, whose kernel declarations stand for the
    kernels), and the kernels it calls."""

    stub: ModuleOp
    kernels: list[Kernel]

    def text(self) -> str:
        """The program printed: the stub's globals, then each kernel's ops, then @main."""
        printed_stub = printed(self.stub)
        at = printed_stub.index("\n  func.func @main(") + 1
        return printed_stub[:at] + "".join(k.text for k in self.kernels) + printed_stub[at:]

    def module(self, ctx: Context) -> ModuleOp:
        """The program as one module (what `text` prints)."""
        program = self.stub.clone()
        main = program.body.block.last_op
        for kernel in self.kernels:
            ops = kernel.ops(ctx)
            for op in list(ops.ops):
                op.detach()
                program.body.block.insert_op_before(op, main)
        return program


def assemble(
    graph_main: func.FuncOp,
    instances: Sequence[Instance],
    kernels: dict[str, Kernel],
    machine: Machine,
    views: dict[SSAValue, View] | None = None,
) -> Program:
    """The npu program: the kernels that `instances` call, the weights as globals, and @main
    calling the kernels in program order (see the module docstring). @main is verified against
    the kernels' declarations; each kernel was verified as it was lowered."""
    ctx = default_context()
    views = views or {}
    gm = machine.global_memory()
    returns = graph_main.body.block.last_op
    assert isinstance(returns, func.ReturnOp)
    returned = list(returns.operands)
    producers = {r: i for i in instances for r in i.op.results}
    for value in returned:
        if value not in producers or returned.count(value) > 1:
            raise NotKernels(
                error_at(
                    returns,
                    "kernels: each result of @main must be computed by a group of its own "
                    "(this model returns an input, a constant or one value twice)",
                ).diagnostics[0]
            )
    keys = [kernel_key(instance, kernels) for instance in instances]  # hashes weights: once
    used: dict[str, Kernel] = {}
    calls: dict[str, int] = {}
    for key in keys:
        used.setdefault(key, kernels[key])
        calls[key] = calls.get(key, 0) + 1
    declarations = {
        key: next(op for op in parse_source(ctx, k.declaration, "<declaration>").ops)
        for key, k in used.items()
    }
    declared_of = [declarations[key] for key in keys]
    sizes: dict[SSAValue, int] = {}
    for instance, declared in zip(instances, declared_of):
        inputs = declared.function_type.inputs.data
        for result, arg_type in zip(instance.op.results, inputs[len(instance.inputs) :]):
            sizes[result] = npu.type_bytes(arg_type)
    # the kernels' scratch lies at the bottom of global memory, the activations above
    base = _round_up(max((k.scratch for k in used.values()), default=0), gm.alignment)
    offsets = {
        value: base + offset
        for value, offset in _plan_activations(
            instances, set(returned), sizes, gm.alignment, views
        ).items()
    }

    stub = ModuleOp([])
    first = next(iter(used.values()), None)
    if first is not None and first.machine:
        stub.attributes[npu.MACHINE_ATTR] = StringAttr(first.machine)
    if first is not None and first.cores is not None:
        stub.attributes[npu.CORES_ATTR] = IntegerAttr(first.cores, i64)
    useful: dict[str, int] = {}
    for key, kernel in used.items():
        for pair, count in kernel.useful_macs.items():
            useful[pair] = useful.get(pair, 0) + count * calls[key]
    if useful:
        stub.attributes[USEFUL_MACS_ATTR] = DictionaryAttr(
            {pair: IntegerAttr(count, i64) for pair, count in sorted(useful.items())}
        )
    for declared in declarations.values():
        declared.detach()
        stub.body.block.add_op(declared)
    main = _main(graph_main, instances, declared_of, offsets, returned, views, stub)
    stub.body.block.add_op(main)
    with timed("verify"):
        verify_module(stub)
    for declared in declarations.values():
        declared.detach()
    return Program(stub, list(used.values()))


def _reshaped(buffer: SSAValue, shape_type: Attribute | None, block: Block) -> SSAValue:
    """`buffer` (an `npu.buffer` of @main), or the same bytes in the shape of `shape_type`."""
    if shape_type is None:
        return buffer
    owner = buffer.owner
    assert isinstance(owner, npu.BufferOp) and isinstance(buffer.type, MemRefType)
    assert isinstance(shape_type, TensorType)
    view = npu.BufferOp(
        MemRefType(
            buffer.type.element_type, shape_type.get_shape(), memory_space=buffer.type.memory_space
        ),
        owner.byte_offset,
    )
    block.add_op(view)
    return view.result


def group_location(group: Operation) -> LocationAttr:
    """Where a group comes from: its own location, else that of the first op inside it that has
    one (a `graph.fused`'s root: the ONNX node of its conv or matrix product)."""
    for op in group.walk():
        if not isinstance(op.location, UnknownLoc):
            return op.location
    return group.location


def _entry(module: ModuleOp) -> func.FuncOp:
    return next(
        op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main"
    )


def _into_kernel(module: ModuleOp, name: str, weight_globals: Sequence[str]) -> func.FuncOp:
    """Make the lowered group `module`'s @main the private `@name`: its weights' globals become
    arguments after its results, its other globals are renamed `@name_<global>`."""
    entry = _entry(module)
    entry.sym_name = StringAttr(name)
    entry.sym_visibility = StringAttr("private")
    block = entry.body.block
    weight_args: dict[str, SSAValue] = {}
    declarations = {op.sym_name.data: op for op in module.ops if isinstance(op, memref.GlobalOp)}
    for index, symbol in enumerate(weight_globals):
        declared = declarations.pop(symbol)
        weight_args[symbol] = block.insert_arg(declared.type, len(block.args))
        weight_args[symbol].name_hint = f"w{index}"
        declared.detach()
    for op in list(entry.walk()):
        if isinstance(op, memref.GetGlobalOp):
            symbol = op.name_.root_reference.data
            if symbol in weight_args:
                op.memref.replace_all_uses_with(weight_args[symbol])
                op.detach()
                op.erase()
            else:
                op.name_ = SymbolRefAttr(f"{name}_{symbol}")
    for symbol, declared in declarations.items():
        declared.sym_name = StringAttr(f"{name}_{symbol}")
    inputs = [arg.type for arg in block.args]
    entry.function_type = func.FunctionType.from_lists(inputs, [])
    if entry.arg_attrs is not None:
        attrs = list(entry.arg_attrs.data)
        attrs += [DictionaryAttr({})] * (len(inputs) - len(attrs))
        entry.arg_attrs = ArrayAttr(attrs)
    return entry


def _main(
    graph_main: func.FuncOp,
    instances: Sequence[Instance],
    declared_of: Sequence[func.FuncOp],
    offsets: dict[SSAValue, int],
    returned: list[SSAValue],
    views: dict[SSAValue, View],
    program: ModuleOp,
) -> func.FuncOp:
    """@main: the model's inputs and results in global memory, each group a call of its kernel
    (`declared_of`: the declaration of each instance's kernel)."""
    # types and ABI attributes of @main's arguments, from the kernels that read or write them
    arg_types: dict[SSAValue, Attribute] = {}
    arg_attrs: dict[SSAValue, DictionaryAttr] = {}
    for instance, declared in zip(instances, declared_of):
        inputs = declared.function_type.inputs.data
        own_attrs = declared.arg_attrs.data if declared.arg_attrs is not None else None
        bound = [*instance.inputs, *instance.op.results]
        for index, value in enumerate(bound):
            if value in graph_main.args or value in returned:
                arg_types.setdefault(value, inputs[index])
                if own_attrs is not None and own_attrs[index].data:
                    arg_attrs.setdefault(value, own_attrs[index])
    parameters = [*graph_main.args, *returned]
    if any(v not in arg_types for v in parameters):
        raise NotKernels(
            error_at(graph_main, "kernels: an input of @main that no group reads").diagnostics[0]
        )
    function = func.FuncOp("main", ([arg_types[v] for v in parameters], []))
    block = function.body.block
    values: dict[SSAValue, SSAValue] = {}
    inputs_count = len(graph_main.args)
    for index, (value, arg) in enumerate(zip(parameters, block.args)):
        values[value] = arg
        arg.name_hint = (
            value.name_hint if index < inputs_count else output_argument_name(index - inputs_count)
        )
    if arg_attrs:
        function.arg_attrs = ArrayAttr([arg_attrs.get(v, DictionaryAttr({})) for v in parameters])
    for instance, declared in zip(instances, declared_of):
        inputs = declared.function_type.inputs.data
        for result, arg_type in zip(instance.op.results, inputs[len(instance.inputs) :]):
            if result not in values:
                buffer = npu.BufferOp(arg_type, offsets[result])
                block.add_op(buffer)
                values[result] = buffer.result
    for view in views:
        if isinstance(view.owner, graph.CastOp):
            values[view] = values[views[view].source]  # narrowed: the kernels read the source
            continue
        root, element = _root(view, views)
        root_type = values[root].type
        assert isinstance(root_type, MemRefType)
        view_type = MemRefType(
            root_type.element_type, view.type.get_shape(), memory_space=root_type.memory_space
        )
        element_bytes = npu.type_bytes(root_type) // max(math.prod(root_type.get_shape()), 1)
        buffer = npu.BufferOp(view_type, offsets[root] + element * element_bytes)
        block.add_op(buffer)
        values[view] = buffer.result
    weight_number = 0
    for instance, declared in zip(instances, declared_of):
        name = declared.sym_name.data
        inputs = declared.function_type.inputs.data
        operands = [_reshaped(values[v], instance.reshaped.get(v), block) for v in instance.inputs]
        operands += [values[v] for v in instance.op.results]
        for weight, weight_type in zip(instance.weights, inputs[len(operands) :]):
            symbol = f"weight{weight_number}"
            weight_number += 1
            assert isinstance(weight_type, MemRefType)
            data = weight.astype(to_numpy_dtype(weight_type.get_element_type())).reshape(
                weight_type.get_shape()
            )
            program.body.block.insert_op_before(
                memref.GlobalOp.get(
                    StringAttr(symbol),
                    weight_type,
                    graph.ConstantOp.from_array(data).value,
                    constant=UnitAttr(),
                ),
                program.body.block.first_op,
            )
            get = memref.GetGlobalOp(symbol, weight_type)
            block.add_op(get)
            operands.append(get.memref)
        call = func.CallOp(name, operands, [])
        locate(call, group_location(instance.op))  # diagnostics, the report's layers
        block.add_op(call)
    block.add_op(func.ReturnOp())
    return function


SALT_PATTERN = re.compile(r"\s+")


def kernel_salt(pipeline: str, machine: Machine) -> str:
    """What besides a group decides its kernel: the lowering passes with their options and the
    machine's content (its key, and so its name, does not depend on the code)."""
    digest = hashlib.sha256()
    digest.update(SALT_PATTERN.sub(" ", pipeline).encode())
    digest.update(repr(machine).encode())
    return digest.hexdigest()


_CODE_DIGEST: str | None = None


def code_digest() -> str:
    """A hash of ziggurat's sources (every Python file in a folder that a loaded ziggurat module
    comes from, plugins' included): a cached kernel holds only for the code that lowered it."""
    global _CODE_DIGEST
    if _CODE_DIGEST is None:
        folders = sorted(
            {
                Path(module.__file__).resolve().parent
                for name, module in list(sys.modules.items())
                if name.split(".")[0] == "ziggurat" and getattr(module, "__file__", None)
            }
        )
        digest = hashlib.sha256()
        for folder in folders:
            for path in sorted(folder.glob("*.py")):
                digest.update(path.name.encode())
                digest.update(path.read_bytes())
        _CODE_DIGEST = digest.hexdigest()
    return _CODE_DIGEST


def lower_to_kernels(
    module: ModuleOp,
    passes: Sequence[ModulePass],
    machine: Machine,
    jobs: int = 1,
    cache: KernelCache | None = None,
) -> Program:
    """`module` (graph level, after `graph-opt`) as an npu program of kernels: `outline`,
    `lower_kernels` with `passes` (those of `lower-to-npu`), `assemble`."""
    graph_main = next(
        op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main"
    )
    if any(isinstance(op, func.FuncOp) and op is not graph_main for op in module.ops):
        raise NotKernels(Diagnostic("error", "kernels: the model must be one function, @main"))
    gm = machine.global_memory()
    pipeline = ",".join(str(p.pipeline_pass_spec()) for p in passes)
    narrowed = narrow_widenings(graph_main)
    views = find_views(graph_main, narrowed, gm.alignment)
    instances = outline(graph_main, kernel_salt(pipeline, machine), views, narrowed)
    kernels = lower_kernels(instances, passes, gm.name, jobs, cache)
    return assemble(graph_main, instances, kernels, machine, views)
