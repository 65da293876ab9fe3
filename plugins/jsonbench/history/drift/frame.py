"""``drift_frame``: one suite of a night judged against its history, stage after stage.

Without a calibration record, each suite is judged on its own (:func:`~jsonbench.history.drift.suite.prepare_suite`).
With one, the false-discovery rate is controlled across the run, not per suite: the checks judge one suite at a time,
so the first suite's call judges every suite of the run as far as it can (:func:`judge_run`: each suite prepared, the
families tested, Benjamini-Hochberg over every calibrated series), keeps that for the run's other suites, and each
call then finishes its own suite's calibrated rows (:func:`~jsonbench.history.drift.verdict.judge_calibrated`).
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from jsonbench.compare.inherit import ComparedBuild
from jsonbench.dataset.measurement import HOST_SUITE
from jsonbench.history.changepoints import detect
from jsonbench.history.drift.families import FamilyJudgement
from jsonbench.history.drift.family_verdicts import judge_families
from jsonbench.history.drift.policy import Settings
from jsonbench.history.drift.rows import typed_frame
from jsonbench.history.drift.suite import Judging, Kinds, PreparedSuite, prepare_suite
from jsonbench.history.drift.verdict import judge_calibrated
from jsonbench.history.drift.workloads import workload_of
from jsonbench.history.hostspeed import canary_table
from jsonbench.history.noise import load_record
from jsonbench.history.stats import benjamini_hochberg


@dataclass(frozen=True)
class RunJudgement:
    """Every suite of a run prepared, its families judged, and the run's Benjamini-Hochberg adjusted p-values per
    calibrated series (``(suite, row)``) over ``m`` series."""

    prepared: dict[str, PreparedSuite]
    families: FamilyJudgement
    adjusted: dict[tuple[str, int], float]
    m: int


#: The last run judged, for the run's other suites: (key, tonight's frame, the dataset, the judgement), the frames held
#: weakly and compared by identity (a new frame of the same run is judged again).
_LAST: dict[str, tuple[str, Any, Any, RunJudgement]] = {}


def judge_run(j: Judging, policy: dict[str, Any], policies: Any, kinds: Kinds | None = None, suite: str | None = None) -> RunJudgement:
    """Every suite of the run prepared (``policies(suite)`` gives each suite's policy, default ``policy``), the families
    tested, and Benjamini-Hochberg over every calibrated series of the run; ``kinds`` serves ``suite`` alone."""
    record = j.record or {}
    key = f"{j.run.get('run_id')}|{j.run.get('hardware_label')}|{j.run.get('scale')}|{record.get('created_at')}|{len(record.get('series') or {})}"
    key += f"|{hash(j.compared)}"
    hit = _LAST.get("entry")
    if hit and hit[0] == key and hit[1]() is j.tonight and hit[2]() is j.dataset:
        return hit[3]
    suites = sorted(str(x) for x in j.tonight.loc[j.tonight["status"] == "ok", "suite"].unique())
    prepared = {sx: prepare_suite(j, sx, policies(sx) if policies else policy, kinds if sx == suite else None) for sx in suites}
    s = Settings.of(policy)
    tested = [t for pr in prepared.values() for t in pr.tested]
    families = judge_families(tested, record, s.q, s.family_verdict_p)
    adj = benjamini_hochberg([t.test.pvalue for t in tested]) if tested else []
    result = RunJudgement(prepared, families, {t.series.key: a for t, a in zip(tested, adj, strict=True)}, max(len(tested), 1))
    try:
        _LAST["entry"] = (key, weakref.ref(j.tonight), weakref.ref(j.dataset), result)
    except TypeError:
        pass
    return result


def _record(run: dict[str, Any], calibration: dict[str, Any] | None | bool) -> dict[str, Any] | None:
    """The calibration record a frame is judged with: True loads the run's label and scale's, a dict is the record."""
    if calibration is True:
        return load_record(str(run.get("hardware_label")), str(run.get("scale")), run.get("results_dir"))
    return calibration or None


def drift_frame(
    tonight: pd.DataFrame,
    dataset: pd.DataFrame,
    run: dict[str, Any],
    suite: str,
    policy: dict[str, Any],
    detector: Any = None,
    calibration: dict[str, Any] | None | bool = True,
    policies: Any = None,
    kinds: Kinds | None = None,
    compared: Sequence[ComparedBuild] = (),
) -> pd.DataFrame:
    """Judge every measured metric of ``suite`` in tonight's rows against ``dataset``'s history.

    ``detector`` is :func:`jsonbench.history.changepoints.detect` unless a test passes another. Deterministic
    metrics are judged row by row. Statistical (``timed`` and ``sampled``) ones with an entry in the
    calibration record of the run's hardware label and scale (``calibration``: True loads it, a dict is
    the record, None/False judges without one) are judged by a window test against their own noise
    with the false-discovery rate controlled across every suite of the run (Benjamini-Hochberg at
    ``fdr_q``; ``policies(suite)`` gives the other suites' policies, default: this one); Otava only
    segments their history. Statistical ones without an entry are handed to Otava (one subprocess serves
    every series) and judged by its change points with the unit's ``min_magnitude``. ``compared``: the published
    comparisons (:func:`jsonbench.compare.inherit.compared_builds`) through which a build without an entry of its own
    inherits the noise of a build it was found alike with.
    """
    detector = detect if detector is None else detector
    record = _record(run, calibration)
    if record is None or not policy.get("calibrated", True):
        return typed_frame(prepare_suite(Judging(tonight, dataset, run, detector, None), suite, policy, kinds).rows)
    # Tonight's canary last, so a confirmation's (substituted into tonight) wins over the night's own.
    canary = canary_table(pd.concat([dataset[dataset["suite"] == HOST_SUITE], tonight[tonight["suite"] == HOST_SUITE]], ignore_index=True))
    judging = Judging(tonight, dataset, run, detector, record, canary, tuple(compared))
    judged = judge_run(judging, policy, policies, kinds, suite)
    prep = judged.prepared.get(suite) or prepare_suite(judging, suite, policy, kinds)
    s = Settings.of(policy)
    rows = list(prep.rows)
    for t in prep.tested:
        c = t.series
        p_adj = judged.adjusted.get(c.key, 1.0)
        call = judged.families.call(c.key)
        fields = judge_calibrated(rows[c.row], t, call, judged.families.host_move((c.suite, c.engine_id)), p_adj, judged.m, s, record)
        heard = judged.families.unit_hearing(c.suite, c.engine_id, workload_of(c)) if c.timed else {}
        rows[c.row] = {**rows[c.row], **fields, "hearing": json.dumps(heard) if heard else None}
    return typed_frame(rows)
