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
a sampled metric (counts, WAL) is not a speed. The canary change of a judging window is the mean
of its runs' canary logs minus the mean over the reference runs that have one; with no canary
tonight, or none in the reference, the series is judged as before and its note says so.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from jsonbench.dataset.measurement import CANARY_WORKLOAD, HOST_SUITE

#: Units whose value grows when the host slows (durations) or shrinks (rates): the direction of a timing.
RATE_UNITS = {"tps"}
DURATION_UNITS = {"ms", "s", "us", "ns", "ns/row"}

#: The canary component of a timing when the policy names none for its workload.
DEFAULT_COMPONENT = "cpu_single"

#: (run_id, engine_id, suite of the cell) -> component -> log of the canary's median ms before that cell.
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
            v = float(r.value)
        except (TypeError, ValueError):
            continue
        if not math.isfinite(v) or v <= 0:
            continue
        # A canary beside other load or steal is kept: what slowed it is the host the cell met (the 60 % quota run
        # of sitting 31 read steal of 6-7 % in some canary windows, which dropped them and left those cells unjudged).
        out.setdefault((str(r.run_id), str(r.engine_id), variant.split(".", 1)[1]), {})[str(r.metric)] = math.log(v)
    return out


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
    """The canary's move beside one cell for a judging window: log change (slower positive) and how many runs it rests on."""

    component: str
    change: float
    tonight_runs: int
    reference_runs: int

    @property
    def factor(self) -> float:
        return math.exp(self.change)


def window_move(
    table: CanaryTable, component: str, engine_id: str, suite: str, window_runs: Iterable[str], reference_runs: Iterable[str]
) -> CanaryMove | None:
    """The canary's change for one window: mean over ``window_runs`` minus mean over ``reference_runs`` (those that have one).

    None when tonight (the last window run) or every reference run lacks the component.
    """
    win = list(window_runs)
    if not win:
        return None
    now = [table[(r, engine_id, suite)][component] for r in win if component in table.get((r, engine_id, suite), {})]
    if component not in table.get((win[-1], engine_id, suite), {}):
        return None
    ref = [table[(r, engine_id, suite)][component] for r in reference_runs if component in table.get((r, engine_id, suite), {})]
    if not ref:
        return None
    return CanaryMove(component, statistics.fmean(now) - statistics.fmean(ref), len(now), len(ref))


def run_moves(table: CanaryTable, run_id: str, history_runs: Iterable[str]) -> dict[tuple[str, str], dict[str, float]]:
    """Per cell ``(engine_id, suite)`` of ``run_id``: each component's log change against the mean of ``history_runs``' canaries
    before the same cell (the report's and the summary's "host speed per cell")."""
    hist = list(history_runs)
    out: dict[tuple[str, str], dict[str, float]] = {}
    for (rid, engine, suite), comps in table.items():
        if rid != run_id:
            continue
        for comp, now in comps.items():
            ref = [table[(h, engine, suite)][comp] for h in hist if comp in table.get((h, engine, suite), {})]
            if ref:
                out.setdefault((engine, suite), {})[comp] = now - statistics.fmean(ref)
    return out
