"""The suite contract: what a benchmark suite declares and how the driver runs it.

A suite reproduces one seed. It declares

* ``name`` (also its SQL folder ``include/sql/<name>/`` and its expectations file),
* ``family``: the engine family it runs on (every engine of that family, any backend),
* ``workloads``: static names; the DAG makes one task per workload, so they are known at parse time,

and implements

* :meth:`Suite.load`, run once per cell by the setup task right after the engine starts
  (shared data, extensions, helper functions),
* :meth:`Suite.run`, run by the workload's own task, which records :class:`Measurement` objects
  through the :class:`WorkloadContext`,
* :meth:`Suite.expected_metrics`, the ``(workload, metric)`` pairs a complete run must contain
  (the sanity check compares against it).

Suites talk only to the session: they never ask which backend provisioned the engine. A workload
that needs something the build lacks records ``Measurement.not_applicable`` with the reason
(see :meth:`WorkloadContext.require`).
"""

from __future__ import annotations

import abc
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar

from jsonbench.dataset.measurement import Measurement

#: Phases whose time counts as "real work" in the overhead benchmark (everything else is orchestration).
WORK_PHASES = ("load", "measure")


@dataclass
class WorkloadContext:
    """Everything a workload needs, and where it records what it measured."""

    cell: dict[str, Any]
    session: Any
    workload: str
    measurements: list[Measurement] = field(default_factory=list)
    phases: dict[str, float] = field(default_factory=dict)

    @property
    def scale(self) -> dict[str, Any]:
        """The suite's parameters at this run's scale (``include/matrix.yaml``, ``scales.<scale>.<suite>``)."""
        return self.cell["scale_params"]

    @property
    def repetitions(self) -> int:
        return int(self.cell["repetitions"])

    @contextmanager
    def window(self, phase: str) -> Iterator[None]:
        """Time a block as ``phase`` (``load`` or ``measure`` count as work; anything else as overhead)."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.phases[phase] = self.phases.get(phase, 0.0) + time.perf_counter() - t0

    def record(self, metric: str, unit: str, samples: float | list[float], *, variant: str = "default", workload: str | None = None, aggregate: str = "median", extra: dict[str, Any] | None = None) -> None:
        self.measurements.append(Measurement.of(workload or self.workload, variant, metric, unit, samples, aggregate=aggregate, extra=extra))  # type: ignore[arg-type]

    def not_applicable(self, metrics: list[tuple[str, str]], reason: str, *, variant: str = "default") -> None:
        """Record ``(metric, unit)`` pairs as not applicable on this build, with the reason."""
        for metric, unit in metrics:
            self.measurements.append(Measurement.not_applicable(self.workload, variant, metric, unit, reason))

    def require(self, capability: str) -> str | None:
        """None if the engine has ``capability``; else the reason to record it as not applicable."""
        if self.session.capabilities.get(capability, False):
            return None
        return f"engine build lacks {capability}"


class Suite(abc.ABC):
    """Base class of every suite; see the module docstring for the contract."""

    name: ClassVar[str]
    family: ClassVar[str]
    seed: ClassVar[str]
    workloads: ClassVar[tuple[str, ...]]

    def preflight(self, cell: dict[str, Any]) -> None:  # noqa: B027 - optional hook
        """Raise before any engine starts if this cell cannot run (a missing or too old tool, say)."""

    def load(self, ctx: WorkloadContext) -> None:  # noqa: B027 - optional hook
        """Prepare shared state once per cell (default: nothing)."""

    @abc.abstractmethod
    def run(self, workload: str, ctx: WorkloadContext) -> None:
        """Measure one workload, recording into ``ctx``."""

    @abc.abstractmethod
    def expected_metrics(self, scale: dict[str, Any]) -> list[tuple[str, str]]:
        """``(workload, metric)`` pairs a complete run of this suite contains (ok or not applicable)."""
