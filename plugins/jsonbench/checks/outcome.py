"""What validation rows say, read back: each row's tag, a check's counts and failure lines, a stored run's outcome.

Shared by the check that writes the rows (its summary and log, :func:`jsonbench.checks.examine.check_run`)
and by whoever reads them afterwards (:func:`check_outcome`: the report's summary, the tests that must not
depend on timing).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from jsonbench.checks.verdicts import judged_share, judgement

#: What a validation row is about, for tests and alerts: "sanity" (schema, completeness, damaged
#: files), "deterministic" (a fact of the data: counts, sizes, plans; reproduction or drift),
#: "timing" (a measured speed: its band or its change points).
TAGS = ("sanity", "deterministic", "timing")


def summary_counts(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The summary's counts: passed and failed per check kind (``by_kind``) and per finding tag (``by_tag``), drift verdicts."""
    by_kind: dict[str, dict[str, int]] = {}
    by_finding_kind: dict[str, dict[str, int]] = {}
    for r in rows:
        k = by_kind.setdefault(r["check_kind"], {"passed": 0, "failed": 0})
        k["passed" if r["success"] else "failed"] += 1
        tag = row_tag(r)
        t = by_finding_kind.setdefault(tag, {"passed": 0, "failed": 0})
        t["passed" if r["success"] else "failed"] += 1
    verdicts: dict[str, int] = {}
    for r in rows:
        if r["check_kind"] == "drift" and r.get("verdict"):
            verdicts[r["verdict"]] = verdicts.get(r["verdict"], 0) + 1
    return {"by_kind": by_kind, "by_tag": by_finding_kind, "drift_verdicts": verdicts}


def row_tag(row: dict[str, Any] | pd.Series) -> str:
    """``sanity``, ``deterministic`` or ``timing`` for one validation row (a dict, or a row read back)."""
    kind = row["check_kind"]
    if kind == "sanity":
        return "sanity"
    details = row.get("details")
    if isinstance(details, str):
        try:
            details = json.loads(details)
        except ValueError:
            details = {}
    details = details or {}
    tag = details.get("finding_kind") or details.get("metric_kind")
    if tag in ("deterministic", "timing"):
        return tag
    if tag in ("timed", "sampled"):  # the metric kinds (C1): both vary run to run, and are judged statistically
        return "timing"
    # A raw expectation of a reproduction file or a broken detector: as strict as a fact.
    return "deterministic"


def failure_line(r: dict[str, Any]) -> str:
    where = "/".join(str(x) for x in (r.get("suite"), r.get("engine_id")) if x)
    details = json.loads(r.get("details") or "{}")
    if details.get("file"):
        return f"{r['check_kind']}: damaged dataset file {details['file']}: {details.get('error')}"
    if r.get("engine_id") is None and (details.get("unexpected") or details.get("error")):
        # An expectation over many rows: say how many failed and which, not a row count as "observed".
        shown = [
            "/".join(str(u[k]) for k in ("engine_id", "workload", "metric") if k in u) + (f"={u['value']}" if "value" in u else "")
            for u in details.get("unexpected", [])[:3]
        ]
        more = f" (+{details['unexpected_count'] - len(shown)} more)" if (details.get("unexpected_count") or 0) > len(shown) else ""
        what = (
            f"{details.get('unexpected_count')} unexpected row(s): {', '.join(shown)}{more}" if shown else f"error: {details.get('error')}"
        )
        return f"{r['check_kind']}: {where + ': ' if where else ''}{r['expectation']}: {what}"
    bounds = f"[{_g(r.get('min_value'))}, {_g(r.get('max_value'))}]"
    extra = ""
    if r["check_kind"] == "drift" and details.get("change_points"):
        cp = details["change_points"][-1]
        extra = (
            f" ({details.get('method')}: change point at run {cp.get('run_id')}, {_g(cp.get('metric_before'))} -> "
            f"{_g(cp.get('metric_after'))}, p={_g(cp.get('pvalue'))})"
        )
    elif r["check_kind"] == "drift" and details.get("reference") is not None:
        extra = f" (reference from {details.get('history_n')} earlier runs: {_g(details['reference'])})"

    return (
        f"{r['check_kind']}: {where + ': ' if where else ''}{r['expectation']} observed {_g(r.get('observed'))}, expected {bounds}{extra}"
    )


def _g(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def check_outcome(results_dir: str | Path, run_id: str) -> dict[str, Any]:
    """What a run's stored validation rows say, by tag: for tests that must not depend on timing.

    Returns ``{"rows": n, "by_tag": {"sanity"|"deterministic"|"timing": {"passed", "failed"}},
    "failed": [lines], "only_timing_failed": bool, "sanity_ok": bool, "facts_ok": bool, "verdicts":
    {verdict: n}, "judged": share (see :func:`jsonbench.checks.verdicts.judged_share`), "judgement":
    passed | suspect | failed | not_judged}``:
    ``sanity_ok`` is true when schema, completeness and dataset files all passed, ``facts_ok`` when
    every deterministic finding and deterministic drift judgement passed too. A DAG test asserts
    those, and accepts a failed check only when ``only_timing_failed`` (a timing band or a timing
    drift judgement missed on a busy machine).
    """
    from jsonbench.dataset.read import VALIDATIONS, read_dataset

    v = read_dataset(results_dir, VALIDATIONS, run_id=run_id).to_pandas()
    by_tag: dict[str, dict[str, int]] = {t: {"passed": 0, "failed": 0} for t in TAGS}
    failed: list[str] = []
    for _, r in v.iterrows():
        tag = row_tag(r)
        ok = bool(r["success"])
        by_tag[tag]["passed" if ok else "failed"] += 1
        if not ok:
            failed.append(
                f"[{tag}] {r['check_kind']}: {r['engine_id'] or ''} {r['expectation']} observed {r['observed']} expected [{r['min_value']}, {r['max_value']}]"
            )
    records = [dict(r) for r in v.to_dict("records")]
    share = judged_share(records)
    return {
        "rows": len(v),
        "by_tag": by_tag,
        "verdicts": {str(k): int(n) for k, n in v["verdict"].value_counts().items()} if len(v) else {},
        "judged": share,
        "judgement": judgement(records, share) if len(v) else "not_checked",
        "failed": failed,
        "sanity_ok": len(v) > 0 and by_tag["sanity"]["passed"] > 0 and by_tag["sanity"]["failed"] == 0,
        "facts_ok": by_tag["deterministic"]["failed"] == 0,
        "only_timing_failed": by_tag["sanity"]["failed"] == 0 and by_tag["deterministic"]["failed"] == 0,
    }
