"""What a run's validation rows amount to: which failures wait for a confirmation, and how much was judged.

Two rules (contract C3), kept here so that the first check, the confirmation and the tests read the
same ones:

* **Suspect before alert.** A timing finding out of its band, or a statistical drift verdict, on one
  run is ``suspect``: a busy minute, a cold cache or a scheduler hiccup can move one measurement by
  more than any honest band allows, and an alert that an honest rerun takes back trains its readers to
  ignore alerts. Its cell is measured again in the same DAG run (:mod:`jsonbench.checks.confirm`);
  only a confirmation that fails the same way alerts. A deterministic fact (a count, a size, a plan)
  and a sanity check do not vary from run to run, so their failures alert at once.
* **Unjudged is visible.** A timing finding measured while the host was busy (``disturbed``) and a
  drift series whose value was disturbed, or whose confirmation could not be made, was not judged.
  The judged share is the judged part of what could be judged tonight: timing findings applicable
  on this host and scale, and drift series of a timed or sampled metric that have enough history.
  A series still building its history (``insufficient_history``) is counted and shown, but left
  out of the share: it says something about the dataset's age, not about tonight, and counting it
  would make every first night of a new hardware label unjudged.

The threshold, :data:`JUDGED_SHARE_MIN` = 0.75: a run that judged fewer than three in four of the
timing comparisons it could judge is ``not_judged``. It alerts as such and never reads as passed,
because "passed" claims the seeds' conclusions held tonight, and with a quarter or more of them
unread the claim would rest on whichever cells happened to be quiet (a disturbance is rarely spread
evenly: it hits the cells that ran while it lasted, so a quarter of the findings unjudged is usually
whole suites or engines unjudged). Above it the share is still stated, so a run that judged 84 % (the
issue's "54 of 329 unjudged") says so instead of only "2 failed".
"""

from __future__ import annotations

import json
from typing import Any

#: The lowest judged share (timing findings and statistical drift series together) at which a run's verdict counts.
JUDGED_SHARE_MIN = 0.75

#: Metric kinds whose drift is judged statistically (names of contract C1 and the older ``timing``).
STATISTICAL_KINDS = frozenset({"timing", "timed", "sampled", "statistical"})

#: Verdicts of rows that were not judged tonight (counted against the judged share).
NOT_JUDGED = frozenset({"disturbed", "unconfirmed"})
#: Verdicts of drift rows left out of the share: there is nothing yet to judge them against.
NOT_JUDGEABLE = frozenset({"insufficient_history", "excluded", "not_applicable"})
#: Verdicts of failures that wait for (or failed to get) a confirmation: they do not alert by themselves.
PENDING = frozenset({"suspect", "unconfirmed"})
#: How the note of a night whose drift suspects span more than one version's regression would begins
#: (:func:`jsonbench.checks.confirm._mass_notes`): its alert words such a night as one finding, not one alarm a series.
MASS_NOTE = "tonight's host or harness:"


def details_of(row: dict[str, Any]) -> dict[str, Any]:
    """A row's details as a dict (they are JSON text once stamped)."""
    d = row.get("details")
    if isinstance(d, str):
        try:
            loaded = json.loads(d) if d else {}
        except ValueError:
            return {}
        return loaded if isinstance(loaded, dict) else {}
    return dict(d) if isinstance(d, dict) else {}


def is_timing_finding(row: dict[str, Any]) -> bool:
    return row.get("check_kind") == "reproduction" and row.get("engine_id") is not None and details_of(row).get("finding_kind") == "timing"


def is_statistical_drift(row: dict[str, Any]) -> bool:
    return row.get("check_kind") == "drift" and row.get("workload") is not None and details_of(row).get("metric_kind") in STATISTICAL_KINDS


def can_be_suspect(row: dict[str, Any]) -> bool:
    """A failure one more measurement may take back: a timing finding out of its band, a statistical drift."""
    if row.get("success"):
        return False
    if is_timing_finding(row):
        return row.get("verdict") == "fail" and row.get("observed") is not None and not details_of(row).get("problem")
    return is_statistical_drift(row) and row.get("verdict") == "drift"


def mark_suspects(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Turn every failure :func:`can_be_suspect` into verdict ``suspect`` (still unsuccessful); return those rows."""
    marked = []
    for r in rows:
        if can_be_suspect(r):
            r["verdict"] = "suspect"
            marked.append(r)
    return marked


def alerting(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The failed rows that alert: every failure but those waiting for a confirmation."""
    return [r for r in rows if not r.get("success") and r.get("verdict") not in PENDING]


def _share(judged: int, judgeable: int) -> float | None:
    return judged / judgeable if judgeable else None


def judged_share(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """How much of tonight's timing was judged: per timing findings, per drift series, and together.

    ``{"timing_findings": {"judged", "judgeable", "share"}, "drift_series": {"judged", "judgeable",
    "share", "insufficient_history"}, "judged", "judgeable", "share", "threshold"}``; a share is None
    when nothing could be judged (a run of deterministic facts only).
    """
    tf = [r for r in rows if is_timing_finding(r) and r.get("verdict") != "not_applicable"]
    ds = [r for r in rows if is_statistical_drift(r)]
    ds_judgeable = [r for r in ds if r.get("verdict") not in NOT_JUDGEABLE]
    tf_judged = sum(1 for r in tf if r.get("verdict") not in NOT_JUDGED)
    ds_judged = sum(1 for r in ds_judgeable if r.get("verdict") not in NOT_JUDGED)
    judged, judgeable = tf_judged + ds_judged, len(tf) + len(ds_judgeable)
    return {
        "timing_findings": {"judged": tf_judged, "judgeable": len(tf), "share": _share(tf_judged, len(tf))},
        "drift_series": {
            "judged": ds_judged,
            "judgeable": len(ds_judgeable),
            "share": _share(ds_judged, len(ds_judgeable)),
            "insufficient_history": sum(1 for r in ds if r.get("verdict") == "insufficient_history"),
        },
        "judged": judged,
        "judgeable": judgeable,
        "share": _share(judged, judgeable),
        "threshold": JUDGED_SHARE_MIN,
    }


def unjudged(share: dict[str, Any]) -> bool:
    """True when the judged share is below :data:`JUDGED_SHARE_MIN` (a run with nothing to judge is not unjudged)."""
    return share["share"] is not None and share["share"] < share.get("threshold", JUDGED_SHARE_MIN)


def judgement(rows: list[dict[str, Any]], share: dict[str, Any]) -> str:
    """The run in one word: ``failed`` (something alerts), ``not_judged``, ``suspect`` (confirmations pending) or ``passed``.

    A run that both failed a check and judged too little reads ``failed``; its judged share is stated beside it.
    """
    if alerting(rows):
        return "failed"
    if unjudged(share):
        return "not_judged"
    if any(r.get("verdict") == "suspect" for r in rows):
        return "suspect"
    return "passed"


def _pct(share: float | None) -> str:
    return "n/a" if share is None else f"{100 * share:.0f} %"


def describe_share(share: dict[str, Any]) -> str:
    """One line for the summary, the alert and the report."""
    tf, ds = share["timing_findings"], share["drift_series"]
    return (
        f"judged {share['judged']} of {share['judgeable']} ({_pct(share['share'])}; not judged below {_pct(share['threshold'])}): "
        f"timing findings {tf['judged']} of {tf['judgeable']} ({_pct(tf['share'])}), "
        f"drift series {ds['judged']} of {ds['judgeable']} ({_pct(ds['share'])}; {ds['insufficient_history']} still building history)"
    )
