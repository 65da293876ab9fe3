"""Every recorded night judged by drift as its night judged it: the replay behind ``test_drift_replay.py``.

For each results folder of ``recorded/``, every run with at least one earlier run of its hardware label and scale in
that folder is judged the way ``jsonbench.checks.examine`` judges a night: the folder's rows of the label up to that
night, read as a later night's history reads them (a value its confirmation cleared as its re-measurement,
``history.cleared``), each suite but the canary's judged by ``drift_frame`` with the suite's policy, the run's other
suites' policies (the run's false-discovery control) and the committed calibration record of the label and scale.

What is kept of each night (:func:`outcome`): per row key the verdict and method, and the p-value, threshold and score
to :data:`DIGITS` significant digits; and per column a hash of the whole frame at :data:`FRAME_DIGITS` digits (the
notes and every number), so that a change the compact table does not hold still names its column.

Write the golden with ``python -m tests.recorded.drift_replay`` (from the project root, ``PYTHONPATH=plugins``).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from jsonbench import paths
from jsonbench.checks.library import Library, load_library
from jsonbench.dataset.measurement import HOST_SUITE
from jsonbench.dataset.read import MEASUREMENTS, read_dataset_report
from jsonbench.history.cleared import read_as_history
from jsonbench.history.drift import drift_frame

GOLDEN = Path(__file__).resolve().parent / "data" / "drift_replay.json.gz"
#: Significant digits of the compact table's numbers, and of the numbers each column hash reads.
DIGITS = 4
FRAME_DIGITS = 6
#: What names a row of a drift frame.
KEY = ("suite", "engine_id", "engine_build", "workload", "variant", "metric")


@dataclass(frozen=True)
class Night:
    """One recorded run to replay: its folder (a results folder), run id, hardware label and scale."""

    folder: Path
    run_id: str
    label: str
    scale: str

    @property
    def name(self) -> str:
        return f"{self.folder.name}/{self.run_id}"


def _runs(measured: pd.DataFrame) -> pd.DataFrame:
    """One row per run of a folder: run id, label, scale, logical date (oldest first)."""
    runs = measured.groupby("run_id", as_index=False).agg(
        label=("hardware_label", "first"), scale=("scale", "first"), logical_date=("logical_date", "min")
    )
    return runs.sort_values(["logical_date", "run_id"]).reset_index(drop=True)


def nights(root: Path | None = None) -> Iterator[Night]:
    """Every run of every recorded folder that has an earlier run of its label and scale in that folder."""
    for folder in paths.recorded_folders(root):
        runs = _runs(read_dataset_report(folder, MEASUREMENTS).table.to_pandas())
        for (label, scale), g in runs.groupby(["label", "scale"], sort=True):
            for r in g.iloc[1:].itertuples(index=False):
                yield Night(folder, str(r.run_id), str(label), str(scale))


class Folder:
    """A recorded folder read once per label, for the nights judged in it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._measured: dict[str, pd.DataFrame] = {}

    def measured(self, label: str) -> pd.DataFrame:
        if label not in self._measured:
            self._measured[label] = read_dataset_report(self.folder, MEASUREMENTS, hardware_label=label).table.to_pandas()
        return self._measured[label]


def judge(night: Night, lib: Library, folder: Folder | None = None) -> pd.DataFrame:
    """The night's drift frames (every suite but the canary's), as the night's check computed them."""
    measured = (folder or Folder(night.folder)).measured(night.label)
    published = measured[measured["run_id"] == night.run_id].copy()
    tonight = published["logical_date"].min()
    known = measured[measured["logical_date"] <= tonight]
    dataset, _ = read_as_history(night.folder, known, tonight=night.run_id, hardware_label=night.label)
    run = {
        "run_id": night.run_id,
        "logical_date": pd.Timestamp(tonight).isoformat(),
        "hardware_label": night.label,
        "results_dir": str(night.folder),
        "scale": night.scale,
    }
    frames = [
        drift_frame(published, dataset, run, str(suite), lib.drift_policy(str(suite)), policies=lib.drift_policy)
        for suite in sorted(published["suite"].unique())
        if suite != HOST_SUITE
    ]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def _sig(x: Any, digits: int) -> float | None:
    """``x`` to ``digits`` significant digits (None for a missing or non-finite value)."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(v):
        return None
    return float(f"{v:.{digits - 1}e}")


def _key(r: Any) -> str:
    return "/".join("" if pd.isna(getattr(r, k)) else str(getattr(r, k)) for k in KEY)


def _column_hash(values: pd.Series) -> str:
    """A short hash of one column, numbers at :data:`FRAME_DIGITS` significant digits."""
    numeric = pd.api.types.is_float_dtype(values)
    text = [repr(_sig(v, FRAME_DIGITS)) if numeric else ("<NA>" if pd.isna(v) else str(v)) for v in values]
    return hashlib.sha256("\x1f".join(text).encode()).hexdigest()[:16]


def outcome(frame: pd.DataFrame) -> dict[str, Any]:
    """What the golden keeps of one night's frames: rows, verdict counts and one hash per column."""
    if frame.empty:
        return {"rows": {}, "verdicts": {}, "columns": {}}
    frame = frame.sort_values(list(KEY), kind="stable").reset_index(drop=True)
    rows = {
        _key(r): [str(r.verdict), str(r.method), _sig(r.pvalue, DIGITS), _sig(r.threshold, DIGITS), _sig(r.drift_score, DIGITS)]
        for r in frame.itertuples(index=False)
    }
    return {
        "rows": rows,
        "verdicts": dict(sorted(Counter(frame["verdict"].astype(str)).items())),
        "columns": {c: _column_hash(frame[c]) for c in frame.columns},
    }


def differences(want: dict[str, Any], got: dict[str, Any], most: int = 8) -> list[str]:
    """What differs between two outcomes of one night, first rows first (empty when they agree)."""
    out: list[str] = []
    if want["verdicts"] != got["verdicts"]:
        out.append(f"verdict counts {want['verdicts']} -> {got['verdicts']}")
    for key in sorted(set(want["rows"]) | set(got["rows"])):
        a, b = want["rows"].get(key), got["rows"].get(key)
        if a != b:
            out.append(f"{key}: {a} -> {b}")
        if len(out) >= most:
            break
    cols = sorted(c for c in set(want["columns"]) | set(got["columns"]) if want["columns"].get(c) != got["columns"].get(c))
    if cols:
        out.append(f"columns that differ: {', '.join(cols)}")
    return out


def load() -> dict[str, Any]:
    """The committed golden: ``{"nights": {name: outcome}, ...}``."""
    with gzip.open(GOLDEN, "rt") as f:
        data: dict[str, Any] = json.load(f)
    return data


def write(limit: int | None = None) -> None:
    """Replay every recorded night and write the golden (prints each night and how long it took)."""
    lib = load_library()
    out: dict[str, Any] = {}
    started = time.monotonic()
    folders: dict[Path, Folder] = {}
    for i, night in enumerate(nights()):
        if limit is not None and i >= limit:
            break
        t0 = time.monotonic()
        folder = folders.setdefault(night.folder, Folder(night.folder))
        out[night.name] = outcome(judge(night, lib, folder))
        print(f"{night.name}: {len(out[night.name]['rows'])} rows, {time.monotonic() - t0:.1f} s", flush=True)
    if limit is not None:
        return
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(GOLDEN, "wt", compresslevel=9) as f:
        json.dump({"digits": DIGITS, "frame_digits": FRAME_DIGITS, "nights": out}, f, sort_keys=True, separators=(",", ":"))
    rows = sum(len(o["rows"]) for o in out.values())
    print(f"{len(out)} nights, {rows} rows, {time.monotonic() - started:.0f} s -> {GOLDEN} ({GOLDEN.stat().st_size} bytes)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, help="only the first N nights, printed and not written (a trial)")
    args = ap.parse_args(argv)
    write(args.limit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
