"""The documents suites' answer: sentences made from published rows, every number one of them;
and the drift history kept per input."""

from __future__ import annotations

import json
import re
from typing import Any

import pandas as pd
import pytest

from jsonbench.history.drift import input_of, same_input
from jsonbench.suites.documents.summary import answers, faster, render, share, times

SHA = "ab" * 32
PARAMS = json.dumps(
    {"documents": "/data/orders.jsonl", "input_sha256": SHA, "input_documents": 20000, "input_bytes": 6_000_000, "documents_loaded": 10000}
)


def _row(
    suite: str, engine_id: str, workload: str, variant: str, metric: str, value: float | None, reason: str | None = None
) -> dict[str, Any]:
    return {
        "suite": suite,
        "engine_id": engine_id,
        "engine": "postgres" if suite == "documents" else "sqlite",
        "engine_version": "17.2" if suite == "documents" else "3.46.1",
        "workload": workload,
        "variant": variant,
        "metric": metric,
        "value": value,
        "status": "ok" if value is not None else "not_applicable",
        "reason": reason,
        "scale_params": PARAMS,
    }


def _postgres_rows() -> list[dict[str, Any]]:
    pg = "postgres-17"
    return [
        _row("documents", pg, "storage", "jsonb_vs_json.pglz", "table_size_ratio", 1.3125),
        _row("documents", pg, "storage", "jsonb.pglz", "table_bytes", 10_500_000.0),
        _row("documents", pg, "storage", "json.pglz", "table_bytes", 8_000_000.0),
        _row("documents", pg, "storage", "jsonb_vs_json.lz4", "table_size_ratio", None, "engine build lacks lz4"),
        _row("documents", pg, "storage", "jsonb", "over_threshold_share", 0.04),
        _row("documents", pg, "storage", "json", "over_threshold_share", 0.025),
        _row("documents", pg, "storage", "twin_vs_jsonb.pglz", "table_size_ratio", 0.62),
        _row("documents", pg, "read", "json:status", "read_time", 41.0),
        _row("documents", pg, "read", "jsonb:status", "read_time", 10.0),
        _row("documents", pg, "read", "jsonb_vs_json:status", "read_speedup", 4.1),
        _row("documents", pg, "read", "twin_vs_jsonb:status", "twin_read_speedup", 1.8),
        _row("documents", pg, "read", "json:shipping.city", "read_time", 12.0),
        _row("documents", pg, "read", "jsonb_vs_json:shipping.city", "read_speedup", 0.8),
        _row("documents", pg, "read", "twin_vs_jsonb:shipping.city", "twin_read_speedup", None, "no column"),
        _row("documents", pg, "update", "jsonb:status", "tps", 300.0),
        _row("documents", pg, "update", "jsonb_vs_column:status", "wal_ratio", 38.2),
        _row("documents", pg, "update", "jsonb:status", "wal_bytes_per_update", 5123.0),
        _row("documents", pg, "update", "column:status", "wal_bytes_per_update", 134.0),
        _row("documents", pg, "update", "jsonb_vs_twin:status", "wal_ratio", 30.0),
        _row("documents", pg, "update", "jsonb:status", "hot_share", 0.0),
        _row("documents", pg, "update", "column:status", "hot_share", 1.0),
        _row("documents", pg, "update", "jsonb:status", "toast_growth", 2_300_000.0),
        _row("documents", pg, "update", "jsonb:status", "updates", 300.0),
        _row("documents", pg, "update", "column_vs_jsonb:status", "tps_ratio", 1.25),
    ]


def _sqlite_rows() -> list[dict[str, Any]]:
    sq = "sqlite-3.46.1"
    return [
        _row("documents_sqlite", sq, "storage", "jsonb_vs_text", "size_ratio", 0.91),
        _row("documents_sqlite", sq, "storage", "jsonb", "doc_bytes", 301.0),
        _row("documents_sqlite", sq, "storage", "text", "doc_bytes", 331.0),
        _row("documents_sqlite", sq, "read", "text:status", "extract_ns_per_row", 900.0),
        _row("documents_sqlite", sq, "read", "jsonb_vs_text:status", "read_speedup", 2.3),
        _row("documents_sqlite", sq, "read", "twin_vs_jsonb:status", "twin_read_speedup", 5.1),
        _row("documents_sqlite", sq, "update", "text:status", "update_ns_per_row", 4000.0),
        _row("documents_sqlite", sq, "update", "jsonb_vs_text:status", "update_speedup", 1.9),
        _row("documents_sqlite", sq, "update", "twin_vs_jsonb:status", "twin_update_speedup", 12.0),
    ]


def test_the_answer_reads_as_the_issue_asks() -> None:
    (pg,) = answers(_postgres_rows())
    text = " ".join(pg.sentences)
    assert "jsonb takes 1.31x the disk of json for these documents" in text
    assert "lz4 is not in this build" in text and "4.0 % of the documents are over the 2 kB TOAST threshold as jsonb" in text
    assert "Reading `status` is 4.1x faster from jsonb than from json, and 1.8x faster again from its own column." in text
    assert "Reading `shipping.city` is 1.25x slower from jsonb than from json (the typed twin has no column for it)." in text
    assert "Updating `status` writes 38x the WAL of the same key in its own column (5,123 against 134 bytes per update)" in text
    assert pg.heading == "PostgreSQL 17.2 (postgres-17)"
    assert pg.input_heading == f"orders.jsonl: 20,000 documents, 6.0 MB, sha256 {SHA[:12]}; the first 10,000 loaded"


def test_every_figure_is_a_published_value_shown_as_rounded() -> None:
    rows = _postgres_rows() + _sqlite_rows()
    published = {(r["engine_id"], r["workload"], r["variant"], r["metric"]): r["value"] for r in rows}
    found = answers(rows)
    assert [a.engine_id for a in found] == ["postgres-17", "sqlite-3.46.1"]
    for a in found:
        assert a.figures
        text = " ".join(a.sentences)
        for f in a.figures:
            assert published[(a.engine_id, f.workload, f.variant, f.metric)] == f.value
            assert f.shown in text, (f, text)
            number = float(re.sub(r"[^\d.]", "", f.shown.split()[0]))
            shown_of = f.value if "slower" not in f.shown else 1 / f.value
            if f.shown.endswith("%"):
                shown_of = 100 * f.value
            elif " MB" in f.shown:
                shown_of = f.value / 1e6
            assert number == pytest.approx(shown_of, rel=0.06, abs=0.051), f


def test_sqlite_sentences_and_the_plain_text() -> None:
    (sq,) = answers(_sqlite_rows())
    assert sq.sentences[0].startswith("JSONB takes 0.91x the bytes of text for these documents (301 against 331 bytes a document)")
    assert "Reading `status` with json_extract is 2.3x faster from JSONB than from text, and 5.1x faster again" in sq.sentences[1]
    assert "Updating `status` is 1.9x faster on JSONB than on text, and 12x faster again in its own column." == sq.sentences[2]
    out = render(answers(_postgres_rows() + _sqlite_rows()))
    assert out.count("Your documents, orders.jsonl") == 1 and "SQLite 3.46.1 (sqlite-3.46.1):" in out


def test_formatting() -> None:
    assert times(1.3125) == "1.31x" and times(4.1) == "4.1x" and times(0.62) == "0.62x" and times(38.2) == "38x" and times(2.0) == "2x"
    assert faster(4.1) == "4.1x faster" and faster(0.5) == "2x slower"
    assert share(0.04) == "4.0 %"


def test_rows_of_other_suites_make_no_answer() -> None:
    rows = [{**_postgres_rows()[0], "suite": "json_vs_jsonb"}]
    assert answers(rows) == []


def test_two_inputs_never_share_a_drift_history() -> None:
    other = json.dumps({"input_sha256": "cd" * 32})
    hist = pd.DataFrame({"scale_params": [PARAMS, other, PARAMS, None], "value": [1.0, 2.0, 3.0, 4.0]})
    now = pd.DataFrame({"scale_params": [PARAMS], "value": [1.0]})
    assert list(same_input(hist, now)["value"]) == [1.0, 3.0]
    assert input_of(PARAMS) == SHA and input_of(json.dumps({"rows": 5})) is None and input_of(None) is None
    # A suite without an input keeps its whole history.
    plain = pd.DataFrame({"scale_params": [json.dumps({"rows": 5})], "value": [1.0]})
    assert len(same_input(hist, plain)) == 4
