"""`python -m ziggurat.machine`: check machine files, list the presets, write SCALE-Sim's configuration."""

from __future__ import annotations

import argparse

import ziggurat.machine
from ziggurat.cli import run_main
from ziggurat.diagnostics import Diagnostic
from ziggurat.machine.loader import MachineError, list_presets, load_machine, preset_file
from ziggurat.machine.model import Machine
from ziggurat.machine.scalesim import to_scalesim_config


def summary(machine: Machine) -> str:
    """A few lines a person can check a machine file against."""
    lines = [
        f"{machine.name}: {machine.description}".rstrip(": "),
        f"  {machine.cores} core(s) at {machine.clock_hz / 1e9:g} GHz; pipes: {', '.join(machine.pipes)}",
    ]
    for space in machine.memories.values():
        lines.append(
            f"  memory {space.name}: {space.level}, {space.capacity} B, "
            f"{space.read_bytes_per_cycle:g}/{space.write_bytes_per_cycle:g} B/cycle read/write, "
            f"latency {space.latency}"
        )
    for dma in machine.dmas.values():
        paths = ", ".join(f"{src}->{dst}" for src, dst in dma.paths)
        lines.append(
            f"  dma {dma.name} (pipe {dma.pipe}): {paths}; {dma.bytes_per_cycle:g} B/cycle"
        )
    for (in_dtype, acc_dtype), rate in machine.matrix.dtypes.items():
        m, n, k = machine.matrix.shapes[in_dtype, acc_dtype]
        tflops = machine.peak_flops(in_dtype, acc_dtype) / 1e12
        lines.append(
            f"  matrix {machine.matrix.name} {in_dtype}->{acc_dtype}: {m}x{n}x{k}, "
            f"{rate:g} MACs/cycle/core, {tflops:g} TFLOP/s peak"
        )
    lines.append(f"  vector {machine.vector.name}: {machine.vector.bytes_per_cycle:g} B/cycle")
    global_memory = machine.global_memory()
    lines.append(
        f"  global bandwidth: {machine.global_bandwidth():g} B/cycle "
        f"({machine.global_bandwidth() * machine.clock_hz / 1e9:g} GB/s) in {global_memory.name}"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    description = (ziggurat.machine.__doc__ or "").split("\n")[0]
    parser = argparse.ArgumentParser(prog="python -m ziggurat.machine", description=description)
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser(
        "check", help="validate machine files (or preset names) and summarize them"
    )
    check.add_argument("machines", nargs="+", metavar="FILE")
    commands.add_parser("list", help="list the preset names")
    scalesim = commands.add_parser(
        "scalesim", help="print the SCALE-Sim configuration of a systolic machine"
    )
    scalesim.add_argument("machine", metavar="FILE")
    args = parser.parse_args(argv)
    if args.command == "list":
        for name in list_presets():
            print(f"{name}\t{preset_file(name)}")
        return 0
    if args.command == "scalesim":
        print(to_scalesim_config(load_machine(args.machine)), end="")
        return 0
    problems: list[Diagnostic] = []
    for name in args.machines:
        try:
            print(summary(load_machine(name)))
        except MachineError as e:
            problems += e.diagnostics
    if problems:
        raise MachineError(problems)
    return 0


if __name__ == "__main__":
    run_main(main)
