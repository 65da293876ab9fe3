"""The documents suites' answer, in sentences a person can act on, made from the published rows only.

:func:`answers` takes a run's published rows (dicts with the dataset's columns) and returns, per input
and engine version, sentences such as "jsonb takes 1.31x the disk of json for these documents; reading
`status` is 4.1x faster from jsonb than from json; updating `status` writes 38x the WAL of a column".
Every number in a sentence is a published row's ``value`` (or its inverse, for "slower"), rounded for
reading, and listed in :attr:`Answer.figures` with the row it came from, so the command line's summary,
the report's section and the dataset cannot disagree (``tests/unit/test_documents_summary.py``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from jsonbench.dataset.measurement import finite_float

SUITES = ("documents", "documents_sqlite")


@dataclass(frozen=True)
class Figure:
    """One number of a sentence and the published row it is: (workload, variant, metric) of the answer's engine."""

    workload: str
    variant: str
    metric: str
    value: float
    #: How the sentence shows it (``4.1x``, ``12.5 %``, ``2.3 MB``).
    shown: str


@dataclass
class Answer:
    """What one engine version says about one input."""

    input_sha256: str
    input_name: str
    input_documents: int
    input_bytes: int
    loaded: int
    engine_id: str
    engine: str
    engine_version: str
    sentences: list[str] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)

    @property
    def heading(self) -> str:
        name = "PostgreSQL" if self.engine == "postgres" else "SQLite" if self.engine == "sqlite" else self.engine
        return f"{name} {self.engine_version} ({self.engine_id})"

    @property
    def input_heading(self) -> str:
        loaded = f"; the first {self.loaded:,} loaded" if self.loaded < self.input_documents else ""
        return f"{self.input_name}: {self.input_documents:,} documents, {_size(self.input_bytes)}, sha256 {self.input_sha256[:12]}{loaded}"


def times(value: float) -> str:
    """A factor as read: two significant digits below 10 (``1.3x``, ``0.62x``), whole above (``38x``)."""
    if value >= 10:
        return f"{value:,.0f}x"
    return f"{value:.2g}x" if value < 1 else f"{value:.2f}".rstrip("0").rstrip(".") + "x"


def share(value: float) -> str:
    return f"{100 * value:.1f} %"


def _size(n: float) -> str:
    for unit, div in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= div:
            return f"{n / div:,.1f} {unit}"
    return f"{n:,.0f} bytes"


def faster(value: float) -> str:
    """``4.1x faster`` for a speed-up above 1, ``1.3x slower`` (its inverse) below."""
    return f"{times(value)} faster" if value >= 1 else f"{times(1 / value)} slower"


class _Rows:
    """One engine's rows of one suite, looked up by (workload, variant, metric); records every figure used."""

    def __init__(self, rows: list[dict[str, Any]], answer: Answer) -> None:
        self.by = {(r["workload"], r["variant"], r["metric"]): r for r in rows}
        self.answer = answer

    def value(self, workload: str, variant: str, metric: str) -> float | None:
        r = self.by.get((workload, variant, metric))
        return None if r is None or r.get("status") != "ok" else finite_float(r.get("value"))

    def reason(self, workload: str, variant: str, metric: str) -> str | None:
        r = self.by.get((workload, variant, metric))
        return None if r is None else r.get("reason")

    def show(self, workload: str, variant: str, metric: str, how: Any) -> str | None:
        """The figure as the sentence shows it (``how`` formats the row's value), recorded; None when the row has no value."""
        v = self.value(workload, variant, metric)
        if v is None:
            return None
        shown = str(how(v))
        self.answer.figures.append(Figure(workload, variant, metric, v, shown))
        return shown


def _keys(rows: list[dict[str, Any]], workload: str, metric: str) -> list[str]:
    """The keys a workload measured, in the order first published (variants ``<design>:<key>``)."""
    out: list[str] = []
    for r in rows:
        if r["workload"] == workload and r["metric"] == metric and ":" in str(r["variant"]):
            key = str(r["variant"]).split(":", 1)[1]
            if key not in out:
                out.append(key)
    return out


def _postgres(rows: list[dict[str, Any]], a: Answer) -> None:
    f = _Rows(rows, a)
    ratio = f.show("storage", "jsonb_vs_json.pglz", "table_size_ratio", times)
    if ratio:
        jb = f.show("storage", "jsonb.pglz", "table_bytes", _size)
        js = f.show("storage", "json.pglz", "table_bytes", _size)
        lz4 = f.show("storage", "jsonb_vs_json.lz4", "table_size_ratio", times)
        lz4_text = f"; with lz4 {lz4}" if lz4 else "; lz4 is not in this build"
        text = f"jsonb takes {ratio} the disk of json for these documents ({jb} against {js} with pglz{lz4_text})"
        over_b = f.show("storage", "jsonb", "over_threshold_share", share)
        over_j = f.show("storage", "json", "over_threshold_share", share)
        if over_b and over_j:
            text += f"; {over_b} of the documents are over the 2 kB TOAST threshold as jsonb, {over_j} as json"
        twin = f.show("storage", "twin_vs_jsonb.pglz", "table_size_ratio", times)
        if twin:
            text += f"; the typed twin takes {twin} the disk of jsonb"
        a.sentences.append(text + ".")
    for key in _keys(rows, "read", "read_time"):
        speed = f.show("read", f"jsonb_vs_json:{key}", "read_speedup", faster)
        if speed is None:
            continue
        text = f"Reading `{key}` is {speed} from jsonb than from json"
        twin = f.show("read", f"twin_vs_jsonb:{key}", "twin_read_speedup", faster)
        text += f", and {twin} again from its own column." if twin else " (the typed twin has no column for it)."
        a.sentences.append(text)
    for key in _keys(rows, "update", "tps"):
        wal = f.show("update", f"jsonb_vs_column:{key}", "wal_ratio", times)
        if wal is None:
            continue
        wb = f.show("update", f"jsonb:{key}", "wal_bytes_per_update", lambda v: f"{v:,.0f}")
        cb = f.show("update", f"column:{key}", "wal_bytes_per_update", lambda v: f"{v:,.0f}")
        text = f"Updating `{key}` writes {wal} the WAL of the same key in its own column ({wb} against {cb} bytes per update)"
        twin = f.show("update", f"jsonb_vs_twin:{key}", "wal_ratio", times)
        if twin:
            text += f" and {twin} that of the typed twin"
        hot_j = f.show("update", f"jsonb:{key}", "hot_share", share)
        hot_c = f.show("update", f"column:{key}", "hot_share", share)
        if hot_j and hot_c:
            text += f"; {hot_j} of the jsonb updates were HOT, {hot_c} in a column"
        toast = f.show("update", f"jsonb:{key}", "toast_growth", _size)
        n = f.show("update", f"jsonb:{key}", "updates", lambda v: f"{v:,.0f}")
        if toast and n:
            text += f"; the jsonb table's TOAST grew by {toast} for {n} updates"
        tps = f.show("update", f"column_vs_jsonb:{key}", "tps_ratio", times)
        if tps:
            text += f"; a column sustains {tps} the jsonb update rate"
        a.sentences.append(text + ".")


def _sqlite(rows: list[dict[str, Any]], a: Answer) -> None:
    f = _Rows(rows, a)
    ratio = f.show("storage", "jsonb_vs_text", "size_ratio", times)
    if ratio:
        jb = f.show("storage", "jsonb", "doc_bytes", lambda v: f"{v:,.0f}")
        tb = f.show("storage", "text", "doc_bytes", lambda v: f"{v:,.0f}")
        text = f"JSONB takes {ratio} the bytes of text for these documents ({jb} against {tb} bytes a document)"
        twin = f.show("storage", "twin_vs_jsonb.file", "size_ratio", times)
        if twin:
            text += f"; the typed twin's file is {twin} the JSONB file"
        a.sentences.append(text + ".")
    for key in _keys(rows, "read", "extract_ns_per_row"):
        speed = f.show("read", f"jsonb_vs_text:{key}", "read_speedup", faster)
        if speed is None:
            continue
        text = f"Reading `{key}` with json_extract is {speed} from JSONB than from text"
        twin = f.show("read", f"twin_vs_jsonb:{key}", "twin_read_speedup", faster)
        text += f", and {twin} again from its own column." if twin else " (the typed twin has no column for it)."
        a.sentences.append(text)
    for key in _keys(rows, "update", "update_ns_per_row"):
        speed = f.show("update", f"jsonb_vs_text:{key}", "update_speedup", faster)
        if speed is None:
            continue
        text = f"Updating `{key}` is {speed} on JSONB than on text"
        twin = f.show("update", f"twin_vs_jsonb:{key}", "twin_update_speedup", faster)
        if twin:
            text += f", and {twin} again in its own column"
        a.sentences.append(text + ".")


def _params(row: dict[str, Any]) -> dict[str, Any]:
    raw = row.get("scale_params")
    try:
        return dict(json.loads(raw)) if isinstance(raw, str) else dict(raw or {})
    except (TypeError, ValueError):
        return {}


def answers(rows: list[dict[str, Any]]) -> list[Answer]:
    """The answers of a run's published rows: one per (input, engine) of the documents suites, in input then engine order."""
    cells: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in rows:
        if r.get("suite") in SUITES:
            cells.setdefault((str(r["suite"]), str(r["engine_id"]), str(_params(r).get("input_sha256", ""))), []).append(r)
    out: list[Answer] = []
    for (suite, engine_id, sha), cell_rows in sorted(cells.items(), key=lambda kv: (kv[0][2], kv[0][0], _natural(kv[0][1]))):
        p, first = _params(cell_rows[0]), cell_rows[0]
        a = Answer(
            input_sha256=sha,
            input_name=str(p.get("documents", "?")).rsplit("/", 1)[-1],
            input_documents=int(p.get("input_documents", 0) or 0),
            input_bytes=int(p.get("input_bytes", 0) or 0),
            loaded=int(p.get("documents_loaded", 0) or 0),
            engine_id=engine_id,
            engine="postgres" if suite == "documents" else "sqlite",
            engine_version=str(first.get("engine_version") or ""),
        )
        (_postgres if suite == "documents" else _sqlite)(cell_rows, a)
        out.append(a)
    return out


def _natural(text: str) -> tuple[Any, ...]:
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text))


def render(found: list[Answer]) -> str:
    """The answers as plain text: a heading per input, a paragraph per engine version."""
    lines: list[str] = []
    last = None
    for a in found:
        if a.input_sha256 != last:
            lines.append(f"\nYour documents, {a.input_heading}:")
            last = a.input_sha256
        lines.append(f"  {a.heading}: " + (" ".join(a.sentences) if a.sentences else "nothing measured."))
    return "\n".join(lines)
