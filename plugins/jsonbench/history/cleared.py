"""Earlier nights as a later night's history reads them: a value its confirmation cleared reads as its re-measurement.

A drift suspect is measured again in the same DAG run on a fresh engine (:mod:`jsonbench.checks.confirm`); when
the re-measurement passes, the first value was not reproduced and the suspect is ``cleared``. The measurement
dataset keeps the first value (the night as it was measured: the report, the trends and the record read it). A
later night's drift must not: its windows of the last two and three nights would judge the same unreproduced value
again, and that night's confirmation, which measures only tonight again, could never clear it: a quota night
would fail on a WAL count whose first value of the night before (+3.3 %) its own re-measurement had cleared.

So the history reads, for each cleared series of an earlier run, the confirmation's row in its place, under the
night's run id and date: still one value a night, measured once on a fresh start. When the re-measurement cannot be
read (its file removed or damaged) the first value is left out of the history. Confirmed and unconfirmed values stay
as measured: a confirmed one is a real change, and an unconfirmed one was never told apart. Tonight's own rows are
never touched (a check run again on a night that was confirmed before judges the night as measured).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from jsonbench.cell import CONFIRMATION_SUFFIX
from jsonbench.dataset.read import CONFIRMATIONS, VALIDATIONS, read_dataset_report

log = logging.getLogger(__name__)

#: What names one value of a run (a measurement row, a drift validation row and a confirmation row alike).
KEY = ("suite", "engine_id", "workload", "variant", "metric")
#: What a value takes from the night it stands in for.
_RUN_COLUMNS = ("run_id", "logical_date", "run_date", "run_key")


@dataclass
class Cleared:
    """What the history of a results folder reads otherwise than measured: each earlier cleared value, and how."""

    #: ``(run_id, *KEY)`` of every cleared drift value read, replaced or left out.
    replaced: list[tuple[str, ...]] = field(default_factory=list)
    left_out: list[tuple[str, ...]] = field(default_factory=list)
    #: dataset files that could not be read (validations or confirmations): what they cleared stays as measured
    damaged: list[str] = field(default_factory=list)

    def note(self) -> str | None:
        """One line for the check's notes, or None when nothing was read otherwise."""
        if not (self.replaced or self.left_out or self.damaged):
            return None
        parts = [f"{len(self.replaced)} earlier value(s) their confirmation cleared read as re-measured"]
        if self.left_out:
            parts.append(f"{len(self.left_out)} left out (their re-measurement could not be read)")
        if self.damaged:
            parts.append(f"unreadable, so what they cleared stays as measured: {', '.join(self.damaged)}")
        return "history: " + "; ".join(parts)


def _keys(df: pd.DataFrame, run_ids: pd.Series) -> pd.Series:
    """One text key a row: its run id and :data:`KEY` (nulls as empty text, so a row without a variant matches)."""
    key = run_ids.astype("string").fillna("")
    for col in KEY:
        part = df[col].astype("string").fillna("") if col in df else pd.Series("", index=df.index, dtype="string")
        key = key + "\x1f" + part
    return key


def cleared_keys(validations: pd.DataFrame, suffix: str = CONFIRMATION_SUFFIX) -> pd.DataFrame:
    """``(run_id, *KEY)`` of every drift value its confirmation cleared (confirmation runs' own rows aside)."""
    cols = ["run_id", *KEY]
    if validations.empty or not {"check_kind", "verdict", *cols} <= set(validations.columns):
        return pd.DataFrame(columns=cols)
    v = validations[(validations["check_kind"] == "drift") & (validations["verdict"] == "cleared")]
    v = v[~v["run_id"].astype(str).str.endswith(suffix) & v["engine_id"].notna() & v["metric"].notna()]
    return v[cols].drop_duplicates().reset_index(drop=True)


def as_history(
    measurements: pd.DataFrame,
    validations: pd.DataFrame,
    confirmations: pd.DataFrame,
    tonight: str | None = None,
    suffix: str = CONFIRMATION_SUFFIX,
) -> tuple[pd.DataFrame, Cleared]:
    """``measurements`` as a later night's drift reads them (see the module): each earlier cleared value swapped for its
    confirmation's values, or left out when there is none; ``tonight``'s rows as measured."""
    out = Cleared()
    cleared = cleared_keys(validations, suffix)
    if tonight is not None:
        cleared = cleared[cleared["run_id"].astype(str) != tonight]
    if cleared.empty or measurements.empty:
        return measurements, out
    wanted = set(_keys(cleared, cleared["run_id"]))
    hit = _keys(measurements, measurements["run_id"]).isin(wanted)
    if not hit.any():
        return measurements, out
    first = measurements[hit]
    first_keys = _keys(first, first["run_id"])
    swapped = pd.Series(False, index=first.index)
    again = pd.DataFrame(columns=measurements.columns)
    if not confirmations.empty and {"run_id", *KEY} <= set(confirmations.columns):
        conf = confirmations[confirmations["run_id"].astype(str).str.endswith(suffix)]
        conf = conf[conf["workload"] != "_cell"]
        base = conf["run_id"].astype(str).str.slice(0, -len(suffix))
        conf = conf.assign(_key=_keys(conf, base))
        conf = conf[conf["_key"].isin(wanted)].drop_duplicates("_key", keep="last").set_index("_key")
        swapped = first_keys.isin(conf.index)
        # What was measured comes from the confirmation; the night's identity (run id, date, partition, and any column a
        # reader added) stays the first row's, and so does its place: the value stands in for the night's in every history.
        again = conf.loc[first_keys[swapped]].reset_index(drop=True)
        night = first[swapped].reset_index(drop=True)
        for col in measurements.columns:
            if col not in again.columns or col in _RUN_COLUMNS:
                again[col] = night[col].to_numpy()
        again = again[list(measurements.columns)]
        again.index = first.index[swapped.to_numpy()]
    out.replaced = sorted(tuple(k.split("\x1f")) for k in first_keys[swapped])
    out.left_out = sorted(tuple(k.split("\x1f")) for k in first_keys[~swapped])
    # a value left out is dropped, not marked disturbed: a disturbed row would mark its cell's unflagged rows too
    frame = pd.concat([measurements[~hit], again]).sort_index() if len(again) else measurements[~hit]
    return frame, out


def read_as_history(
    results_dir: str | Path, measurements: pd.DataFrame, tonight: str | None = None, **filters: Any
) -> tuple[pd.DataFrame, Cleared]:
    """:func:`as_history` over a results folder's validations and confirmations (``filters``: as ``read_dataset``'s).

    A damaged validation or confirmation file is skipped and named in the result: what it cleared stays as measured
    (the check that reads it reports the file as damaged, too)."""
    val = read_dataset_report(results_dir, VALIDATIONS, check_kind="drift", verdict="cleared", **filters)
    conf = read_dataset_report(results_dir, CONFIRMATIONS, **filters) if val.table.num_rows else None
    frame, out = as_history(
        measurements,
        val.table.to_pandas(),
        conf.table.to_pandas() if conf is not None else pd.DataFrame(),
        tonight=tonight,
    )
    out.damaged = [str(d.path) for d in (*val.damaged, *(conf.damaged if conf is not None else ()))]
    if out.replaced or out.left_out:
        log.info("history of %s: %d cleared value(s) read as re-measured, %d left out", results_dir, len(out.replaced), len(out.left_out))
    return frame, out
