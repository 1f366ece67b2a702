"""A systolic machine as a SCALE-Sim configuration (the INI file `scalesim -c` reads).

The `systolic` preset's parameters are SCALE-Sim's own, one to one:

    [matrix] rows, cols, dataflow         ArrayHeight, ArrayWidth, Dataflow
    capacity of [matrix] a/b/c_space      IfmapSramSzkB, FilterSramSzkB (kB = 1024 B), OfmapSramSzkB (in outputs)
    rate of the DMA into a_space / b_space    IfmapSRAMBankBandwidth / FilterSRAMBankBandwidth
    rate of the DMA out of c_space        Bandwidth (words per cycle, InterfaceBandwidth = USER)

so cycle counts from ziggurat's timing model can be compared with SCALE-Sim's on the
same array. In USER mode SCALE-Sim 3.0 reads DRAM into its ifmap and filter scratchpads at
their `*SRAMBankBandwidth` each (two independent streams) and drains the ofmap at
`Bandwidth` (single_layer_sim.py); a rate is the engine's, capped by the global memory's read
(or write) bandwidth. Without a custom layout SCALE-Sim reads `*SRAMBankNum` only to assert
that it divides the bank bandwidth, so it is 1. The text carries every key SCALE-Sim 3.0's
`scale_config.read_conf_file` requires (v2 ignores the ones it does not know).
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


def to_scalesim_config(machine: Machine, output_bytes: int | None = None) -> str:
    """The SCALE-Sim configuration of a single-core systolic machine; MachineError if it is not one.

    SCALE-Sim counts every value in words, outputs too: `output_bytes` (default: the machine's
    `word_bytes`) is what one output occupies on the way to global memory, so `Bandwidth` is
    the outputs per cycle the ofmap drain moves and `OfmapSramSzkB` the outputs (in Ki) the
    ofmap holds (an i32 accumulator stored as it is: 4)."""
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

    if problems:  # not a machine SCALE-Sim describes: its spaces and engines say no more
        raise MachineError([Diagnostic("error", problem, machine.source) for problem in problems])

    word = machine.word_bytes
    output = output_bytes or word

    def kilowords(space: MemorySpace, what: str, unit_bytes: int) -> int:
        """Ki of `unit_bytes`-byte values the space holds (its KiB for 1)."""
        return _whole(
            space.capacity / unit_bytes / 1024,
            f"{what} (capacity of '{space.name}' in Ki of {unit_bytes}-byte values)",
            machine,
            problems,
        )

    global_space = machine.global_memory()

    def rate(src: str, dst: str, what: str, unit_bytes: int) -> int:
        """Words per cycle the engine on `src -> dst` moves, capped by global memory's side."""
        engine = machine.dma_for(src, dst)
        if engine is None:
            problems.append(
                f"SCALE-Sim moves {what} between DRAM and a scratchpad, but machine "
                f"'{machine.name}' has no DMA engine for '{src}' -> '{dst}'"
            )
            return 1
        side = (
            global_space.read_bytes_per_cycle
            if src == global_space.name
            else global_space.write_bytes_per_cycle
        )
        return _whole(
            min(engine.bytes_per_cycle, side) / unit_bytes,
            f"{what} (words per cycle of DMA engine '{engine.name}')",
            machine,
            problems,
        )

    ifmap, filter_, ofmap = (
        machine.memories[name] for name in (matrix.a_space, matrix.b_space, matrix.c_space)
    )
    ifmap_kb, filter_kb, ofmap_kb = (
        kilowords(ifmap, "IfmapSramSzkB", 1),
        kilowords(filter_, "FilterSramSzkB", 1),
        kilowords(ofmap, "OfmapSramSzkB", output),
    )
    ifmap_bank = rate(global_space.name, ifmap.name, "IfmapSRAMBankBandwidth", word)
    filter_bank = rate(global_space.name, filter_.name, "FilterSRAMBankBandwidth", word)
    bandwidth = rate(ofmap.name, global_space.name, "Bandwidth", output)
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
IfmapSRAMBankNum : 1
IfmapSRAMBankPort : 2
FilterCustomLayout : False
FilterSRAMBankBandwidth : {filter_bank}
FilterSRAMBankNum : 1
FilterSRAMBankPort : 2

[sparsity]
SparsitySupport : false

[run_presets]
InterfaceBandwidth : USER
UseRamulatorTrace : False
"""
