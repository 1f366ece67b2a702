"""Where the tuner's measurements and the sweep's points run: processes of this machine (`LocalExecutor`)
or a Ray cluster (`RayExecutor`), behind one `Executor` interface that reports each task's outcome to
the driver as it finishes.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection, wait
from typing import Any, Protocol

from ziggurat.diagnostics import Diagnostic, DiagnosticError, exception_message

OnResult = Callable[[Any, Any], "Sequence[Any] | None"]
OnFailure = Callable[[Any, str], "Sequence[Any] | None"]
"""Both may return more tasks, which join the queue of the same run (a tuning phase that follows
from a group's results starts while other groups are still measured)."""

RAY_MISSING = "--cluster ray needs the ray package: pip install 'ziggurat[ray]' (ray>=2.40)"


class Executor(Protocol):
    jobs: int
    """Tasks in flight at once."""

    def run(
        self,
        function: Callable[[Any], Any],
        tasks: Sequence[Any],
        on_result: OnResult,
        on_failure: OnFailure,
        deadline: float | None = None,
    ) -> None: ...

    def close(self) -> None: ...


@dataclass
class _Job:
    task: Any
    attempt: int = 0
    reasons: tuple[str, ...] = ()
    started: float = 0.0


def _retry_or_fail(job: _Job, reason: str, pending: deque, on_failure: OnFailure) -> None:
    """A job that faulted is retried once (first in line, on a fresh worker), then reported failed."""
    if job.attempt == 0:
        pending.appendleft(replace(job, attempt=1, reasons=(reason,)))
        return
    first = job.reasons[0] if job.reasons else reason
    _queue(
        pending,
        on_failure(
            job.task, f"{reason} (twice)" if first == reason else f"{first}; retried: {reason}"
        ),
    )


def _queue(pending: deque, more: Sequence[Any] | None) -> None:
    """Tasks a callback returned, queued after those already waiting."""
    pending.extend(_Job(task) for task in more or ())


def _raised(error: Exception) -> str:
    return f"{type(error).__name__}: {exception_message(error)}"


def _past(deadline: float | None) -> bool:
    return deadline is not None and time.monotonic() >= deadline


# --------------------------------------------------------------------------- #
# This machine's processes
# --------------------------------------------------------------------------- #


def _serve(connection: Connection) -> None:
    """A worker process's body: call each (function, task) received, send back ("ok"|"error", value)."""
    signal.signal(
        signal.SIGINT, signal.SIG_IGN
    )  # Ctrl-C is the driver's to handle: it stops the workers
    while True:
        try:
            message = connection.recv()
        except EOFError:
            return
        if message is None:
            return
        function, task = message
        try:
            reply = ("ok", function(task))
        except (
            Exception
        ) as error:  # the task's own failure: the driver retries it once, then reports it
            reply = ("error", _raised(error))
        try:
            connection.send(reply)
        except (
            TypeError,
            ValueError,
            AttributeError,
            pickle.PicklingError,
        ) as error:  # a result that does not pickle
            connection.send(("error", f"cannot send the result back: {_raised(error)}"))


@dataclass
class _Worker:
    process: multiprocessing.Process
    connection: Connection
    job: _Job | None = None

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.connection.close()


def _ended(process: multiprocessing.Process) -> str:
    status = process.exitcode
    if status is not None and status < 0:
        return f"worker died (signal {signal.Signals(-status).name})"
    return f"worker died (exit status {status})"


@dataclass
class LocalExecutor:
    """`jobs` worker processes forked from this one (1: the tasks run in this process, one after the
    other, where a time limit cannot be enforced). A worker that faults is replaced, so a retry
    runs in another process."""

    jobs: int = 1
    task_timeout: float | None = None
    _idle: list[_Worker] = field(default_factory=list, repr=False)

    def run(
        self,
        function: Callable[[Any], Any],
        tasks: Sequence[Any],
        on_result: OnResult,
        on_failure: OnFailure,
        deadline: float | None = None,
    ) -> None:
        if self.jobs <= 1:
            self._run_here(function, tasks, on_result, on_failure, deadline)
            return
        pending: deque[_Job] = deque(_Job(task) for task in tasks)
        busy: list[_Worker] = []
        try:
            while pending or busy:
                if _past(deadline):
                    return  # the tasks in flight are stopped below
                while pending and len(busy) < self.jobs:
                    worker = self._idle.pop() if self._idle else self._start()
                    try:
                        worker.connection.send((function, pending[0].task))
                    except (
                        BrokenPipeError,
                        ConnectionResetError,
                    ):  # it died while idle: another takes the task
                        worker.stop()
                        continue
                    worker.job = replace(pending.popleft(), started=time.monotonic())
                    busy.append(worker)
                wait(
                    [w.connection for w in busy] + [w.process.sentinel for w in busy],
                    self._wait_time(busy, deadline),
                )
                for worker in list(busy):
                    self._check(worker, busy, pending, on_result, on_failure)
        finally:
            for worker in busy:  # stopped by the deadline, an error, or Ctrl-C
                worker.stop()

    def _check(
        self,
        worker: _Worker,
        busy: list[_Worker],
        pending: deque,
        on_result: OnResult,
        on_failure: OnFailure,
    ) -> None:
        job = worker.job
        assert job is not None
        reply = None
        if worker.connection.poll():
            try:
                reply = worker.connection.recv()
            except (EOFError, OSError):
                reply = None
        if reply is None and worker.process.is_alive():
            if self.task_timeout is None or time.monotonic() - job.started < self.task_timeout:
                return
            reason = f"timed out after {self.task_timeout:g} s"
        elif reply is None:
            worker.process.join()
            reason = _ended(worker.process)
        else:
            reason = reply[1] if reply[0] == "error" else ""
        busy.remove(worker)
        worker.job = None
        if reply is not None and reply[0] == "ok":
            self._idle.append(worker)
            _queue(pending, on_result(job.task, reply[1]))
            return
        worker.stop()  # a worker that faulted is not trusted with the retry
        _retry_or_fail(job, reason, pending, on_failure)

    def _wait_time(self, busy: list[_Worker], deadline: float | None) -> float | None:
        ends = [] if deadline is None else [deadline]
        if self.task_timeout is not None:
            ends += [w.job.started + self.task_timeout for w in busy if w.job is not None]
        return None if not ends else max(0.0, min(ends) - time.monotonic()) + 0.01

    def _start(self) -> _Worker:
        # fork: the worker starts with this process's modules loaded (ziggurat, the function's module).
        context = multiprocessing.get_context("fork")
        here, there = context.Pipe()
        process = context.Process(target=_serve, args=(there,), daemon=True, name="ziggurat worker")
        process.start()
        there.close()
        return _Worker(process, here)

    def _run_here(
        self,
        function: Callable[[Any], Any],
        tasks: Sequence[Any],
        on_result: OnResult,
        on_failure: OnFailure,
        deadline: float | None,
    ) -> None:
        pending: deque[_Job] = deque(_Job(task) for task in tasks)
        while pending:
            if _past(deadline):
                return
            job = pending.popleft()
            try:
                result = function(job.task)
            except Exception as error:  # as a worker's: retried once (first in line), then reported
                _retry_or_fail(job, _raised(error), pending, on_failure)
                continue
            _queue(pending, on_result(job.task, result))

    def close(self) -> None:
        for worker in self._idle:
            try:
                worker.connection.send(None)
            except OSError:
                pass
            worker.process.join(timeout=5)
            worker.stop()
        self._idle.clear()


# --------------------------------------------------------------------------- #
# Ray
# --------------------------------------------------------------------------- #


def import_ray() -> Any:
    """The ray module, or a one-line diagnostic saying how to install it."""
    try:
        import ray
    except ImportError:
        raise DiagnosticError(Diagnostic("error", RAY_MISSING)) from None
    return ray


def _call(function: Callable[[Any], Any], task: Any) -> Any:
    """A Ray task's body (Ray pickles `function` by name: the worker imports its module)."""
    return function(task)


def _warm(seconds: float) -> int:
    """A Ray worker's first task: import what measurements need, then hold the CPU a moment so that
    the other first tasks go to other workers."""
    import ziggurat.tuning.tuner  # noqa: F401

    time.sleep(seconds)
    return os.getpid()


class RayExecutor:
    """Tasks as Ray tasks (one CPU each) on a cluster: `address` as `ray.init` takes it (None: the
    `RAY_ADDRESS` cluster, else a local instance of `num_cpus` CPUs, started here and shut down by
    `close`), connected to when the first tasks come (a run with nothing to do starts nothing),
    its workers then loading ziggurat all at once.
    Ray's own retries are off: a task that raised, whose worker or node was lost, or that ran past
    `task_timeout` (then cancelled, its worker killed) is resubmitted once by the driver."""

    def __init__(
        self,
        address: str | None = None,
        jobs: int | None = None,
        task_timeout: float | None = None,
        num_cpus: int | None = None,
    ):
        self._ray = import_ray()
        self.address, self.num_cpus, self.task_timeout = address, num_cpus, task_timeout
        self._jobs = jobs
        self.started = False
        """Whether this executor started Ray (then `close` shuts it down)."""
        self._remote = None

    @property
    def jobs(self) -> int:
        """Tasks in flight: as asked, else every CPU of the cluster."""
        self._connect()
        return self._jobs or max(1, int(self._ray.cluster_resources().get("CPU", 1)))

    def _connect(self) -> None:
        ray = self._ray
        if self._remote is not None:
            return
        if not ray.is_initialized():
            try:
                ray.init(
                    address=self.address,
                    num_cpus=self.num_cpus,
                    include_dashboard=False,
                    log_to_driver=False,
                    logging_level="ERROR",
                )
            except (ConnectionError, RuntimeError, ValueError) as error:
                where = self.address or os.environ.get("RAY_ADDRESS") or "a local instance"
                raise DiagnosticError(
                    Diagnostic("error", f"cannot connect to Ray at {where}: {error}")
                ) from None
            self.started = True
        self._remote = ray.remote(num_cpus=1, max_retries=0, retry_exceptions=False)(_call)
        # Each worker imports ziggurat once (seconds); done for all at once here, not in the first measurements.
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        warming = [
            ray.remote(num_cpus=1)(_warm).remote(0.2) for _ in range(min(cpus, self._jobs or cpus))
        ]
        ray.wait(
            warming, num_returns=len(warming), timeout=120
        )  # a busy cluster warms its workers later

    def run(
        self,
        function: Callable[[Any], Any],
        tasks: Sequence[Any],
        on_result: OnResult,
        on_failure: OnFailure,
        deadline: float | None = None,
    ) -> None:
        if not tasks:
            return
        ray = self._ray
        jobs = self.jobs
        pending: deque[_Job] = deque(_Job(task) for task in tasks)
        in_flight: dict[Any, _Job] = {}
        try:
            while pending or in_flight:
                if _past(deadline):
                    return  # the tasks in flight are cancelled below
                while pending and len(in_flight) < jobs:
                    job = replace(pending.popleft(), started=time.monotonic())
                    in_flight[self._remote.remote(function, job.task)] = job
                refs = list(in_flight)
                ray.wait(refs, num_returns=1, timeout=self._wait_time(in_flight, deadline))
                ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0)
                for ref in ready:
                    job = in_flight.pop(ref)
                    try:
                        result = ray.get(ref)
                    except (
                        ray.exceptions.RayTaskError
                    ) as error:  # the function raised on the worker
                        reason = (
                            _raised(error.cause)
                            if isinstance(error.cause, Exception)
                            else str(error)
                        )
                        _retry_or_fail(job, reason, pending, on_failure)
                    except ray.exceptions.RayError as error:  # the worker or its node was lost
                        _retry_or_fail(
                            job, f"worker lost ({type(error).__name__})", pending, on_failure
                        )
                    else:
                        _queue(pending, on_result(job.task, result))
                if self.task_timeout is not None:
                    now = time.monotonic()
                    for ref, job in list(in_flight.items()):
                        if now - job.started >= self.task_timeout:
                            del in_flight[ref]
                            ray.cancel(ref, force=True)
                            _retry_or_fail(
                                job, f"timed out after {self.task_timeout:g} s", pending, on_failure
                            )
        finally:
            for ref in in_flight:  # stopped by the deadline, an error, or Ctrl-C
                ray.cancel(ref, force=True)

    def _wait_time(self, in_flight: dict[Any, _Job], deadline: float | None) -> float | None:
        ends = [] if deadline is None else [deadline]
        if self.task_timeout is not None:
            ends += [job.started + self.task_timeout for job in in_flight.values()]
        return None if not ends else max(0.0, min(ends) - time.monotonic()) + 0.01

    def close(self) -> None:
        if self.started and self._ray.is_initialized():
            self._ray.shutdown()


# --------------------------------------------------------------------------- #
# Choosing one
# --------------------------------------------------------------------------- #


def check_cluster(cluster: str | None) -> None:
    """A diagnostic for a `--cluster` value that names no backend (before any work)."""
    if cluster in (None, "local", "ray") or cluster.startswith(("ray://", "ray:")):
        return
    raise DiagnosticError(
        Diagnostic(
            "error",
            f"unknown --cluster '{cluster}': expected local, ray, ray://HOST:PORT or ray:HOST:PORT",
        )
    )


def make_executor(
    cluster: str | None, jobs: int | None = None, task_timeout: float | None = None
) -> Executor:
    """The executor `cluster` names; `jobs` None: every core (local) or every CPU of the cluster (Ray).

        executor = make_executor(cluster, jobs, task_timeout)
        executor.run(function, tasks, on_result, on_failure, deadline)
        executor.close()

    * `cluster`: None or "local": `jobs` worker processes of this machine (1: in
      this process); "ray": the cluster `RAY_ADDRESS` names, else a Ray instance
      started for this process; "ray://HOST:PORT" (Ray Client) or "ray:HOST:PORT"
      (a node of the cluster). The `ray` package is imported only then
      (`pip install 'ziggurat[ray]'`).
    * `function` must be importable by name (a module-level function): a worker
      imports it. Tasks and results travel pickled.
    * `on_result(task, result)` for each task that returned; `on_failure(task,
      reason)` for one that raised, whose worker died, or that ran past
      `task_timeout` seconds, each of these twice: such a task is retried once on
      another worker process before it counts as failed.
    * `deadline` (`time.monotonic()` seconds): past it nothing more is launched,
      the tasks in flight are stopped, and `run` returns.
    * At most `jobs` tasks are in flight at once; a KeyboardInterrupt in the driver
      stops them all before it propagates.
    """
    check_cluster(cluster)
    if cluster in (None, "local"):
        return LocalExecutor(jobs or os.cpu_count() or 1, task_timeout)
    if cluster == "ray":
        address = None
    elif cluster.startswith("ray://"):
        address = cluster
    else:
        address = cluster.removeprefix("ray:")
    return RayExecutor(address, jobs, task_timeout)


__all__ = [
    "Executor",
    "LocalExecutor",
    "RayExecutor",
    "check_cluster",
    "import_ray",
    "make_executor",
]
