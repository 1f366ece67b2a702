"""Matrix-unit selection for `loop-to-npu`: matmul-like contractions -> `npu.mma`.

Each dimension of a contraction (after `tile-decompose-conv`, every map is a
projected permutation) is batch (in both inputs and the output), M (one input
and the output), N (the other input and the output) or K (both inputs). The
input holding the output's innermost dimension is B, the other A, so the
output is the row-major [M, N] tile the unit writes: for an NCHW conv tile
`out[f, ow] = W[f, c] x X[c, ow]` the weights are A. Batch dimensions become
`scf.for` loops; M, N and K are rounded up to the unit's instruction shape
(promote-to-memory-space rounded the buffers up and padded K with zeros).

The accumulator: walking back from the contraction through its block and the
loops around it, the last earlier write to the accumulator buffer decides. A
zero `linalg.fill` there is absorbed: the `npu.mma` overwrites on the first
iteration of each loop in between and accumulates on the others:

    linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32, "l0c">)
    scf.for %k = %c0 to %c512 step %c64 { ... linalg.matmul ... outs(%c) }
    // becomes
    scf.for %k = %c0 to %c512 step %c64 {
      %first = arith.cmpi eq, %k, %c0 : index
      scf.if %first { npu.mma ... } else { npu.mma ... {accumulate} }
    }
"""

from __future__ import annotations

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.dialects.linalg.ops import FillOp, YieldOp
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr

from ziggurat.backends.machine import Machine
from ziggurat.diagnostics import error_at
from ziggurat.dialects import loop, npu
from ziggurat.lowering.loop_to_npu_views import Emitter, Linear, View, view_of

_MULTIPLY = (arith.MulfOp, arith.MuliOp)
_ADD = (arith.AddfOp, arith.AddiOp)
_WIDEN = (arith.ExtFOp, arith.ExtSIOp, arith.ExtUIOp)


def is_contraction(op: LinalgStructuredOperation) -> bool:
    """Two inputs, one output, a reduction, and a body that adds a product (of widened inputs) to the output."""
    if len(op.inputs) != 2 or len(op.outputs) != 1 or not op.body.blocks:
        return False
    if all(str(it.data) == "parallel" for it in op.get_iterator_types()):
        return False
    body = [o for o in op.body.block.ops if not isinstance(o, YieldOp)]
    kinds = [type(o) for o in body if not isinstance(o, _WIDEN)]
    return len(kinds) == 2 and issubclass(kinds[0], _MULTIPLY) and issubclass(kinds[1], _ADD)


def _dim_views(op: LinalgStructuredOperation, views: list[View]) -> tuple[list[int], list[list[int | None]]]:
    """Loop extents, and for each operand the view dimension each loop dimension indexes (None: absent)."""
    maps = [m.data for m in op.get_indexing_maps()]
    sizes = [1] * maps[0].num_dims
    positions: list[list[int | None]] = []
    for view, affine_map in zip(views, maps):
        where: list[int | None] = [None] * affine_map.num_dims
        for result, expr in enumerate(affine_map.results):
            if not isinstance(expr, AffineDimExpr):
                raise error_at(op, f"{op.name}: loop-to-npu needs projected-permutation maps, got {affine_map}")
            where[expr.position] = result
            sizes[expr.position] = view.shape[result]
        positions.append(where)
    return sizes, positions


def _pick(op: Operation, role: str, dims: list[int], sizes: list[int]) -> int:
    real = [d for d in dims if sizes[d] > 1]
    if len(real) > 1:
        raise error_at(op, f"{op.name}: the matrix unit takes one {role} dimension, got {len(real)} (loop dims {real})")
    if not real and not dims:
        raise error_at(op, f"{op.name}: the matrix unit needs an {role} dimension")
    return real[0] if real else dims[-1]


def lower_contraction(emitter: Emitter, op: LinalgStructuredOperation, machine: Machine) -> Operation | None:
    """Emit the `npu.mma`s of a contraction; return the zero fill it absorbed, if any."""
    views = [view_of(v, op) for v in (*op.inputs, *op.outputs)]
    sizes, where = _dim_views(op, views)
    present = [[w[d] is not None for w in where] for d in range(len(sizes))]
    out_last = op.get_indexing_maps().data[2].data.results[-1].position
    a, b = (0, 1) if present[out_last][1] else (1, 0)
    roles: dict[str, list[int]] = {"batch": [], "M": [], "N": [], "K": []}
    for d, (in0, in1, out) in enumerate(present):
        role = {(True, True, True): "batch", (True, False, True): "MN"[a], (False, True, True): "MN"[b]}.get(
            (in0, in1, out), "K" if in0 and in1 and not out else None
        )
        if role is None:
            raise error_at(op, f"{op.name}: loop dimension {d} is not batch, M, N or K of a matmul")
        roles[role].append(d)
    m, n, k = (_pick(op, role, roles[role], sizes) for role in "MNK")
    a_view, b_view, c_view = views[a], views[b], views[2]
    _check_unit(op, machine, a_view, b_view, c_view)
    tiles = ((a_view, where[a], m, k, "A"), (b_view, where[b], k, n, "B"), (c_view, where[2], m, n, "C"))
    for view, positions, row, col, key in tiles:
        _check_tile(op, view, positions[row], positions[col], key)
    shape = _instruction_shape(machine, a_view, c_view, sizes[m], sizes[n], sizes[k])
    for view, positions, row, col, key in tiles:
        _check_fits(op, view, positions[row], positions[col], shape, key)
    batch = [d for d in roles["batch"] if sizes[d] > 1]
    for d in batch:
        emitter, iv = emitter.loop(sizes[d])
        a_view, b_view, c_view = (
            v.shifted(v.dims[w[d]], Linear.of(iv)) for v, w in ((a_view, where[a]), (b_view, where[b]), (c_view, where[2]))
        )
    fill, loops = _zero_fill_before(op, c_view.base)
    operands = (a_view, b_view, c_view)
    if fill is None:
        _emit_mma(emitter, operands, shape, accumulate=True)
    elif not loops:
        _emit_mma(emitter, operands, shape, accumulate=False)
    else:
        first, others = emitter.branch(_first_iteration(emitter, loops))
        _emit_mma(first, operands, shape, accumulate=False)
        _emit_mma(others, operands, shape, accumulate=True)
    return fill


def _check_unit(op: Operation, machine: Machine, a: View, b: View, c: View) -> None:
    unit = machine.matrix
    for key, view, space in (("A", a, unit.a_space), ("B", b, unit.b_space), ("C", c, unit.c_space)):
        if view.space != space:
            raise error_at(
                op, f"{op.name}: operand {key} is in '{view.space}'; the matrix unit '{unit.name}' of machine "
                f"'{machine.name}' reads {key} from '{space}' (run promote-to-memory-space first)"
            )
    pair = (str(a.base_type.get_element_type()), str(c.base_type.get_element_type()))
    if pair not in unit.dtypes:
        supported = ", ".join(f"{i}->{o}" for i, o in unit.dtypes)
        raise error_at(
            op, f"{op.name}: the matrix unit '{unit.name}' of machine '{machine.name}' has no "
            f"{pair[0]}->{pair[1]} instruction (it has {supported})"
        )


def _check_tile(op: Operation, view: View, row: int | None, col: int | None, key: str) -> None:
    """The operand must be a row-major tile of its buffer's two innermost dimensions."""
    rank = view.base_type.get_num_dims()
    dims = view.dims
    if (
        rank < 2
        or row is None
        or col is None
        or (dims[row].base_dim, dims[row].step) != (rank - 2, 1)
        or (dims[col].base_dim, dims[col].step) != (rank - 1, 1)
    ):
        raise error_at(
            op, f"{op.name}: operand {key} must be a row-major tile of the two innermost dimensions of its "
            f"buffer {view.base_type} for the matrix unit"
        )


def _instruction_shape(machine: Machine, a: View, c: View, m: int, n: int, k: int) -> tuple[int, int, int]:
    """(m, n, k) rounded up to multiples of the unit's instruction shape for the operands' dtypes."""
    unit = machine.matrix
    pair = (str(a.base_type.get_element_type()), str(c.base_type.get_element_type()))
    um, un, uk = unit.shape_for(*pair) or (unit.m, unit.n, unit.k)
    return (-(-m // um) * um, -(-n // un) * un, -(-k // uk) * uk)


def _check_fits(op: Operation, view: View, row: int, col: int, shape: tuple[int, int, int], key: str) -> None:
    m, n, k = shape
    extents = {"A": (m, k), "B": (k, n), "C": (m, n)}[key]
    rank = view.base_type.get_num_dims()
    for base_dim, extent in zip((rank - 2, rank - 1), extents):
        start = view.offsets[base_dim].static or 0
        if start + extent > view.base_type.get_shape()[base_dim]:
            raise error_at(
                op, f"{op.name}: the {m}x{n}x{k} instruction (rounded up to the unit's shape) reads a "
                f"{extents[0]}x{extents[1]} tile of operand {key} past its buffer {view.base_type}; "
                "promote-to-memory-space rounds buffers up to the unit's multiples"
            )


def _emit_mma(emitter: Emitter, operands: tuple[View, View, View], shape: tuple[int, int, int], accumulate: bool):
    a, b, c = operands
    emitter.insert(
        npu.MmaOp(a.base, emitter.indices(a), b.base, emitter.indices(b), c.base, emitter.indices(c), *shape, accumulate)
    )


def _first_iteration(emitter: Emitter, loops: list[scf.ForOp]) -> SSAValue:
    condition: SSAValue | None = None
    for for_op in loops:
        first = emitter.insert(arith.CmpiOp(for_op.body.block.args[0], for_op.lb, "eq")).results[0]
        condition = first if condition is None else emitter.insert(arith.AndIOp(condition, first)).results[0]
    assert condition is not None
    return condition


def root_buffer(value: SSAValue) -> SSAValue:
    """The buffer a chain of subviews starts from."""
    while isinstance(value.owner, memref.SubviewOp):
        value = value.owner.source
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
    if not isinstance(value, arith.ConstantOp) or not isinstance(value.value, FloatAttr | IntegerAttr):
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
