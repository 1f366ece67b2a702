"""The machine model: an accelerator's memories, DMA engines, matrix and vector units, and pipes.

Frozen dataclasses, in bytes and cycles; `loader.py` builds them from a machine file, and
the passes, the npu dialect's verifiers and the timing model query them. A field's default
is also what a machine file that leaves its key out gets (`schema.py` takes it from here).
"""

from __future__ import annotations

from dataclasses import dataclass, field

# The operations an `npu.vec.*` op can name; a machine file lists the subset its vector unit has.
VECTOR_OPS = (
    "add", "mul", "max", "min", "exp", "rsqrt", "relu", "cast", "reduce", "broadcast", "select",
    "sub", "div", "adds", "muls", "dup",
)  # fmt: skip


@dataclass(frozen=True)
class MemorySpace:
    """A memory the cores read and write: global (shared, e.g. HBM) or local to each core."""

    name: str
    capacity: int
    """Bytes: per core for local spaces, the whole device for global ones."""
    level: str
    """"global" (shared by all cores, e.g. HBM/DRAM) or "local"."""
    read_bytes_per_cycle: float
    """For a global space: what all cores together can read."""
    write_bytes_per_cycle: float
    latency: int
    """Cycles."""
    banks: int = 1
    alignment: int = 32
    """Bytes; buffer offsets must be multiples of it."""
    shared_by_cores: bool = False


@dataclass(frozen=True)
class DmaEngine:
    """A unit that copies between memory spaces, on its own pipe."""

    name: str
    pipe: str
    """The in-order queue the engine issues on."""
    paths: tuple[tuple[str, str], ...]
    """(source space, destination space) pairs it serves."""
    bytes_per_cycle: float
    setup_latency: int
    """Cycles per transfer, before the first byte moves."""
    max_dims: int
    """Dimensions of a strided (N-d) transfer in one instruction."""
    transpose: bool = False
    pad: bool = False
    cast: bool = False
    shared_bandwidth: str | None = None
    """A memory space whose bandwidth this engine shares with every core and engine using it."""


@dataclass(frozen=True)
class MatrixUnit:
    """The unit that multiplies matrices: a cube unit, a systolic array or a tensor core."""

    name: str
    pipe: str
    m: int
    n: int
    k: int
    """The instruction shape (of the first dtype pair; see `shapes` for the others)."""
    dtypes: dict[tuple[str, str], float]
    """(input dtype, accumulator dtype) -> MACs per cycle per core."""
    a_space: str
    b_space: str
    c_space: str
    """Where the operands A (MxK), B (KxN) and the accumulator C (MxN) must live."""
    shapes: dict[tuple[str, str], tuple[int, int, int]] = field(default_factory=dict)
    """(input dtype, accumulator dtype) -> (m, n, k) of one instruction."""
    dataflow: str | None = None
    """"os" | "ws" | "is" for a systolic array."""
    rows: int | None = None
    cols: int | None = None
    latency: int = 1

    def shape_for(self, in_dtype: str, acc_dtype: str) -> tuple[int, int, int] | None:
        """The (m, n, k) of one instruction on this dtype pair, or None if the unit lacks the pair."""
        return self.shapes.get((in_dtype, acc_dtype))

    def instruction_shape(self, in_dtype: str, acc_dtype: str) -> tuple[int, int, int]:
        """The (m, n, k) of one instruction on this dtype pair: its own shape, else the unit's `shape`."""
        return self.shape_for(in_dtype, acc_dtype) or (self.m, self.n, self.k)


@dataclass(frozen=True)
class VectorUnit:
    """The unit that runs `npu.vec.*` element-wise and reduction instructions."""

    name: str
    pipe: str
    bytes_per_cycle: float
    """Lanes times element bytes: 256 means 128 f16 or 64 f32 lanes."""
    spaces: tuple[str, ...]
    ops: tuple[str, ...]
    latency: int
    transcendental_cost: float
    """Cycle multiplier of exp, rsqrt, ... relative to an add."""

    def lanes(self, element_bytes: int) -> int:
        return int(self.bytes_per_cycle // element_bytes)


@dataclass(frozen=True)
class Machine:
    """An accelerator: its cores, memories, DMA engines, matrix and vector units and pipes."""

    name: str
    description: str
    clock_hz: float
    cores: int
    memories: dict[str, MemorySpace]
    dmas: dict[str, DmaEngine]
    matrix: MatrixUnit
    vector: VectorUnit
    scalar_pipe: str
    pipes: tuple[str, ...]
    """The scalar pipe, each DMA engine's pipe, the matrix pipe and the vector pipe."""
    flag_ids: int
    """Event ids per (source pipe, destination pipe) pair for set_flag/wait_flag."""
    source: str
    """The TOML file it was loaded from."""
    word_bytes: int = 1
    """The size of a "word" in `words/cycle` bandwidths (SCALE-Sim counts words)."""
    sync_cores_latency: int = 1000
    """Cycles from the last core's arrival at an `npu.sync_cores` to every core's release."""

    def dma_for(self, src: str, dst: str) -> DmaEngine | None:
        for dma in self.dmas.values():
            if (src, dst) in dma.paths:
                return dma
        return None

    def peak_macs_per_cycle(self, in_dtype: str, acc_dtype: str) -> float:
        """MACs per cycle of one core's matrix unit on the dtype pair (0 if the unit lacks it)."""
        return self.matrix.dtypes.get((in_dtype, acc_dtype), 0.0)

    def peak_flops(self, in_dtype: str, acc_dtype: str) -> float:
        """FLOP/s of the whole device (all cores; a MAC is 2 FLOPs)."""
        return 2 * self.peak_macs_per_cycle(in_dtype, acc_dtype) * self.cores * self.clock_hz

    def global_memory(self) -> MemorySpace:
        return next(space for space in self.memories.values() if space.level == "global")

    def global_bandwidth(self) -> float:
        """Bytes per cycle the global memory reads, all cores together."""
        return self.global_memory().read_bytes_per_cycle
