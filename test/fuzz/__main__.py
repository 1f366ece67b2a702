"""`make fuzz`: the long campaign. `python -m fuzz [--cases N] [--seed S] [--jobs J] [CATEGORY ...]` with test/ on the path.

Splits N cases (default 10,000) evenly over the categories and each
category's share into chunks of at most `--chunk` cases with seeds of their
own, runs the chunks on a pool of `--jobs` processes (each process imports
the tools once and runs its cases in-process; a case has a time limit, see
`outcome`), prints a line per finished chunk, saves failing inputs to
test/fuzz/failures/, prints each failure and a summary table, and exits 1 if
any case failed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass

from .campaign import CATEGORIES, FAILURES_DIR, Tally, run_category, summary_table


@dataclass(frozen=True)
class Chunk:
    category: str
    first: int
    """Number of the chunk's first case in its category (names the saved failures)."""
    count: int
    seed: int
    cli_every: int


def _run(chunk: Chunk) -> tuple[Chunk, Tally]:
    tally = run_category(
        chunk.category,
        chunk.count,
        chunk.seed,
        save_failures=True,
        cli_every=chunk.cli_every,
        first=chunk.first,
    )
    return chunk, tally


def chunks(shares: dict[str, int], seed: int, size: int, cli_every: int) -> list[Chunk]:
    """Each category's share in chunks of at most `size`, interleaved so that every category makes progress."""
    per_category = [
        [
            Chunk(name, first, min(size, share - first), seed * 1_000_003 + first, cli_every)
            for first in range(0, share, size)
        ]
        for name, share in shares.items()
    ]
    interleaved = []
    for row in range(max(map(len, per_category), default=0)):
        interleaved += [column[row] for column in per_category if row < len(column)]
    return interleaved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz", description=__doc__.split("\n")[0])
    parser.add_argument(
        "categories",
        nargs="*",
        choices=[[], *CATEGORIES],
        metavar="CATEGORY",
        help=f"categories to run (default: all of {', '.join(CATEGORIES)})",
    )
    parser.add_argument("--cases", type=int, default=10_000, help="cases in all (default: 10000)")
    parser.add_argument("--seed", type=int, default=0, help="hypothesis seed (default: 0)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel processes")
    parser.add_argument(
        "--chunk", type=int, default=100, help="cases per chunk of work (default: 100)"
    )
    parser.add_argument(
        "--cli-every",
        type=int,
        default=200,
        metavar="N",
        help="run every N-th IR case through the console scripts as well (default: 200; 0: never)",
    )
    args = parser.parse_args(argv)
    names = args.categories or list(CATEGORIES)
    shares = {
        name: args.cases // len(names) + (i < args.cases % len(names))
        for i, name in enumerate(names)
    }
    work = chunks(shares, args.seed, max(1, args.chunk), args.cli_every)
    # Failures of an earlier run would read as failures of this one.
    shutil.rmtree(FAILURES_DIR, ignore_errors=True)
    tallies = {name: Tally() for name in names}
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(_run, chunk) for chunk in work]
        for done, future in enumerate(as_completed(futures), 1):
            chunk, tally = future.result()
            tallies[chunk.category].add(tally)
            print(
                f"[{done}/{len(work)}, {time.perf_counter() - start:.0f} s] {chunk.category} "
                f"cases {chunk.first}-{chunk.first + chunk.count - 1}: {tally.seconds:.0f} s, "
                f"{len(tally.failures)} failures",
                flush=True,
            )
    failures = [failure for tally in tallies.values() for failure in tally.failures]
    for failure in failures:
        print(failure.describe())
    print()
    print(summary_table(tallies))
    print(
        f"\n{sum(t.cases for t in tallies.values())} cases in {time.perf_counter() - start:.0f} s "
        f"on {args.jobs} processes (seconds above: time spent per category, summed over processes)"
    )
    if failures:
        print(f"\n{len(failures)} failing runs; inputs saved in {FAILURES_DIR}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
