"""The host's speed beside each cell, read from the canary (:mod:`jsonbench.host.canary`), and what it takes out of a timing.

A cell's timings move with the engine and with the host. The canary is timed before every cell
with no engine running, so the move of the canary next to a cell, against the canary next to the
same cell in earlier runs, is the host's move for that cell alone: a host that slowed during the
night slows one cell and not the one before it, which the engines' median (the engines run one
after another) cannot tell.

Which component a timing is judged against (``canary`` in ``include/expectations/drift.json``):
``cpu_single`` for a statement one server process executes alone (the default: json_vs_jsonb's
reads, the catalogue's loads and index builds, SQLite, seed 004), ``cpu_all`` for work that keeps
every core busy (pgbench's clients and the server's backends, parallel workers), by workload or by
``workload/variant-suffix``. A CPU quota of 1.2 of 2 cores slows two busy threads by 1.67x and
leaves one thread alone untouched: the two components see exactly that difference.

The adjustment is in log space, with the direction of the unit: a duration moves with the canary,
a rate against it, a ratio of two designs measured in one cell not at all (the host cancels), and
a sampled metric (counts, WAL) is not a speed. Each run's value is shifted by its own canary's log
against the mean canary of the series' runs, so every judging window sees the host taken out; a
series where any run lacks the canary is judged as measured and its note says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from jsonbench.dataset.measurement import CANARY_WORKLOAD, HOST_SUITE

#: Units whose value grows when the host slows (durations) or shrinks (rates): the direction of a timing.
RATE_UNITS = {"tps"}
DURATION_UNITS = {"ms", "s", "us", "ns", "ns/row"}

#: The canary component of a timing when the policy names none for its workload.
DEFAULT_COMPONENT = "cpu_single"
#: The components a timing may follow: the record's fit (:func:`jsonbench_dev.record.canary_fits`) takes out the
#: one that explains a workload's moves, and the report reads the host's speed from them. ``wakeup`` (a sleeping
#: process woken, as a pgbench client wakes its backend) is the newest: until a host's history holds it, no
#: fit can choose it, and the policy's CPU component decides as before. ``memory`` and ``fsync`` moved more than the
#: cells did between starts, so no timing follows them.
SPEED_COMPONENTS: tuple[str, ...] = ("cpu_single", "cpu_all", "wakeup")

#: (run_id, engine_id, suite of the cell) -> component -> log of the canary's fastest sample (ms) before that cell.
CanaryTable = dict[tuple[str, str, str], dict[str, float]]


def canary_table(df: pd.DataFrame) -> CanaryTable:
    """The canary measured before each cell of every run in ``df`` (rows of suite ``host``), in log ms."""
    out: CanaryTable = {}
    if df.empty or "suite" not in df:
        return out
    host = df[(df["suite"] == HOST_SUITE) & (df["workload"] == CANARY_WORKLOAD) & (df["status"] == "ok")]
    for r in host.itertuples(index=False):
        variant = str(r.variant)
        if not variant.startswith("before.") or r.unit != "ms":
            continue
        try:
            v = _least_disturbed(getattr(r, "samples", None)) or float(r.value)
        except (TypeError, ValueError):
            continue
        if not math.isfinite(v) or v <= 0:
            continue
        # A canary beside other load or steal is kept: what slowed it is the host the cell met (a 60 % quota run
        # reads steal of 6-7 % in some canary windows; dropping them would leave those cells unjudged).
        # A slower host slows every sample, so the fastest one moves with it; a burst beside a few samples does not.
        out.setdefault((str(r.run_id), str(r.engine_id), variant.split(".", 1)[1]), {})[str(r.metric)] = math.log(v)
    return out


def _least_disturbed(samples: Any) -> float | None:
    """The canary's fastest sample (ms), or None with fewer than 3: its reading of the host's speed.

    Other work beside the canary only adds time, so the fastest sample is the least disturbed one. The median let a
    burst through: under the scheduler, Airflow's own processes (scheduler loop, API server) beside a canary
    read cpu_all samples of 255-453 ms (median 366, +55 % on the run before) with cpu_single steady at
    57 ms, and drift took 0.71 of that +55 % out of SQLite timings the burst never touched.
    """
    try:
        xs = [v for v in (float(x) for x in samples if x is not None) if math.isfinite(v) and v > 0]
    except (TypeError, ValueError):
        return None
    return min(xs) if len(xs) >= 3 else None


def component_for(policy: Mapping[str, Any], suite: str, workload: str, variant: str) -> str:
    """The canary component a timing of ``suite/workload/variant`` is judged against (see the module docstring)."""
    spec = (policy.get("canary") or {}).get("components") or {}
    mine = spec.get(suite) or {}
    for key, comp in mine.items():
        wl, _, suffix = str(key).partition("/")
        if wl == workload and suffix and variant.endswith(suffix):
            return str(comp)
    return str(mine.get(workload) or (policy.get("canary") or {}).get("default") or DEFAULT_COMPONENT)


def direction(unit: str) -> int:
    """+1 when a slower host makes ``unit`` larger (a duration), -1 when smaller (a rate), 0 when the host cancels."""
    return 1 if unit in DURATION_UNITS else (-1 if unit in RATE_UNITS else 0)


@dataclass(frozen=True)
class CanaryMove:
    """The canary's move beside one cell tonight: log change against the series' earlier runs (slower positive)."""

    component: str
    change: float
    #: the share of the canary's move taken out of the timing (the record's fit of its workload; 1 without one)
    share: float = 1.0

    @property
    def factor(self) -> float:
        return math.exp(self.change)
