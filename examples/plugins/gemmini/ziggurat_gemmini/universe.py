"""What ziggurat-gemmini adds to ziggurat: the gemm dialect, its instruction selection and its machine."""

from pathlib import Path

from xdsl.universe import Universe

MACHINE_FILE = str(Path(__file__).with_name("gemmini.toml"))
"""The `gemmini` preset (entry point group `ziggurat.machines`)."""


def _gemm():
    from ziggurat_gemmini.gemm import Gemm

    return Gemm


def _npu_to_gemm():
    from ziggurat_gemmini.npu_to_gemm import NpuToGemm

    return NpuToGemm


UNIVERSE = Universe(all_dialects={"gemm": _gemm}, all_passes={"npu-to-gemm": _npu_to_gemm})
