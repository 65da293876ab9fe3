"""One measured quantity: its samples, how they are summarised, and why it may be absent."""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

Aggregate = Literal["median", "min", "max", "single"]
Status = Literal["ok", "not_applicable"]
#: How a metric is made, declared by the suite beside the metric (never guessed from its name or unit):
#:
#: * ``deterministic``: a fact of the data and the engine (sizes, counts, plan shapes, bools); judged
#:   exactly or within a tight tolerance;
#: * ``sampled``: drawn at random, not a speed (ANALYZE's estimates, HOT counts and WAL volumes of
#:   fixed-duration runs): it varies from run to run, so it is judged statistically;
#: * ``timed``: a duration, a rate, or a ratio of them.
MetricKind = Literal["deterministic", "sampled", "timed"]
METRIC_KINDS: tuple[MetricKind, ...] = ("deterministic", "sampled", "timed")

#: The workload of the per-cell resource rows (duration, peak memory, peak disk) every run publishes.
CELL_RECORD = "_cell"
#: Those rows' metrics: unit and kind. The duration is a time; the peaks are polled every few
#: hundred milliseconds, so they land on whatever the engine held at a poll (sampled, not a fact).
CELL_METRICS: dict[str, tuple[str, MetricKind]] = {
    "duration": ("s", "timed"),
    "peak_rss": ("bytes", "sampled"),
    "disk_peak": ("bytes", "sampled"),
}
#: Of those, the peaks a poller reads between measure windows (never beside one): a poll sees what the engine holds at
#: that moment, so a read is a lower bound of the peak, and a transient (a WAL file before its checkpoint, a sort's
#: spill) that comes and goes inside a window is missed. In the recorded runs of one host, SQLite 3.54.1's laptop cell reads
#: 41.07 MB in 49 of 50 runs, and 36.90 MB once. Drift judges them one-sided (:func:`jsonbench.history.drift`).
POLLED_PEAKS: frozenset[str] = frozenset({"peak_rss", "disk_peak"})
#: The plan sizes a cell at this multiple of its last recorded figures (duration, peaks): what a next run may need beyond
#: what the last one was seen to need. A polled peak that stays within it cannot make the next plan wrong.
PLAN_MARGIN = 1.25
#: And this much more of a polled peak, whatever the cell's size: what a poll can miss in any engine, a PostgreSQL WAL
#: segment (16 MiB; SQLite's WAL before its auto-checkpoint is 4 MiB). A small cell's margin is smaller than one such
#: transient: the documents sample's SQLite cell read 1.01 MB, then 1.37 MB on the same input (in CI).
PLAN_SLACK_BYTES = 16 << 20


def plan_bound(metric: str, value: float) -> float:
    """What the plan allows a cell's ``_cell`` figure to reach, from its last recorded ``value``."""
    return value * PLAN_MARGIN + (PLAN_SLACK_BYTES if metric in POLLED_PEAKS else 0.0)


def is_polled_peak(workload: str, metric: str) -> bool:
    """Whether ``workload/metric`` is a cell's polled peak (:data:`POLLED_PEAKS`): a lower bound, not a sample of a value."""
    return workload == CELL_RECORD and metric in POLLED_PEAKS


#: The canary's rows (:mod:`jsonbench.host.canary`): suite ``host``, workload ``canary``, one metric per
#: component (ms, timed) and ``total`` (s, its own cost). Staged as records of the cell they sat beside,
#: under these names (before the cell's engine started, after the last cell's engine was gone).
HOST_SUITE = "host"
CANARY_WORKLOAD = "canary"
CANARY_RECORDS: dict[str, str] = {"_canary_before": "before", "_canary_after": "after"}

#: The key of a row's ``scale_params`` (JSON) that names the input a suite measured, for suites that read one
#: (the documents suites: the sha256 of the user's documents). Rows of different inputs are never
#: compared: the drift check keeps a history per input (jsonbench.history.drift.same_input). No column of its
#: own: every row already carries its cell's scale parameters, and old files need nothing.
INPUT_FINGERPRINT = "input_sha256"

#: The columns a published row takes from its :class:`Measurement` (what was measured, and its value);
#: the frames the checks and the report build from those rows carry them under the same names.
MEASURED_COLUMNS: tuple[str, ...] = ("workload", "variant", "metric", "unit", "value", "spread")


def finite_float(v: Any) -> float | None:
    """``v`` as a finite float, or None: how the checks and the report read a value from a row or a JSON
    field that may be missing, null, text or NaN."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


@dataclass(frozen=True)
class Measurement:
    """A metric of one workload and variant, with every repetition kept.

    ``value`` summarises ``samples`` by ``aggregate`` (median by default; ``min`` for the "best of
    N" timings some seeds report) and ``spread`` is max - min of the samples, in the same unit.
    A metric the engine build cannot produce is recorded with ``status="not_applicable"``, no
    samples, and a ``reason``: it is present and accounted for, not missing.

    ``kind`` is the suite's declaration of how the metric is made (:data:`MetricKind`);
    :meth:`jsonbench.suites.base.WorkloadContext.record` sets it and refuses a metric the suite did
    not declare. None only outside a suite's run (tests, the hand checks) and in staging files
    written before kinds existed.
    """

    workload: str
    variant: str
    metric: str
    unit: str
    samples: tuple[float, ...] = ()
    aggregate: Aggregate = "median"
    status: Status = "ok"
    reason: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    kind: MetricKind | None = None

    @classmethod
    def of(
        cls,
        workload: str,
        variant: str,
        metric: str,
        unit: str,
        samples: float | list[float] | tuple[float, ...],
        *,
        aggregate: Aggregate = "median",
        extra: dict[str, Any] | None = None,
        kind: MetricKind | None = None,
    ) -> Measurement:
        if isinstance(samples, (int, float)):
            samples = (float(samples),)
            aggregate = "single" if aggregate == "median" else aggregate
        return cls(workload, variant, metric, unit, tuple(float(s) for s in samples), aggregate, extra=dict(extra or {}), kind=kind)

    @classmethod
    def not_applicable(
        cls, workload: str, variant: str, metric: str, unit: str, reason: str, *, kind: MetricKind | None = None
    ) -> Measurement:
        return cls(workload, variant, metric, unit, (), "single", "not_applicable", reason, kind=kind)

    @property
    def value(self) -> float | None:
        if not self.samples:
            return None
        if self.aggregate == "min":
            return min(self.samples)
        if self.aggregate == "max":
            return max(self.samples)
        return float(statistics.median(self.samples))

    @property
    def spread(self) -> float | None:
        if not self.samples:
            return None
        return max(self.samples) - min(self.samples)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["samples"] = [s if math.isfinite(s) else None for s in self.samples]
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Measurement:
        d = dict(d)
        d["samples"] = tuple(float("nan") if s is None else float(s) for s in d.get("samples", ()))
        return cls(**d)


def merge_starts(rounds: list[list[Measurement]]) -> list[Measurement]:
    """One workload's measurements over the engine starts it ran in (the run parameter ``starts``), as one list.

    Each metric keeps its place (the first start's order) and every start's samples, in the starts' order, so its value
    and drift's statistic (the best repetition) rest on all of them; ``extra["start_samples"]`` says how many samples
    each start gave. A deterministic fact is the same in every start, so the first start's is kept, and a start that
    read it otherwise is said in ``extra["starts_differ"]`` (the exact checks then judge the first). A metric a later
    start alone recorded is kept as it is. One start is returned unchanged.
    """
    if len(rounds) <= 1:
        return list(rounds[0]) if rounds else []
    order: list[tuple[str, str, str]] = []
    by: dict[tuple[str, str, str], list[Measurement]] = {}
    for ms in rounds:
        for m in ms:
            key = (m.workload, m.variant, m.metric)
            if key not in by:
                order.append(key)
                by[key] = []
            by[key].append(m)
    out: list[Measurement] = []
    for key in order:
        ms = by[key]
        first = ms[0]
        if len(ms) == 1 or first.status != "ok":
            out.append(first)
            continue
        ok = [m for m in ms if m.status == "ok"]
        if first.kind == "deterministic":
            differ = [m.samples for m in ok[1:] if m.samples != first.samples]
            extra = {**first.extra, "starts": len(ms)} | ({"starts_differ": [list(s) for s in differ]} if differ else {})
            out.append(replace(first, extra=extra))
            continue
        samples = tuple(s for m in ok for s in m.samples)
        aggregate: Aggregate = "median" if first.aggregate == "single" else first.aggregate
        extra = {**first.extra, "starts": len(ok), "start_samples": [len(m.samples) for m in ok]}
        out.append(replace(first, samples=samples, aggregate=aggregate, extra=extra))
    return out
