"""Which earlier runs count as a suite's history tonight: the same label, scale and suite, published, quiet, one a night.

A measurement row whose ``quiet`` column is false (the host was busy beyond the matrix's ``quiet_window`` threshold
during its measure windows) is left out of every statistical history; rows without the column count as quiet. Which
design and input a history keeps is :mod:`~jsonbench.history.drift.designs`'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from jsonbench.history.drift.designs import design_restarts, same_input
from jsonbench.history.drift.rows import SeriesKey, quiet_of, series_key


def history_of(dataset: pd.DataFrame, run: dict[str, Any], suite: str) -> pd.DataFrame:
    """Earlier published rows comparable with ``run``: same hardware label, scale and suite, status ok."""
    tonight = pd.Timestamp(run["logical_date"]) if run.get("logical_date") else None
    if tonight is not None and tonight.tzinfo is None:
        tonight = tonight.tz_localize("UTC")
    h = dataset[
        (dataset["run_id"] != run["run_id"])
        & (dataset["hardware_label"] == run["hardware_label"])
        & (dataset["scale"] == run["scale"])
        & (dataset["suite"] == suite)
        & (dataset["status"] == "ok")
    ]
    if tonight is not None:
        h = h[h["logical_date"] <= tonight]
    return h


def _unrecorded(q: Any) -> bool:
    """Whether a ``quiet`` cell is null (the row was timed outside a measure window, or the run recorded none)."""
    return q is None or q is pd.NA or (isinstance(q, float) and math.isnan(q))


def fill_quiet(df: pd.DataFrame) -> pd.DataFrame:
    """A row whose ``quiet`` is null in a cell that recorded it elsewhere takes the cell's verdict.

    The measure windows record ``quiet``; rows timed outside them (the setup task's load, index and
    vacuum times) come back null. They ran on the same host during the same cell, so they are as
    disturbed as the cell's worst window: leaving them "unknown" (judged as quiet) would let a busy
    hour's load times raise drift alarms. Runs that recorded no ``quiet`` at all stay null (quiet).
    """
    if "quiet" not in df.columns or df.empty:
        return df
    cell: dict[tuple[Any, Any], bool] = {}
    for rid, eid, q in zip(df["run_id"], df["engine_id"], df["quiet"], strict=True):
        if _unrecorded(q):
            continue
        cell[(rid, eid)] = cell.get((rid, eid), True) and bool(q)
    if not cell:
        return df
    filled = [cell.get((rid, eid)) if _unrecorded(q) else q for rid, eid, q in zip(df["run_id"], df["engine_id"], df["quiet"], strict=True)]
    df = df.copy()
    df["quiet"] = pd.Series(filled, index=df.index, dtype="object")
    return df


def reference_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The rows drift may judge a later night against: every row not measured in a busy window (a row without a flag of
    its own takes its cell's, :func:`fill_quiet`), as each history is read below."""
    filled = fill_quiet(df)
    return filled.loc[pd.Series([quiet_of(r) is not False for r in filled.itertuples(index=False)], index=filled.index, dtype=bool)]


def history_series(hist: pd.DataFrame) -> dict[SeriesKey, list[Any]]:
    """One pass over the history, oldest first: per series key, one record per run (the last one wins)."""
    groups: dict[SeriesKey, list[Any]] = {}
    if not hist.empty:
        for x in hist.sort_values(["logical_date", "run_id"]).itertuples(index=False):
            series = groups.setdefault(series_key(x), [])
            if series and series[-1].run_id == x.run_id:
                series[-1] = x
            else:
                series.append(x)
    return groups


@dataclass(frozen=True)
class SuiteHistory:
    """A suite's rows tonight and its history, as every judge of the suite reads them.

    ``now``: tonight's published rows of the suite; ``history``: the earlier rows of tonight's designs and inputs
    (quiet flags filled per cell); ``series``: the history per series key, oldest first, one record a run;
    ``restarts``: per engine whose earlier runs another design set aside, why (:func:`design_restarts`).
    """

    now: pd.DataFrame
    history: pd.DataFrame
    series: dict[SeriesKey, list[Any]]
    restarts: dict[str, str]


def select_history(tonight: pd.DataFrame, dataset: pd.DataFrame, run: dict[str, Any], suite: str) -> SuiteHistory:
    """Tonight's rows of ``suite`` and the history each is judged against (:class:`SuiteHistory`)."""
    now = fill_quiet(tonight[(tonight["suite"] == suite) & (tonight["status"] == "ok")].copy())
    every = history_of(dataset, run, suite)
    hist = fill_quiet(same_input(every, now).copy())
    restarts = design_restarts(every, hist, now)
    for df in (now, hist):
        df["engine_build"] = df["engine_build"].fillna("")
    return SuiteHistory(now, hist, history_series(hist), restarts)


def not_judgeable(row: dict[str, Any], history: int, needs: int, method: str) -> dict[str, Any] | None:
    """Why tonight's statistical row cannot be judged (the fields that say so), or None when it can.

    History comes first: a series with too few quiet earlier runs could not be judged busy or not, so it stays
    ``insufficient_history`` (the note adds that tonight was busy too). Counting it as ``disturbed`` made
    every first night of a hardware label read not judged. Then a busy window: ``disturbed``, not judged.
    """
    busy = row["quiet"] is False
    if history < needs:
        also = f"; also measured while the host was busy (host_other_cpu {row['host_other_cpu']})" if busy else ""
        return {"note": f"{history} quiet earlier run(s); {method} needs {needs}{also}"}
    if busy:
        return {
            "verdict": "disturbed",
            "note": f"measured while the host was busy (host_other_cpu {row['host_other_cpu']}); not judged, left out of later histories",
        }
    return None


def quiet_runs(g: list[Any], window: int) -> list[Any]:
    """A series' quiet earlier runs, the last ``window`` of them."""
    return [x for x in g if quiet_of(x) is not False][-window:]
