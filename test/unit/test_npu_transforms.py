"""npu-plan-memory and npu-insert-sync on the hand-written kernels of examples/npu, every preset.

Each kernel is turned back into what loop-to-npu hands over (its `npu.buffer`s made
`memref.alloc`s, and for npu-insert-sync its flags stripped), the passes run, and the
result must compute the same numbers as the hand-written kernel, with no hazard or
deadlock, in about as many cycles.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from ziggurat.context import default_context
from ziggurat.diagnostics import DiagnosticError, collect_diagnostics
from ziggurat.dialects import npu
from ziggurat.dtypes import to_numpy_dtype
from ziggurat.interpreters.npu_interpreter import run_npu
from ziggurat.parsing import parse_source
from ziggurat.transforms.npu.insert_sync import NpuInsertSyncPass
from ziggurat.transforms.npu.plan_memory import NpuPlanMemoryPass

EXAMPLES = Path(__file__).parents[2] / "examples" / "npu"
KERNELS = sorted(str(path.relative_to(EXAMPLES)) for path in EXAMPLES.rglob("*.mlir"))


def parse(text: str, name: str = "<kernel>") -> ModuleOp:
    return parse_source(default_context(), text, name)


def as_allocs(text: str) -> str:
    """The kernel with its buffers unplaced, as loop-to-npu leaves them."""
    return re.sub(r"npu\.buffer offset \d+ :", "memref.alloc() :", text)


def without_sync(text: str) -> str:
    return "\n".join(
        line
        for line in text.splitlines()
        if not re.search(r"npu\.(set_flag|wait_flag|barrier)\b", line)
    )


def kernel_inputs(module: ModuleOp) -> list[np.ndarray]:
    """Random values for every argument but the last (the output) of the kernel's entry."""
    entry = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    rng = np.random.default_rng(0)
    inputs = []
    for arg in entry.args[:-1]:
        dtype = to_numpy_dtype(arg.type.get_element_type())
        shape = arg.type.get_shape()
        if dtype.kind == "i":
            inputs.append(rng.integers(-128, 128, shape).astype(dtype))
        else:
            inputs.append(rng.standard_normal(shape).astype(dtype))
    return inputs


def run(module: ModuleOp, inputs: list[np.ndarray]):
    """run_npu, failing on a warning too (a flag set and never waited for)."""
    with collect_diagnostics() as diagnostics:
        result = run_npu(module, None, inputs)
    assert not diagnostics, [d.message for d in diagnostics]
    return result


def apply(module: ModuleOp, *passes) -> ModuleOp:
    for each in passes:
        each.apply(default_context(), module)
    module.verify()
    return module


def buffers(module: ModuleOp) -> dict[str, tuple[str, int, int]]:
    """name -> (space, offset, bytes) of each npu.buffer."""
    return {
        op.result.name_hint: (
            npu.space_of(op.result),
            op.byte_offset,
            npu.type_bytes(op.result.type),
        )
        for op in module.walk()
        if isinstance(op, npu.BufferOp)
    }


# --------------------------------------------------------------------------- #
# npu-plan-memory
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("kernel", KERNELS)
def test_plan_memory_keeps_hand_synchronized_kernels_exact(kernel):
    """With the kernel's own flags kept, planned buffers give the same numbers and cycles."""
    text = (EXAMPLES / kernel).read_text()
    original = parse(text, kernel)
    inputs = kernel_inputs(original)
    expected = run(original, inputs)
    planned = apply(parse(as_allocs(text), kernel), NpuPlanMemoryPass())
    assert not any(op.name == "memref.alloc" for op in planned.walk())
    result = run(planned, inputs)
    for got, want in zip(result.outputs, expected.outputs, strict=True):
        np.testing.assert_array_equal(got, want)
    assert result.stats.total_cycles == pytest.approx(expected.stats.total_cycles)


@pytest.mark.parametrize("kernel", KERNELS)
def test_plan_memory_never_overlaps_buffers_live_at_once(kernel):
    """Without reuse every pair of buffers of a space is disjoint; each offset is aligned."""
    module = apply(
        parse(without_sync(as_allocs((EXAMPLES / kernel).read_text())), kernel),
        NpuPlanMemoryPass(reuse=False),
    )
    machine = npu.machine_of(next(op for op in module.walk() if isinstance(op, npu.BufferOp)))
    placed = sorted(buffers(module).values())
    for (space, offset, size), (other_space, other_offset, _) in zip(placed, placed[1:]):
        assert offset % machine.memories[space].alignment == 0
        assert space != other_space or offset + size <= other_offset


def sequential(cols: int) -> str:
    return _SEQUENTIAL.replace("{cols}", str(cols)).replace("{repeat}", str(64 * cols // 128))


def test_plan_memory_reuses_bytes_of_dead_buffers_only_when_short():
    roomy = buffers(apply(parse(without_sync(sequential(64))), NpuPlanMemoryPass()))
    assert sorted(offset for _, offset, _ in roomy.values()) == [0, 8192, 16384]
    short = buffers(apply(parse(without_sync(sequential(1024))), NpuPlanMemoryPass()))
    assert short["z"][1] == short["x"][1] == 0
    assert short["y"][1] == 131072


def test_plan_memory_does_not_reuse_under_existing_flags():
    with pytest.raises(DiagnosticError, match="does not fit"):
        apply(parse(sequential(1024)), NpuPlanMemoryPass())


def test_plan_memory_error_names_the_buffer_and_what_is_live():
    text = without_sync(sequential(1024))
    with pytest.raises(
        DiagnosticError,
        match=r"buffer %. of 131072 bytes does not fit in 'ub' \(capacity 262144 bytes",
    ):
        apply(parse(text), NpuPlanMemoryPass(reuse=False))
    apply(parse(text), NpuPlanMemoryPass())  # fits when %z takes the bytes of %x


# --------------------------------------------------------------------------- #
# npu-insert-sync
# --------------------------------------------------------------------------- #


def compiled(text: str, name: str = "<kernel>") -> ModuleOp:
    """The kernel unplaced and unsynchronized, then planned and synchronized."""
    return apply(
        parse(without_sync(as_allocs(text)), name), NpuPlanMemoryPass(), NpuInsertSyncPass()
    )


@functools.cache
def compiled_kernel(kernel: str) -> tuple[ModuleOp, list[np.ndarray], object]:
    """The kernel compiled, its inputs, and the hand-written kernel's run on them."""
    text = (EXAMPLES / kernel).read_text()
    original = parse(text, kernel)
    inputs = kernel_inputs(original)
    return compiled(text, kernel), inputs, run(original, inputs)


@pytest.mark.parametrize("kernel", KERNELS)
def test_insert_sync_matches_hand_written_kernels(kernel):
    """Same numbers, no hazard, deadlock or unwaited flag, and within 3% of the hand-written cycles."""
    module, inputs, expected = compiled_kernel(kernel)
    result = run(module, inputs)
    for got, want in zip(result.outputs, expected.outputs, strict=True):
        np.testing.assert_array_equal(got, want)
    assert result.stats.total_cycles == pytest.approx(expected.stats.total_cycles, rel=0.03)


@pytest.mark.parametrize("kernel", KERNELS)
def test_every_inserted_wait_is_needed(kernel):
    """Dropping any one wait makes the run report a hazard, a deadlock or a flag never waited for."""
    module, inputs, _ = compiled_kernel(kernel)
    waits = [op for op in module.walk() if isinstance(op, npu.WaitFlagOp)]
    assert waits
    for index in range(len(waits)):
        broken = module.clone()
        victim = [op for op in broken.walk() if isinstance(op, npu.WaitFlagOp)][index]
        victim.detach()
        victim.erase()
        with pytest.raises((DiagnosticError, AssertionError)):
            run(broken, inputs)


def test_insert_sync_orders_buffers_that_share_bytes():
    """%z takes the bytes of %x once it is dead: its load must wait until the vector unit has read %x."""
    text = without_sync(sequential(1024)).replace(
        '    npu.dma "mte3" %z',
        '    npu.dma "mte2" %X[0, 0] -> %z[0, 0] {shape = array<i64: 64, 1024>} : memref<64x1024xf16, "gm"> -> memref<64x1024xf16, "ub">\n'
        '    npu.vec.relu %z[0, 0] -> %z[0, 0] {repeat = 512 : i64} : memref<64x1024xf16, "ub"> -> memref<64x1024xf16, "ub">\n'
        '    npu.dma "mte3" %z',
    )
    module = apply(parse(text), NpuPlanMemoryPass(), NpuInsertSyncPass())
    placed = buffers(module)
    assert placed["z"][1] == placed["x"][1]
    values = np.random.default_rng(2).standard_normal((64, 1024)).astype(np.float16)
    (out,) = run(module, [values]).outputs
    np.testing.assert_array_equal(out, np.maximum(values, 0))


def test_insert_sync_falls_back_to_barriers_without_enough_event_ids(tmp_path):
    machine = tmp_path / "one-flag.toml"
    machine.write_text('extends = "davinci"\nname = "one-flag"\n\n[sync]\nflag_ids = 1\n')
    hand_written = (EXAMPLES / "gemm_double_buffered.mlir").read_text()
    original = parse(hand_written)  # on davinci: it uses two event ids
    inputs = kernel_inputs(original)
    text = hand_written.replace('"davinci"', f'"{machine}"')
    with collect_diagnostics() as remarks:
        module = apply(
            parse(without_sync(as_allocs(text))), NpuPlanMemoryPass(), NpuInsertSyncPass()
        )
    assert remarks and all("no event id left" in remark.message for remark in remarks)
    assert any(isinstance(op, npu.BarrierOp) for op in module.walk())
    assert all(op.event == 0 for op in module.walk() if isinstance(op, npu.FlagOperation))
    for got, want in zip(run(module, inputs).outputs, run(original, inputs).outputs, strict=True):
        np.testing.assert_array_equal(got, want)


class _RandomProgram:
    """A random davinci program over four 'ub' buffers (two of them sharing bytes) on the mte2, vector
    and mte3 pipes, with loops and ifs; `barriers` puts a barrier after every instruction, which
    orders everything, for the reference run."""

    OFFSETS = (0, 512, 256, 1024)  # bytes of %u0..%u3, 128 f32 each: %u2 overlaps %u0 and %u1

    def __init__(self, seed: int, barriers: bool):
        self.rng = np.random.default_rng(seed)
        self.barriers = barriers
        self.lines: list[str] = []
        self.loops = 0

    def text(self) -> str:
        buffers = [
            f'    %u{k} = npu.buffer offset {o} : memref<128xf32, "ub">'
            for k, o in enumerate(self.OFFSETS)
        ]
        self.block(indent=4, depth=0, iv=None)
        return "\n".join([
            'module attributes {npu.machine = "davinci"} {',
            '  func.func @main(%X: memref<4x128xf32, "gm">, %Y: memref<4x128xf32, "gm">) {',
            "    %c0 = arith.constant 0 : index", "    %c1 = arith.constant 1 : index",
            "    %c2 = arith.constant 2 : index", "    %c4 = arith.constant 4 : index",
            *buffers, *self.lines, "    func.return", "  }", "}",
        ])  # fmt: skip

    def emit(self, indent: int, line: str) -> None:
        self.lines.append(" " * indent + line)
        if self.barriers and "npu." in line:
            self.lines.append(" " * indent + "npu.barrier")

    def window(self) -> tuple[int, int]:
        start = int(self.rng.choice([0, 64]))
        return start, int(self.rng.choice([64, 128 - start]))

    def block(self, indent: int, depth: int, iv: str | None) -> None:
        for _ in range(int(self.rng.integers(2, 7))):
            kind = self.rng.choice(["vector", "load", "store", "nest"], p=[0.4, 0.25, 0.25, 0.1])
            u = [f"%u{k}" for k in self.rng.integers(0, 4, 3)]
            row = (
                iv
                if iv is not None and self.rng.random() < 0.5
                else f"{int(self.rng.integers(0, 4))}"
            )
            start, size = self.window()
            if kind == "vector":
                op = self.rng.choice(["add", "max", "sub"])
                self.emit(indent, f"npu.vec.{op} {u[0]}[{start}], {u[1]}[{start}] -> {u[2]}[{start}] "
                          f"{{repeat = {size // 64} : i64}} : {_UB}, {_UB} -> {_UB}")  # fmt: skip
            elif kind == "load":
                self.emit(indent, f'npu.dma "mte2" %X[{row}, {start}] -> {u[0]}[{start}] {{shape = array<i64: {size}>}} '
                          f': memref<4x128xf32, "gm"> -> {_UB}')  # fmt: skip
            elif kind == "store":
                self.emit(indent, f'npu.dma "mte3" {u[0]}[{start}] -> %Y[{row}, {start}] {{shape = array<i64: {size}>}} '
                          f': {_UB} -> memref<4x128xf32, "gm">')  # fmt: skip
            elif depth < 2 and iv is not None and self.rng.random() < 0.3:
                cond = f"%cond{self.loops}_{len(self.lines)}"
                self.lines.append(" " * indent + f"{cond} = arith.cmpi eq, {iv}, %c0 : index")
                self.lines.append(" " * indent + f"scf.if {cond} {{")
                self.block(indent + 2, depth + 1, iv)
                self.lines.append(" " * indent + "} else {")
                self.block(indent + 2, depth + 1, iv)
                self.lines.append(" " * indent + "}")
            elif depth < 2:
                self.loops += 1
                new_iv = f"%i{self.loops}"
                bound = self.rng.choice(["%c2", "%c4"])
                self.lines.append(" " * indent + f"scf.for {new_iv} = %c0 to {bound} step %c1 {{")
                self.block(indent + 2, depth + 1, new_iv)
                self.lines.append(" " * indent + "}")


_UB = 'memref<128xf32, "ub">'


@pytest.mark.parametrize("seed", range(40))
def test_insert_sync_on_random_programs(seed):
    """Random programs get flags that order every dependence: no hazard, deadlock or unwaited flag,
    and the numbers of the same program with a barrier after every instruction."""
    synced = apply(parse(_RandomProgram(seed, barriers=False).text()), NpuInsertSyncPass())
    reference = parse(_RandomProgram(seed, barriers=True).text())
    inputs = [np.random.default_rng(seed).standard_normal((4, 128)).astype(np.float32)]
    np.testing.assert_array_equal(run(synced, inputs).outputs[0], run(reference, inputs).outputs[0])


# %x -> relu -> %y -> relu -> %z, hand-synchronized; with 1024 columns 'ub' holds only two of them.
_SEQUENTIAL = """
module attributes {npu.machine = "davinci"} {
  func.func @main(%X: memref<64x{cols}xf16, "gm">, %Y: memref<64x{cols}xf16, "gm">) {
    %x = memref.alloc() : memref<64x{cols}xf16, "ub">
    %y = memref.alloc() : memref<64x{cols}xf16, "ub">
    %z = memref.alloc() : memref<64x{cols}xf16, "ub">
    npu.dma "mte2" %X[0, 0] -> %x[0, 0] {shape = array<i64: 64, {cols}>} : memref<64x{cols}xf16, "gm"> -> memref<64x{cols}xf16, "ub">
    npu.set_flag "mte2" -> "vector", 0
    npu.wait_flag "mte2" -> "vector", 0
    npu.vec.relu %x[0, 0] -> %y[0, 0] {repeat = {repeat} : i64} : memref<64x{cols}xf16, "ub"> -> memref<64x{cols}xf16, "ub">
    npu.vec.relu %y[0, 0] -> %z[0, 0] {repeat = {repeat} : i64} : memref<64x{cols}xf16, "ub"> -> memref<64x{cols}xf16, "ub">
    npu.set_flag "vector" -> "mte3", 0
    npu.wait_flag "vector" -> "mte3", 0
    npu.dma "mte3" %z[0, 0] -> %Y[0, 0] {shape = array<i64: 64, {cols}>} : memref<64x{cols}xf16, "ub"> -> memref<64x{cols}xf16, "gm">
    func.return
  }
}
"""
