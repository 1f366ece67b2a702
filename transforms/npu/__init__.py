"""Passes within the npu level: `npu-hoist-invariant` (instructions out of loops), `npu-plan-memory`
(static buffer offsets) and `npu-insert-sync` (flags between pipes).
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation

from ziggurat.diagnostics import error_at
from ziggurat.dialects import npu
from ziggurat.dialects.npu import MACHINE_ATTR
from ziggurat.machine import Machine, load_machine


def has_sync(function: Operation) -> bool:
    """Whether `function` already orders its pipes (flags or barriers, hand-written or inserted):
    the passes that move or share buffers must then leave it as it is, since nothing would order
    what they change."""
    return any(
        isinstance(op, npu.SetFlagOp | npu.WaitFlagOp | npu.BarrierOp) for op in function.walk()
    )


def pass_machine(module: ModuleOp, option: str | None, pass_name: str) -> Machine:
    """The machine a pass targets: its `machine` option, else the module's `npu.machine`."""
    name = option
    if name is None:
        attribute = module.attributes.get(MACHINE_ATTR)
        name = attribute.data if isinstance(attribute, StringAttr) else None
    if name is None:
        raise error_at(
            module,
            f'{pass_name} needs a machine: {pass_name}{{machine=NAME}} or {MACHINE_ATTR} = "NAME" on the module',
        )
    return load_machine(name)


def defined_functions(module: ModuleOp) -> list[func.FuncOp]:
    """The functions of `module` with a body (declarations have nothing to lower)."""
    return [op for op in module.walk() if isinstance(op, func.FuncOp) and op.body.blocks]
