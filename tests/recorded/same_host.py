"""A laptop host's last recorded night judged against its own earlier nights, honest and with wrong results planted.

Each host of :data:`HOSTS` ran six laptop nights of the whole matrix under one design (two engine starts a figure),
recorded in its folders. Its last night is judged as a night judges it (every suite but the canary's, the run's
false-discovery control, the committed record of ``local`` at laptop) with the five before it as history; each plant
moves tonight's rows as the maintainers' plants do (durations times a factor, rates divided by it, the canary's rows as
measured) and says which series it moved. Run as a module (``python -m tests.recorded.same_host [index into HOSTS]``)
it prints each plant's outcome.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import pandas as pd

from jsonbench import paths
from jsonbench.checks.library import load_library
from jsonbench.dataset.measurement import HOST_SUITE
from jsonbench.dataset.read import MEASUREMENTS, read_dataset_report
from jsonbench.history.drift import drift_frame
from jsonbench.history.hostspeed import DURATION_UNITS, RATE_UNITS
from jsonbench.history.noise import host_of, load_record

#: Each host with six laptop nights of its own: its folders, the last holding the night planted into. Its runs under a
#: CPU quota are not among its nights. The first is the quiet one (its nights move a timing about 3 %).
HOSTS: tuple[tuple[str, ...], ...] = (
    ("local-570a7f7-76df4b9f", "local-b1dda63-76df4b9f"),
    ("local-cd4c963-25b998b5", "local-866c2e0-25b998b5", "local-a183c39-25b998b5", "local-5592a10-25b998b5"),
)
FIRST = 0


def host_id(host: int) -> str:
    """The host ``recorded/hosts.json`` names for every folder of ``HOSTS[host]`` (the first 8 hex digits of its boot_id)."""
    import json

    folders = json.loads((paths.RECORDED_DIR / "hosts.json").read_text(encoding="utf-8"))["folders"]
    named = {folders[f]["host"] for f in HOSTS[host]}
    assert len(named) == 1, (HOSTS[host], named)
    return str(named.pop())


SQLITE = ("sqlite-3.45.0", "sqlite-3.46.1", "sqlite-3.54.1")
#: A plant: the rows it moves in a copy of tonight's (in place), returning the mask of what it moved.
Plant = Callable[[pd.DataFrame], pd.Series]
SeriesKey = tuple[str, ...]
KEY = ["suite", "engine_id", "workload", "variant", "metric"]


def benchmarked(df: pd.DataFrame) -> pd.Series:
    """Every row but the canary's: a slower engine or harness leaves the host's own timing as measured."""
    return df["suite"] != HOST_SUITE


def scale_rows(df: pd.DataFrame, mask: pd.Series, factor: float) -> None:
    """Multiply value and samples of the masked rows by ``factor`` (in place)."""
    for i in df.index[mask]:
        v = df.at[i, "value"]
        if v is not None and not (isinstance(v, float) and math.isnan(v)):
            df.at[i, "value"] = float(v) * factor
        s = df.at[i, "samples"]
        if s is not None and len(s):
            df.at[i, "samples"] = [float(x) * factor for x in s]


def slow(df: pd.DataFrame, mask: pd.Series, factor: float) -> pd.Series:
    """Slow the masked timings down by ``factor`` (in place); the mask of the rows it moved."""
    dur = mask & df["unit"].isin(DURATION_UNITS) & (df["status"] == "ok")
    rate = mask & df["unit"].isin(RATE_UNITS) & (df["status"] == "ok")
    scale_rows(df, dur, factor)
    scale_rows(df, rate, 1.0 / factor)
    return dur | rate


def keys_of(df: pd.DataFrame) -> set[SeriesKey]:
    """The series of ``df``'s rows."""
    return {tuple(str(x) for x in k) for k in df[KEY].itertuples(index=False)}


@cache
def nights(host: int = FIRST) -> pd.DataFrame:
    """Every laptop row the host measured (not under a CPU quota), oldest night first."""
    ds = pd.concat(
        [read_dataset_report(paths.RECORDED_DIR / f, MEASUREMENTS, hardware_label="local").table.to_pandas() for f in HOSTS[host]],
        ignore_index=True,
    )
    hid = host_id(host)
    here = pd.Series([host_of(r).startswith(hid) and "+quota" not in host_of(r) for r in ds.itertuples(index=False)], index=ds.index)
    ds = ds[(ds["scale"] == "laptop") & here]
    return ds.sort_values(["logical_date", "run_id"], kind="stable").reset_index(drop=True)


def run_ids(host: int = FIRST) -> list[str]:
    """The host's nights, oldest first."""
    ds = nights(host)
    return list(ds.groupby("run_id")["logical_date"].min().sort_values().index)


@dataclass(frozen=True)
class Outcome:
    """A judged night: its drift frame and the series a plant moved (empty for an honest night)."""

    frame: pd.DataFrame
    moved: frozenset[tuple[str, ...]]

    @property
    def alarms(self) -> set[SeriesKey]:
        return keys_of(self.frame[self.frame["verdict"] == "drift"])

    @property
    def judged(self) -> set[SeriesKey]:
        return keys_of(self.frame[self.frame["judged"] == "yes"])

    @property
    def caught(self) -> set[tuple[str, ...]]:
        return self.alarms & self.moved

    def notes(self) -> list[str]:
        f = self.frame
        return [str(n) for n in f[f["verdict"] == "drift"]["note"]]


def judge(night: int = -1, plant: Plant | None = None, planted_before: int = 0, host: int = FIRST) -> Outcome:
    """Night ``night`` (an index into :func:`run_ids`) of ``host`` against the nights before it, ``plant`` laid over it
    and over the ``planted_before`` nights before it (a change that started that many nights earlier)."""
    ds, ids = nights(host), run_ids(host)
    upto = ids[: (night % len(ids)) + 1]
    ds = ds[ds["run_id"].isin(upto)].copy()
    moved = pd.Series(False, index=ds.index)
    if plant is not None:
        for rid in upto[len(upto) - 1 - planted_before :]:
            part = ds[ds["run_id"] == rid].copy()
            mask = plant(part)
            ds.loc[part.index] = part
            moved.loc[part.index] = mask
    tonight = ds[ds["run_id"] == upto[-1]].copy()
    run = {
        "run_id": upto[-1],
        "logical_date": pd.Timestamp(tonight["logical_date"].min()).isoformat(),
        "hardware_label": "local",
        "scale": "laptop",
        "results_dir": str(paths.RECORDED_DIR / HOSTS[host][-1]),
    }
    lib, record = load_library(), load_record("local", "laptop")
    frame = pd.concat(
        [
            drift_frame(tonight, ds, run, str(s), lib.drift_policy(str(s)), calibration=record, policies=lib.drift_policy)
            for s in sorted(tonight["suite"].unique())
            if s != HOST_SUITE
        ],
        ignore_index=True,
    )
    return Outcome(frame, frozenset(keys_of(ds[moved & (ds["run_id"] == upto[-1])])))


def _engine(engine: str, factor: float, suite: str | None = None, workload: str | None = None) -> Plant:
    def plant(df: pd.DataFrame) -> pd.Series:
        mask = (df["engine_id"] == engine) & benchmarked(df)
        if suite is not None:
            mask &= df["suite"] == suite
        if workload is not None:
            mask &= df["workload"] == workload
        return slow(df, mask, factor)

    return plant


def _json_extract(df: pd.DataFrame) -> pd.Series:
    mask = (
        (df["engine_id"] == "sqlite-3.54.1")
        & (df["suite"] == "sqlite_jsonb")
        & df["variant"].isin(["jsonb", "jsonb_file"])
        & df["metric"].str.startswith("extract_")
    )
    return slow(df, mask, 2.0)


def _every_sqlite(df: pd.DataFrame) -> pd.Series:
    return slow(df, df["engine_id"].isin(SQLITE) & benchmarked(df), 1.3)


def _datum(df: pd.DataFrame) -> pd.Series:
    mask = (df["suite"] == "catalogue") & (df["workload"] == "storage") & (df["metric"] == "avg_value_bytes")
    mask &= df["variant"] == "doc_document"
    scale_rows(df, mask, 237.05 / 234.70006)
    return mask


#: Each plant of the first night: name and how it moves tonight's rows.
FIRST_NIGHT: dict[str, Plant] = {
    "postgres-18 1.25x (every timing)": _engine("postgres-18", 1.25),
    "postgres-17 json_vs_jsonb 1.25x (one cell)": _engine("postgres-17", 1.25, "json_vs_jsonb"),
    "postgres-18 large_document_update 1.25x (one cell)": _engine("postgres-18", 1.25, "large_document_update"),
    "postgres-17 catalogue reads 1.5x (one workload)": _engine("postgres-17", 1.5, "catalogue", "reads"),
    "postgres-16 catalogue scan 1.5x (one workload of four timings)": _engine("postgres-16", 1.5, "catalogue", "scan"),
    "sqlite-3.54.1 JSONB json_extract 2x": _json_extract,
    "every SQLite 1.3x, the canary steady": _every_sqlite,
    "the average document datum +1 %": _datum,
}
SLOW_VERSION = _engine("postgres-17", 1.1)


def cells(host: int = FIRST) -> list[tuple[str, str]]:
    """Every (suite, engine) cell of the host's last night but the canary's."""
    ds = nights(host)
    last = ds[(ds["run_id"] == run_ids(host)[-1]) & benchmarked(ds)]
    return sorted({(str(s), str(e)) for s, e in zip(last["suite"], last["engine_id"], strict=True)})


def slow_cell(suite: str, engine: str) -> Plant:
    """Every timing of one cell 1.25x slower."""
    return _engine(engine, 1.25, suite)


SLOW_SUITE = _engine("postgres-16", 1.1, "catalogue")


def main(host: int = FIRST) -> int:
    honest = judge(host=host)
    print(f"{host_id(host)}, {len(run_ids(host))} nights; honest: {len(honest.alarms)} alarm(s) of {len(honest.judged)} judged series")
    for name, plant in FIRST_NIGHT.items():
        o = judge(plant=plant, host=host)
        harness = sum("harness" in n for n in o.notes())
        print(
            f"{name}: caught {len(o.caught)} of {len(o.moved)} moved, {len(o.alarms - o.moved)} other alarm(s), {harness} said as harness"
        )
    for name, plant in (("postgres-17 1.1x", SLOW_VERSION), ("postgres-16 catalogue 1.1x", SLOW_SUITE)):
        for before in range(3):
            o = judge(night=-3 + before, plant=plant, planted_before=before, host=host)
            print(f"{name}, night {before + 1}: caught {len(o.caught)} of {len(o.moved)}, {len(o.alarms - o.moved)} other alarm(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(*(int(a) for a in sys.argv[1:])))
