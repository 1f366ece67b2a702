"""Matrix-unit selection for `loop-to-npu`: matmul-like contractions become `npu.mma`s, their
accumulator's zero fill absorbed into the first one.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    MemRefType,
    StridedLayoutAttr,
    i64,
)
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.dialects.linalg.ops import FillOp
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr
from xdsl.rewriter import InsertPoint

from ziggurat.diagnostics import error_at
from ziggurat.dialects import loop, npu
from ziggurat.dialects.npu import row_major_strides
from ziggurat.ir.contraction import matrix_operands
from ziggurat.lowering.loop_to_npu_views import Dim, Emitter, Linear, View, view_of
from ziggurat.machine import Machine


def _dim_views(
    op: LinalgStructuredOperation, views: list[View]
) -> tuple[list[int], list[list[int | None]]]:
    """Loop extents, and for each operand the view dimension each loop dimension indexes (None: absent)."""
    maps = [m.data for m in op.get_indexing_maps()]
    sizes = [1] * maps[0].num_dims
    positions: list[list[int | None]] = []
    for view, affine_map in zip(views, maps):
        where: list[int | None] = [None] * affine_map.num_dims
        for result, expr in enumerate(affine_map.results):
            if not isinstance(expr, AffineDimExpr):
                raise error_at(
                    op, f"{op.name}: loop-to-npu needs projected-permutation maps, got {affine_map}"
                )
            where[expr.position] = result
            sizes[expr.position] = view.shape[result]
        positions.append(where)
    return sizes, positions


@dataclass
class _Analysis:
    """A contraction's operands (A, B, C) as views, its loop extents and each loop dimension's role."""

    views: tuple[View, View, View]
    where: tuple[list[int | None], list[int | None], list[int | None]]
    sizes: list[int]
    roles: dict[str, list[int]]

    def tile(self, key: str) -> tuple[View, list[int | None], str, str]:
        """An operand's view, where each loop dim indexes it, and its (row, column) roles."""
        index = "ABC".index(key)
        row, col = {"A": ("M", "K"), "B": ("K", "N"), "C": ("M", "N")}[key]
        return self.views[index], self.where[index], row, col

    def walked(self, key: str, role: str) -> list[Dim]:
        """The dims of `key`'s view that the (non-unit) loop dims of `role` walk."""
        view, where, _, _ = self.tile(key)
        return [
            view.dims[where[d]]
            for d in self.roles[role]
            if self.sizes[d] > 1 and where[d] is not None
        ]


# A loop dim's role from whether (A, B, C) use it.
_ROLES = {
    (True, True, True): "batch",
    (True, False, True): "M",
    (False, True, True): "N",
    (True, True, False): "K",
}


def _analyze(op: LinalgStructuredOperation) -> _Analysis:
    a, b = matrix_operands(op)
    views = [view_of(v, op) for v in (*op.inputs, *op.outputs)]
    sizes, where = _dim_views(op, views)
    roles: dict[str, list[int]] = {"batch": [], "M": [], "N": [], "K": []}
    for d in range(len(sizes)):
        role = _ROLES.get(
            (where[a][d] is not None, where[b][d] is not None, where[2][d] is not None)
        )
        if role is None:
            raise error_at(op, f"{op.name}: loop dimension {d} is not batch, M, N or K of a matmul")
        roles[role].append(d)
    return _Analysis((views[a], views[b], views[2]), (where[a], where[b], where[2]), sizes, roles)


def _span(dims: list[Dim]) -> int:
    """Elements of one buffer dim from the first to the last that `dims` (all walking it) reach."""
    return 1 + sum((d.size - 1) * d.step for d in dims)


def lower_contraction(
    emitter: Emitter, op: LinalgStructuredOperation, machine: Machine
) -> Operation | None:
    """Emit the `npu.mma`s of a contraction; return the zero fill it absorbed, if any.

    The input holding the output's innermost dimension is B, the other A, so that
    the output is the row-major [M, N] tile the unit writes (for an NCHW conv tile
    the weights are A). Batch dimensions become `scf.for` loops; M, N and K are
    rounded up to the unit's instruction shape (loop-promote-to-memory-space padded the
    buffers). The last earlier write to the accumulator, walking back through the
    block and the loops around it, decides how it starts: a zero `linalg.fill`
    there is absorbed, and the `npu.mma` overwrites on the first iteration of each
    loop in between and accumulates on the others:

        linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32, "l0c">)
        scf.for %k = %c0 to %c512 step %c64 { ... linalg.matmul ... outs(%c) }

    becomes

        scf.for %k = %c0 to %c512 step %c64 {
          %first = arith.cmpi eq, %k, %c0 : index
          scf.if %first { npu.mma ... } else { npu.mma ... {accumulate} }
        }
    """
    analysis = _analyze(op)
    _check_unit(op, machine, *analysis.views)
    relaid = [
        key for key in "ABC" if not _is_tile(analysis, key) and _relayout(emitter, analysis, key)
    ]
    if relaid:
        analysis = _analyze(
            op
        )  # those local buffers now have the [rows, columns] shape the unit reads
    for key in "ABC":
        if not _is_tile(analysis, key):
            raise error_at(
                op,
                f"{op.name}: operand {key} must be a row-major tile of the two innermost dimensions of its "
                f"buffer {analysis.tile(key)[0].base_type} for the matrix unit",
            )
    extents = {
        role: max(
            _span(analysis.walked(key, role)) for key in "ABC" if role in analysis.tile(key)[2:]
        )
        for role in "MNK"
    }
    a_view, b_view, c_view = analysis.views
    shape = _instruction_shape(machine, a_view, c_view, extents["M"], extents["N"], extents["K"])
    for key in "ABC":
        _check_fits(op, analysis.tile(key)[0], shape, key)
    views = list(analysis.views)
    for d in analysis.roles["batch"]:
        if analysis.sizes[d] > 1:
            emitter, iv = emitter.loop(analysis.sizes[d])
            views = [v.shifted(v.dims[w[d]], Linear.of(iv)) for v, w in zip(views, analysis.where)]
    fill, loops = _zero_fill_before(op, c_view.base)
    operands = (views[0], views[1], views[2])
    if fill is None:
        _emit_mma(emitter, operands, shape, accumulate=True)
    elif not loops:
        _emit_mma(emitter, operands, shape, accumulate=False)
    else:
        first, others = emitter.branch(_first_iteration(emitter, loops))
        _emit_mma(first, operands, shape, accumulate=False)
        _emit_mma(others, operands, shape, accumulate=True)
    return fill


def _is_tile(analysis: _Analysis, key: str) -> bool:
    """Whether the operand's row dims walk its buffer's second-innermost dim and its column dims the innermost."""
    view, _, row, col = analysis.tile(key)
    rank = view.base_type.get_num_dims()
    if rank < 2:
        return False
    for role, base_dim in ((row, rank - 2), (col, rank - 1)):
        dims = analysis.walked(key, role)
        if any(d.base_dim != base_dim for d in dims) or dims and min(d.step for d in dims) != 1:
            return False
    return True


def _relayout(emitter: Emitter, analysis: _Analysis, key: str) -> bool:
    """Give a local buffer that an operand fills whole the shape [batch..., rows, columns] the unit reads.

    Where the buffer's row dims come before its column dims, the bytes stay where they are and its
    other users read it through a `memref.expand_shape`; where they come after (a transposed
    operand, e.g. a Linear layer's weight [N, K] as B), through a `memref.reinterpret_cast` with
    the transposed strides, so the copies that fill it write it transposed. False where the
    buffer's dims are not grouped by role.
    """
    view, where, row, col = analysis.tile(key)
    alloc = view.base.owner
    if not isinstance(alloc, memref.AllocOp) or any(o.static != 0 for o in view.offsets):
        return False
    role_of = {
        view.dims[where[d]].base_dim: role
        for role, dims in analysis.roles.items()
        for d in dims
        if where[d] is not None and analysis.sizes[d] > 1
    }
    groups: dict[str, list[int]] = {"batch": [], row: [], col: []}
    current, seen = "batch", ["batch"]
    for base_dim in range(view.base_type.get_num_dims()):
        role = role_of.get(base_dim, current)
        if role != current:
            if role in seen or role not in groups:
                return False
            current = role
            seen.append(role)
        groups[current].append(base_dim)
    if not groups[row] or not groups[col]:
        return False
    shape = view.base_type.get_shape()
    new_shape = [shape[d] for d in groups["batch"]] + [
        prod(shape[d] for d in groups[r]) for r in (row, col)
    ]
    if len(new_shape) == len(shape) and seen[-1] == col:
        return False
    new_type = MemRefType(
        view.base_type.get_element_type(), new_shape, memory_space=view.base_type.memory_space
    )
    at_alloc = Emitter(emitter.rewriter, InsertPoint.before(alloc), alloc.location)
    buffer = at_alloc.insert(memref.AllocOp([], [], new_type))
    buffer.memref.name_hint = alloc.memref.name_hint
    if seen[-1] == col:
        reassociation = [[d] for d in groups["batch"]] + [groups[row], groups[col]]
        old_view = memref.ExpandShapeOp(
            operands=[buffer.memref, []],
            result_types=[view.base_type],
            properties={
                "reassociation": ArrayAttr(
                    [ArrayAttr([IntegerAttr(d, i64) for d in g]) for g in reassociation]
                ),
                "static_output_shape": DenseArrayBase.from_list(i64, shape),
            },
        )
    else:
        strides = _strides_in(shape, groups["batch"], groups[row], groups[col], new_shape)
        old_type = MemRefType(
            view.base_type.get_element_type(),
            shape,
            StridedLayoutAttr(strides, 0),
            view.base_type.memory_space,
        )
        old_view = memref.ReinterpretCastOp(
            buffer.memref, [], [], [], [0], shape, strides, old_type
        )
    at_alloc.insert(old_view)
    emitter.rewriter.replace_all_uses_with(alloc.memref, old_view.result)
    emitter.rewriter.erase(alloc)
    return True


def _strides_in(
    shape: list[int], batch: list[int], rows: list[int], cols: list[int], new_shape: list[int]
) -> list[int]:
    """Element strides of the old dims inside the new [batch..., rows, columns] buffer."""
    new_strides = row_major_strides(new_shape)
    strides = [0] * len(shape)
    for position, d in enumerate(batch):
        strides[d] = new_strides[position]
    for group, outer in ((rows, new_shape[-1]), (cols, 1)):
        inner = outer
        for d in reversed(group):
            strides[d] = inner
            inner *= shape[d]
    return strides


def _check_unit(op: Operation, machine: Machine, a: View, b: View, c: View) -> None:
    unit = machine.matrix
    for key, view, space in (
        ("A", a, unit.a_space),
        ("B", b, unit.b_space),
        ("C", c, unit.c_space),
    ):
        if view.space != space:
            raise error_at(
                op,
                f"{op.name}: operand {key} is in '{view.space}'; the matrix unit '{unit.name}' of machine "
                f"'{machine.name}' reads {key} from '{space}' (run loop-promote-to-memory-space first)",
            )
    pair = (str(a.base_type.get_element_type()), str(c.base_type.get_element_type()))
    if pair not in unit.dtypes:
        supported = ", ".join(f"{i}->{o}" for i, o in unit.dtypes)
        raise error_at(
            op,
            f"{op.name}: the matrix unit '{unit.name}' of machine '{machine.name}' has no "
            f"{pair[0]}->{pair[1]} instruction (it has {supported})",
        )


def _instruction_shape(
    machine: Machine, a: View, c: View, m: int, n: int, k: int
) -> tuple[int, int, int]:
    """(m, n, k) rounded up to multiples of the unit's instruction shape for the operands' dtypes."""
    unit = machine.matrix
    pair = (str(a.base_type.get_element_type()), str(c.base_type.get_element_type()))
    um, un, uk = unit.shape_for(*pair) or (unit.m, unit.n, unit.k)
    return (-(-m // um) * um, -(-n // un) * un, -(-k // uk) * uk)


def _check_fits(op: Operation, view: View, shape: tuple[int, int, int], key: str) -> None:
    m, n, k = shape
    extents = {"A": (m, k), "B": (k, n), "C": (m, n)}[key]
    rank = view.base_type.get_num_dims()
    for base_dim, extent in zip((rank - 2, rank - 1), extents):
        start = view.offsets[base_dim].static or 0
        if start + extent > view.base_type.get_shape()[base_dim]:
            raise error_at(
                op,
                f"{op.name}: the {m}x{n}x{k} instruction (rounded up to the unit's shape) reads a "
                f"{extents[0]}x{extents[1]} tile of operand {key} past its buffer {view.base_type}; "
                "loop-promote-to-memory-space rounds buffers up to the unit's multiples",
            )


def _emit_mma(
    emitter: Emitter,
    operands: tuple[View, View, View],
    shape: tuple[int, int, int],
    accumulate: bool,
):
    a, b, c = operands
    emitter.insert(
        npu.MmaOp(
            a.base,
            emitter.indices(a),
            b.base,
            emitter.indices(b),
            c.base,
            emitter.indices(c),
            *shape,
            accumulate,
        )
    )


def _first_iteration(emitter: Emitter, loops: list[scf.ForOp]) -> SSAValue:
    condition: SSAValue | None = None
    for for_op in loops:
        first = emitter.insert(arith.CmpiOp(for_op.body.block.args[0], for_op.lb, "eq")).results[0]
        condition = (
            first
            if condition is None
            else emitter.insert(arith.AndIOp(condition, first)).results[0]
        )
    assert condition is not None
    return condition


def root_buffer(value: SSAValue) -> SSAValue:
    """The buffer a chain of views starts from."""
    while True:
        if isinstance(value.owner, memref.SubviewOp):
            value = value.owner.source
        elif isinstance(value.owner, memref.AlterShapeOperation):
            value = value.owner.src
        else:
            return value


def _writes(op: Operation, buffer: SSAValue) -> bool:
    """Whether `op` or an op nested in it writes (a view of) `buffer`."""
    for inner in op.walk():
        if isinstance(inner, LinalgStructuredOperation):
            targets = list(inner.outputs)
        elif isinstance(inner, loop.CopyOperation):
            targets = [inner.destination]
        elif isinstance(inner, npu.DmaOp | npu.VectorOperation):
            targets = [inner.dst]
        elif isinstance(inner, npu.MmaOp):
            targets = [inner.c]
        else:
            continue
        if any(root_buffer(t) is buffer for t in targets):
            return True
    return False


def _is_zero_fill(op: Operation) -> bool:
    if not isinstance(op, FillOp):
        return False
    value = op.inputs[0].owner
    if not isinstance(value, arith.ConstantOp) or not isinstance(
        value.value, FloatAttr | IntegerAttr
    ):
        return False
    return value.value.value.data == 0


def _zero_fill_before(op: Operation, buffer: SSAValue) -> tuple[Operation | None, list[scf.ForOp]]:
    """The zero fill that is the last write to `buffer` before `op`, and the loops between them (outermost last)."""
    loops: list[scf.ForOp] = []
    current = op
    while True:
        earlier = current.prev_op
        while earlier is not None:
            if _writes(earlier, buffer):
                return (earlier, loops) if _is_zero_fill(earlier) else (None, [])
            earlier = earlier.prev_op
        parent = current.parent_op()
        if not isinstance(parent, scf.ForOp):
            return None, []
        loops.append(parent)
        current = parent
