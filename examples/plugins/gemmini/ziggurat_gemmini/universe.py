"""What ziggurat-gemmini adds to ziggurat: the gemm dialect and its machine."""

from pathlib import Path

from xdsl.universe import Universe

MACHINE_FILE = str(Path(__file__).with_name("gemmini.toml"))
"""The `gemmini` preset (entry point group `ziggurat.machines`)."""


def _gemm():
    from ziggurat_gemmini.gemm import Gemm

    return Gemm


UNIVERSE = Universe(all_dialects={"gemm": _gemm})
