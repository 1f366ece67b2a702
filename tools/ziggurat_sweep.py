r"""`ziggurat-sweep MODEL... --machine BASE --set KEY=V1,V2 ...`: a design-space sweep of the machine model,
compiling, running and checking each model on every machine of a grid derived from one
(docs/distributed.md, "Design-space sweeps").

    ziggurat-sweep examples/graph/small_cnn.mlir mlp.onnx --machine davinci \
        --set memory.l1.capacity=512KiB,1MiB --set 'matrix.shape=[16,16,16],[32,32,16]' -o sweep/
"""

from __future__ import annotations

import argparse
import csv
import io
import itertools
import json
import sys
import tempfile
import time
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ziggurat import numerics
from ziggurat.cli import add_debug_option, parse_command_line, run_main, write_atomically
from ziggurat.context import default_context
from ziggurat.diagnostics import Diagnostic, DiagnosticError, collect_diagnostics, exception_message
from ziggurat.interpreters.interpreter import find_function, random_inputs
from ziggurat.interpreters.npu_interpreter import run_npu
from ziggurat.machine import load_machine, machine_here, machine_sources, split_toml_key
from ziggurat.parsing import parse_source
from ziggurat.testing.differential import input_names, run_at_level
from ziggurat.timing_report import add_timing_option, timed, timing
from ziggurat.tuning.executors import check_cluster, make_executor
from ziggurat.verifier import verify_module

COLUMNS = ("cycles", "microseconds", "numerics", "max_abs_error", "error")
"""What a point's record holds beside its model and machine (`error`: None, or why it failed)."""


# --------------------------------------------------------------------------- #
# The grid and its machine files
# --------------------------------------------------------------------------- #


def split_values(text: str) -> list[str]:
    """`V1,V2` at the commas outside brackets, braces and quotes."""
    values, depth, quote, start = [], 0, None, 0
    for i, char in enumerate(text):
        if quote:
            quote = None if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        elif char == "," and depth == 0:
            values.append(text[start:i])
            start = i + 1
    values.append(text[start:])
    return [value.strip() for value in values]


def parse_value(text: str) -> Any:
    """A `--set` value: TOML if it reads as one (`32`, `[16, 16, 16]`, `"1 MiB"`), else the string."""
    try:
        return tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        return text


def parse_setting(text: str) -> tuple[tuple[str, ...], list[Any]]:
    """`--set KEY=V1,V2`: the key's path and its values.

    The key is a machine-file key by its dotted path (`memory.l1.capacity`,
    `matrix.macs_per_cycle."f16->f32"`); values are separated by commas outside
    brackets, each read as TOML (`32`, `[16, 16, 16]`, `true`) and else as a
    string, so sizes, clocks and bandwidths take the machine file's units
    (`512KiB`, `1.8GHz`).
    """
    key, equals, values = text.partition("=")
    path = split_toml_key(key.strip())
    if not equals or not path:
        raise argparse.ArgumentTypeError(
            f"expected KEY=V1,V2 with KEY a dotted path such as memory.l1.capacity, got '{text}'"
        )
    parts = split_values(values)
    if "" in parts:
        raise argparse.ArgumentTypeError(f"an empty value in '{text}'")
    return path, [parse_value(part) for part in parts]


def toml_key(path: Sequence[str]) -> str:
    return ".".join(
        part if part.replace("_", "").replace("-", "").isalnum() else json.dumps(part)
        for part in path
    )


def toml_value(value: Any) -> str:
    """`value` written as TOML: the types a machine file holds (strings, booleans, numbers, arrays, tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # JSON's escapes are TOML basic-string escapes
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{toml_key([k])} = {toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no TOML for {type(value).__name__}")


def machine_file(base: str, overrides: Sequence[tuple[tuple[str, ...], Any]], name: str) -> str:
    """A machine file that is `base` (a preset name or a path) with `overrides` applied."""
    lines = [f"extends = {toml_value(base)}", f"name = {toml_value(name)}"]
    lines += [f"{toml_key(path)} = {toml_value(value)}" for path, value in overrides]
    return "\n".join(lines) + "\n"


def label(overrides: Sequence[tuple[tuple[str, ...], Any]]) -> str:
    """A point's name: its values by the last part of each key (`capacity=512KiB; shape=[16, 16, 16]`)."""
    return "; ".join(f"{path[-1]}={shown(value)}" for path, value in overrides)


def shown(value: Any) -> str:
    """A value as the table shows it: a string as it is, anything else as TOML."""
    return value if isinstance(value, str) else toml_value(value)


# --------------------------------------------------------------------------- #
# One point: what a worker runs
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class Point:
    """One model on one machine of the grid, self-contained (a worker needs only ziggurat)."""

    index: int
    model: str
    """The model's name in the table (its file's stem)."""
    model_kind: str
    """"mlir" (graph-level IR) or "onnx"."""
    model_data: str | bytes
    base: str
    """The base machine as given (a preset name) or its absolute path."""
    base_files: tuple[tuple[str, str], ...]
    """The files the base is read from (`machine_sources`; none for a preset), for a worker on a
    host without them."""
    overrides: tuple[tuple[tuple[str, ...], Any], ...]
    seed: int = 0


def run_point(point: Point) -> dict[str, Any]:
    """Compile, run and check `point` (its machine file in a temporary folder); a record for the table."""
    start = time.monotonic()
    record: dict[str, Any] = dict.fromkeys(COLUMNS)
    with tempfile.TemporaryDirectory(prefix="ziggurat-sweep-") as folder:
        base = machine_here(point.base, point.base_files)
        path = Path(folder) / f"point{point.index}.toml"
        path.write_text(machine_file(base, point.overrides, f"point{point.index}"))
        try:
            with collect_diagnostics():
                record.update(_compile_and_run(point, str(path)))
        except DiagnosticError as error:
            record["error"] = "; ".join(d.message for d in error.diagnostics)
        except Exception as error:  # a point that does not compile or run is a row with its reason
            record["error"] = exception_message(error)
    record["seconds"] = time.monotonic() - start
    return record


def _compile_and_run(point: Point, machine_path: str) -> dict[str, Any]:
    from ziggurat.lowering.precision import choose_precision
    from ziggurat.tools.ziggurat_compile import lowering_passes

    machine = load_machine(machine_path)
    ctx = default_context()
    if point.model_kind == "onnx":
        from ziggurat.frontends.onnx import import_loaded_model, load_model

        model, _ = load_model(point.model_data)
        module = import_loaded_model(model, {}, point.model)
    else:
        module = parse_source(ctx, point.model_data, point.model)
    verify_module(module)
    inputs = random_inputs(find_function(module, "main"), seed=point.seed)
    expected = run_at_level(module, inputs, "main")
    precision = choose_precision("auto", machine, module, inputs)
    for one in lowering_passes(machine_path, "npu", precision):
        one.apply(ctx, module)
    verify_module(module)
    result = run_npu(
        module, machine, dict(zip(input_names(find_function(module, "main")), inputs)), "main"
    )
    checks = [
        numerics.compare(actual, want, name=f"output '#{i}'", computed_in=precision.dtype)
        for i, (actual, want) in enumerate(zip(result.outputs, expected, strict=True))
    ]
    cycles = result.stats.total_cycles
    return {
        "cycles": cycles,
        "microseconds": cycles / machine.clock_hz * 1e6,
        "numerics": "ok" if all(c.ok for c in checks) else "FAIL",
        "max_abs_error": max((c.max_abs for c in checks), default=0.0),
        "error": next((f"numerics differ: {c}" for c in checks if not c.ok), None),
    }


# --------------------------------------------------------------------------- #
# The sweep
# --------------------------------------------------------------------------- #


def read_model(path: Path) -> tuple[str, str | bytes]:
    try:
        if path.suffix == ".onnx":
            return "onnx", path.read_bytes()
        return "mlir", path.read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise DiagnosticError(Diagnostic("error", f"cannot read model '{path}': {error}")) from None


def make_points(
    models: Sequence[Path],
    base: str,
    settings: Sequence[tuple[tuple[str, ...], list[Any]]],
    seed: int = 0,
) -> list[Point]:
    """Every machine of the grid times every model, the machines checked first (a diagnostic names
    the point and the problem)."""
    base_files = machine_sources(base)  # a diagnostic for a machine that does not load
    base_ref = str(Path(base).resolve()) if "/" in base or base.endswith(".toml") else base
    keys = [path for path, _ in settings]
    grid = [
        tuple(zip(keys, values))
        for values in itertools.product(*(values for _, values in settings))
    ]
    with tempfile.TemporaryDirectory(prefix="ziggurat-sweep-") as folder:
        for i, overrides in enumerate(grid):
            path = Path(folder) / f"point{i}.toml"
            path.write_text(machine_file(base_ref, overrides, f"point{i}"))
            try:
                load_machine(path)
            except DiagnosticError as error:
                messages = "; ".join(d.message for d in error.diagnostics)
                raise DiagnosticError(
                    Diagnostic("error", f"machine point {label(overrides)}: {messages}")
                ) from None
    loaded = [(path.stem, *read_model(path)) for path in models]
    return [
        Point(m * len(grid) + i, name, kind, data, base_ref, base_files, overrides, seed)
        for m, (name, kind, data) in enumerate(loaded)
        for i, overrides in enumerate(grid)
    ]


def sweep(points: Sequence[Point], executor, on_record=lambda record: None) -> list[dict[str, Any]]:
    """Run every point on `executor`; a record per point, in the points' order."""
    records: dict[int, dict[str, Any]] = {}

    def done(point: Point, result: dict[str, Any]) -> None:
        records[point.index] = {**describe(point), **result}
        on_record(records[point.index])

    def failed(point: Point, reason: str) -> None:
        done(point, {**dict.fromkeys(COLUMNS), "error": reason, "seconds": None})

    executor.run(run_point, points, done, failed)
    return [records[p.index] for p in points if p.index in records]


def describe(point: Point) -> dict[str, Any]:
    """A record's first fields: the model, the point's name and each override by its dotted key."""
    return {
        "model": point.model,
        "machine": label(point.overrides),
        **{".".join(k): v for k, v in point.overrides},
    }


def write_csv(records: Sequence[dict[str, Any]], keys: Sequence[str]) -> str:
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(["model", *keys, *COLUMNS])
    for r in records:
        writer.writerow([r["model"], *(shown(r[k]) for k in keys), *(r[c] for c in COLUMNS)])
    return text.getvalue()


def table(records: Sequence[dict[str, Any]], keys: Sequence[str]) -> str:
    rows = [["model", *keys, "cycles", "time (us)", "numerics"]]
    for r in records:
        rows.append(
            [
                r["model"],
                *(shown(r[k]) for k in keys),
                "-" if r["cycles"] is None else f"{r['cycles']:,.0f}",
                "-" if r["microseconds"] is None else f"{r['microseconds']:.3f}",
                r["numerics"] if r["error"] is None else f"failed: {r['error']}",
            ]
        )
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]) - 1)]
    return "\n".join(
        "  ".join(str(c).ljust(w) for c, w in zip(row, widths)) + "  " + str(row[-1])
        for row in rows
    )


def plot(records: Sequence[dict[str, Any]], path: Path) -> str | None:
    """Cycles per machine point, a panel per model; None when written, else why not."""
    try:
        import matplotlib
    except ImportError:
        return "no plot: matplotlib is not installed (pip install matplotlib)"
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = list(dict.fromkeys(r["model"] for r in records))
    figure, axes = plt.subplots(
        1, len(models), figsize=(max(5, 4.5 * len(models)), 4.2), squeeze=False
    )
    for axis, model in zip(axes[0], models):
        rows = [r for r in records if r["model"] == model]
        axis.bar(range(len(rows)), [r["cycles"] or 0 for r in rows], color="tab:blue")
        axis.set_xticks(
            range(len(rows)), [r["machine"].replace("; ", "\n") for r in rows], fontsize=7
        )
        axis.set_title(model)
        axis.set_ylabel("cycles")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return None


def build_argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ziggurat-sweep",
        description="Compile and run models on a grid of machine models derived from one.",
    )
    parser.add_argument(
        "models",
        metavar="MODEL",
        nargs="+",
        type=Path,
        help="ONNX models or graph-level .mlir files",
    )
    parser.add_argument(
        "--machine", required=True, help="the base machine: a preset or a machine TOML file"
    )
    parser.add_argument(
        "--set",
        dest="settings",
        action="append",
        type=parse_setting,
        default=[],
        metavar="KEY=V1,V2",
        help="a machine file key by dotted path and the values it takes (repeat: the grid is every combination)",
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        metavar="DIR",
        help="write sweep.csv, sweep.json and sweep.png to DIR",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        help="points in flight at once (default: all cores, or the Ray cluster's CPUs)",
    )
    parser.add_argument(
        "--cluster",
        metavar="WHERE",
        help="where the points run: local (default), ray (RAY_ADDRESS, else a local Ray instance), ray://HOST:PORT",
    )
    parser.add_argument(
        "--task-timeout",
        type=float,
        default=1800.0,
        metavar="SECONDS",
        help="stop a point after this long, retry it once, then count it failed (default: 1800)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    add_timing_option(parser)
    add_debug_option(parser)
    return parser


def main_with(args: argparse.Namespace) -> int:
    check_cluster(args.cluster)
    if args.jobs is not None and args.jobs < 1:
        raise DiagnosticError(Diagnostic("error", f"--jobs must be at least 1, got {args.jobs}"))
    with timed("grid"):
        points = make_points(args.models, args.machine, args.settings, args.seed)
    keys = [".".join(path) for path, _ in args.settings]
    with timed("start workers"):
        executor = make_executor(args.cluster, args.jobs, args.task_timeout)
    try:
        with timed("points"):
            records = sweep(
                points,
                executor,
                lambda r: print(
                    f"sweep: {r['model']} [{r['machine']}]: "
                    + (
                        f"{r['cycles']:,.0f} cycles"
                        if r["cycles"] is not None
                        else f"failed: {r['error']}"
                    ),
                    file=sys.stderr,
                    flush=True,
                ),
            )
    finally:
        with timed("stop workers"):
            executor.close()
    with timed("table"):
        print(table(records, keys))
    if args.output is not None:
        args.output.mkdir(parents=True, exist_ok=True)
        report = {
            "base": args.machine,
            "grid": {".".join(path): values for path, values in args.settings},
            "models": [str(path) for path in args.models],
            "points": records,
        }
        with timed("write"):
            write_atomically(args.output / "sweep.json", json.dumps(report, indent=1) + "\n")
            write_atomically(args.output / "sweep.csv", write_csv(records, keys))
        with timed("plot"):
            why_not = plot(records, args.output / "sweep.png")
        if why_not:
            print(why_not, file=sys.stderr)
    return 0 if all(r["error"] is None for r in records) and len(records) == len(points) else 1


def main(argv: Sequence[str] | None = None) -> None:
    parser = build_argument_parser()

    def sweep_timed() -> int:
        args = parse_command_line(parser, argv)
        with timing(args.timing):
            return main_with(args)

    run_main(sweep_timed)


if __name__ == "__main__":
    main()
