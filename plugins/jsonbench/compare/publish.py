"""The ``comparisons`` and ``comparison_starts`` tables of the Parquet dataset, the check, and the A/A margins.

``comparisons`` holds one row per metric of one comparison (its verdict); ``comparison_starts`` every measurement
row of every start the comparison made (the nightly schema, :data:`~jsonbench.dataset.schema.MEASUREMENT_SCHEMA`,
with the comparison id, the arm, the pair, the start's position and the fingerprint of the data it loaded), so that
every verdict can be recomputed from published data (the rows marked ``judged`` are the ones the judge read) and two
arms of one engine id are told apart. Both sit beside ``measurements`` under the results folder, partitioned the same
way (``<table>/hardware_label=/run_date=/run_key=/part-0.parquet``), each written by the same atomic swap
(:func:`jsonbench.dataset.publish.replace_run`): a reader sees the comparison's earlier file or its new one.

The check (:func:`check_comparison`) validates the rows through the results folder's GX context
(:class:`jsonbench.checks.gxrun.GXSession`): every metric has a verdict, and none is a regression. A failed
check raises :class:`ComparisonFailed`, which the DAG's notifier turns into an alert; the rows stay published.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from jsonbench.cell import HostFacts, RunRef
from jsonbench.compare.judge import Judged, Pairs
from jsonbench.compare.params import Arm, arm_key
from jsonbench.dataset.measurement import CELL_RECORD, HOST_SUITE
from jsonbench.dataset.publish import partition_dir, replace_run, staged_rows
from jsonbench.dataset.read import FILE_NAME
from jsonbench.dataset.schema import COMPARISON_SCHEMA, COMPARISONS, MEASUREMENT_SCHEMA
from jsonbench.dataset.staging import SETUP_RECORD, Staging, WorkloadRecord

COMPARISON_STARTS = "comparison_starts"


#: The measurement rows of every start: the nightly columns after the start's own.
START_SCHEMA = pa.schema(
    [
        ("comparison_id", pa.string()),
        ("arm", pa.string()),  # a | b
        ("pair", pa.int32()),  # the pair's index (0-based, across stages)
        ("stage", pa.int32()),  # 0-based
        ("order_position", pa.int32()),  # 0: the pair's first start, 1: its second
        ("sequence", pa.int32()),  # the start's place in the comparison's planned order (0-based)
        ("start_completed", pa.bool_()),  # every workload of the start's suites ran; an incomplete start drops its pair
        ("data_fingerprint", pa.string()),  # the start's data fingerprint (the judge drops a pair whose arms differ)
        ("judged", pa.bool_()),  # a row the judge reads: the start completed, a suite's workload (no canary, setup, _cell)
        *MEASUREMENT_SCHEMA,
    ]
)


class _CellStaging(Staging):
    """One cell's view of a run's staging folder (what :func:`jsonbench.dataset.publish.staged_rows` flattens)."""

    def __init__(self, staging: Staging, cell_id: str) -> None:
        self.run_id, self.root, self.cell_id = staging.run_id, staging.root, cell_id

    def records(self, cell_id: str | None = None) -> Iterator[WorkloadRecord]:
        return super().records(self.cell_id)


def judged_row(row: dict[str, Any]) -> bool:
    """Whether a measurement row of a completed start is one the judge reads (a suite's workload, not the host's
    canary, the setup step's load nor the per-cell resource rows)."""
    return row["suite"] != HOST_SUITE and row["workload"] not in (SETUP_RECORD, CELL_RECORD)


def start_rows(staging: Staging, comparison_id: str, starts: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every staged measurement row of the comparison's starts, each with its start's columns.

    ``starts`` holds one entry per cell of a start: ``cell_id``, ``arm`` (``A``/``B``), ``pair``, ``stage``,
    ``order_position``, ``sequence``, ``completed`` and ``fingerprint`` (None when the start did not complete).
    """
    out = []
    for s in starts:
        head = {
            "comparison_id": comparison_id,
            "arm": str(s["arm"]).lower(),
            "pair": int(s["pair"]),
            "stage": int(s["stage"]),
            "order_position": int(s["order_position"]),
            "sequence": int(s["sequence"]),
            "start_completed": bool(s["completed"]),
            "data_fingerprint": s.get("fingerprint"),
        }
        for row in staged_rows(_CellStaging(staging, str(s["cell_id"]))):
            out.append({**head, "judged": bool(s["completed"]) and judged_row(row), **row})
    return out


def publish_starts(results_dir: str | Path, run: RunRef, rows_: list[dict[str, Any]]) -> Path:
    """Write the comparison's start rows as its one file of ``comparison_starts`` (atomic; replaces an earlier attempt's)."""
    table = pa.Table.from_pylist(rows_, schema=START_SCHEMA)
    return replace_run(partition_dir(results_dir, COMPARISON_STARTS, run.hardware_label, run.logical_date, run.run_id), table)


def read_starts(results_dir: str | Path, comparison_id: str, hardware_label: str | None = None) -> list[dict[str, Any]]:
    """The published start rows of one comparison (empty when it has none)."""
    from jsonbench.dataset.schema import run_key

    root = Path(results_dir) / COMPARISON_STARTS
    glob = f"hardware_label={hardware_label or '*'}/*/run_key={run_key(comparison_id)}/{FILE_NAME}"
    return [r for path in sorted(root.glob(glob)) for r in pq.read_table(path, schema=START_SCHEMA).to_pylist()]


def pair_time(start_rows_: Sequence[dict[str, Any]]) -> dict[str, float | int]:
    """What the comparison's pairs cost: the engine cells' measured seconds (their ``_cell`` duration rows) summed per
    pair, over every pair that started (a dropped pair cost its time too). ``pairs``, ``seconds`` (all of them) and
    ``per_pair`` (their mean; 0 without a pair), the figure that says how many pairs a night or an hour can hold."""
    per: dict[int, float] = {}
    for r in start_rows_:
        if r.get("workload") == CELL_RECORD and r.get("metric") == "duration" and r.get("value") is not None:
            per[int(r["pair"])] = per.get(int(r["pair"]), 0.0) + float(r["value"])
    total = sum(per.values())
    return {"pairs": len(per), "seconds": total, "per_pair": total / len(per) if per else 0.0}


def _finite(v: float | None) -> float | None:
    return v if v is not None and math.isfinite(v) else None


def rows(
    run: RunRef,
    a: Arm,
    b: Arm,
    judged: Sequence[Judged],
    pairs: Pairs,
    *,
    facts: dict[str, dict[str, Any]],
    seed: int,
    stages: Sequence[int],
    pairs_planned: int,
    margin_source: dict[str, str],
) -> list[dict[str, Any]]:
    """The comparison's rows; ``facts`` holds each arm's engine facts (``build``, ``settings``, ``host``)."""
    host = HostFacts.from_json(facts.get("A", {}).get("host")) if facts.get("A", {}).get("host") else run.host
    now = datetime.now(UTC)
    common = {
        "comparison_id": run.run_id,
        "logical_date": datetime.fromisoformat(run.logical_date) if run.logical_date else None,
        "arm_a": arm_key(a),
        "arm_b": arm_key(b),
        "engine_a": a.engine,
        "engine_b": b.engine,
        "build_a": facts.get("A", {}).get("builds"),
        "build_b": facts.get("B", {}).get("builds"),
        "settings_a": json.dumps(facts.get("A", {}).get("settings") or a.settings, sort_keys=True),
        "settings_b": json.dumps(facts.get("B", {}).get("settings") or b.settings, sort_keys=True),
        "same_arm": arm_key(a) == arm_key(b),
        "host_name": host.host_name,
        "host_machine_id": host.host_machine_id,
        "host_boot_id": host.host_boot_id,
        "host_cpu_model": host.host_cpu_model,
        "scale": run.scale,
        "seed": seed,
        "stages": json.dumps(list(stages)),
        "pairs_planned": pairs_planned,
        "dropped": json.dumps({str(k): v for k, v in sorted(pairs.dropped.items())}),
        "a_first": sum(1 for p in pairs.usable if pairs.first.get(p) == "A"),
        "published_at": now,
    }
    out = []
    for j in judged:
        row = {
            **common,
            "suite": j.suite,
            "workload": j.workload,
            "variant": j.variant,
            "metric": j.metric,
            "unit": j.unit,
            "metric_kind": j.kind,
            "verdict": j.verdict,
            "pairs_dropped": len(j.pairs_dropped),
            "decided_at": j.decided_at,
        }
        if j.comparison is not None:
            c = j.comparison
            row.update(
                pairs_used=c.pairs,
                estimate=_finite(c.estimate),
                interval_low=_finite(c.interval[0]),
                interval_high=_finite(c.interval[1]),
                level=c.level,
                p_value=c.p_value,
                adjusted_p=c.adjusted_p,
                order_p=c.order_p,
                margin=c.margin,
                margin_source=margin_source.get(j.name, "default"),
                higher_is_better=c.higher_is_better,
                pairs_needed=c.pairs_needed,
            )
        if j.fact is not None:
            f = j.fact
            row.update(
                pairs_used=len(pairs.usable) - len([p for p in j.pairs_dropped if p in pairs.usable]),
                fact_a=None if f.a is None else str(f.a),
                fact_b=None if f.b is None else str(f.b),
                fact=f.text,
            )
        out.append(row)
    return out


def publish_comparison(results_dir: str | Path, run: RunRef, table_rows: list[dict[str, Any]]) -> Path:
    """Write the comparison's rows as its one file of ``comparisons`` (atomic; replaces an earlier attempt's)."""
    table = pa.Table.from_pylist(table_rows, schema=COMPARISON_SCHEMA)
    return replace_run(partition_dir(results_dir, COMPARISONS, run.hardware_label, run.logical_date, run.run_id), table)


def read_comparisons(results_dir: str | Path, hardware_label: str | None = None) -> pa.Table:
    """Every readable comparison row under the results folder (of one hardware label when given)."""
    root = Path(results_dir) / COMPARISONS
    glob = f"hardware_label={hardware_label}/*/*/{FILE_NAME}" if hardware_label else f"*/*/*/{FILE_NAME}"
    parts = []
    for path in sorted(root.glob(glob)) if root.is_dir() else []:
        try:
            parts.append(pq.read_table(path, schema=COMPARISON_SCHEMA))
        except Exception:  # a damaged file lends no margin; the dataset's repair tools name it
            continue
    return pa.concat_tables(parts) if parts else COMPARISON_SCHEMA.empty_table()


def aa_margins(results_dir: str | Path, hardware_label: str, arm: Arm, machine_id: str) -> tuple[dict[str, float], str | None]:
    """Per metric, the margin this host's latest A/A comparison of ``arm`` lends: the far end of its interval, as a share.

    An arm against itself has no change, so what its interval spans is what this host cannot resolve
    (:func:`jsonbench.history.stats.paired.aa_margin`, from the stored interval). Returns the margins and the
    A/A comparison's id (None when there is none: the default margin then applies).
    """
    t = read_comparisons(results_dir, hardware_label).to_pylist()
    mine = [r for r in t if r["same_arm"] and r["arm_a"] == arm_key(arm) and (not machine_id or r["host_machine_id"] == machine_id)]
    if not mine:
        return {}, None
    latest = max(mine, key=lambda r: r["published_at"])["comparison_id"]
    out = {}
    for r in mine:
        if r["comparison_id"] != latest or r["interval_low"] is None or r["interval_high"] is None:
            continue
        lo, hi = float(r["interval_low"]), float(r["interval_high"])
        if lo > 0 and hi > 0:
            out[f"{r['suite']}/{r['workload']}/{r['variant']}/{r['metric']}"] = math.expm1(max(abs(math.log(lo)), abs(math.log(hi))))
    return out, latest


class ComparisonFailed(Exception):
    """A comparison's check failed (a regression, or a metric without a verdict); ``summary`` says which."""

    def __init__(self, summary: dict[str, Any]) -> None:
        self.summary = summary
        super().__init__(
            f"{summary['failed']} of {summary['checked']} comparison checks failed for {summary['run_id']}: "
            + "; ".join(summary["failures"])
        )


#: The expectations every comparison is held to (GX entries as :func:`jsonbench.checks.library.expectation` reads them).
EXPECTATIONS: list[dict[str, Any]] = [
    {"type": "expect_column_values_to_not_be_null", "kwargs": {"column": "verdict"}, "meta": {"why": "every metric has a verdict"}},
    {
        "type": "expect_column_values_to_not_be_in_set",
        "kwargs": {"column": "verdict", "value_set": ["regression"]},
        "meta": {"why": "arm B is worse than arm A beyond the margin"},
    },
]


def check_comparison(results_dir: str | Path, run: RunRef, table_rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Validate the comparison's rows with Great Expectations; raise :class:`ComparisonFailed` on a failure (after writing)."""
    import pandas as pd

    from jsonbench.checks.gxrun import GXSession
    from jsonbench.dataset.schema import run_key

    frame = pd.DataFrame(table_rows, columns=COMPARISON_SCHEMA.names)
    frame["name"] = frame["suite"] + "/" + frame["workload"] + "/" + frame["variant"] + "/" + frame["metric"]
    session = GXSession(results_dir, run_key(run.run_id))
    outcomes = session.validate("comparison", frame, EXPECTATIONS, ["name"])
    pages = session.finish()
    failures = []
    for o in outcomes:
        if o.success:
            continue
        named = [str(r.get("name")) for r in o.unexpected]
        failures.append(f"{o.label}: {', '.join(named) or o.error or 'failed'}")
    summary = {
        "kind": "comparison",
        "run_id": run.run_id,
        "results_dir": str(results_dir),
        "checked": len(outcomes),
        "failed": len(failures),
        "failures": failures,
        "data_docs": pages.get("comparison"),
        "verdicts": frame["verdict"].value_counts().to_dict(),
    }
    if failures:
        raise ComparisonFailed(summary)
    return summary
