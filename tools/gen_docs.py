"""Reference pages generated from the code: one Markdown page per dialect, one for all passes, one for the tools.

`make docs` runs `python -m ziggurat.tools.gen_docs docs/reference`; the pages are build
output (not committed), so they cannot drift from the op and pass definitions.
"""

from __future__ import annotations

import argparse
import inspect
import os
import subprocess
import sys
from pathlib import Path

from xdsl.ir import Data, Dialect, Operation
from xdsl.irdl import (
    AllOf,
    AnyAttr,
    AnyOf,
    BaseAttr,
    EqAttrConstraint,
    IRDLOperation,
    OptionalDef,
    ParamAttrConstraint,
    RangeLengthConstraint,
    RangeOf,
    VarConstraint,
    VariadicDef,
)
from xdsl.universe import Universe

from ziggurat.cli import run_main, write_atomically
from ziggurat.tools.ziggurat_opt import pass_options

ZIGGURAT_MODULE_PREFIX = "ziggurat."


def _first_paragraph(doc: str | None) -> str:
    if not doc:
        return ""
    return inspect.cleandoc(doc).split("\n\n")[0].replace("\n", " ")


def _rest_of_doc(doc: str | None) -> str:
    if not doc:
        return ""
    paragraphs = inspect.cleandoc(doc).split("\n\n")
    return "\n\n".join(paragraphs[1:])


def _arity(definition: object) -> str:
    if isinstance(definition, OptionalDef):
        return "optional"
    if isinstance(definition, VariadicDef):
        return "variadic"
    return ""


def describe_constraint(constraint: object) -> str:
    """A constraint as a reader writes it (`tensor`, `array<i64>`, `i1 | f32`), not its repr."""
    match constraint:
        case RangeLengthConstraint() | RangeOf():
            inner = getattr(constraint, "constraint", None) or constraint.constr
            return describe_constraint(inner)
        case VarConstraint():
            return describe_constraint(constraint.constraint)
        case BaseAttr():
            return getattr(constraint.attr, "name", constraint.attr.__name__)
        case EqAttrConstraint():
            return str(constraint.attr)
        case AnyOf():
            return " | ".join(describe_constraint(c) for c in constraint.attr_constrs)
        case AllOf():
            # `IntegerType & i1` reads as `i1`: the exact attribute says it all.
            exact = [c for c in constraint.attr_constrs if isinstance(c, EqAttrConstraint)]
            return " & ".join(describe_constraint(c) for c in exact or constraint.attr_constrs)
        case ParamAttrConstraint():
            # Storage parameters (the bytes of an array, the int of an IntegerAttr) say nothing to a reader.
            params = ", ".join(
                describe_constraint(c)
                for c in constraint.param_constrs
                if not isinstance(c, AnyAttr)
                and not (isinstance(c, BaseAttr) and issubclass(c.attr, Data))
            )
            return f"{constraint.base_attr.name}<{params}>" if params else constraint.base_attr.name
    return str(constraint)


def _constraint(definition: object) -> str:
    constraint = getattr(definition, "constr", None)
    return f"`{describe_constraint(constraint)}`" if constraint is not None else ""


def _default(definition: object) -> str:
    default = getattr(definition, "default_value", None)
    return "required" if default is None else f"`{default}`"


def _op_section(op_class: type[Operation]) -> list[str]:
    lines = [f"### `{op_class.name}`", ""]
    summary = _first_paragraph(op_class.__doc__)
    if summary:
        lines += [summary, ""]
    if not issubclass(op_class, IRDLOperation):
        return lines
    op_def = op_class.get_irdl_definition()
    if op_def.assembly_format:
        lines += [f"Syntax: `{op_class.name} {op_def.assembly_format}`", ""]
    rows = (
        [("operand", name, _constraint(d), _arity(d)) for name, d in op_def.operands]
        + [("property", name, _constraint(d), _default(d)) for name, d in op_def.properties.items()]
        + [("result", name, _constraint(d), _arity(d)) for name, d in op_def.results]
    )
    if rows:
        lines += ["| kind | name | constraint | notes |", "|---|---|---|---|"]
        lines += [
            f"| {kind} | `{name}` | {constraint} | {notes} |"
            for kind, name, constraint, notes in rows
        ]
        lines.append("")
    for trait in op_def.traits:
        kind = getattr(trait, "kind", None)
        if kind is not None:
            lines += [f"Fusion pattern kind: `{kind.name}`.", ""]
    details = _rest_of_doc(op_class.__doc__)
    if details:
        lines += [details, ""]
    return lines


def dialect_page(dialect: Dialect) -> str:
    """The reference page of one dialect: every op's summary, syntax, operands, properties, results."""
    lines = [f"# The `{dialect.name}` dialect", ""]
    module = inspect.getmodule(next(iter(dialect.operations), None))
    summary = _first_paragraph(getattr(module, "__doc__", None))
    if summary:
        lines += [summary, ""]
    operations = sorted(dialect.operations, key=lambda op: op.name)
    lines += [f"{len(operations)} operations.", "", "## Operations", ""]
    for op_class in operations:
        lines += _op_section(op_class)
    return "\n".join(lines)


def passes_page(universe: Universe) -> str:
    """The reference page of every ziggurat pass: description and options."""
    lines = ["# Passes", ""]
    for name in sorted(universe.all_passes):
        pass_class = universe.all_passes[name]()
        if not pass_class.__module__.startswith(ZIGGURAT_MODULE_PREFIX):
            continue
        lines += [f"## `{name}`", "", _first_paragraph(pass_class.__doc__), ""]
        details = _rest_of_doc(pass_class.__doc__)
        if details:
            lines += [details, ""]
        options = pass_options(pass_class)
        if options:
            lines += ["| option | type | default |", "|---|---|---|"]
            for option in options:
                default = "required" if option.default is None else f"`{option.default}`"
                lines.append(f"| `{option.name}` | `{option.type}` | {default} |")
            lines.append("")
    return "\n".join(lines)


TOOLS = {
    "ziggurat-opt": "ziggurat.tools.ziggurat_opt",
    "ziggurat-run": "ziggurat.tools.ziggurat_run",
    "ziggurat-compile": "ziggurat.tools.ziggurat_compile",
    "ziggurat-tune": "ziggurat.tools.ziggurat_tune",
    "ziggurat-sweep": "ziggurat.tools.ziggurat_sweep",
    "python -m ziggurat.machine": "ziggurat.machine",
}


def tools_page() -> str:
    """Each tool's `--help`, as the tool itself prints it."""
    lines = ["# Tools", "", "Generated from each tool's `--help`.", ""]
    for tool, module in TOOLS.items():
        usage = subprocess.run(
            [sys.executable, "-m", module, "--help"],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "COLUMNS": "100"},
        ).stdout
        lines += [f"## `{tool}`", "", "```", usage.rstrip(), "```", ""]
    return "\n".join(lines)


def generate(out_dir: Path) -> list[Path]:
    """Write the reference pages of ziggurat's dialects and passes into `out_dir`."""
    from ziggurat.universe import DIALECTS, ZIGGURAT_UNIVERSE

    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, factory in sorted(DIALECTS.items()):
        path = out_dir / f"{name}.md"
        write_atomically(path, dialect_page(factory()))
        written.append(path)
    path = out_dir / "passes.md"
    write_atomically(path, passes_page(ZIGGURAT_UNIVERSE))
    written.append(path)
    path = out_dir / "tools.md"
    write_atomically(path, tools_page())
    written.append(path)
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path, help="folder to write the pages into")
    args = parser.parse_args()

    def run() -> int:
        for path in generate(args.out_dir):
            print(path)
        return 0

    run_main(run)


if __name__ == "__main__":
    main()
