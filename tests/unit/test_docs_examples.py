"""The README's and docs' examples run as written: every fenced ``python`` and ``sql`` block of README.md and
docs/*.md, against a small real dataset (runs published and checked by the real code, views refreshed) in a
folder where ``results/`` is that dataset, as in a fresh clone after the quick start.

Python blocks are executed; SQL blocks are run statement by statement on ``results/jsonbench.duckdb`` (read
only), and every query must return at least one row, so an example whose filters match nothing fails too.
``bash`` blocks start benchmarks or services and are not run here.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import duckdb
import pytest

from tests.unit.report_synth import build_once

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(python|sql)\n(.*?)^```", re.S | re.M)


def _blocks() -> list[tuple[str, str, str]]:
    out = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            line = text[: m.start()].count("\n") + 1
            out.append((f"{doc.relative_to(ROOT)}:{line}", m.group(1), m.group(2)))
    return out


BLOCKS = _blocks()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from jsonbench.dataset.views import refresh

    folder = tmp_path_factory.mktemp("docs")
    build_once(folder / "results", runs=4, docs_for_last=True)
    refresh(folder / "results")
    return folder


def test_the_docs_have_examples() -> None:
    kinds = [k for _, k, _ in BLOCKS]
    assert kinds.count("python") >= 3 and kinds.count("sql") >= 3, BLOCKS


@pytest.mark.parametrize(("where", "kind", "code"), BLOCKS, ids=[w for w, _, _ in BLOCKS])
def test_example_runs(where: str, kind: str, code: str, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(workdir)
    if kind == "python":
        with contextlib.redirect_stdout(io.StringIO()) as out:
            exec(compile(code, where, "exec"), {"__name__": "__example__"})
        assert out.getvalue().strip(), f"{where}: the example printed nothing"
        return
    con = duckdb.connect("results/jsonbench.duckdb", read_only=True)
    statements = [s.strip() for s in re.sub(r"--[^\n]*", "", code).split(";") if s.strip()]
    assert statements
    for sql in statements:
        rows = con.execute(sql).fetchall()
        assert rows, f"{where}: no row from\n{sql}"
