"""What a run will cost before it starts: per cell load size, disk and memory peak and duration.

Each suite estimates its cells from the scale (:meth:`jsonbench.suites.base.Suite.estimate`); when
this hardware label has recorded the same cell at the same scale before (the ``_cell`` rows every
published run carries: ``duration``, ``peak_rss``, ``disk_peak``), the recorded figures win, with
a margin; for a cell this results folder has never run, the committed ``recorded/`` runs of the reference
machine (2 cores, no CPU quota; the same suite on another version of the same engine when that version never
ran there) come before the suite's extrapolation, which misses what grows faster than
the rows (seed 001's `full` cells took 1.7-2.2x its estimate). Cells run one after another, so the run needs the largest cell's disk and memory at once
and the sum of their durations. The plan step prints this table and refuses a run whose largest
cell does not fit the free disk of the scratch folder or the machine's available memory, saying
which cell and by how much, before any engine starts.
"""

from __future__ import annotations

import logging
import os
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from jsonbench import paths
from jsonbench.cell import Cell
from jsonbench.dataset.measurement import CELL_RECORD, PLAN_MARGIN, PLAN_SLACK_BYTES, plan_bound
from jsonbench.errors import BenchmarkError
from jsonbench.suites.base import CellCost

log = logging.getLogger(__name__)

#: Recorded figures are scaled by this before they are trusted as a bound (said once, where drift reads it too).
MARGIN = PLAN_MARGIN
#: How a recorded figure was widened, as the plan's source column says it (:func:`~jsonbench.dataset.measurement.plan_bound`).
_WIDENED = f"x{MARGIN}, peaks +{PLAN_SLACK_BYTES >> 20} MiB"
#: Keep this much of the free disk and available memory out of any plan.
HEADROOM = 0.9


class RunTooBig(BenchmarkError):
    """The run cannot fit this machine (disk or memory); the message says which cell and by how much."""


@dataclass(frozen=True)
class RunCost:
    """The plan's cost table."""

    cells: dict[str, CellCost] = field(default_factory=dict)
    free_disk_bytes: int = 0
    available_memory_bytes: int = 0
    scratch: str = ""

    @property
    def duration_s(self) -> float:
        return sum(c.duration_s for c in self.cells.values())

    @property
    def disk_peak_bytes(self) -> int:
        return max((c.disk_peak_bytes for c in self.cells.values()), default=0)

    @property
    def memory_peak_bytes(self) -> int:
        return max((c.memory_peak_bytes for c in self.cells.values()), default=0)

    def to_json(self) -> dict[str, Any]:
        return {
            "cells": {k: asdict(v) for k, v in self.cells.items()},
            "free_disk_bytes": self.free_disk_bytes,
            "available_memory_bytes": self.available_memory_bytes,
            "scratch": self.scratch,
            "duration_s": self.duration_s,
            "disk_peak_bytes": self.disk_peak_bytes,
            "memory_peak_bytes": self.memory_peak_bytes,
        }


def available_memory() -> int:
    """``MemAvailable`` of ``/proc/meminfo`` in bytes (what can be used without swapping)."""
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")


def recorded(results_dir: str | Path, cells: list[Cell], *, reference: bool = False) -> dict[str, CellCost]:
    """The latest recorded resource rows of the same cells (same hardware label and scale), if any.

    ``reference``: ``results_dir`` is the project's committed ``recorded/`` runs of the reference machine
    (2 cores), read for cells this results folder has never run; runs under a CPU quota are left out there
    (a slower host than the one they stand for), and the source says whose figure it is.
    """
    if not cells:
        return {}
    import pandas as pd

    from jsonbench.dataset.read import read_dataset

    # recorded/ is a folder of results folders, the reference machine's only, under its own label: any label plans from them
    folders = paths.recorded_folders(Path(results_dir)) if reference else [Path(results_dir)]
    cols = ["run_id", "ended_at", "suite", "engine", "engine_id", "engine_backend", "scale", "workload", "metric", "value"]
    frames = []
    for folder in folders:
        try:
            table = read_dataset(folder) if reference else read_dataset(folder, hardware_label=cells[0].run.hardware_label)
        except Exception as exc:  # history is a refinement; an unreadable one must not stop a run
            log.warning("no recorded costs (cannot read %s: %s)", folder, exc)
            continue
        if table.num_rows:
            have = [c for c in (*cols, "host_cpu_quota", "host_boot_id") if c in table.column_names]
            frames.append(table.select(have).to_pandas())
    if not frames:
        return {}
    df = pd.concat(frames, ignore_index=True)
    for c in cols:  # older folders predate some columns
        if c not in df:
            df[c] = None
    df = df[(df["workload"] == CELL_RECORD) & (df["scale"] == cells[0].scale)]
    if reference and "host_cpu_quota" in df:
        df = df[df["host_cpu_quota"].isna()]
    out: dict[str, CellCost] = {}
    for cell in cells:
        mine = df[(df["suite"] == cell.suite) & (df["engine_id"] == cell.engine_id)]
        if mine.empty and reference:
            # The reference machine never ran this version: the same suite on another version of the same engine and
            # backend is nearer than the suite's extrapolation (json_vs_jsonb at full on one host: 1,614 s on
            # PostgreSQL 17, 1,327 s on 18; the suite's extrapolation said 13m25s).
            mine = df[(df["suite"] == cell.suite) & (df["engine"] == cell.family) & (df["engine_backend"] == cell.backend)]
        if mine.empty:
            continue
        latest = mine[mine["run_id"] == mine.sort_values("ended_at")["run_id"].iloc[-1]]
        latest = latest[latest["engine_id"] == latest.sort_values("ended_at")["engine_id"].iloc[-1]]
        values = {r.metric: float(r.value) for r in latest.itertuples() if r.value == r.value}
        out[cell.cell_id] = CellCost(
            load_bytes=0,
            disk_peak_bytes=int(plan_bound("disk_peak", values.get("disk_peak", 0))),
            memory_peak_bytes=int(plan_bound("peak_rss", values.get("peak_rss", 0))),
            duration_s=plan_bound("duration", values.get("duration", 0.0)),
            source=_source(latest, reference),
        )
    return out


def _source(latest: Any, reference: bool) -> str:
    run = latest["run_id"].iloc[0]
    if not reference:
        return f"recorded run {run} ({_WIDENED})"
    boot = latest["host_boot_id"].iloc[0] if "host_boot_id" in latest else None
    host = f", host {str(boot)[:8]}" if isinstance(boot, str) and boot else ""
    return f"reference machine's run {run} of {latest['engine_id'].iloc[0]}{host} (recorded/, {_WIDENED})"


def plan_costs(cells: list[Cell], results_dir: str) -> RunCost:
    """The cost of every cell still to run: recorded history when there is one, else the suite's estimate."""
    from jsonbench.suites import get_suite

    history = recorded(results_dir, cells)
    unseen = [c for c in cells if c.cell_id not in history]
    if unseen:  # a fresh results folder: the reference machine's own runs beat an extrapolation
        history.update(recorded(paths.RECORDED_DIR, unseen, reference=True))
    table: dict[str, CellCost] = {}
    for cell in cells:
        guess = get_suite(cell.suite).estimate(cell)
        seen = history.get(cell.cell_id)
        if seen is not None:
            # The recorded run knows the duration and the peaks; the estimate still knows the load size.
            table[cell.cell_id] = CellCost(
                guess.load_bytes, max(seen.disk_peak_bytes, 1), max(seen.memory_peak_bytes, 1), seen.duration_s, seen.source
            )
        else:
            table[cell.cell_id] = guess
    scratch = paths.scratch_dir()
    scratch.mkdir(parents=True, exist_ok=True)
    return RunCost(table, shutil.disk_usage(scratch).free, available_memory(), str(scratch))


def _size(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n) < 1024 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


def _duration(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def describe(cost: RunCost, resumed: list[str] | None = None) -> str:
    """The plan's cost table as text (the plan task logs it; the command line prints it)."""
    lines = [f"{'cell':<44} {'load':>10} {'disk peak':>10} {'memory':>10} {'duration':>9}  source"]
    for cell_id, c in cost.cells.items():
        lines.append(
            f"{cell_id:<44} {_size(c.load_bytes):>10} {_size(c.disk_peak_bytes):>10} {_size(c.memory_peak_bytes):>10} {_duration(c.duration_s):>9}  {c.source}"
        )
    for cell_id in resumed or []:
        lines.append(f"{cell_id:<44} {'(completed by an earlier attempt: not rerun)':>45}")
    lines.append(
        f"one cell at a time: needs {_size(cost.disk_peak_bytes)} of disk ({_size(cost.free_disk_bytes)} free in {cost.scratch}) and "
        f"{_size(cost.memory_peak_bytes)} of memory ({_size(cost.available_memory_bytes)} available); expected duration {_duration(cost.duration_s)}"
    )
    return "\n".join(lines)


def refuse_if_too_big(cost: RunCost) -> None:
    """Raise :class:`RunTooBig` when the largest cell cannot fit the free disk or the available memory."""
    for cell_id, c in cost.cells.items():
        if c.disk_peak_bytes > cost.free_disk_bytes * HEADROOM:
            raise RunTooBig(
                f"{cell_id} needs about {_size(c.disk_peak_bytes)} of disk ({c.source}) but {cost.scratch} has {_size(cost.free_disk_bytes)} free "
                f"(at most {HEADROOM:.0%} may be planned); free disk space, point $JSONBENCH_SCRATCH_DIR at a larger disk, or choose a smaller scale"
            )
        if c.memory_peak_bytes > cost.available_memory_bytes * HEADROOM:
            raise RunTooBig(
                f"{cell_id} needs about {_size(c.memory_peak_bytes)} of memory ({c.source}) but {_size(cost.available_memory_bytes)} is available "
                f"(at most {HEADROOM:.0%} may be planned); lower shared_buffers/work_mem in the run's server_settings or choose a smaller scale"
            )
