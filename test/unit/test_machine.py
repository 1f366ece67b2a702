"""The machine model: presets and their derived figures, every diagnostic at its TOML line, `extends`,
plugins' presets, the SCALE-Sim mapping, and robustness of the loader against mangled files."""

from __future__ import annotations

import configparser
import itertools
import subprocess
import sys
import tempfile
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ziggurat.plugins as ziggurat_plugins
from ziggurat.machine import (
    PRESET_DIR,
    Machine,
    MachineError,
    list_presets,
    load_machine,
    register_preset,
)
from ziggurat.machine import loader as machine_loader
from ziggurat.machine.scalesim import to_scalesim_config

TINY = """\
name = "tiny"
clock = "1 GHz"
cores = 2

[memory.gm]
level = "global"
capacity = "1 GiB"
bandwidth = "100 GB/s"

[memory.l1]
level = "local"
capacity = "512 KiB"
bandwidth = 64

[dma.load]
paths = ["gm -> l1"]
bandwidth = 32
shared_bandwidth = "gm"

[dma.store]
paths = ["l1 -> gm"]
bandwidth = "32 B/cycle"

[matrix]
shape = [8, 8, 8]
a_space = "l1"
b_space = "l1"
c_space = "l1"

[matrix.macs_per_cycle]
"f16->f32" = 512

[vector]
bandwidth = 64
spaces = ["l1"]
ops = ["add", "exp"]
"""


def write(tmp_path: Path, text: str, name: str = "machine.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def problems(path: Path | str) -> list[str]:
    """`file:line: message` of each diagnostic, file reduced to its name."""
    with pytest.raises(MachineError) as info:
        load_machine(path)
    return [
        f"{Path(d.file).name if d.file else ''}:{d.line}: {d.message}"
        for d in info.value.diagnostics
    ]


def line_of(text: str, fragment: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if fragment in line)


def edit(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


# --------------------------------------------------------------------------- presets


def test_presets_are_listed():
    assert {"davinci", "systolic", "tensorcore"} <= set(list_presets())


def test_davinci():
    m = load_machine("davinci")
    assert (m.cores, m.clock_hz) == (32, 1e9)
    assert m.peak_macs_per_cycle("f16", "f32") == 16 * 16 * 16
    assert m.peak_macs_per_cycle("i8", "i32") == 16 * 16 * 32
    assert m.peak_macs_per_cycle("bf16", "f32") == 16 * 16 * 16  # the 910B cube
    assert m.peak_macs_per_cycle("f8E4M3FN", "f32") == 0
    assert (m.matrix.m, m.matrix.n, m.matrix.k) == (16, 16, 16)
    assert m.matrix.shape_for("i8", "i32") == (16, 16, 32)
    assert m.matrix.instruction_shape("f16", "f32") == (16, 16, 16)
    assert m.matrix.instruction_shape("i8", "i32") == (16, 16, 32)
    assert m.peak_flops("f16", "f32") == pytest.approx(2 * 4096 * 32 * 1e9)
    assert m.global_bandwidth() == pytest.approx(1.2e12 / 1e9)
    capacities = {name: space.capacity for name, space in m.memories.items()}
    assert capacities == {
        "gm": 32 << 30,
        "l1": 1 << 20,
        "l0a": 64 << 10,
        "l0b": 64 << 10,
        "l0c": 256 << 10,
        "ub": 256 << 10,
    }
    assert m.memories["gm"].shared_by_cores and not m.memories["ub"].shared_by_cores
    assert (m.matrix.a_space, m.matrix.b_space, m.matrix.c_space) == ("l0a", "l0b", "l0c")
    engines = {
        (src, dst): m.dma_for(src, dst).name for dma in m.dmas.values() for src, dst in dma.paths
    }
    assert engines == {
        ("gm", "l1"): "mte2",
        ("gm", "ub"): "mte2",
        ("l1", "l0a"): "mte1",
        ("l1", "l0b"): "mte1",
        ("ub", "gm"): "mte3",
        ("l0c", "ub"): "fixpipe",
        ("l0c", "gm"): "fixpipe",
    }
    assert m.dma_for("gm", "l0a") is None
    assert (
        m.dmas["mte1"].transpose
        and m.dmas["fixpipe"].cast
        and m.dmas["mte2"].shared_bandwidth == "gm"
    )
    assert m.vector.lanes(2) == 128 and m.vector.spaces == ("ub",)
    assert m.pipes == ("scalar", "mte2", "mte1", "mte3", "fixpipe", "cube", "vector")
    assert m.flag_ids == 8 and m.scalar_pipe == "scalar"


def test_systolic_matches_scalesim_default():
    m = load_machine("systolic")
    assert (m.matrix.rows, m.matrix.cols, m.matrix.dataflow) == (32, 32, "os")
    assert m.peak_macs_per_cycle("i8", "i32") == 32 * 32
    assert [
        m.memories[s].capacity for s in (m.matrix.a_space, m.matrix.b_space, m.matrix.c_space)
    ] == [64 * 1024] * 3
    assert m.word_bytes == 1 and m.global_bandwidth() == 10
    assert m.cores == 1


def test_tensorcore_is_an_a100():
    m = load_machine("tensorcore")
    assert (m.cores, m.clock_hz) == (108, 1.41e9)
    # A100 whitepaper: 312 TFLOPS dense fp16/bf16, 624 TOPS int8.
    assert m.peak_flops("f16", "f32") == pytest.approx(312e12, rel=0.002)
    assert m.peak_flops("bf16", "f32") == pytest.approx(312e12, rel=0.002)
    assert m.peak_flops("i8", "i32") == pytest.approx(624e12, rel=0.002)
    assert m.matrix.shape_for("f16", "f32") == (16, 8, 16)
    assert m.matrix.shape_for("i8", "i32") == (16, 8, 32)
    assert m.global_bandwidth() * m.clock_hz == pytest.approx(2039e9)
    assert m.memories["smem"].capacity == 164 * 1024 and m.memories["smem"].banks == 32
    assert m.dma_for("gm", "smem").name == "cp_async"
    assert m.dma_for("smem", "rf").transpose
    assert m.dma_for("rf", "gm") is m.dma_for("rf", "smem")


@pytest.mark.parametrize("preset", ["davinci", "systolic", "tensorcore"])
def test_preset_cites_sources(preset):
    text = (PRESET_DIR / f"{preset}.toml").read_text()
    assert "Sources (public)" in text and "assumption" in text


def test_loads_are_cached_until_the_file_changes(tmp_path):
    path = write(tmp_path, TINY)
    first = load_machine(path)
    assert load_machine(str(path)) is first
    path.write_text(edit(TINY, "cores = 2", "cores = 3"))
    assert load_machine(path).cores == 3


def test_defaults(tmp_path):
    m = load_machine(write(tmp_path, TINY))
    assert isinstance(m, Machine)
    assert m.name == "tiny" and m.source == str(tmp_path / "machine.toml")
    assert m.pipes == ("scalar", "load", "store", "matrix", "vector")
    assert m.flag_ids == 8 and m.matrix.latency == 1 and m.vector.transcendental_cost == 1.0
    gm = m.memories["gm"]
    assert gm.shared_by_cores and gm.alignment == 32 and gm.banks == 1
    assert gm.read_bytes_per_cycle == gm.write_bytes_per_cycle == 100
    assert m.dmas["store"].bytes_per_cycle == 32 and m.dmas["store"].max_dims == 2
    assert m.matrix.shapes == {("f16", "f32"): (8, 8, 8)}


# --------------------------------------------------------------------------- diagnostics


def test_unknown_key_suggests_the_right_one(tmp_path):
    text = edit(TINY, "bandwidth = 64\n", "bandwith = 64\n")
    assert problems(write(tmp_path, text)) == [
        f"machine.toml:{line_of(text, 'bandwith')}: unknown key 'bandwith' in [memory.l1]; did you mean 'bandwidth'?"
    ]


def test_unknown_table_and_hint(tmp_path):
    text = edit(TINY, "[memory.gm]", "[memroy.gm]")
    text = edit(text, 'capacity = "512 KiB"', "bytes_per_cycle = 3\ncapacity = 1")
    found = problems(write(tmp_path, text))
    assert (
        f"machine.toml:{line_of(text, 'memroy')}: unknown key 'memroy'; did you mean 'memory'?"
        in found
    )
    assert any("'bytes_per_cycle' in [memory.l1]; write 'bandwidth = N'" in p for p in found)


def test_missing_required_key_points_at_the_table(tmp_path):
    text = edit(TINY, 'capacity = "512 KiB"\n', "")
    assert problems(write(tmp_path, text)) == [
        f"machine.toml:{line_of(text, '[memory.l1]')}: [memory.l1] is missing 'capacity'"
    ]


def test_missing_top_level_table(tmp_path):
    text = TINY[: TINY.index("[vector]")]
    assert problems(write(tmp_path, text)) == [
        "machine.toml:None: the machine has no [vector] table"
    ]


# (text to replace in TINY, its replacement, a fragment of the line the diagnostic is on, the message)
MISTAKES = [
    ("cores = 2", 'cores = "two"', "cores", """'cores' must be an integer, not a string ("two")"""),
    ("cores = 2", "cores = 0", "cores", "'cores' must be at least 1, got 0"),
    (
        'clock = "1 GHz"',
        'clock = "1 Ghz"',
        "clock",
        "'clock' has unknown unit 'Ghz' in \"1 Ghz\"; did you mean 'GHz'? (accepted units: Hz, kHz, MHz, GHz)",
    ),
    (
        'capacity = "512 KiB"',
        'capacity = "512 KB/s"',
        "512 KB/s",
        "'capacity' in [memory.l1] has unknown unit 'KB/s' in \"512 KB/s\"; did you mean 'KB'? (accepted units: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)",
    ),
    (
        'capacity = "512 KiB"',
        "capacity = 0",
        "capacity = 0",
        "'capacity' in [memory.l1] must be positive, got 0",
    ),
    (
        'capacity = "512 KiB"',
        'capacity = "0 KiB"',
        "0 KiB",
        "'capacity' in [memory.l1] must be positive and finite, got \"0 KiB\"",
    ),
    (
        'capacity = "512 KiB"',
        'capacity = "0.3 B"',
        "0.3 B",
        "'capacity' in [memory.l1] must be a whole number of bytes, got \"0.3 B\"",
    ),
    (
        'capacity = "512 KiB"',
        "capacity = true",
        "capacity = true",
        "'capacity' in [memory.l1] must be a size like \"512 KiB\" or an integer number of bytes, not a boolean (true)",
    ),
    (
        'capacity = "512 KiB"',
        'capacity = "lots"',
        "lots",
        '\'capacity\' in [memory.l1] must be a size like "512 KiB", got "lots" (accepted units: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)',
    ),
    (
        'bandwidth = "100 GB/s"',
        'bandwidth = "100 GB/sec"',
        "GB/sec",
        "'bandwidth' in [memory.gm] has unknown unit 'GB/sec' in \"100 GB/sec\"; did you mean 'GB/s'?",
    ),
    (
        'bandwidth = "100 GB/s"',
        'bandwidth = "10 words/cycle"',
        "words/cycle",
        "'bandwidth' in [memory.gm] is in words/cycle (\"10 words/cycle\"), which needs 'word_bytes' (the bytes in a word) at the top level",
    ),
    (
        'level = "local"',
        'level = "locale"',
        "locale",
        '\'level\' in [memory.l1] must be one of "global", "local", got "locale"; did you mean \'local\'?',
    ),
    (
        'level = "local"',
        'level = "global"  # l1',
        "# l1",
        "[memory.l1] is global, but [memory.gm] already is; a machine has one global memory",
    ),
    (
        'level = "global"',
        'level = "local"',
        "[memory.gm]",
        'no memory space has level = "global" (the memory all cores share, e.g. HBM)',
    ),
    (
        "bandwidth = 64\n",
        "bandwidth = 64\nalignment = 48\n",
        "alignment",
        "'alignment' in [memory.l1] must be a power of two, got 48",
    ),
    (
        'paths = ["gm -> l1"]',
        'paths = ["gm -> ll1"]',
        "ll1",
        "'paths' in [dma.load] names memory space 'll1', which is not defined; did you mean 'l1'? (defined: gm, l1)",
    ),
    (
        'paths = ["gm -> l1"]',
        'paths = ["gm to l1"]',
        "gm to l1",
        '\'paths\' in [dma.load] must list paths like "gm -> l1", got "gm to l1"',
    ),
    (
        'paths = ["gm -> l1"]',
        'paths = ["gm -> l1", "gm -> gm"]',
        "gm -> gm",
        "'paths' in [dma.load] path \"gm -> gm\" copies a space onto itself",
    ),
    (
        'paths = ["l1 -> gm"]',
        'paths = ["gm -> l1"]  # store',
        "# store",
        "path gm -> l1 of [dma.store] is already served by [dma.load]",
    ),
    (
        'shared_bandwidth = "gm"',
        'shared_bandwidth = "l2"',
        "l2",
        "'shared_bandwidth' in [dma.load] names memory space 'l2', which is not defined",
    ),
    (
        'a_space = "l1"',
        'a_space = "l0a"',
        "a_space",
        "'a_space' in [matrix] names memory space 'l0a', which is not defined (defined: gm, l1)",
    ),
    (
        "shape = [8, 8, 8]",
        "shape = [8, 8]",
        "shape",
        "'shape' in [matrix] must be [m, n, k], three positive integers, not an array",
    ),
    (
        '"f16->f32" = 512',
        '"f116->f32" = 512',
        "f116",
        "'f116->f32' in [matrix.macs_per_cycle] names unknown element type 'f116'; did you mean 'f16'?",
    ),
    (
        '"f16->f32" = 512',
        '"f16->f32" = -1',
        "-1",
        "'f16->f32' in [matrix.macs_per_cycle] must be positive and finite, got -1",
    ),
    (
        '"f16->f32" = 512',
        '"f16->f32" = 512\n\n[matrix.shapes]\n"i8->i32" = [8, 8, 16]',
        "[8, 8, 16]",
        "[matrix.shapes] gives a shape for i8->i32, which [matrix.macs_per_cycle] lacks",
    ),
    (
        'c_space = "l1"\n',
        'c_space = "l1"\ndataflow = "os"\n',
        "[matrix]",
        "[matrix] describes a systolic array (dataflow) but is missing 'rows', 'cols'",
    ),
    (
        'c_space = "l1"\n',
        'c_space = "l1"\ndataflow = "os"\nrows = 16\ncols = 16\n',
        "= 512",
        "'f16->f32' in [matrix.macs_per_cycle] is 512 MACs per cycle, more than the 16x16 array's 256 processing elements can do",
    ),
    (
        'spaces = ["l1"]',
        'spaces = ["l1", "ub"]',
        "spaces",
        "'spaces' in [vector] names memory space 'ub', which is not defined (defined: gm, l1)",
    ),
    (
        'ops = ["add", "exp"]',
        'ops = ["add", "add"]',
        "ops",
        "'ops' in [vector] lists \"add\" more than once",
    ),
    (
        'ops = ["add", "exp"]',
        'ops = ["add", "exq"]',
        "exq",
        "'ops' in [vector] names unknown operation 'exq'; did you mean 'exp'? (known: add, mul, max, min, exp, rsqrt,",
    ),
    (
        'ops = ["add", "exp"]',
        'ops = ["add"]\npipe = "matrix"',
        "[vector]",
        "vector unit 'vector' issues on pipe 'matrix', which is already the pipe of matrix unit 'matrix'",
    ),
    (
        'bandwidth = "32 B/cycle"',
        'bandwidth = "32 B/cycle"\npipe = "scalar"',
        "[dma.store]",
        "DMA engine 'store' issues on pipe 'scalar', which is already the pipe of the scalar unit",
    ),
]


@pytest.mark.parametrize(("old", "new", "at", "message"), MISTAKES)
def test_each_mistake_is_reported_at_its_line(tmp_path, old, new, at, message):
    text = edit(TINY, old, new)
    found = problems(write(tmp_path, text))
    assert len(found) == 1, found
    assert found[0].startswith(f"machine.toml:{line_of(text, at)}: {message}"), found[0]


def test_sync_pipes(tmp_path):
    listed = (
        TINY + '\n[sync]\npipes = ["scalar", "load", "store", "matrix", "vector"]\nflag_ids = 4\n'
    )
    machine = load_machine(write(tmp_path, listed))
    assert (
        machine.pipes == ("scalar", "load", "store", "matrix", "vector") and machine.flag_ids == 4
    )
    text = TINY + '\n[sync]\npipes = ["scalar", "load", "load", "matrix", "vektor"]\n'
    line = line_of(text, "pipes =")
    assert problems(write(tmp_path, text)) == [
        f"machine.toml:{line}: 'pipes' in [sync] lists \"load\" more than once"
    ]
    text = TINY + '\n[sync]\npipes = ["scalar", "load", "matrix", "vektor"]\n'
    assert problems(write(tmp_path, text)) == [
        f"machine.toml:{line}: [sync] pipes does not list 'store', the pipe of DMA engine 'store'",
        f"machine.toml:{line}: [sync] pipes does not list 'vector', the pipe of vector unit 'vector'",
        f"machine.toml:{line}: [sync] pipes lists 'vektor', which no unit issues on; did you mean 'vector'?",
    ]


def test_every_problem_at_once_in_line_order(tmp_path):
    text = edit(TINY, "cores = 2", "cores = -1")
    text = edit(text, "bandwidth = 64\n", "bandwith = 64\n")
    text = edit(text, 'a_space = "l1"', 'a_space = "l9"')
    text = edit(text, 'ops = ["add", "exp"]', "ops = 3")
    found = problems(write(tmp_path, text))
    lines = [int(p.split(":")[1]) for p in found]
    assert lines == sorted(lines)
    assert [line for line in lines if line != line_of(text, "[memory.l1]")] == [
        line_of(text, "cores"),
        line_of(text, "bandwith"),
        line_of(text, "a_space"),
        line_of(text, "ops ="),
    ]


def test_toml_syntax_error_has_its_line(tmp_path):
    text = edit(TINY, "cores = 2", "cores = = 2")
    assert problems(write(tmp_path, text)) == [
        f"machine.toml:{line_of(text, 'cores')}: invalid TOML: Invalid value"
    ]
    text = edit(TINY, "cores = 2", "cores = 2\ncores = 4")
    assert problems(write(tmp_path, text)) == [
        f"machine.toml:{line_of(text, 'cores = 4')}: invalid TOML: Cannot overwrite a value"
    ]


def test_lines_inside_inline_tables(tmp_path):
    text = edit(TINY, '[memory.l1]\nlevel = "local"\ncapacity = "512 KiB"\nbandwidth = 64\n', "")
    text = edit(
        text,
        "[dma.load]",
        '[memory]\nl1 = { level = "local", capacty = 5, bandwidth = 1 }\n\n[dma.load]',
    )
    line = line_of(text, "capacty")
    assert problems(write(tmp_path, text)) == [
        f"machine.toml:{line}: unknown key 'capacty' in [memory.l1]; did you mean 'capacity'?"
    ]


def test_unknown_machine_names_the_presets():
    with pytest.raises(MachineError) as info:
        load_machine("davinchi")
    assert "unknown machine 'davinchi': neither a preset (" in str(info.value)
    assert "did you mean 'davinci'?" in str(info.value)


# --------------------------------------------------------------------------- extends


def test_extends_overrides_a_preset(tmp_path):
    text = 'extends = "davinci"\ncores = 1\n\n[memory.l1]\ncapacity = "2 MiB"\n\n[matrix.macs_per_cycle]\n"i8->i32" = 4096\n'
    m = load_machine(write(tmp_path, text, "davinci_l1x2.toml"))
    base = load_machine("davinci")
    assert m.name == "davinci_l1x2" and m.source.endswith("davinci_l1x2.toml")
    assert m.cores == 1 and m.memories["l1"].capacity == 2 << 20
    assert m.memories["l1"].read_bytes_per_cycle == base.memories["l1"].read_bytes_per_cycle
    assert m.memories["l0a"] == base.memories["l0a"] and m.dmas == base.dmas
    assert m.matrix.dtypes == {("f16", "f32"): 4096, ("bf16", "f32"): 4096, ("i8", "i32"): 4096}
    assert m.matrix.shape_for("i8", "i32") == (16, 16, 32)
    assert m.clock_hz == base.clock_hz


def test_extends_reports_in_the_file_that_has_the_mistake(tmp_path):
    base = write(tmp_path, TINY, "base.toml")
    child = (
        'extends = "base.toml"\n\n[memory.l1]\ncapacity = -4\n\n[dma.load]\npaths = ["gm -> l3"]\n'
    )
    path = write(tmp_path, child, "child.toml")
    assert problems(path) == [
        "child.toml:4: 'capacity' in [memory.l1] must be positive, got -4",
        "child.toml:7: 'paths' in [dma.load] names memory space 'l3', which is not defined (defined: gm, l1)",
    ]
    base.write_text(edit(TINY, "bandwidth = 64\n", "bandwith = 64\n"))
    path.write_text('extends = "base.toml"\n')
    assert problems(path) == [
        f"base.toml:{line_of(TINY, 'bandwidth = 64')}: unknown key 'bandwith' in [memory.l1]; did you mean 'bandwidth'?"
    ]


def test_extends_unknown_and_cycles(tmp_path):
    path = write(tmp_path, 'extends = "davincci"\n')
    assert problems(path)[0].startswith("machine.toml:1: unknown machine 'davincci'")
    write(tmp_path, 'extends = "b.toml"\n', "a.toml")
    write(tmp_path, 'cores = 1\nextends = "a.toml"\n', "b.toml")
    found = problems(tmp_path / "a.toml")
    assert len(found) == 1 and found[0].startswith("b.toml:2: 'extends' makes a cycle")


def test_register_preset(tmp_path, monkeypatch):
    monkeypatch.setattr(machine_loader, "_PRESETS", dict(machine_loader._PRESETS))
    register_preset("tinychip", write(tmp_path, TINY, "somewhere.toml"))
    assert "tinychip" in list_presets()
    assert load_machine("tinychip").name == "tiny"
    derived = load_machine(
        write(tmp_path, 'extends = "tinychip"\nname = "tiny2"\ncores = 4\n', "d.toml")
    )
    assert (derived.name, derived.cores, derived.memories["l1"].capacity) == (
        "tiny2",
        4,
        512 * 1024,
    )


def test_presets_from_entry_points(tmp_path, monkeypatch):
    write(tmp_path, TINY, "plugin_chip.toml")
    (tmp_path / "chip_plugin.py").write_text(
        "from pathlib import Path\nMACHINE = Path(__file__).parent / 'plugin_chip.toml'\nNOT_A_PATH = 3\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(machine_loader, "_PRESETS", dict(machine_loader._PRESETS))

    def plugins(*values: str):
        points = [
            EntryPoint(f"chip{i}", value, "ziggurat.machines") for i, value in enumerate(values)
        ]
        monkeypatch.setattr(
            ziggurat_plugins,
            "entry_points",
            lambda group: points if group == "ziggurat.machines" else [],
        )
        monkeypatch.setattr(machine_loader, "_entry_points_loaded", False)

    plugins("chip_plugin:MACHINE")
    assert "chip0" in list_presets() and load_machine("chip0").name == "tiny"
    plugins("chip_plugin:NOT_A_PATH")
    with pytest.raises(
        MachineError,
        match="'chip0 = chip_plugin:NOT_A_PATH' in group 'ziggurat.machines' must load to the path of a TOML file, got int",
    ):
        list_presets()
    plugins("no_such_plugin:MACHINE")
    with pytest.raises(
        MachineError,
        match="cannot load entry point 'chip0 = no_such_plugin:MACHINE'.*ModuleNotFoundError",
    ):
        load_machine("davinci")


# --------------------------------------------------------------------------- SCALE-Sim


def scalesim_fields(text: str) -> dict[str, str]:
    config = configparser.ConfigParser()
    config.read_string(text)
    return {key: value for section in config.sections() for key, value in config[section].items()}


def test_scalesim_config_of_the_systolic_preset():
    fields = scalesim_fields(to_scalesim_config(load_machine("systolic")))
    # configparser lower-cases keys; SCALE-Sim reads them the same way.
    expected = {
        "run_name": "systolic",
        "arrayheight": "32",
        "arraywidth": "32",
        "ifmapsramszkb": "64",
        "filtersramszkb": "64",
        "ofmapsramszkb": "64",
        "dataflow": "os",
        "bandwidth": "10",
        "interfacebandwidth": "USER",
    }
    assert {key: fields[key] for key in expected} == expected
    # Every key SCALE-Sim 3.0's scale_config.read_conf_file reads without a fallback.
    assert {
        "ifmapoffset",
        "filteroffset",
        "ofmapoffset",
        "readrequestbuffer",
        "writerequestbuffer",
        "ifmapcustomlayout",
        "filtercustomlayout",
        "ifmapsrambankbandwidth",
        "ifmapsrambanknum",
        "ifmapsrambankport",
        "filtersrambankbandwidth",
        "filtersrambanknum",
        "filtersrambankport",
        "sparsitysupport",
        "useramulatortrace",
    } <= set(fields)


def test_scalesim_config_follows_the_machine(tmp_path):
    text = (
        'extends = "systolic"\nname = "ws16x8"\n\n[memory.dram]\nbandwidth = "20 words/cycle"\n\n'
        '[memory.filter]\ncapacity = "256 KiB"\nbanks = 4\n\n[matrix]\ndataflow = "ws"\nrows = 16\ncols = 8\n\n'
        '[matrix.macs_per_cycle]\n"i8->i32" = 128\n"f16->f32" = 128\n'
    )
    fields = scalesim_fields(to_scalesim_config(load_machine(write(tmp_path, text))))
    assert (fields["arrayheight"], fields["arraywidth"], fields["dataflow"]) == ("16", "8", "ws")
    # SCALE-Sim's DRAM rates are the DMA engines' (10 words/cycle), not the wider DRAM's
    assert (fields["filtersramszkb"], fields["bandwidth"]) == ("256", "10")
    assert (fields["ifmapsrambankbandwidth"], fields["filtersrambankbandwidth"]) == ("10", "10")
    # engines faster than DRAM get its rate; an i32 output is 4 words to SCALE-Sim
    faster = (
        text
        + '\n[dma.load]\nbandwidth = "40 words/cycle"\n\n[dma.store]\nbandwidth = "40 words/cycle"\n'
    )
    fields = scalesim_fields(
        to_scalesim_config(load_machine(write(tmp_path, faster, "faster.toml")), output_bytes=4)
    )
    assert (fields["filtersrambankbandwidth"], fields["bandwidth"]) == ("20", "5")


def test_scalesim_config_needs_a_systolic_array():
    with pytest.raises(MachineError) as info:
        to_scalesim_config(load_machine("davinci"))
    messages = [d.message for d in info.value.diagnostics]
    assert messages == [
        "machine 'davinci' has no systolic array to describe to SCALE-Sim ([matrix] gives no dataflow, rows and cols)",
        "SCALE-Sim models one array, but machine 'davinci' has 32 cores",
    ]


# --------------------------------------------------------------------------- CLI


def test_check_cli(tmp_path):
    bad = write(tmp_path, edit(TINY, "bandwidth = 64\n", "bandwith = 64\n"))
    run = [sys.executable, "-m", "ziggurat.machine", "check"]
    result = subprocess.run([*run, "davinci", str(bad)], capture_output=True, text=True)
    assert result.returncode == 1
    assert "davinci: Ascend 910-style" in result.stdout
    assert (
        f"{bad}:{line_of(TINY, 'bandwidth = 64')}: error: unknown key 'bandwith' in [memory.l1]"
        in result.stderr
    )
    assert "Traceback" not in result.stderr
    result = subprocess.run([*run, "tensorcore"], capture_output=True, text=True)
    assert result.returncode == 0 and "mma f16->f32: 16x8x16, 1024 MACs/cycle/core" in result.stdout


# --------------------------------------------------------------------------- robustness

PRESET_TEXTS = [path.read_text() for path in sorted(PRESET_DIR.glob("*.toml"))] + [TINY]
VALUES = [
    "1",
    "0",
    "-3",
    "1.5",
    "nan",
    "inf",
    "true",
    '"x"',
    '""',
    '"64 KiB"',
    '"1 GHz"',
    '"1 TB/s"',
    '"10 words/cycle"',
    '"gm -> l1"',
    '["l1 -> l0a"]',
    "[]",
    "[1, 2]",
    "[[1]]",
    "{}",
    "{ a = 1 }",
    '"f16->f32"',
    '"os"',
    '"davinci"',
    '"systolic"',
    '"missing.toml"',
    "[16, 16, 16]",
]
_files = itertools.count()


@st.composite
def mangled_machine(draw) -> str:
    lines = draw(st.sampled_from(PRESET_TEXTS)).splitlines()
    for _ in range(draw(st.integers(1, 4))):
        index = draw(st.integers(0, len(lines) - 1))
        line = lines[index]
        kind = draw(st.sampled_from(["typo", "delete", "value", "swap", "insert"]))
        if kind == "typo" and line.strip():
            at = draw(st.integers(0, len(line) - 1))
            lines[index] = (
                line[:at] + draw(st.sampled_from(["", "x", "_", line[at] * 2])) + line[at + 1 :]
            )
        elif kind == "delete":
            del lines[index]
        elif kind == "value" and "=" in line:
            lines[index] = line.split("=", 1)[0] + "= " + draw(st.sampled_from(VALUES))
        elif kind == "swap":
            other = draw(st.integers(0, len(lines) - 1))
            if "=" in line and "=" in lines[other]:
                key, value = line.split("=", 1)
                other_key, other_value = lines[other].split("=", 1)
                lines[index], lines[other] = f"{key}={other_value}", f"{other_key}={value}"
        elif kind == "insert":
            lines.insert(
                index,
                draw(
                    st.sampled_from(
                        [
                            'extends = "davinci"',
                            'extends = "tensorcore"',
                            "[memory.extra]",
                            "[dma.extra]",
                            "word_bytes = 2",
                        ]
                    )
                ),
            )
        if not lines:
            break
    return "\n".join(lines) + "\n"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mangled_machine())
def test_mangled_files_give_a_machine_or_diagnostics(text):
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / f"m{next(_files)}.toml"
        path.write_text(text)
        try:
            machine = load_machine(path)
        except MachineError as e:
            assert e.diagnostics
            for diagnostic in e.diagnostics:
                assert diagnostic.severity == "error" and diagnostic.message and diagnostic.file
                assert diagnostic.line is None or diagnostic.line >= 1
        else:
            assert isinstance(machine, Machine)
            assert machine.global_bandwidth() > 0
            for dma in machine.dmas.values():
                assert all(
                    src in machine.memories and dst in machine.memories for src, dst in dma.paths
                )


def test_the_examples_in_the_docs_load(tmp_path):
    doc = (Path(__file__).parents[2] / "docs" / "machine-file.md").read_text()
    examples = [
        block for block in doc.split("```toml\n")[1:] if block.startswith(("extends", "# davinci"))
    ]
    big_l1, tpu_like = (
        load_machine(write(tmp_path, example.split("```")[0], f"example{index}.toml"))
        for index, example in enumerate(examples)
    )
    assert (big_l1.cores, big_l1.memories["l1"].capacity, big_l1.global_bandwidth()) == (
        64,
        2 << 20,
        2400,
    )
    fields = scalesim_fields(to_scalesim_config(tpu_like))
    assert (fields["run_name"], fields["arrayheight"], fields["dataflow"]) == (
        "tpu_like",
        "128",
        "ws",
    )
