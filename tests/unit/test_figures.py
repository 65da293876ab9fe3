"""The figures table: how a value is judged against the seed, and the mechanism files it reads."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from jsonbench.checks.library import expectations_dir, load_library
from jsonbench.report.figures import load_mechanisms, reproduces, to_markdown

TIMING = {"kind": "timing", "seed": {"value": 2.0}, "opposite": {"below": 1.0}}
FACT = {"kind": "deterministic", "seed": {"value": 100.0}}


@pytest.mark.parametrize(
    ("finding", "observed", "verdict"),
    [
        (TIMING, 2.4, "yes"),  # within a factor of 1.25
        (TIMING, 1.7, "yes"),
        (TIMING, 3.0, "direction"),  # further off, on the seed's side of the opposite
        (TIMING, 1.1, "direction"),
        (TIMING, 0.9, "no"),  # the opposite conclusion
        (FACT, 101.9, "yes"),  # within 2 %
        (FACT, 103.0, "no"),  # a fact that differs
        ({"kind": "deterministic", "seed": {"value": 0}}, 0.0, "yes"),
        ({"kind": "deterministic", "seed": {"value": 0}}, 1.0, "no"),
        (TIMING, None, "-"),
        ({"kind": "timing", "seed": {}}, 1.0, "-"),
    ],
)
def test_reproduces(finding: dict, observed: float | None, verdict: str) -> None:
    assert reproduces(finding, observed) == verdict


def test_every_mechanism_names_a_finding_of_its_suite() -> None:
    """A sentence keyed by a finding id the reproduction file does not have would never be shown."""
    lib = load_library()
    files = sorted(expectations_dir().glob("*.mechanisms.yaml"))
    assert files, "no mechanism files"
    for path in files:
        suite = path.name.split(".")[0]
        ids = {f["id"] for f in lib.reproduction[suite]["findings"]}
        said = load_mechanisms(expectations_dir(), suite)
        assert said, path
        assert set(said) <= ids, f"{path.name}: unknown finding ids {sorted(set(said) - ids)}"
        for fid, per_scale in said.items():
            assert set(per_scale) <= {"laptop", "full"} and all(s.strip() for s in per_scale.values()), (path.name, fid)


def test_mechanisms_per_scale_or_for_all(tmp_path: Path) -> None:
    (tmp_path / "demo.mechanisms.yaml").write_text("a: one sentence\nb:\n  laptop: only at laptop\n", encoding="utf-8")
    assert load_mechanisms(tmp_path, "demo") == {"a": {"laptop": "one sentence", "full": "one sentence"}, "b": {"laptop": "only at laptop"}}
    assert load_mechanisms(tmp_path, "other") == {}


def test_markdown_says_not_yet_run_without_runs() -> None:
    from jsonbench.report.figures import SuiteFigures

    text = to_markdown([SuiteFigures("demo", "000.txt", ("postgres-17",), {}, (), ())])
    assert "`laptop`: not yet run" in text and "`full`: not yet run" in text
    assert "| full | postgres-17 | not yet run | | | | |" in text
    assert "| full | 0 of 1 | 0m00s |" in text and "| demo pg17 |" in text, "the matrix's cost names the cell not yet run"


def test_the_matrix_cost_sums_each_cells_latest_time_per_scale_and_version() -> None:
    """Cells run one after another: the matrix takes the sum of its cells, needs the largest peak, and a campaign's cells
    from several hosts say so."""
    from jsonbench.report.figures import CellResources, SuiteFigures

    gb = 1024**3
    a = SuiteFigures(
        "a",
        "0.txt",
        ("postgres-16", "postgres-17"),
        {},
        (),
        (
            CellResources("full", "postgres-16", "r1", 1750.0, 2.2 * gb, 6.4 * gb, "m3"),
            CellResources("full", "postgres-17", "r2", 1398.0, 2.0 * gb, 6.0 * gb, "m2"),
        ),
    )
    b = SuiteFigures(
        "b",
        "1.txt",
        ("postgres-16", "postgres-17"),
        {},
        (),
        (CellResources("full", "postgres-16", "r3", 1250.0, 1.2 * gb, 7.0 * gb, "m1"),),
    )
    text = to_markdown([a, b])
    line = next(x for x in text.splitlines() if x.startswith("| full | 3 of 4 |"))
    assert "| 1h13m |" in line and "pg16 50m00s; pg17 23m18s" in line, line
    assert "| 2.2 GB | 7.0 GB |" in line and "`m1`, `m2`, `m3`" in line and line.endswith("| b pg17 |"), line


def _rows(run_id: str, scale: str, engine: str, ratio: float, ended: str, duration: float) -> list[dict]:
    base = {"run_id": run_id, "suite": "demo", "engine_id": engine, "engine_version": "17", "engine_build": "b", "scale": scale}
    base |= {"scale_params": "{}", "ended_at": pd.Timestamp(ended), "status": "ok", "reason": None}
    return [
        {**base, "workload": "w", "variant": "default", "metric": "ratio", "value": ratio},
        {**base, "workload": "_cell", "variant": "default", "metric": "duration", "value": duration},
        {**base, "workload": "_cell", "variant": "default", "metric": "peak_rss", "value": 2.0 * 1024**3},
    ]


def test_suite_figures_latest_run_per_engine_and_scale_with_its_mechanism() -> None:
    """Per (scale, engine) the latest run's value, the run ids it came from, and a mechanism only where the figure is off."""
    from jsonbench.report.figures import suite_figures

    m = pd.DataFrame(
        _rows("L1", "laptop", "postgres-17", 9.0, "2026-12-01T06:00Z", 60.0)
        + _rows("L2", "laptop", "postgres-17", 3.0, "2026-12-01T07:00Z", 50.0)  # replaces L1
        + _rows("L1", "laptop", "postgres-18", 2.1, "2026-12-01T06:00Z", 55.0)
    )
    definition = {
        "seed": "x.txt",
        "findings": [
            {
                "id": "f",
                "kind": "timing",
                "unit": "x",
                "seed": {"value": 2.0},
                "opposite": {"below": 1.0},
                "numerator": [{"workload": "w", "metric": "ratio"}],
            }
        ],
    }
    said = {"f": {"laptop": "why laptop differs", "full": "why full differs"}}
    t = suite_figures(m, "demo", definition, ("postgres-17", "postgres-18"), said)
    (line,) = t.lines
    assert line.values[("laptop", "postgres-17")].value == 3.0 and line.values[("laptop", "postgres-17")].run_id == "L2"
    assert line.values[("laptop", "postgres-17")].reproduces == "direction"
    assert line.values[("laptop", "postgres-18")].reproduces == "yes"
    assert ("full", "postgres-17") not in line.values
    assert line.mechanisms == {"laptop": "why laptop differs"}  # full has no value, so no sentence is shown for it
    assert t.runs == {"laptop": ("L1", "L2"), "full": ()}
    res = {(c.scale, c.engine_id): c for c in t.resources}
    assert res[("laptop", "postgres-17")].duration_s == 50.0 and res[("laptop", "postgres-17")].run_id == "L2"
    assert res[("laptop", "postgres-18")].peak_rss_bytes == 2.0 * 1024**3 and res[("laptop", "postgres-18")].disk_peak_bytes is None
    text = to_markdown([t])
    assert "| `f` | timing | 2.00 | 3.00 ~ | 2.10 ✓ |  |  |" in text and "`f` at `laptop`: why laptop differs" in text
