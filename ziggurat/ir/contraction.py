"""Contractions: the linalg ops the matrix unit runs, and their loop dimensions by role.

A contraction is a linalg op with two inputs, one output and a reduction loop whose body
adds the product of its inputs (possibly widened) to the output element: a matmul, a
convolution, or a generic that computes one. `contraction_dims` names the role of each
loop, as MLIR's `inferContractionDims` does, with a convolution's window loops besides;
every pass that asks "is this a contraction" or "which loops are its M, N and K" asks here.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineBinaryOpExpr, AffineDimExpr, AffineExpr

_WIDEN = (arith.ExtFOp, arith.ExtSIOp, arith.ExtUIOp)


@dataclass(frozen=True)
class ContractionDims:
    """The loops of a two-input, one-output linalg op by role, input 0 being the lhs and
    input 1 the rhs, each role's loops in increasing order. A loop that an input reads
    only inside a sum with another loop (`oh * 2 + kh`) and the output does not index is
    a `window` loop, unless every output loop of the sum is one both inputs read: the
    group `g` of a grouped conv's `g * cg + c` splits the channels, `c` is a `k` loop
    and `g` a batch loop; of the others, one the output does not index is `k`, one both
    inputs index is `batch`, one only the rhs indexes is `n`, and any other is `m`."""

    batch: tuple[int, ...]
    m: tuple[int, ...]
    n: tuple[int, ...]
    k: tuple[int, ...]
    window: tuple[int, ...] = ()

    @property
    def is_convolution(self) -> bool:
        """Whether some loop walks a window: a convolution, whose tiles keep the window whole."""
        return bool(self.window)

    @property
    def is_matrix_shaped(self) -> bool:
        """Whether N and K are one loop each, as the matrix unit's instruction reads them
        (M may be several loops: the rows of one M)."""
        return len(self.n) == 1 and len(self.k) == 1


def _dims_of(expr: AffineExpr) -> set[int]:
    if isinstance(expr, AffineDimExpr):
        return {expr.position}
    if isinstance(expr, AffineBinaryOpExpr):
        return _dims_of(expr.lhs) | _dims_of(expr.rhs)
    return set()


def contraction_dims(op: Operation) -> ContractionDims | None:
    """The role of each loop of `op` (see `ContractionDims`), or None when `op` is not a
    linalg op with two inputs and one output. It reads the indexing maps only: whether
    the body multiplies and accumulates is `is_contraction`'s question."""
    if not isinstance(op, LinalgStructuredOperation) or len(op.inputs) != 2 or len(op.outputs) != 1:
        return None
    maps = [m.data for m in op.get_indexing_maps().data]
    lhs, rhs, out = ([_dims_of(r) for r in m.results] for m in maps[:3])
    in_lhs, in_rhs, in_out = (set().union(*dims) for dims in (lhs, rhs, out))
    summed = {
        d
        for dims in lhs + rhs
        if len(dims) > 1 and not (dims & in_out and dims & in_out <= in_lhs & in_rhs)
        for d in dims
    }
    roles: dict[str, list[int]] = {"batch": [], "m": [], "n": [], "k": [], "window": []}
    for d in range(maps[0].num_dims):
        if d in summed and d not in in_out:
            roles["window"].append(d)
        elif d not in in_out:
            roles["k"].append(d)
        elif d in in_lhs and d in in_rhs:
            roles["batch"].append(d)
        elif d in in_rhs:
            roles["n"].append(d)
        else:
            roles["m"].append(d)
    return ContractionDims(**{role: tuple(dims) for role, dims in roles.items()})


def _unwidened(value: SSAValue) -> SSAValue:
    while isinstance(value.owner, _WIDEN):
        value = value.owner.input
    return value


def _multiplies_and_accumulates(op: LinalgStructuredOperation) -> bool:
    """Whether the body yields `acc + x * y`, x and y its two input arguments (possibly widened)
    and acc its output argument, in either order (MLIR's `isContractionBody`)."""
    if not op.body.blocks:
        return False
    block = op.body.block
    terminator = block.last_op
    if terminator is None or len(terminator.operands) != 1 or len(block.args) != 3:
        return False
    add = terminator.operands[0].owner
    if not isinstance(add, (arith.AddfOp, arith.AddiOp)):
        return False
    others = [v for v in add.operands if v != block.args[2]]
    if len(others) != 1 or not isinstance(others[0].owner, (arith.MulfOp, arith.MuliOp)):
        return False
    return {_unwidened(v) for v in others[0].owner.operands} == set(block.args[:2])


def is_contraction(op: Operation) -> bool:
    """Whether `op` is a contraction: a linalg op with two inputs, one output and a reduction
    loop (`contraction_dims` gives its roles) whose body multiplies and accumulates."""
    return (
        contraction_dims(op) is not None
        and any(it.data == IteratorType.REDUCTION for it in op.get_iterator_types().data)
        and _multiplies_and_accumulates(op)
    )


def matrix_operands(op: Operation) -> tuple[int, int]:
    """(index of A, index of B) among a contraction's inputs as the matrix unit multiplies
    them, A (M x K) times B (K x N): B is the input that the output's innermost loop (an n
    or batch loop) indexes, so that the output is the row-major [M, N] tile the unit writes
    (for an NCHW convolution's tile, `out[f, ow] = W[f, c] x X[c, ow]`, the weights are A)."""
    dims = contraction_dims(op)
    assert dims is not None, f"{op.name} is not a contraction"
    out_map = op.get_indexing_maps().data[2].data
    innermost = out_map.results[-1] if out_map.results else None
    b_is_rhs = isinstance(innermost, AffineDimExpr) and innermost.position in (*dims.n, *dims.batch)
    return (0, 1) if b_is_rhs else (1, 0)


__all__ = ["ContractionDims", "contraction_dims", "is_contraction", "matrix_operands"]
