"""The figures side by side from a real published dataset: the markdown file and the report's section agree."""

from __future__ import annotations

from pathlib import Path

import pytest

from jsonbench.report.figures import figures, report_section, write_markdown
from tests.unit.report_synth import build_once


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = tmp_path_factory.mktemp("figures") / "results"
    build_once(results, runs=4, docs_for_last=True)
    return results


def test_figures_command_and_report_section(dataset: Path, tmp_path: Path) -> None:
    (ldu,) = [t for t in figures([dataset]) if t.suite == "large_document_update"]
    laptop = ldu.runs["laptop"]
    assert len(laptop) == 1 and ldu.runs["full"] == ()  # the synthetic history has one laptop run, no full run
    assert not ldu.resources  # the synthetic runs stage no resource figures, so they publish no _cell rows
    measured = [v for line in ldu.lines for (scale, _e), v in line.values.items() if scale == "laptop" and v.value is not None]
    assert measured and all(v.run_id == laptop[0] for v in measured)

    out = tmp_path / "figures.md"
    write_markdown([dataset], out)  # what `./bin/jsonbench-dev figures` writes
    text = out.read_text(encoding="utf-8")
    assert "## large_document_update" in text and f"`{laptop[0]}`" in text and "- `full`: not yet run" in text
    assert "| full | postgres-16 | not yet run | | | |" in text
    assert "| laptop | postgres-16 | no `_cell` rows published | | | |" in text

    html = report_section(dataset)
    assert html.startswith("<section id='figures'>") and laptop[0] in html and "full: not yet run" in html
