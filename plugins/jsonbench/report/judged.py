"""What the report says about how much of a run was judged, and about its suspects' confirmations.

Two things a reader must see before the scorecard (contract C3): the judged share of the run's timing
findings and drift series (a run below :data:`jsonbench.checks.verdicts.JUDGED_SHARE_MIN` is *not
judged*, and its badge never reads as passed), and every suspect with both of its measurements: the
night's and its confirmation's, with the band and the final verdict (confirmed, cleared, unconfirmed).
This module says which judgement a run gets; the box's values are prepared by
:func:`jsonbench.report.run_blocks.judged_context` and drawn by ``templates/judged.html.j2``.
"""

from __future__ import annotations

import pandas as pd

from jsonbench.checks.verdicts import judged_share, judgement

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
