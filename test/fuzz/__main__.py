"""`make fuzz`: the long campaign. `python -m fuzz [--cases N] [--seed S] [--jobs J] [CATEGORY ...]` with test/ on the path.

Splits N cases (default 10,000) evenly over the categories, runs the
categories in parallel processes, saves failing inputs to
test/fuzz/failures/, prints each failure and a summary table, and exits 1
if any case failed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from concurrent.futures import ProcessPoolExecutor

from .campaign import CATEGORIES, FAILURES_DIR, Tally, run_category, summary_table


def _run(job: tuple[str, int, int, int]) -> tuple[str, Tally]:
    name, count, seed, cli_every = job
    tally = run_category(name, count, seed, save_failures=True, cli_every=cli_every)
    print(f"{name}: {tally.cases} cases in {tally.seconds:.0f} s, {len(tally.failures)} failures", flush=True)
    return name, tally


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz", description=__doc__.split("\n")[0])
    parser.add_argument("categories", nargs="*", choices=[[], *CATEGORIES], metavar="CATEGORY",
                        help=f"categories to run (default: all of {', '.join(CATEGORIES)})")
    parser.add_argument("--cases", type=int, default=10_000, help="cases in all (default: 10000)")
    parser.add_argument("--seed", type=int, default=0, help="hypothesis seed (default: 0)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel processes")
    parser.add_argument("--cli-every", type=int, default=200, metavar="N",
                        help="run every N-th IR case through the console scripts as well (default: 200; 0: never)")
    args = parser.parse_args(argv)
    names = args.categories or list(CATEGORIES)
    shares = [args.cases // len(names) + (i < args.cases % len(names)) for i in range(len(names))]
    # Failures of an earlier run would read as failures of this one.
    shutil.rmtree(FAILURES_DIR, ignore_errors=True)
    jobs = [(name, share, args.seed, args.cli_every) for name, share in zip(names, shares)]
    with ProcessPoolExecutor(max_workers=max(1, min(args.jobs, len(jobs)))) as pool:
        tallies = dict(pool.map(_run, jobs))
    tallies = {name: tallies[name] for name in names}
    failures = [failure for tally in tallies.values() for failure in tally.failures]
    for failure in failures:
        print(failure.describe())
    print()
    print(summary_table(tallies))
    if failures:
        print(f"\n{len(failures)} failing runs; inputs saved in {FAILURES_DIR}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
