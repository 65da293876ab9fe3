"""What the report says about how much of a run was judged, and about its suspects' confirmations.

Two things a reader must see before the scorecard (contract C3): the judged share of the run's timing
findings and drift series (a run below :data:`jsonbench.checks.verdicts.JUDGED_SHARE_MIN` is *not
judged*, and its badge never reads as passed), and every suspect with both of its measurements: the
night's and its confirmation's, with the band and the final verdict (confirmed, cleared, unconfirmed).
"""

from __future__ import annotations

from html import escape

import pandas as pd

from jsonbench.checks.verdicts import describe_share, details_of, judged_share, judgement
from jsonbench.report.charts import fmt

#: The badge of a run by its judgement: (passed?, text). None is grey: neither passed nor failed.
BADGES: dict[str, tuple[bool | None, str]] = {
    "passed": (True, "all checks passed"),
    "failed": (False, "checks FAILED"),
    "not_judged": (None, "NOT JUDGED"),
    "suspect": (None, "suspects not yet confirmed"),
    "not_checked": (None, "not checked"),
}


def run_judgement(vrun: pd.DataFrame) -> str:
    """``passed``, ``failed``, ``not_judged``, ``suspect`` or ``not_checked`` from a run's validation rows."""
    if vrun.empty:
        return "not_checked"
    rows = [dict(r) for r in vrun.to_dict("records")]
    return judgement(rows, judged_share(rows))


def badge_of(vrun: pd.DataFrame) -> tuple[bool | None, str]:
    """``(ok, text)`` of the run's badge: a run that judged too little is grey and says so, never green."""
    return BADGES[run_judgement(vrun)]


def _num(v: object) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and not pd.isna(v) else None


def judgement_box(vrun: pd.DataFrame) -> str:
    """The judged share, a NOT JUDGED warning below the threshold, and each confirmation with both measurements."""
    if vrun.empty:
        return ""
    rows = [dict(r) for r in vrun.to_dict("records")]
    share = judged_share(rows)
    verdict = judgement(rows, share)
    head = (
        "<b>NOT JUDGED:</b> too little of this run's timing could be judged (measured while the host was busy, or not "
        "confirmed); it does not count as passed. "
        if verdict == "not_judged" or (share["share"] is not None and share["share"] < share["threshold"])
        else ""
    )
    items = []
    for r in rows:
        d = details_of(r)
        if "confirmation" not in d:
            continue
        first, again = d.get("first") or {}, d.get("confirmation") or {}
        where = " · ".join(escape(str(x)) for x in (r.get("suite"), r.get("engine_id")) if isinstance(x, str) and x)
        items.append(
            f"<li><b>{escape(str(r.get('verdict')))}</b> {where}: {escape(str(r.get('expectation')))}: first "
            f"{escape(fmt(_num(first.get('observed'))))}, confirmation {escape(fmt(_num(again.get('observed'))))}, expected "
            f"[{escape(fmt(_num(first.get('min_value'))))}, {escape(fmt(_num(first.get('max_value'))))}] "
            f"<span class='muted'>({escape(str(again.get('why', '')))})</span></li>"
        )
    pending = sum(1 for r in rows if r.get("verdict") == "suspect")
    cls = "warnbox" if head or items or pending else "muted"
    return (
        f"<div class='{cls}' id='judged'>{head}{escape(describe_share(share))}."
        + (f" {pending} suspect(s) not yet measured again." if pending else "")
        + (f"<br><b>Measured twice before any timing alert:</b><ul>{''.join(items)}</ul>" if items else "")
        + "</div>"
    )
