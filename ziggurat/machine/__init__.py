"""The machine model: one TOML schema for an accelerator, loaded into frozen dataclasses.

`load_machine(name_or_path)` reads a preset (`list_presets()`: those in `presets/`, those
`register_preset` adds and those of plugins' `ziggurat.machines` entry points) or a TOML
file into a `Machine` with its `MemorySpace`s, `DmaEngine`s, `MatrixUnit` and `VectorUnit`
(`model.py`), checked against the schema (`schema.py`) by the loader (`loader.py`), which
raises `MachineError` with every problem of the file at its line; `machine_sources` and
`machine_here` carry a machine to another host. `python -m ziggurat.machine check FILE`
validates a file (`__main__.py`), `scalesim.py` writes a systolic machine as SCALE-Sim's
configuration, and docs/machine-file.md is the reference of the file format.
"""

from ziggurat.machine.loader import (
    ENTRY_POINT_GROUP,
    PRESET_DIR,
    MachineError,
    list_presets,
    load_machine,
    machine_here,
    machine_sources,
    register_preset,
    split_toml_key,
)
from ziggurat.machine.model import (
    VECTOR_OPS,
    DmaEngine,
    Machine,
    MatrixUnit,
    MemorySpace,
    VectorUnit,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "PRESET_DIR",
    "VECTOR_OPS",
    "DmaEngine",
    "Machine",
    "MachineError",
    "MatrixUnit",
    "MemorySpace",
    "VectorUnit",
    "list_presets",
    "load_machine",
    "machine_here",
    "machine_sources",
    "register_preset",
    "split_toml_key",
]
