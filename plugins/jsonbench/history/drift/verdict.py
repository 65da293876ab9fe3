"""A calibrated row's verdict: drift when the lone test (BH over the run) or its family discovers the series, and the
change exceeds the minimum effect (``min_effect``; ``sampled_min_effect`` for a count or a volume).

Each row carries its ``pvalue``, ``p_adjusted``, ``sigma``, ``threshold`` and ``mds`` (the minimum detectable shift of
the series alone), and a note that says how it was judged.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from typing import Any

from jsonbench.history.drift.families import FamilyCall
from jsonbench.history.drift.policy import Settings
from jsonbench.history.drift.series import CalibratedSeries
from jsonbench.history.drift.window import WindowedSeries
from jsonbench.history.drift.wording import (
    common_words,
    family_words,
    harness_words,
    host_words,
    hosts_words,
    version_words,
    workload_words,
)
from jsonbench.history.noise import tail_of
from jsonbench.history.stats import HOST_PRIOR_DF, family_mds, lone_bounds, tail_z, window_se


def record_words(record: Mapping[str, Any] | None) -> str:
    """The calibration record a method names: its scale, when it was made, and from how many runs."""
    rec = record or {}
    n_runs = sum(1 for x in rec.get("runs", []) if x.get("used") != "not used")
    return f"record {rec.get('scale')} of {rec.get('created_at', '?')}, {n_runs} runs"


def own_words(c: CalibratedSeries) -> str:
    """Where the sigma comes from: the record's level inside one host, scaled to this host's family and learned from
    its own nights (how many, and how many far from the others were left out of it and of the reference)."""
    own, record = c.own, float(c.entry["sigma"])
    if own is None:
        return ""
    scaled = f"the record's {record:.1%}" + (f" scaled to this host's family ({own.prior:.1%})" if own.prior != record else "")
    if own.own is None or own.df <= 0:
        return f"no quiet night of this host's own yet: {scaled}; "
    apart = f"; {own.left_out} far from the others left out" if own.left_out else ""
    far = len(c.far)
    if far and far == own.left_out and c.base == 0:
        apart += ", of the reference too"
    elif far:
        apart += f"; {far} far from the others of its current level left out of the reference"
    return f"this host's own nights ({own.nights}, moving {own.own:.1%}{apart}) shrunk towards {scaled} ({own.df} df against {HOST_PRIOR_DF}); "


def _score(change: float, floor: float, lone_p: float, call: FamilyCall, q: float) -> float:
    """The drift score: how far beyond both the discovery (lone or by its family) and the minimum effect the change is."""
    big = abs(change) / math.log1p(floor)
    lone = q / lone_p if lone_p > 0 else 1e9
    fam = 1.0 / call.p_family if call.selected and call.p_family > 0 else (1e9 if call.selected else 0.0)
    return min(max(lone, fam), big, 1e9)


def judge_calibrated(
    row: Mapping[str, Any],
    t: WindowedSeries,
    call: FamilyCall,
    host_move: float,
    p_adj: float,
    m: int,
    s: Settings,
    record: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The fields of a calibrated row judged: its band, p-values, threshold, mds, score, verdict, method and note."""
    c, test = t.series, t.test
    log_change, nights, ref_n = call.window or (test.change, test.nights, test.ref_runs)
    lone_ref = c.reference_runs
    n_ref = max(len(lone_ref), 1)
    se1 = window_se(c.sigma, 1, n_ref, c.host_sigma, test.mix.get(1, 0.0))
    z = tail_z(s.q / m, tail_of((record or {}).get("tails") or {}, str(row["suite"]), c.kind))
    # A count or a volume (kind sampled) needs only its own noise and 1 %; a timing also the 5 % no
    # nightly noise record should alarm below (min_effect).
    floor = s.sampled_min_effect if c.kind == "sampled" else s.min_effect
    thr, mds = lone_bounds(z, se1, floor)
    ref = math.exp(statistics.fmean(c.logs[i] for i in lone_ref))
    change = math.exp(log_change) - 1.0
    score = _score(log_change, floor, p_adj, call, s.q)
    note = (
        f"{nights} night(s) {change:+.1%} against {ref_n} earlier run(s); lone p {test.pvalue:.2g}, BH-adjusted {p_adj:.2g}; "
        + (
            version_words(call.version, call.p_family, s.family_verdict_p)
            if call.version is not None
            else workload_words(call.workload, call.p_family, s.family_verdict_p)
            if call.workload is not None
            else family_words(call.verdict, call.selected, call.sign, call.p_family, s.family_verdict_p)
        )
        + (common_words(call.sign, c.canary, harness_words(c.revisions, nights, c.base)) if call.common and call.selected else "")
        + host_words(c.canary, c.canary_note, host_move)
        + hosts_words(c.host_sigma, test.mix.get(nights))
        + own_words(c)
        + f"sigma {c.sigma:.1%}, lone threshold {thr:.1%}, lone mds {mds:.1%}, mds if its whole engine moves {family_mds(c.sigma, n_ref):.1%}"
    )
    return {
        "reference": ref,
        "lower": ref / (1 + thr),
        "upper": ref * (1 + thr),
        "relative_change": change,
        "pvalue": test.pvalue,
        "p_adjusted": p_adj,
        "threshold": thr,
        "mds": mds,
        "drift_score": score,
        "judged": "yes",
        "verdict": "drift" if score > 1 else "ok",
        "method": f"calibrated window test, BH q={s.q:g} over {m} series and over families ({record_words(record)})",
        "note": note,
    }
