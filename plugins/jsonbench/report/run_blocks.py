"""What the run's own blocks of the report show: sanity, environment, runs, failures, the judged share, the verdict,
the documents suites' answer, the figures side by side, the noise model and what tonight could hear."""

from __future__ import annotations

import html
import json
import logging
import math
from pathlib import Path
from typing import Any

import pandas as pd
from markupsafe import Markup

from jsonbench.cell import starts_of
from jsonbench.checks import verdicts
from jsonbench.dataset.measurement import HOST_SUITE, finite_float
from jsonbench.report import figures
from jsonbench.report.charts import fmt
from jsonbench.report.model import (
    Dataset,
    details_of,
    figure_label,
    hearing_figures,
    natural_key,
)
from jsonbench.report.templating import href

log = logging.getLogger(__name__)


def page_of(root: Path, r: Any) -> str | None:
    from jsonbench.report.model import DocsPages

    return DocsPages(root).page(details_of(getattr(r, "details", None)), getattr(r, "gx_suite", None), str(r.run_id))


# -- the rest --------------------------------------------------------------------------------


def sanity_context(root: Path, vrun: pd.DataFrame) -> dict[str, Any] | None:
    """The run's sanity checks: how many passed, and each failed one with what was unexpected; None without sanity rows."""
    s = vrun[vrun["check_kind"] == "sanity"] if not vrun.empty else vrun
    if s.empty:
        return None
    failed = s[s["success"] == False]  # noqa: E712 - pandas element-wise
    rows = []
    for r in failed.itertuples():
        det = details_of(r.details)
        rows.append(
            {
                "href": href(root, page_of(root, r)),
                "expectation": str(r.expectation),
                "description": str(r.description),
                "unexpected": json.dumps((det.get("unexpected") or [])[:10], default=str),
            }
        )
    return {"badge": f"{len(s) - len(failed)} of {len(s)} passed", "failed": rows}


def _starts_words(run: pd.DataFrame) -> str:
    """On how many engine starts the run's figures rest (the run parameter ``starts``), per engine where they differ."""
    if "scale_params" not in run.columns:
        return "1"
    cells = run[run["suite"] != HOST_SUITE] if "suite" in run.columns else run
    by: dict[int, list[str]] = {}
    for engine, g in cells.groupby("engine_id"):
        k = max((starts_of(sp) for sp in g["scale_params"].dropna().unique()), default=1)
        by.setdefault(k, []).append(str(engine))
    if len(by) <= 1:
        return str(next(iter(by), 1))
    return "; ".join(f"{k} ({', '.join(sorted(es, key=natural_key))})" for k, es in sorted(by.items(), reverse=True))


def environment_context(run: pd.DataFrame) -> dict[str, Any]:
    """The host of the run, each suite's scale parameters, and each engine's build, configure flags and settings."""
    first = run.iloc[0]
    host = [
        ("hardware label", first.get("hardware_label")),
        ("host", first.get("host_name")),
        ("CPU", first.get("host_cpu_model")),
        ("cores", first.get("host_cores")),
        ("memory", fmt(finite_float(first.get("host_memory_bytes"))) + "B"),
        ("kernel", first.get("host_kernel")),
        ("git revision", first.get("git_revision")),
        ("scale", f"{first.get('scale')}"),
        ("engine starts each timing rests on", _starts_words(run)),
    ]
    params = [
        (str(suite), str(g["scale_params"].dropna().iloc[0] if g["scale_params"].notna().any() else ""))
        for suite, g in run.groupby("suite")
    ]
    engines = []
    for _, r in run.drop_duplicates("engine_id").sort_values("engine_id", key=lambda s: s.map(natural_key)).iterrows():
        settings = r.get("settings") or "{}"
        try:
            settings = ", ".join(f"{k}={v}" for k, v in json.loads(settings).items())
        except (ValueError, AttributeError):
            pass
        engines.append(
            {
                **{k: str(r[k]) for k in ("engine_id", "engine_version", "engine_build", "engine_backend", "data_checksums")},
                # escaped first, then cut, as the page always did (the cut may split an entity)
                "configure": Markup(html.escape(str(r["engine_configure"] or ""))[:400]),
                "settings": str(settings),
            }
        )
    return {"host": [(k, str(v)) for k, v in host], "scale_params": params, "engines": engines}


def runs_context(ds: Dataset, chosen: str) -> dict[str, Any]:
    """Every run in the dataset, the latest first (60 shown), with its checks' outcome."""
    m = ds.m
    runs = (
        m.groupby("run_id")
        .agg(
            logical_date=("logical_date", "max"),
            hardware_label=("hardware_label", "first"),
            scale=("scale", "first"),
            engines=("engine_id", lambda s: ", ".join(sorted(set(s), key=natural_key))),
            rows=("value", "size"),
        )
        .reset_index()
        .sort_values("logical_date", ascending=False)
    )
    status = {rid: ("passed" if failed == 0 else f"failed ({failed})") for rid, (_, failed) in ds.status.items()}
    rows = []
    for r in runs.head(60).itertuples():
        st = status.get(str(r.run_id), "not checked")
        rows.append(
            {
                "run_id": str(r.run_id),
                "this": r.run_id == chosen,
                "date": pd.Timestamp(r.logical_date).strftime("%Y-%m-%d %H:%M"),
                "hardware_label": str(r.hardware_label),
                "scale": str(r.scale),
                "engines": r.engines,
                "rows": r.rows,
                "cls": "pass" if st == "passed" else ("fail" if st.startswith("failed") else "note"),
                "status": st,
            }
        )
    return {"n": len(runs), "rows": rows, "more": len(runs) - 60 if len(runs) > 60 else 0}


def failures_context(vrun: pd.DataFrame, limit: int = 5) -> dict[str, Any] | None:
    """The first few failed checks of the run (why the badge is red), each linking to its suite's section; None when none failed."""
    if vrun.empty:
        return None
    failed = vrun[vrun["success"] == False]  # noqa: E712 - pandas element-wise
    if failed.empty:
        return None
    order = {"sanity": 0, "reproduction": 1, "drift": 2}
    failed = failed.assign(_o=failed["check_kind"].map(order).fillna(3)).sort_values(["_o", "suite", "engine_id"], na_position="first")
    items = []
    for r in failed.head(limit).itertuples():
        det = details_of(r.details)
        items.append(
            {
                "link": f"#suite-{r.suite}" if isinstance(r.suite, str) and r.suite else "#sanity",
                "kind": str(r.check_kind),
                "where": [str(x) for x in (r.suite, r.engine_id) if isinstance(x, str) and x],
                "what": str(r.expectation) if r.check_kind != "drift" else figure_label(str(r.workload), r.variant, str(r.metric)),
                "seen": f"observed {fmt(finite_float(r.observed))}" if finite_float(r.observed) is not None else "",
                "bounds": (
                    f", expected [{fmt(finite_float(r.min_value))}, {fmt(finite_float(r.max_value))}]"
                    if finite_float(r.min_value) is not None or finite_float(r.max_value) is not None
                    else ""
                ),
                "hist": f", history median {fmt(finite_float(det.get('history_median')))}"
                if finite_float(det.get("history_median")) is not None
                else "",
            }
        )
    return {"n": len(failed), "entries": items, "more": len(failed) - limit if len(failed) > limit else 0}


def judged_context(vrun: pd.DataFrame) -> dict[str, Any] | None:
    """How much of the run was judged (a NOT JUDGED warning below the threshold) and each confirmation with both
    measurements (:mod:`jsonbench.report.judged`, contract C3); None for a run without validation rows."""
    if vrun.empty:
        return None
    rows = [dict(r) for r in vrun.to_dict("records")]
    share = verdicts.judged_share(rows)
    not_judged = verdicts.judgement(rows, share) == "not_judged" or (share["share"] is not None and share["share"] < share["threshold"])
    items = []
    for r in rows:
        d = verdicts.details_of(r)
        if "confirmation" not in d:
            continue
        first, again = d.get("first") or {}, d.get("confirmation") or {}
        items.append(
            {
                "verdict": str(r.get("verdict")),
                "where": " · ".join(str(x) for x in (r.get("suite"), r.get("engine_id")) if isinstance(x, str) and x),
                "expectation": str(r.get("expectation")),
                "first": fmt(finite_float(first.get("observed"))),
                "again": fmt(finite_float(again.get("observed"))),
                "min": fmt(finite_float(first.get("min_value"))),
                "max": fmt(finite_float(first.get("max_value"))),
                "why": str(again.get("why", "")),
            }
        )
    pending = sum(1 for r in rows if r.get("verdict") == "suspect")
    counts = {v: sum(1 for it in items if it["verdict"] == v) for v in ("confirmed", "cleared", "unconfirmed")}
    return {
        "cls": "warnbox" if not_judged or items or pending else "muted",
        "not_judged": not_judged,
        "share": verdicts.describe_share(share),
        "pending": pending,
        "confirmations": items,
        "counts": ", ".join(f"{v} {n}" for v, n in counts.items()),
    }


def host_likeness(m: pd.DataFrame, run: pd.DataFrame, chosen: str) -> str:
    """Was tonight's host like the earlier runs' of its label and scale? From the canary beside every cell (suite
    ``host``): tonight's median ms per speed component against the median of the earlier runs', and the CPU quota."""
    from jsonbench.dataset.measurement import HOST_SUITE
    from jsonbench.history.hostspeed import SPEED_COMPONENTS

    if run.empty:
        return ""
    first = run.iloc[0]
    quota = finite_float(first.get("host_cpu_quota")) if "host_cpu_quota" in run else None
    said = f"under a CPU quota of {quota:g} cores; " if quota else ""
    host = m[(m["suite"] == HOST_SUITE) & (m["unit"] == "ms") & (m["status"] == "ok")]
    host = host[(host["hardware_label"] == first["hardware_label"]) & (host["scale"] == first["scale"])]
    tonight = host[host["run_id"] == chosen]
    before = host[(host["run_id"] != chosen) & (host["logical_date"] <= first["logical_date"])]
    if tonight.empty:
        return said + "no canary in this run: the host's speed was not measured"
    if before.empty:
        return said + "the first run of this label and scale: no earlier host to compare with"
    parts = []
    for comp in SPEED_COMPONENTS:
        now, then = tonight[tonight["metric"] == comp]["value"], before[before["metric"] == comp]["value"]
        if len(now) and len(then):
            r = float(now.median()) / float(then.median())
            parts.append((comp, r))
    if not parts:
        return said + "the canary has no CPU component to compare"
    worst = max(parts, key=lambda x: abs(math.log(x[1])))
    words = ", ".join(f"{c} {r:.2f}x" for c, r in parts)
    n = before["run_id"].nunique()
    if abs(worst[1] - 1) < 0.05:
        return f"{said}like the {n} earlier run(s) of this label: canary {words} of theirs"
    way = "slower" if worst[1] > 1 else "faster"
    return f"{said}{way} than the {n} earlier run(s) by {abs(worst[1] - 1):.0%} ({worst[0]}; canary {words}); drift judged each timing beyond it"


def verdict_context(vrun: pd.DataFrame, m: pd.DataFrame, run: pd.DataFrame, chosen: str) -> dict[str, Any] | None:
    """The answer in three lines, before any list: what passed, what failed and of which kind, what was measured twice,
    and whether tonight's host was like the others (the first screen is the scorecard and this)."""
    if vrun.empty:
        return {"checks": "not checked yet", "failed": "", "twice": "", "host": host_likeness(m, run, chosen)}
    ok = vrun["success"].fillna(False).astype(bool)
    failed = vrun[~ok]
    kinds = failed["check_kind"].value_counts()
    verdicts_ = vrun["verdict"].value_counts() if "verdict" in vrun else pd.Series(dtype=int)
    twice = {v: int(verdicts_.get(v, 0)) for v in ("confirmed", "cleared", "unconfirmed")}
    suspects = int(verdicts_.get("suspect", 0))
    return {
        "checks": f"{int(ok.sum())} of {len(vrun)} checks passed",
        "failed": (f"{len(failed)} failed: " + ", ".join(f"{k} {int(n)}" for k, n in kinds.items()) if len(failed) else "none failed"),
        "twice": (
            f"timing measured twice: confirmed {twice['confirmed']}, cleared {twice['cleared']}, unconfirmed {twice['unconfirmed']}"
            if any(twice.values())
            else ""
        )
        + (f"; {suspects} suspect(s) not yet measured again" if suspects else ""),
        "host": host_likeness(m, run, chosen),
    }


def documents_context(run: pd.DataFrame) -> list[dict[str, Any]]:
    """The documents suites' answer, per input: its heading and one paragraph of sentences per engine version.

    The sentences are :func:`jsonbench.suites.documents.summary.answers` of the run's published rows, the
    same the command line prints after the run. Empty (no section) for a run without those suites.
    """
    from jsonbench.suites.documents.summary import SUITES, answers

    if run.empty or not run["suite"].isin(SUITES).any():
        return []
    out: list[dict[str, Any]] = []
    for a in answers(run[run["suite"].isin(SUITES)].to_dict("records")):
        if not out or out[-1]["sha256"] != a.input_sha256:
            out.append({"sha256": a.input_sha256, "heading": a.input_heading, "engines": []})
        out[-1]["engines"].append({"heading": a.heading, "sentences": a.sentences})
    return out


def figures_context(root: Path) -> Markup:
    """The figures side by side (:func:`jsonbench.report.figures.report_section`, the table of ``docs/figures.md``).

    Passed as markup, not drawn by a template: :func:`jsonbench.report.figures.section_html` builds it
    with every value through :func:`html.escape` (its other output is the markdown of the same table).
    Empty when the table cannot be made, so the rest of the page never depends on it.
    """
    return Markup(figures.report_section(root))


def noise_context(fig: dict[str, Any]) -> dict[str, Any]:
    """Calibration per label (records, runs, when, median mds per suite) and the latest checks-of-the-checks figures
    (:func:`jsonbench.report.model.noise_figures`), formatted for ``templates/noise.html.j2``."""

    def mds(c: dict[str, Any], key: str) -> str:
        return ", ".join(f"{s} {v:.0%}" for s, v in sorted((c.get(key) or {}).items()) if v is not None)

    calibration = [
        {
            "hardware_label": str(c["hardware_label"]),
            "scale": str(c["scale"] or "-"),
            "calibrated": "yes" if c["calibrated"] else "no",
            "runs": c["runs"],
            "created_at": str(c["created_at"] or "-"),
            "mds": [mds(c, k) for k in ("median_mds_findings", "median_mds_engine_3", "median_mds")],
        }
        for c in fig["calibration"]
    ]
    checkcheck = []
    for f in fig["checkcheck"]:
        sizes = sorted({s for per in f["levels"].values() for s in per}, key=float)
        checkcheck.append(
            {
                "hardware_label": str(f["hardware_label"]),
                "scale": str(f["scale"]),
                "saved_at": str(f["saved_at"]),
                "nights": f["nights"],
                "false_alarms": f["false_alarms"],
                "honest_drift_alarms": str(f["honest_drift_alarms"]),
                "sizes": sizes,
                "levels": [
                    (level, ["-" if per.get(s) is None else format(per[s], ".0%") for s in sizes]) for level, per in f["levels"].items()
                ],
            }
        )
    return {"calibration": calibration, "checkcheck": checkcheck}


def hearing_context(v: pd.DataFrame, chosen: str) -> list[dict[str, Any]]:
    """What tonight could see per family, version and workload on this host (:func:`jsonbench.report.model.hearing_figures`),
    formatted."""
    return [
        {
            "kind": h["kind"],
            "family": " / ".join(str(x) for x in (h["suite"], h["engine_id"], h["workload"]) if x)
            + (", every suite" if h["kind"] == "version" else ""),
            "series": h["series"],
            "sigma": format(h["sigma"], ".1%"),
            "mds_1": format(h["mds_1"], ".0%"),
            "mds_3": format(h["mds_3"], ".0%"),
            "host_nights": "-" if h["host_nights"] is None else h["host_nights"],
        }
        for h in hearing_figures(v, chosen)
    ]
