"""Planted wrong results in real history, judged by the real drift check: the hands of checkcheck and drift-recheck.

A plant moves rows of a copy of recorded runs (a slower version, a slower harness, a changed count) and hands the copy
to :func:`jsonbench.history.drift.drift_frame`, the very code a night runs; what alarmed is read back as series keys
``(suite, engine_id, workload, variant, metric)``. Durations are multiplied by a slowdown and rates divided by it
(the units :mod:`jsonbench.history.hostspeed` names); everything else a plant leaves alone.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from jsonbench.checks.library import Library
from jsonbench.dataset.measurement import HOST_SUITE
from jsonbench.history.hostspeed import DURATION_UNITS, RATE_UNITS

SeriesKey = tuple[str, ...]


def benchmarked(df: pd.DataFrame) -> pd.Series:
    """The rows a regression can move: every row but the canary's.

    The canary's rows carry the engine of the cell they sat beside, but they time the host before that engine starts. A
    slower version or harness leaves them as measured; moved with it, they would say "the host was slower", which drift
    takes out on purpose.
    """
    return df["suite"] != HOST_SUITE


def engine_rows(df: pd.DataFrame, engine_id: str) -> pd.Series:
    """The rows a slower ``engine_id`` moves: its own timings, not the canary beside its cells (:func:`benchmarked`)."""
    return (df["engine_id"] == engine_id) & benchmarked(df)


def scale_rows(df: pd.DataFrame, mask: pd.Series, factor: float) -> None:
    """Multiply value, spread and samples of the masked rows by ``factor`` (in place)."""
    for i in df.index[mask]:
        v = df.at[i, "value"]
        if v is not None and not (isinstance(v, float) and math.isnan(v)):
            df.at[i, "value"] = float(v) * factor
        sp = df.at[i, "spread"]
        if sp is not None and not (isinstance(sp, float) and math.isnan(sp)):
            df.at[i, "spread"] = float(sp) * abs(factor)
        s = df.at[i, "samples"]
        if s is not None and len(s):
            df.at[i, "samples"] = [float(x) * factor for x in s]


def slow(df: pd.DataFrame, mask: pd.Series, factor: float) -> pd.Series:
    """Slow the masked rows down by ``factor`` (in place); the mask of the rows it moved (durations and rates only)."""
    dur = mask & df["unit"].isin(DURATION_UNITS) & (df["status"] == "ok")
    rate = mask & df["unit"].isin(RATE_UNITS) & (df["status"] == "ok")
    scale_rows(df, dur, factor)
    scale_rows(df, rate, 1.0 / factor)
    return dur | rate


def drift_all(
    tonight: pd.DataFrame, dataset: pd.DataFrame, run: dict[str, Any], lib: Library, record: dict[str, Any] | None
) -> pd.DataFrame:
    """Every suite's drift frame of ``tonight`` (the real drift check, the run's false-discovery control included).

    The canary's rows are no suite of their own here, as in the night's check (``checks.examine``): drift reads them as
    the host's move beside each cell and never judges them as series. Judged here, they raised alarms no night could
    raise (``host/postgres-16`` and ``host/postgres-17`` on the honest nights of two recorded hosts)."""
    from jsonbench.history.drift import drift_frame

    frames = [
        drift_frame(tonight, dataset, run, str(s), lib.drift_policy(str(s)), calibration=record, policies=lib.drift_policy)
        for s in sorted(tonight["suite"].unique())
        if s != HOST_SUITE
    ]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _series_keys(d: pd.DataFrame) -> set[SeriesKey]:
    cols = d[["suite", "engine_id", "workload", "variant", "metric"]]
    return {(str(s), str(e), str(w), str(v), str(m)) for s, e, w, v, m in cols.itertuples(index=False)}


def alarms(frame: pd.DataFrame) -> set[SeriesKey]:
    """The series a drift frame alarmed on (verdict ``drift``)."""
    return _series_keys(frame[frame["verdict"] == "drift"] if not frame.empty else frame)


def judged(frame: pd.DataFrame) -> set[SeriesKey]:
    """The series a drift frame judged."""
    return _series_keys(frame[frame["judged"] == "yes"] if not frame.empty else frame)


def keys_of(df: pd.DataFrame, mask: pd.Series) -> set[SeriesKey]:
    """The series of the masked rows."""
    return _series_keys(df[mask])


def reference_runs(frame: pd.DataFrame) -> dict[SeriesKey, int]:
    """For each judged series of a drift frame, how many earlier runs its window test had as reference.

    That is its history (``history_n``: the quiet runs of tonight's design within drift's window) from the last change
    point Otava found in it (``change_points``: an old change is the new normal). A plant's claim ("the series whose
    noise allows it") is only as good as the reference drift really had: a count of every earlier run overstates it
    where some were of another design, disturbed, or before a change point.
    """
    import json

    out: dict[SeriesKey, int] = {}
    if frame.empty:
        return out
    for r in frame[frame["judged"] == "yes"].itertuples(index=False):
        cuts = [int(c.get("index_in_history", 0)) for c in json.loads(str(r.change_points or "[]")) if isinstance(c, dict)]
        base = max(cuts, default=0)
        out[(str(r.suite), str(r.engine_id), str(r.workload), str(r.variant), str(r.metric))] = max(int(r.history_n) - base, 0)
    return out


def family_reference_runs(frame: pd.DataFrame) -> dict[SeriesKey, int]:
    """For each judged series, the reference its family's way had: where tonight measured ``HOST_MIN_FAMILIES`` engines
    of its suite or more, drift judges the family against the versions beside it on the runs where they ran beside it
    (``history.drift._beside``), so only the runs of its reference (:func:`reference_runs`) in which that many engines
    of the suite were judged count; elsewhere its whole reference."""
    import json

    from jsonbench.history.stats import HOST_MIN_FAMILIES

    whole = reference_runs(frame)
    if frame.empty:
        return whole
    judged = frame[frame["judged"] == "yes"]
    out: dict[SeriesKey, int] = {}
    for _, rows in judged.groupby("suite"):
        engines = set(rows["engine_id"].astype(str))
        per_run: dict[str, set[str]] = {}
        refs: dict[SeriesKey, list[str]] = {}
        for r in rows.itertuples(index=False):
            key: SeriesKey = (str(r.suite), str(r.engine_id), str(r.workload), str(r.variant), str(r.metric))
            hist = [str(x) for x in json.loads(str(r.history_runs or "[]"))]
            refs[key] = hist[len(hist) - whole.get(key, len(hist)) :]
            for run in hist:
                per_run.setdefault(run, set()).add(str(r.engine_id))
        common = {run for run, es in per_run.items() if len(es) >= HOST_MIN_FAMILIES}
        for k, ref in refs.items():
            out[k] = sum(run in common for run in ref) if len(engines) >= HOST_MIN_FAMILIES else whole.get(k, 0)
    return out


def noise_allows(record: dict[str, Any], key: SeriesKey, ref_runs: int, nights: int, factor: float, family_ref: int | None = None) -> bool:
    """Whether drift can see one series moved by ``factor`` when its whole engine moved, over ``nights`` and a reference
    of ``ref_runs``: the claim "of the series whose noise allows it", by the two ways drift has to see it.

    * **Its family's way.** A series is tested at the family's level (``noise.FAMILY_LEVEL``) only in a family that was
      selected, so both must allow it: the family's sigma (the median of its timings) and the series' own.
    * **Alone.** Otherwise it is a lone series, tested at BH ``q / m`` over the run's series under the honest runs' tail
      (``noise.thresholds``), a far larger change.

    Counting the series' own mds at the family's level alone claimed series whose family the
    noise hides, which drift cannot test at that level. ``family_ref`` is the reference of its family's way
    (:func:`family_reference_runs`; ``ref_runs`` when not given).
    """
    from jsonbench.history.noise import tail_of
    from jsonbench.history.stats import family_mds, thresholds

    series = (record.get("series") or {}).get("/".join(key)) or {}
    family = (record.get("families") or {}).get(f"{key[0]}/{key[1]}") or {}
    change = factor - 1
    s_sigma, f_sigma = float(series.get("sigma") or 99), float(family.get("sigma") or 99)
    fref = ref_runs if family_ref is None else family_ref
    by_family = fref >= 1 and (
        family_mds(s_sigma, ref_runs=fref, nights=nights) <= change and family_mds(f_sigma, ref_runs=fref, nights=nights) <= change
    )
    m = int((record.get("method") or {}).get("m_series") or 1)
    tails = record.get("tails") or {}
    alone = thresholds(s_sigma, m, ref_runs=ref_runs, nights=nights, tail=tail_of(tails, key[0], series.get("kind")))[1] <= change
    return by_family or alone
