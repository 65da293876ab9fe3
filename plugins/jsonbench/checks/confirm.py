"""The confirmation before a timing alert: a suspect judged again on its cell's second measurement.

The first check of a run (:func:`jsonbench.checks.examine.check_run`) stores a timing finding out of its
band, or a statistical drift verdict, as ``suspect`` (:mod:`jsonbench.checks.verdicts`). The DAG then
lists the suspects' cells and workloads (:func:`suspect_cells`, task ``suspects``), measures exactly
those again in the same DAG run (task ``reconfirm``, mapped over the cells: a fresh engine, the
suspect workloads only, teardown), publishes them, and judges them (:func:`confirm_run`, task
``confirm_check``):

* every suspect is judged again by the very code that judged it first (``_reproduction``, ``_drift``),
  on the run's published rows with the re-measured workloads of its engine swapped for their
  confirmation: same bands, same history, same rules;
* ``confirmed`` when the confirmation fails the same way, and for drift lies beyond what its series read on the
  earlier runs it was judged against (it alerts, and the alert shows both
  measurements), ``cleared`` when it passes or lies within that range (the row passes; its details keep the first
  measurement), ``unconfirmed`` when it could not be judged (the cell was not measured again, or
  its confirmation was disturbed): not an alert, but not judged, which lowers the judged share.

Where confirmation rows live: a table of their own, ``<results>/confirmations/`` (same schema and
partitioning as ``measurements``; run id ``<run id>+confirm``, see
:data:`jsonbench.cell.CONFIRMATION_SUFFIX`). The measurement dataset keeps the night exactly as it
was measured, so the history that later nights' drift reads is made of whole runs only, each
measured once; a partial run of a few re-measured workloads never enters it, and neither does a
second sample of a suspect cell that would weigh that cell twice. A value its confirmation cleared is the
one exception: later nights read its re-measurement in its place (:mod:`jsonbench.history.cleared`), so their
windows of two and three nights do not judge an unreproduced value again. The validation rows of the run
are rewritten in place (one atomic swap) with the final verdicts, each with both measurements in
its details (``first`` and ``confirmation``).
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Any

import pandas as pd

from jsonbench.cell import RunRef
from jsonbench.checks.findings import terms
from jsonbench.checks.library import Library, load_library
from jsonbench.checks.verdicts import MASS_NOTE, alerting, describe_share, details_of, judged_share, judgement, unjudged
from jsonbench.dataset.measurement import CELL_RECORD
from jsonbench.history.cleared import KEY as VALUE_KEY
from jsonbench.history.cleared import read_as_history

log = logging.getLogger(__name__)

_REPRO_KEY = ("expectation", "engine_id")
_DRIFT_KEY = ("engine_id", "workload", "variant", "metric")


def _clean(row: dict[str, Any]) -> dict[str, Any]:
    """A validation row read back, with pandas' missing values (NaN, NA, NaT) as None again."""
    out = {}
    for k, v in row.items():
        try:
            missing = v is None or bool(pd.isna(v))
        except (TypeError, ValueError):  # a list or an array: present
            missing = False
        out[k] = None if missing else v
    return out


def stored_rows(results_dir: str | Path, run_id: str) -> list[dict[str, Any]]:
    """The run's stored validation rows as dicts (details as JSON text), or an empty list."""
    from jsonbench.dataset.read import VALIDATIONS, read_dataset

    frame = read_dataset(results_dir, VALIDATIONS, run_id=run_id).to_pandas()
    return [_clean(r) for r in frame.to_dict("records")]


def _finding(lib: Library, suite: str, finding_id: str) -> dict[str, Any]:
    for f in (lib.reproduction.get(suite) or {}).get("findings", []):
        if f.get("id") == finding_id:
            return dict(f)
    return {}


def inputs_of(row: dict[str, Any], lib: Library) -> set[tuple[str, str]]:
    """``(engine_id, workload)`` pairs a suspect row is computed from (a cross-engine finding names both engines).

    None for a cell's own resource row (workload ``_cell``, its duration): it sums every task of the cell, which a
    re-measurement of a few workloads does not run, so measuring its cell again (a provision and a teardown for
    nothing) could not judge it.
    """
    if row["check_kind"] == "drift" and str(row.get("workload")) == CELL_RECORD:
        return set()
    if row["check_kind"] == "drift":
        return {(str(row["engine_id"]), str(row["workload"]))}
    f = _finding(lib, str(row["suite"]), str(row["expectation"]))
    return {(str(t.get("engine") or row["engine_id"]), str(t["workload"])) for t in terms(f)}


def input_keys(row: dict[str, Any], lib: Library) -> set[tuple[str, str, str, str]]:
    """``(engine_id, workload, variant, metric)`` of every published value a suspect row is computed from."""
    if row["check_kind"] == "drift":
        return {(str(row["engine_id"]), str(row["workload"]), str(row.get("variant") or "default"), str(row["metric"]))}
    f = _finding(lib, str(row["suite"]), str(row["expectation"]))
    return {
        (str(t.get("engine") or row["engine_id"]), str(t["workload"]), str(t.get("variant", "default")), str(t["metric"])) for t in terms(f)
    }


#: At most this share of the night's cell time goes to measuring suspects again (without a
#: bound, a night can spend 40 % of its time re-measuring: 1,150 s of 2,959 s for 12 cells). What does not fit stays ``unconfirmed``, and says why.
BUDGET_SHARE = 0.10
#: ... but never less than this: a narrowed run of one small cell (a smoke preview of one suite) could otherwise not
#: afford a second measurement of anything.
BUDGET_FLOOR_S = 60.0


def _costs(results_dir: str | Path, run_id: str) -> tuple[float, dict[tuple[str, str], tuple[float, dict[str, float]]]]:
    """(the night's cell time, per cell (suite, engine): (its fixed cost, seconds per workload)), from the published rows.

    A workload's seconds are its rows' span (first start to last end); a cell's fixed cost (provision, load,
    teardown) is its ``_cell`` duration less the sum of its workloads'. Rows without times cost nothing known.
    """
    from jsonbench.dataset.measurement import CELL_RECORD, HOST_SUITE
    from jsonbench.dataset.read import MEASUREMENTS, read_dataset

    try:
        df = read_dataset(results_dir, MEASUREMENTS, run_id=run_id).to_pandas()
    except Exception as exc:  # the budget is a refinement: an unreadable run confirms everything, as before
        log.warning("no costs for the confirmation budget of %s (%s)", run_id, exc)
        return 0.0, {}
    df = df[df["suite"] != HOST_SUITE]
    night = 0.0
    out: dict[tuple[str, str], tuple[float, dict[str, float]]] = {}
    for (suite, engine), g in df.groupby(["suite", "engine_id"]):
        cell = g[(g["workload"] == CELL_RECORD) & (g["metric"] == "duration")]["value"]
        total = float(cell.iloc[0]) if len(cell) else 0.0
        per: dict[str, float] = {}
        for w, gw in g[g["workload"] != CELL_RECORD].groupby("workload"):
            span = (pd.to_datetime(gw["ended_at"]).max() - pd.to_datetime(gw["started_at"]).min()).total_seconds()
            per[str(w)] = max(float(span), 0.0) if span == span else 0.0
        night += total
        out[(str(suite), str(engine))] = (max(total - sum(per.values()), 0.0), per)
    return night, out


def confirmation_budget(
    results_dir: str | Path, run_id: str, lib: Library | None = None, share: float = BUDGET_SHARE
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The cells to measure again within the budget, and what the budget left out.

    Every suspect's cell and workloads (:func:`inputs_of`), ordered by what a second measurement is worth per second:
    cells with a reproduction suspect first (a seed's conclusion), then by drift suspects per second of cost. Cells
    are taken while their cost fits ``share`` of the night's cell time (at least ``BUDGET_FLOOR_S``). A cell of drift
    suspects only that does not fit whole is taken in part: its workloads by suspects per second, while they fit (a
    family's verdict makes most of one engine's suite suspect, a whole catalogue cell, 15 % of a laptop night; its
    cheapest workloads still tell whether the family moved again). The rest stay unconfirmed. Returns
    ``(cells, {"night_s", "budget_s", "spent_s", "left_out": [ids]})``: a cell left out whole as ``suite/engine``, a
    workload left out of a cell taken in part as ``suite/engine:workload``.
    """
    lib = lib or load_library()
    cells: dict[tuple[str, str], set[str]] = {}
    weight: dict[tuple[str, str], list[int]] = {}
    per_workload: dict[tuple[str, str], dict[str, int]] = {}
    for r in stored_rows(results_dir, run_id):
        if r.get("verdict") != "suspect":
            continue
        for engine_id, workload in inputs_of(r, lib):
            key = (str(r["suite"]), engine_id)
            cells.setdefault(key, set()).add(workload)
            w = weight.setdefault(key, [0, 0])
            w[0 if r.get("check_kind") == "drift" else 1] += 1
            counts = per_workload.setdefault(key, {})
            counts[workload] = counts.get(workload, 0) + 1
    night, costs = _costs(results_dir, run_id) if cells else (0.0, {})

    def cost(key: tuple[str, str], workloads: set[str] | None = None) -> float:
        fixed, per = costs.get(key, (0.0, {}))
        return fixed + sum(per.get(w, 0.0) for w in (cells[key] if workloads is None else workloads))

    order = sorted(cells, key=lambda k: (-weight[k][1], -(weight[k][0] / max(cost(k), 1.0)), k))
    budget = max(share * night, BUDGET_FLOOR_S)
    chosen: list[tuple[tuple[str, str], set[str]]] = []
    left: list[str] = []
    spent = 0.0
    for key in order:
        if not night or spent + cost(key) <= budget:
            spent += cost(key)
            chosen.append((key, cells[key]))
            continue
        part: set[str] = set()
        if not weight[key][1]:  # drift suspects only: as many of its workloads as fit, the most suspects a second first
            per = costs.get(key, (0.0, {}))[1]
            for name in sorted(cells[key], key=lambda n: (-per_workload[key][n] / max(per.get(n, 0.0), 1.0), n)):
                if spent + cost(key, part | {name}) <= budget:
                    part.add(name)
        if not part:
            left.append(f"{key[0]}/{key[1]}")
            continue
        spent += cost(key, part)
        chosen.append((key, part))
        left += [f"{key[0]}/{key[1]}:{name}" for name in sorted(cells[key] - part)]
    todo = [{"suite": s, "engine_id": e, "workloads": sorted(ws)} for (s, e), ws in sorted(chosen, key=lambda x: x[0])]
    return todo, {"night_s": round(night, 1), "budget_s": round(budget, 1), "spent_s": round(spent, 1), "left_out": left}


def suspect_cells(results_dir: str | Path, run_id: str, lib: Library | None = None) -> list[dict[str, Any]]:
    """``[{"suite", "engine_id", "workloads": [...]}]``: what the run's suspects need measured again, per cell, within
    the confirmation budget (:func:`confirmation_budget`)."""
    return confirmation_budget(results_dir, run_id, lib)[0]


_VALUE_KEY = list(VALUE_KEY)  # what names one value of a run, said in jsonbench.history.cleared


def _substitute(published: pd.DataFrame, confirmations: pd.DataFrame) -> tuple[pd.DataFrame, set[tuple[str, ...]]]:
    """Tonight's rows with every re-measured value (suite, engine, workload, variant, metric) swapped for its confirmation.

    Also returns which values were measured again: everything else (the cell's other workloads,
    the other cells) stays as the night measured it.
    """
    if confirmations.empty or published.empty:
        return published, set()
    confirmations = confirmations[confirmations["workload"] != "_cell"]  # the confirmation's own resource rows
    redone = {tuple(str(x) for x in k) for k in confirmations[_VALUE_KEY].drop_duplicates().itertuples(index=False)}
    keep = ~published[_VALUE_KEY].astype(str).apply(tuple, axis=1).isin(redone)
    swapped = confirmations.copy()
    swapped["run_id"] = published["run_id"].iloc[0]
    return pd.concat([published[keep], swapped], ignore_index=True), redone


def _measurement(row: dict[str, Any]) -> dict[str, Any]:
    """What the details keep of one measurement of a check: observed, bounds, and how it was read."""
    d = details_of(row)
    keep = ("inputs", "problem", "relative_change", "reference", "drift_score", "quiet", "host_other_cpu", "method", "note")
    return {
        "observed": row.get("observed"),
        "min_value": row.get("min_value"),
        "max_value": row.get("max_value"),
        "verdict": row.get("verdict"),
        **{k: d[k] for k in keep if k in d},
    }


def _key(row: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(row.get(k) for k in (_REPRO_KEY if row["check_kind"] == "reproduction" else _DRIFT_KEY))


def _rejudge(
    lib: Library, run: RunRef, suspects: list[dict[str, Any]], substituted: pd.DataFrame, dataset: pd.DataFrame
) -> dict[Any, dict[str, Any]]:
    """The suspects judged again on ``substituted``: ``{(check_kind, key): fresh row}``."""
    from jsonbench.checks.gxrun import GXSession
    from jsonbench.checks.validation_rows import drift_check, reproduction_check
    from jsonbench.checks.verdicts import mark_suspects
    from jsonbench.dataset.schema import run_key
    from jsonbench.history.changepoints import DetectorUnavailable

    gxs = GXSession(None, run_name=run_key(run.run_id) + "-confirm")
    fresh: dict[Any, dict[str, Any]] = {}
    for suite in sorted({str(r["suite"]) for r in suspects}):
        kinds = {r["check_kind"] for r in suspects if r["suite"] == suite}
        rows: list[dict[str, Any]] = []
        if "reproduction" in kinds and suite in lib.reproduction:
            rows += reproduction_check(lib, gxs, run, substituted, suite)
        if "drift" in kinds:
            try:
                rows += drift_check(lib, gxs, run, substituted, dataset, suite)[0]
            except DetectorUnavailable as exc:
                log.warning("confirmation of %s drift not judged: %s", suite, exc)
        mark_suspects(rows)  # a confirmation that fails again reads "suspect" here: the same failure
        for r in rows:
            if r.get("engine_id") is not None:
                fresh[(r["check_kind"], _key(r))] = r
    return fresh


def _side(row: dict[str, Any]) -> int:
    """Which way a failing row left what was expected: +1 above (a larger value), -1 below, 0 when it cannot say.

    A drift row says it by its relative change (the calibrated family test can fail a value inside the lone
    band); otherwise the observed value against the row's bounds.
    """
    rc = details_of(row).get("relative_change")
    if isinstance(rc, int | float) and math.isfinite(rc) and rc != 0:
        return 1 if rc > 0 else -1
    obs, lo, hi = row.get("observed"), row.get("min_value"), row.get("max_value")
    if not isinstance(obs, int | float) or not math.isfinite(obs):
        return 0
    if lo is not None and obs < lo:
        return -1
    if hi is not None and obs > hi:
        return 1
    return 0


def _verdict(
    first: dict[str, Any],
    again: dict[str, Any] | None,
    redone: bool,
    over_budget: bool = False,
    seen: tuple[float, float, int] | None = None,
) -> tuple[str, bool, str]:
    """``(verdict, success, why)`` of a suspect from its confirmation row.

    Confirmed means the confirmation failed the same check *the same way*: a first measurement far above
    and a confirmation far below (seen on an honest laptop rerun: 425 then 201 ns per row against a
    history near 300) show a series noisier than its record, not a change, and clear the suspect.

    ``seen``: for a drift suspect, the lowest and highest value its series published on the earlier runs it was judged
    against (and how many). Confirmed also needs the confirmation *beyond* that range on the same side (only
    when the new starts lie beyond the history's between-start range the same way): a value this host has already
    shown between starts is no change, whatever a mean says. A recorded night confirmed
    PostgreSQL 17's one-client WAL record bytes at 327.93, against a history of 335.69 (a repetition with another
    process's WAL in its range) and 327.93: its reference's mean moved, the series did not.
    """
    if over_budget:
        return (
            "unconfirmed",
            False,
            f"its cell or workload was not measured again: over the confirmation budget ({BUDGET_SHARE:.0%} of the night's cell time)",
        )
    if not redone or again is None:
        return "unconfirmed", False, "its cell was not measured again (the confirmation failed or did not run)"
    verdict = again.get("verdict")
    if verdict == "suspect":
        a, b = _side(first), _side(again)
        if a and b and a != b:
            return "cleared", True, "the confirmation failed the other way: no consistent change, the series is noisier than its record"
        obs = again.get("observed")
        if seen is not None and a and isinstance(obs, int | float) and math.isfinite(obs):
            lo, hi, n = seen
            slack = _slack(first)
            if lo > 0:
                lo, hi = lo / slack, hi * slack
            if (a > 0 and obs <= hi) or (a < 0 and obs >= lo):
                return (
                    "cleared",
                    True,
                    f"the confirmation ({_g(float(obs))}) lies within what the series read on the {n} earlier run(s) it was judged "
                    f"against ({_g(lo)} to {_g(hi)}): no move beyond this host's own history",
                )
        return "confirmed", False, "the confirmation failed the same check, the same way"
    if again.get("success") and verdict in ("pass", "ok"):
        return "cleared", True, "the confirmation passed: the first measurement was not reproduced"
    return (
        "unconfirmed",
        False,
        f"the confirmation could not be judged ({verdict}: {details_of(again).get('problem') or details_of(again).get('note') or ''})",
    )


def apply_confirmations(
    rows: list[dict[str, Any]],
    fresh: dict[Any, dict[str, Any]],
    redone: set[tuple[str, ...]],
    lib: Library,
    confirm_run_id: str,
    left_out: set[str] | frozenset[str] = frozenset(),
    ranges: dict[tuple[Any, ...], tuple[float, float, int]] | None = None,
) -> list[dict[str, Any]]:
    """Give every suspect row its final verdict, with both measurements in its details; return the changed rows.

    ``left_out``: the cells (``suite/engine``) and workloads (``suite/engine:workload``) the confirmation budget did not
    measure again. ``ranges``: each drift suspect's history range (:func:`history_ranges`)."""
    changed = []
    for r in rows:
        if r.get("verdict") != "suspect":
            continue
        again = fresh.get((r["check_kind"], _key(r)))
        inputs = inputs_of(r, lib)
        complete = all((str(r["suite"]), *key) in redone for key in input_keys(r, lib))
        over = not complete and any(f"{r['suite']}/{e}" in left_out or f"{r['suite']}/{e}:{w}" in left_out for e, w in inputs)
        seen = (ranges or {}).get(_key(r)) if r["check_kind"] == "drift" else None
        verdict, success, why = _verdict(r, again, complete, over, seen)
        if not inputs:
            why = "not measured again: a cell's own resource row sums every task of the cell, and a re-measurement runs only the suspect workloads"
        d = details_of(r)
        d["first"] = _measurement(r)
        d["confirmation"] = {**(_measurement(again) if again and complete else {}), "run_id": confirm_run_id, "why": why}
        r.update(verdict=verdict, success=success, details=json.dumps(d, default=str))
        changed.append(r)
    return changed


def _slack(row: dict[str, Any]) -> float:
    """How far beyond its history's range a sampled series' confirmation must lie: one of its sigmas (a factor).

    A near-exact count repeats its value to a few parts in 10^5, and the range it is held against sits on the same
    value: a recorded quota night re-measured 327.9008 bytes against a history of 327.9273-335.6881, below the range's
    foot by 0.008 %, a record or two of the background. Within one sigma of the range (0.1 % there) is
    within it. A timing is held against its range as it is: its test already asked for its threshold beyond the level."""
    from jsonbench.history.rules import declared_kind

    sigma = details_of(row).get("sigma")
    if not isinstance(sigma, int | float) or not math.isfinite(sigma) or sigma <= 0:
        return 1.0
    if declared_kind(str(row.get("suite")), str(row.get("workload")), str(row.get("metric"))) != "sampled":
        return 1.0
    return math.exp(float(sigma))


def history_ranges(suspects: list[dict[str, Any]], dataset: pd.DataFrame) -> dict[tuple[Any, ...], tuple[float, float, int]]:
    """Per drift suspect (:func:`_key`), the lowest and highest value its series published on the earlier runs it was
    judged against (its details' ``history_runs``, read from ``dataset`` as the check read it), and how many."""
    out: dict[tuple[Any, ...], tuple[float, float, int]] = {}
    if dataset.empty:
        return out
    variants = dataset["variant"].astype("string").fillna("")
    for r in suspects:
        runs = (details_of(r).get("history_runs") or []) if r.get("check_kind") == "drift" else []
        if not runs:
            continue
        g = dataset[
            dataset["run_id"].isin([str(x) for x in runs])
            & (dataset["suite"] == r.get("suite"))
            & (dataset["engine_id"] == r.get("engine_id"))
            & (dataset["workload"] == r.get("workload"))
            & (variants == (r.get("variant") or ""))
            & (dataset["metric"] == r.get("metric"))
        ]
        vals = [v for v in pd.to_numeric(g["value"], errors="coerce") if math.isfinite(v)]
        if vals:
            out[_key(r)] = (min(vals), max(vals), len(vals))
    return out


def _g(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) and math.isfinite(value) else str(value)


def confirmation_line(row: dict[str, Any]) -> str:
    """One line with both measurements: ``confirmed: suite/engine: check first X, confirmation Y, expected [a, b]``."""
    d = details_of(row)
    first, again = d.get("first") or {}, d.get("confirmation") or {}
    where = "/".join(str(x) for x in (row.get("suite"), row.get("engine_id")) if x)
    bounds = f"[{_g(first.get('min_value'))}, {_g(first.get('max_value'))}]"
    return (
        f"{row.get('verdict')}: {where}: {row.get('expectation')} first {_g(first.get('observed'))}, "
        f"confirmation {_g(again.get('observed'))}, expected {bounds} ({again.get('why', '')})"
    )


def revision_note(published: pd.DataFrame, dataset: pd.DataFrame, scale: str) -> str:
    """Whether tonight's harness revision (``git_revision``) is the last earlier run's of its label and scale, in words.

    A night that moved every engine while the canary held is a harness change or a host the canary does not feel; the
    data cannot tell them apart, the revisions can narrow it. Empty when either run recorded no revision."""
    from jsonbench.history.drift import known_revision, short_revision

    tonight = next((k for v in published.get("git_revision", pd.Series([], dtype=str)) if (k := known_revision(v))), "")
    if not tonight or dataset.empty or "git_revision" not in dataset:
        return ""
    run_ids = set(published["run_id"].astype(str))
    first = pd.to_datetime(published["logical_date"], utc=True).min()
    earlier = dataset[~dataset["run_id"].astype(str).isin(run_ids) & (dataset["scale"].astype(str) == scale)]
    earlier = earlier[pd.to_datetime(earlier["logical_date"], utc=True) < first]
    if earlier.empty:
        return ""
    last = earlier.sort_values("logical_date")["run_id"].iloc[-1]
    before = next((k for v in earlier.loc[earlier["run_id"] == last, "git_revision"] if (k := known_revision(v))), "")
    if not before:
        return ""
    if before != tonight:
        return (
            f"the harness changed since the last earlier run ({short_revision(before)} -> {short_revision(tonight)}): read what that change did "
            "to what is measured first (a change elsewhere leaves a setting, or the host in a way the canary does not feel)"
        )
    return (
        f"the harness is the last earlier run's revision ({short_revision(tonight)}): not a change of the pipeline's code; a setting or "
        "dependency the revision does not show, or the host in a way the canary does not feel"
    )


def _mass_notes(suspects: list[dict[str, Any]], revisions: str = "") -> list[str]:
    """ "tonight's host or harness" when the drift suspects span more than a real regression would: every engine of a
    suite, or most engines of the run. A version's regression moves its own engine; a night that moves them all is the
    host (the canary says whether it was) or the harness (a setting, a build, the pipeline), and is one finding.
    ``revisions`` (:func:`revision_note`) says whether the harness's revision changed since the last run."""
    drift = [r for r in suspects if r.get("check_kind") == "drift"]
    if not drift:
        return []
    engines = {str(r["engine_id"]) for r in drift}
    suites = {str(r["suite"]) for r in drift}
    if not ((len(engines) >= 3 and len(drift) >= 6) or (len(engines) >= 2 and len(drift) >= 10)):
        return []  # a few suspects here and there are each series' own
    return [
        f"{MASS_NOTE} {len(drift)} drift suspects across {len(engines)} engine(s) and {len(suites)} suite(s) "
        "moved at once, more than a regression of one version would; read the canary beside each cell (the host) before "
        "any one series" + (f"; {revisions}" if revisions else "")
    ]


def confirm_run(run: RunRef) -> dict[str, Any]:
    """Judge the run's suspects on their confirmation; store the final verdicts; raise ``ChecksFailed`` if one is confirmed.

    Also raises when the confirmation leaves the run ``not_judged`` (unconfirmed suspects lower the
    judged share) and the first check had not already alerted as such. Deterministic and sanity
    failures are not raised again: the first check alerted at once.
    """
    from jsonbench.checks.examine import ChecksFailed
    from jsonbench.dataset.publish import CONFIRMATIONS, MEASUREMENTS, publish_validations, read_dataset, read_dataset_report

    results_dir, run_id = run.results_dir, run.run_id
    rows = stored_rows(results_dir, run_id)
    if not rows:  # the check failed before storing anything, and alerted: there is nothing to confirm
        log.warning("run %s has no validation rows under %s: nothing to confirm", run_id, results_dir)
        return {"kind": "confirmation", "run_id": run_id, "judgement": "not_checked", "checked": 0, "failed": 0, "suspect": 0}
    first_share = judged_share(rows)
    suspects = [r for r in rows if r.get("verdict") == "suspect"]
    changed: list[dict[str, Any]] = []
    confirm_id = run.confirmation().run_id
    budget: dict[str, Any] = {}
    revisions = ""
    if suspects:
        lib = load_library()
        confirmations = read_dataset(results_dir, CONFIRMATIONS, run_id=confirm_id).to_pandas()
        measured = read_dataset_report(results_dir, MEASUREMENTS, hardware_label=run.hardware_label).table.to_pandas()
        published = measured[measured["run_id"] == run_id]
        # the history as the first check read it: earlier values their own confirmation cleared read as re-measured
        dataset, _ = read_as_history(results_dir, measured, tonight=run_id, hardware_label=run.hardware_label)
        revisions = revision_note(published, dataset, run.scale)
        substituted, redone = _substitute(published, confirmations)
        fresh = _rejudge(lib, run, suspects, substituted, dataset) if redone else {}
        _, budget = confirmation_budget(results_dir, run_id, lib)
        ranges = history_ranges(suspects, dataset)
        changed = apply_confirmations(rows, fresh, redone, lib, confirm_id, set(budget["left_out"]), ranges)
        publish_validations(results_dir, run, rows)
    share = judged_share(rows)
    confirmed = [r for r in changed if r["verdict"] == "confirmed"]
    summary: dict[str, Any] = {
        "kind": "confirmation",
        "run_id": run_id,
        "scale": run.scale,
        "checked": len(rows),
        "failed": len(confirmed),
        "suspect": len(suspects),
        "confirmed": len(confirmed),
        "cleared": sum(1 for r in changed if r["verdict"] == "cleared"),
        "unconfirmed": sum(1 for r in changed if r["verdict"] == "unconfirmed"),
        "already_alerted": len([r for r in alerting(rows) if r["verdict"] != "confirmed"]),
        "judged": share,
        "judged_line": describe_share(share),
        "judgement": judgement(rows, share),
        "not_judged": unjudged(share),
        "confirmations": [confirmation_line(r) for r in changed[:20]],
        "failures": [confirmation_line(r) for r in confirmed[:20]],
        "notes": _mass_notes(suspects, revisions)
        + (
            [
                f"confirmation budget: {budget['spent_s']:.0f} s of {budget['budget_s']:.0f} s ({BUDGET_SHARE:.0%} of the night's "
                f"{budget['night_s']:.0f} s of cells); not measured again: {', '.join(budget['left_out'])}"
            ]
            if budget.get("left_out")
            else []
        ),
        "budget": budget,
        "validations": str(results_dir),
        "results_dir": str(results_dir),
    }
    log.info("confirmation of run %s: %s; %s", run_id, "; ".join(summary["confirmations"]) or "no suspect", summary["judged_line"])
    if confirmed or (unjudged(share) and not unjudged(first_share)):
        raise ChecksFailed(summary)
    return summary
