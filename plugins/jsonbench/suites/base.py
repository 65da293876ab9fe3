"""The suite contract: what a benchmark suite declares and how the driver runs it.

A suite reproduces one seed. It declares

* ``name``: also its SQL folder ``include/sql/<name>/`` and its expectation files
  ``include/expectations/<name>.*.json``;
* ``workloads``: static names; the DAG makes one task per workload, so they are known at parse time;
* ``headline``: the metrics the command line's summary shows;
* the **kind of every metric** it makes (:data:`~jsonbench.dataset.measurement.MetricKind`:
  ``deterministic``, ``sampled`` or ``timed``), declared beside the metric in the suite's own table
  and answered by :meth:`Suite.metric_kind`. The suite knows how a metric is made (an ANALYZE
  estimate is drawn from a random sample; a size is a fact; a tps is a speed), so drift and the
  bands read its declaration, never a pattern over names or units. Recording a metric the suite
  did not declare is an error (:class:`UndeclaredMetric`);

and implements

* :meth:`Suite.load`, run once per cell by the setup task right after the engine starts
  (shared data, extensions, helper functions),
* :meth:`Suite.run`, run by the workload's own task, which records :class:`Measurement` objects
  through the :class:`WorkloadContext`,
* :meth:`Suite.expected_metrics`, the ``(workload, metric)`` pairs a complete run must contain
  (the sanity check compares against it),
* :meth:`Suite.estimate`, what a cell will cost at a scale (the plan step prints it and refuses a
  run the machine cannot hold), and optionally :meth:`Suite.preflight`.

Suites talk only to the session: they never ask which backend provisioned the engine. A workload
that needs something the build lacks records ``Measurement.not_applicable`` with the reason
(see :meth:`WorkloadContext.require`). Its SQL lives in ``include/sql/<name>/`` (identifiers bound
through ``psycopg.sql`` by the session), never inline in Python.

**Timing** has one helper family, so every timed block is sampled the same way:
:meth:`WorkloadContext.window` (a ``with`` block; ``"measure"`` windows are sampled for what else used
the machine and say afterwards whether they were ``disturbed``), :meth:`WorkloadContext.timed`
(milliseconds of one call) and :meth:`WorkloadContext.measure` (result and window of one call).
A measurement that can be taken again without changing what it measures (a read, a plan, an index
built and dropped) may pass ``retry_disturbed=True``: when its window was disturbed and short
(:data:`RETRY_MAX_S`), it is taken once more and the disturbed window is set aside
(:attr:`WorkloadContext.set_aside`, counted in :attr:`WorkloadContext.retries`). Destructive
measurements (an update) are never retried: their rows are published marked ``quiet = false``.

**Adding a suite** (nothing else needs to change):

1. a module (or package) with a :class:`Suite` subclass, importable wherever the DAG is parsed and
   its tasks run (inside ``plugins/jsonbench/suites/`` or anywhere on ``PYTHONPATH``); its
   workloads are a static tuple (read at DAG parse time: importing the module must be cheap);
2. its SQL in ``include/sql/<name>/``;
3. its expectations: ``include/expectations/<name>.reproduction.json`` (and ``.seed.json``,
   optionally ``.sanity.json``, ``.drift.json``);
4. one block under ``suites:`` in ``include/matrix.yaml`` naming its ``module`` (``pkg.mod:Class``),
   ``family`` and ``seed``, and its parameters under every scale profile.

``tests/integration/test_suite_recipe.py`` adds a tiny suite from a temporary folder exactly this way.
"""

from __future__ import annotations

import abc
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Generic, TypeVar

from jsonbench.cell import Cell
from jsonbench.dataset.measurement import CELL_METRICS, CELL_RECORD, METRIC_KINDS, Aggregate, Measurement, MetricKind
from jsonbench.engines.base import Session
from jsonbench.errors import BenchmarkError
from jsonbench.host.load import WindowLoad, WindowSampler

S = TypeVar("S", bound=Session)
T = TypeVar("T")

#: The phase whose windows are sampled for other load on the machine (and that counts as measuring).
MEASURE = "measure"
#: The phase of data loads (counts as work in the overhead report, not sampled).
LOAD = "load"
#: A disturbed measure window is taken again (once) only when it lasted at most this long (seconds):
#: repeating a short read is cheap; repeating a long one (a 20 s pgbench run at ``full``) would
#: double the run on a busy machine for little, so those rows are marked instead.
RETRY_MAX_S = 10.0


class UndeclaredMetric(BenchmarkError):
    """A suite recorded (or was asked about) a metric whose kind it does not declare."""


#: What a suite declares per workload: metric -> kind.
KindTable = dict[str, dict[str, MetricKind]]


def shares(total: int, parts: int) -> list[int]:
    """``total`` repetitions over ``parts`` starts, in order, the first ones taking the remainder; at least one each.

    ``shares(5, 2) == [3, 2]``, ``shares(2, 2) == [1, 1]``, ``shares(1, 2) == [1, 1]`` (a single repetition is taken in
    every start: a figure that rests on two starts needs one in each).
    """
    base, extra = divmod(int(total), int(parts))
    return [max(1, base + (1 if i < extra else 0)) for i in range(int(parts))]


def start_rounds(cell: Cell, repetition_params: tuple[str, ...]) -> list[Cell]:
    """The cell as each of its starts runs it: the run's ``repetitions`` and the suite's ``repetition_params`` split.

    One start (the default) is the cell itself. The order is fixed, the same every night: the first start of a cell's
    first workload follows the load and runs slower than the restarts after it (-5 % to -6 % on one host,
    ``jsonbench-dev restart-check``), a shift every night's figures then share alike.
    """
    k = cell.starts
    if k <= 1:
        return [cell]
    reps = shares(cell.repetitions, k)
    split = {p: shares(int(cell.scale_params[p]), k) for p in repetition_params if cell.scale_params.get(p) is not None}
    return [replace(cell, repetitions=reps[i], scale_params={**cell.scale_params, **{p: s[i] for p, s in split.items()}}) for i in range(k)]


def check_kinds(suite: str, table: KindTable) -> KindTable:
    """``table`` itself, after checking every declared kind is a :data:`MetricKind` (at import, so a typo fails early)."""
    for workload, metrics in table.items():
        for metric, kind in metrics.items():
            if kind not in METRIC_KINDS:
                raise UndeclaredMetric(f"{suite}: {workload}/{metric} declares kind {kind!r}; one of {list(METRIC_KINDS)}")
    return table


@dataclass(frozen=True)
class CellCost:
    """What one cell is expected to cost on the host, for the plan step (bytes and seconds)."""

    load_bytes: int = 0
    disk_peak_bytes: int = 0
    memory_peak_bytes: int = 0
    duration_s: float = 0.0
    #: Where the figures come from ("estimate from the scale", "recorded run <id>", ...).
    source: str = "estimate"


@dataclass
class Window:
    """One timed block; after it ends, ``seconds`` and (for measure windows) ``load`` are set."""

    phase: str
    seconds: float = 0.0
    load: WindowLoad | None = None

    @property
    def disturbed(self) -> bool:
        """True when the machine was measurably busy with other work during this window."""
        return bool(self.load is not None and self.load.quiet is False)


@dataclass
class WorkloadContext(Generic[S]):
    """Everything a workload needs, and where it records what it measured."""

    cell: Cell
    session: S
    workload: str
    measurements: list[Measurement] = field(default_factory=list)
    phases: dict[str, float] = field(default_factory=dict)
    #: What the rest of the machine did during each measure window of this task.
    windows: list[WindowLoad] = field(default_factory=list)
    #: Makes a sampler for a measure window (the driver wires it to the engine's processes).
    sampler: Callable[[], WindowSampler] | None = None
    #: Disturbed windows whose measurement was taken again (``retry_disturbed``) and discarded.
    set_aside: list[WindowLoad] = field(default_factory=list)
    #: The suite's declaration, ``(workload, metric) -> kind`` (the driver passes :meth:`Suite.metric_kind`):
    #: every recorded measurement carries its kind, and an undeclared metric fails the workload. None
    #: outside a suite's run (hand checks, tests): measurements then carry no kind.
    kinds: Callable[[str, str], MetricKind] | None = None
    #: Which of the cell's engine starts this is (0: the first; ``starts``: the scale profile's, or the run parameter).
    #: A workload may leave what only repeats a fact (a size measured again) to the first start: the driver keeps the
    #: first start's facts (:func:`jsonbench.dataset.measurement.merge_starts`).
    start: int = 0
    #: Hashes the session's tables (:meth:`jsonbench.engines.base.Session.fingerprint`), or None (the driver sets it
    #: for an A/B comparison's cells only). Called once, before the first measure window that follows a load window,
    #: outside both: the rows as loaded, whichever suite loaded them and however. Its hash lands in :attr:`fingerprints`.
    fingerprint: Callable[[], str | None] | None = None
    fingerprints: list[str] = field(default_factory=list)
    _loaded: bool = field(default=False, repr=False)

    @property
    def last_start(self) -> bool:
        """Whether this is the cell's last engine start (the only one by default). What a workload generates once and
        keeps across its starts (a source table: a restart keeps the data directory) is dropped here."""
        return self.start >= self.cell.starts - 1

    @property
    def scale_params(self) -> dict[str, Any]:
        """The suite's parameters at this run's scale (``include/matrix.yaml``, ``scales.<scale>.<suite>``).

        Named for what it holds: the scale itself (``smoke``, ``laptop``, ...) is ``cell.scale``, which no
        workload reads (a workload does what its parameters say, whatever the scale is called).
        """
        return self.cell.scale_params

    @property
    def repetitions(self) -> int:
        return int(self.cell.repetitions)

    @contextmanager
    def window(self, phase: str) -> Iterator[Window]:
        """Time a block as ``phase`` (``load`` and ``measure`` count as work; anything else as overhead).

        A ``measure`` window is also sampled for what else used the machine; the yielded
        :class:`Window` says afterwards whether it was disturbed, so a suite may repeat it.
        """
        if phase == MEASURE and self._loaded and self.fingerprint is not None and not self.fingerprints:
            digest = self.fingerprint()
            if digest:
                self.fingerprints.append(digest)
        win = Window(phase)
        sampler = self.sampler() if (phase == MEASURE and self.sampler is not None) else None
        if sampler is not None:
            sampler.start()
        t0 = time.perf_counter()
        try:
            yield win
        finally:
            win.seconds = time.perf_counter() - t0
            self._loaded = self._loaded or phase == LOAD
            self.phases[phase] = self.phases.get(phase, 0.0) + win.seconds
            if sampler is not None:
                win.load = sampler.stop()
                self.windows.append(win.load)

    @property
    def retries(self) -> int:
        """How many disturbed measure windows of this task were taken again."""
        return len(self.set_aside)

    def measure(
        self, fn: Callable[[], T], *, phase: str = MEASURE, retry_disturbed: bool = False, prepare: Callable[[], object] | None = None
    ) -> tuple[T, Window]:
        """Call ``fn`` inside a ``phase`` window; return its result and the window.

        ``prepare`` runs before each attempt, outside the window (dropping what the last attempt
        built, say). With ``retry_disturbed`` (only for measurements that can be repeated without
        changing what they measure), a disturbed window of at most :data:`RETRY_MAX_S` is taken once
        more: the first result is dropped, its window moves from :attr:`windows` to
        :attr:`set_aside`, so the published row is marked by the window whose value it carries. A
        second disturbed window stays, and marks the row.
        """
        if prepare is not None:
            prepare()
        with self.window(phase) as win:
            result = fn()
        if retry_disturbed and win.disturbed and win.seconds <= RETRY_MAX_S:
            assert win.load is not None
            self.windows.remove(win.load)
            self.set_aside.append(win.load)
            if prepare is not None:
                prepare()
            with self.window(phase) as win:
                result = fn()
        return result, win

    def timed(
        self,
        fn: Callable[[], object],
        phase: str | None = None,
        *,
        retry_disturbed: bool = False,
        prepare: Callable[[], object] | None = None,
    ) -> float:
        """Milliseconds one call of ``fn`` takes (inside a ``phase`` window when given; see :meth:`measure`)."""
        if phase is None:
            if prepare is not None:
                prepare()
            t0 = time.perf_counter()
            fn()
            return (time.perf_counter() - t0) * 1000.0
        _, win = self.measure(fn, phase=phase, retry_disturbed=retry_disturbed, prepare=prepare)
        return win.seconds * 1000.0

    def record(
        self,
        metric: str,
        unit: str,
        samples: float | list[float],
        *,
        variant: str = "default",
        workload: str | None = None,
        aggregate: Aggregate = "median",
        extra: dict[str, Any] | None = None,
    ) -> None:
        """Record one metric; its kind is the suite's declaration (:class:`UndeclaredMetric` when it has none)."""
        workload = workload or self.workload
        self.measurements.append(
            Measurement.of(workload, variant, metric, unit, samples, aggregate=aggregate, extra=extra, kind=self._kind(workload, metric))
        )

    def not_applicable(self, metrics: list[tuple[str, str]], reason: str, *, variant: str = "default") -> None:
        """Record ``(metric, unit)`` pairs as not applicable on this build, with the reason."""
        for metric, unit in metrics:
            kind = self._kind(self.workload, metric)
            self.measurements.append(Measurement.not_applicable(self.workload, variant, metric, unit, reason, kind=kind))

    def _kind(self, workload: str, metric: str) -> MetricKind | None:
        return None if self.kinds is None else self.kinds(workload, metric)

    def require(self, capability: str) -> str | None:
        """None if the engine has ``capability``; else the reason to record it as not applicable."""
        if self.session.capabilities.get(capability, False):
            return None
        return f"engine build lacks {capability}"


class Suite(abc.ABC, Generic[S]):
    """Base class of every suite; see the module docstring for the contract."""

    name: ClassVar[str]
    workloads: ClassVar[tuple[str, ...]]
    #: Metrics the command line's summary table shows for this suite (all when empty).
    headline: ClassVar[tuple[str, ...]] = ()
    #: The scale parameters that count repetitions of this suite's timed work (``pgbench_repetitions``, ``read_runs``).
    #: When a cell's figures rest on several engine starts (the run parameter ``starts``), the driver runs each workload
    #: once per start and splits these, and the run's ``repetitions``, across them (:func:`start_rounds`), so a night
    #: costs what it did. A workload must therefore be able to run again in the same engine: each of its repetitions
    #: already builds what it measures afresh (a table, an index) and drops it.
    repetition_params: ClassVar[tuple[str, ...]] = ()

    def preflight(self, cell: Cell) -> None:  # optional hook
        """Raise before any engine starts if this cell cannot run (a missing or too old tool, say)."""

    def load(self, ctx: WorkloadContext[S]) -> None:  # optional hook
        """Prepare shared state once per cell (default: nothing)."""

    @abc.abstractmethod
    def run(self, workload: str, ctx: WorkloadContext[S]) -> None:
        """Measure one workload, recording into ``ctx``."""

    @abc.abstractmethod
    def expected_metrics(self) -> list[tuple[str, str]]:
        """``(workload, metric)`` pairs a complete run of this suite contains (ok or not applicable).

        The same at every scale: a scale changes how much a workload does, never which metrics it
        records (no suite read the scale it was once given, so the checks need not re-read it).
        """

    @abc.abstractmethod
    def metric_kinds(self) -> KindTable:
        """The suite's declaration: workload -> metric -> kind, for every metric it can record (the setup step's included)."""

    def metric_kind(self, workload: str, metric: str) -> MetricKind:
        """How ``metric`` of ``workload`` is made, as this suite declares it; :class:`UndeclaredMetric` if it does not.

        Also answers the per-cell resource rows every run publishes (workload ``_cell``). Used when
        recording, and by readers of rows whose ``metric_kind`` column is null (files written before it).
        """
        if workload == CELL_RECORD and metric in CELL_METRICS:
            return CELL_METRICS[metric][1]
        kind = self.metric_kinds().get(workload, {}).get(metric)
        if kind is None:
            raise UndeclaredMetric(f"suite {self.name!r} declares no kind for metric {metric!r} of workload {workload!r}")
        return kind

    def estimate(self, cell: Cell) -> CellCost:
        """What this cell will cost on the host at its scale (a rough upper bound; history refines it)."""
        return CellCost(source="no estimate")
