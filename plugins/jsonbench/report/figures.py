"""The figures side by side: every seed finding, the seed's value, and what each engine version measured
at ``laptop`` and at ``full``, with the run ids, the mechanism where a figure does not reproduce, and
each cell's duration, peak memory and peak disk.

The values are the findings the reproduction checks compute (:func:`jsonbench.checks.findings.findings_frame`
over a run's published measurements, with the bands of the scale it ran at), so the table and the
checks cannot disagree about what was measured. Per scale, each engine's column is its latest run at
that scale (a campaign that resumes one run id fills every column from that run). A cross-engine
finding (PostgreSQL 18 against 17) sits in the column of its numerator's engine.

Whether a finding reproduces is judged against the seed's value, not the band:

* ``yes``: within 2 % for a deterministic fact (exactly for a zero), within a factor of 1.25 for a timing;
* ``direction``: further off, but on the seed's side of the finding's ``opposite`` (the conclusion holds);
* ``no``: on the opposite side, or a fact that differs;
* ``-``: no seed value, or no value (an input not applicable on this engine, or not measured).

Runs under a CPU quota are left out: they stand for a slower host, not this machine's figure.
A value is shown whenever the finding could be computed, also where the checks do not judge it at that scale
(``not_applicable`` there, or a host requirement this machine lacks); the checks' reason is kept with it.

The sentence on the mechanism of a finding that does not reproduce, or only in direction, is data,
not code: ``include/expectations/<suite>.mechanisms.yaml``, keyed by finding id, either one sentence
for every scale or one per scale (``laptop:``, ``full:``). ``jsonbench-dev figures`` writes
the markdown table (``docs/figures.md``); the report shows the same table (:func:`section_html`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

import pandas as pd

from jsonbench.dataset.measurement import CELL_RECORD, finite_float

log = logging.getLogger(__name__)

#: The scales the table compares, in its column order.
SCALES: tuple[str, ...] = ("laptop", "full")
#: A timing reproduces when within this factor of the seed's value; a deterministic fact within DETERMINISTIC_TOLERANCE.
TIMING_FACTOR = 1.25
DETERMINISTIC_TOLERANCE = 0.02
MARKS = {"yes": "✓", "direction": "~", "no": "✗", "-": ""}


@dataclass(frozen=True)
class Measured:
    """One finding on one engine at one scale."""

    value: float | None
    run_id: str
    reproduces: str  # yes | direction | no | -
    note: str = ""  # why there is no value (not applicable, not measured)


@dataclass(frozen=True)
class FindingLine:
    """One finding: the seed's value and every (scale, engine) value."""

    finding: str
    description: str
    kind: str
    unit: str
    seed_value: float | None
    seed_figure: str
    values: dict[tuple[str, str], Measured] = field(default_factory=dict)
    mechanisms: dict[str, str] = field(default_factory=dict)  # scale -> sentence, for the scales where it does not reproduce


@dataclass(frozen=True)
class CellResources:
    """What one cell took: staged task seconds, peak memory and peak disk of its engine."""

    scale: str
    engine_id: str
    run_id: str
    duration_s: float | None
    peak_rss_bytes: float | None
    disk_peak_bytes: float | None
    host: str = ""  # the first 8 characters of its ``boot_id``: a campaign's cells may come from several hosts


@dataclass(frozen=True)
class SuiteFigures:
    """One suite's table."""

    suite: str
    seed: str
    engines: tuple[str, ...]
    runs: dict[str, tuple[str, ...]]  # scale -> run ids the columns come from
    lines: tuple[FindingLine, ...]
    resources: tuple[CellResources, ...]


# -- judging against the seed ---------------------------------------------------------------------


def reproduces(finding: dict[str, Any], observed: float | None) -> str:
    """``yes`` / ``direction`` / ``no`` / ``-`` for an observed value against the finding's seed value."""
    seed = finite_float((finding.get("seed") or {}).get("value"))
    if seed is None or observed is None:
        return "-"
    if finding.get("kind") == "deterministic":
        if seed == 0:
            close = abs(observed) <= DETERMINISTIC_TOLERANCE
        else:
            close = abs(observed / seed - 1) <= DETERMINISTIC_TOLERANCE
    else:
        close = seed > 0 and observed > 0 and abs(math.log(observed / seed)) <= math.log(TIMING_FACTOR)
    if close:
        return "yes"
    opposite = finding.get("opposite") or {}
    if "below" in opposite or "above" in opposite:
        wrong = ("below" in opposite and observed < float(opposite["below"])) or (
            "above" in opposite and observed > float(opposite["above"])
        )
        return "no" if wrong else "direction"
    return "no"


def load_mechanisms(expectations: Path, suite: str) -> dict[str, dict[str, str]]:
    """``<suite>.mechanisms.yaml``: finding id -> scale -> sentence (a plain sentence applies to every scale)."""
    import yaml

    path = expectations / f"{suite}.mechanisms.yaml"
    if not path.exists():
        return {}
    raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    out: dict[str, dict[str, str]] = {}
    for fid, spec in raw.items():
        if fid == "arithmetic":  # the band rule's arithmetic (jsonbench.checks.bandrule), not a finding
            continue
        if isinstance(spec, str):
            out[str(fid)] = {s: spec.strip() for s in SCALES}
        elif isinstance(spec, dict):
            out[str(fid)] = {str(k): str(v).strip() for k, v in spec.items()}
    return out


# -- building the table ---------------------------------------------------------------------------


def read_measurements(results_dirs: Iterable[str | Path]) -> pd.DataFrame:
    """Every readable measurement row of the given results folders (damaged files are skipped, as everywhere), but
    runs under a CPU quota (``./bin/cpu-quota``)."""
    from jsonbench.dataset.read import read_dataset

    frames = [read_dataset(d).to_pandas() for d in results_dirs]
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame()
    m = pd.concat(frames, ignore_index=True)
    if "host_cpu_quota" in m:  # a run under a CPU quota is a slower host standing in for one: not the machine's figure
        m = m[pd.to_numeric(m["host_cpu_quota"], errors="coerce").isna()]
    return m.drop_duplicates(subset=["run_id", "suite", "engine_id", "workload", "variant", "metric"], keep="last")


def _latest_runs(m: pd.DataFrame, suite: str, scale: str) -> list[str]:
    """Run ids of ``suite`` at ``scale``, oldest first."""
    sub = m[(m["suite"] == suite) & (m["scale"] == scale)]
    if sub.empty:
        return []
    order = sub.groupby("run_id")["ended_at"].max().sort_values()
    return [str(r) for r in order.index]


def _engines(m: pd.DataFrame, suite: str, family_engines: list[str]) -> tuple[str, ...]:
    from jsonbench.report.model import natural_key

    seen = set(m.loc[m["suite"] == suite, "engine_id"].dropna().astype(str)) if not m.empty else set()
    return tuple(sorted(set(family_engines) | seen, key=natural_key))


def _promised(suite: str) -> set[tuple[str, str]] | None:
    from jsonbench.suites import get_suite

    try:
        return set(get_suite(suite).expected_metrics())
    except Exception:  # a suite this checkout does not know: judge what is there
        return None


def _input_reason(rows: pd.DataFrame, finding: dict[str, Any], engine: str) -> str | None:
    """The recorded reason of the first of the finding's inputs that is ``not_applicable`` on ``engine`` (e.g. a build without lz4)."""
    from jsonbench.checks.findings import terms

    mine = rows[(rows["engine_id"] == engine) & (rows["status"] == "not_applicable")]
    for term in terms(finding):
        hit = mine[
            (mine["workload"] == term["workload"])
            & (mine["variant"] == term.get("variant", "default"))
            & (mine["metric"] == term["metric"])
        ]
        if not hit.empty and isinstance(hit["reason"].iloc[0], str):
            return f"{term['workload']}/{term.get('variant', 'default')}/{term['metric']} not applicable: {hit['reason'].iloc[0]}"
    return None


def suite_figures(
    m: pd.DataFrame, suite: str, definition: dict[str, Any], engines: tuple[str, ...], mechanisms: dict[str, dict[str, str]]
) -> SuiteFigures:
    """One suite's table from the measurement rows of every run."""
    from jsonbench.checks.findings import findings_frame

    found: dict[tuple[str, str, str], Measured] = {}  # (finding, scale, engine) -> value
    runs: dict[str, tuple[str, ...]] = {}
    resources: dict[tuple[str, str], CellResources] = {}
    by_id = {f["id"]: f for f in definition.get("findings", [])}
    for scale in SCALES:
        used: list[str] = []
        covered: set[str] = set()
        # Newest first: each engine's column is its latest run at this scale; older runs are read only for
        # engines no newer run measured (a long nightly history costs one findings frame per needed run).
        for run_id in reversed(_latest_runs(m, suite, scale)):
            rows = m[(m["run_id"] == run_id) & (m["suite"] == suite)]
            data = rows[rows["workload"] != CELL_RECORD]
            new = set(data["engine_id"].dropna().astype(str)) - covered
            if not new:
                continue
            frame = findings_frame(data, suite, definition, scale=scale, promised=_promised(suite))
            for r in frame.itertuples(index=False):
                engine = str(r.engine_id).split("/")[0]  # a cross-engine finding sits in its numerator's column
                if engine not in new:
                    continue
                # The value whenever it could be computed, judged or not (a finding not applied at a scale,
                # e.g. one needing a third core, still shows what was measured); the checks' reason goes with it.
                value = finite_float(r.observed)
                note = str(r.problem) if isinstance(r.problem, str) and r.problem else ("" if r.applicable == "yes" else "not applicable")
                if value is None:
                    note = _input_reason(data, by_id.get(str(r.finding), {}), engine) or note
                found[(str(r.finding), scale, engine)] = Measured(value, run_id, reproduces(by_id.get(str(r.finding), {}), value), note)
            for engine, cell in rows[rows["workload"] == CELL_RECORD].groupby("engine_id"):
                if str(engine) in new:
                    got = {str(x.metric): finite_float(x.value) for x in cell.itertuples()}
                    boots = cell["host_boot_id"].dropna().astype(str) if "host_boot_id" in cell else pd.Series(dtype=str)
                    resources[(scale, str(engine))] = CellResources(
                        scale,
                        str(engine),
                        run_id,
                        got.get("duration"),
                        got.get("peak_rss"),
                        got.get("disk_peak"),
                        boots.iloc[0][:8] if len(boots) else "",
                    )
            covered |= new
            used.insert(0, run_id)
            if covered >= set(engines):
                break
        runs[scale] = tuple(used)
    lines = []
    for f in definition.get("findings", []):
        values = {(scale, e): found[(f["id"], scale, e)] for scale in SCALES for e in engines if (f["id"], scale, e) in found}
        off = {s for (s, _e), v in values.items() if v.reproduces in ("direction", "no")}
        said = mechanisms.get(f["id"], {})
        lines.append(
            FindingLine(
                finding=f["id"],
                description=f.get("description", ""),
                kind=f.get("kind", "timing"),
                unit=f.get("unit", ""),
                seed_value=finite_float((f.get("seed") or {}).get("value")),
                seed_figure=str((f.get("seed") or {}).get("figure", "")),
                values=values,
                mechanisms={s: said[s] for s in SCALES if s in off and s in said},
            )
        )
    return SuiteFigures(
        suite=suite,
        seed=str(definition.get("seed", "")),
        engines=engines,
        runs=runs,
        lines=tuple(lines),
        resources=tuple(resources[k] for k in sorted(resources, key=lambda k: (SCALES.index(k[0]), k[1]))),
    )


def figures(results_dirs: Iterable[str | Path], expectations: Path | None = None) -> list[SuiteFigures]:
    """Every suite of the matrix that has a reproduction file, in the matrix's order."""
    from jsonbench.checks.library import load_library
    from jsonbench.matrix import load_matrix

    lib = load_library(expectations)
    matrix = load_matrix()
    m = read_measurements(results_dirs)
    out = []
    for suite, spec in matrix.raw["suites"].items():
        if suite not in lib.reproduction:
            continue
        family = [e for e in matrix.raw["default_engines"] if matrix.engines[e]["family"] == spec["family"]]
        out.append(suite_figures(m, suite, lib.reproduction[suite], _engines(m, suite, family), load_mechanisms(lib.root, suite)))
    return out


# -- rendering ------------------------------------------------------------------------------------


def fmt(v: float | None) -> str:
    if v is None:
        return ""
    a = abs(v)
    if a == 0:
        return "0"
    if a >= 10000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:,.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def _size(n: float | None) -> str:
    if n is None:
        return ""
    for unit in ("B", "kB", "MB", "GB"):
        if abs(n) < 1024 or unit == "GB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return ""


def _duration(s: float | None) -> str:
    if s is None:
        return ""
    t = int(round(s))
    return f"{t // 3600}h{t % 3600 // 60:02d}m" if t >= 3600 else f"{t // 60}m{t % 60:02d}s"


def _cell_text(v: Measured | None) -> str:
    if v is None:
        return ""
    if v.value is None:
        return "n/a"
    mark = MARKS.get(v.reproduces, "")
    return f"{fmt(v.value)} {mark}".strip()


def _short(engine: str) -> str:
    return engine.replace("postgres-", "pg").replace("sqlite-", "")


def to_markdown(tables: list[SuiteFigures]) -> str:
    """The whole table as markdown (what ``docs/figures.md`` holds)."""
    out = [
        "# The figures side by side",
        "",
        "Generated by `./bin/jsonbench-dev figures` from the published runs named under each table; do not edit by hand.",
        "Per suite, every finding of `include/expectations/<suite>.reproduction.json` as the checks compute it: the seed's",
        "value, then each engine version at `laptop` and at `full` (its latest run at that scale). Marks: ✓ reproduces",
        f"(deterministic within {DETERMINISTIC_TOLERANCE:.0%}, timing within a factor of {TIMING_FACTOR}), ~ only in direction (the seed's",
        "conclusion holds, the size differs), ✗ does not reproduce; n/a: not applicable on that engine (the reason is in the",
        "check's validation row). Under each table: why a figure does not reproduce, or only in direction",
        "(`include/expectations/<suite>.mechanisms.yaml`), and what each cell took.",
        "",
        "The runs were made on the 2-core reference machine (hardware label `local`); `laptop` is a fraction of the seeds'",
        "row counts (see `include/matrix.yaml`), so figures that grow with the table are expected to differ there.",
        "",
    ]
    for t in tables:
        out += [f"## {t.suite} (seed `{t.seed}`)", ""]
        for scale in SCALES:
            runs = t.runs.get(scale) or ()
            out.append(f"- `{scale}`: " + (", ".join(f"`{r}`" for r in runs) if runs else "not yet run"))
        out.append("")
        heads = [f"{scale} {_short(e)}" for scale in SCALES for e in t.engines]
        out.append("| finding | kind | seed | " + " | ".join(heads) + " |")
        out.append("|---|---|---|" + "---|" * len(heads))
        for line in t.lines:
            cells = [_cell_text(line.values.get((scale, e))) for scale in SCALES for e in t.engines]
            out.append(f"| `{line.finding}` | {line.kind} | {fmt(line.seed_value)} | " + " | ".join(cells) + " |")
        out.append("")
        said = [(line.finding, s, line.mechanisms[s]) for line in t.lines for s in SCALES if s in line.mechanisms]
        missing = [
            (line.finding, s)
            for line in t.lines
            for s in SCALES
            if s not in line.mechanisms and any(v.reproduces in ("direction", "no") for (sc, _e), v in line.values.items() if sc == s)
        ]
        if said or missing:
            out += ["Why a figure does not reproduce, or only in direction:", ""]
            out += [f"- `{fid}` at `{s}`: {text}" for fid, s, text in said]
            out += [f"- `{fid}` at `{s}`: no sentence yet in `{t.suite}.mechanisms.yaml`." for fid, s in missing]
            out.append("")
        na: dict[tuple[str, str, str], list[str]] = {}
        for line in t.lines:
            for (scale, e), v in line.values.items():
                if v.value is None:
                    na.setdefault((line.finding, scale, v.note or "no value"), []).append(_short(e))
        if na:
            out += ["No value (n/a):", ""]
            out += [f"- `{fid}` at `{s}` on {', '.join(es)}: {why}" for (fid, s, why), es in na.items()]
            out.append("")
        out += ["Per cell (staged task time, the engine's peak memory and peak disk):", ""]
        out.append("| scale | engine | run | host | duration | peak memory | peak disk |")
        out.append("|---|---|---|---|---|---|---|")
        have = {(c.scale, c.engine_id): c for c in t.resources}
        for scale in SCALES:
            for e in t.engines:
                c = have.get((scale, e))
                if c is None:
                    ran = any(sc == scale and en == e for line in t.lines for (sc, en) in line.values)
                    out.append(f"| {scale} | {e} | {'no `_cell` rows published' if ran else 'not yet run'} | | | | |")
                else:
                    out.append(
                        f"| {scale} | {e} | `{c.run_id}` | {f'`{c.host}`' if c.host else ''} | {_duration(c.duration_s)} | "
                        f"{_size(c.peak_rss_bytes)} | {_size(c.disk_peak_bytes)} |"
                    )
        out.append("")
    out += _matrix_cost(tables)
    return "\n".join(out)


def _matrix_cost(tables: list[SuiteFigures]) -> list[str]:
    """What the whole matrix costs per scale: the sum of each cell's latest staged time (cells run one after another),
    per engine version too, and the largest peaks (one cell at a time holds them); cells not yet run are named."""
    out = [
        "## What the matrix costs",
        "",
        "Each cell's latest run at the scale, summed: cells run one after another, so a run of the whole matrix",
        "takes their sum of staged time plus the DAG's own minute, and needs the largest cell's memory and disk. Cells of",
        "one column may come from different hosts (the per-cell tables name them).",
        "",
    ]
    out.append(
        "| scale | cells measured | staged time, all | per engine version | largest peak memory | largest peak disk | hosts | not yet run |"
    )
    out.append("|---|---|---|---|---|---|---|---|")
    for scale in SCALES:
        cells = [(t.suite, e) for t in tables for e in t.engines]
        have = {(t.suite, c.engine_id): c for t in tables for c in t.resources if c.scale == scale}
        got = [have[k] for k in cells if k in have and have[k].duration_s is not None]
        per_engine: dict[str, float] = {}
        for (_suite, e), c in have.items():
            per_engine[e] = per_engine.get(e, 0.0) + (c.duration_s or 0.0)
        engines = "; ".join(f"{_short(e)} {_duration(v)}" for e, v in sorted(per_engine.items()))
        missing = ", ".join(f"{s} {_short(e)}" for s, e in cells if (s, e) not in have)
        out.append(
            f"| {scale} | {len(got)} of {len(cells)} | {_duration(sum(c.duration_s or 0.0 for c in got))} | {engines} | "
            f"{_size(max((c.peak_rss_bytes or 0.0 for c in got), default=None))} | {_size(max((c.disk_peak_bytes or 0.0 for c in got), default=None))} | "
            f"{', '.join(sorted({f'`{c.host}`' for c in got if c.host}))} | {missing} |"
        )
    out.append("")
    return out


def section_html(tables: list[SuiteFigures]) -> str:
    """The same table as an HTML section of the report (``id='figures'``)."""
    parts = [
        "<section id='figures'><h2>The figures side by side</h2><p class='note'>Every finding: the seed's value and each engine "
        "version's latest run at laptop and at full (✓ reproduces, ~ only in direction, ✗ does not). The mechanism of a figure "
        "that does not reproduce is under each table; then what each cell took.</p>"
    ]
    for t in tables:
        runs = "; ".join(f"{s}: {', '.join(t.runs.get(s) or ()) or 'not yet run'}" for s in SCALES)
        parts.append(f"<h3>{escape(t.suite)}</h3><p class='note'>{escape(runs)}</p><table><tr><th>finding</th><th>seed</th>")
        parts.append("".join(f"<th>{escape(s)} {escape(_short(e))}</th>" for s in SCALES for e in t.engines) + "</tr>")
        for line in t.lines:
            cells = "".join(f"<td>{escape(_cell_text(line.values.get((s, e))))}</td>" for s in SCALES for e in t.engines)
            parts.append(
                f"<tr><td title='{escape(line.description)}'>{escape(line.finding)}</td><td>{escape(fmt(line.seed_value))}</td>{cells}</tr>"
            )
        parts.append("</table>")
        said = [(line.finding, s, line.mechanisms[s]) for line in t.lines for s in SCALES if s in line.mechanisms]
        if said:
            parts.append("<ul>" + "".join(f"<li><code>{escape(f)}</code> at {escape(s)}: {escape(x)}</li>" for f, s, x in said) + "</ul>")
        parts.append("<table><tr><th>scale</th><th>engine</th><th>run</th><th>duration</th><th>peak memory</th><th>peak disk</th></tr>")
        parts += [
            f"<tr><td>{escape(c.scale)}</td><td>{escape(c.engine_id)}</td><td>{escape(c.run_id)}</td><td>{_duration(c.duration_s)}</td>"
            f"<td>{_size(c.peak_rss_bytes)}</td><td>{_size(c.disk_peak_bytes)}</td></tr>"
            for c in t.resources
        ]
        parts.append("</table>")
    parts.append("</section>")
    return "".join(parts)


def report_section(root: Path) -> str:
    """The report's section for the results folder ``root``; empty (with a warning) if it cannot be made,
    so the rest of the report never depends on this table."""
    try:
        return section_html(figures([root]))
    except Exception as exc:
        log.warning("report: no figures table (%s: %s)", type(exc).__name__, exc)
        return ""


def write_markdown(results_dirs: Iterable[str | Path], out: Path) -> Path:
    """Write the markdown table to ``out`` (atomically) and return it."""
    from jsonbench.dataset.fsio import write_text_atomic

    write_text_atomic(out, to_markdown(figures(results_dirs)) + "\n", "figures table")
    return out
