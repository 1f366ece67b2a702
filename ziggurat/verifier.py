"""Verifying a module op by op, each failure a diagnostic at the failing op's own location.

`verify_module` runs xDSL's verifier of every op (without descending: each nested op is visited
on its own), the checks `ziggurat.xdsl_workarounds` adds where xDSL's are missing or crash, and
MLIR's SSA dominance rule, and reports every failing op at once in one `DiagnosticError`.
"""

from __future__ import annotations

from xdsl.ir import Operation, OpResult
from xdsl.traits import NoTerminator
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from ziggurat.diagnostics import (
    Diagnostic,
    DiagnosticError,
    diagnostic_at,
    exception_message,
    note_at,
)
from ziggurat.xdsl_workarounds import (
    VERIFIERS_AFTER_XDSL,
    VERIFIERS_BEFORE_XDSL,
    Dominance,
    without_module_dump,
)


def verify_module(module: Operation) -> None:
    """Verify every op of `module`; `DiagnosticError` with one diagnostic per failing op, at that op."""
    with without_module_dump():
        _verify_ops(module)


def _verify_ops(module: Operation) -> None:
    diagnostics: list[Diagnostic] = []
    dominance = Dominance()
    for op in module.walk():
        try:
            for verify in VERIFIERS_BEFORE_XDSL:
                verify(op)
            op.verify(verify_nested_ops=False)
            _verify_regions_not_empty(op)
            for verify in VERIFIERS_AFTER_XDSL:
                verify(op)
        except DiagnosticException as e:
            diagnostics.append(diagnostic_at(op, "error", f"'{op.name}' op {exception_message(e)}"))
            continue
        for index, operand in enumerate(op.operands):
            if not dominance.dominates_use(operand, op):
                diagnostic = diagnostic_at(
                    op, "error", f"'{op.name}' op operand #{index} does not dominate this use"
                )
                if isinstance(operand, OpResult):
                    diagnostic.notes.append(note_at(operand.op, "operand defined here"))
                diagnostics.append(diagnostic)
                break
    if diagnostics:
        raise DiagnosticError(diagnostics)


def _verify_regions_not_empty(op: Operation) -> None:
    # Block.verify makes this check, but `verify_nested_ops=False` skips it.
    if op.has_trait(NoTerminator):
        return
    for region in op.regions:
        if len(region.blocks) == 1 and region.block.first_op is None:
            raise VerifyException(
                "contains an empty block in a single-block region that expects a terminator"
            )
