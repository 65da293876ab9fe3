"""Per-run staging files: what each task measured, before the publish task makes it visible.

Layout under the results root (the leading underscore hides it from Parquet readers)::

    _staging/<run_key>/<cell_id>/engine.json        engine facts, written by the cell's setup task
    _staging/<run_key>/<cell_id>/<workload>.json    measurements and phase timings of one task

Every file is written to a temporary name and renamed, so a killed task leaves either the old
file or the new one, never half of one. A task that runs again overwrites its own file only.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonbench.cell import Cell
from jsonbench.dataset.fsio import write_text_atomic
from jsonbench.dataset.measurement import Measurement
from jsonbench.dataset.schema import run_key as make_run_key

SETUP_RECORD = "_setup"


def write_json_atomic(path: Path, payload: Any) -> None:
    """Write JSON to ``path`` through a temporary file and an atomic rename."""
    write_text_atomic(path, json.dumps(payload, indent=1, sort_keys=True, default=str), "staging")


@dataclass(frozen=True)
class WorkloadRecord:
    """What one task staged: its cell, its measurements, how long each phase took, what else ran, what it held.

    ``windows`` are the task's measure windows as :class:`~jsonbench.host.load.WindowLoad` JSON (other
    CPU, steal, load, quiet); ``resources`` the engine's peaks while the task ran (``peak_memory``,
    ``peak_disk``, bytes) and the task's ``seconds``.
    """

    cell: Cell
    workload: str
    measurements: list[Measurement]
    phases: dict[str, float]
    started_at: str
    ended_at: str
    windows: list[dict[str, Any]] = field(default_factory=list)
    resources: dict[str, float] = field(default_factory=dict)
    #: Content hashes of the data the task measured, as loaded (an A/B comparison's cells only; else empty).
    fingerprints: list[str] = field(default_factory=list)


class Staging:
    """The staging folder of one run."""

    def __init__(self, results_dir: str | Path, run_id: str) -> None:
        self.run_id = run_id
        self.root = Path(results_dir) / "_staging" / make_run_key(run_id)

    def reset(self) -> None:
        """Forget everything staged for this run (a fresh attempt of the whole run starts clean)."""
        shutil.rmtree(self.root, ignore_errors=True)

    def keep_only(self, cell_ids: list[str]) -> None:
        """Forget what is staged for every cell but ``cell_ids`` (a resumed run keeps its completed cells)."""
        if not self.root.exists():
            return
        for folder in self.root.iterdir():
            if folder.is_dir() and folder.name not in cell_ids:
                shutil.rmtree(folder, ignore_errors=True)

    def write_params(self, params: dict[str, Any]) -> None:
        """The run's parameters, so that the command line can resume the same run with them."""
        write_json_atomic(self.root / "params.json", params)

    def read_params(self) -> dict[str, Any] | None:
        path = self.root / "params.json"
        return dict(json.loads(path.read_text(encoding="utf-8"))) if path.exists() else None

    def write_engine(self, cell_id: str, facts: dict[str, Any]) -> None:
        write_json_atomic(self.root / cell_id / "engine.json", facts)

    def read_engine(self, cell_id: str) -> dict[str, Any] | None:
        path = self.root / cell_id / "engine.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None

    def write_workload(self, record: WorkloadRecord) -> Path:
        path = self.root / record.cell.cell_id / f"{record.workload}.json"
        write_json_atomic(
            path,
            {
                "cell": record.cell.to_json(),
                "workload": record.workload,
                "measurements": [m.to_json() for m in record.measurements],
                "phases": record.phases,
                "started_at": record.started_at,
                "ended_at": record.ended_at,
                "windows": record.windows,
                "resources": record.resources,
                **({"fingerprints": record.fingerprints} if record.fingerprints else {}),
            },
        )
        return path

    def records(self, cell_id: str | None = None) -> Iterator[WorkloadRecord]:
        """Every staged workload record of the run (or of one cell), in a stable order."""
        if not self.root.exists():
            return
        for path in sorted(self.root.glob(f"{cell_id or '*'}/*.json")):
            if path.name == "engine.json" or path.name.startswith("."):
                continue
            d = json.loads(path.read_text(encoding="utf-8"))
            yield WorkloadRecord(
                cell=Cell.from_json(d["cell"]),
                workload=d["workload"],
                measurements=[Measurement.from_json(m) for m in d["measurements"]],
                phases=d.get("phases", {}),
                started_at=d["started_at"],
                ended_at=d["ended_at"],
                windows=list(d.get("windows") or []),
                resources=dict(d.get("resources") or {}),
                fingerprints=list(d.get("fingerprints") or []),
            )
