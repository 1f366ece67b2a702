"""Running many cases of each category and tallying how they ended.

`run_category("ir", 100, seed_value=0)` draws the cases with hypothesis
(seeded, so a run is reproducible; generation only: a failing case is saved
as drawn rather than shrunk, since each attempt may take the whole time
limit), runs each through its tools and returns a `Tally`; `make fuzz` runs
many such chunks in parallel and adds their tallies up (`Tally.add`).
Failing inputs are written to `test/fuzz/failures/` with a header saying
which tool failed, how, and with which arguments.
"""

from __future__ import annotations

import re
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from .compile import check_compile_case, compile_cases
from .ir_mutation import check_ir_case, check_ir_case_cli, ir_cases
from .machines import check_machine_case, machine_cases
from .outcome import FAILURE_KINDS, Outcome
from .pipelines import check_pipeline_case, pipeline_cases
from .shapes import check_shape_case, shape_cases
from .valid_mutation import check_valid_case, valid_cases

FAILURES_DIR = Path(__file__).parent / "failures"


@dataclass(frozen=True)
class Category:
    strategy: st.SearchStrategy
    check: Callable[[Any, Path], dict[str, Outcome]]
    suffix: str
    """Of the saved failing input."""
    cli: Callable[[Any, Path], dict[str, Outcome]] | None = None
    """The same check through the console scripts, for a sample of the cases."""


CATEGORIES: dict[str, Category] = {
    "ir": Category(ir_cases(), check_ir_case, ".mlir", cli=check_ir_case_cli),
    "valid": Category(valid_cases(), check_valid_case, ".mlir"),
    "shapes": Category(shape_cases(), check_shape_case, ".mlir"),
    "machine": Category(machine_cases(), check_machine_case, ".toml"),
    "pipeline": Category(pipeline_cases(), check_pipeline_case, ".mlir"),
    "compile": Category(compile_cases(), check_compile_case, ".onnx.hex"),
}


@dataclass
class Failure:
    category: str
    tool: str
    outcome: Outcome
    case: Any
    saved: Path | None = None

    def describe(self) -> str:
        detail = f" ({self.outcome.detail})" if self.outcome.detail else ""
        where = f"\n  saved as {self.saved}" if self.saved else ""
        stderr = "\n    ".join(self.outcome.stderr.strip().splitlines()[-6:])
        return f"[{self.category}] {self.tool}: {self.outcome.kind}{detail}: {self.case.describe()}{where}\n    {stderr}"


@dataclass
class Tally:
    cases: int = 0
    outcomes: Counter = field(default_factory=Counter)
    """Per tool invocation: success, diagnostic and the failure kinds."""
    failures: list[Failure] = field(default_factory=list)
    seconds: float = 0.0

    def add(self, other: Tally) -> None:
        self.cases += other.cases
        self.outcomes += other.outcomes
        self.failures += other.failures
        self.seconds += other.seconds


def run_category(
    name: str,
    count: int,
    seed_value: int = 0,
    save_failures: bool = False,
    cli_every: int = 0,
    first: int = 0,
) -> Tally:
    """Run `count` cases of a category, numbered from `first` (a chunk of a longer run); every
    `cli_every`-th one (if not 0) through the console scripts too."""
    category = CATEGORIES[name]
    tally = Tally()
    start = time.perf_counter()

    @seed(seed_value)
    @settings(
        max_examples=count,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(category.strategy)
    def one_case(case):
        tally.cases += 1
        check = category.check
        if category.cli is not None and cli_every and (first + tally.cases) % cli_every == 0:
            check = category.cli
        with tempfile.TemporaryDirectory(prefix="ziggurat-fuzz-") as workdir:
            outcomes = check(case, Path(workdir))
        for tool, outcome in outcomes.items():
            tally.outcomes[outcome.kind] += 1
            if outcome.kind in FAILURE_KINDS:
                failure = Failure(name, tool, outcome, case)
                if save_failures:
                    failure.saved = save_failure(failure, category.suffix, first + tally.cases)
                tally.failures.append(failure)

    one_case()
    tally.seconds = time.perf_counter() - start
    return tally


def save_failure(failure: Failure, suffix: str, case_number: int) -> Path:
    FAILURES_DIR.mkdir(exist_ok=True)
    tool = re.sub(r"[^\w.-]+", "_", failure.tool).strip("_")
    path = FAILURES_DIR / f"{failure.category}-{case_number}-{tool}-{failure.outcome.kind}{suffix}"
    comment = "#" if suffix == ".toml" else "//"
    header = [
        f"{failure.tool}: {failure.outcome.kind} {failure.outcome.detail}".rstrip(),
        f"case: {failure.case.describe()}",
        *failure.outcome.stderr.strip().splitlines()[-10:],
    ]
    # A detail may span lines (a diagnostic with its source line): each is commented, so the file still parses.
    lines = [line for entry in header for line in entry.splitlines()]
    text = "\n".join(f"{comment} {line}" for line in lines) + "\n" + failure.case.text
    path.write_text(text)
    return path


def summary_table(tallies: dict[str, Tally]) -> str:
    """Cases, successes, diagnostics and failures by kind, per category (tool invocations for the outcomes)."""
    columns = ["category", "cases", "runs", "success", "diagnostic", *FAILURE_KINDS, "seconds"]
    rows = []
    for name, tally in tallies.items():
        runs = sum(tally.outcomes.values())
        rows.append(
            [
                name,
                tally.cases,
                runs,
                *(tally.outcomes[k] for k in ("success", "diagnostic", *FAILURE_KINDS)),
                f"{tally.seconds:.0f}",
            ]
        )
    total = [sum(int(row[i]) for row in rows) for i in range(1, len(columns) - 1)]
    rows.append(["total", *total, f"{sum(t.seconds for t in tallies.values()):.0f}"])
    widths = [max(len(str(row[i])) for row in [columns, *rows]) for i in range(len(columns))]
    lines = [
        "  ".join(str(cell).rjust(width) for cell, width in zip(row, widths))
        for row in [columns, *rows]
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    lines.insert(len(lines) - 1, lines[1])
    return "\n".join(lines)
