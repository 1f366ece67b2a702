"""The `Context` every ziggurat tool parses with: all dialects of the xDSL multiverse.

The multiverse is xDSL's own dialects plus every package registered through the
`xdsl.universe` entry point: ziggurat itself and any plugin. Dialects are
registered, not loaded, so each one is imported the first time it is used.
"""

from functools import cache

from xdsl.context import Context
from xdsl.universe import Universe

from ziggurat.diagnostics import Diagnostic, DiagnosticError


@cache
def multiverse() -> Universe:
    """xDSL's universe merged with every `xdsl.universe` entry point (scanned once per process)."""
    try:
        return Universe.get_multiverse()
    except ValueError as e:
        # Two packages registering one dialect or pass name: the user's installation, not our bug.
        raise DiagnosticError(
            Diagnostic("error", f"conflicting xdsl.universe plugins: {e}")
        ) from None


def default_context() -> Context:
    """A fresh Context with every dialect of the multiverse registered."""
    ctx = Context()
    for name, factory in multiverse().all_dialects.items():
        ctx.register_dialect(name, factory)
    return ctx
