"""ziggurat: an MLIR-style compiler framework on xDSL, from NN graphs to an NPU machine model."""

import importlib
import importlib.util
import os
import sys

# The interpreters multiply small tiles, for which OpenBLAS's thread pool costs more than it saves: on
# a busy machine its spinning threads slow a simulation several times over (docs/performance.md,
# "Compile and simulation speed"). It must be set before numpy loads; an explicit setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _defer_xdsl_interpreters_init() -> None:
    """Import `xdsl.interpreters` without running its `__init__` until a name only it defines is used.

    That `__init__` imports every interpreter xDSL has, the RISC-V and Snitch ones among them: 0.15 s
    of every tool's start, for modules ziggurat never uses. The package is registered unexecuted; a
    submodule asked of it is imported alone, and any other name (`register_implementations`) runs
    the real `__init__` first, so code that uses the package whole sees it whole.
    """
    if "xdsl.interpreters" in sys.modules:
        return
    spec = importlib.util.find_spec("xdsl.interpreters")
    if spec is None or spec.loader is None:
        return
    package = importlib.util.module_from_spec(spec)

    def __getattr__(name: str):
        if importlib.util.find_spec(f"xdsl.interpreters.{name}") is not None:
            return importlib.import_module(f"xdsl.interpreters.{name}")
        del package.__getattr__
        spec.loader.exec_module(package)
        return getattr(package, name)

    package.__getattr__ = __getattr__
    sys.modules["xdsl.interpreters"] = package
    importlib.import_module("xdsl").interpreters = package


_defer_xdsl_interpreters_init()

__version__ = "0.1.0"
