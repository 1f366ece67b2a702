"""A systolic machine as a SCALE-Sim configuration (the INI file `scalesim -c` reads).

The `systolic` preset's parameters are SCALE-Sim's own, one to one:

    [matrix] rows, cols, dataflow         ArrayHeight, ArrayWidth, Dataflow
    capacity of [matrix] a/b/c_space      IfmapSramSzkB, FilterSramSzkB, OfmapSramSzkB (kB = 1024 B)
    global bandwidth / word_bytes         Bandwidth (words per cycle, InterfaceBandwidth = USER)
    banks, bandwidth of a/b spaces        [layout] IfmapSRAMBankNum, IfmapSRAMBankBandwidth, ...

so cycle counts from ziggurat's timing model can be compared with SCALE-Sim's on the
same array. The text carries every key SCALE-Sim 3.0's `scale_config.read_conf_file`
requires (v2 ignores the ones it does not know).
"""

from __future__ import annotations

from ziggurat.diagnostics import Diagnostic
from ziggurat.machine.loader import MachineError
from ziggurat.machine.model import Machine, MemorySpace

# SCALE-Sim lays the three operands out at these word addresses in its traces (its defaults).
IFMAP_OFFSET, FILTER_OFFSET, OFMAP_OFFSET = 0, 10_000_000, 20_000_000
REQUEST_BUFFER_ENTRIES = 32


def _whole(value: float, what: str, machine: Machine, problems: list[str]) -> int:
    if value != int(value) or value < 1:
        problems.append(
            f"SCALE-Sim takes a whole positive number for {what}, but machine '{machine.name}' gives {value:g}"
        )
    return int(value)


def to_scalesim_config(machine: Machine) -> str:
    """The SCALE-Sim configuration of a single-core systolic machine; MachineError if it is not one."""
    matrix = machine.matrix
    problems: list[str] = []
    if matrix.dataflow is None or matrix.rows is None or matrix.cols is None:
        problems.append(
            f"machine '{machine.name}' has no systolic array to describe to SCALE-Sim "
            "([matrix] gives no dataflow, rows and cols)"
        )
    if machine.cores != 1:
        problems.append(
            f"SCALE-Sim models one array, but machine '{machine.name}' has {machine.cores} cores"
        )

    def kilobytes(space: MemorySpace, what: str) -> int:
        return _whole(
            space.capacity / 1024, f"{what} (capacity of '{space.name}' in KiB)", machine, problems
        )

    def words_per_cycle(bytes_per_cycle: float, what: str) -> int:
        return _whole(
            bytes_per_cycle / machine.word_bytes, f"{what} (words per cycle)", machine, problems
        )

    ifmap, filter_, ofmap = (
        machine.memories[name] for name in (matrix.a_space, matrix.b_space, matrix.c_space)
    )
    ifmap_kb, filter_kb, ofmap_kb = (
        kilobytes(ifmap, "IfmapSramSzkB"),
        kilobytes(filter_, "FilterSramSzkB"),
        kilobytes(ofmap, "OfmapSramSzkB"),
    )
    bandwidth = words_per_cycle(machine.global_bandwidth(), "Bandwidth")
    ifmap_bank = words_per_cycle(ifmap.read_bytes_per_cycle / ifmap.banks, "IfmapSRAMBankBandwidth")
    filter_bank = words_per_cycle(
        filter_.read_bytes_per_cycle / filter_.banks, "FilterSRAMBankBandwidth"
    )
    if problems:
        raise MachineError([Diagnostic("error", problem, machine.source) for problem in problems])
    return f"""\
# SCALE-Sim configuration of machine '{machine.name}' ({machine.source}), written by ziggurat.
[general]
run_name = {machine.name}

[architecture_presets]
ArrayHeight : {matrix.rows}
ArrayWidth : {matrix.cols}
IfmapSramSzkB : {ifmap_kb}
FilterSramSzkB : {filter_kb}
OfmapSramSzkB : {ofmap_kb}
IfmapOffset : {IFMAP_OFFSET}
FilterOffset : {FILTER_OFFSET}
OfmapOffset : {OFMAP_OFFSET}
Bandwidth : {bandwidth}
Dataflow : {matrix.dataflow}
MemoryBanks : 1
ReadRequestBuffer : {REQUEST_BUFFER_ENTRIES}
WriteRequestBuffer : {REQUEST_BUFFER_ENTRIES}

[layout]
IfmapCustomLayout : False
IfmapSRAMBankBandwidth : {ifmap_bank}
IfmapSRAMBankNum : {ifmap.banks}
IfmapSRAMBankPort : 2
FilterCustomLayout : False
FilterSRAMBankBandwidth : {filter_bank}
FilterSRAMBankNum : {filter_.banks}
FilterSRAMBankPort : 2

[sparsity]
SparsitySupport : false

[run_presets]
InterfaceBandwidth : USER
UseRamulatorTrace : False
"""
