"""Retrying a fusion group with smaller tiles when its buffers do not fit a memory space: the tile-size
rules count what a tile takes, but only the lowering after `tile-and-fuse` decides the final buffers
(docs/lowering.md, "Tiles that fit").
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, i64
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass, PassPipeline

from ziggurat.diagnostics import Diagnostic, DiagnosticError, diagnostic_at, note_at
from ziggurat.dialects.tile import GROUP_ATTR, SIZES_ATTR
from ziggurat.ir.contraction import contraction_dims
from ziggurat.machine import Machine, load_machine
from ziggurat.transforms.tile.tile_and_fuse import (
    Group,
    _override,
    analyze,
    collect_groups,
    epilogue_bytes,
    group_sizes,
)
from ziggurat.transforms.tile.tile_sizes import (
    apply_override,
    candidate_sizes,
    contraction_sizes,
    slice_elements,
)
from ziggurat.transforms.tile.tiling_interface import linear_form, tiling_of

LOG = logging.getLogger(__name__)

MAX_RETRIES = 32
"""Lowerings retried per `apply_passes`, each with one group's tile smaller: a bound on compile time."""


class DoesNotFit(DiagnosticError):
    """A buffer that a memory space cannot hold; `group` and `location` say which op it is for."""

    def __init__(
        self,
        diagnostic: Diagnostic,
        group: str | None,
        location: Attribute | None,
        space: str | None,
        oversubscribed: float | None = None,
        shape: tuple[int, ...] | None = None,
    ):
        super().__init__(diagnostic)
        self.group = group
        self.location = location
        self.space = space
        self.oversubscribed = oversubscribed
        """The bytes the space was asked for over its capacity, where known (> 1)."""
        self.shape = shape
        """The shape of the buffer that does not fit, where known: a group's tile makes buffers
        of its own tile's shape, which tells it from other groups at the same location."""
        self.others: list[DoesNotFit] = []
        """Buffers of other groups that do not fit either, found in the same pass (npu-plan-memory
        plans sets of buffers never live at once apart): one retry shrinks all of their groups."""


def does_not_fit(
    op: Operation,
    message: str,
    space: str,
    needed: int | None = None,
    capacity: int | None = None,
    shape: Sequence[int] | None = None,
) -> DoesNotFit:
    """The error to raise at `op` for a buffer of it (of `shape`) that does not fit `space`:
    `apply_passes` retries its group, with a tile smaller in the ratio `needed` / `capacity`
    (bytes) where they are given."""
    group = op.attributes.get(GROUP_ATTR)
    group_name = group.data if group is not None else None
    oversubscribed = needed / capacity if needed and capacity else None
    return DoesNotFit(
        diagnostic_at(op, "error", message),
        group_name,
        op.location,
        space,
        oversubscribed,
        None if shape is None else tuple(shape),
    )


def _tile_and_fuse_machine(one_pass: ModulePass) -> str | None:
    return getattr(one_pass, "machine", None) if one_pass.name == "tile-and-fuse" else None


def _replace_contents(module: ModuleOp, source: ModuleOp) -> None:
    """Make `module` (whose object callers hold) a copy of `source`."""
    copy = source.clone()
    for block in list(module.body.blocks):
        module.body.detach_block(block)
    for block in list(copy.body.blocks):
        module.body.add_block(copy.body.detach_block(block))
    module.attributes.clear()
    module.attributes.update(copy.attributes)


def apply_passes(
    ctx: Context,
    module: ModuleOp,
    passes: Sequence[ModulePass],
    run: Callable[[int, ModulePass], None] | None = None,
) -> None:
    """Apply `passes` to `module` in order (`run(index, pass)` applies one; default: `pass.apply`),
    retrying with a smaller tile for the group of a buffer that does not fit.

    When `loop-promote-to-memory-space` or `npu-plan-memory` cannot place a buffer they
    raise `DoesNotFit`, naming the op the buffer was made for. This goes back to the
    module as `tile-and-fuse{machine=M}` received it, finds that op's group (its
    `tile.group`, else the ops at its location), gives the group's root `tile.sizes`
    = the next smaller candidate (a contraction's: the tuner's candidates no larger
    in any loop; a vector group's: its outermost loop that can still shrink,
    halved), and runs the passes from `tile-and-fuse` again. Groups that fit are
    never changed; when the group's tile is already the smallest, the error says so.
    A smaller tile that the lowering then refuses with another diagnostic is
    rejected, and the group takes the next one after it, as the tuner discards a
    candidate that does not lower.
    """
    run = run or (lambda index, one: one.apply(ctx, module))
    start = next(
        (i for i, one in enumerate(passes) if _tile_and_fuse_machine(one) is not None), None
    )
    snapshot: ModuleOp | None = None
    retry: _Retry | None = None
    index = 0
    while index < len(passes):
        if index == start and snapshot is None:
            snapshot = module.clone()
        try:
            run(index, passes[index])
        except DoesNotFit as error:
            if snapshot is None or index <= start:
                raise
            retry = retry or _Retry(load_machine(_tile_and_fuse_machine(passes[start])))
            retry.shrink(snapshot, error)
            retry.shrink_others(snapshot, error)
            _replace_contents(module, snapshot)
            index = start
            continue
        except DiagnosticError as error:
            if retry is None or retry.last is None or index <= start:
                raise
            if not retry.reject(
                snapshot
            ):  # the lowering refuses the tile just tried: the next smaller one
                raise _tried(error, retry) from None
            _replace_contents(module, snapshot)
            index = start
            continue
        index += 1


def _tried(error: DiagnosticError, retry: _Retry) -> DiagnosticError:
    """`error`, which a smaller tile met, with a note on which tile and why it was tried."""
    root = retry.last[0]
    return DiagnosticError([*error.diagnostics, note_at(root, retry.why())])


def _with_note(error: DoesNotFit, note: str) -> DoesNotFit:
    """`error` with `note` appended to its message: the last word on a buffer that does not fit."""
    first = error.diagnostics[0]
    changed = Diagnostic(
        first.severity,
        f"{first.message}; {note}",
        first.file,
        first.line,
        first.col,
        first.source_line,
        first.notes,
        first.name,
    )
    noted = DoesNotFit(
        changed, error.group, error.location, error.space, error.oversubscribed, error.shape
    )
    noted.others = error.others
    return noted


class FittingPipeline(PassPipeline):
    """xDSL's `PassPipeline` (passes with a callback between them) applied by `apply_passes`."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.passes:
            if self.callback is not None:
                self.callback(None, op, None)
            return

        def run(index: int, one: ModulePass) -> None:
            if self.callback is not None and index == 0:
                self.callback(None, op, one)
            one.apply(ctx, op)
            if self.callback is not None:
                self.callback(
                    one, op, self.passes[index + 1] if index + 1 < len(self.passes) else None
                )

        apply_passes(ctx, op, self.passes, run)


# --------------------------------------------------------------------------- #
# Which group, and its next smaller tile
# --------------------------------------------------------------------------- #


class _Retry:
    """The tiles `apply_passes` tried: which group's tile it changed last, and those the lowering refused."""

    def __init__(self, machine: Machine):
        self.machine = machine
        self.count = 0
        self.last: tuple[Operation, list[int], DoesNotFit] | None = None
        """The root given a smaller tile last, the tile it had, and the error that made it smaller."""
        self.rejected: dict[Operation, list[list[int]]] = {}
        self.innocent: dict[tuple[str, str | None], set[Operation]] = {}
        """By failure site: the roots whose smaller tile left that failure unchanged."""
        self.twins: list[Operation] = []
        """The roots of the groups like the one given a smaller tile last, with the tile it had: they
        take each tile it takes (a layer repeated in a network fails alike, and would otherwise be
        retried once per repeat, each retry lowering the whole module again)."""

    def _follow(self, root: Operation) -> None:
        for twin in self.twins:
            set_sizes(twin, root.attributes[SIZES_ATTR].get_values())

    def shrink(self, module: ModuleOp, error: DoesNotFit) -> None:
        """Give the group of `error`'s op in `module` (as `tile-and-fuse` receives it) its next smaller
        tile; raise `error`, saying that the tile is the smallest, when it has none, or `error` itself
        when no group holds the op."""
        if self.count == MAX_RETRIES:
            raise _with_note(
                error, f"tiles were made smaller {MAX_RETRIES} times without everything fitting"
            )
        groups = _groups(module)
        self._clear_if_innocent(error, groups)
        innocent = self.innocent.get(_failure_site(error), set())
        found = [
            (group, *_current(group, self.machine))
            for group in _holding(groups, error, self.machine)
        ]
        found = [(group, root, current) for group, root, current in found if root not in innocent]
        if not found:
            raise error
        smallest = None
        for group, root, current in found:
            smaller = _smaller(
                group, root, current, self.machine, error.space, error.oversubscribed
            )
            if self._try(root, current, smaller, error):
                self.twins = _twins(groups, group, current, self.machine)
                self._follow(root)
                return
            smallest = smallest or (root, current)
        root, current = smallest
        name = root.attributes[GROUP_ATTR].data if GROUP_ATTR in root.attributes else root.name
        raise _with_note(
            error,
            f"this is the smallest legal tile of group '{name}' (tile.sizes = [{', '.join(map(str, current))}])",
        )

    def shrink_others(self, module: ModuleOp, error: DoesNotFit) -> None:
        """Give the groups of `error.others` their next smaller tile too (those not already given
        one by `shrink`); one that has none is left for a later retry to report."""
        shrunk = {self.last[0], *self.twins} if self.last is not None else set()
        groups = _groups(module)
        for other in error.others:
            for group in _holding(groups, other, self.machine):
                root, current = _current(group, self.machine)
                if root in shrunk:
                    break
                smaller = _smaller(
                    group, root, current, self.machine, other.space, other.oversubscribed
                )
                sizes = self._next_sizes(root, smaller)
                if sizes is None or self.count == MAX_RETRIES:
                    continue
                LOG.info(
                    "%s: tile.sizes %s -> %s (in the same retry)", _what(other), current, sizes
                )
                set_sizes(root, sizes)
                for twin in _twins(groups, group, current, self.machine):
                    set_sizes(twin, sizes)
                shrunk.add(root)
                break

    def _clear_if_innocent(self, error: DoesNotFit, groups: list[Group]) -> None:
        """When the tile given last left the failure exactly as it was (the same buffers live in the
        same space at the same op) and another group holds that op too, the group given it is not
        what overflows there: it gets its tile back and is not shrunk for this failure again. The
        only group at the op is shrunk further instead (the tile the rules give it may not be the
        one the lowering ends with, so one step may change nothing)."""
        if self.last is None:
            return
        root, before, last_error = self.last
        if _failure_site(last_error) != _failure_site(error) or (
            last_error.diagnostics[0].message != error.diagnostics[0].message
        ):
            return
        if sum(_holds(group, error) for group in groups) < 2:
            return
        LOG.info("tile.sizes of %s back to %s: the failure did not change", root.name, before)
        set_sizes(root, before)
        self._follow(root)
        self.innocent.setdefault(_failure_site(error), set()).add(root)
        self.last = None

    def reject(self, module: ModuleOp) -> bool:
        """The lowering refused the tile given last: give its group the next smaller one instead
        (False: there is none, the group's tile is back to the one that did not fit)."""
        assert self.last is not None
        root, before, error = self.last
        self.rejected.setdefault(root, []).append(list(root.attributes[SIZES_ATTR].get_values()))
        set_sizes(root, before)
        group = next(group for group in _groups(module) if root in group.ops)
        smaller = _smaller(group, root, before, self.machine, error.space, error.oversubscribed)
        tried = self._try(root, before, smaller, error)
        self._follow(root)
        return tried

    def why(self) -> str:
        """What the lowering was trying when it failed: the tile it gave a group, and why."""
        assert self.last is not None
        root, before, error = self.last
        tried = ", ".join(map(str, self.rejected[root][-1])) if self.rejected.get(root) else "?"
        return (
            f"this group was lowered with tile.sizes = [{tried}], the smallest that was left to try, as its "
            f"tile.sizes = [{', '.join(map(str, before))}] did not fit: {error.diagnostics[0].message}"
        )

    def _try(
        self, root: Operation, current: list[int], smaller: list[list[int]], error: DoesNotFit
    ) -> bool:
        """Give `root` the first of `smaller` not rejected yet; False when there is none."""
        sizes = self._next_sizes(root, smaller)
        if sizes is None:
            return False
        if self.count == MAX_RETRIES:
            raise _with_note(
                error, f"tiles were made smaller {MAX_RETRIES} times without everything fitting"
            )
        LOG.info("%s: tile.sizes %s -> %s", _what(error), current, sizes)
        self.count += 1
        self.last = root, current, error
        set_sizes(root, sizes)
        return True

    def _next_sizes(self, root: Operation, smaller: list[list[int]]) -> list[int] | None:
        """The first of `smaller` that the lowering has not refused for `root`."""
        return next((c for c in smaller if c not in self.rejected.get(root, [])), None)


def _what(error: DoesNotFit) -> str:
    """The first clause of the error (which buffer, which space) for the log."""
    return error.diagnostics[0].message.split(":")[0]


def _holding(groups: list[Group], error: DoesNotFit, machine: Machine) -> list[Group]:
    """The groups of `groups` that hold `error`'s op: first those whose output tile has the
    elements of the buffer that does not fit (once, or twice for a double-buffered one: a
    group's buffers have its tile's shape; a transpose that `graph-space-to-depth` adds
    before a patchify conv has the conv's location but not its tile), then the one with the
    most ops at its location: ops a lowering adds for a group's operand (a cast to the
    computing type) carry the location of the op they serve, so the group with the most ops
    there is the likeliest owner."""
    found = [group for group in groups if _holds(group, error)]
    if len(found) < 2:
        return found
    elements = None if error.shape is None else math.prod(error.shape)

    def tile_made_it(group: Group) -> bool:
        if elements is None:
            return False
        tile = _output_tile_elements(group, machine)
        return tile is not None and elements in (tile, 2 * tile)

    return sorted(found, key=lambda group: (-tile_made_it(group), -_ops_at(group, error.location)))


def _output_tile_elements(group: Group, machine: Machine) -> int | None:
    """Elements of the output tile of `group`'s root at its current tile sizes."""
    root, sizes = _current(group, machine)
    maps = tiling_of(root).indexing_maps(root)
    if not maps:
        return None
    forms = [linear_form(result)[0] for result in maps[-1].results]
    return slice_elements(forms, sizes)


def _ops_at(group: Group, location: Attribute | None) -> int:
    return sum(op.location == location for op in group.ops)


def _failure_site(error: DoesNotFit) -> tuple[str, str | None]:
    """Where a buffer did not fit: the op it was for (its group, else its location) and the space."""
    return error.group or str(error.location), error.space


def _signature(group: Group) -> tuple:
    """What makes two groups lower alike: their ops, types and attributes but the tile's own."""
    return tuple(
        (
            op.name,
            tuple(str(operand.type) for operand in op.operands),
            tuple(str(result.type) for result in op.results),
            str(op.properties),
            str({k: v for k, v in op.attributes.items() if not k.startswith("tile.")}),
        )
        for op in group.ops
    )


def _groups(module: ModuleOp) -> list[Group]:
    """The fusion groups of every function `module` defines, as `tile-and-fuse` collects them."""
    return [
        group
        for function in module.walk()
        if isinstance(function, func.FuncOp) and not function.is_declaration
        for group in collect_groups(function.body.block)
    ]


def _twins(
    groups: list[Group], group: Group, current: list[int], machine: Machine
) -> list[Operation]:
    """The roots of the others of `groups` with `group`'s signature and tile `current`."""
    signature = _signature(group)
    twins = []
    for other in groups:
        if other is group or _signature(other) != signature:
            continue
        root, sizes = _current(other, machine)
        if sizes == current:
            twins.append(root)
    return twins


def _holds(group: Group, error: DoesNotFit) -> bool:
    if error.group is not None:
        return any(
            op.attributes.get(GROUP_ATTR) is not None
            and op.attributes[GROUP_ATTR].data == error.group
            for op in group.ops
        )
    return error.location is not None and any(op.location == error.location for op in group.ops)


def _current(group: Group, machine: Machine) -> tuple[Operation, list[int]]:
    """The op whose `tile.sizes` schedules `group` and the tile it gets now (per loop of its domain)."""
    anchor = group.anchor
    if anchor is not None and contraction_dims(anchor).is_matrix_shaped:
        extents = [loop.extent for loop in tiling_of(anchor).domain(anchor)]
        override = _override(anchor, ())
        if override is not None:
            return anchor, apply_override(extents, override)
        return anchor, contraction_sizes(anchor, machine, extents, epilogue_bytes(group))
    return group.last, group_sizes(group, analyze(group), machine, ()).outer


def _smaller(
    group: Group,
    root: Operation,
    current: list[int],
    machine: Machine,
    space: str | None,
    oversubscribed: float | None = None,
) -> list[list[int]]:
    """The tiles smaller than `current` to try, next first.

    A contraction: the tuner's candidates no larger in any loop. Where the space that overflowed holds
    output tiles (the vector space, the accumulator's), the output tile must shrink: those with fewer
    output points, the most first, the longest reduction among them, and when the space was asked for
    `oversubscribed` times its capacity, first those with at most 1/`oversubscribed` of the points (the
    output tiles scale with them: one retry instead of one per step); elsewhere (operand spaces), the
    largest tile first. A vector group: its outermost loop that can shrink, halved (then the next)."""
    if root is group.anchor:
        points = _parallel_points(root, current)
        smaller = [
            list(c)
            for c in candidate_sizes(root, machine, epilogue_bytes(group))
            if list(c) != current and all(s <= t for s, t in zip(c, current))
        ]
        largest_first = sorted(
            smaller, key=lambda c: (math.prod(c), _parallel_points(root, c), c), reverse=True
        )
        if space not in (*machine.vector.spaces, machine.matrix.c_space):
            return largest_first
        fewer = [c for c in smaller if _parallel_points(root, c) < points]
        fewer.sort(key=lambda c: (_parallel_points(root, c), math.prod(c), c), reverse=True)
        if oversubscribed is not None:
            enough = [c for c in fewer if _parallel_points(root, c) * oversubscribed <= points]
            fewer = enough + [c for c in fewer if c not in enough]
        return fewer + [c for c in largest_first if c not in fewer]
    analysis = analyze(group)
    domain = tiling_of(root).domain(root)
    fixed = analysis.whole | {d for d, loop in enumerate(domain) if loop.reduction}
    return [
        [max(1, size // 2) if i == d else s for i, s in enumerate(current)]
        for d, size in enumerate(current)
        if d not in fixed and size > 1
    ]


def set_sizes(op: Operation, sizes: Sequence[int]) -> None:
    op.attributes[SIZES_ATTR] = DenseArrayBase.from_list(i64, list(sizes))


def _parallel_points(op: Operation, sizes: Sequence[int]) -> int:
    return math.prod(s for s, loop in zip(sizes, tiling_of(op).domain(op)) if not loop.reduction)


__all__ = ["MAX_RETRIES", "DoesNotFit", "FittingPipeline", "apply_passes", "does_not_fit"]
