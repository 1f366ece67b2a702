"""Does tuning scale with Ray workers? Target: 2 local Ray workers tune the ResNet block at least 1.7x
faster (wall time) than 1.

    python benchmarks/distributed_tuning.py            # or `make bench`; needs `pip install 'ziggurat[ray]'`

`ziggurat-tune examples/resnet_block.mlir --machine davinci` with a fresh cache, each configuration
in a fresh process: on a local Ray instance of 1 CPU (1 worker) and of 2 (`RayExecutor`, as
`--cluster ray` runs it), and, for reference, on the local process pool with `--jobs 1` and 2, in
`--rounds` rounds (3) of the four, each configuration's median compared: one run of about 5 s moves
by a few tenths of a second with whatever else the machine does, which alone swings a ratio by 0.1. The
time is the tuning's wall time (`tune_module`: planning, every measurement, the decisions, the
cache written); Ray's start (the instance, and its workers loading ziggurat) is counted apart, and
the table shows both. Every configuration must write the same cache bytes
and tuned IR (they are compared). A table goes to stdout and the results to
benchmarks/results/distributed_tuning.json, with the load average around each run: the wall time
of a shared machine depends on its load. Exits 1 when the target is missed, 0 with a message
when ray is not installed. See docs/distributed.md, "What scaling to expect".
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import ziggurat  # noqa: F401  first: it sets OPENBLAS_NUM_THREADS=1 before numpy loads
from ziggurat.cli import run_main, write_atomically

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).parent / "results"
MODEL = ROOT / "examples" / "resnet_block.mlir"
MACHINE = "davinci"
TARGET_SPEEDUP = 1.7
CONFIGURATIONS = (("ray", 1), ("ray", 2), ("pool", 1), ("pool", 2))


def run_one(backend: str, workers: int) -> dict:
    """Tune the model once on `backend` with `workers`, in this process; what it took."""
    from ziggurat.context import default_context
    from ziggurat.parsing import parse_source
    from ziggurat.printing import Printer
    from ziggurat.tools.ziggurat_tune import tune_module
    from ziggurat.tuning.executors import RayExecutor
    from ziggurat.tuning.tuner import TuneOptions

    module = parse_source(default_context(), MODEL.read_text(), str(MODEL))
    options = TuneOptions(jobs=workers, task_timeout=600.0)
    start_seconds = 0.0
    executor = None
    if backend == "ray":
        start = time.perf_counter()
        executor = RayExecutor(jobs=workers, num_cpus=workers, task_timeout=600.0)
        assert executor.jobs == workers  # connects: Ray's start is timed here, not in the tuning
        start_seconds = time.perf_counter() - start
        options = replace(options, executor=executor)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        cache = Path(folder) / "cache.json"
        start = time.perf_counter()
        try:
            choices = tune_module(module, MACHINE, options, cache)
        finally:
            seconds = time.perf_counter() - start
            if executor is not None:
                executor.close()
        cache_bytes = cache.read_bytes()
    text = io.StringIO()
    Printer(stream=text).print_op(module)
    return {
        "backend": backend,
        "workers": workers,
        "start_seconds": start_seconds,
        "tune_seconds": seconds,
        "measured": sum(c.measured for c in choices),
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
        "cache_sha256": hashlib.sha256(cache_bytes).hexdigest(),
        "ir_sha256": hashlib.sha256(text.getvalue().encode()).hexdigest(),
    }


def median_run(runs: list[dict]) -> dict:
    """The run of median tuning time (the lower middle one of an even count)."""
    ordered = sorted(runs, key=lambda r: r["tune_seconds"])
    return ordered[(len(ordered) - 1) // 2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--one", nargs=2, metavar=("BACKEND", "WORKERS"), help=argparse.SUPPRESS)
    parser.add_argument("--output", type=Path, default=RESULTS / "distributed_tuning.json")
    parser.add_argument(
        "--rounds", type=int, default=3, help="rounds of the four configurations (default: 3)"
    )
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(run_one(args.one[0], int(args.one[1]))))
        return 0
    try:
        import ray  # noqa: F401
    except ImportError:
        print("distributed_tuning: skipped, ray is not installed (pip install 'ziggurat[ray]')")
        return 0
    runs = []
    rounds = [(backend, workers) for _ in range(args.rounds) for backend, workers in CONFIGURATIONS]
    for backend, workers in rounds:
        done = subprocess.run(
            [sys.executable, __file__, "--one", backend, str(workers)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            print(
                f"distributed_tuning: {backend} with {workers} failed:\n{done.stderr[-3000:]}",
                file=sys.stderr,
            )
            return 1
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(
            f"  {backend} x{workers}: {runs[-1]['tune_seconds']:.1f} s", file=sys.stderr, flush=True
        )
    by = {
        configuration: median_run(
            [r for r in runs if (r["backend"], r["workers"]) == configuration]
        )
        for configuration in CONFIGURATIONS
    }
    speedup = by["ray", 1]["tune_seconds"] / by["ray", 2]["tune_seconds"]
    same = len({(r["cache_sha256"], r["ir_sha256"]) for r in runs}) == 1
    print(
        f"Tuning {MODEL.relative_to(ROOT)} on {MACHINE}, fresh cache ({os.cpu_count()} CPUs here)"
    )
    print(f"median of {args.rounds} round(s); tuning times of every round in the last column")
    print(
        f"{'backend':<8} {'workers':>7} {'start (s)':>9} {'tuning (s)':>10} {'total (s)':>9} {'measured':>8} "
        f"{'load avg':>9}  rounds (s)"
    )
    for (backend, workers), r in by.items():
        each = [
            x["tune_seconds"] for x in runs if (x["backend"], x["workers"]) == (backend, workers)
        ]
        print(
            f"{r['backend']:<8} {r['workers']:>7} {r['start_seconds']:>9.1f} {r['tune_seconds']:>10.1f} "
            f"{r['start_seconds'] + r['tune_seconds']:>9.1f} {r['measured']:>8} "
            f"{r['load_before']:>4.1f}-{r['load_after']:<4.1f}  {' '.join(f'{t:.1f}' for t in each)}"
        )
    met = speedup >= TARGET_SPEEDUP and same
    print(
        f"Ray 2 workers vs 1: {speedup:.2f}x (target {TARGET_SPEEDUP}x): "
        f"{'met' if speedup >= TARGET_SPEEDUP else 'MISSED'}; "
        f"pool 2 jobs vs 1: {by['pool', 1]['tune_seconds'] / by['pool', 2]['tune_seconds']:.2f}x; "
        f"cache and IR {'identical' if same else 'DIFFER'} across backends"
    )
    report = {
        "model": str(MODEL.relative_to(ROOT)),
        "machine": MACHINE,
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "host": {"cpus": os.cpu_count(), "processor": platform.processor() or platform.machine()},
        "target_speedup": TARGET_SPEEDUP,
        "rounds": args.rounds,
        "ray_speedup": speedup,
        "identical_results": same,
        "runs": runs,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(args.output, json.dumps(report, indent=2) + "\n")
    return 0 if met else 1


if __name__ == "__main__":
    run_main(main)
