"""The suite contract: what a benchmark suite declares and how the driver runs it.

A suite reproduces one seed. It declares

* ``name``: also its SQL folder ``include/sql/<name>/`` and its expectation files
  ``include/expectations/<name>.*.json``;
* ``workloads``: static names; the DAG makes one task per workload, so they are known at parse time;
* ``headline``: the metrics the command line's summary shows;

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
(see :meth:`WorkloadContext.require`). Time what you measure with :meth:`WorkloadContext.window`
(``"measure"`` windows are sampled for what else used the machine) and :meth:`WorkloadContext.timed`.

**Adding a suite** (nothing else needs to change):

1. a module (or package) with a :class:`Suite` subclass;
2. its SQL in ``include/sql/<name>/``;
3. its expectations: ``include/expectations/<name>.reproduction.json`` (and ``.seed.json``,
   optionally ``.sanity.json``, ``.drift.json``);
4. one block under ``suites:`` in ``include/matrix.yaml`` naming its ``module`` (``pkg.mod:Class``),
   ``family`` and ``seed``, and its parameters under every scale profile.

``tests/unit/test_suite_recipe.py`` adds a tiny suite from a temporary folder exactly this way.
"""

from __future__ import annotations

import abc
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

from jsonbench.cell import Cell
from jsonbench.dataset.measurement import Aggregate, Measurement
from jsonbench.engines.base import Session
from jsonbench.hostload import WindowLoad, WindowSampler

S = TypeVar("S", bound=Session)

#: The phase whose windows are sampled for other load on the machine (and that counts as measuring).
MEASURE = "measure"
#: The phase of data loads (counts as work in the overhead report, not sampled).
LOAD = "load"


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

    @property
    def scale(self) -> dict[str, Any]:
        """The suite's parameters at this run's scale (``include/matrix.yaml``, ``scales.<scale>.<suite>``)."""
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
        win = Window(phase)
        sampler = self.sampler() if (phase == MEASURE and self.sampler is not None) else None
        if sampler is not None:
            sampler.start()
        t0 = time.perf_counter()
        try:
            yield win
        finally:
            win.seconds = time.perf_counter() - t0
            self.phases[phase] = self.phases.get(phase, 0.0) + win.seconds
            if sampler is not None:
                win.load = sampler.stop()
                self.windows.append(win.load)

    def timed(self, fn: Callable[[], object], phase: str | None = None) -> float:
        """Milliseconds one call of ``fn`` takes (inside a ``phase`` window when given)."""
        if phase is None:
            t0 = time.perf_counter()
            fn()
            return (time.perf_counter() - t0) * 1000.0
        with self.window(phase) as win:
            fn()
        return win.seconds * 1000.0

    def record(self, metric: str, unit: str, samples: float | list[float], *, variant: str = "default", workload: str | None = None,
               aggregate: Aggregate = "median", extra: dict[str, Any] | None = None) -> None:
        self.measurements.append(Measurement.of(workload or self.workload, variant, metric, unit, samples, aggregate=aggregate, extra=extra))

    def not_applicable(self, metrics: list[tuple[str, str]], reason: str, *, variant: str = "default") -> None:
        """Record ``(metric, unit)`` pairs as not applicable on this build, with the reason."""
        for metric, unit in metrics:
            self.measurements.append(Measurement.not_applicable(self.workload, variant, metric, unit, reason))

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

    def preflight(self, cell: Cell) -> None:  # noqa: B027 - optional hook
        """Raise before any engine starts if this cell cannot run (a missing or too old tool, say)."""

    def load(self, ctx: WorkloadContext[S]) -> None:  # noqa: B027 - optional hook
        """Prepare shared state once per cell (default: nothing)."""

    @abc.abstractmethod
    def run(self, workload: str, ctx: WorkloadContext[S]) -> None:
        """Measure one workload, recording into ``ctx``."""

    @abc.abstractmethod
    def expected_metrics(self, scale: dict[str, Any]) -> list[tuple[str, str]]:
        """``(workload, metric)`` pairs a complete run of this suite contains (ok or not applicable)."""

    def estimate(self, cell: Cell) -> CellCost:
        """What this cell will cost on the host at its scale (a rough upper bound; history refines it)."""
        return CellCost(source="no estimate")
