"""`ziggurat-opt`: xDSL's opt driver with ziggurat's universe and MLIR-style diagnostics; every
`xdsl-opt` flag keeps working.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import time
from collections.abc import Sequence
from io import BytesIO
from typing import get_type_hints

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.frontend.mlir import MLIRFrontend
from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import ArgSpec, _convert_arg_to_type, parse_pipeline, parse_spec
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ShrinkException
from xdsl.utils.hints import type_repr
from xdsl.xdsl_opt_main import xDSLOptMain

from ziggurat.cli import add_debug_option, run_main, while_running_pass, write_atomically
from ziggurat.context import multiverse
from ziggurat.diagnostics import (
    Diagnostic,
    DiagnosticError,
    collect_diagnostics,
    did_you_mean,
    exception_message,
)
from ziggurat.expected_diagnostics import check_expected_diagnostics, parse_expected_diagnostics
from ziggurat.lowering.pipelines import expand_pipeline
from ziggurat.parsing import parse_source
from ziggurat.printing import MLIRTarget, Printer
from ziggurat.timing_report import add_timing_option, clock, timed, timing
from ziggurat.transforms.tile.fit import FittingPipeline, apply_passes
from ziggurat.verifier import verify_module

SPLIT_MARKER = "// -----"


def split_input(text: str) -> list[tuple[str, int]]:
    """Chunks of `text` between lines that are exactly `// -----`, each with the number of lines before it."""
    chunks: list[tuple[str, int]] = []
    current: list[str] = []
    start = 0
    for index, line in enumerate(text.splitlines(keepends=True)):
        if line.rstrip() == SPLIT_MARKER:
            chunks.append(("".join(current), start))
            current, start = [], index + 1
        else:
            current.append(line)
    chunks.append(("".join(current), start))
    return chunks


def pass_description(pass_class: type[ModulePass]) -> str:
    """The summary of the pass's own docstring on one line (dataclass-generated signatures do not count).

    That is the first line for PEP 257 docstrings; some xDSL passes wrap their
    first sentence, so the whole first paragraph is joined.
    """
    doc = pass_class.__dict__.get("__doc__") or ""
    if doc.startswith(f"{pass_class.__name__}("):
        return ""
    return " ".join(doc.strip().split("\n\n", 1)[0].split())


@dataclasses.dataclass(frozen=True)
class PassOption:
    name: str
    """As spelt on the command line (`tile-size`, not `tile_size`)."""
    type: str
    default: str | None
    """`None` when the option is required."""


def pass_options(pass_class: type[ModulePass]) -> list[PassOption]:
    hints = get_type_hints(pass_class)
    options: list[PassOption] = []
    for f in dataclasses.fields(pass_class):
        if not f.init:
            continue
        if f.default is not dataclasses.MISSING:
            default = _option_value_text(f.default)
        elif f.default_factory is not dataclasses.MISSING:
            default = _option_value_text(f.default_factory())
        else:
            default = None
        options.append(PassOption(f.name.replace("_", "-"), type_repr(hints[f.name]), default))
    return options


def _option_value_text(value: object) -> str:
    match value:
        case bool():
            return str(value).lower()
        case tuple():
            return ",".join(_option_value_text(v) for v in value)  # pyright: ignore[reportUnknownVariableType]
        case None:
            return "none"
        case _:
            return str(value)


class TimedPipeline(FittingPipeline):
    """`FittingPipeline` with each pass timed under its name for `--timing` (a pass that runs again,
    as when a group is retried with smaller tiles, adds to its row)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not self.passes:
            super().apply(ctx, op)
            return

        def run(index: int, one: ModulePass) -> None:
            if self.callback is not None and index == 0:
                self.callback(None, op, one)
            with timed(one.name):
                one.apply(ctx, op)
            if self.callback is not None:
                self.callback(
                    one, op, self.passes[index + 1] if index + 1 < len(self.passes) else None
                )

        apply_passes(ctx, op, self.passes, run)


class ZigguratOptMain(xDSLOptMain):
    """xDSL's `xDSLOptMain`, with what ziggurat changes:

    * ops are parsed with `parse_source`, so each one carries its source position
      (also within a `--split-input-file` chunk, whose lines keep their numbers in
      the whole file); the file splits on lines that are exactly `// -----`, and
      an empty chunk is an empty module;
    * parse errors, unknown ops or dialects, unknown passes or pass options,
      verifier failures and pass failures print `file:line:col: error: message`
      with the source line and a caret, and exit 1; a crash inside a pass exits 2
      with "internal error, please report" (traceback with `--debug` or
      `ZIGGURAT_DEBUG=1`);
    * `--verify-diagnostics` matches `// expected-error {{...}}` annotations
      against the diagnostics produced, chunk by chunk;
    * the IR is verified op by op after parsing and after every pass
      (`--no-verify-each` verifies only after parsing and at the end);
    * `-o FILE` is written atomically, and not at all if any chunk failed;
    * the `mlir` target and `--print-between-passes` print through
      `ziggurat.printing.Printer`;
    * `--list-passes` and `--list-dialects` describe what the multiverse (xDSL,
      ziggurat, plugins) provides;
    * `--timing` prints the time of each stage and pass on stderr (`ziggurat.timing_report`).
    """

    version_format = "ziggurat-opt built from xdsl version {xdsl_version}"

    def __init__(self, args: Sequence[str] | None = None):
        self._current_pass: ModulePass | None = None
        self._pass_start = time.perf_counter()
        super().__init__(description="ziggurat modular optimizer driver", args=args)

    # ---- registration: one scan of the entry points for dialects, passes and targets ----

    def register_all_dialects(self):
        for name, factory in multiverse().all_dialects.items():
            self.ctx.register_dialect(name, factory)

    def register_all_passes(self):
        for name, factory in multiverse().all_passes.items():
            self.register_pass(name, factory)

    def register_all_targets(self):
        self.available_targets.update(multiverse().all_targets)
        self.available_targets["mlir"] = lambda: MLIRTarget

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        super().register_all_arguments(arg_parser)
        frontend = next(a for a in arg_parser._actions if a.dest == "frontend")
        frontend.type = _frontend_spec
        verify_diagnostics = next(a for a in arg_parser._actions if a.dest == "verify_diagnostics")
        verify_diagnostics.help = (
            "check the diagnostics against `// expected-error {{...}}` annotations "
            "(also @+N, @-N, @above, @below, expected-warning/-note/-remark); "
            "exit 1 on a missing or an unexpected diagnostic"
        )
        arg_parser.add_argument(
            "--verify-each",
            action=argparse.BooleanOptionalAction,
            default=True,
            help="verify the IR after every pass (default); --no-verify-each verifies only the final IR",
        )
        arg_parser.add_argument(
            "--list-passes", action="store_true", help="list the passes and their options"
        )
        arg_parser.add_argument(
            "--list-dialects", action="store_true", help="list the dialects and their op counts"
        )
        arg_parser.add_argument(
            "--print-pipeline",
            action="store_true",
            help="print the -p list with named pipelines (e.g. graph-opt) expanded, and exit",
        )
        add_timing_option(arg_parser)
        add_debug_option(arg_parser)

    # ---- the pass pipeline ----

    def setup_pipeline(self):
        # --print-pipeline only expands names, so it works before every pass of a pipeline exists.
        passes = () if self.args.print_pipeline else self._parse_passes(self.args.passes)
        # FittingPipeline: a group whose buffers do not fit is retried with smaller tiles
        self.pipeline = TimedPipeline(passes, self._between_passes)

    def _parse_passes(self, spec: str) -> tuple[ModulePass, ...]:
        spec = expand_pipeline(spec)
        try:
            specs = list(parse_pipeline(spec))
        except ArgSpecParseError as e:
            raise DiagnosticError(_pipeline_syntax_diagnostic(spec, e)) from None
        return tuple(self._instantiate_pass(s) for s in specs)

    def _instantiate_pass(self, spec: ArgSpec) -> ModulePass:
        if spec.name not in self.available_passes:
            raise DiagnosticError(
                Diagnostic(
                    "error",
                    f"unknown pass '{spec.name}'{did_you_mean(spec.name, self.available_passes)}",
                )
            )
        pass_class = self.available_passes[spec.name]()
        options = {o.name.replace("-", "_"): o for o in pass_options(pass_class)}
        hints = get_type_hints(pass_class)
        for given, value in spec.normalize_parameter_names().parameters.items():
            if given not in options:
                known = ", ".join(o.name for o in options.values()) or "none"
                spelt = given.replace("_", "-")
                suggestion = did_you_mean(spelt, [o.name for o in options.values()])
                raise DiagnosticError(
                    Diagnostic(
                        "error",
                        f"pass '{spec.name}' has no option '{spelt}'{suggestion} (options: {known})",
                    )
                )
            try:
                # xDSL's own conversion, so that what we accept is exactly what from_spec accepts.
                _convert_arg_to_type(value, hints[given])
            except ValueError:
                shown = ",".join(str(v) for v in value) if value else "(no value)"
                raise DiagnosticError(
                    Diagnostic(
                        "error",
                        f"invalid value '{shown}' for option '{options[given].name}' of pass "
                        f"'{spec.name}': expected {options[given].type}",
                    )
                ) from None
        try:
            return pass_class.from_pass_spec(spec)
        except (ValueError, TypeError) as e:
            raise DiagnosticError(
                Diagnostic("error", f"invalid options for pass '{spec.name}': {e}")
            ) from None

    def _between_passes(
        self, previous: ModulePass | None, module: ModuleOp, next: ModulePass | None
    ) -> None:
        if self.args.time_passes and previous is not None:
            print(f"Pass {previous.name} took {time.perf_counter() - self._pass_start} seconds")
        if (
            previous is not None
            and not self.args.disable_verify
            and (self.args.verify_each or next is None)
        ):
            try:
                with timed("verify"):
                    verify_module(module)
            except DiagnosticError as e:
                e.diagnostics[-1].notes.append(
                    Diagnostic("note", f"the IR does not verify after pass '{previous.name}'")
                )
                raise
        if previous is not None and next is not None and self.args.print_between_passes:
            print(f"IR after {previous.name}:")
            Printer(stream=sys.stdout).print_op(module)
            print("\n\n\n")
        self._current_pass = next
        self._pass_start = time.perf_counter()

    def apply_passes(self, prog: ModuleOp):
        try:
            self.pipeline.apply(self.ctx, prog)
        except DiagnosticError:
            raise
        except DiagnosticException as e:
            # PassFailedException and friends name no op: report them against the input file.
            where = f" (in pass '{self._current_pass.name}')" if self._current_pass else ""
            raise DiagnosticError(
                Diagnostic("error", f"{exception_message(e)}{where}", self.get_input_name())
            ) from None
        except Exception as e:
            if self._current_pass is not None:
                e.add_note(while_running_pass(self._current_pass.name, e))
            raise

    # ---- running ----

    def run(self) -> int:
        if self.args.list_passes:
            self.list_passes()
            return 0
        if self.args.list_dialects:
            self.list_dialects()
            return 0
        if self.args.print_pipeline:
            print(expand_pipeline(self.args.passes))
            return 0

        text = self._read_input()
        filename = self.get_input_name()
        chunks = split_input(text) if self.args.split_input_file else [(text, 0)]
        to_stdout = self.args.output_file is None
        outputs: list[str] = []
        failed = False
        try:
            for chunk, offset in chunks:
                output = self._process_chunk(chunk, filename, offset)
                if output is None:
                    failed = True
                    continue
                outputs.append(output)
                if to_stdout:
                    if len(outputs) > 1:
                        sys.stdout.write(SPLIT_MARKER + "\n")
                    sys.stdout.write(output)
                    sys.stdout.flush()
        except ShrinkException:
            assert self.args.shrink
            print("Success, can shrink")
            return 0
        if self.args.shrink:
            print("Failure, can't shrink")
            return 1
        if failed:
            return 1
        if not to_stdout:
            write_atomically(self.args.output_file, (SPLIT_MARKER + "\n").join(outputs))
        return 0

    def _read_input(self) -> str:
        name = self.get_input_name()
        try:
            stream, _ = self.get_input_stream()
            with stream:
                data = stream.read()
        except OSError as e:
            raise DiagnosticError(
                Diagnostic("error", f"cannot open input file '{name}': {e.strerror}")
            ) from None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise DiagnosticError(
                Diagnostic("error", f"input is not UTF-8 text: {e.reason}", name)
            ) from None

    def _parse(self, chunk: str, filename: str, offset: int) -> ModuleOp:
        spec = parse_spec(self.args.frontend or "mlir")
        if spec.name != "mlir":
            return self.parse_chunk(BytesIO(chunk.encode("utf-8")), spec.name)
        try:
            mlir = MLIRFrontend.from_spec(spec)
        except (ValueError, TypeError) as e:
            raise DiagnosticError(
                Diagnostic("error", f"invalid options for frontend 'mlir': {e}")
            ) from None
        implicit = not (self.args.no_implicit_module or mlir.no_implicit_module)
        return parse_source(self.ctx, chunk, filename, offset, allow_implicit_module=implicit)

    def _process_chunk(self, chunk: str, filename: str, offset: int) -> str | None:
        """The printed result of one chunk, or None if it failed; its diagnostics go to stderr."""
        parsed = False
        with collect_diagnostics() as produced:
            try:
                with timed("parse"):
                    module = self._parse(chunk, filename, offset)
                parsed = True
                if not self.args.disable_verify:
                    with timed("verify"):
                        verify_module(module)
                self.apply_passes(module)
                with timed("print"):
                    output = self.output_resulting_program(module)
            except DiagnosticError as e:
                produced.extend(e.diagnostics)
                output = None

        if self.args.verify_diagnostics:
            expected = parse_expected_diagnostics(chunk, filename, offset)
            mismatches = check_expected_diagnostics(expected, produced)
            for mismatch in mismatches:
                print(mismatch.format(), file=sys.stderr)
            return None if mismatches else (output or "")

        # xDSL's --parsing-diagnostics: a parse error is the expected output, on stdout, exit 0.
        parse_error_expected = self.args.parsing_diagnostics and not parsed
        for diagnostic in produced:
            print(diagnostic.format(), file=sys.stdout if parse_error_expected else sys.stderr)
        return "" if parse_error_expected else output

    # ---- listings ----

    def list_passes(self) -> None:
        print("Available passes:")
        for name in sorted(self.available_passes):
            try:
                pass_class = self.available_passes[name]()
            except ImportError as e:
                print(f"  {name}  (unavailable: {e})")
                continue
            description = pass_description(pass_class)
            print(f"  {name}" + (f"  - {description}" if description else ""))
            for option in pass_options(pass_class):
                default = "required" if option.default is None else f"default: {option.default}"
                print(f"      {option.name}: {option.type} ({default})")

    def list_dialects(self) -> None:
        print("Available dialects:")
        for name in sorted(self.ctx.registered_dialect_names):
            try:
                dialect = self.ctx.get_dialect(name)
            except ImportError as e:
                print(f"  {name}  (unavailable: {e})")
                continue
            count = len(list(dialect.operations))
            print(f"  {name}  ({count} op{'' if count == 1 else 's'})")


def _frontend_spec(text: str) -> str:
    """`-f`'s value, xDSL's `name{option=value ...}`, checked while argparse reads the command line
    (xDSL's driver parses it as it starts, where a malformed one escapes as a BaseException)."""
    try:
        parse_spec(text)
    except ArgSpecParseError as e:
        message = str(e).strip().rsplit("\n", 1)[-1].strip()
        raise argparse.ArgumentTypeError(f"malformed frontend '{text}': {message}") from None
    return text


def _pipeline_syntax_diagnostic(spec: str, e: ArgSpecParseError) -> Diagnostic:
    # ArgSpecParseError keeps only its rendered text: "...\npass-pipeline:1:COL\n<spec>\n  ^\n  message".
    rendered = str(e)
    position = re.search(r"pass-pipeline:\d+:(\d+)", rendered)
    message = rendered.strip().rsplit("\n", 1)[-1].strip()
    col = int(position[1]) if position else None
    return Diagnostic(
        "error", f"malformed pass pipeline: {message}", col=col, source_line=spec if col else None
    )


def _run(args: Sequence[str] | None) -> int:
    start = clock()
    try:
        driver = ZigguratOptMain(args)
    except SystemExit as e:
        # argparse exits 2 on a bad command line; ziggurat tools keep 2 for internal errors.
        raise SystemExit(1 if e.code == 2 else e.code) from None
    with timing(driver.args.timing, start=start) as timer:
        # registering dialects and passes, reading the command line, building the pipeline
        timer.record("setup", since=start)
        return driver.run()


def main(args: Sequence[str] | None = None) -> None:
    """Console-script entry point."""
    run_main(lambda: _run(args))


if __name__ == "__main__":
    main()
