"""Loading what installed packages register through entry points (machines, pipelines, instructions).

Each registry of ziggurat that plugins extend from their package metadata reads its entry
point group through `loaded_entry_points`, so a plugin that fails to import is reported the
same way everywhere: a diagnostic naming the entry point, not a traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib.metadata import entry_points

from ziggurat.diagnostics import Diagnostic, DiagnosticError


def loaded_entry_points(
    group: str, error: type[DiagnosticError] = DiagnosticError
) -> Iterator[tuple[str, object, str]]:
    """(name, loaded object, where) for each entry point of `group`; `where` names the entry
    point for the caller's own diagnostics about what it loaded to."""
    for entry_point in entry_points(group=group):
        where = f"entry point '{entry_point.name} = {entry_point.value}' in group '{group}'"
        try:
            loaded = entry_point.load()
        except Exception as e:  # a broken plugin is the user's to fix, not an internal error
            raise error(Diagnostic("error", f"cannot load {where}: {type(e).__name__}: {e}")) from e
        yield entry_point.name, loaded, where
