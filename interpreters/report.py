"""What a run of an npu program cost, as a dictionary (for `--report json`) or a table (`--report text`):
the total cycles and time, each pipe's busy share, the bytes per memory space, the roofline bound
and, per layer, where the time went.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import AnyFloat, FileLineColLoc, MemRefType, NameLoc
from xdsl.ir import Operation

from ziggurat.interpreters.timing import TimingStats
from ziggurat.machine import Machine

UNATTRIBUTED = "(no source location)"
TOP_LAYERS = 10
"""Layers `format_report` lists, the longest first."""


def layer_of(op: Operation) -> str:
    """The layer an instruction belongs to: where the op it was lowered from came from, or,
    for an instruction a pass made with no location, where its closest located enclosing
    op (a tile loop) came from."""
    current: Operation | None = op
    while current is not None:
        location = current.location
        if isinstance(location, NameLoc):
            return location.desc.data
        if isinstance(location, FileLineColLoc):
            return f"{Path(location.filename.data).name}:{location.line.data}"
        current = current.parent_op()
    return UNATTRIBUTED


def float_types(op: Operation) -> set[str]:
    """The float element types of the buffers an instruction reads or writes."""
    return {
        str(t.element_type)
        for t in op.operand_types
        if isinstance(t, MemRefType) and isinstance(t.element_type, AnyFloat)
    }


def layer_breakdown(stats: TimingStats) -> list[dict[str, Any]]:
    """Per layer: cycles from its first instruction's start to its last one's end, busy cycles
    per pipe, instruction count and the float types its instructions compute in (its
    precision: `f16` and the `f32` of its accumulators, say); the longest layer first."""
    spans: dict[str, list[float]] = {}
    core_spans: dict[str, dict[int, list[float]]] = defaultdict(dict)
    busy: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    count: dict[str, int] = defaultdict(int)
    ops: dict[str, set[Operation]] = defaultdict(set)
    for event in stats.events:
        layer = layer_of(event.call if event.call is not None else event.op)
        ops[layer].add(event.op)
        start, end = spans.setdefault(layer, [event.start, event.end])
        spans[layer] = [min(start, event.start), max(end, event.end)]
        if stats.cores > 1:
            start, end = core_spans[layer].setdefault(event.core, [event.start, event.end])
            core_spans[layer][event.core] = [min(start, event.start), max(end, event.end)]
        busy[layer][event.pipe] += event.end - event.start
        count[layer] += 1
    layers = [
        {
            "layer": name,
            "cycles": end - start,
            "busy_cycles": dict(busy[name]),
            "instructions": count[name],
            "float_types": sorted(set().union(*(float_types(op) for op in ops[name]))),
        }
        for name, (start, end) in spans.items()
    ]
    if stats.cores > 1:
        for layer in layers:
            layer["imbalance"] = load_imbalance(core_spans[layer["layer"]], stats.cores)
    # cycles equal but for float rounding (a launch whose timing is replayed adds its cycles to
    # another start) keep program order, as exactly equal ones do
    return sorted(layers, key=lambda layer: -round(layer["cycles"], 6))


def load_imbalance(spans: dict[int, list[float]], cores: int) -> float:
    """Max over mean of the cores' busy time in a layer (each core's span from its first
    instruction of the layer to its last; 0 for a core with none): 1 when every core is as
    busy, `cores` when one core does it all."""
    busy = [end - start for start, end in spans.values()]
    mean = sum(busy) / cores
    return max(busy) / mean if mean else 1.0


def core_breakdown(stats: TimingStats) -> list[dict[str, Any]]:
    """Per core: busy cycles of each pipe and their share of the run."""
    busy: list[dict[str, float]] = [defaultdict(float) for _ in range(stats.cores)]
    for event in stats.events:
        busy[event.core][event.pipe] += event.end - event.start
    total = stats.total_cycles
    return [
        {
            "core": core,
            "busy_cycles": dict(pipes),
            "utilization": {
                pipe: cycles / total if total else 0.0 for pipe, cycles in pipes.items()
            },
        }
        for core, pipes in enumerate(busy)
    ]


def roofline(compute: float, memory: float, total_cycles: float) -> dict[str, Any]:
    """The bound of a run from its compute and global-memory cycles, and the share of it achieved."""
    bound = max(compute, memory)
    return {
        "compute_cycles": compute,
        "global_memory_cycles": memory,
        "bound_cycles": bound,
        "bound_by": "compute" if compute >= memory else "global memory",
        "achieved": bound / total_cycles if total_cycles else 0.0,
    }


def useful_peak(machine: Machine, pair: tuple[str, str]) -> float:
    """The matrix unit's MACs per cycle for a recorded (input, output) pair: the pair's own rate,
    else that of the unit's first pair with the same input type (a contraction whose output is
    f16 accumulates in the unit's f32)."""
    rate = machine.peak_macs_per_cycle(*pair)
    if rate:
        return rate
    rates = [rate for (source, _), rate in machine.matrix.dtypes.items() if source == pair[0]]
    if not rates:
        raise ValueError(
            f"machine '{machine.name}' has no matrix instruction for {pair[0]} inputs: "
            "the program was compiled for another machine"
        )
    return rates[0]


def build_report(stats: TimingStats, machine: Machine, layers: bool = False) -> dict[str, Any]:
    """The report of one run as plain data (JSON-serializable); with `layers`, also the
    per-layer breakdown under "layers".

    The roofline bound is the fewest cycles the work could take, the larger of the
    matrix units' multiply-accumulates at their peak rate for each dtype pair
    (spread over the cores that ran) and the global-memory traffic at the read and
    write bandwidths those cores share (the slower direction, since the timing
    model streams reads and writes side by side); the report gives the fraction of
    it the run achieved. That bound counts what ran: MACs padded to the unit's
    instruction shape, and every byte moved, however often. When the program records
    the model's own work (`ziggurat.ir.useful_work`), the useful roofline bounds the
    run by that instead: the unpadded MACs at the same peaks, and each input and
    weight read and each output written once; the waste of a lowering lowers its
    share achieved there, never its bound. Layers group the instructions by the source location they
    were lowered from (an ONNX node's name, or `file:line` of a graph-level op); a
    layer's time is the span from its first instruction's start to its last one's
    end, and the spans add up to about the total.
    """
    # the work of `stats.cores` cores, each with its own matrix unit and its share of global bandwidth
    compute = (
        sum(macs / machine.peak_macs_per_cycle(*pair) for pair, macs in stats.macs.items())
        / stats.cores
    )
    share = (
        max(1, stats.active_cores) / stats.cores
    )  # each core that ran gets 1 / active_cores of the bandwidth
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
    report = stats.to_dict()
    useful = None
    if stats.useful is not None:
        useful_compute = (
            sum(macs / useful_peak(machine, pair) for pair, macs in stats.useful.macs.items())
            / stats.cores
        )
        space = machine.global_memory()
        useful_memory = share * max(
            stats.useful.bytes_read / space.read_bytes_per_cycle,
            stats.useful.bytes_written / space.write_bytes_per_cycle,
        )
        useful = (useful_compute, useful_memory)
        report["useful_roofline"] = roofline(*useful, stats.total_cycles)
    if stats.cores > 1:
        # the whole chip: every core's matrix unit, and global bandwidth all to itself
        chip_compute = compute * stats.cores / machine.cores
        chip_memory = memory / share
        report.update(
            chip_roofline=roofline(chip_compute, chip_memory, stats.total_cycles),
            per_core=core_breakdown(stats),
        )
        if useful is not None:
            report["chip_useful_roofline"] = roofline(
                useful[0] * stats.cores / machine.cores, useful[1] / share, stats.total_cycles
            )
    report.update(
        clock_hz=machine.clock_hz,
        machine_cores=machine.cores,
        roofline=roofline(compute, memory, stats.total_cycles),
        flops_per_second=stats.flops / stats.seconds if stats.total_cycles else 0.0,
    )
    if layers:
        report["layers"] = layer_breakdown(stats)
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
        *_useful_lines(report),
        f"throughput  {report['flops']:>12,} FLOP   {report['flops_per_second'] / 1e12:.3f} TFLOP/s",
        *_chip_lines(report),
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
    lines += _per_core_lines(report)
    layers = report.get("layers", [])
    if layers:
        shown = layers[:TOP_LAYERS]
        title = (
            f"layers ({len(shown)} longest of {len(layers)})"
            if len(layers) > len(shown)
            else "layers"
        )
        width = max(len(title), *(len(layer["layer"]) for layer in shown))
        imbalance = "imbalance" in shown[0]
        lines += [
            "",
            f"{title:<{width}} {'cycles':>12} {'share':>7} {'instructions':>13}  float types"
            + ("  imbalance" if imbalance else ""),
        ]
        for layer in shown:
            share = layer["cycles"] / cycles if cycles else 0.0
            types = ",".join(layer["float_types"]) or "-"
            lines.append(
                f"{layer['layer']:<{width}} {layer['cycles']:>12,.0f} {share:>7.1%} "
                f"{layer['instructions']:>13,}  {types}"
                + (f"  {layer['imbalance']:.2f}" if imbalance else "")
            )
    return "\n".join(lines)


def _useful_lines(report: dict[str, Any]) -> list[str]:
    useful = report.get("useful_roofline")
    if useful is None:
        return []
    return [
        f"useful      {useful['bound_cycles']:>12,.0f} cycles  bound by {useful['bound_by']}, "
        f"{useful['achieved']:.1%} achieved (unpadded MACs; inputs, weights, outputs moved once)"
    ]


def _chip_lines(report: dict[str, Any]) -> list[str]:
    chip = report.get("chip_roofline")
    if chip is None:
        return []
    lines = [
        f"chip        {chip['bound_cycles']:>12,.0f} cycles  all {report['machine_cores']} cores' "
        f"roofline, bound by {chip['bound_by']}, {chip['achieved']:.1%} achieved"
    ]
    useful = report.get("chip_useful_roofline")
    if useful is not None:
        lines.append(
            f"chip useful {useful['bound_cycles']:>12,.0f} cycles  all {report['machine_cores']} cores' "
            f"useful roofline, bound by {useful['bound_by']}, {useful['achieved']:.1%} achieved"
        )
    return lines


def _per_core_lines(report: dict[str, Any]) -> list[str]:
    """Each pipe's utilization across the cores: the least, mean and most busy core's."""
    per_core = report.get("per_core")
    if not per_core:
        return []
    lines = ["", f"{'per core':<10} {'min':>7} {'mean':>7} {'max':>7}"]
    timed = {pipe for core in per_core for pipe in core["utilization"]}
    for pipe in [pipe for pipe in report["busy_cycles"] if pipe in timed]:
        shares = [core["utilization"].get(pipe, 0.0) for core in per_core]
        lines.append(
            f"{pipe:<10} {min(shares):>7.1%} {sum(shares) / len(shares):>7.1%} {max(shares):>7.1%}"
        )
    return lines
