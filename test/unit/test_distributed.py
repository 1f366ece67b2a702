"""Executors (tuning/executors.py) and ziggurat-sweep: the local pool retries a task that
raises, whose worker dies or that runs past its limit once, then reports it failed with the
reason; Ctrl-C and the deadline stop the tasks in flight; the tuner counts a lost task as a failed
candidate and does not cache its group; a task carries its machine files; a 2x2 sweep on two
models gives its table. With ray installed (a local instance of 2 CPUs), Ray tunes a small CNN
to the same IR and cache bytes as the pool, retries and cancels as the pool does, and sweeps and
runs the conformance script to the same numbers."""

import io
import json
import os
import signal
import sys
import time
import tomllib
from pathlib import Path

import pytest

from ziggurat.context import default_context
from ziggurat.diagnostics import DiagnosticError
from ziggurat.machine import load_machine
from ziggurat.parsing import parse_source
from ziggurat.printing import Printer
from ziggurat.testing.differential import apply_pipeline
from ziggurat.tools import ziggurat_sweep, ziggurat_tune
from ziggurat.tuning import tuner
from ziggurat.tuning.executors import LocalExecutor, check_cluster, make_executor
from ziggurat.tuning.space import tunable_groups
from ziggurat.tuning.tuner import TuneCache, TuneOptions, tune

ROOT = Path(__file__).resolve().parents[2]
SMALL_CNN = ROOT / "examples" / "graph" / "small_cnn.mlir"
MACHINE = "davinci"

try:
    import ray
except ImportError:
    ray = None
needs_ray = pytest.mark.skipif(
    ray is None, reason="ray is not installed (pip install 'ziggurat[ray]')"
)


# --------------------------------------------------------------------------- #
# Injected task functions (module level: a worker imports them by name)
# --------------------------------------------------------------------------- #


def behave(task):
    """`task` is (what, folder, value): each call appends its pid to folder/what, then does `what`."""
    what, folder, value = task
    with open(Path(folder) / what, "a") as log:
        log.write(f"{os.getpid()}\n")
    if what == "raise":
        raise ValueError("bad candidate")
    if what == "raise-once" and len((Path(folder) / what).read_text().split()) == 1:
        raise ValueError("first time only")
    if what == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    if what == "hang":
        time.sleep(60)
    if what == "sleep":
        time.sleep(value)
    return value * 2


def calls(folder, what):
    path = Path(folder) / what
    return path.read_text().split() if path.exists() else []


def run(executor, tasks, deadline=None):
    results, failures = {}, {}
    executor.run(
        behave,
        tasks,
        lambda t, r: results.__setitem__(t[0] + str(t[2]), r),
        lambda t, reason: failures.__setitem__(t[0], reason),
        deadline,
    )
    return results, failures


# --------------------------------------------------------------------------- #
# The local pool
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("jobs", [1, 2])
def test_tasks_a_result_returns_join_the_same_run(jobs, tmp_path):
    # The tuner starts a group's variants from the callback that completes its first phase.
    seen = []

    def on_result(task, result):
        seen.append(task[0] + str(task[2]))
        return [("ok", tmp_path, task[2] + 1)] if task[2] < 3 else None

    executor = LocalExecutor(jobs)
    try:
        executor.run(behave, [("ok", tmp_path, 1)], on_result, lambda task, reason: None)
    finally:
        executor.close()
    assert seen == ["ok1", "ok2", "ok3"]


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_task_that_raises_is_retried_once_then_fails_with_its_reason(jobs, tmp_path):
    executor = LocalExecutor(jobs)
    try:
        results, failures = run(
            executor, [("ok", tmp_path, 1), ("raise", tmp_path, 2), ("raise-once", tmp_path, 3)]
        )
    finally:
        executor.close()
    assert results == {"ok1": 2, "raise-once3": 6}
    assert failures == {"raise": "ValueError: bad candidate (twice)"}
    assert len(calls(tmp_path, "raise")) == 2 and len(calls(tmp_path, "raise-once")) == 2
    if jobs > 1:  # the retry ran in another worker process
        assert len(set(calls(tmp_path, "raise"))) == 2 and os.getpid() not in map(
            int, calls(tmp_path, "raise")
        )


def test_a_worker_that_dies_is_replaced_and_its_task_retried_elsewhere(tmp_path):
    executor = LocalExecutor(2)
    try:
        results, failures = run(
            executor, [("die", tmp_path, 0), ("ok", tmp_path, 5), ("ok", tmp_path, 6)]
        )
    finally:
        executor.close()
    assert results == {"ok5": 10, "ok6": 12}
    assert failures == {"die": "worker died (signal SIGKILL) (twice)"}
    assert len(set(calls(tmp_path, "die"))) == 2


def test_a_task_past_its_time_limit_is_stopped_retried_then_failed(tmp_path):
    executor = LocalExecutor(2, task_timeout=0.5)
    start = time.monotonic()
    try:
        results, failures = run(executor, [("hang", tmp_path, 0), ("ok", tmp_path, 1)])
    finally:
        executor.close()
    assert time.monotonic() - start < 10
    assert results == {"ok1": 2} and failures == {"hang": "timed out after 0.5 s (twice)"}
    for pid in map(int, calls(tmp_path, "hang")):  # both hanging workers were killed
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_ctrl_c_stops_the_tasks_in_flight(tmp_path):
    executor = LocalExecutor(2)

    def interrupt(task, result):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        executor.run(
            behave, [("sleep", tmp_path, 0.5), ("hang", tmp_path, 0)], interrupt, lambda t, r: None
        )
    executor.close()
    (pid,) = map(int, calls(tmp_path, "hang"))
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_the_deadline_stops_launching_and_stops_what_runs(tmp_path):
    executor = LocalExecutor(2)
    start = time.monotonic()
    try:
        results, failures = run(
            executor,
            [
                ("ok", tmp_path, 1),
                ("hang", tmp_path, 0),
                ("sleep", tmp_path, 30),
                ("ok", tmp_path, 2),
            ],
            deadline=time.monotonic() + 1.0,
        )
    finally:
        executor.close()
    assert time.monotonic() - start < 5
    assert results == {"ok1": 2} and failures == {}  # what the deadline stopped is not reported


def test_cluster_names(monkeypatch):
    for good in (None, "local", "ray", "ray://head:10001", "ray:head:6379"):
        check_cluster(good)
    with pytest.raises(DiagnosticError, match="unknown --cluster 'dask'"):
        check_cluster("dask")
    assert isinstance(make_executor("local", 3), LocalExecutor) and make_executor(None, 3).jobs == 3
    monkeypatch.setitem(sys.modules, "ray", None)  # as if ray were not installed
    with pytest.raises(
        DiagnosticError, match=r"--cluster ray needs the ray package: pip install 'ziggurat\[ray\]'"
    ):
        make_executor("ray")


def test_the_benchmark_skips_without_ray(monkeypatch, capsys, tmp_path):
    from benchmark_scripts import load_benchmark

    benchmark = load_benchmark("distributed_tuning")
    monkeypatch.setitem(sys.modules, "ray", None)
    assert benchmark.main(["--output", str(tmp_path / "out.json")]) == 0
    assert capsys.readouterr().out.startswith("distributed_tuning: skipped, ray is not installed")
    assert not (tmp_path / "out.json").exists()


# --------------------------------------------------------------------------- #
# The tuner on an executor
# --------------------------------------------------------------------------- #


GEMM = """
func.func @main(%a: tensor<128x256xf16>, %b: tensor<256x128xf16>) -> tensor<128x128xf16> {
  %c = graph.matmul %a, %b : (tensor<128x256xf16>, tensor<256x128xf16>) -> tensor<128x128xf16>
  %r = graph.relu %c : tensor<128x128xf16>
  func.return %r : tensor<128x128xf16>
}"""

REAL_MEASURE = tuner.measure


def measure_losing_candidate_1(task):
    """`measure`, but the worker measuring candidate 1 dies."""
    if task.candidate == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    return REAL_MEASURE(task)


def test_a_lost_measurement_is_a_failed_candidate_with_its_reason_and_not_cached(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(tuner, "measure", measure_losing_candidate_1)
    module = parse_source(default_context(), GEMM, "gemm.mlir")
    groups = tunable_groups(module, load_machine(MACHINE))
    cache = TuneCache(tmp_path / "cache.json")
    seen = []
    options = TuneOptions(jobs=2, top_k=2, bufferings=(), stage=False)
    (choice,) = tune(groups, MACHINE, options, cache, lambda g, m: seen.append(m))
    lost = [m for m in seen if m.fault]
    assert (
        len(lost) == 1
        and lost[0].candidate == 1
        and lost[0].error == "worker died (signal SIGKILL) (twice)"
    )
    assert choice.default_cycles is not None and choice.failed == 1
    assert choice.faults == ("worker died (signal SIGKILL) (twice)",) and not choice.complete
    assert cache.entries == {}
    line = ziggurat_tune.summary([choice]).splitlines()[1]
    assert line.endswith("(1 failed, not cached: worker died (signal SIGKILL) (twice))")


def test_a_task_carries_its_machine_files_to_a_host_without_them(tmp_path):
    from ziggurat.machine import machine_here, machine_sources

    (tmp_path / "base.toml").write_text('extends = "davinci"\n[memory.l1]\ncapacity = "512 KiB"\n')
    (tmp_path / "chip.toml").write_text('extends = "base.toml"\nname = "chip"\n')
    chip = str(tmp_path / "chip.toml")
    sources = machine_sources(chip)
    assert [Path(path).name for path, _ in sources] == [
        "chip.toml",
        "base.toml",
    ]  # the preset is not carried
    assert machine_here(chip, sources) == chip  # the same files here: used as they are
    module = parse_source(default_context(), GEMM, "gemm.mlir")
    (group,) = tunable_groups(module, load_machine(chip))
    task = tuner.Task(0, 0, group.module_text, group.target, None, chip, 0, machine_files=sources)
    here = tuner.measure(task)
    for name in ("chip.toml", "base.toml"):
        (tmp_path / name).unlink()  # as on a worker without them
    elsewhere = machine_here(chip, sources)
    assert elsewhere != chip and load_machine(elsewhere).memories["l1"].capacity == 512 * 1024
    there = tuner.measure(task)
    assert there.error is None and there.cycles == here.cycles


def small_cnn_f16():
    module = parse_source(default_context(), SMALL_CNN.read_text(), str(SMALL_CNN))
    apply_pipeline(module, "graph-convert-float{target=f16}")
    return module


def tune_small_cnn(tmp_path, name, options, cluster=None):
    module = small_cnn_f16()
    choices = ziggurat_tune.tune_module(
        module, MACHINE, options, tmp_path / f"{name}.json", cluster
    )
    text = io.StringIO()
    Printer(stream=text).print_op(module)
    return choices, text.getvalue(), (tmp_path / f"{name}.json").read_bytes()


# --------------------------------------------------------------------------- #
# The sweep
# --------------------------------------------------------------------------- #


def test_setting_values_and_the_toml_they_make():
    path, values = ziggurat_sweep.parse_setting("matrix.shape=[16,16,16], [32, 32, 16]")
    assert path == ("matrix", "shape") and values == [[16, 16, 16], [32, 32, 16]]
    assert ziggurat_sweep.parse_setting("memory.l1.capacity=512KiB,1 MiB")[1] == ["512KiB", "1 MiB"]
    rate = ziggurat_sweep.parse_setting('matrix.macs_per_cycle."f16->f32"=4096')
    assert rate == (("matrix", "macs_per_cycle", "f16->f32"), [4096])
    overrides = (
        (("memory", "l1", "capacity"), "512KiB"),
        (("matrix", "shape"), [32, 32, 16]),
        (("matrix", "macs_per_cycle", "f16->f32"), 16384),
        (("vector", "transcendental_cost"), 2.5),
        (("dma", "mte1", "pad"), False),
    )
    data = tomllib.loads(ziggurat_sweep.machine_file("davinci", overrides, "p0"))
    assert data == {
        "extends": "davinci",
        "name": "p0",
        "memory": {"l1": {"capacity": "512KiB"}},
        "matrix": {"shape": [32, 32, 16], "macs_per_cycle": {"f16->f32": 16384}},
        "vector": {"transcendental_cost": 2.5},
        "dma": {"mte1": {"pad": False}},
    }


def test_keys_that_change_together_are_an_inline_table_merged_into_the_base():
    setting = 'matrix={rows=16, macs_per_cycle={"f16->f32"=512, "i8->i32"=512}},{rows=32}'
    path, values = ziggurat_sweep.parse_setting(setting)
    assert path == ("matrix",) and values == [
        {"rows": 16, "macs_per_cycle": {"f16->f32": 512, "i8->i32": 512}},
        {"rows": 32},
    ]
    points = ziggurat_sweep.make_points([SMALL_CNN], "systolic", [(path, values)])
    assert [p.overrides for p in points] == [((path, values[0]),), ((path, values[1]),)]
    with pytest.raises(
        DiagnosticError, match="more than the 16x32 array's 512 processing elements"
    ):
        ziggurat_sweep.make_points(
            [SMALL_CNN], "systolic", [ziggurat_sweep.parse_setting("matrix.rows=16")]
        )


def test_a_bad_point_is_a_diagnostic_before_anything_runs(tmp_path):
    settings = [ziggurat_sweep.parse_setting("memory.l1.capacity=512KiB,lots")]
    bad = r"machine point capacity=lots: 'capacity' in \[memory.l1\] must be a size"
    with pytest.raises(DiagnosticError, match=bad):
        ziggurat_sweep.make_points([SMALL_CNN], MACHINE, settings)


@pytest.fixture(scope="module")
def two_models(tmp_path_factory):
    """The examples' small CNN (graph IR) and MLP (ONNX, generated)."""
    folder = tmp_path_factory.mktemp("models")
    sys.path.insert(0, str(ROOT / "examples" / "models"))
    try:
        import mlp
    finally:
        sys.path.pop(0)
    import onnx

    onnx.save(mlp.build(), folder / "mlp.onnx")
    return [SMALL_CNN, folder / "mlp.onnx"]


GRID = ["memory.l1.capacity=512KiB,1MiB", "matrix.shape=[16,16,16],[32,32,16]"]


def sweep_main(models, output, *extra):
    settings = [arg for setting in GRID for arg in ("--set", setting)]
    argv = [*map(str, models), "--machine", MACHINE, *settings, "-o", str(output), *extra]
    with pytest.raises(SystemExit) as exit:
        ziggurat_sweep.main(argv)
    return exit.value.code


def test_a_2x2_sweep_on_two_models_gives_the_table_and_plot(two_models, tmp_path, capsys):
    assert sweep_main(two_models, tmp_path, "--jobs", "2") == 0
    table = capsys.readouterr().out
    header = ["model", "memory.l1.capacity", "matrix.shape", "cycles", "time", "(us)", "numerics"]
    assert table.splitlines()[0].split() == header
    report = json.loads((tmp_path / "sweep.json").read_text())
    points = report["points"]
    assert report["grid"] == {
        "memory.l1.capacity": ["512KiB", "1MiB"],
        "matrix.shape": [[16, 16, 16], [32, 32, 16]],
    }
    assert [(p["model"], p["memory.l1.capacity"], p["matrix.shape"]) for p in points] == [
        (model, l1, shape)
        for model in ("small_cnn", "mlp")
        for l1 in ("512KiB", "1MiB")
        for shape in ([16, 16, 16], [32, 32, 16])
    ]
    assert all(p["numerics"] == "ok" and p["cycles"] > 0 and p["error"] is None for p in points)
    for model in ("small_cnn", "mlp"):  # the matrix shape changes the time of both models
        cycles = [p["cycles"] for p in points if p["model"] == model]
        assert cycles[0] != cycles[1]
    csv = (tmp_path / "sweep.csv").read_text().splitlines()
    assert (
        csv[0]
        == "model,memory.l1.capacity,matrix.shape,cycles,microseconds,numerics,max_abs_error,error"
    )
    assert len(csv) == 9 and csv[1].startswith('small_cnn,512KiB,"[16, 16, 16]",')
    assert (tmp_path / "sweep.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --------------------------------------------------------------------------- #
# Ray
# --------------------------------------------------------------------------- #


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        yield ray
    finally:
        ray.shutdown()


@needs_ray
def test_ray_tunes_to_the_same_ir_cycles_and_cache_bytes_as_the_pool(local_ray, tmp_path):
    options = TuneOptions(jobs=2, top_k=3)
    pool_choices, pool_ir, pool_cache = tune_small_cnn(tmp_path, "pool", options)
    ray_choices, ray_ir, ray_cache = tune_small_cnn(tmp_path, "ray", options, "ray")
    assert [
        (c.sizes, c.buffering, c.interchange, c.stage, c.layout, c.cycles) for c in ray_choices
    ] == [(c.sizes, c.buffering, c.interchange, c.stage, c.layout, c.cycles) for c in pool_choices]
    assert ray_ir == pool_ir and ray_cache == pool_cache
    assert any(c.sizes is not None for c in pool_choices)
    # A second run against the cache measures nothing, whichever backend ran the first.
    again = []
    with_cache = tune(
        tunable_groups(small_cnn_f16(), load_machine(MACHINE)),
        MACHINE,
        options,
        TuneCache.load(tmp_path / "ray.json"),
        lambda g, m: again.append(m),
    )
    assert again == [] and all(c.cached for c in with_cache)


@needs_ray
def test_ray_retries_a_lost_or_hanging_task_once_then_fails_with_its_reason(local_ray, tmp_path):
    from ray import cloudpickle

    from ziggurat.tuning.executors import RayExecutor

    cloudpickle.register_pickle_by_value(
        sys.modules[__name__]
    )  # Ray's workers cannot import this test module
    try:
        executor = RayExecutor(jobs=2, task_timeout=3)
        results, failures = run(
            executor,
            [
                ("ok", tmp_path, 1),
                ("raise", tmp_path, 0),
                ("hang", tmp_path, 0),
                ("die", tmp_path, 0),
            ],
        )

        def interrupt(task, result):
            raise KeyboardInterrupt

        executor.close()
        interrupted = tmp_path / "interrupted"
        interrupted.mkdir()
        # A limit far past the sleep, so that a slow worker start on a loaded machine cannot time it out.
        executor = RayExecutor(jobs=2, task_timeout=120)
        with pytest.raises(
            KeyboardInterrupt
        ):  # Ctrl-C cancels the task in flight: its worker is killed
            executor.run(
                behave,
                [("sleep", interrupted, 0.5), ("hang", interrupted, 0)],
                interrupt,
                lambda t, r: None,
            )
        executor.close()
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    assert results == {"ok1": 2}
    assert failures["raise"] == "ValueError: bad candidate (twice)"
    assert failures["hang"] == "timed out after 3 s (twice)"
    assert failures["die"].startswith("worker lost (") and failures["die"].endswith("(twice)")
    (pid,) = map(int, calls(interrupted, "hang"))
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail("the cancelled task's worker still runs")
    assert local_ray.is_initialized()  # the executor did not start it, so it leaves it running


@needs_ray
def test_ray_sweeps_to_the_same_numbers(local_ray, two_models, tmp_path):
    assert sweep_main(two_models, tmp_path / "pool", "--jobs", "2") == 0
    assert sweep_main(two_models, tmp_path / "ray", "--cluster", "ray") == 0
    pool, on_ray = (
        json.loads((tmp_path / run / "sweep.json").read_text())["points"] for run in ("pool", "ray")
    )
    for point in (*pool, *on_ray):
        del point["seconds"]  # wall time: all else must be equal
    assert pool == on_ray


@needs_ray
def test_conformance_runs_its_models_on_ray_to_the_same_rows(local_ray, two_models, tmp_path):
    from benchmark_scripts import load_benchmark
    from ray import cloudpickle

    conformance = load_benchmark("conformance")
    cloudpickle.register_pickle_by_value(
        conformance
    )  # as a script, it is __main__: pickled by value anyway
    try:
        rows = {}
        for cluster in ("local", "ray"):
            output = tmp_path / f"{cluster}.json"
            argv = ["--models", str(two_models[1]), "--cluster", cluster, "--output", str(output)]
            assert conformance.main(argv) == 0
            (rows[cluster],) = json.loads(output.read_text())["models"]
    finally:
        cloudpickle.unregister_pickle_by_value(conformance)
    assert rows["ray"]["npu_passed"] and rows["ray"]["cycles"] == rows["local"]["cycles"] > 0
