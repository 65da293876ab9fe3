"""What the report shows, computed from the dataset alone (no HTML here): runs, the scorecard, the
seed figures normalised so scales compare, trends and the change points drift reported.

Everything is read from ``measurements/`` and ``validations/`` (``read_dataset_report``: damaged
files are skipped and listed) plus the seed and reproduction files of ``include/expectations/``.
Validation rows are read defensively: a column or a ``details`` key that an older check did not
write comes back empty, never as an error.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from jsonbench.dataset.measurement import MEASURED_COLUMNS, finite_float


def details_of(raw: Any) -> dict[str, Any]:
    """A validation row's ``details`` JSON as a dict (empty when missing or unreadable)."""
    if not isinstance(raw, str) or not raw:
        return {}
    try:
        d = json.loads(raw)
    except ValueError:
        return {}
    return d if isinstance(d, dict) else {}


def natural_key(text: str) -> tuple[Any, ...]:
    """Sort key that puts postgres-9 before postgres-16 and sqlite-3.45.0 before sqlite-3.54.1."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))


def scale_key(scale: str, current: str | None = None) -> tuple[int, str]:
    """Scales in the order the report lists them: the run's own first, then the matrix file's order, then any other."""
    from jsonbench.matrix import load_matrix

    if scale == current:
        return (-1, scale)
    order = list(load_matrix().scales)
    return (order.index(scale) if scale in order else len(order), scale)


def figure_label(workload: str, variant: str | None, metric: str | None = None) -> str:
    base = workload if not variant or variant == "default" else f"{workload}/{variant}"
    return f"{base} {metric}" if metric else base


#: The measurement columns the report reads for every run (the chosen run is read whole).
M_COLUMNS = [
    "run_id",
    "logical_date",
    "hardware_label",
    "engine_id",
    "engine_version",
    "engine_build",
    "suite",
    *MEASURED_COLUMNS,
    "samples",
    "status",
    "reason",
    "scale",
    "scale_params",
    "ended_at",
]


@dataclass(frozen=True)
class Dataset:
    """What the report reads: every run's measurements (the columns it needs), the chosen run whole,
    the validation rows it shows (every run's reproduction rows, every row of the chosen run), each
    run's check status, and the files that could not be read."""

    root: Path
    m: pd.DataFrame
    v: pd.DataFrame
    chosen: str | None
    run: pd.DataFrame
    status: dict[str, tuple[int, int]]  # run id -> (checks, failed)
    cells: pd.DataFrame  # one row per (label, run, suite, scale, engine): dates and build
    missing: str | None = None  # the asked-for run, when it published nothing
    damaged: tuple[tuple[str, str], ...] = ()


def pick_run(m: pd.DataFrame, run_id: str | None) -> str | None:
    """The asked-for run, else the latest by logical date then end time."""
    if m.empty:
        return None
    if run_id:
        return run_id if (m["run_id"] == run_id).any() else None
    per = m.groupby("run_id", sort=False).agg(ld=("logical_date", "max"), ea=("ended_at", "max")).reset_index()
    return str(per.sort_values(["ld", "ea", "run_id"], na_position="first").iloc[-1]["run_id"])


def load(results_dir: Path, run_id: str | None = None) -> Dataset:
    """Read the dataset for the report of ``run_id`` (default: the latest run)."""
    import pyarrow.compute as pc

    from jsonbench.dataset.publish import MEASUREMENTS, VALIDATIONS, read_dataset_report

    mr = read_dataset_report(results_dir, MEASUREMENTS)
    vr = read_dataset_report(results_dir, VALIDATIONS)
    damaged = tuple((d.path, d.error) for d in (*mr.damaged, *vr.damaged))
    m = mr.table.select(M_COLUMNS).combine_chunks().to_pandas()
    chosen = pick_run(m, run_id)
    missing = None
    if chosen is None and run_id:  # e.g. a run whose every workload failed: it published nothing, but it still gets a report
        missing, chosen = run_id, pick_run(m, None)
    run = mr.table.filter(pc.field("run_id") == chosen).to_pandas() if chosen else m.iloc[0:0]
    vt = vr.table
    status: dict[str, tuple[int, int]] = {}
    if vt.num_rows:
        counts = vt.group_by("run_id").aggregate([("success", "count")]).to_pylist()
        failed = vt.filter(pc.invert(pc.fill_null(vt["success"], False))).group_by("run_id").aggregate([("success", "count")]).to_pylist()
        nfail = {r["run_id"]: r["success_count"] for r in failed}
        status = {r["run_id"]: (r["success_count"], nfail.get(r["run_id"], 0)) for r in counts}
        keep = pc.equal(vt["check_kind"], "reproduction")
        if chosen:
            keep = pc.or_(keep, pc.equal(vt["run_id"], chosen))
        vt = vt.filter(pc.fill_null(keep, False))
    v = vt.combine_chunks().to_pandas()
    cells = (
        (
            m.groupby(["hardware_label", "run_id", "suite", "scale", "engine_id"], sort=False, dropna=False)
            .agg(
                logical_date=("logical_date", "max"),
                ended_at=("ended_at", "max"),
                engine_version=("engine_version", "first"),
                engine_build=("engine_build", "first"),
            )
            .reset_index()
        )
        if not m.empty
        else pd.DataFrame()
    )
    return Dataset(results_dir, m, v, chosen, run, status, cells, missing, damaged)


@dataclass(frozen=True)
class Column:
    """One (scale, engine) column of the scorecard and the reproduction tables: the latest run of it."""

    scale: str
    engine_id: str
    engine_version: str
    engine_build: str
    run_id: str
    logical_date: pd.Timestamp
    current: bool

    @property
    def key(self) -> tuple[str, str]:
        return (self.scale, self.engine_id)

    @property
    def label(self) -> str:
        return f"{self.engine_id} ({self.engine_version})"


def columns(cells: pd.DataFrame, label: str, run_id: str, suite: str | None = None) -> list[Column]:
    """Per (scale, engine) of ``label``'s runs up to the chosen run (of ``suite``), the latest run; the chosen run's first.

    ``cells`` is :attr:`Dataset.cells` (one row per label, run, suite, scale and engine).
    """
    if cells.empty:
        return []
    this = cells[cells["run_id"] == run_id]
    until = this["logical_date"].max()
    current_scale = str(this["scale"].iloc[0]) if not this.empty else None
    h = cells[(cells["hardware_label"] == label) & (cells["logical_date"] <= until)]
    if suite is not None:
        h = h[h["suite"] == suite]
    if h.empty:
        return []
    per = h.drop_duplicates(["scale", "engine_id", "run_id"]).copy()
    per["mine"] = per["run_id"] == run_id
    per = per.sort_values(["mine", "logical_date", "ended_at"], na_position="first")
    latest = per.groupby(["scale", "engine_id"]).tail(1)
    out = [
        Column(
            str(r.scale), str(r.engine_id), str(r.engine_version), str(r.engine_build or ""), str(r.run_id), r.logical_date, bool(r.mine)
        )
        for r in latest.itertuples()
    ]
    return sorted(out, key=lambda c: (scale_key(c.scale, current_scale), natural_key(c.engine_id)))


# -- the scorecard ---------------------------------------------------------------------------


@dataclass
class Verdict:
    """One finding on one (scale, engine): the check's row, or nothing."""

    observed: float | None
    band_min: float | None
    band_max: float | None
    verdict: str  # pass | fail | not_applicable | not checked
    reason: str
    band_reason: str
    page: str | None
    run_id: str
    unit: str = ""
    inputs: dict[str, Any] = field(default_factory=dict)


@dataclass
class FindingRow:
    suite: str
    finding: str
    description: str
    unit: str
    seed_value: float | None
    seed_figure: str
    cells: dict[tuple[str, str], Verdict] = field(default_factory=dict)


@dataclass
class SuiteScore:
    suite: str
    columns: list[Column]
    rows: list[FindingRow]

    def counts(self, current_only: bool = False) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.rows:
            for c in self.columns:
                if current_only and not c.current:
                    continue
                cell = r.cells.get(c.key)
                if cell is not None:
                    out[cell.verdict] = out.get(cell.verdict, 0) + 1
        return out


class DocsPages:
    """Where a validation row's Data Docs page is: ``details.data_docs_page``, else found on disk."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._found: dict[tuple[str, str], str | None] = {}

    def page(self, details: dict[str, Any], gx_suite: Any, run_id: str) -> str | None:
        page = details.get("data_docs_page")
        if isinstance(page, str) and page:
            return page
        if not isinstance(gx_suite, str) or not gx_suite:
            return None
        from jsonbench.dataset.schema import run_key

        key = (gx_suite, run_id)
        if key not in self._found:
            from jsonbench.checks.gxrun import data_docs_dir

            folder = data_docs_dir(self.root) / "validations" / Path(*gx_suite.split(".")) / run_key(run_id)
            pages = sorted(folder.glob("*/*.html")) if folder.is_dir() else []
            self._found[key] = pages[-1].relative_to(self.root).as_posix() if pages else None
        return self._found[key]


def _reason(verdict: str, d: dict[str, Any], band_reason: str) -> str:
    if verdict == "not_applicable":
        for k in ("reason", "not_applicable_reason", "problem"):
            if isinstance(d.get(k), str) and d[k]:
                return d[k]
        return band_reason or "not applicable (no reason recorded)"
    if verdict == "fail":
        return d["problem"] if isinstance(d.get("problem"), str) and d["problem"] else "outside the band"
    return ""


def scorecard(lib_reproduction: dict[str, dict[str, Any]], ds: Dataset, label: str, run_id: str, suites: list[str]) -> list[SuiteScore]:
    """Per suite with findings, every finding x (scale, engine) column: seed, observed, band, verdict and reason."""
    v = ds.v
    rep = v[v["check_kind"] == "reproduction"] if not v.empty else v
    docs = DocsPages(ds.root)
    out: list[SuiteScore] = []
    for suite in suites:
        definition = lib_reproduction.get(suite) or {}
        cols = columns(ds.cells, label, run_id, suite)
        srep = rep[(rep["suite"] == suite) & rep["engine_id"].notna()] if not rep.empty else rep
        rows: dict[str, FindingRow] = {}
        for f in definition.get("findings", []):
            seed = f.get("seed") or {}
            rows[f["id"]] = FindingRow(
                suite,
                f["id"],
                str(f.get("description", "")),
                str(f.get("unit", "")),
                finite_float(seed.get("value")),
                str(seed.get("figure", "")),
            )
        if not srep.empty:
            wanted = {(c.run_id, c.engine_id): c for c in cols}
            hit = srep[[(r, e) in wanted for r, e in zip(srep["run_id"], srep["engine_id"], strict=True)]]
            for r in hit.itertuples(index=False):
                d = details_of(getattr(r, "details", None))
                col = wanted[(r.run_id, r.engine_id)]
                fid = str(r.expectation)
                if fid not in rows:
                    seed = d.get("seed") or {}
                    rows[fid] = FindingRow(
                        suite,
                        fid,
                        str(getattr(r, "description", "") or ""),
                        str(getattr(r, "unit", "") or ""),
                        finite_float(seed.get("value")) if isinstance(seed, dict) else None,
                        str(seed.get("figure", "")) if isinstance(seed, dict) else "",
                    )
                verdict = getattr(r, "verdict", None)
                if not isinstance(verdict, str) or not verdict:
                    verdict = "pass" if bool(r.success) else "fail"
                band_reason = str(d.get("band_reason") or "")
                inputs = d.get("inputs")
                rows[fid].cells[col.key] = Verdict(
                    observed=finite_float(r.observed),
                    band_min=finite_float(r.min_value),
                    band_max=finite_float(r.max_value),
                    verdict=verdict,
                    reason=_reason(verdict, d, band_reason),
                    band_reason=band_reason,
                    page=docs.page(d, getattr(r, "gx_suite", None), str(r.run_id)),
                    run_id=str(r.run_id),
                    unit=str(getattr(r, "unit", "") or ""),
                    inputs=inputs if isinstance(inputs, dict) else {},
                )
        if rows:
            out.append(SuiteScore(suite, cols, list(rows.values())))
    return out


# -- seed figures ----------------------------------------------------------------------------


@dataclass
class FigureCell:
    value: float | None
    seed_scaled: float | None
    ratio: float | None  # value / (seed scaled to the run's scale)
    status: str
    reason: str
    samples: list[float]
    run_id: str


@dataclass
class FigureRow:
    workload: str
    variant: str
    metric: str
    unit: str
    seed_value: float | None
    scales_with: str | None
    note: str
    cells: dict[tuple[str, str], FigureCell] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return figure_label(self.workload, self.variant, self.metric)


def _scale_params(rows: pd.DataFrame) -> dict[str, Any]:
    params = rows["scale_params"].dropna() if "scale_params" in rows else pd.Series(dtype=object)
    for raw in params:
        try:
            d = json.loads(raw)
        except (TypeError, ValueError):
            continue
        if isinstance(d, dict):
            return d
    return {}


def seed_figures(seed: dict[str, Any], m: pd.DataFrame, cols: list[Column], suite: str) -> list[FigureRow]:
    """Each seed figure with the measured value per column, the seed scaled to that run (``scales_with``) and their ratio."""
    seed_scale = seed.get("scale") or {}
    sub = m[(m["suite"] == suite) & m["run_id"].isin({c.run_id for c in cols})]
    index: dict[tuple[str, str, str, str, str], Any] = {}
    for r in sub.itertuples(index=False):
        index[(r.run_id, r.engine_id, r.workload, r.variant, r.metric)] = r
    params = {c.key: _scale_params(sub[(sub["run_id"] == c.run_id) & (sub["engine_id"] == c.engine_id)]) for c in cols}
    out: list[FigureRow] = []
    for f in seed.get("figures", []):
        if not f.get("workload") or not f.get("metric"):
            continue
        variant = str(f.get("variant", "default"))
        row = FigureRow(
            str(f["workload"]),
            variant,
            str(f["metric"]),
            str(f.get("unit", "")),
            finite_float(f.get("value")),
            f.get("scales_with"),
            str(f.get("note", "") or ""),
        )
        for c in cols:
            hit = index.get((c.run_id, c.engine_id, row.workload, variant, row.metric))
            seed_scaled = row.seed_value
            if row.scales_with and row.seed_value is not None:
                run_k, seed_k = finite_float(params[c.key].get(row.scales_with)), finite_float(seed_scale.get(row.scales_with))
                seed_scaled = row.seed_value * run_k / seed_k if run_k and seed_k else None
            if hit is None:
                row.cells[c.key] = FigureCell(None, seed_scaled, None, "missing", "not published by this run", [], c.run_id)
                continue
            value = finite_float(hit.value) if hit.status == "ok" else None
            ratio = value / seed_scaled if value is not None and seed_scaled not in (None, 0) and value > 0 and seed_scaled > 0 else None
            samples = [float(s) for s in (hit.samples if hit.samples is not None else []) if finite_float(s) is not None]
            row.cells[c.key] = FigureCell(
                value, seed_scaled, ratio, str(hit.status), str(hit.reason or "") if hit.status != "ok" else "", samples, c.run_id
            )
        out.append(row)
    return out


# -- trends and change points ------------------------------------------------------------------


def history(m: pd.DataFrame, label: str, scale: str, until: pd.Timestamp, suite: str) -> pd.DataFrame:
    """The suite's rows of every run of the hardware label at this scale up to the chosen run."""
    return m[(m["hardware_label"] == label) & (m["scale"] == scale) & (m["logical_date"] <= until) & (m["suite"] == suite)]


def change_points(v: pd.DataFrame, run_id: str, suite: str) -> list[dict[str, Any]]:
    """The change points the chosen run's drift rows report (``details.change_points``), one dict each."""
    if v.empty:
        return []
    d = v[(v["run_id"] == run_id) & (v["check_kind"] == "drift") & (v["suite"] == suite)]
    out: list[dict[str, Any]] = []
    for r in d.itertuples(index=False):
        det = details_of(getattr(r, "details", None))
        cps = det.get("change_points")
        if not isinstance(cps, list):
            continue
        for cp in cps:
            if isinstance(cp, dict) and cp.get("run_id"):
                out.append(
                    {
                        **cp,
                        "engine_id": r.engine_id,
                        "workload": r.workload,
                        "variant": r.variant,
                        "metric": r.metric,
                        "unit": getattr(r, "unit", None),
                        "verdict": getattr(r, "verdict", None),
                    }
                )
    return out


def drift_verdicts(v: pd.DataFrame, run_id: str, suite: str) -> pd.DataFrame:
    if v.empty:
        return v
    return v[(v["run_id"] == run_id) & (v["check_kind"] == "drift") & (v["suite"] == suite)]


def hearing_figures(v: pd.DataFrame, run_id: str) -> list[dict[str, Any]]:
    """Per family (suite and engine) of run ``run_id``: what tonight could see on this host, from its calibrated timings'
    drift rows: the minimum detectable shift of the whole family in one night and over three (at the family's level,
    :func:`jsonbench.history.stats.family_mds`, from the median sigma its rows were judged with and their median
    reference), and how many nights of this host's own history those sigmas learned from (the median ``host_nights``);
    then each version and each workload of a version judged as a whole (``kind``)."""
    from jsonbench.history.stats import family_mds

    if v.empty:
        return []
    d = v[(v["run_id"] == run_id) & (v["check_kind"] == "drift")]
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in d.itertuples(index=False):
        det = details_of(r.details)
        if det.get("metric_kind") == "timed" and str(det.get("method") or "").startswith("calibrated") and det.get("sigma"):
            out.setdefault((str(r.suite), str(r.engine_id)), []).append(det)
    rows = []
    for (suite, engine), dets in sorted(out.items()):
        sigma = float(pd.Series([x["sigma"] for x in dets]).median())
        ref = max(1, int(pd.Series([int(x.get("history_n") or 1) for x in dets]).median()))
        nights = pd.Series([x.get("host_nights") for x in dets]).dropna()
        rows.append(
            {
                "kind": "family",
                "suite": suite,
                "engine_id": engine,
                "workload": None,
                "series": len(dets),
                "sigma": sigma,
                "mds_1": family_mds(sigma, ref_runs=ref, nights=1),
                "mds_3": family_mds(sigma, ref_runs=ref, nights=3),
                "host_nights": int(nights.median()) if len(nights) else None,
            }
        )
    return rows + _unit_hearing(d)


def _unit_hearing(d: pd.DataFrame) -> list[dict[str, Any]]:
    """Per version and per workload of one version judged as a whole: the shift of the whole unit caught with probability
    0.8 in one night and over three, at the sigma its test was judged at (the drift rows' ``hearing``)."""
    from jsonbench.history.stats import family_mds

    units: dict[tuple[str, str, str, str], tuple[list[float], int]] = {}
    for r in d.itertuples(index=False):
        heard = details_of(r.details).get("hearing") or {}
        for kind, figures in heard.items():
            key = (kind, "" if kind == "version" else str(r.suite), str(r.engine_id), str(r.workload) if kind == "workload" else "")
            units[key] = (list(figures), units.get(key, ([], 0))[1] + 1)
    order = {"version": 0, "workload": 1}
    return [
        {
            "kind": kind,
            "suite": suite or None,
            "engine_id": engine,
            "workload": workload or None,
            "series": n,
            "sigma": s1,
            "mds_1": family_mds(s1, ref_runs=max(1, round(ref)), nights=1),
            "mds_3": family_mds(s3, ref_runs=max(1, round(ref)), nights=3),
            "host_nights": int(nights),
        }
        for (kind, suite, engine, workload), ((s1, s3, ref, nights), n) in sorted(
            units.items(), key=lambda u: (order.get(u[0][0], 2), u[0][1:])
        )
    ]


def noise_figures(root: Path, labels: list[str]) -> dict[str, Any]:
    """Per hardware label and scale: is it calibrated, from how many runs, when; and the latest checks-of-the-checks figures.

    The calibration records come from :func:`jsonbench.history.noise.status`; the figures from the
    latest ``jsonbench-dev checkcheck`` saved under ``<results>/checkcheck/`` (planted
    slowdowns caught per size and level, false alarms of honest reruns).
    """
    import json

    from jsonbench.history.noise import status

    cal = status(root, labels)
    figures = []
    for p in sorted((root / "checkcheck").glob("*.json")):
        try:
            r = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        power = r.get("power") or {}
        figures.append(
            {
                "hardware_label": r.get("hardware_label"),
                "scale": r.get("scale"),
                "saved_at": r.get("saved_at"),
                "false_alarms": r.get("false_alarms"),
                "honest_drift_alarms": [h.get("drift_alarms") for h in power.get("honest", [])],
                "levels": {
                    level: {size: e.get("share_within") for size, e in per.items()} for level, per in (power.get("levels") or {}).items()
                },
                "nights": power.get("nights"),
            }
        )
    return {"calibration": cal, "checkcheck": figures}
