"""Named pipelines: one name in a `-p` list standing for a sequence of passes (`graph-opt`,
`lower-to-npu`, `compile`), expanded before the passes are built, so that `--print-between-passes`
shows each pass and `--print-pipeline` the expansion.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping

from xdsl.utils.arg_spec import ArgSpec, parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError

from ziggurat.diagnostics import Diagnostic, DiagnosticError
from ziggurat.machine import list_presets, load_machine
from ziggurat.plugins import loaded_entry_points

PipelineOptions = Mapping[str, tuple[object, ...]]
PipelineExpander = Callable[[PipelineOptions], str]


def check_options(pipeline: str, options: PipelineOptions, known: Mapping[str, str]) -> None:
    """Reject an option that `known` (option name -> help) does not list, or one given no single value."""
    for name, values in options.items():
        if name not in known:
            listed = ", ".join(f"{k} ({v})" for k, v in known.items()) or "none"
            raise DiagnosticError(
                Diagnostic(
                    "error", f"pipeline '{pipeline}' has no option '{name}' (options: {listed})"
                )
            )
        if len(values) != 1:
            raise DiagnosticError(
                Diagnostic("error", f"option '{name}' of pipeline '{pipeline}' takes one value")
            )


GRAPH_LAYOUTS = ("NCHW", "NHWC")


GROUP_LOOP_CHANNELS = 16
"""The most output channels per group of a grouped conv that `graph-opt` leaves to `graph-to-tile`'s
group loop: the output then is written as channel g * og + c, and `tile-decompose-conv` reads that
only when og is one tile (no preset's matrix unit tiles N finer than 16; RegNet's groups are 8 or
16 wide). Wider groups (AlexNet's 2 of 192, ShuffleNet v1's) are one conv each."""


def graph_opt(options: PipelineOptions) -> str:
    """Graph-level optimization: fold constants, simplify, fold batch norms into the
    convs/GEMMs before them (after folding, so their parameters are constants), drop
    what became dead or duplicate, then group ops for fusion last, as the groups hide
    their members from the passes before.

    A grouped conv with at most `GROUP_LOOP_CHANNELS` output channels per group stays
    one op (`graph-to-tile` lowers it to one contraction whose groups are a loop); one
    with more is split into one conv per group (`graph-split-grouped-conv`), each then a
    conv that fills the matrix unit. Option `layout=NHWC` also converts the spatial ops with
    `graph-layout` (which cancels the transposes it can) after the batch norms are
    folded, as a batch norm stays NCHW, and first splits every grouped conv with several
    output channels per group into one conv per group.
    Option `machine=M` (what `compile` passes) also gives a strided conv over few
    channels its space-to-depth input where that saves M's matrix unit work
    (`graph-space-to-depth{machine=M}`, with the weights final; their
    rearrangement folds), and first, while the weights' DequantizeLinear is not yet folded,
    computes QDQ convolutions and matrix products in int8 where M's matrix unit has int8
    (`graph-integer-qdq{machine=M}`)."""
    check_options(
        "graph-opt",
        options,
        {
            "layout": "NCHW (default: unchanged) or NHWC",
            "machine": "a preset or machine TOML file (default: none)",
        },
    )
    passes = [
        "graph-fold-constants",
        "graph-canonicalize",
        "graph-fold-batch-norm",
    ]
    if "machine" in options:
        machine = str(options["machine"][0])
        load_machine(machine)
        passes.insert(0, f"graph-integer-qdq{{machine={quoted(machine)}}}")
        passes += [f"graph-space-to-depth{{machine={quoted(machine)}}}", "graph-fold-constants"]
    layout = str(options.get("layout", ("NCHW",))[0])
    if layout not in GRAPH_LAYOUTS:
        raise DiagnosticError(
            Diagnostic(
                "error",
                f"graph-opt: layout must be one of {', '.join(GRAPH_LAYOUTS)}, got '{layout}'",
            )
        )
    if layout != "NCHW":
        # An NHWC grouped conv's (n, oh, ow, g, og) tiles do not lower yet (an epilogue operand
        # not contiguous in its innermost dim): such convs are still split, one per group.
        passes.insert(passes.index("graph-fold-batch-norm") + 1, "graph-split-grouped-conv")
        passes.append(f"graph-layout{{layout={layout}}}")
    else:
        split = f"graph-split-grouped-conv{{min-out-per-group={GROUP_LOOP_CHANNELS + 1}}}"
        passes.insert(passes.index("graph-fold-batch-norm") + 1, split)
    return ",".join([*passes, "cse", "dce", "graph-fuse"])


def machine_option(pipeline: str, options: PipelineOptions) -> str:
    """The `machine` option of `pipeline`: required, a preset name or a machine TOML file
    that loads (so an unknown machine is reported once, before any pass runs)."""
    check_options(
        pipeline, options, {"machine": "a preset such as davinci, or a machine TOML file"}
    )
    if "machine" not in options:
        raise DiagnosticError(
            Diagnostic(
                "error",
                f"pipeline '{pipeline}' needs a machine: {pipeline}{{machine=NAME}} "
                f"(presets: {', '.join(list_presets())})",
            )
        )
    machine = str(options["machine"][0])
    load_machine(machine)
    return machine


LOWER_TO_NPU_PASSES = (
    "graph-fuse",
    "graph-to-tile",
    "tile-record-useful-work",
    "tile-and-fuse{M}",
    "tile-decompose-conv",
    "tile-vectorize{M}",
    "canonicalize",
    "tile-to-loop{M}",
    "loop-promote-to-memory-space{M}",
    "loop-legalize-copies{M}",
    "loop-stage-reduction",
    "loop-hoist-copies",
    "loop-double-buffer{M}",
    "loop-to-npu{M}",
    "npu-hoist-invariant{M}",
    "npu-plan-memory{M}",
    "npu-insert-sync{M}",
)
"""The passes of `lower-to-npu`, as docs/lowering.md lists them; `{M}` takes the machine. Memory is
planned before sync is inserted, so that the flags also order buffers that share bytes."""


def cores_option(pipeline: str, options: PipelineOptions) -> tuple[int, PipelineOptions]:
    """The `cores` option of `pipeline` (default 1: one core) and the other options."""
    rest = {name: values for name, values in options.items() if name != "cores"}
    if "cores" not in options:
        return 1, rest
    values = options["cores"]
    if len(values) != 1 or not isinstance(values[0], int) or values[0] < 1:
        raise DiagnosticError(
            Diagnostic("error", f"option 'cores' of pipeline '{pipeline}' takes one integer >= 1")
        )
    return values[0], rest


def lower_to_npu(options: PipelineOptions) -> str:
    """Graph level to npu instructions for one machine (docs/lowering.md, level by level):
    fuse, lower to linalg on tensors, tile and fuse each group, make contractions matmul-like
    and elementwise ops one vector instruction each, bufferize into loops, place the buffers in
    the machine's memory spaces with overlapped copies, then select instructions, give each
    buffer its address and add the flags between pipes. Option `cores=N` (default 1) divides
    each group's tiles among N cores (`loop-distribute`, right after `tile-to-loop`) and gives each
    core its own copy of the global-memory scratch (`npu-private-scratch`, before memory is
    planned)."""
    cores, options = cores_option("lower-to-npu", options)
    machine = machine_option("lower-to-npu", options)
    spec = f"{{machine={quoted(machine)}}}"
    passes = [name.replace("{M}", spec) for name in LOWER_TO_NPU_PASSES]
    if cores != 1:
        at = passes.index(f"tile-and-fuse{spec}")
        passes[at] = f"tile-and-fuse{{machine={quoted(machine)} cores={cores}}}"
        at = LOWER_TO_NPU_PASSES.index("tile-to-loop{M}") + 1
        passes.insert(at, f"loop-distribute{{machine={quoted(machine)} cores={cores}}}")
        at = passes.index(f"npu-plan-memory{spec}")
        passes.insert(at, "npu-private-scratch")
    return ",".join(passes)


def compile_pipeline(options: PipelineOptions) -> str:
    """Everything, graph level to npu: `graph-opt` for the machine, then `lower-to-npu` for it
    (with its `cores` option)."""
    cores, options = cores_option("compile", options)
    machine = machine_option("compile", options)
    spec = f"{{machine={quoted(machine)}}}"
    lower = spec if cores == 1 else f"{{machine={quoted(machine)} cores={cores}}}"
    return f"graph-opt{spec},lower-to-npu{lower}"


def quoted(machine: str) -> str:
    """`machine` as a pass option's value in `-p` syntax."""
    # A path holds characters the -p syntax reserves; a preset name reads better bare.
    return machine if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", machine) else json.dumps(machine)


PIPELINES: dict[str, PipelineExpander] = {
    "graph-opt": graph_opt,
    "lower-to-npu": lower_to_npu,
    "compile": compile_pipeline,
}


def register_pipeline(name: str, expander: PipelineExpander) -> None:
    """Make `name` a pipeline of `-p` lists, expanded by `expander`.

    An expander maps the options given in the `-p` text (`graph-opt{layout=NHWC}`
    gives `{"layout": ("NHWC",)}`, as xDSL's `ArgSpec` parses them) to the plain
    `-p` text the name stands for, which may name other pipelines. Plugins register
    here or through the entry point group `ziggurat.pipelines`, each entry point
    naming the pipeline and loading to its expander; they are loaded the first
    time a `-p` list is expanded. A name registered twice, or an entry point that
    does not load to a function, is an error.
    """
    if name in PIPELINES:
        raise ValueError(f"pipeline '{name}' is already registered")
    PIPELINES[name] = expander


ENTRY_POINT_GROUP = "ziggurat.pipelines"
_entry_points_loaded = False


def _load_entry_points() -> None:
    """Register the pipelines of installed plugins (entry points in `ziggurat.pipelines`)."""
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for name, expander, where in loaded_entry_points(ENTRY_POINT_GROUP):
        if not callable(expander):
            raise DiagnosticError(
                Diagnostic(
                    "error",
                    f"{where} must load to a pipeline expander function, got {type(expander).__name__}",
                )
            )
        try:
            register_pipeline(name, expander)
        except ValueError as e:
            raise DiagnosticError(Diagnostic("error", f"{where}: {e}")) from None


def expand_pipeline(spec: str, _expanding: tuple[str, ...] = ()) -> str:
    """`spec` (a `-p` list) with every named pipeline replaced by the passes it stands for."""
    _load_entry_points()
    try:
        arg_specs = list(parse_pipeline(spec))
    except ArgSpecParseError:
        # Malformed text: the pass-pipeline parser of the caller reports it with a caret.
        return spec
    return ",".join(_expand_one(arg_spec, _expanding) for arg_spec in arg_specs)


def _expand_one(arg_spec: ArgSpec, expanding: tuple[str, ...]) -> str:
    expander = PIPELINES.get(arg_spec.name)
    if expander is None:
        return str(arg_spec)
    if arg_spec.name in expanding:
        cycle = " -> ".join((*expanding, arg_spec.name))
        raise DiagnosticError(Diagnostic("error", f"pipeline expands into itself: {cycle}"))
    return expand_pipeline(expander(arg_spec.parameters), (*expanding, arg_spec.name))
