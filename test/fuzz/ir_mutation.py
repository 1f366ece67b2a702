"""Category `ir`: mutated and truncated IR files through `ziggurat-opt` and `ziggurat-run`.

A case takes one seed file (`seeds.IR_SEED_DIRS`), applies one to three
mutations (delete, duplicate or swap lines, flip a character, change a number
in a shape or attribute, change an element type, truncate, drop a closing
`}`/`>`/`)`), and runs `ziggurat-opt` on it (sometimes with a graph pipeline)
and `ziggurat-run` on one of its functions. Both must succeed or report a
located `file:line:col: error:`. `check_ir_case_cli` runs a case through
the console scripts too, which must end the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from .outcome import IR_LOCATION, Outcome, run_in_process, run_subprocess
from .seeds import SPLIT_MARKER, function_names, ir_seeds, mutated, text_mutation

NUMBER = re.compile(r"(?<![\w.])\d+(?![\w.])")
ELEMENT_TYPE = re.compile(r"\b(f16|bf16|f32|f64|i1|i8|i32|i64|ui8|f8E4M3FN|f8E5M2|index)\b")
ELEMENT_TYPES = (
    "f16",
    "bf16",
    "f32",
    "f64",
    "i1",
    "i8",
    "i32",
    "i64",
    "ui8",
    "f8E4M3FN",
    "index",
    "none",
)
NUMBER_REPLACEMENTS = (0, 1, 2, 3, 5, 7, 13, 64, 4096, 2**31, 2**63, -1)
SYNTAX_CHARACTERS = '{}<>()[]%@,:=-.x0123456789 "\n^#'
OPT_PIPELINES = (None, "graph-canonicalize", "graph-fold-constants", "cse,dce", "canonicalize")


@dataclass
class IrCase:
    seed: str
    mutations: list[str]
    text: str
    pipeline: str | None
    function: str | None

    def describe(self) -> str:
        return f"{self.seed}: {'; '.join(self.mutations)}"


@st.composite
def _mutate(draw, text: str) -> tuple[str, str]:
    kind = draw(
        st.sampled_from(
            (
                "delete-line",
                "duplicate-line",
                "swap-lines",
                "flip-char",
                "number",
                "number",
                "type",
                "truncate",
                "drop-closer",
            )
        )
    )
    if kind == "number" and (numbers := list(NUMBER.finditer(text))):
        match = numbers[draw(st.integers(0, len(numbers) - 1))]
        old = int(match[0])
        new = draw(st.sampled_from((*NUMBER_REPLACEMENTS, old + 1, max(old - 1, 0))))
        return text[: match.start()] + str(new) + text[
            match.end() :
        ], f"number {old} at {match.start()} to {new}"
    if kind == "type" and (types := list(ELEMENT_TYPE.finditer(text))):
        match = types[draw(st.integers(0, len(types) - 1))]
        new = draw(st.sampled_from(ELEMENT_TYPES))
        return text[: match.start()] + new + text[
            match.end() :
        ], f"type {match[0]} at {match.start()} to {new}"
    if kind == "drop-closer" and (closers := [m.start() for m in re.finditer(r"[}>)\]]", text)]):
        i = closers[draw(st.integers(0, len(closers) - 1))]
        return text[:i] + text[i + 1 :], f"drop {text[i]!r} at {i}"
    return text_mutation(draw, text, kind, SYNTAX_CHARACTERS)


@st.composite
def ir_cases(draw) -> IrCase:
    seed, mutations, text = mutated(draw, ir_seeds(), _mutate)
    names = function_names(text)
    function = draw(st.sampled_from([None, *names])) if names else None
    return IrCase(seed, mutations, text, draw(st.sampled_from(OPT_PIPELINES)), function)


def opt_argv(case: IrCase, path: Path) -> list[str]:
    argv = [str(path)]
    if SPLIT_MARKER in case.text:
        argv.append("--split-input-file")
    if case.pipeline is not None:
        argv += ["-p", case.pipeline]
    return argv


TIMED_OUT = "the run exceeded --timeout"
RUN_TIMEOUT_S = "3"
"""ziggurat-run's own --timeout: the npu seeds include loops meant to run for minutes."""


def run_argv(case: IrCase, path: Path) -> list[str]:
    return [str(path), "--timeout", RUN_TIMEOUT_S] + (
        ["--function", case.function] if case.function else []
    )


def check_ir_case(case: IrCase, workdir: Path) -> dict[str, Outcome]:
    """The outcome of each tool on the case (see `outcome` for what is acceptable)."""
    from ziggurat.tools import ziggurat_opt, ziggurat_run

    path = workdir / "input.mlir"
    path.write_text(case.text)
    return {
        "ziggurat-opt": run_in_process(ziggurat_opt.main, opt_argv(case, path), IR_LOCATION),
        "ziggurat-run": run_in_process(ziggurat_run.main, run_argv(case, path), IR_LOCATION),
    }


def check_ir_case_cli(case: IrCase, workdir: Path) -> dict[str, Outcome]:
    """`check_ir_case` through the console scripts: each must end as its in-process run did."""
    in_process = check_ir_case(case, workdir)
    path = workdir / "input.mlir"
    outcomes: dict[str, Outcome] = {}
    for tool, argv in (
        ("ziggurat-opt", opt_argv(case, path)),
        ("ziggurat-run", run_argv(case, path)),
    ):
        cli = run_subprocess([tool, *argv], IR_LOCATION)
        # --timeout measures wall-clock time: on a busy machine one run may pass it and the other not.
        timed_out = any(TIMED_OUT in o.stderr for o in (cli, in_process[tool]))
        if cli.ok and cli.kind != in_process[tool].kind and not timed_out:
            cli.detail = f"the console script ended in {cli.kind}, the in-process run in {in_process[tool].kind}"
            cli.kind = "mismatch"
        outcomes[f"{tool} (console script)"] = cli
    return in_process | outcomes
