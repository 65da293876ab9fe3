"""Checks of the checks: plant wrong results into copies of a real published run and count what the real check catches.

``jsonbench-dev checkcheck --results-dir DIR`` never writes into ``DIR``. It picks one
hardware label and scale (the ones with most runs, unless given), takes the latest run that has
the most history as the *target*, and for every plant kind:

1. copies the label's published measurement files (the real history) into a work folder;
2. rewrites the target run's file there with the planted changes (many independent plants at once,
   each on its own finding, metric or engine, so one check run measures them all);
3. runs the real :func:`jsonbench.checks.check_run` on the copy (Data Docs off);
4. counts a plant as **caught** when a validation row that failed names it (its finding and engine,
   its metric, its file) and did not already fail on the honest target (the baseline).

Plant kinds (``PLANT_KINDS``):

* ``reversed_comparison``: every timing comparison finding of every engine gets the opposite
  conclusion (its observed ratio becomes its reciprocal, or a clear winner for an "about the
  same" finding), by scaling the published inputs the finding reads;
* ``tie_comparison``: the same, to exactly the opposite's edge (a tie: "columns as fast as jsonb" is not
  "columns faster"); ``collapsed_comparison``: to just past it (2 % into the opposite);
* ``kept_conclusion_2x``: every timing comparison finding moved 2x toward its opposite (halfway there in log when
  the opposite is nearer), one design twice slower while the conclusion holds: what the band rule no
  longer catches on purpose, so it counts as caught when drift flags the moved input series (or the band, when the
  move left the magnitude class); ``kept_conclusion_2x_3nights``: the same move held over the target and the two runs
  before it (a design change that lasts, as a version's does), which drift's windows of two and three nights can see
  where one night's noise hides it;
* ``slowdown_2x``: one engine version gets twice slower at everything it times (durations x2,
  rates /2), one plant per engine: drift must see it;
* ``deterministic_10pct``: each deterministic metric (counts, sizes, HOT counts, buffers, matched
  rows; the drift policy's ``deterministic`` patterns) of a sample of engines moves by +10 %;
* ``lost_metric``: a sample of published metrics disappear;
* ``lost_hot_count``: every HOT counter (``n_tup_hot_upd``) disappears, one plant per engine;
* ``input_not_applicable``: an input of a finding that has no declared reason to be inapplicable
  is recorded ``not_applicable`` (with a reason), so the finding would silently step aside;
* ``damaged_file``: an earlier run's Parquet file is cut short: the check must fail and name it.

Then **honest reruns**: every published run is checked again on a copy of the history up to it;
any failed row is a false alarm (drift alarms counted apart). If the measurement schema has the
``quiet`` column, a ``busy_hour`` copy of the target (timings x2.5, ``quiet`` false) must raise no
alarm either.
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from jsonbench.cell import RunRef
from jsonbench.checks.findings import (
    HOST_FACTS,
    band_at,
    disturbed_inputs,
    finding_value,
    load_sensitive,
    term_key,
    terms,
    unmet_host_requirement,
)
from jsonbench.checks.library import Library, load_library
from jsonbench.history.hostspeed import DURATION_UNITS, RATE_UNITS
from jsonbench.history.noise import load_record, series_key
from jsonbench_dev import plants as plant_kit

PLANT_KINDS = (
    "reversed_comparison",
    "tie_comparison",
    "collapsed_comparison",
    "slowdown_2x",
    "deterministic_10pct",
    "lost_metric",
    "lost_hot_count",
    "input_not_applicable",
    "damaged_file",
)
#: Plants the band rule leaves to drift by design: planted and reported with the rest, and what drift
#: catches of them is a measurement of drift's power on this history, not part of the command's verdict.
LEFT_TO_DRIFT = ("kept_conclusion_2x", "kept_conclusion_2x_3nights")
#: How many runs, ending with the target, each ``LEFT_TO_DRIFT`` plant is held over.
HELD_OVER = {"kept_conclusion_2x": 1, "kept_conclusion_2x_3nights": 3}
#: The calibration record's field that says which change of a lone series drift catches (with probability
#: ``noise.POWER``) when it has lasted that many nights: a plant held over them is one its noise allows when the
#: change it made to one of its series is at least that series' figure. The claim the version plant makes ("of the
#: series whose noise allows it"), here for what the band rule leaves to drift.
MDS_OF_NIGHTS = {1: "mds", 3: "mds_3"}
TIME_UNITS = {"ms": 1.0, "s": 1.0, "us": 1.0, "ns": 1.0, "ns/row": 1.0, "tps": -1.0}


@dataclass
class Plant:
    """One planted wrong result and what a failed validation row must name to have caught it."""

    kind: str
    label: str
    footprints: list[dict[str, Any]] = field(default_factory=list)
    caught: bool = False
    by: list[str] = field(default_factory=list)
    #: Why the check cannot judge this plant by design (not applicable on the host, inputs measured in a busy
    #: window): such a plant is reported apart, neither caught nor missed.
    not_judged: str = ""
    #: For a plant left to drift: each input series it moved (the record's series key) and the factor it moved it by, so
    #: that the report can say whether that series' own noise allows the move to be seen (:data:`MDS_OF_NIGHTS`).
    moves: list[tuple[str, float]] = field(default_factory=list)
    #: For a plant left to drift: why drift had nothing to judge its move against (no quiet run of any series it moved
    #: before the plant began), so that it is outside the claim whatever its noise. Empty when drift had a reference.
    unseen: str = ""

    @classmethod
    def of_finding(cls, kind: str, suite: str, finding: dict[str, Any], engine_id: str, what: str) -> Plant:
        """A plant in the inputs of ``finding`` on ``engine_id``: caught by that finding's reproduction row."""
        return cls(
            kind,
            f"{suite}/{finding['id']} on {engine_id}: {what}",
            [{"check_kind": "reproduction", "expectation": finding["id"], "engine_id": engine_id}],
        )


@contextmanager
def _env(**values: str) -> Iterator[None]:
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _runs(df: pd.DataFrame) -> list[tuple[str, Any]]:
    first = df.groupby("run_id")["logical_date"].first().sort_values()
    return list(first.items())


def _run_ref(df: pd.DataFrame, run_id: str, results_dir: Path) -> RunRef:
    """An old run as the check takes it, rebuilt from its published rows (a copy has no plan to read it from)."""
    r = df[df["run_id"] == run_id].iloc[0]
    return RunRef(
        run_id=run_id,
        logical_date=pd.Timestamp(r["logical_date"]).isoformat(),
        hardware_label=str(r["hardware_label"]),
        results_dir=str(results_dir),
        scale=str(r["scale"]),
    )


def _file_of(results_dir: Path, run_id: str) -> Path:
    from jsonbench.dataset.schema import run_key

    found = sorted((results_dir / "measurements").glob(f"hardware_label=*/run_date=*/run_key={run_key(run_id)}/part-0.parquet"))
    if not found:
        raise FileNotFoundError(f"no published file for run {run_id} under {results_dir}")
    return found[0]


def _copy_history(src: Path, dst: Path, label: str, run_ids: list[str]) -> None:
    """Copy the measurement files of ``run_ids`` (one hardware label) from ``src`` to ``dst``."""
    from jsonbench.dataset.schema import run_key

    keys = {run_key(r) for r in run_ids}
    for f in (src / "measurements" / f"hardware_label={label}").glob("run_date=*/run_key=*/part-0.parquet"):
        if f.parent.name.split("=", 1)[1] in keys:
            target = dst / f.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, target)


def _read_file(path: Path) -> pd.DataFrame:
    import pyarrow.parquet as pq

    return pq.read_table(path).to_pandas()


def _write_file(path: Path, df: pd.DataFrame) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from jsonbench.dataset.schema import MEASUREMENT_SCHEMA

    cols = [f.name for f in MEASUREMENT_SCHEMA]
    for c in cols:
        if c not in df.columns:
            df[c] = None
    rows = df[cols].to_dict("records")
    for r in rows:
        s = r.get("samples")
        r["samples"] = None if s is None or (isinstance(s, float) and math.isnan(s)) else [float(x) for x in s]
        for k, v in list(r.items()):
            if isinstance(v, float) and math.isnan(v) and k not in ("value", "spread"):
                r[k] = None
    pq.write_table(pa.Table.from_pylist(rows, schema=MEASUREMENT_SCHEMA), path, compression="zstd")


def _key_mask(df: pd.DataFrame, engine_id: str, suite: str, workload: str, variant: str, metric: str) -> pd.Series:
    return (
        (df["engine_id"] == engine_id)
        & (df["suite"] == suite)
        & (df["workload"] == workload)
        & (df["variant"] == variant)
        & (df["metric"] == metric)
    )


def _values(df: pd.DataFrame) -> dict[tuple[str, ...], tuple[Any, str]]:
    from jsonbench.checks.findings import _values_of

    return _values_of(df)


def _target_value(f: dict[str, Any], observed: float) -> float:
    """Where a reversed (or clear-winner) result of ``f`` lands: always inside its opposite region."""
    opp = f.get("opposite") or {}
    below, above = opp.get("below"), opp.get("above")
    if below is not None and above is not None:
        return above * 1.5 if observed <= math.sqrt(below * above) else below / 1.5
    if below is not None:
        rev = 1.0 / observed if observed > 0 else below / 2
        return rev if rev < below else below / 1.5
    if above is not None:
        rev = 1.0 / observed if observed > 0 else above * 2
        return rev if rev > above else above * 1.5
    return 1.0 / observed if observed else 1.0


def _edge_value(f: dict[str, Any], observed: float, past: float) -> float:
    """The opposite's edge nearest ``observed`` (``past`` = 1.0: a tie), or ``past`` beyond it (1.02: 2 % into the opposite)."""
    opp = f.get("opposite") or {}
    below, above = opp.get("below"), opp.get("above")
    if below is not None and (above is None or observed <= math.sqrt(below * above)):
        return float(below) / past
    assert above is not None  # a timing finding names its opposite: below, above or both
    return float(above) * past


#: How far ``kept_conclusion_2x`` moves a finding toward its opposite: a design twice slower than tonight.
KEPT_FACTOR = 2.0


def _halfway_value(f: dict[str, Any], observed: float) -> float:
    """``observed`` moved ``KEPT_FACTOR`` toward the opposite's nearest edge, or halfway there (in log) when that is nearer:
    a design slower by that much while the conclusion holds. What the band rule leaves to drift."""
    edge = _edge_value(f, observed, 1.0)
    toward = KEPT_FACTOR if edge > observed else 1.0 / KEPT_FACTOR
    moved = observed * toward
    return moved if (edge - moved) * (edge - observed) > 0 else math.sqrt(observed * edge)


#: Where each comparison plant puts a finding: reversed (well inside the opposite), tied (on its edge), collapsed (just
#: past it), or 2x toward the opposite while the conclusion holds (``kept_conclusion_2x``: drift's, not the band's).
_COMPARISON_TARGETS: dict[str, Any] = {
    "reversed_comparison": _target_value,
    "tie_comparison": lambda f, observed: _edge_value(f, observed, 1.0 + 1e-9),  # the edge, to the scaled inputs' rounding
    "collapsed_comparison": lambda f, observed: _edge_value(f, observed, 1.02),
    "kept_conclusion_2x": _halfway_value,
    "kept_conclusion_2x_3nights": _halfway_value,
}


def _host_facts(rows: pd.DataFrame) -> dict[str, Any]:
    """The host facts a finding's requirements read (``HOST_FACTS``), from the first of ``rows``."""
    return {k: rows[k].iloc[0] for k in HOST_FACTS if k in rows and not rows.empty}


def plant_reversed(
    df: pd.DataFrame,
    lib: Library,
    scale: str,
    rng: random.Random,
    kind: str = "reversed_comparison",
    done: set[tuple[str, str, str]] | None = None,
    scaled: list[tuple[tuple[Any, ...], float]] | None = None,
) -> list[Plant]:
    """Push every applied timing finding of every engine into its opposite region by scaling an input it reads.

    Two findings that read the same input cannot both be planted in one copy: the second's scaling moves the first
    off its target (a tie of "position matters for JSONB" at 1.0, then "matters more than for text" at 1.0, leaves the
    first at the text ratio, 1.17, and the first plant is not a tie any more). So a finding whose input an earlier plant
    of this copy moved is left for the next copy: each call plants what it can and adds it to ``done`` (suite,
    finding, engine); the caller calls again on a fresh copy until nothing is left. Each input it scales is appended to
    ``scaled`` as ``((engine, suite, workload, variant, metric), factor)``, for a plant held over earlier runs too.

    A finding the check cannot judge on the target by design is not planted, and is reported apart
    (``not_judged``): one whose host lacks what its mechanism needs (an unmet host requirement, such as
    parallel workers on 2 cores: not applicable whatever its inputs say), and one whose inputs were measured
    in a busy window (verdict ``disturbed``, counted in the run's judged share).
    """
    plants = []
    done = done if done is not None else set()
    moved: set[tuple[Any, ...]] = set()  # the inputs this copy's plants scaled
    for suite, definition in lib.reproduction.items():
        if df[df["suite"] == suite].empty:
            continue
        for f in definition.get("findings", []):
            if f.get("kind", "timing") != "timing" or not f.get("opposite") or band_at(f, scale).not_applicable:
                continue
            engines = sorted(df[df["suite"] == suite]["engine_id"].unique())
            cross = f.get("scope") == "cross_engine"
            for engine_id in [None] if cross else engines:
                me = (str(suite), str(f["id"]), str(engine_id))
                reads = {
                    (t.get("engine", engine_id), suite, *term_key(t)) for t in (f.get("numerator") or []) + (f.get("denominator") or [])
                }
                if me in done or reads & moved:
                    continue  # planted in an earlier copy, or an input of it already moved in this one: the next copy
                sdf = df[df["suite"] == suite]  # re-read: an earlier plant may have moved a shared input
                if cross:
                    vals: Any = {e: _values(sdf[sdf["engine_id"] == e]) for e in engines}
                    row_engine = f"{(f.get('numerator') or [{}])[0].get('engine')}/{(f.get('denominator') or [{}])[0].get('engine')}"
                else:
                    vals = _values(sdf[sdf["engine_id"] == engine_id])
                    row_engine = str(engine_id)
                observed, _problem, _ = finding_value(vals, f)
                if observed is None or observed <= 0:
                    continue
                unmet = None if cross else unmet_host_requirement(f, _host_facts(sdf[sdf["engine_id"] == engine_id]))
                busy = disturbed_inputs(vals, f) if load_sensitive(f) else []
                if unmet or busy:
                    # Not a comparison this run makes: not applicable on this host, or measured in a busy
                    # window (its verdict is "disturbed", counted in the run's judged share). Its inputs remain drift's,
                    # as single series; the power table says how often a lone series is caught.
                    why = str(unmet) if unmet else "measured in a busy window: " + "; ".join(busy)
                    plant = Plant.of_finding(kind, suite, f, row_engine, f"{observed:.3g} (not planted)")
                    plant.not_judged = why
                    plants.append(plant)
                    done.add(me)
                    continue
                target = _COMPARISON_TARGETS[kind](f, observed)
                k = target / observed
                num = f.get("numerator") or []
                plant = Plant.of_finding(kind, suite, f, row_engine, f"{observed:.3g} -> {target:.3g}")
                # A geometric mean moves by k when every numerator term does; a plain quotient when its first term does.
                for t in num if f.get("geomean") else num[:1]:
                    where = (t.get("engine", engine_id), suite, *term_key(t))
                    plant_kit.scale_rows(df, _key_mask(df, *where), k)
                    moved.add(where)
                    if scaled is not None:
                        scaled.append((where, k))
                    if kind in LEFT_TO_DRIFT:
                        # The band keeps this (the conclusion holds): drift must see the input series that moved (or
                        # the band itself, when the move took the figure out of its magnitude class).
                        w, v, m = term_key(t)
                        plant.footprints.append({"check_kind": "drift", "engine_id": where[0], "workload": w, "variant": v, "metric": m})
                        plant.moves.append((series_key(str(suite), str(where[0]), w, v, m), k))
                plants.append(plant)
                done.add(me)
    return plants


def plant_slowdown(df: pd.DataFrame, engine_id: str) -> list[Plant]:
    mask_e = plant_kit.engine_rows(df, engine_id)  # not the canary beside its cells
    for unit, sign in TIME_UNITS.items():
        plant_kit.scale_rows(df, mask_e & (df["unit"] == unit) & (df["status"] == "ok"), 2.0 if sign > 0 else 0.5)
    return [
        Plant(
            "slowdown_2x",
            f"every timing of {engine_id} twice slower",
            [
                {"check_kind": "drift", "engine_id": engine_id},
                {"check_kind": "reproduction", "engine_id": engine_id},
                {"check_kind": "reproduction", "engine_id_contains": engine_id},
            ],
        )
    ]


def _deterministic_rows(df: pd.DataFrame, lib: Library) -> pd.DataFrame:
    from jsonbench.history.rules import rule_for

    keep = []
    for i, r in df.iterrows():
        if r["status"] != "ok" or r["value"] is None or (isinstance(r["value"], float) and (math.isnan(r["value"]) or r["value"] == 0)):
            continue
        rule = rule_for(lib.drift_policy(r["suite"]), r["suite"], r["workload"], r["variant"], r["metric"], r["unit"])
        if rule.kind == "deterministic":
            keep.append(i)
    return df.loc[keep]


def plant_deterministic(df: pd.DataFrame, lib: Library, rng: random.Random, limit: int) -> list[Plant]:
    rows = _deterministic_rows(df, lib)
    chosen = rows.sample(n=min(limit, len(rows)), random_state=rng.randrange(1 << 30)) if len(rows) else rows
    plants = []
    for i, r in chosen.iterrows():
        plant_kit.scale_rows(df, df.index == i, 1.1)
        plants.append(
            Plant(
                "deterministic_10pct",
                f"{r['suite']}/{r['engine_id']}: {r['workload']}/{r['variant']}/{r['metric']} +10 %",
                [
                    {
                        "check_kind": "drift",
                        "engine_id": r["engine_id"],
                        "workload": r["workload"],
                        "variant": r["variant"],
                        "metric": r["metric"],
                    },
                    {"check_kind": "reproduction", "engine_id": r["engine_id"], "input": f"{r['workload']}/{r['variant']}/{r['metric']}"},
                ],
            )
        )
    return plants


def plant_lost(df: pd.DataFrame, rng: random.Random, limit: int, metric: str | None = None) -> tuple[pd.DataFrame, list[Plant]]:
    ok = df[df["status"] == "ok"]
    if metric:
        groups = [g for _, g in ok[ok["metric"] == metric].groupby("engine_id")]
        kind = "lost_hot_count"
    else:
        groups = [ok.loc[[i]] for i in ok.sample(n=min(limit, len(ok)), random_state=rng.randrange(1 << 30)).index]
        kind = "lost_metric"
    plants, drop = [], []
    for g in groups:
        drop += list(g.index)
        first = g.iloc[0]
        what = f"{first['suite']}/{first['engine_id']}: " + (
            f"every {metric} ({len(g)} rows)" if metric else f"{first['workload']}/{first['variant']}/{first['metric']}"
        )
        fps = [
            {"check_kind": "sanity", "unexpected": {"engine_id": first["engine_id"], "workload": r["workload"], "metric": r["metric"]}}
            for _, r in g.iterrows()
        ]
        fps += [
            {
                "check_kind": "drift",
                "engine_id": first["engine_id"],
                "workload": r["workload"],
                "variant": r["variant"],
                "metric": r["metric"],
            }
            for _, r in g.iterrows()
        ]
        plants.append(Plant(kind, what, fps))
    return df.drop(index=drop), plants


def plant_not_applicable(df: pd.DataFrame, lib: Library, scale: str, rng: random.Random, limit: int) -> list[Plant]:
    candidates = []
    for suite, definition in lib.reproduction.items():
        for f in definition.get("findings", []):
            if f.get("requires") or band_at(f, scale).not_applicable or f.get("scope") == "cross_engine":
                continue
            for e in sorted(df[df["suite"] == suite]["engine_id"].unique()):
                t = terms(f)[0]
                m = _key_mask(df, e, suite, *term_key(t)) & (df["status"] == "ok")
                if m.any():
                    candidates.append((suite, f, e, t))
    rng.shuffle(candidates)
    plants: list[Plant] = []
    used: set[tuple[str, str]] = set()
    for suite, f, e, t in candidates:
        if len(plants) >= limit or (f["id"], e) in used:
            continue
        used.add((f["id"], e))
        m = _key_mask(df, e, suite, *term_key(t))
        df.loc[m, "status"] = "not_applicable"
        df.loc[m, "reason"] = "planted: recorded as not applicable on a build that has everything it needs"
        df.loc[m, "value"] = float("nan")
        plants.append(Plant.of_finding("input_not_applicable", suite, f, e, f"{'/'.join(term_key(t))} not applicable"))
    return plants


def _matches(row: pd.Series, fp: dict[str, Any], details: dict[str, Any]) -> bool:
    if row["check_kind"] != fp.get("check_kind", row["check_kind"]):
        return False
    if "unexpected" in fp:
        want = fp["unexpected"]
        return any(all(u.get(k) == v for k, v in want.items()) for u in details.get("unexpected") or [])
    if "file" in fp:
        return fp["file"] in str(details.get("file", ""))
    if "engine_id_contains" in fp:
        return fp["engine_id_contains"] in str(row.get("engine_id") or "").split("/")
    for k in ("expectation", "engine_id", "workload", "variant", "metric"):
        if k in fp and row.get(k) != fp[k]:
            return False
    if "input" in fp:
        return any(fp["input"] in key for key in (details.get("inputs") or {}))
    return True


def _check_copy(work: Path, run: RunRef) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Run the real check on the copy; return its validation rows and a summary (never raises ChecksFailed).

    The copy has no plan, so the check reads the cells from the published rows.
    """
    from jsonbench.checks import ChecksFailed, check_run
    from jsonbench.dataset.read import VALIDATIONS, read_dataset

    run = replace(run, results_dir=str(work))
    outcome: dict[str, Any] = {"raised": None}
    with _env(JSONBENCH_DATA_DOCS="0"):
        try:
            outcome["summary"] = check_run(run)
        except ChecksFailed as exc:
            outcome["summary"] = exc.summary
            outcome["raised"] = "ChecksFailed"
        except Exception as exc:  # a check that cannot finish fails the task: that is caught too
            outcome["raised"] = f"{type(exc).__name__}: {exc}"
    v = read_dataset(work, VALIDATIONS, run_id=run.run_id).to_pandas()
    return v, outcome


def _failed_keys(v: pd.DataFrame) -> set[tuple[str, str, str]]:
    f = v[~v["success"].astype(bool)] if not v.empty else v
    return {(str(r.check_kind), str(r.engine_id), str(r.expectation)) for r in f.itertuples()}


def _judge(plants: list[Plant], v: pd.DataFrame, baseline: set[tuple[str, str, str]], outcome: dict[str, Any]) -> None:
    failed = v[~v["success"].astype(bool)] if not v.empty else v
    for p in plants:
        for _, row in failed.iterrows():
            if (str(row["check_kind"]), str(row["engine_id"]), str(row["expectation"])) in baseline and row["check_kind"] != "sanity":
                continue
            details = json.loads(row["details"]) if isinstance(row["details"], str) else {}
            if any(_matches(row, fp, details) for fp in p.footprints):
                p.caught = True
                p.by.append(f"{row['check_kind']}:{row['expectation']}@{row['engine_id']}")
                if len(p.by) >= 3:
                    break
        if (
            not p.caught
            and outcome.get("raised") not in (None, "ChecksFailed")
            and any(fp.get("check_kind") == "task" for fp in p.footprints)
        ):
            p.caught, p.by = True, [outcome["raised"][:200]]


@dataclass(frozen=True)
class _Target:
    """The run plants go into and the real history behind it: what every copy is made of and checked as."""

    src: Path  # the real results folder (read only)
    own: Path  # where the copies go
    data: pd.DataFrame  # measurement rows of the hardware label and scale
    label: str
    history_ids: list[str]  # runs up to and including the target, oldest first

    @property
    def run_id(self) -> str:
        return self.history_ids[-1]

    def copy(self, name: str) -> Path:
        """A copy of the history (measurement files up to the target) in ``own/name``."""
        work = self.own / name
        _copy_history(self.src, work, self.label, self.history_ids)
        return work

    def judge(self, work: Path, plants: list[Plant], baseline: set[tuple[str, str, str]]) -> None:
        """Run the real check on the copy and mark each plant caught or not."""
        v, out = _check_copy(work, _run_ref(self.data, self.run_id, work))
        _judge(plants, v, baseline, out)


def _select_runs(src: Path, hardware_label: str | None, scale: str | None) -> tuple[pd.DataFrame, str, str, list[tuple[str, Any]]]:
    """The rows of one hardware label and scale (those with most runs unless given), the label, the scale, and their runs."""
    from jsonbench.dataset.read import MEASUREMENTS, read_dataset_report

    data = read_dataset_report(src, MEASUREMENTS).table.to_pandas()
    if data.empty:
        raise SystemExit(f"no published runs under {src}")
    label = hardware_label or data.groupby("hardware_label")["run_id"].nunique().idxmax()
    data = data[data["hardware_label"] == label]
    scale = scale or data.groupby("scale")["run_id"].nunique().idxmax()
    data = data[data["scale"] == scale]
    runs = _runs(data)
    if not runs:
        raise SystemExit(f"no runs of hardware {label!r} at scale {scale!r} under {src}")
    return data, label, scale, runs


def _plant(
    kind: str, df: pd.DataFrame, work: Path, t: _Target, lib: Library, scale: str, rng: random.Random, sample: int
) -> tuple[pd.DataFrame, list[Plant]]:
    """Plant ``kind`` into ``df`` (a copy of the target's rows); ``damaged_file`` cuts an earlier run's file in ``work`` instead."""
    if kind in _COMPARISON_TARGETS:
        return df, plant_reversed(df, lib, scale, rng, kind)
    if kind == "deterministic_10pct":
        return df, plant_deterministic(df, lib, rng, sample)
    if kind == "lost_metric":
        return plant_lost(df, rng, sample)
    if kind == "lost_hot_count":
        return plant_lost(df, rng, sample, metric="n_tup_hot_upd")
    if kind == "input_not_applicable":
        return df, plant_not_applicable(df, lib, scale, rng, sample)
    if kind == "damaged_file":
        victim = t.history_ids[-2] if len(t.history_ids) > 1 else t.run_id
        vpath = _file_of(work, victim)
        vpath.write_bytes(vpath.read_bytes()[: max(16, vpath.stat().st_size // 3)])
        rel = str(vpath.relative_to(work))
        return df, [Plant("damaged_file", f"{rel} cut to a third", [{"check_kind": "sanity", "file": rel}, {"check_kind": "task"}])]
    raise SystemExit(f"unknown plant kind {kind!r}; known: {', '.join((*PLANT_KINDS, *LEFT_TO_DRIFT))}")


def _comparison_rounds(
    kind: str,
    t: _Target,
    target_df: pd.DataFrame,
    work: Path,
    lib: Library,
    scale: str,
    rng: random.Random,
    baseline: set[tuple[str, str, str]],
) -> list[Plant]:
    """Every comparison finding planted and judged, in as many copies as shared inputs need (see :func:`plant_reversed`).

    A plant held over several runs (``HELD_OVER``) is judged on each of them, each night against the history up to it
    (planted where the plant had begun), as the nights would have been checked: caught when any of them flags it. A
    lasting change is alarmed the night drift can see it; after that, the change point is history, and a later night
    rightly judges against the new level."""
    done: set[tuple[str, str, str]] = set()
    plants: list[Plant] = []
    held = t.history_ids[-HELD_OVER.get(kind, 1) : -1]  # the runs before the target the plant is held over
    baselines: dict[str, set[tuple[str, str, str]]] = {}  # each earlier night's own honest failures
    for e in held:
        night = replace(t, history_ids=t.history_ids[: t.history_ids.index(e) + 1])
        honest = night.copy(f"{kind}-honest-{len(night.history_ids)}")
        baselines[e] = _failed_keys(_check_copy(honest, _run_ref(t.data, e, honest))[0])
        shutil.rmtree(honest, ignore_errors=True)
    for round_ in range(10):
        copy = work if round_ == 0 else t.copy(f"{kind}-{round_}")
        df = target_df.copy()
        scaled: list[tuple[tuple[Any, ...], float]] = []
        these = plant_reversed(df, lib, scale, rng, kind, done, scaled)
        if not these:
            shutil.rmtree(copy, ignore_errors=True)
            break
        if kind in LEFT_TO_DRIFT:
            before = t.history_ids[: t.history_ids.index(held[0] if held else t.run_id)]
            for p in these:
                if p.moves and not p.not_judged and not any(quiet_runs(t.data, before, key) for key, _ in p.moves):
                    p.unseen = f"no quiet run of its series before the plant began ({len(before)} earlier run(s)): drift had no reference"
        _write_file(_file_of(copy, t.run_id), df)
        planted: dict[str, pd.DataFrame] = {}
        for earlier in held:
            edf = _read_file(_file_of(copy, earlier))
            for where, k in scaled:
                plant_kit.scale_rows(edf, _key_mask(edf, *where), k)
            _write_file(_file_of(copy, earlier), edf)
            planted[earlier] = edf
        for e in held:  # each earlier night of the plant, judged on the history up to it
            night = replace(t, history_ids=t.history_ids[: t.history_ids.index(e) + 1])
            w = night.copy(f"{kind}-{round_}-{len(night.history_ids)}")
            for r in night.history_ids[-len(held) :]:
                if r in planted:
                    _write_file(_file_of(w, r), planted[r])
            night.judge(w, these, baselines[e])
            shutil.rmtree(w, ignore_errors=True)
        t.judge(copy, these, baseline)
        shutil.rmtree(copy, ignore_errors=True)
        plants += these
    return plants


def _slowdown_each_engine(t: _Target, target_df: pd.DataFrame, baseline: set[tuple[str, str, str]]) -> list[Plant]:
    """``slowdown_2x``, one engine per copy: each must be caught on its own."""
    plants: list[Plant] = []
    for engine_id in sorted(target_df["engine_id"].unique()):
        w = t.copy(f"slowdown_2x-{engine_id}")
        d = target_df.copy()
        ps = plant_slowdown(d, engine_id)
        _write_file(_file_of(w, t.run_id), d)
        t.judge(w, ps, baseline)
        plants += ps
        shutil.rmtree(w, ignore_errors=True)
    return plants


def checkcheck(
    results_dir: str | Path,
    *,
    hardware_label: str | None = None,
    scale: str | None = None,
    work_dir: str | Path | None = None,
    kinds: list[str] | None = None,
    honest: int | None = None,
    seed: int = 7,
    sample: int = 12,
    target: str | None = None,
    measure_power: bool = True,
    series_rounds: int = 2,
) -> dict[str, Any]:
    """Plant every kind into copies of the target run, check them, recheck honest runs; return the report.

    With ``measure_power`` the report also holds ``power`` (:func:`power`): slowdowns of every size in
    ``POWER_FACTORS`` planted per engine, per suite and per series, judged by the real drift check with
    the label's calibration record.
    """
    unknown = [k for k in kinds or [] if k not in (*PLANT_KINDS, *LEFT_TO_DRIFT)]
    if unknown:
        raise SystemExit(f"--kinds: unknown plant kind(s) {', '.join(unknown)}; known: {', '.join((*PLANT_KINDS, *LEFT_TO_DRIFT))}")
    src = Path(results_dir)
    data, label, scale, runs = _select_runs(src, hardware_label, scale)
    lib = load_library()
    rng = random.Random(seed)
    all_ids = [r for r, _ in runs]
    if target and target not in all_ids:
        raise SystemExit(f"run {target!r} is not a run of hardware {label!r} at scale {scale!r} under {src}")
    target_id = target or all_ids[-1]
    history_ids = all_ids[: all_ids.index(target_id) + 1]
    own = Path(work_dir) if work_dir else Path(tempfile.mkdtemp(prefix="jsonbench-checkcheck-"))
    t = _Target(src, own, data, label, history_ids)
    report: dict[str, Any] = {
        "results_dir": str(src),
        "hardware_label": label,
        "scale": scale,
        "target": target_id,
        "history": history_ids[:-1],
        "kinds": {},
        "honest": [],
    }
    try:
        base = t.copy("baseline")
        v0, out0 = _check_copy(base, _run_ref(data, target_id, base))
        baseline = _failed_keys(v0)
        report["baseline_failures"] = sorted("/".join(k) for k in baseline)
        target_df = _read_file(_file_of(src, target_id))
        record = load_record(label, scale, src)
        for kind in kinds or [*PLANT_KINDS, *LEFT_TO_DRIFT]:
            work = t.copy(kind)
            if kind == "slowdown_2x":
                plants = _slowdown_each_engine(t, target_df, baseline)
            elif kind in _COMPARISON_TARGETS:
                plants = _comparison_rounds(kind, t, target_df, work, lib, scale, rng, baseline)
            else:
                df, plants = _plant(kind, target_df.copy(), work, t, lib, scale, rng, sample)
                if kind != "damaged_file":
                    _write_file(_file_of(work, target_id), df)
                t.judge(work, plants, baseline)
                shutil.rmtree(work, ignore_errors=True)
            _record(report, kind, plants, record)
        report["honest"] = _honest(src, data, label, runs, own, honest)  # every run, also those after a chosen target
        busy = _busy_hour(src, data, label, history_ids, target_df, own, baseline)
        if busy:
            report["busy_hour"] = busy
        if measure_power:
            report["power"] = power(data[data["run_id"].isin(history_ids)], lib, record, src, series_rounds=series_rounds, seed=seed)
            report["power"]["record"] = None if record is None else {"scale": record.get("scale"), "created_at": record.get("created_at")}
    finally:
        if not work_dir:
            shutil.rmtree(own, ignore_errors=True)
    _conclude(report)
    return report


def _conclude(report: dict[str, Any]) -> None:
    """The report's verdict: ok when every plant was caught and nothing honest raised an alarm (reruns, the busy hour)."""
    kinds_ok = all(k["caught"] == k["planted"] for kind, k in report["kinds"].items() if kind not in LEFT_TO_DRIFT)
    false_alarms = sum(h["failed"] for h in report["honest"]) + (report.get("busy_hour", {}).get("failed", 0))
    report["false_alarms"] = false_alarms
    power_ok = True
    levels = (report.get("power") or {}).get("levels") or {}
    for size in ("1.5", "2"):  # every 2x and 1.5x per-version slowdown must be caught
        e = (levels.get("engine") or {}).get(size)
        if e and e["planted"] and e["caught_within"] < e["planted"]:
            power_ok = False
    report["power_ok"] = power_ok
    report["ok"] = kinds_ok and false_alarms == 0 and power_ok


def _record(report: dict[str, Any], kind: str, plants: list[Plant], record: dict[str, Any] | None = None) -> None:
    judged = [p for p in plants if not p.not_judged]
    report["kinds"][kind] = {
        "planted": len(judged),
        "caught": sum(p.caught for p in judged),
        "share": (sum(p.caught for p in judged) / len(judged)) if judged else None,
        "missed": [p.label for p in judged if not p.caught],
        "examples": [f"{p.label} <- {', '.join(p.by[:2])}" for p in judged if p.caught][:3],
        "not_judged": [f"{p.label}: {p.not_judged}" for p in plants if p.not_judged],
    }
    if kind in LEFT_TO_DRIFT and record is not None:
        nights = HELD_OVER.get(kind, 1)
        allowed = [p for p in judged if not p.unseen and noise_allows(p, record, nights)]
        report["kinds"][kind].update(
            {
                "allowed": len(allowed),
                "caught_allowed": sum(p.caught for p in allowed),
                "missed_allowed": [p.label for p in allowed if not p.caught],
                "mds_field": MDS_OF_NIGHTS[nights],
                "no_reference": [f"{p.label}: {p.unseen}" for p in judged if p.unseen],
            }
        )


def quiet_runs(data: pd.DataFrame, run_ids: list[str], key: str) -> int:
    """How many of ``run_ids`` measured the series ``key`` (the record's key) in a quiet window: what drift can judge a
    move of it against. A plant that starts where every earlier run of its series was disturbed is its own reference
    (drift leaves a busy window out of every later history), so it is outside what drift claims to see."""
    from jsonbench.history.drift import reference_rows

    suite, engine_id, workload, variant, metric = key.split("/", 4)
    cells = data[data["run_id"].isin(run_ids) & (data["suite"] == suite) & (data["engine_id"] == engine_id)]
    rows = reference_rows(cells)  # drift's own reading of a busy window, the cell's verdict for a row without a flag
    rows = rows[_key_mask(rows, engine_id, suite, workload, variant, metric) & (rows["status"] == "ok")]
    return int(rows["run_id"].nunique())


def noise_allows(plant: Plant, record: dict[str, Any], nights: int) -> bool:
    """Whether one series ``plant`` moved has a record whose minimum detectable shift over ``nights`` is at most the move.

    A plant whose every series moves less than its own noise lets drift see within those nights is outside what drift
    claims to catch (:data:`MDS_OF_NIGHTS`); a series the record does not hold has no claim either."""
    series = record.get("series") or {}
    for key, k in plant.moves:
        mds = (series.get(key) or {}).get(MDS_OF_NIGHTS[nights])
        if mds is not None and math.exp(abs(math.log(k))) - 1.0 >= float(mds):
            return True
    return False


def _honest(src: Path, data: pd.DataFrame, label: str, runs: list[tuple[str, Any]], own: Path, limit: int | None) -> list[dict[str, Any]]:
    ids = [r for r, _ in runs]
    chosen = ids if limit is None else ids[-limit:]
    out = []
    for run_id in chosen:
        upto = ids[: ids.index(run_id) + 1]
        work = own / f"honest-{len(upto)}"
        _copy_history(src, work, label, upto)
        v, o = _check_copy(work, _run_ref(data, run_id, work))
        failed = v[~v["success"].astype(bool)] if not v.empty else v
        out.append(
            {
                "run_id": run_id,
                "history": len(upto) - 1,
                "checked": len(v),
                "failed": int(len(failed)),
                "drift_alarms": int((failed["check_kind"] == "drift").sum()) if len(failed) else 0,
                "failures": [f"{r.check_kind}:{r.expectation}@{r.engine_id} observed {r.observed}" for r in failed.head(8).itertuples()],
                "error": o["raised"] if o["raised"] not in (None, "ChecksFailed") else None,
            }
        )
        shutil.rmtree(work, ignore_errors=True)
    return out


def _busy_hour(
    src: Path,
    data: pd.DataFrame,
    label: str,
    history_ids: list[str],
    target_df: pd.DataFrame,
    own: Path,
    baseline: set[tuple[str, str, str]],
) -> dict[str, Any] | None:
    """A copy of the target measured in a busy hour (timings x2.5, quiet false): no alarm may fire."""
    from jsonbench.dataset.schema import MEASUREMENT_SCHEMA

    if "quiet" not in MEASUREMENT_SCHEMA.names:
        return {"skipped": "the measurement schema has no quiet column yet (contract 3); a busy hour cannot be told from a regression"}
    work = own / "busy_hour"
    _copy_history(src, work, label, history_ids)
    df = target_df.copy()
    for unit, sign in TIME_UNITS.items():
        plant_kit.scale_rows(df, (df["unit"] == unit) & (df["status"] == "ok"), 2.5 if sign > 0 else 0.4)
    df["quiet"] = False
    if "host_other_cpu" in MEASUREMENT_SCHEMA.names:
        df["host_other_cpu"] = 0.7
    _write_file(_file_of(work, history_ids[-1]), df)
    v, _ = _check_copy(work, _run_ref(data, history_ids[-1], work))
    new = _failed_keys(v) - baseline
    shutil.rmtree(work, ignore_errors=True)
    return {"failed": len(new), "failures": sorted("/".join(k) for k in new)[:10]}


def render_checkcheck(report: dict[str, Any]) -> str:
    lines = [
        f"checks of the checks: hardware {report['hardware_label']!r}, scale {report['scale']!r}, target run {report['target']} "
        f"with {len(report['history'])} earlier run(s)"
    ]
    if report.get("baseline_failures"):
        lines.append(
            f"  the honest target already fails {len(report['baseline_failures'])} row(s) (not counted as catches): {report['baseline_failures'][:5]}"
        )
    lines.append(f"  {'kind':<26} {'planted':>7} {'caught':>7} {'share':>7}")
    for kind, k in report["kinds"].items():
        share = "-" if k["share"] is None else f"{k['share']:.0%}"
        left = "  (left to drift by the band rule: drift's catch, not part of the result)" if kind in LEFT_TO_DRIFT else ""
        lines.append(f"  {kind:<26} {k['planted']:>7} {k['caught']:>7} {share:>7}{left}")
        if "allowed" in k:
            lines.append(
                f"      of the {k['allowed']} whose own noise allows it (a moved series' {k['mds_field']} in the record at most "
                f"the move): {k['caught_allowed']} caught" + (f" ({k['caught_allowed'] / k['allowed']:.0%})" if k["allowed"] else "")
            )
            for m in k["missed_allowed"][:10]:
                lines.append(f"        missed though its noise allows it: {m}")
            if k.get("no_reference"):
                lines.append(f"      outside the claim, drift having no quiet run before the plant: {len(k['no_reference'])}")
                for m in k["no_reference"][:5]:
                    lines.append(f"        {m}")
        for m in k["missed"][: 40 if left else 5]:
            lines.append(f"      missed: {m}")
        if k.get("not_judged"):
            lines.append(f"      not planted, not judged by design: {len(k['not_judged'])}")
            for m in k["not_judged"][:3]:
                lines.append(f"        {m}")
    lines.append("honest reruns (false alarms):")
    for h in report["honest"]:
        lines.append(
            f"  {h['run_id']} (history {h['history']}): {h['failed']} failed of {h['checked']}, {h['drift_alarms']} drift alarm(s)"
            + (f"; error {h['error']}" if h.get("error") else "")
        )
        for f in h["failures"][:5]:
            lines.append(f"      {f}")
    if "busy_hour" in report:
        b = report["busy_hour"]
        lines.append(f"busy hour: {b.get('skipped') or str(b['failed']) + ' new failure(s) ' + str(b.get('failures', []))}")
    if "power" in report:
        lines.append(render_power(report["power"]))
    lines.append(f"result: {'ok' if report['ok'] else 'NOT ok'} ({report['false_alarms']} false alarm(s))")
    return "\n".join(lines)


def save(report: dict[str, Any], results_dir: str | Path | None = None) -> Path:
    """Keep the report where the HTML report finds the latest figures: ``<results>/checkcheck/<label>-<scale>.json``."""
    import time

    from jsonbench import paths
    from jsonbench.dataset.fsio import write_text_atomic

    p = paths.results_dir(results_dir) / "checkcheck" / f"{report['hardware_label']}-{report['scale']}.json"
    text = json.dumps({**report, "saved_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, indent=1, default=str)
    write_text_atomic(p, text, "checkcheck report")
    return p


# -- power: planted slowdowns of several sizes, judged by the real drift check ------------------------------------------

#: The sizes of the planted slowdowns: durations times the factor, rates divided by it.
POWER_FACTORS = (1.1, 1.25, 1.5, 2.0)


def _mask(what: str, target: Any) -> Any:
    """The rows a plant moves: one engine (``engine``), one engine's suite (``suite``), or a set of series keys (``series``).

    An engine's plant leaves the canary's rows as measured (:func:`jsonbench_dev.plants.benchmarked` says why).
    """

    def mask_of(df: pd.DataFrame) -> pd.Series:
        if what == "engine":
            return plant_kit.engine_rows(df, target)
        if what == "suite":
            return (df["suite"] == target[0]) & (df["engine_id"] == target[1])
        keys = zip(df["suite"], df["engine_id"], df["workload"], df["variant"], df["metric"], strict=True)
        return pd.Series([tuple(map(str, k)) in target for k in keys], index=df.index)

    return mask_of


def power(
    data: pd.DataFrame,
    lib: Library,
    record: dict[str, Any] | None,
    results_dir: Path,
    *,
    factors: tuple[float, ...] = POWER_FACTORS,
    nights: int = 3,
    series_rounds: int = 2,
    seed: int = 7,
) -> dict[str, Any]:
    """Plant slowdowns into the latest runs of real history and count what the drift check catches, per size.

    ``data`` is every published row of one label and scale. A slowdown starts ``nights`` runs before
    the latest (the runs before it are the history) and lasts: night 1 is judged with the first
    planted run as tonight, night 2 with two, and so on. Three levels:

    * ``engine``: every timing of one engine version (a per-version regression), one plant per engine;
    * ``suite``: every timing of one engine in one suite, one plant per family;
    * ``series``: one series per family at once (one random series of each engine's suite), ``series_rounds`` times.

    For each size: plants caught tonight (night 1) and within ``nights`` runs; for ``engine`` also the
    share of its judged planted series caught within ``nights``, overall and among the series whose noise allows
    it (``plants.noise_allows``: for this many nights and the reference drift had, its family's and its own mds at the
    family's level, or its mds alone, at most the planted change).
    Honest: the alarms of every run judged against the runs before it, nothing planted (before confirmation). The record is the one drift uses.
    """
    runs = [r for r, _ in _runs(data)]
    nights = max(1, min(nights, len(runs) - 1))
    if len(runs) < 2:
        return {"skipped": f"{len(runs)} run(s): a planted slowdown needs at least one earlier run"}
    start = len(runs) - nights
    by_run = {r: data[data["run_id"] == r].copy() for r in runs}
    rng = random.Random(seed)
    bench = data[plant_kit.benchmarked(data)]  # the canary is not a family a regression moves
    families = sorted({(str(s), str(e)) for s, e in bench[["suite", "engine_id"]].drop_duplicates().itertuples(index=False)})
    engines = sorted({e for _, e in families})
    # each series' reference in drift's window test on the first planted night (plants.reference_runs)
    reference: dict[tuple[str, ...], int] = {}
    family_reference: dict[tuple[str, ...], int] = {}  # and its family's way: beside the other versions (plants.family_reference_runs)

    def judge_sequence(mask_of: Any, factor: float) -> tuple[list[set[tuple[str, ...]]], set[tuple[str, ...]], set[tuple[str, ...]]]:
        """Alarms on each night, the planted keys and the keys judged on any night."""
        planted_runs: dict[str, pd.DataFrame] = {}
        planted: set[tuple[str, ...]] = set()
        out, judged = [], set()
        for n in range(nights):
            rid = runs[start + n]
            df = by_run[rid].copy()
            moved = plant_kit.slow(df, mask_of(df), factor)
            planted |= plant_kit.keys_of(df, moved)
            planted_runs[rid] = df
            dataset = pd.concat([*(by_run[r] for r in runs[:start]), *planted_runs.values()], ignore_index=True)
            run = {
                "run_id": rid,
                "logical_date": pd.Timestamp(df["logical_date"].iloc[0]).isoformat(),
                "hardware_label": str(df["hardware_label"].iloc[0]),
                "scale": str(df["scale"].iloc[0]),
                "results_dir": str(results_dir),
            }
            frame = plant_kit.drift_all(df, dataset, run, lib, record)
            if n == 0:
                for k, v in plant_kit.reference_runs(frame).items():
                    reference.setdefault(k, v)
                for k, v in plant_kit.family_reference_runs(frame).items():
                    family_reference.setdefault(k, v)
            out.append(plant_kit.alarms(frame) & planted)
            judged |= plant_kit.judged(frame) & planted
        return out, planted, judged

    report: dict[str, Any] = {"history": runs[:start], "planted_into": runs[start:], "nights": nights, "levels": {}}
    for level in ("engine", "suite", "series"):
        per: dict[str, Any] = {}
        for factor in factors:
            planted_n = caught1 = caught_n = 0
            judged_all: set[tuple[str, ...]] = set()
            caught_all: set[tuple[str, ...]] = set()
            missed: list[str] = []
            missed_tonight: list[str] = []
            if level == "engine":
                targets: list[Any] = [("engine", e) for e in engines]
            elif level == "suite":
                targets = [("suite", f) for f in families]
            else:
                targets = [("series", r) for r in range(series_rounds)]
            for what, t in targets:
                if what == "series":
                    last = by_run[runs[-1]]
                    pick: set[tuple[str, ...]] = set()
                    for s, e in families:
                        fam = (last["suite"] == s) & (last["engine_id"] == e) & last["unit"].isin(DURATION_UNITS | RATE_UNITS)
                        cands = sorted(plant_kit.keys_of(last, fam))
                        if cands:
                            pick.add(rng.choice(cands))
                    mask_of = _mask("series", pick)
                else:
                    mask_of = _mask(what, t)
                alarms, planted, judged = judge_sequence(mask_of, factor)
                if not planted:
                    continue
                units = [{k} for k in planted] if what == "series" else [planted]
                for u in units:
                    if not (u & judged):
                        continue
                    planted_n += 1
                    caught1 += bool(alarms[0] & u)
                    caught_n += any(a & u for a in alarms)
                    name = "/".join(next(iter(u))) if what == "series" else (t if what == "engine" else "/".join(t))
                    if not alarms[0] & u:
                        missed_tonight.append(name)
                    if not any(a & u for a in alarms):
                        missed.append(name)
                judged_all |= judged
                caught_all |= set().union(*alarms) if alarms else set()
            entry: dict[str, Any] = {
                "planted": planted_n,
                "caught_tonight": caught1,
                "caught_within": caught_n,
                "share_tonight": caught1 / planted_n if planted_n else None,
                "share_within": caught_n / planted_n if planted_n else None,
                "missed_tonight": missed_tonight[:12],
                "missed": missed[:12],
            }
            if level == "engine" and judged_all:
                allowed = {
                    k
                    for k in judged_all
                    if plant_kit.noise_allows(record or {}, k, reference.get(k, start), nights, factor, family_reference.get(k))
                }
                entry["series_judged"] = len(judged_all)
                entry["series_share_within"] = len(caught_all & judged_all) / len(judged_all)
                entry["series_allowed"] = len(allowed)
                entry["series_share_within_allowed"] = len(caught_all & allowed) / len(allowed) if allowed else None
            per[f"{factor:g}"] = entry
        report["levels"][level] = per
    honest = []
    for i in range(1, len(runs)):
        df = by_run[runs[i]]
        dataset = pd.concat([by_run[r] for r in runs[: i + 1]], ignore_index=True)
        run = {
            "run_id": runs[i],
            "logical_date": pd.Timestamp(df["logical_date"].iloc[0]).isoformat(),
            "hardware_label": str(df["hardware_label"].iloc[0]),
            "scale": str(df["scale"].iloc[0]),
            "results_dir": str(results_dir),
        }
        frame = plant_kit.drift_all(df, dataset, run, lib, record)
        a = plant_kit.alarms(frame)
        honest.append(
            {
                "run_id": runs[i],
                "history": i,
                "judged": len(plant_kit.judged(frame)),
                "drift_alarms": len(a),
                "families": sorted({f"{k[0]}/{k[1]}" for k in a}),
            }
        )
    report["honest"] = honest
    return report


def render_power(p: dict[str, Any]) -> str:
    """The power table: per level and size, the share caught tonight and within the nights, and the honest alarms."""
    if "skipped" in p:
        return f"power: skipped ({p['skipped']})"
    lines = [f"power of drift: slowdowns planted into {len(p['planted_into'])} run(s) after {len(p['history'])} earlier run(s)"]
    lines.append(
        f"  {'level':<8} {'size':>5} {'planted':>7} {'tonight':>8} {'within ' + str(p['nights']):>9}  series caught (noise allows)"
    )
    for level, per in p["levels"].items():
        for size, e in per.items():
            t = "-" if e["share_tonight"] is None else f"{e['share_tonight']:.0%}"
            w = "-" if e["share_within"] is None else f"{e['share_within']:.0%}"
            extra = ""
            if "series_judged" in e:
                allowed = "-" if e["series_share_within_allowed"] is None else f"{e['series_share_within_allowed']:.0%}"
                extra = f"  {e['series_share_within']:.0%} of {e['series_judged']} ({allowed} of {e['series_allowed']})"
            lines.append(f"  {level:<8} {size + 'x':>5} {e['planted']:>7} {t:>8} {w:>9}{extra}")
            if level != "series" and e.get("missed_tonight"):
                lines.append(f"      missed tonight: {', '.join(e['missed_tonight'][:6])}")
    for h in p["honest"]:
        lines.append(
            f"  honest {h['run_id']} (history {h['history']}): {h['drift_alarms']} drift alarm(s) of {h['judged']} judged {h['families'][:4]}"
        )
    return "\n".join(lines)
