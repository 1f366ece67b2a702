"""Category `machine`: machine files with bad values and keys through the machine loader.

A case mutates one preset's TOML one to three times (a value replaced by one
of the wrong kind, sign, unit or size; a key misspelt; a line deleted,
duplicated or swapped; a table renamed; an `extends` to a missing file or to
itself; truncation) and loads it with `python -m ziggurat.machine
check FILE`. When the preset is the one `examples/npu` targets, `ziggurat-opt`
also verifies that example against the mutated machine (the npu verifier
loads it through `npu.machine`). Every problem must be reported at the file
(and line, where there is one), never as a traceback.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from .outcome import IR_LOCATION, Outcome, run_in_process
from .seeds import ROOT, machine_seeds, mutated, text_mutation

NPU_EXAMPLE = ROOT / "examples" / "npu" / "gemm_single_buffered.mlir"
NPU_EXAMPLE_MACHINE = "davinci"
ASSIGNMENT = re.compile(r"^(\s*)([\w.\"-]+)(\s*=\s*)(.*?)(\s*(#.*)?)$", re.MULTILINE)
HEADER = re.compile(r"^\[([^\]]+)\]", re.MULTILINE)
BAD_VALUES = (
    "0",
    "-1",
    "1.5",
    "-0.5",
    "1e309",
    "99999999999999999999999",
    "true",
    "[]",
    "{}",
    '""',
    '"abc"',
    '"12 parsecs"',
    '"-5 KiB"',
    '"0 GHz"',
    '"1e400 GHz"',
    '"1.5 B/cycle"',
    '"nan"',
    "nan",
    "inf",
    "-inf",
    '"2 words/cycle"',
    '["gm", "gm"]',
    '[["gm", "nowhere"]]',
    '"f7"',
    "[1, 2]",
    '"os"',
    '"global"',
    '"local"',
)
MACHINE_FILE = re.compile(r"^[^\s:][^:\n]*(:\d+){0,2}: error: ", re.MULTILINE)
"""`file: error:` for a missing table or key, `file:line: error:` for one that is there."""


@dataclass
class MachineCase:
    seed: str
    mutations: list[str]
    text: str

    def describe(self) -> str:
        return f"{self.seed}: {'; '.join(self.mutations)}"


@st.composite
def _mutate(draw, text: str) -> tuple[str, str]:
    kind = draw(
        st.sampled_from(
            (
                "value",
                "value",
                "value",
                "key",
                "delete-line",
                "duplicate-line",
                "swap-lines",
                "header",
                "extends",
                "truncate",
                "flip-char",
            )
        )
    )
    assignments = list(ASSIGNMENT.finditer(text))
    if kind == "value" and assignments:
        match = assignments[draw(st.integers(0, len(assignments) - 1))]
        value = draw(st.sampled_from(BAD_VALUES))
        return text[: match.start(4)] + value + text[match.end(4) :], f"{match[2]} = {value}"
    if kind == "key" and assignments:
        match = assignments[draw(st.integers(0, len(assignments) - 1))]
        key = match[2]
        new = draw(
            st.sampled_from(
                (key[:-1] or "x", key + "s", key.upper(), key.replace("_", "-"), "bogus")
            )
        )
        return text[: match.start(2)] + new + text[match.end(2) :], f"key {key} to {new}"
    if kind == "header" and (headers := list(HEADER.finditer(text))):
        match = headers[draw(st.integers(0, len(headers) - 1))]
        new = draw(
            st.sampled_from(
                ("bogus", match[1] + ".x", match[1].split(".")[0], "memory", "dma.", "memory.gm")
            )
        )
        return text[: match.start(1)] + new + text[
            match.end(1) :
        ], f"header [{match[1]}] to [{new}]"
    if kind == "extends":
        base = draw(
            st.sampled_from(
                ("davinci", "systolic", "nonexistent", "input.toml", "./input.toml", "/")
            )
        )
        return f'extends = "{base}"\n' + text, f"extends {base}"
    return text_mutation(draw, text, kind, '[]=".#\n0-xK ,{}')


@st.composite
def machine_cases(draw) -> MachineCase:
    seed, mutations, text = mutated(draw, machine_seeds(), _mutate)
    return MachineCase(seed, mutations, text)


def _check_machine(argv: list[str]) -> None:
    from ziggurat.cli import run_main
    from ziggurat.machine.__main__ import main

    run_main(lambda: main(argv))


def check_machine_case(case: MachineCase, workdir: Path) -> dict[str, Outcome]:
    from ziggurat.tools import ziggurat_opt

    path = workdir / "input.toml"
    path.write_text(case.text)
    outcomes = {"machine check": run_in_process(_check_machine, ["check", str(path)], MACHINE_FILE)}
    if case.seed == f"{NPU_EXAMPLE_MACHINE}.toml":
        program = NPU_EXAMPLE.read_text().replace(f'"{NPU_EXAMPLE_MACHINE}"', f'"{path}"')
        assert str(path) in program, "the npu example no longer names its machine"
        source = workdir / "program.mlir"
        source.write_text(program)
        # The machine's problems are reported at the op whose verifier loaded it.
        outcomes["ziggurat-opt"] = run_in_process(ziggurat_opt.main, [str(source)], IR_LOCATION)
    return outcomes
