"""`npu-hoist-invariant{machine=NAME}`: loop-invariant code motion for npu instructions, which have memory
effects and so are left alone by xDSL's `licm` (a conv epilogue's bias cast and broadcast, repeated in
every iteration of its tile loop; docs/lowering.md, section 7).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import memref, scf
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from ziggurat.dialects import npu
from ziggurat.machine import Machine
from ziggurat.transforms.npu import defined_functions, has_sync, pass_machine


def _defined_outside(value: SSAValue, loop: scf.ForOp) -> bool:
    owner = value.owner.parent_op() if isinstance(value, BlockArgument) else value.owner
    return owner is not None and owner is not loop and not loop.is_ancestor(owner)


def _same(a: Operation, b: Operation) -> bool:
    """The same instruction on the same values (of two with the same name and operands)."""
    return a.properties == b.properties and a.attributes == b.attributes


def _fill_key(
    group: list[tuple[Operation, list[Operation]]], written: set[SSAValue]
) -> tuple | None:
    """What a hoisted group writes into its one buffer, that buffer left out: groups with the same
    key fill buffers of one type with the same values. None for a group writing several buffers."""
    if len(written) != 1:
        return None
    (buffer,) = written
    return (
        buffer.type,
        *(
            (
                member.name,
                tuple(None if v is buffer else v for v in member.operands),
                tuple(sorted(member.properties.items())),
                tuple(sorted(member.attributes.items())),
            )
            for member, _ in group
        ),
    )


@dataclass
class _Loop:
    """What the instructions of one loop read and write, per buffer."""

    loop: scf.ForOp
    machine: Machine

    def __post_init__(self) -> None:
        self.writers: dict[SSAValue, list[Operation]] = {}
        self.opaque: set[SSAValue] = set()
        """Buffers some op in the loop uses without saying how (no windows, or not an instruction)."""
        self.windows: dict[Operation, list[npu.BufferWindow]] = {}
        self.groups: dict[frozenset[SSAValue], list[tuple[Operation, list[Operation]]] | None] = {}
        """`writers_group` per set of buffers written; forgotten when a group moves, as that may let
        the readers of its buffers move."""
        for op in self.loop.body.walk():
            windows = op.buffer_windows(self.machine) if isinstance(op, npu.NpuOperation) else None
            if windows is None:
                self.opaque.update(v for v in op.operands if isinstance(v.type, MemRefType))
                continue
            self.windows[op] = windows
            for window in windows:
                if window.write:
                    self.writers.setdefault(window.buffer, []).append(op)

    def hoist(self) -> None:
        body = self.loop.body.block
        self.order = {op: index for index, op in enumerate(body.ops)}
        filled: dict[tuple, SSAValue] = {}
        """Per `_fill_key`, the buffer a group already hoisted from this loop fills."""
        for op in list(body.ops):
            if op.parent is not body:
                continue  # erased as a duplicate, or moved with its group
            group = self.invariant_group(op)
            if group is None:
                continue
            for _member, duplicates in group:
                for duplicate in duplicates:
                    Rewriter.erase_op(duplicate)
            written = self.written(op)
            key = _fill_key(group, written)
            if key in filled:
                # the same values into another buffer (each of loop-double-buffer's stages broadcasts
                # the bias into its own): read the first, so that one buffer stays live, not two
                (buffer,) = written
                for member, _ in group:
                    Rewriter.erase_op(member)
                buffer.replace_all_uses_with(filled[key])
                Rewriter.erase_op(buffer.owner)
                continue
            if key is not None:
                (filled[key],) = written
            for member, _ in group:
                member.detach()
                Rewriter.insert_op(member, InsertPoint.before(self.loop))

    def written(self, op: Operation) -> set[SSAValue]:
        return {w.buffer for w in self.windows.get(op, ()) if w.write}

    def movable(self, op: Operation) -> bool:
        """An instruction directly in the body, on values from outside the loop, writing local buffers
        it does not read, every buffer it touches known to the pass."""
        if op.regions or op.parent is not self.loop.body.block:
            return False
        windows = self.windows.get(op)  # none for flags and barriers, which touch no buffer
        if not windows or not all(_defined_outside(v, self.loop) for v in op.operands):
            return False
        written = {w.buffer for w in windows if w.write}
        read = {w.buffer for w in windows if not w.write}
        return (
            bool(written)
            and not written & read
            and not (written | read) & self.opaque
            and all(isinstance(b.owner, memref.AllocOp) for b in written)
            and not any(self.writers.get(b) for b in read)
        )

    def invariant_group(self, op: Operation) -> list[tuple[Operation, list[Operation]]] | None:
        """The instructions that write what `op` writes, `op` first, each with its copies in the loop,
        when together they can move before it: each movable and writing the same buffers, every
        other use of those buffers inside the loop and after the last of them."""
        if not self.movable(op):
            return None
        written = self.written(op)
        key = frozenset(written)
        if key not in self.groups:
            self.groups[key] = self.writers_group(written)
        group = self.groups[key]
        if group is None or group[0][0] is not op:
            return None
        for member, duplicates in group:
            for dropped in (member, *duplicates):
                for buffer in written:
                    self.writers[buffer].remove(dropped)
        self.groups.clear()
        return group

    def writers_group(
        self, written: set[SSAValue]
    ) -> list[tuple[Operation, list[Operation]]] | None:
        """`invariant_group` for whichever op comes first in it: the same for every writer of
        `written`, so it is asked once per set of buffers (asking per writer was quadratic in a
        body with hundreds of instructions writing one buffer)."""
        writers = sorted({w for b in written for w in self.writers.get(b, ())}, key=self.position)
        if any(self.written(w) != written or not self.movable(w) for w in writers):
            return None
        copies: dict[tuple, list[list[Operation]]] = {}
        """Per name and operands, the writers that are one instruction (each list: one and its copies)."""
        for writer in writers:
            same = copies.setdefault((writer.name, tuple(writer.operands)), [])
            found = next((kind for kind in same if _same(kind[0], writer)), None)
            if found is None:
                same.append([writer])
            else:
                found.append(writer)
        group = sorted(
            ((kind[0], kind[1:]) for same in copies.values() for kind in same),
            key=lambda m: self.position(m[0]),
        )
        last = self.position(group[-1][0])
        members = set(writers)
        for buffer in written:
            for use in buffer.uses:
                if use.operation in members:
                    continue
                if not self.loop.is_ancestor(use.operation) or self.position(use.operation) <= last:
                    return None
        return group

    def position(self, op: Operation) -> int:
        """The place in the body of the op that is or holds `op`."""
        return self.order[self.loop.body.block.find_ancestor_op_in_block(op)]


@dataclass(frozen=True)
class NpuHoistInvariantPass(ModulePass):
    """Move instructions that write the same values in every iteration of a loop before it.

    The instructions directly in a loop's body that write one set of buffers (a
    broadcast and its masked tail, say) move before the loop together, in order,
    when every operand of each is defined outside the loop; they write only local
    buffers that nothing outside the loop uses, and read none of them; nothing else
    in the loop writes a buffer they touch, except identical instructions
    (loop-double-buffer's stages), which are erased; and nothing in the body before the
    last of them uses a buffer they write. Every instruction must declare the
    buffers it touches (`buffer_windows`); one that does not keeps the loop's
    instructions on those buffers where they are. Loops are visited innermost
    first. Run it before `npu-plan-memory` and `npu-insert-sync`; a function that
    already has flags or barriers is left alone.

        scf.for %i = ... {
          npu.vec.cast %bias -> %bias32
          npu.vec.broadcast %bias32 -> %spread
          npu.vec.add %acc, %spread -> %acc
        }

    becomes

        npu.vec.cast %bias -> %bias32
        npu.vec.broadcast %bias32 -> %spread
        scf.for %i = ... {
          npu.vec.add %acc, %spread -> %acc
        }

    Options: `machine` (a preset or a machine TOML file; default: the module's `npu.machine`).
    """

    name = "npu-hoist-invariant"

    machine: str | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        machine = pass_machine(op, self.machine, self.name)
        for function in defined_functions(op):
            if has_sync(function):
                continue
            loops = [
                inner for inner in function.walk(region_first=True) if isinstance(inner, scf.ForOp)
            ]
            for (
                loop
            ) in loops:  # innermost first: what leaves a loop may leave the one around it too
                _Loop(loop, machine).hoist()
