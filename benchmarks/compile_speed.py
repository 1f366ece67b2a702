"""How long do compiling ResNet-50 to npu IR and simulating it take? Targets: under 60 s each.

    python benchmarks/compile_speed.py                 # or `make bench`
    python benchmarks/compile_speed.py --model M.onnx  # another ONNX model

Each stage runs as a user runs it, in a fresh process:

* compile: `ziggurat-compile light_resnet50.onnx --machine davinci --emit npu -o resnet50.mlir`
  (import, graph-opt, f16 conversion, the whole lowering, printing the IR);
* simulate: `ziggurat-run resnet50.mlir --machine davinci --report json` (parsing,
  verifying, and the npu interpreter with its timing model).

Both wall time and CPU time (the child's user + system) are recorded: on a shared
machine the wall time depends on the load, the CPU time much less. The model is
the light ResNet-50 the onnx package ships with its backend tests (its shapes and
node graph are ResNet-50's; its weights are constants). The results go to
benchmarks/results/compile_speed.json; the script exits 1 when a target is missed.
See docs/performance.md, "Compile and simulation speed".
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from ziggurat.cli import run_main, write_atomically

RESULTS = Path(__file__).parent / "results"
MACHINE = "davinci"
TARGET_SECONDS = 60.0


def light_model(name: str) -> Path:
    """A light model of the onnx package's backend test data."""
    import onnx

    return Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / f"light_{name}.onnx"


@dataclass
class Stage:
    name: str
    command: list[str]
    wall_seconds: float
    cpu_seconds: float


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(name: str, tool: str, arguments: list[str]) -> tuple[Stage, str]:
    """Run `python -m ziggurat.tools.<tool> arguments`; the stage's times and its stdout."""
    command = [sys.executable, "-m", f"ziggurat.tools.{tool}", *arguments]
    cpu, wall = children_cpu(), time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - wall, children_cpu() - cpu
    if done.returncode:
        raise SystemExit(f"{name} failed ({' '.join(command)}):\n{done.stderr[-3000:]}")
    return Stage(name, [tool.replace("_", "-"), *arguments], wall, cpu), done.stdout


def format_table(stages: list[Stage], cycles: float, target: float) -> str:
    rows = [
        "| stage | wall (s) | CPU (s) | target |",
        "|---|---:|---:|---|",
        *(
            f"| {s.name} | {s.wall_seconds:.1f} | {s.cpu_seconds:.1f} | "
            f"{'met' if s.cpu_seconds < target else 'MISSED'} (< {target:g} s CPU) |"
            for s in stages
        ),
    ]
    return "\n".join(rows) + f"\n\nsimulated: {cycles:,.0f} cycles on {MACHINE}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--model", type=Path, default=None, help="ONNX model (default: the light ResNet-50)"
    )
    parser.add_argument(
        "--results", type=Path, default=RESULTS, help="folder for compile_speed.json"
    )
    parser.add_argument(
        "--target",
        type=float,
        default=TARGET_SECONDS,
        help=f"CPU seconds each stage must stay under ({TARGET_SECONDS:g})",
    )
    args = parser.parse_args(argv)
    model = args.model or light_model("resnet50")
    with tempfile.TemporaryDirectory() as folder:
        npu_ir = str(Path(folder) / f"{model.stem}.mlir")
        compile_stage, _ = timed(
            "compile to npu",
            "ziggurat_compile",
            [str(model), "--machine", MACHINE, "--emit", "npu", "-o", npu_ir],
        )
        simulate_stage, report = timed(
            "simulate", "ziggurat_run", [npu_ir, "--machine", MACHINE, "--report", "json"]
        )
    stages = [compile_stage, simulate_stage]
    cycles = json.loads(report)["total_cycles"]
    print(format_table(stages, cycles, args.target))
    args.results.mkdir(parents=True, exist_ok=True)
    results = {
        "model": model.name,
        "machine": MACHINE,
        "cpu_count": os.cpu_count(),
        "target_cpu_seconds": args.target,
        "simulated_cycles": cycles,
        "stages": [asdict(s) | {"met": s.cpu_seconds < args.target} for s in stages],
    }
    write_atomically(args.results / "compile_speed.json", json.dumps(results, indent=2) + "\n")
    missed = [s for s in stages if s.cpu_seconds >= args.target]
    for stage in missed:
        print(
            f"FAIL: {stage.name}: {stage.cpu_seconds:.1f} s CPU >= {args.target:g} s",
            file=sys.stderr,
        )
    return 1 if missed else 0


if __name__ == "__main__":
    run_main(main)
