"""ziggurat: an MLIR-style compiler framework on xDSL, from NN graphs to an NPU machine model."""

import os

# The interpreters multiply small tiles, for which OpenBLAS's thread pool costs more than it saves: on
# a busy machine its spinning threads slow a simulation several times over (docs/performance.md,
# "Compile and simulation speed"). It must be set before numpy loads; an explicit setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"
