"""What a run of an npu program cost, as a dictionary (for `--report json`) or a table (`--report text`).

    from ziggurat.backends.report import build_report, format_report
    report = build_report(result.stats, machine)   # result from run_npu
    print(format_report(report))

The report has the total cycles and time; per pipe, its busy cycles and share
of the run; per memory space, the bytes read and written; and the roofline
bound: the fewest cycles the work could take on this core, the larger of

* compute: the matrix units' multiply-accumulates at their peak rate for each
  dtype pair, spread over the cores that ran, and
* global memory: the bytes read from and written to global memory at the
  read and write bandwidths those cores share (each core's share: all of it
  divided by the active cores), the slower of the two directions, since the
  timing model streams reads and writes side by side;

with the fraction of that bound the run achieved.
"""

from __future__ import annotations

from typing import Any

from ziggurat.backends.machine import Machine
from ziggurat.backends.timing import TimingStats


def build_report(stats: TimingStats, machine: Machine) -> dict[str, Any]:
    """The report of one run as plain data (JSON-serializable)."""
    # the work of `stats.cores` cores, each with its own matrix unit and its share of global bandwidth
    compute = sum(macs / machine.peak_macs_per_cycle(*pair) for pair, macs in stats.macs.items()) / stats.cores
    share = max(1, stats.active_cores) / stats.cores  # each core that ran gets 1 / active_cores of the bandwidth
    memory = max(
        (
            max(
                stats.bytes_read.get(name, 0) / space.read_bytes_per_cycle,
                stats.bytes_written.get(name, 0) / space.write_bytes_per_cycle,
            )
            * share
            for name, space in machine.memories.items()
            if space.level == "global"
        ),
        default=0.0,
    )
    bound = max(compute, memory)
    report = stats.to_dict()
    report.update(
        clock_hz=machine.clock_hz,
        machine_cores=machine.cores,
        roofline={
            "compute_cycles": compute,
            "global_memory_cycles": memory,
            "bound_cycles": bound,
            "bound_by": "compute" if compute >= memory else "global memory",
            "achieved": bound / stats.total_cycles if stats.total_cycles else 0.0,
        },
        flops_per_second=stats.flops / stats.seconds if stats.total_cycles else 0.0,
    )
    return report


def format_report(report: dict[str, Any]) -> str:
    """A report from `build_report` as an aligned text table."""
    cycles = report["total_cycles"]
    roofline = report["roofline"]
    lines = [
        f"machine {report['machine']}: {report['cores']} core(s) run, {report['active_cores']} of "
        f"{report['machine_cores']} sharing global memory, "
        f"{report['clock_hz'] / 1e9:g} GHz",
        f"total       {cycles:>12,.0f} cycles  {report['seconds'] * 1e6:.3f} us",
        f"roofline    {roofline['bound_cycles']:>12,.0f} cycles  bound by {roofline['bound_by']}, "
        f"{roofline['achieved']:.1%} achieved",
        f"throughput  {report['flops']:>12,} FLOP   {report['flops_per_second'] / 1e12:.3f} TFLOP/s",
        "",
        f"{'pipe':<10} {'busy cycles':>14} {'busy':>7} {'instructions':>13}",
    ]
    for pipe, busy in report["busy_cycles"].items():
        lines.append(
            f"{pipe:<10} {busy:>14,.0f} {report['utilization'][pipe]:>7.1%} {report['instructions'][pipe]:>13,}"
        )
    lines += ["", f"{'memory':<10} {'bytes read':>14} {'bytes written':>14}"]
    for space in sorted(set(report["bytes_read"]) | set(report["bytes_written"])):
        lines.append(
            f"{space:<10} {report['bytes_read'].get(space, 0):>14,} {report['bytes_written'].get(space, 0):>14,}"
        )
    return "\n".join(lines)
