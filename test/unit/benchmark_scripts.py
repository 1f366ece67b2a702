"""Loading a script of benchmarks/ as a module, for the tests of its helpers."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).parents[2] / "benchmarks"


def load_benchmark(name: str):
    """benchmarks/<name>.py as the module `name`."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module
