"""`loop-hoist-copies`: move copies whose source and destination do not change in a loop out of it, so that
a tile the loop reads unchanged is loaded once (docs/lowering.md, section 5).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import is_side_effect_free

from ziggurat.dialects.loop import CopyAsyncOp, CopyOp, WaitOp
from ziggurat.transforms.loop.buffers import read_buffers, root_of, written_buffers


def defined_inside(loop: Operation, value: SSAValue) -> bool:
    owner = value.owner
    op = owner.parent_op() if isinstance(owner, Block) else owner
    return op is not None and (op is loop or loop.is_ancestor(op))


def invariant_definitions(value: SSAValue, loop: scf.ForOp, definitions: list[Operation]) -> bool:
    """Whether `value` is the same in every iteration of `loop`; appends (operands first)
    the side-effect-free ops inside the loop that compute it."""
    if not defined_inside(loop, value):
        return True
    owner = value.owner
    if isinstance(owner, Block) or owner.regions or not is_side_effect_free(owner):
        return False
    if not all(invariant_definitions(operand, loop, definitions) for operand in owner.operands):
        return False
    if owner not in definitions:
        definitions.append(owner)
    return True


@dataclass(frozen=True)
class _BodyAccess:
    """An op in a loop body (nested ones included), the index in the body of the op holding it,
    and the roots of the buffers it writes and reads."""

    op: Operation
    position: int
    writes: tuple[SSAValue, ...]
    reads: tuple[SSAValue, ...]


def body_accesses(loop: scf.ForOp) -> list[_BodyAccess]:
    """What every op in the loop's body accesses, walked once for all its copies: hoisting
    moves ops out but leaves the others' order and buffers as they are."""
    found = []
    for position, top in enumerate(loop.body.block.ops):
        for op in top.walk():
            writes = tuple(root_of(v) for v in written_buffers(op))
            reads = tuple(root_of(v) for v in read_buffers(op))
            found.append(_BodyAccess(op, position, writes, reads))
    return found


def hoistable(
    copy: CopyOp | CopyAsyncOp, loop: scf.ForOp, accesses: list[_BodyAccess], moved: set[Operation]
) -> list[Operation] | None:
    """The ops computing the copy's views (to move with it), or None if it must stay in the loop.
    `accesses` are the loop body's (`body_accesses`), of which the ops in `moved` have left it."""
    definitions: list[Operation] = []
    if not all(
        invariant_definitions(v, loop, definitions) for v in (copy.source, copy.destination)
    ):
        return None
    if isinstance(copy, CopyAsyncOp) and not all(
        isinstance(use.operation, WaitOp) for use in copy.token.uses
    ):
        return None
    source, destination = root_of(copy.source), root_of(copy.destination)
    position = next(access.position for access in accesses if access.op is copy)
    for access in accesses:
        if access.op is copy or access.op in moved:
            continue
        if any(root in (source, destination) for root in access.writes):
            return None
        if access.position < position and any(root is destination for root in access.reads):
            return None
    return definitions


def hoist(
    copy: CopyOp | CopyAsyncOp, loop: scf.ForOp, definitions: list[Operation]
) -> list[Operation]:
    """Move the copy (with `definitions` and its waits) before the loop; the ops moved."""
    moved = [*definitions, copy]
    if isinstance(copy, CopyAsyncOp):
        moved += [use.operation for use in copy.token.uses]
    for op in moved:
        op.detach()
        Rewriter.insert_op(op, InsertPoint.before(loop))
    return moved


def hoist_once(module: ModuleOp) -> bool:
    """Hoist every hoistable copy out of its loop, innermost loops first; whether anything moved."""
    moved = False
    loops = [op for op in module.walk(region_first=True) if isinstance(op, scf.ForOp)]
    for loop in loops:
        copies = [op for op in loop.body.block.ops if isinstance(op, CopyOp | CopyAsyncOp)]
        if not copies:
            continue
        accesses, gone = body_accesses(loop), set()
        for copy in copies:
            definitions = hoistable(copy, loop, accesses, gone)
            if definitions is not None:
                gone.update(hoist(copy, loop, definitions))
                moved = True
    return moved


@dataclass(frozen=True)
class HoistCopiesPass(ModulePass):
    """Move loop-invariant copies (and the views they copy) out of `scf.for` loops.

    A `loop.copy`, or a `loop.copy_async` with its `loop.wait`s, directly in an
    `scf.for` body moves before the loop when its source and destination views are
    loop-invariant (defined outside the loop, or by side-effect-free ops of
    loop-invariant values, which move with it), nothing else in the loop writes the
    buffer under either (views of one buffer are assumed to overlap), and nothing
    in the loop reads the destination before the copy. Loops are visited innermost
    first until nothing moves, so a copy climbs as far as it stays invariant.

        scf.for %j = %c0 to %c64 step %c32 {
          %a = memref.subview %A[%i, 0] [32, 64] [1, 1] : ...
          %t = loop.copy_async %a -> %l1a : ...
          loop.wait %t : !loop.token
          linalg.generic ... ins(%l1a, ...) ...
        }

    becomes

        %a = memref.subview %A[%i, 0] [32, 64] [1, 1] : ...
        %t = loop.copy_async %a -> %l1a : ...
        loop.wait %t : !loop.token
        scf.for %j = %c0 to %c64 step %c32 {
          linalg.generic ... ins(%l1a, ...) ...
        }
    """

    name = "loop-hoist-copies"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        while hoist_once(op):
            pass
