"""The peers that benchmarks time beside ziggurat on the same ONNX file, each in a child process of a
Python that has it installed (`make bench` installs them all: the `bench` extra):

* TVM (Relax's ONNX frontend, `relax.build` for llvm) and IREE (`iree-import-onnx` at opset 17,
  `iree-compile` for llvm-cpu) compile it, from loading the file to the compiled module;
* onnxruntime creates an inference session for it (graph optimizations at their default).

Each is timed from the file's loading, its imports left out. A peer that is not installed there,
fails or runs past the timeout is skipped with the reason.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Peer:
    """Another tool's time for the same ONNX file, or why it was skipped."""

    name: str
    version: str | None = None
    wall_seconds: float | None = None
    cpu_seconds: float | None = None
    skipped: str | None = None


NOT_INSTALLED = 3
"""A peer script's exit status when its package does not import."""

_PEER_PROLOGUE = f"""\
import json, os, resource, sys, tempfile, time
NOT_INSTALLED = {NOT_INSTALLED}
def cpu():
    return sum(getattr(resource.getrusage(w), f) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN) for f in ("ru_utime", "ru_stime"))
"""
_PEER_EPILOGUE = """
print(json.dumps({"version": version, "wall_seconds": time.perf_counter() - wall, "cpu_seconds": cpu() - used}))
"""

PEERS: dict[str, tuple[str, str]] = {
    "TVM": (
        "pip install apache-tvm",
        """\
try:
    import onnx, tvm
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx
except ImportError:
    sys.exit(NOT_INSTALLED)
version = tvm.__version__
wall, used = time.perf_counter(), cpu()
relax.build(from_onnx(onnx.load(sys.argv[1]), keep_params_in_input=False), target="llvm")
""",
    ),
    "IREE": (
        "pip install 'iree-base-compiler[onnx]'",
        """\
try:
    import iree.compiler.tools as iree
    from iree.compiler.tools.import_onnx.__main__ import main as import_onnx, parse_arguments
    from iree.compiler.version import VERSION as version
except ImportError:
    sys.exit(NOT_INSTALLED)
wall, used = time.perf_counter(), cpu()
with tempfile.TemporaryDirectory() as folder:
    imported = os.path.join(folder, "model.mlir")
    # opset 17: IREE legalizes the recent forms of ops (ResNet-50's opset-9 BatchNormalization it does not)
    import_onnx(parse_arguments([sys.argv[1], "--opset-version", "17", "-o", imported]))
    iree.compile_file(imported, target_backends=["llvm-cpu"], extra_args=["--iree-llvmcpu-target-cpu=host"],
                      output_file=os.path.join(folder, "model.vmfb"))
""",
    ),
    "onnxruntime": (
        "pip install onnxruntime",
        """\
try:
    import onnxruntime
except ImportError:
    sys.exit(NOT_INSTALLED)
version = onnxruntime.__version__
wall, used = time.perf_counter(), cpu()
onnxruntime.InferenceSession(sys.argv[1], providers=["CPUExecutionProvider"])
""",
    ),
}
"""Peer name -> (how to install it, the script that reads argv[1] and sets `version`, `wall`, `used`)."""

COMPILERS = ("TVM", "IREE")
"""The peers that compile the model (onnxruntime only prepares to run it)."""


def measure_peer(name: str, model: Path, python: str, timeout: float) -> Peer:
    """`name`'s time for `model` in a child process of `python`, or why it was skipped."""
    install, body = PEERS[name]
    script = _PEER_PROLOGUE + body + _PEER_EPILOGUE
    try:
        done = subprocess.run(
            [python, "-c", script, str(model)], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return Peer(name, skipped=f"stopped after {timeout:g} s")
    except OSError as error:
        return Peer(name, skipped=f"cannot run {python}: {error.strerror}")
    if done.returncode == NOT_INSTALLED:
        return Peer(name, skipped=f"not installed ({install})")
    if done.returncode:
        last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return Peer(name, skipped=f"failed: {last[:300]}")
    return Peer(name, **json.loads(done.stdout.strip().splitlines()[-1]))
