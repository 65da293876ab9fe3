"""The figures table: how a value is judged against the seed, and the mechanism files it reads."""

from __future__ import annotations

from pathlib import Path

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
    assert "| full | postgres-17 | not yet run | | | |" in text
