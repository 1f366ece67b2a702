"""`ziggurat-tune FILE --machine M`: search the schedule of each fusion group of a graph-level module on
the machine model (tile sizes, buffering depth, loop order, staged reduction, layout) and write the
module with the winners on it, for `lower-to-npu` to honour (docs/performance.md, "Autotuning";
docs/distributed.md for `--cluster`).

    ziggurat-tune model.mlir --machine davinci -o tuned.mlir --cache tune-cache.json
    ziggurat-opt tuned.mlir -p 'lower-to-npu{machine=davinci}'

    ziggurat-tune model.mlir --machine davinci --cores 32 -o tuned32.mlir   # the split searched too
    ziggurat-opt tuned32.mlir -p 'lower-to-npu{machine=davinci cores=32}'
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.progress import Progress
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from ziggurat.cli import (
    add_debug_option,
    check_cores_option,
    parse_command_line,
    run_main,
    write_atomically,
)
from ziggurat.context import default_context
from ziggurat.diagnostics import Diagnostic, DiagnosticError
from ziggurat.dialects import graph
from ziggurat.dialects.tile import LAYOUT_ATTR
from ziggurat.lowering.pipelines import quoted
from ziggurat.machine import load_machine
from ziggurat.parsing import parse_source
from ziggurat.printing import Printer
from ziggurat.testing.differential import apply_pipeline, build_passes
from ziggurat.timing_report import add_timing_option, timed, timing
from ziggurat.transforms.tile.fit import FittingPipeline
from ziggurat.tuning.executors import check_cluster, make_executor
from ziggurat.tuning.layouts import convert_marked, tune_layouts
from ziggurat.tuning.space import (
    Group,
    loop_orders,
    set_buffering,
    set_interchange,
    set_sizes,
    set_stage_reduction,
    stages_reduction,
    tunable_groups,
)
from ziggurat.tuning.tuner import Choice, Measurement, TuneCache, TuneOptions, tune
from ziggurat.verifier import verify_module

_STDERR = Console(stderr=True)


def build_argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ziggurat-tune",
        description="Tune the tile sizes of each fusion group on the machine model.",
        epilog="The output lowers with: ziggurat-opt OUT -p 'lower-to-npu{machine=M}' "
        "(with --cores N: 'lower-to-npu{machine=M cores=N}', or ziggurat-compile OUT --cores N)",
    )
    parser.add_argument("input", metavar="FILE", help="graph-level IR ('-' for stdin)")
    parser.add_argument(
        "--machine",
        required=True,
        help="a preset (davinci, systolic, tensorcore) or a machine TOML file",
    )
    parser.add_argument(
        "--cores",
        type=int,
        default=1,
        metavar="N",
        help="tune for N cores of the machine, as lower-to-npu{cores=N} divides each layer's tiles "
        "among them: every candidate is lowered for and run on N cores, and the candidates include "
        "each tile split among them (default: 1)",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        type=Path,
        help="write the tuned IR to FILE (default: stdout)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        help="measurements in flight at once (default: all cores, or all CPUs of the Ray cluster)",
    )
    add_cluster_options(parser)
    parser.add_argument(
        "--budget",
        type=float,
        metavar="SECONDS",
        help="stop launching measurements after this long",
    )
    parser.add_argument(
        "--top-k",
        type=int,
        default=4,
        help="schedules measured per group, the default included (default: 4)",
    )
    parser.add_argument(
        "--bufferings",
        type=depth_list,
        default=TuneOptions.bufferings,
        metavar="N,N",
        help="buffering depths tried on each group's winning tile sizes besides the default 2 ('' for none; default: 1,3)",
    )
    parser.add_argument(
        "--no-stage",
        dest="stage",
        action="store_false",
        help="do not measure candidates with their reduction staged (tile.stage_reduction)",
    )
    parser.add_argument(
        "--cache", metavar="FILE", type=Path, help="JSON file of tuned groups, read and updated"
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the random inputs the numerics are checked on"
    )
    add_timing_option(parser)
    add_debug_option(parser)
    return parser


def add_cluster_options(parser: argparse.ArgumentParser) -> None:
    """`--cluster` and `--task-timeout`: where measurements run (`tuning/executors.py`)."""
    parser.add_argument(
        "--cluster",
        metavar="WHERE",
        help="where measurements run: local (default: this machine's processes), ray (the cluster RAY_ADDRESS names, "
        "else a local Ray instance), ray://HOST:PORT or ray:HOST:PORT",
    )
    parser.add_argument(
        "--task-timeout",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="stop a measurement after this long, retry it once, then count it failed (default: 600)",
    )


def depth_list(text: str) -> tuple[int, ...]:
    """`--bufferings`: comma-separated depths of at least 1 ('' for none)."""
    try:
        depths = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got '{text}'"
        ) from None
    if any(depth < 1 for depth in depths):
        raise argparse.ArgumentTypeError(f"buffering depths must be at least 1, got '{text}'")
    return depths


def check_options(args: argparse.Namespace) -> None:
    for name, value, minimum in (("--jobs", args.jobs, 1), ("--top-k", args.top_k, 1)):
        if value is not None and value < minimum:
            raise DiagnosticError(
                Diagnostic("error", f"{name} must be at least {minimum}, got {value}")
            )
    machine = load_machine(args.machine)  # an unknown machine is one diagnostic, before any work
    check_cores_option(args.cores, machine.name, machine.cores)
    if args.budget is not None and not args.budget > 0:
        raise DiagnosticError(
            Diagnostic("error", f"--budget must be a positive number of seconds, got {args.budget}")
        )
    check_cluster_options(args)


def check_cluster_options(args: argparse.Namespace) -> None:
    check_cluster(args.cluster)
    if not args.task_timeout > 0:
        raise DiagnosticError(
            Diagnostic(
                "error",
                f"--task-timeout must be a positive number of seconds, got {args.task_timeout}",
            )
        )


def read_module(path: str) -> ModuleOp:
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise DiagnosticError(Diagnostic("error", f"cannot read '{path}': {error}")) from None
    with timed("parse"):
        module = parse_source(default_context(), text, "<stdin>" if path == "-" else path)
    with timed("verify"):
        verify_module(module)
    return module


@contextmanager
def progress(total: int) -> Iterator[Callable[[Group, Measurement], None]]:
    """`report(group, measurement)`: a bar on a terminal, else one line per measurement."""
    done = 0
    if _STDERR.is_terminal:
        with Progress(*Progress.get_default_columns(), console=_STDERR, transient=True) as bar:
            task = bar.add_task("tuning", total=total)

            def advance(group: Group, m: Measurement) -> None:
                bar.update(task, advance=1, description=f"tuning {group.name}")

            yield advance
        return

    def line(group: Group, m: Measurement) -> None:
        nonlocal done
        done += 1
        if m.nhwc:
            sizes = "NHWC " + ("default" if m.sizes is None else "x".join(map(str, m.sizes)))
        else:
            sizes = (
                "default" if m.candidate == 0 else "x".join(map(str, group.candidates[m.candidate]))
            )
            if m.buffering is not None:
                sizes += f" buffering {m.buffering}"
            if m.interchange is not None:
                sizes += f" interchange {list(m.interchange)}"
            if m.stage:
                sizes += " staged"
        outcome = f"{m.cycles:,.0f} cycles" if m.cycles is not None else f"failed: {m.error}"
        count = (
            f"{done}/{total}" if done <= total else f"{done}"
        )  # transposes come after what was planned
        print(
            f"tune: [{count}] {group.name} {sizes}: {outcome} ({m.seconds:.1f} s)",
            file=sys.stderr,
            flush=True,
        )

    yield line


def summary(choices: Sequence[Choice]) -> str:
    lines = [
        "group                      default cycles    tuned cycles  speedup  layout, tile.sizes, tile.buffering, tile.interchange"
    ]
    for c in choices:
        if c.layout == "NHWC":
            cycles = c.nhwc_cycles
            sizes = "NHWC " + ("heuristic" if c.nhwc_sizes is None else str(list(c.nhwc_sizes)))
            sizes += ", staged" if c.nhwc_stage else ""
        else:
            cycles = c.cycles
            sizes = "heuristic" if c.sizes is None else str(list(c.sizes))
            if c.buffering is not None:
                sizes += f", buffering {c.buffering}"
            if c.interchange is not None:
                sizes += f", interchange {list(c.interchange)}"
            if c.stage:
                sizes += ", staged"
        default = f"{c.default_cycles:,.0f}" if c.default_cycles else "-"
        tuned = f"{cycles:,.0f}" if cycles else "-"
        speedup = f"{c.default_cycles / cycles:.2f}x" if cycles and c.default_cycles else "-"
        note = (
            " (cached)"
            if c.cached
            else ""
            if c.complete or c.faults
            else " (budget: partly measured)"
        )
        if c.faults:
            note += f" ({len(c.faults)} failed, not cached: {c.faults[0]})"
        lines.append(f"{c.group.name:<26} {default:>14}  {tuned:>14}  {speedup:>7}  {sizes}{note}")
    return "\n".join(lines)


def tune_module(
    module: ModuleOp,
    machine: str,
    options: TuneOptions,
    cache_path: Path | None,
    cluster: str | None = None,
) -> list[Choice]:
    """Tune every group of `module` (graph level) for `machine` (a preset or a TOML file) and put
    the winners' `tile.sizes`, `tile.buffering`, `tile.interchange` and `tile.stage_reduction` on
    their roots, in place; the groups that run faster in NHWC, transposes included
    (`layouts.tune_layouts`), are converted with graph-layout, their schedule with them. The
    cache is read and saved. Measurements run on `options.executor`, else on the executor
    `cluster` names (`executors.make_executor`: all the cluster's CPUs; closed at the end)."""
    if options.executor is None and cluster not in (None, "local"):
        executor = make_executor(cluster, None, options.task_timeout)
        try:
            return tune_module(module, machine, replace(options, executor=executor), cache_path)
        finally:
            executor.close()
    start = time.monotonic()
    cache = TuneCache.load(cache_path)
    if any(isinstance(op, graph.FusedOp) for op in module.walk()):
        # fused IR (`ziggurat-compile --machine M --emit graph`): the groups are found by fusing
        # again, and a layout change must see the weights as constants to fold their transposes
        # (inside a group they are its arguments, and would be transposed on the device)
        apply_pipeline(module, "graph-unfuse")
    with timed("find groups"):
        groups = tunable_groups(module, load_machine(machine), options.cores)
    searched = {  # at most: the loop orders measured are those of the winner's sizes
        g.key: min(options.top_k, len(g.candidates))
        + (
            sum(stages_reduction(g, c) for c in range(min(options.top_k, len(g.candidates))))
            if options.stage
            else 0
        )
        + len(options.bufferings)
        + max(len(loop_orders(g, sizes)) for sizes in g.candidates[: options.top_k])
        + (2 if g.convertible else 0)
        for g in groups
        if cache.get(g.key) is None
    }
    to_measure = sum(searched.values())
    with progress(to_measure) as report:
        with timed("tune schedules"):
            choices = tune(groups, machine, options, cache, report)
        left = (
            None
            if options.budget is None
            else max(0.0, options.budget - (time.monotonic() - start))
        )
        with timed("tune layouts"):
            tune_layouts(module, choices, machine, replace(options, budget=left), cache, report)
    ops = list(module.walk())
    for choice in choices:
        op = ops[choice.group.target]
        if choice.layout == "NHWC":
            op.attributes[LAYOUT_ATTR] = StringAttr("NHWC")
            if choice.nhwc_sizes is not None:
                set_sizes(op, choice.nhwc_sizes)
            if choice.nhwc_stage:
                set_stage_reduction(op)
            continue
        if choice.sizes is not None:
            set_sizes(op, choice.sizes)
        if choice.buffering is not None:
            set_buffering(op, choice.buffering)
        if choice.interchange is not None:
            set_interchange(op, choice.interchange)
        if choice.stage:
            set_stage_reduction(op)
    if any(choice.layout == "NHWC" for choice in choices):
        with timed("convert layouts"):
            convert_marked(module)
    cache.save()
    return choices


def check_lowers(module: ModuleOp, machine: str, cores: int = 1) -> None:
    """A tuned module that does not lower is never written: a copy of it goes through
    `lower-to-npu{machine=M cores=N}` (with its retries), and a failure is the error, with why."""
    spread = f" cores={cores}" if cores > 1 else ""
    passes = build_passes(f"lower-to-npu{{machine={quoted(machine)}{spread}}}")
    try:
        FittingPipeline(passes).apply(default_context(), module.clone())
    except DiagnosticError as error:
        message = (
            f"the tuned module does not lower with lower-to-npu{{machine={machine}{spread}}}, so it is not "
            "written (the tuner's winners lowered group by group; please report this)"
        )
        raise DiagnosticError([Diagnostic("error", message), *error.diagnostics]) from None


def tuning_point(passes: Sequence[ModulePass]) -> int:
    """Where in a lowering pipeline `ziggurat-compile --tune` tunes: before `graph-fuse` (else
    `graph-to-tile`), on the graph IR that lower-to-npu will fuse and tile (after any precision
    conversion and graph-opt), whose convs and pools a layout change can still convert."""
    for name in ("graph-fuse", "graph-to-tile"):
        found = next((i for i, one in enumerate(passes) if one.name == name), None)
        if found is not None:
            return found
    return len(passes)


def main_with(args: argparse.Namespace) -> int:
    check_options(args)
    module = read_module(args.input)
    options = TuneOptions(
        jobs=args.jobs or os.cpu_count() or 1,
        budget=args.budget,
        top_k=args.top_k,
        seed=args.seed,
        bufferings=args.bufferings,
        stage=args.stage,
        task_timeout=args.task_timeout,
        cores=args.cores,
    )
    executor = (
        None
        if args.cluster in (None, "local")
        else make_executor(args.cluster, args.jobs, args.task_timeout)
    )
    try:
        with timed("tune"):
            choices = tune_module(
                module, args.machine, replace(options, executor=executor), args.cache
            )
    finally:
        if executor is not None:
            executor.close()
    with timed("check lowering"):
        check_lowers(module, args.machine, args.cores)
    with timed("print"):
        text = io.StringIO()
        Printer(stream=text).print_op(module)
    with timed("write"):
        if args.output is not None:
            write_atomically(args.output, text.getvalue() + "\n")
        else:
            print(text.getvalue())
    print(summary(choices) if choices else "no group with a schedule to tune", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> None:
    parser = build_argument_parser()

    def tune_timed() -> int:
        args = parse_command_line(parser, argv)
        with timing(args.timing):
            return main_with(args)

    run_main(tune_timed)


if __name__ == "__main__":
    main()
